#!/usr/bin/env bash
# Build the benchmark peers LIBSVM and LIBLINEAR from their PyPI sdists with optimisation, beside (not
# instead of) whatever is installed, so that bench/kernel_svm.py and bench/linear_peers.py can load them
# (issue #17 item 6, "honest peers").
#
# Usage: bash bench/build_peers.sh [DIR]            (DIR defaults to target/peers-o3)
# Environment: PEER_CFLAGS  optimisation flags (default "-O3 -march=x86-64-v2")
#              PEER_OPENMP  1 to compile LIBSVM with -fopenmp as the sdist's setup.py does (default 0: off,
#                           as in LIBSVM's own Makefile; see below)
#              PYTHON       the interpreter whose pip downloads the sdists (default python3)
#
# Result:
#   DIR/python/libsvm/     libsvm-official's Python wrapper + clib.cp-o3.so (LIBSVM's svm.cpp)
#   DIR/python/liblinear/  liblinear-official's Python wrapper + clib.cp-o3.so (linear.cpp, newton.cpp, blas/*.c)
#   DIR/BUILD_INFO         versions, compiler and flags (the benchmark scripts print it)
# The wrappers load the first `clib.cp*` file in their own folder (libsvm/svm.py, liblinear/liblinear.py), so
# putting DIR/python first on sys.path (the scripts' `--peers DIR`, or PYTHONPATH=DIR/python) makes
# `import libsvm` / `import liblinear` load these builds. Needs the wrappers' own dependencies (numpy, scipy)
# in the interpreter that runs the benchmarks, and g++/gcc.
#
# Why OpenMP is off by default: the sdist's setup.py adds -fopenmp (and pip builds it with Python's own flags,
# -O3 -march=x86-64: neither package has a binary wheel on PyPI, `pip install` compiles the sdist). With
# OpenMP, LIBSVM computes each kernel column in a parallel loop; the benchmarks time CPU seconds of the whole
# process with usvm on one thread, and on the shared 2-core machine the OpenMP team's waiting threads spin, so
# that build is no single-threaded peer. LIBSVM's Makefile builds without OpenMP (`-O3 -fPIC`); so do we.
# Idempotent: re-running re-downloads nothing already present and rebuilds the libraries (a few seconds).
set -euo pipefail

DIR="${1:-$(cd "$(dirname "$0")/.." && pwd)/target/peers-o3}"
LIBSVM_VERSION=3.37.0
LIBLINEAR_VERSION=2.50.0
CFLAGS_OPT="${PEER_CFLAGS:--O3 -march=x86-64-v2}"
OPENMP="${PEER_OPENMP:-0}"
PYTHON="${PYTHON:-python3}"
CXX="${CXX:-g++}"
CC="${CC:-gcc}"

mkdir -p "$DIR/sdist" "$DIR/src" "$DIR/python"
DIR="$(cd "$DIR" && pwd)"

# 1. The sdists (pinned), downloaded once.
svm_tar="$DIR/sdist/libsvm_official-$LIBSVM_VERSION.tar.gz"
lin_tar="$DIR/sdist/liblinear_official-$LIBLINEAR_VERSION.tar.gz"
if [[ ! -f "$svm_tar" || ! -f "$lin_tar" ]]; then
    "$PYTHON" -m pip download --no-binary :all: --no-deps -d "$DIR/sdist" \
        "libsvm-official==$LIBSVM_VERSION" "liblinear-official==$LIBLINEAR_VERSION"
fi
rm -rf "$DIR/src/libsvm_official-$LIBSVM_VERSION" "$DIR/src/liblinear_official-$LIBLINEAR_VERSION"
tar -xzf "$svm_tar" -C "$DIR/src"
tar -xzf "$lin_tar" -C "$DIR/src"
svm_src="$DIR/src/libsvm_official-$LIBSVM_VERSION"
lin_src="$DIR/src/liblinear_official-$LIBLINEAR_VERSION"

# 2. The shared libraries, built in a scratch folder and moved in place (a failed build leaves no half library).
read -r -a opt <<<"$CFLAGS_OPT"
svm_flags=("${opt[@]}" -fPIC -Wall)
if [[ "$OPENMP" == 1 ]]; then svm_flags+=(-fopenmp); fi
lin_flags=("${opt[@]}" -fPIC -Wall)
tmp="$(mktemp -d "$DIR/build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

# LIBSVM: one C++ file (setup.py: sources cpp-source/svm.cpp, language c++).
"$CXX" "${svm_flags[@]}" -shared -I"$svm_src/cpp-source" "$svm_src/cpp-source/svm.cpp" -o "$tmp/libsvm.so"
# LIBLINEAR: the four BLAS routines in C, linear.cpp and newton.cpp in C++ (setup.py's source_codes).
for f in daxpy ddot dnrm2 dscal; do
    "$CC" "${lin_flags[@]}" -c "$lin_src/cpp-source/blas/$f.c" -o "$tmp/$f.o"
done
for f in linear newton; do
    "$CXX" "${lin_flags[@]}" -I"$lin_src/cpp-source" -c "$lin_src/cpp-source/$f.cpp" -o "$tmp/$f.o"
done
"$CXX" "${lin_flags[@]}" -shared "$tmp"/{linear,newton,daxpy,ddot,dnrm2,dscal}.o -o "$tmp/liblinear.so"

# 3. The Python wrappers, unchanged, beside their libraries (they glob `clib.cp*` in their own folder).
for pkg in libsvm liblinear; do
    src="$svm_src"; [[ $pkg == liblinear ]] && src="$lin_src"
    rm -rf "$DIR/python/$pkg"
    mkdir -p "$DIR/python/$pkg"
    cp "$src/$pkg"/*.py "$DIR/python/$pkg/"
    mv "$tmp/$pkg.so" "$DIR/python/$pkg/clib.cp-o3.so"
done

openmp_note="off (as LIBSVM's Makefile)"
[[ "$OPENMP" == 1 ]] && openmp_note="on (-fopenmp, as the sdist's setup.py)"
cat >"$DIR/BUILD_INFO" <<EOF
built by bench/build_peers.sh on $(date -u '+%Y-%m-%d %H:%M') UTC
libsvm-official $LIBSVM_VERSION: $CXX ${svm_flags[*]} -shared
liblinear-official $LIBLINEAR_VERSION: $CC/$CXX ${lin_flags[*]} (-shared)
compiler: $("$CXX" --version | head -n 1)
LIBSVM OpenMP: $openmp_note
EOF

# 4. Check that the wrappers load these libraries, and say what was built.
PYTHONPATH="$DIR/python" "$PYTHON" - "$DIR" <<'EOF' || echo "(the load check needs numpy and scipy in $PYTHON; the build itself is done)"
import sys
from libsvm import svm
from liblinear import liblinear
from ctypes import c_int
print(f"load check: libsvm -> {svm.path_to_so} (libsvm_version {c_int.in_dll(svm.libsvm, 'libsvm_version').value})")
print(f"load check: liblinear -> {liblinear.path_to_so} (liblinear_version {c_int.in_dll(liblinear.liblinear, 'liblinear_version').value})")
assert svm.path_to_so.startswith(sys.argv[1]) and liblinear.path_to_so.startswith(sys.argv[1])
EOF
echo "== peers built in $DIR"
cat "$DIR/BUILD_INFO"
ls -l "$DIR/python/libsvm/clib.cp-o3.so" "$DIR/python/liblinear/clib.cp-o3.so"
echo "use: python bench/kernel_svm.py --peers $DIR; python bench/linear_peers.py --peers $DIR (or PYTHONPATH=$DIR/python)"
