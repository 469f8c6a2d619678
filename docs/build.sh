#!/usr/bin/env bash
# Builds the documentation site into OUT (default: docs/_build/html) with warnings as errors, running
# every gallery example (docs/examples/plot_*.py). Needs the usvm package importable and the tools of
# docs/requirements.txt: python -m pip install -r docs/requirements.txt.
# Usage: bash docs/build.sh [OUT]      then open OUT/index.html
set -euo pipefail
docs="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$docs/_build/html}"
python="${PYTHON:-python3}"
"$python" -c "import usvm" 2>/dev/null || { echo "docs/build.sh: the usvm package is not importable by $python (install the wheel, or set PYTHON)"; exit 1; }
# The gallery's pages and the API stubs are generated into docs/ (git-ignored); start from none.
rm -rf "$docs/auto_examples" "$docs/generated" "$docs/sg_execution_times.rst"
start=$SECONDS
MPLBACKEND=Agg "$python" -m sphinx -W --keep-going -q -b html "$docs" "$out"
# The Rust API's reference: rustdoc's pages (`cargo doc --no-deps --workspace`, which CI runs first), linked
# from the API page as rustdoc/usvm/index.html.
rustdoc="${CARGO_TARGET_DIR:-$docs/../target}/doc"
if [ -f "$rustdoc/usvm/index.html" ]; then
  rm -rf "$out/rustdoc" && cp -r "$rustdoc" "$out/rustdoc"
else
  echo "== no rustdoc pages in $rustdoc: run 'cargo doc --no-deps --workspace' first for the API page's Rust link"
fi
echo "== the site is in $out/index.html (built in $((SECONDS - start)) s)"
