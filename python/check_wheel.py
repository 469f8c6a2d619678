"""Checks the built wheel and sdist of the usvm package; prints each check, exits 1 at the first failure.

Usage: python check_wheel.py WHEEL [SDIST]    (with a Python that has `auditwheel` installed beside it)

The wheel (what python/build_wheel.sh makes and python/ci.sh installs and tests):
- `auditwheel show WHEEL` finds it consistent with a manylinux tag of glibc <= 2.17 (manylinux2014): it then
  installs on RHEL/CentOS 7+, Amazon Linux 2, Ubuntu 18.04+, not only on the machine that built it;
- its file name and its WHEEL file carry the stable-ABI tag `cp39-abi3` (one wheel for CPython >= 3.9);
- it holds `usvm/py.typed`, the stub `usvm/_usvm.pyi` and exactly one extension module `usvm/_usvm.abi3.so`;
- its METADATA states the license expression, `Requires-Python`, the `Typing :: Typed` classifier.
The sdist: it holds the files a build from it needs (pyproject.toml, Cargo.lock, the three crates the
extension is built from, the font `usvm-plot` embeds, the Python sources with py.typed and the stub).
"""

import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

MAX_GLIBC = (2, 17)  # manylinux2014
# the PEP 600 aliases of the legacy manylinux tags
LEGACY = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}


def fail(msg: str) -> None:
    print(f"check_wheel: FAILED: {msg}", file=sys.stderr)
    sys.exit(1)


def ok(msg: str) -> None:
    print(f"check_wheel: ok: {msg}")


def glibc_of(platform_tag: str):
    """(major, minor) of a manylinux tag (`manylinux_2_17_x86_64`, `manylinux2014_x86_64`), or None."""
    m = re.fullmatch(r"manylinux_(\d+)_(\d+)_\w+", platform_tag)
    if m:
        return int(m.group(1)), int(m.group(2))
    m = re.fullmatch(r"(manylinux1|manylinux2010|manylinux2014)_\w+", platform_tag)
    return LEGACY[m.group(1)] if m else None


def check_auditwheel(wheel: Path) -> None:
    auditwheel = Path(sys.executable).parent / "auditwheel"
    run = subprocess.run([str(auditwheel), "show", str(wheel)], capture_output=True, text=True)
    shown = run.stdout + run.stderr
    print("check_wheel: auditwheel show " + wheel.name)
    print("    " + shown.strip().replace("\n", "\n    "))
    if run.returncode != 0:
        fail(f"auditwheel show exited with {run.returncode}")
    # auditwheel wraps its sentences: match on the text with the line breaks taken out
    flat = " ".join(shown.split())
    m = re.search(r'consistent with the following platform tag: "([^"]+)"', flat)
    if not m:
        fail("auditwheel show printed no platform tag the wheel is consistent with")
    tag = m.group(1)
    glibc = glibc_of(tag)
    if glibc is None or glibc > MAX_GLIBC:
        fail(f"auditwheel: the wheel is consistent with {tag!r}, which is not manylinux2014 (glibc <= 2.17)")
    ok(f"auditwheel: consistent with {tag} (glibc {glibc[0]}.{glibc[1]} <= 2.17: manylinux2014)")


def check_wheel(wheel: Path) -> None:
    # {name}-{version}-{python tag}-{abi tag}-{platform tags}.whl
    parts = wheel.name[: -len(".whl")].split("-")
    if len(parts) != 5 or parts[0] != "usvm":
        fail(f"{wheel.name}: not a usvm wheel name")
    _, version, python_tag, abi_tag, platforms = parts
    if (python_tag, abi_tag) != ("cp39", "abi3"):
        fail(f"{wheel.name}: tagged {python_tag}-{abi_tag}, expected cp39-abi3")
    platform_glibc = [glibc_of(p) for p in platforms.split(".")]
    if not platform_glibc or any(g is None or g > MAX_GLIBC for g in platform_glibc):
        fail(f"{wheel.name}: platform tags {platforms} are not all manylinux2014-compatible")
    ok(f"file name tags: cp39-abi3-{platforms}")
    check_auditwheel(wheel)
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        info = f"usvm-{version}.dist-info"
        wheel_tags = [
            ln.split(":", 1)[1].strip()
            for ln in z.read(f"{info}/WHEEL").decode().splitlines()
            if ln.startswith("Tag:")
        ]
        metadata = z.read(f"{info}/METADATA").decode()
    if not wheel_tags or any(not t.startswith("cp39-abi3-") for t in wheel_tags):
        fail(f"{info}/WHEEL: tags {wheel_tags}, expected cp39-abi3-*")
    ok(f"{info}/WHEEL tags: {', '.join(wheel_tags)}")
    for needed in ("usvm/__init__.py", "usvm/py.typed", "usvm/_usvm.pyi"):
        if needed not in names:
            fail(f"{wheel.name} lacks {needed}")
    modules = [n for n in names if re.fullmatch(r"usvm/_usvm.*\.(so|pyd)", n)]
    if modules != ["usvm/_usvm.abi3.so"]:
        fail(f"{wheel.name}: extension modules {modules}, expected exactly usvm/_usvm.abi3.so")
    ok("holds usvm/py.typed, usvm/_usvm.pyi and one extension module usvm/_usvm.abi3.so")
    fields = [ln.split(": ", 1) for ln in metadata.split("\n\n", 1)[0].splitlines() if ": " in ln]
    header = {k: v for k, v in fields if k != "Classifier"}
    classifiers = [v for k, v in fields if k == "Classifier"]
    if header.get("License-Expression") != "MIT OR Apache-2.0":
        fail(f"METADATA: License-Expression is {header.get('License-Expression')!r}")
    if header.get("Requires-Python") != ">=3.9":
        fail(f"METADATA: Requires-Python is {header.get('Requires-Python')!r}")
    if "Typing :: Typed" not in classifiers:
        fail("METADATA: no 'Typing :: Typed' classifier")
    ok(
        f"METADATA: License-Expression {header['License-Expression']}, Requires-Python "
        f"{header['Requires-Python']}, {len(classifiers)} classifiers"
    )


def check_sdist(sdist: Path) -> None:
    with tarfile.open(sdist) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    needed = [
        "pyproject.toml",
        "Cargo.toml",
        "Cargo.lock",
        "crates/usvm-py/Cargo.toml",
        "crates/usvm/Cargo.toml",
        "crates/usvm-plot/Cargo.toml",
        "crates/usvm-plot/fonts/DejaVuSans.ttf",
        "src/usvm/__init__.py",
        "src/usvm/py.typed",
        "src/usvm/_usvm.pyi",
    ]
    missing = [n for n in needed if n not in names]
    if missing:
        fail(f"{sdist.name} lacks {missing} (it has {len(names)} files)")
    ok(f"{sdist.name}: {len(names)} files, with Cargo.lock, the three crates, the font, py.typed, the stub")


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    check_wheel(Path(sys.argv[1]))
    if len(sys.argv) == 3:
        check_sdist(Path(sys.argv[2]))
