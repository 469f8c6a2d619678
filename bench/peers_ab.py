"""Interleaved A/B timing of two builds of the peers (issue #17 item 6): LIBLINEAR `-s 3 -B 1 -e 0.1` on
bench/linear_peers.py's dense 50,000 × 100 problem at λ = 1e-4 (C = 0.2), and LIBSVM (RBF, γ = 0.1, C = 1,
-e 0.001, 200 MB cache) on a 5,000 × 10 instance of bench/kernel_svm.py's synthetic sphere. The two builds
alternate call by call (A, B, A, B, ...), CPU seconds of the process; prints each pair's B/A ratio and the median.

Usage: python bench/peers_ab.py [--a DIR|installed] [--b DIR|installed] [--pairs N]
(DIR: a folder of `bash bench/build_peers.sh DIR`; installed: the pip-installed libsvm-official /
liblinear-official; defaults --a target/peers-o3 --b installed.)
"""

from __future__ import annotations

import argparse
import ctypes
import os
import time
from pathlib import Path

import numpy as np

import _peers
from linear_peers import dense_problem


def pick(arg: str) -> Path | None:
    return None if arg == "installed" else Path(arg).resolve()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", default=str(_peers.DEFAULT_DIR))
    ap.add_argument("--b", default="installed")
    ap.add_argument("--pairs", type=int, default=7)
    args = ap.parse_args()
    libc = ctypes.CDLL(None)
    print(f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, load average {os.getloadavg()[0]:.2f}")

    builds = []
    for tag, arg in (("A", args.a), ("B", args.b)):
        lin, where = _peers.load("liblinear", "liblinearutil", pick(arg), alias=f"liblinear_{tag}")
        print(f"{tag} LIBLINEAR: {where}")
        svm, where = _peers.load("libsvm", "svmutil", pick(arg), alias=f"libsvm_{tag}")
        print(f"{tag} LIBSVM:    {where}")
        builds.append((lin, svm))

    x, y = dense_problem()
    probs = [lin.problem(y, x) for lin, _ in builds]

    lin_params = [lin.parameter("-s 3 -B 1 -c 0.2 -e 0.1 -q") for lin, _ in builds]

    def liblinear(k: int) -> None:
        libc.srand(1)  # the same permutations in both builds
        builds[k][0].train(probs[k], lin_params[k])

    rng = np.random.default_rng(0)
    xs = rng.normal(size=(5000, 10))
    ys = np.where(np.linalg.norm(xs, axis=1) + 0.4 * rng.normal(size=5000) > np.sqrt(10), 1, -1)
    rows, labels = xs.tolist(), ys.tolist()

    svm_probs = [svm.svm_problem(labels, rows) for _, svm in builds]
    svm_params = [svm.svm_parameter("-s 0 -t 2 -g 0.1 -c 1 -e 0.001 -m 200 -h 1 -q") for _, svm in builds]

    def libsvm(k: int) -> None:
        builds[k][1].svm_train(svm_probs[k], svm_params[k])

    paired("LIBLINEAR", liblinear, args.pairs)
    print()
    paired("LIBSVM", libsvm, args.pairs)


def paired(name: str, run, pairs: int) -> None:
    """`run(0)` (build A) and `run(1)` (build B) alternated `pairs` times (only the calls timed); each
    pair's B/A of CPU seconds, then the median."""
    ratios = []
    for _ in range(pairs):
        t = []
        for k in (0, 1):
            s = time.process_time()
            run(k)
            t.append(time.process_time() - s)
        ratios.append(t[1] / t[0])
        print(f"  {name} A {t[0]:.3f} s  B {t[1]:.3f} s  B/A {ratios[-1]:.2f}  load {os.getloadavg()[0]:.2f}")
    print(f"{name} B/A: median {np.median(ratios):.2f} of {pairs} pairs, range {min(ratios):.2f}-{max(ratios):.2f}")

if __name__ == "__main__":
    main()
