"""Which LIBSVM / LIBLINEAR the benchmarks load: the builds of bench/build_peers.sh (-O3, from the PyPI sdists)
or the installed libsvm-official / liblinear-official packages (issue #17 item 6, "honest peers").

Neither package has a binary wheel on PyPI: `pip install` compiles the sdist with the interpreter's own flags
(here -O3 -march=x86-64, and -fopenmp for LIBSVM), so "installed" means that build. Each loaded library is
printed with its path and how it was built, so that every figure in bench/RESULTS.md can be traced.

The two builds can be loaded side by side: each copy of a wrapper package is imported under its own module
name, and each wrapper loads the `clib.cp*` library from its own folder.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

DEFAULT_DIR = Path(__file__).resolve().parent.parent / "target" / "peers-o3"


def resolve(arg: str | None) -> Path | None:
    """The peers folder to use: `arg` ("wheel" or "installed" for the installed packages), else $USVM_PEERS,
    else target/peers-o3 when bench/build_peers.sh has built there; None means the installed packages."""
    value = arg if arg is not None else os.environ.get("USVM_PEERS")
    if value in ("wheel", "installed"):
        return None
    if value:
        d = Path(value).resolve()
        if not (d / "BUILD_INFO").exists():
            sys.exit(f"--peers {d}: no BUILD_INFO there; run `bash bench/build_peers.sh {d}` first")
        return d
    return DEFAULT_DIR if (DEFAULT_DIR / "BUILD_INFO").exists() else None


def _import(pkg: str, parent: Path, alias: str) -> ModuleType:
    init = parent / pkg / "__init__.py"
    spec = importlib.util.spec_from_file_location(alias, init, submodule_search_locations=[str(parent / pkg)])
    mod = importlib.util.module_from_spec(spec)
    sys.modules[alias] = mod
    spec.loader.exec_module(mod)
    return mod


def _producer_flags(so: str) -> str:
    """The compiler flags recorded in the library's debug info (pip's builds carry -g), if readelf can tell."""
    try:
        out = subprocess.run(["readelf", "--debug-dump=info", so], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return "flags unknown"
    for line in out.splitlines():
        if "DW_AT_producer" in line:
            return line.rsplit("):", 1)[-1].split("DW_AT_producer", 1)[-1].lstrip(" :").strip()
    return "flags unknown (no debug info)"


def load(pkg: str, util: str, peers: Path | None, alias: str | None = None) -> tuple[ModuleType, str]:
    """Import `pkg.util` (e.g. libsvm.svmutil) from the peers folder, or from the installed package when
    `peers` is None, under the package name `alias` (default `pkg`); returns the module and a description
    of the library it loaded."""
    alias = alias or pkg
    if peers is not None:
        parent = peers / "python"
    else:
        spec = importlib.machinery.PathFinder.find_spec(pkg)  # sys.path only, not an already imported copy
        if spec is None or spec.origin is None:
            raise ImportError(f"{pkg} is not installed (pip install {pkg}-official) and no --peers build given")
        parent = Path(spec.origin).parent.parent
    _import(pkg, parent, alias)
    mod = importlib.import_module(f"{alias}.{util}")
    low = importlib.import_module(f"{alias}.{'svm' if pkg == 'libsvm' else 'liblinear'}")
    so = low.path_to_so
    if peers is not None:
        info = [l for l in (peers / "BUILD_INFO").read_text().splitlines() if l.startswith(f"{pkg}-official")]
        how = f"built -O3 by bench/build_peers.sh: {info[0] if info else '?'}"
        if pkg == "libsvm":
            how += "; OpenMP " + ("on" if "-fopenmp" in (info[0] if info else "") else "off")
    else:
        flags = _producer_flags(so)
        how = f"installed {pkg}-official (pip's wheel of the PyPI sdist): {flags}"
        if "-fopenmp" in flags:
            how += f"; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}"
    return mod, f"{so} ({how})"
