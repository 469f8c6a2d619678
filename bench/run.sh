#!/usr/bin/env bash
# Runs the project's benchmarks in one go and prints the comparisons with ratios.
# Usage: bash bench/run.sh            (figures go to stdout; copy them into bench/RESULTS.md)
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== $(date -u +%Y-%m-%dT%H:%MZ) $(nproc) cores, $(rustc --version)"
cargo run --quiet --release -p usvm --example bench_linear
