"""Every code block of the documentation runs as written.

The pages: the README, python/README.md, and the site's Markdown pages (docs/index.md, docs/guide/*.md,
docs/reproductions.md). Each fenced block carries a tag that says how it is checked:

- ``python``: run here, each block alone as a script (``python -c``) in an empty scratch folder, so it
  must be self-contained; it must leave nothing in the repository.
- ``sh``: run by the Rust test ``crates/usvm-cli/tests/readme.rs`` with the built ``usvm`` on ``PATH``.
- ``rust``: a doctest of the ``usvm`` crate (``cargo test --doc``).
- ``console``: commands that build for minutes or run the papers' experiments (installing, building the
  wheel, the reproductions); shown, not run here — CI runs the build commands itself.
- ``text``: output, file contents or layouts; nothing to run.
- ``{toctree}``: the site's table of contents (a MyST directive).

An untagged block, or a block with another tag, fails this test, so no example goes unchecked by mistake.
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
PAGES = [
    REPO / "README.md",
    REPO / "python" / "README.md",
    REPO / "docs" / "index.md",
    REPO / "docs" / "reproductions.md",
    *sorted((REPO / "docs" / "guide").glob("*.md")),
]
TAGS = {"python", "sh", "rust", "console", "text", "{toctree}"}
# Blocks that import these need the extras; CI installs them all.
OPTIONAL = ("dask", "distributed", "pyspark", "onnx", "onnxruntime", "skl2onnx", "skops", "pyarrow", "pandas", "polars")


def blocks(path: pathlib.Path) -> list[tuple[str, int, str]]:
    """The fenced blocks of a Markdown page: (tag, first line number, text)."""
    out, open_ = [], None
    for k, line in enumerate(path.read_text().splitlines(), start=1):
        fence = re.match(r"^(```+)(.*)$", line)
        if open_ is None and fence:
            open_ = (fence.group(2).strip(), k, [])
        elif open_ is not None and fence and not fence.group(2).strip():
            out.append((open_[0], open_[1], "\n".join(open_[2]) + "\n"))
            open_ = None
        elif open_ is not None:
            open_[2].append(line)
    assert open_ is None, f"{path}: a fenced block opened at line {open_[1]} is never closed"
    return out


ALL = [(page, *b) for page in PAGES for b in blocks(page)]
PYTHON = [(page, line, text) for page, tag, line, text in ALL if tag == "python"]


def test_the_pages_exist_and_every_block_has_a_known_tag():
    assert all(page.is_file() for page in PAGES)
    assert len(PYTHON) >= 15
    wrong = [f"{page.relative_to(REPO)}:{line}: tag {tag!r}" for page, tag, line, _ in ALL if tag not in TAGS]
    assert not wrong, "blocks without a known tag (one of " + ", ".join(sorted(TAGS)) + "):\n" + "\n".join(wrong)


def _root_listing() -> set[str]:
    return set(os.listdir(REPO))


@pytest.mark.parametrize("page, line, text", PYTHON, ids=[f"{p.relative_to(REPO)}:{n}" for p, n, _ in PYTHON])
def test_python_block_runs_alone(page, line, text, tmp_path):
    for module in OPTIONAL:
        if re.search(rf"^\s*(import|from)\s+{module}\b", text, flags=re.M):
            pytest.importorskip(module)
    before = _root_listing()
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONWARNINGS": "error::DeprecationWarning:usvm"}
    run = subprocess.run(
        [sys.executable, "-c", text], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, f"{page.relative_to(REPO)}:{line} failed:\n{run.stderr[-3000:]}"
    assert _root_listing() == before, f"{page.relative_to(REPO)}:{line} left files in the repository root"
