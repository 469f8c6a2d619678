#!/usr/bin/env bash
# Times `usvm train` on the sparse high-dimensional problem of issue #17: writes the LIBSVM data and
# variance files with the bench_sparse example (seeded, in memory, then to DIR), then runs the CLI for
# hinge and gsu at λ = 1e-2 and 1e-4 under /usr/bin/time -v and prints wall time, peak RSS and the report.
# Usage: bash bench/sparse_cli.sh [FEATURES (default 2000000)] [DIR (default /tmp/usvm_sparse_FEATURES)]
set -euo pipefail
cd "$(dirname "$0")/.."
features="${1:-2000000}"
dir="${2:-/tmp/usvm_sparse_$features}"
cargo build --quiet --release -p usvm-cli
cargo build --quiet --release -p usvm --example bench_sparse
target/release/examples/bench_sparse --features "$features" --write "$dir" --write-only
ls -l "$dir"/train.libsvm "$dir"/train.var
for method in hinge gsu; do
  for lambda in 1e-2 1e-4; do
    /usr/bin/time -v target/release/usvm train --method "$method" --data "$dir/train.libsvm" --var "$dir/train.var" \
      --lambda "$lambda" --model "$dir/model_${method}_$lambda.json" --report "$dir/report_${method}_$lambda.json" \
      2> "$dir/time_${method}_$lambda.txt"
    wall=$(grep -F 'Elapsed (wall clock)' "$dir/time_${method}_$lambda.txt" | sed 's/.*: //')
    rss=$(grep -F 'Maximum resident set size' "$dir/time_${method}_$lambda.txt" | sed 's/.*: //')
    user=$(grep -F 'User time' "$dir/time_${method}_$lambda.txt" | sed 's/.*: //')
    echo "$method λ=$lambda: wall $wall, user ${user}s, peak RSS ${rss} kB, model $(stat -c %s "$dir/model_${method}_$lambda.json") bytes"
    tr -d '\n ' < "$dir/report_${method}_$lambda.json"
    echo
  done
done
