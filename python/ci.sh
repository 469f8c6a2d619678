#!/usr/bin/env bash
# Builds the Python package from this clone in a fresh virtual environment and runs its tests:
# fresh venv -> pip install maturin numpy scipy scikit-learn pytest dask ... -> maturin build --release (the wheel)
# -> pip install the wheel -> pytest python/tests against the installed wheel. Exits non-zero on failure.
# Usage: bash python/ci.sh            (about 3-5 minutes on 2 cores with a cold target/)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
command -v python3 >/dev/null || { echo "python3 not found"; exit 1; }

echo "== fresh venv in $work/venv ($(python3 --version))"
python3 -m venv "$work/venv"
py="$work/venv/bin/python"
"$py" -m pip install --quiet --upgrade pip
"$py" -m pip install --quiet "maturin>=1.9.4,<2" "numpy>=1.22" "scipy>=1.8" "scikit-learn>=1.6" pytest \
    libsvm-official liblinear-official cvxpy "dask[array,dataframe,distributed]" onnx onnxruntime skl2onnx skops pyarrow pandas polars
# usvm.spark's tests need PySpark and a Java runtime; without Java they are skipped.
if command -v java >/dev/null; then "$py" -m pip install --quiet "pyspark>=3.4"; fi
"$py" -m pip list 2>/dev/null | grep -iE "^(maturin|numpy|scipy|scikit-learn|pytest|libsvm-official|liblinear-official|cvxpy|dask|distributed|pyspark|onnx|onnxruntime|skl2onnx|skops|pyarrow|pandas|polars) "

echo "== maturin build --release"
cd "$here"
"$work/venv/bin/maturin" build --release --locked --out "$work/dist"
"$py" -m pip install --quiet "$work"/dist/usvm-*.whl
# From the tests' folder, `import usvm` can only find the installed wheel (python/src is not on the path).
cd "$here/tests"
"$py" -c 'import usvm; print("== testing usvm", usvm.__version__, "from", usvm.__file__)'
"$py" -m pytest -q -p no:cacheprovider .
