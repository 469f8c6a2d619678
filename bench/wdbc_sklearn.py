#!/usr/bin/env python3
"""The WDBC protocol (DESIGN 8) through the Python `GSUClassifier` with scikit-learn's splitting, to find
where it departs from `usvm demo` (docs/reproductions.md, "WDBC").

Per split `seed`: `train_test_split(test_size=0.1, stratify=y, random_state=seed)` (or `--split core`: the
core's `stratified_split`, which `usvm demo` uses); standardise with the training mean and population std;
mean-feature variances by the standard-error rule (`--rule paper|range-squared`, divided by the feature's
variance), 1e-6 elsewhere; λ on 2^-12..2^2 by 10-fold CV on the training split with
`StratifiedKFold(10, shuffle=True, random_state=0)` (or `--folds core`: `stratified_k_fold(.., seed)`),
scored as `GridSearchCV` does — the mean of the fold accuracies, ties to the FIRST (smallest) λ — or as
`usvm demo` does (`--ties largest`: ties to the largest λ; with pooled counts, equal to the mean of fold
accuracies up to the fold sizes). Refit at the chosen λ, score the test split. LSVM (hinge) and LSVM-GSU.
Prints mean ± sample std over splits and the per-split mean of GSU − LSVM.

Usage: python3 bench/wdbc_sklearn.py [--splits 50] [--split sklearn|core] [--folds sklearn|core]
                                     [--ties smallest|largest] [--rule paper|range-squared]
Needs the usvm Python package (python/ci.sh or `maturin develop --release` in python/).
"""

import argparse

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import StratifiedKFold, train_test_split
from usvm import GSUClassifier, _usvm

GRID = 2.0 ** np.arange(-12, 3)
METHODS = {"LSVM": "hinge", "LSVM-GSU": "gsu"}


def uncertain(x, train, rule):
    xt = x[train]
    mean, std = xt.mean(0), xt.std(0)
    std = np.where(std > 0, std, 1.0)
    v = np.full(x.shape, 1e-6)
    for j in range(10):
        scale = 0.8 * np.ptp(xt[:, j]) / xt[:, 10 + j].max()
        s = scale * x[:, 10 + j]
        v[:, j] = (s if rule == "paper" else s**2) / std[j] ** 2
    return (x - mean) / std, v


def run(a):
    x, y = load_breast_cancer(return_X_y=True)
    y = y.astype(np.int64)
    acc = {m: [] for m in METHODS}
    for seed in range(a.splits):
        if a.split == "sklearn":
            train, test = train_test_split(np.arange(len(y)), test_size=0.1, stratify=y, random_state=seed)
        else:
            train, test = _usvm.stratified_split(y, 0.1, seed)
        z, v = uncertain(x, train, a.rule)
        zt, vt, yt = z[train], v[train], y[train]
        if a.folds == "sklearn":
            folds = [va for _, va in StratifiedKFold(10, shuffle=True, random_state=0).split(zt, yt)]
        else:
            folds = _usvm.stratified_k_fold(yt, 10, seed)
        for name, method in METHODS.items():
            score = np.zeros(len(GRID))
            for held in folds:
                rest = np.setdiff1d(np.arange(len(yt)), held)
                clf = GSUClassifier(method=method, warm_start=True)
                for k in np.argsort(-GRID):  # largest λ first, warm-started (convex: only saves time)
                    clf.set_params(lam=GRID[k]).fit(zt[rest], yt[rest], X_cov=vt[rest])
                    score[k] += np.mean(clf.predict(zt[held]) == yt[held]) / len(folds)
            best = np.flatnonzero(score >= score.max() - 1e-12)
            k = best[0] if a.ties == "smallest" else best[-1]
            clf = GSUClassifier(method=method, lam=GRID[k]).fit(zt, yt, X_cov=vt)
            acc[name].append(np.mean(clf.predict(z[test]) == y[test]))
    print(vars(a))
    for name, r in acc.items():
        r = 100 * np.asarray(r)
        print(f"  {name:<9} {r.mean():6.2f} ± {r.std(ddof=1):.2f} %")
    d = 100 * (np.asarray(acc["LSVM-GSU"]) - np.asarray(acc["LSVM"]))
    print(f"  LSVM-GSU − LSVM {d.mean():+.2f} ± {d.std(ddof=1):.2f} points per split")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--splits", type=int, default=50)
    ap.add_argument("--split", choices=["sklearn", "core"], default="sklearn")
    ap.add_argument("--folds", choices=["sklearn", "core"], default="sklearn")
    ap.add_argument("--ties", choices=["smallest", "largest"], default="smallest")
    ap.add_argument("--rule", choices=["paper", "range-squared"], default="range-squared")
    run(ap.parse_args())
