#!/usr/bin/env bash
# Builds the Python package's portable wheel from this clone, installs it into a fresh virtual environment
# and runs the tests against it: fresh venv -> pip install numpy scipy scikit-learn pytest dask ... ->
# python/build_wheel.sh (the wheel the README tells users to install: maturin --zig, manylinux2014, cp39-abi3;
# its tag checked with `auditwheel show` by python/check_wheel.py, which fails loudly otherwise; and the sdist)
# -> pip install the wheel -> pytest python/tests against the installed wheel. Exits non-zero on failure.
# Usage: bash python/ci.sh   (cold, on the shared 2-core machine: 41 min = the wheel 19 + pytest 19, which
#                              includes test_agreement's release build of usvm-cli; see bench/RESULTS.md)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
command -v python3 >/dev/null || { echo "python3 not found"; exit 1; }

echo "== fresh venv in $work/venv ($(python3 --version))"
python3 -m venv "$work/venv"
py="$work/venv/bin/python"
"$py" -m pip install --quiet --upgrade pip
"$py" -m pip install --quiet "numpy>=1.22" "scipy>=1.8" "scikit-learn>=1.6" pytest \
    libsvm-official liblinear-official cvxpy "dask[array,dataframe,distributed]" onnx onnxruntime skl2onnx skops \
    pyarrow pandas polars
# usvm.spark's tests need PySpark and a Java runtime; without Java they are skipped.
if command -v java >/dev/null; then "$py" -m pip install --quiet "pyspark>=3.4"; fi
"$py" -m pip list 2>/dev/null | grep -iE "^(numpy|scipy|scikit-learn|pytest|libsvm-official|liblinear-official|cvxpy|dask|distributed|pyspark|onnx|onnxruntime|skl2onnx|skops|pyarrow|pandas|polars) "

echo "== the portable wheel: bash python/build_wheel.sh"
bash "$here/build_wheel.sh" "$work/dist"
"$py" -m pip install --quiet "$work"/dist/usvm-*.whl
# From the tests' folder, `import usvm` can only find the installed wheel (python/src is not on the path).
cd "$here/tests"
"$py" -c 'import sys, usvm; assert usvm.__file__.startswith(sys.prefix), usvm.__file__
print("== testing usvm", usvm.__version__, "from", usvm.__file__)'
"$py" -m pytest -q -p no:cacheprovider .
