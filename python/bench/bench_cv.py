"""The *CV estimators (warm-started paths) vs GridSearchCV over the wrapped estimator: same grid, same folds,
one run per family.

    python python/bench/bench_cv.py [--n 5000] [--d 30] [--family gsu|sqhinge|besvm|logistic|all]

Prints both wall times, their ratio, the value each picked and the total iterations on the paths.
"""

import argparse
import time

import numpy as np
import sklearn
from sklearn.model_selection import GridSearchCV

from usvm import (
    BasisExpansionClassifier,
    BasisExpansionClassifierCV,
    Classifier,
    ClassifierCV,
    GSUClassifier,
    GSUClassifierCV,
    GSUSquaredHingeClassifier,
    GSUSquaredHingeClassifierCV,
)

LAMS = 2.0 ** np.arange(-12, 3)
CS = 2.0 ** np.arange(-4, 7)


def families(n: int):
    """name → (the CV estimator, GridSearchCV's estimator and grid, whether it takes X_cov)."""
    return {
        "gsu": (GSUClassifierCV(lams=LAMS), GSUClassifier(), {"lam": list(LAMS)}, True),
        "sqhinge": (
            GSUSquaredHingeClassifierCV(lams=LAMS),
            GSUSquaredHingeClassifier(),
            {"lam": list(LAMS)},
            True,
        ),
        # BE-SVM's map costs O(n · basis) per fit: a 500-element basis keeps it comparable to the others.
        "besvm": (
            BasisExpansionClassifierCV(Cs=CS, basis_size=min(500, n // 2)),
            BasisExpansionClassifier(basis_size=min(500, n // 2)),
            {"C": list(CS)},
            False,
        ),
        "logistic": (
            ClassifierCV(method="logistic", lams=LAMS),
            Classifier(method="logistic"),
            {"params": [{"regularization": {"lambda": lam}} for lam in LAMS]},
            False,
        ),
    }


def run(name, cv, base, grid_params, takes_cov, X, y, V) -> None:
    args = {"X_cov": V} if takes_cov else {}
    t = time.perf_counter()
    cv.fit(X, y, **args)
    t_cv = time.perf_counter() - t
    with sklearn.config_context(enable_metadata_routing=True):
        est = base.set_fit_request(X_cov=True) if takes_cov else base
        grid = GridSearchCV(est, grid_params)
        t = time.perf_counter()
        grid.fit(X, y, **args)
        t_grid = time.perf_counter() - t
    param = cv._param
    best = grid.best_params_.get(param)
    if best is None:
        best = grid.best_params_["params"]["regularization"]["lambda"]
    print(
        f"{name:9s} {type(cv).__name__}: {t_cv:7.2f} s, {param} = {getattr(cv, param + '_'):g}, "
        f"{int(cv.n_iter_path_.sum())} iterations on the paths | GridSearchCV: {t_grid:7.2f} s, "
        f"{param} = {best:g} | ratio {t_cv / t_grid:.2f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--d", type=int, default=30)
    ap.add_argument("--family", default="all")
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, a.n)
    X = rng.normal(size=(2, a.d))[y] * 0.5 + rng.normal(size=(a.n, a.d))
    V = rng.uniform(0.1, 1.0, size=(a.n, a.d))
    print(f"# {a.n} × {a.d}, diagonal Σ where the method takes it, 5 folds, then a refit")
    for name, f in families(a.n).items():
        if a.family in ("all", name):
            run(name, *f, X, y, V)


if __name__ == "__main__":
    main()
