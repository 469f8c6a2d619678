#!/usr/bin/env bash
# Builds the Python package's portable wheel and its sdist, and checks both (python/check_wheel.py):
#   OUT/usvm-<version>-cp39-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl   CPython >= 3.9, glibc >= 2.17
#   OUT/usvm-<version>.tar.gz                                                      builds with cargo >= 1.90
# Needs python3 (with venv) and the Rust toolchain (cargo); on Linux only (the wheel is a manylinux wheel).
# The build tools (maturin, ziglang, auditwheel) go into a venv of their own, kept in the target folder
# (zig's path is part of the linker's, which is part of cargo's fingerprints: a new venv each time would
# rebuild every crate each time). zig is the linker: it links against
# glibc 2.17's symbol versions, so the wheel does not need the building machine's newer glibc (a plain
# `maturin build` on glibc 2.36 links e.g. pthread_create@GLIBC_2.34 and hypotf@GLIBC_2.35: manylinux_2_35).
# Usage: bash python/build_wheel.sh [OUT]   (OUT defaults to dist/ at the repository root; earlier usvm-*.whl
# and usvm-*.tar.gz there are removed first). A cold build takes ~7-12 minutes on 2 cores; CARGO_TARGET_DIR
# is honoured.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/../dist}"
[ "$(uname -s)" = Linux ] || { echo "build_wheel.sh builds manylinux wheels (Linux); elsewhere: pip install ./python"; exit 1; }
command -v python3 >/dev/null || { echo "python3 not found"; exit 1; }
command -v cargo >/dev/null || { echo "cargo not found: install the Rust toolchain (rustup), version >= 1.90"; exit 1; }
mkdir -p "$out"
out="$(cd "$out" && pwd)"
target="${CARGO_TARGET_DIR:-$here/../target}"
tools="$target/wheel-tools"

echo "== build tools in $tools"
if ! "$tools/bin/python" -c "" 2>/dev/null; then rm -rf "$tools"; mkdir -p "$target"; python3 -m venv "$tools"; fi
"$tools/bin/python" -m pip install --quiet --upgrade pip
"$tools/bin/python" -m pip install --quiet "maturin[zig]>=1.9.4,<2" "auditwheel>=6"
"$tools/bin/python" -m pip list 2>/dev/null | grep -iE "^(maturin|ziglang|auditwheel) "
# maturin finds zig as `python3 -m ziglang`: the tools venv comes first on PATH
export PATH="$tools/bin:$PATH"

rm -f "$out"/usvm-*.whl "$out"/usvm-*.tar.gz
cd "$here"
echo "== maturin build --release --locked --zig --compatibility manylinux2014"
start=$SECONDS
# No debug info (the release profile keeps line tables for profiling; the wheel strips them anyway): less
# to compile and link.
CARGO_PROFILE_RELEASE_DEBUG=0 maturin build --release --locked --zig --compatibility manylinux2014 --out "$out"
echo "== wheel built in $((SECONDS - start)) s"
# (maturin 1.16's sdist prints "error: manifest path `Cargo.toml` does not exist" from a probe in python/ and
# goes on; the sdist's contents are checked below)
maturin sdist --out "$out"
wheel=("$out"/usvm-*.whl)
sdist=("$out"/usvm-*.tar.gz)
ls -l "${wheel[@]}" "${sdist[@]}"
python "$here/check_wheel.py" "${wheel[@]}" "${sdist[@]}"
