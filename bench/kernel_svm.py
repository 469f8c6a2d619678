"""Kernel SVM training time: usvm's SMO against LIBSVM (libsvm-official) on the same problems.

Usage: python bench/kernel_svm.py [--repeat N] [--synthetic-n N] [--peers DIR|wheel] [--compare-wheel]
(needs the usvm wheel in the environment, built with `maturin develop --release`, numpy, scipy, scikit-learn,
and LIBSVM: the -O3 build of `bash bench/build_peers.sh [DIR]` (--peers DIR, or $USVM_PEERS; target/peers-o3 is
used when it holds a build) or the installed libsvm-official (--peers wheel). --compare-wheel also times the
installed libsvm-official in the same run. The LIBSVM used is printed with its path and build flags.)

- digits (8x8, 1797 examples, 64 features scaled to [0, 1]), all 10 classes one-vs-rest, RBF: LIBSVM is run
  as 10 binary problems (class k against the rest), usvm as one one-vs-rest fit (which computes the kernel
  matrix once for the 10 problems when it fits in the cache); then one binary problem (8 against the rest),
  where nothing is shared;
scikit-learn's SVC (its LIBSVM fork with dense rows) is timed the same way, one binary problem per class.
- synthetic: 20,000 training (+5,000 test) examples, 10 features, two classes separated by a noisy sphere, RBF.
Both sides: the same γ, C, tolerance (-e), cache size (-m) and shrinking; the times are training only
(the best of --repeat runs), excluding LIBSVM's list conversion. Accuracy on a held-out split must agree.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import time
from pathlib import Path

import numpy as np
from sklearn.svm import SVC

from usvm import _usvm

import _peers

DIGITS = Path(os.environ.get("USVM_DATASETS", "/work/shared/datasets")) / "digits.csv.gz"


def digits() -> tuple[np.ndarray, np.ndarray]:
    d = np.loadtxt(gzip.open(DIGITS), delimiter=",")
    return np.ascontiguousarray(d[:, :-1] / 16.0), d[:, -1].astype(np.int64)


def synthetic(n: int, d: int = 10, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    r = np.linalg.norm(x, axis=1) + 0.4 * rng.normal(size=n)
    return x, (r > np.sqrt(d)).astype(np.int64)


def split(n: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    p = np.random.default_rng(seed).permutation(n)
    k = int(0.8 * n)
    return np.sort(p[:k]), np.sort(p[k:])


def best_of(repeat: int, f):
    """The best CPU time (all threads of the process) of `repeat` runs, and the last result. CPU time, not
    wall time: the benchmark machine is shared, and wall times under load say little."""
    times, out = [], None
    for _ in range(repeat):
        t = time.process_time()
        out = f()
        times.append(time.process_time() - t)
    return min(times), out


def libsvm_ovr(lib, x, y, xt, gamma, c, eps, cache, repeat):
    """LIBSVM (`lib`: a libsvm.svmutil module) as one binary problem per class (one-vs-rest); returns
    (seconds, predictions)."""
    svm_parameter, svm_predict, svm_problem, svm_train = lib.svm_parameter, lib.svm_predict, lib.svm_problem, lib.svm_train
    classes = np.unique(y)
    binary = len(classes) == 2
    positives = classes[1:] if binary else classes
    rows, rows_t = x.tolist(), xt.tolist()
    param = svm_parameter(f"-s 0 -t 2 -g {gamma} -c {c} -e {eps} -m {cache} -h 1 -q")
    probs = [svm_problem(np.where(y == k, 1, -1).tolist(), rows) for k in positives]
    total, models = 0.0, []
    for prob in probs:
        t, m = best_of(repeat, lambda prob=prob: svm_train(prob, param))
        total += t
        models.append(m)
    scores = []
    for m in models:
        _, _, dec = svm_predict([0] * len(rows_t), rows_t, m, "-q")
        sign = 1.0 if m.get_labels()[0] == 1 else -1.0
        scores.append(sign * np.array(dec)[:, 0])
    scores = np.array(scores).T
    pred = classes[(scores[:, 0] > 0).astype(int)] if binary else classes[np.argmax(scores, axis=1)]
    return total, pred


def sklearn_ovr(x, y, xt, gamma, c, eps, cache, repeat):
    """scikit-learn's SVC (its LIBSVM fork, dense kernel rows) as one binary problem per class."""
    classes = np.unique(y)
    binary = len(classes) == 2
    positives = classes[1:] if binary else classes
    total, scores = 0.0, []
    for k in positives:
        svc = SVC(C=c, kernel="rbf", gamma=gamma, tol=eps, cache_size=cache, shrinking=True)
        t, m = best_of(repeat, lambda svc=svc, k=k: svc.fit(x, np.where(y == k, 1, -1)))
        total += t
        scores.append(m.decision_function(xt))
    scores = np.array(scores).T
    pred = classes[(scores[:, 0] > 0).astype(int)] if binary else classes[np.argmax(scores, axis=1)]
    return total, pred


