"""Fit time of usvm.GSUClassifier vs scikit-learn's LinearSVC (LIBLINEAR, hinge loss, dual coordinate
descent) on the same synthetic 50,000 × 100 problem, with Σ = 0 and with diagonal Σ, and the Python-call
overhead on a 10 × 2 problem.

Run (inside a venv where the package is installed, e.g. after `cd python && maturin develop --release`):

    python python/bench/bench_fit.py            # add --quick for a 5,000 × 100 smoke run

Both solvers get the same C = 1/(λ n) (λ = 1e-4). LinearSVC regularises its bias and stops on its own
dual criterion (tol=1e-4 by default), GSUClassifier on ‖∇J‖ ≤ 1e-6‖∇J(0)‖, so the primal hinge objective
P = ½‖w‖² + C Σ max(0, 1 - y_i(wᵀx_i + b)) each reaches is printed beside the time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
import warnings

import numpy as np
import sklearn
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC

import usvm
from usvm import GSUClassifier, _usvm


def synthetic(n, d, seed=42):
    """Two overlapping Gaussian classes, per-example diagonal variances (like the Rust core's benchmark)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    direction = rng.normal(size=d) / np.sqrt(d)
    X = rng.normal(size=(n, d)) + np.outer(np.where(y == 1, 1.0, -1.0), direction)
    V = rng.uniform(0.05, 1.0, (n, d))
    return X, y, V


def primal(X, y, w, b, C):
    s = np.where(y == 1, 1.0, -1.0)
    return 0.5 * w @ w + C * np.maximum(0.0, 1 - s * (X @ w + b)).sum()


def best_of(runs, f, budget=20.0):
    """Best time of `runs` calls (fewer once `budget` seconds have been spent)."""
    times, out = [], None
    while len(times) < runs and sum(times) < budget:
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return min(times), out


def median_time(reps, f):
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="5,000 × 100 instead of 50,000 × 100")
    parser.add_argument("--runs", type=int, default=3, help="best of this many fits (default 3)")
    args = parser.parse_args()
    n, d, lam = (5_000 if args.quick else 50_000), 100, 1e-4
    C = 1.0 / (lam * n)
    X, y, V = synthetic(n, d)
    print(
        f"== usvm {usvm.__version__}, scikit-learn {sklearn.__version__}, numpy {np.__version__}, "
        f"Python {platform.python_version()}, {os.cpu_count()} cores"
    )
    print(f"== fit time: n = {n}, d = {d}, λ = {lam} (C = 1/(λn) = {C:.4g}), best of {args.runs}")

    warnings.simplefilter("ignore", ConvergenceWarning)

    def row(name, t, p=None, extra=""):
        p_text = f"hinge primal {p:.8g}" if p is not None else ""
        print(f"{name:<50} {t:8.3f} s  {p_text:<26} {extra}", flush=True)

    t_ll, ll = best_of(args.runs, lambda: LinearSVC(loss="hinge", C=C, dual=True).fit(X, y))
    p_ll = primal(X, y, ll.coef_[0], ll.intercept_[0], C)
    row("LinearSVC(loss='hinge', dual=True) [Σ ignored]", t_ll, p_ll, f"n_iter {ll.n_iter_} (max_iter 1000)")
    t0, g0 = best_of(args.runs, lambda: GSUClassifier(lam=lam).fit(X, y))
    p0 = primal(X, y, g0.coef_[0], g0.intercept_[0], C)
    row("GSUClassifier, Σ = 0 (hinge)", t0, p0, _report(g0))
    t_diag, gd = best_of(args.runs, lambda: GSUClassifier(lam=lam).fit(X, y, X_cov=V))
    row("GSUClassifier, diagonal Σ (GSU)", t_diag, None, _report(gd))
    t_sgd, gs = best_of(args.runs, lambda: GSUClassifier(lam=lam, solver="sgd").fit(X, y, X_cov=V))
    row("GSUClassifier, diagonal Σ, SGD T=1000 k=100", t_sgd, None, _report(gs))
    X32, V32 = X.astype(np.float32), V.astype(np.float32)
    t32, _ = best_of(args.runs, lambda: GSUClassifier(lam=lam).fit(X32, y, X_cov=V32))
    row("GSUClassifier, diagonal Σ, float32 input", t32)
    gsu = json.dumps({"method": "gsu", "regularization": {"lambda": lam}})
    t_bind, _ = best_of(args.runs, lambda: _usvm.fit(gsu, X, y.astype(np.int64), cov=V))
    row("_usvm.fit, diagonal Σ (no sklearn layer)", t_bind)
    print(f"ratio GSUClassifier(Σ=0) / LinearSVC fit time:        {t0 / t_ll:.2f}")
    print(f"ratio GSUClassifier(diagonal Σ) / LinearSVC fit time: {t_diag / t_ll:.2f}")
    print(f"hinge primal, GSUClassifier(Σ=0) vs LinearSVC:        {(p0 - p_ll) / p_ll:+.2e} relative")

    print("== Python-call overhead: 10 × 2 problem, median of 1000 calls")
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(10, 2)) + np.repeat([[1.0, 1.0], [-1.0, -1.0]], 5, axis=0)
    ys = np.repeat([1, 0], 5)
    vs = rng.uniform(0.1, 0.5, (10, 2))
    y64 = ys.astype(np.int64)
    clf = GSUClassifier().fit(xs, ys, X_cov=vs)
    t_fit = median_time(1000, lambda: GSUClassifier().fit(xs, ys, X_cov=vs))
    gsu_default = json.dumps({"method": "gsu"})
    t_bind = median_time(1000, lambda: _usvm.fit(gsu_default, xs, y64, cov=vs))
    t_pred = median_time(1000, lambda: clf.predict(xs))
    t_dec = median_time(1000, lambda: clf.decision_function(xs))
    t_llf = median_time(1000, lambda: LinearSVC(loss="hinge", dual=True).fit(xs, ys))
    t_llp = median_time(1000, lambda: ll_small.predict(xs)) if (ll_small := LinearSVC().fit(xs, ys)) else 0
    print(f"GSUClassifier().fit(X, y, X_cov=V)        {t_fit * 1e6:8.1f} µs")
    print(
        f"_usvm.fit (binding + Rust fit)            {t_bind * 1e6:8.1f} µs  ({clf.n_iter_} Newton iterations)"
    )
    print(
        f"  scikit-learn layer (validation etc.)    {(t_fit - t_bind) * 1e6:8.1f} µs = "
        f"{(t_fit - t_bind) / t_fit:.0%} of fit"
    )
    print(f"GSUClassifier.predict(X)                  {t_pred * 1e6:8.1f} µs")
    print(f"GSUClassifier.decision_function(X)        {t_dec * 1e6:8.1f} µs")
    print(f"LinearSVC().fit(X, y)                     {t_llf * 1e6:8.1f} µs")
    print(f"LinearSVC.predict(X)                      {t_llp * 1e6:8.1f} µs")
    print(f"ratio fit GSUClassifier / LinearSVC:      {t_fit / t_llf:.2f}")
    print(f"ratio predict GSUClassifier / LinearSVC:  {t_pred / t_llp:.2f}")
    return 0


def _report(clf):
    return (
        f"n_iter {clf.n_iter_}, converged {bool(clf.converged_.all())}, objective J {clf.objective_[0]:.10f}"
    )


if __name__ == "__main__":
    sys.exit(main())
