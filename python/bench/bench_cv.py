"""GSUClassifierCV (warm-started λ paths) vs GridSearchCV over GSUClassifier: same grid, same folds, one run.

    python python/bench/bench_cv.py [--n 5000] [--d 30]

Prints both wall times, their ratio, the λ each picked and the total Newton iterations.
"""

import argparse
import time

import numpy as np
import sklearn
from sklearn.model_selection import GridSearchCV

from usvm import GSUClassifier, GSUClassifierCV


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--d", type=int, default=30)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, a.n)
    X = rng.normal(size=(2, a.d))[y] * 0.5 + rng.normal(size=(a.n, a.d))
    V = rng.uniform(0.1, 1.0, size=(a.n, a.d))
    lams = 2.0 ** np.arange(-12, 3)
    t = time.perf_counter()
    cv = GSUClassifierCV(lams=lams).fit(X, y, X_cov=V)
    t_cv = time.perf_counter() - t
    with sklearn.config_context(enable_metadata_routing=True):
        grid = GridSearchCV(GSUClassifier().set_fit_request(X_cov=True), {"lam": list(lams)})
        t = time.perf_counter()
        grid.fit(X, y, X_cov=V)
        t_grid = time.perf_counter() - t
    print(f"# {a.n} × {a.d} diagonal Σ, {len(lams)} λ (2^-12..2^2), 5 folds, then a refit")
    print(
        f"GSUClassifierCV: {t_cv:.2f} s, λ = {cv.lam_:g}, "
        f"{int(cv.n_iter_path_.sum())} Newton iterations on the paths"
    )
    print(f"GridSearchCV:    {t_grid:.2f} s, λ = {grid.best_params_['lam']:g}")
    print(f"time ratio CV / grid search: {t_cv / t_grid:.2f}")


if __name__ == "__main__":
    main()
