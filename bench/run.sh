#!/usr/bin/env bash
# Runs the project's benchmarks in one go and prints the comparisons with ratios.
# Usage: bash bench/run.sh            (figures go to stdout; copy them into bench/RESULTS.md)
# The Python comparison (GSUClassifier vs scikit-learn's LinearSVC) runs when `python3 -c "import usvm"` works,
# e.g. inside a venv where the wheel is installed (python/ci.sh shows how to build it).
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== $(date -u +%Y-%m-%dT%H:%MZ) $(nproc) cores, $(rustc --version)"
cargo build --quiet --release -p usvm-cli --examples -p usvm
echo "== core: gradient pass vs memory bandwidth, exact solver vs the paper's SGD"
cargo run --quiet --release -p usvm --example bench_linear
echo "== readers: parse throughput"
cargo run --quiet --release -p usvm-cli --example bench_parse
echo "== usvm demo wall time"
/usr/bin/time -f "usvm demo: %e s wall, %U s user" target/release/usvm demo > /dev/null
if python3 -c "import usvm" 2>/dev/null; then
  echo "== Python: GSUClassifier vs LinearSVC"
  python3 python/bench/bench_fit.py
fi
echo "== kernel SVM (SMO) on the 20,000-example synthetic problem"
cargo run --quiet --release -p usvm --example bench_kernel_svm
if python3 -c "import usvm, scipy, sklearn" 2>/dev/null; then
  # LIBSVM built -O3 from its sdist (bench/build_peers.sh; downloads the sdists once), not pip's OpenMP build.
  peers="${USVM_PEERS:-target/peers-o3}"
  [[ -f "$peers/BUILD_INFO" ]] || PYTHON=python3 bash bench/build_peers.sh "$peers"
  echo "== kernel SVM: usvm vs LIBSVM -O3 vs scikit-learn SVC (CPU seconds)"
  RAYON_NUM_THREADS=1 python3 bench/kernel_svm.py --repeat 1 --peers "$peers"
  echo "== plain hinge: usvm (CLI and Python) vs LIBLINEAR -O3 vs LinearSVC, dense 50,000 x 100 and sparse 5,000 x 2,000,000"
  python3 bench/linear_peers.py --repeat 3 --peers "$peers"
fi
echo "== SVM+ dual: dedicated SMO vs Clarabel (n = 500, 2,000; n = 5,000 SMO only: Clarabel would need hours)"
cargo run --quiet --release -p usvm-experiments --example bench_svmplus 500 2000 --clarabel-limit 1200
cargo run --quiet --release -p usvm-experiments --example bench_svmplus 5000 --smo-only
if python3 -c "import usvm, cvxpy" 2>/dev/null; then
  echo "== SVM+ dual: usvm's SMO vs Clarabel on the auxiliary-variable formulation (CPU seconds)"
  OMP_NUM_THREADS=1 python3 bench/svmplus_peers.py
fi
