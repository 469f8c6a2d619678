#!/usr/bin/env bash
# Builds the Python package's portable wheel from this clone, installs it into a fresh virtual environment
# and runs the tests against it, then builds the documentation site with it:
#   1. prepare: a fresh venv with the test and documentation dependencies (numpy, scipy, scikit-learn,
#      pytest, LIBSVM/LIBLINEAR, cvxpy, dask, onnx, skops, pyarrow, pyspark when Java is there, sphinx, ...),
#      and python/build_wheel.sh (the wheel the README tells users to install: maturin --zig,
#      manylinux2014, cp39-abi3; its tag checked with `auditwheel show` by python/check_wheel.py, which
#      fails loudly otherwise; and the sdist) installed into it;
#   2. test: pytest python/tests against the installed wheel (two processes, pytest-xdist), then the
#      documentation site (docs/build.sh: warnings are errors, every gallery example runs).
# Exits non-zero on failure.
# Usage: bash python/ci.sh              both steps, in a temporary folder removed at the end
#        USVM_CI_WORK=DIR bash python/ci.sh [--prepare-only]
#                                       the same in DIR, kept; a DIR already prepared (DIR/prepared) goes
#                                       straight to step 2 — .ci/run prepares it in the background while
#                                       the Rust tests run, then runs this script again to test.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
command -v python3 >/dev/null || { echo "python3 not found"; exit 1; }
if [ -n "${USVM_CI_WORK:-}" ]; then
  work="$USVM_CI_WORK"
  mkdir -p "$work"
else
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
fi
py="$work/venv/bin/python"

if [ ! -e "$work/prepared" ]; then
  echo "== fresh venv in $work/venv ($(python3 --version))"
  rm -rf "$work/venv" "$work/dist"
  python3 -m venv "$work/venv"
  "$py" -m pip install --quiet --upgrade pip
  "$py" -m pip install --quiet "numpy>=1.22" "scipy>=1.8" "scikit-learn>=1.6" pytest pytest-xdist \
      libsvm-official liblinear-official cvxpy "dask[array,dataframe,distributed]" onnx onnxruntime skl2onnx \
      skops pyarrow pandas polars -r "$here/../docs/requirements.txt"
  # usvm.spark's tests need PySpark and a Java runtime; without Java they are skipped.
  if command -v java >/dev/null; then "$py" -m pip install --quiet "pyspark>=3.4"; fi
  "$py" -m pip list 2>/dev/null | grep -iE "^(numpy|scipy|scikit-learn|pytest|pytest-xdist|libsvm-official|liblinear-official|cvxpy|dask|distributed|pyspark|onnx|onnxruntime|skl2onnx|skops|pyarrow|pandas|polars|sphinx|matplotlib) "

  echo "== the portable wheel: bash python/build_wheel.sh"
  bash "$here/build_wheel.sh" "$work/dist"
  "$py" -m pip install --quiet "$work"/dist/usvm-*.whl
  touch "$work/prepared"
fi
[ "${1:-}" = "--prepare-only" ] && exit 0

# From the tests' folder, `import usvm` can only find the installed wheel (python/src is not on the path).
cd "$here/tests"
"$py" -c 'import sys, usvm; assert usvm.__file__.startswith(sys.prefix), usvm.__file__
print("== testing usvm", usvm.__version__, "from", usvm.__file__)'
start=$SECONDS
"$py" -m pytest -q -p no:cacheprovider -n 2 .
echo "== pytest took $((SECONDS - start)) s"

echo "== the documentation site (docs/build.sh: warnings are errors, every gallery example runs)"
PYTHON="$py" bash "$here/../docs/build.sh" "$work/site"