def usvm_ovr(x, y, xt, gamma, c, eps, cache, repeat):
    params = json.dumps(
        {"method": "svm", "regularization": {"C": c}, "kernel": {"type": "rbf", "gamma": gamma}, "tol": eps,
         "cache_mb": cache}
    )
    t, (model, reports, _) = best_of(repeat, lambda: _usvm.fit(params, x, y.astype(np.int64)))
    f = np.asarray(model.decision_function(xt)).reshape(len(xt), -1)
    classes = np.array(model.classes)
    pred = classes[(f[:, 0] > 0).astype(int)] if f.shape[1] == 1 else classes[np.argmax(f, axis=1)]
    return t, pred, {"n_iter": [r["n_iter"] for r in reports]}


def run(name, x, y, gamma, c, eps, cache, repeat, libs):
    tr, te = split(len(y))
    xs, ys, xt, yt = x[tr], y[tr], x[te], y[te]
    xs, xt = np.ascontiguousarray(xs), np.ascontiguousarray(xt)
    t_us, p_us, r = usvm_ovr(xs, ys, xt, gamma, c, eps, cache, repeat)
    t_sk, p_sk = sklearn_ovr(xs, ys, xt, gamma, c, eps, cache, repeat)
    lib_rows = [(label, *libsvm_ovr(lib, xs, ys, xt, gamma, c, eps, cache, repeat)) for label, lib in libs]
    print(f"{name}: ℓ = {len(ys)} training, {len(yt)} test examples, {sum(r['n_iter'])} SMO iterations (usvm)")
    print(f"  usvm                  {t_us:9.3f} s CPU   test accuracy {100 * np.mean(p_us == yt):.2f}%")
    for label, t_lib, p_lib in lib_rows:
        print(f"  {label:<21} {t_lib:9.3f} s CPU   test accuracy {100 * np.mean(p_lib == yt):.2f}%   "
              f"usvm/LIBSVM {t_us / t_lib:.3f}")
    print(f"  scikit-learn SVC      {t_sk:9.3f} s CPU   test accuracy {100 * np.mean(p_sk == yt):.2f}%   "
          f"usvm/SVC    {t_us / t_sk:.3f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--synthetic-n", type=int, default=20000)
    ap.add_argument("--peers", default=None,
                    help="folder of bench/build_peers.sh's -O3 build, or 'wheel' for the installed libsvm-official "
                         "(default: $USVM_PEERS, else target/peers-o3 if built, else the installed package)")
    ap.add_argument("--compare-wheel", action="store_true",
                    help="also time the installed libsvm-official (pip's build of the PyPI sdist) in this run")
    ap.add_argument("--skip-binary", action="store_true", help="skip the digits binary (8 vs rest) problem")
    args = ap.parse_args()
    eps, cache = 1e-3, 200
    peers = _peers.resolve(args.peers)
    lib, where = _peers.load("libsvm", "svmutil", peers)
    libs = [("LIBSVM 3.37 -O3" if peers is not None else "LIBSVM 3.37 wheel", lib)]
    threads = os.environ.get("RAYON_NUM_THREADS", str(os.cpu_count()))
    print(f"kernel SVM training time, tolerance {eps}, cache {cache} MB, shrinking on, usvm threads {threads}, "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"{libs[0][0]}: {where}")
    if args.compare_wheel and peers is not None:
        wheel, where = _peers.load("libsvm", "svmutil", None, alias="libsvm_installed")
        libs.append(("LIBSVM 3.37 wheel", wheel))
        print(f"{libs[1][0]}: {where}")
    x, y = digits()
    run("digits 10-class OvR, γ=0.02, C=10", x, y, 0.02, 10.0, eps, cache, args.repeat, libs)
    print(f"  (load average {os.getloadavg()[0]:.2f})")
    if not args.skip_binary:
        # One binary problem, like with like: no kernel work shared between one-vs-rest problems.
        run("digits binary (8 vs rest), γ=0.02, C=10", x, (y == 8).astype(np.int64), 0.02, 10.0, eps, cache,
            args.repeat, libs)
        print(f"  (load average {os.getloadavg()[0]:.2f})")
    # 80% of the examples train: ℓ = --synthetic-n training examples.
    x, y = synthetic(round(args.synthetic_n / 0.8))
    run("synthetic sphere d=10, γ=0.1, C=1", x, y, 0.1, 1.0, eps, cache, args.repeat, libs)
    print(f"  (load average {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
