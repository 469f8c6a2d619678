#!/usr/bin/env python3
"""Independent re-implementation of the TSVC synthetic study (Bi & Zhang, paper 003, Table 1).

numpy + scikit-learn (LIBSVM's SMO) only, no usvm code, its own random numbers; it replaces the scratch
scripts of bench/tsvc_diagnostics/ (removed; see `git show 2c033c1 -- bench/tsvc_diagnostics` for them).
Data as in DESIGN 8 and usvm_experiments::tsvc_synthetic: ℓ points uniform on [-5, 5]², targets
x1 - x2 = 0 (linear kernel) or x1² + x2² = 9 (kernel (xᵀz)²), noise N(0, σ_i² I) with σ_i ~ U[0.1, 0.8],
10% outliers (σ_i ~ U[0.5, 2]) among the 20% of points closest to the boundary, clean test set of 10⁴.
TSVC = paper 003's alternating algorithm: fit the SVM, shift every x_i by y_i δ_i v_i/‖v_i‖ (v_i = w for the
linear kernel, the gradient of the decision function at x_i for the kernel one; `--step exact` maximises
y_i f over the δ_i-circle instead), refit on the shifted points, for `--rounds` rounds (`--mono`: stop when
the SVM objective stops falling). δ_i = δ-scale · σ_i. SVC = the same SVM without shifts.

Subcommands:
  errors  fixed C and δ-scale: mean test error ± standard error over trials, wins/losses per ℓ
  cv      C (and TSVC's δ-scale) chosen per trial by stratified 5-fold CV on the training draw (never the
          test set): the paper gives neither C nor δ for this study
  clean   noise-free data, uniform δ: the kernel TSVC boundary radius against √(9 + δ²)

Examples (each a few seconds to a few minutes, single-threaded):
  python3 bench/tsvc_python_check.py errors --target quad --C 1 --trials 50
  python3 bench/tsvc_python_check.py cv --target lin --Cs 0.001,0.01,0.1,1,10 --deltas 0.25,0.5,1 --trials 30
  python3 bench/tsvc_python_check.py clean --n 2000 --deltas 0.25,0.5,1
"""

import argparse

import numpy as np
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import SVC

SIZES = [20, 30, 50, 100, 150]
PAPER = {  # Table 1: (SVC, TSVC) average test error %
    "lin": [(8.9, 6.1), (7.8, 5.2), (5.5, 3.8), (2.9, 2.1), (2.1, 1.6)],
    "quad": [(9.9, 7.9), (7.5, 6.1), (6.7, 4.4), (3.2, 2.8), (2.8, 2.4)],
}
CIRCLE = np.stack([np.cos(a := np.linspace(0, 2 * np.pi, 721)[:-1]), np.sin(a)], 1)


def labels_and_distance(p, target):
    """Labels of clean points and their distance to the target boundary."""
    if target == "lin":
        v = p[:, 0] - p[:, 1]
        return np.where(v > 0, 1, -1), np.abs(v) / np.sqrt(2)
    r = np.sqrt((p**2).sum(1))
    return np.where(r > 3, 1, -1), np.abs(r - 3)


def draw(target, n, seed, test_size=10_000):
    """(noisy training points, labels, noise σ_i, test points, test labels)."""
    rng = np.random.default_rng(seed)
    while True:
        p = rng.uniform(-5, 5, (n, 2))
        y, dist = labels_and_distance(p, target)
        if (y > 0).any() and (y < 0).any():
            break
    s = rng.uniform(0.1, 0.8, n)
    order = np.argsort(dist)
    n_close, n_out = round(0.2 * n), round(0.1 * n)
    pick = rng.choice(order[:n_close], n_out, replace=False)
    s[pick] = rng.uniform(0.5, 2.0, n_out)
    x = p + s[:, None] * rng.standard_normal((n, 2))
    t = rng.uniform(-5, 5, (test_size, 2))
    return x, y, s, t, labels_and_distance(t, target)[0]


def svm(x, y, c, target):
    kernel = (
        {"kernel": "linear"}
        if target == "lin"
        else {"kernel": "poly", "degree": 2, "gamma": 1.0, "coef0": 0.0}
    )
    return SVC(C=c, tol=1e-6, **kernel).fit(x, y)


def objective(m, x, y, c, target):
    """The SVM primal ½‖w‖² + C Σ hinge at the points x."""
    a, sv = m.dual_coef_[0], m.support_vectors_
    k = sv @ sv.T if target == "lin" else (sv @ sv.T) ** 2
    return 0.5 * a @ k @ a + c * np.maximum(0, 1 - y * m.decision_function(x)).sum()


def shift(m, x, y, delta, target, exact):
    """Every x_i moved by δ_i toward its own class (paper 003, section 5.2; or the exact circle search)."""
    if target == "lin":
        w = m.coef_[0]
        return x + (y * delta)[:, None] * w / np.linalg.norm(w)
    if not exact:
        sv, a = m.support_vectors_, m.dual_coef_[0]
        v = 2 * ((x @ sv.T) * a) @ sv  # ∇ Σ_j a_j (xᵀs_j)²
        norm = np.linalg.norm(v, axis=1, keepdims=True)
        return x + (y * delta)[:, None] * v / np.where(norm > 0, norm, 1)
    z = np.empty_like(x)
    for i in range(len(x)):
        cand = x[i] + delta[i] * CIRCLE
        if np.linalg.norm(x[i]) <= delta[i]:
            cand = np.vstack([cand, [0.0, 0.0]])
        z[i] = cand[np.argmax(y[i] * m.decision_function(cand))]
    return z


def tsvc(x, y, delta, c, target, rounds, exact=False, mono=False):
    m = svm(x, y, c, target)
    j = objective(m, x, y, c, target)
    for _ in range(rounds):
        z = shift(m, x, y, delta, target, exact)
        m2 = svm(z, y, c, target)
        j2 = objective(m2, z, y, c, target)
        if mono and j2 >= j:
            break
        m, j = m2, j2
    return m


def error(m, t, yt):
    return 100 * np.mean(m.predict(t) != yt)


def cv_error(x, y, s, c, ds, a):
    """Stratified 5-fold CV error on the training draw; ds None = SVC."""
    k = min(5, np.count_nonzero(y > 0), np.count_nonzero(y < 0))
    if k < 2:
        return 0.0
    wrong = 0
    for tr, va in StratifiedKFold(k, shuffle=True, random_state=0).split(x, y):
        if ds is None:
            m = svm(x[tr], y[tr], c, a.target)
        else:
            m = tsvc(x[tr], y[tr], ds * s[tr], c, a.target, a.rounds, a.step == "exact", a.mono)
        wrong += np.count_nonzero(m.predict(x[va]) != y[va])
    return wrong / len(y)


def se(e):
    """Standard error of the mean."""
    return e.std(ddof=1) / np.sqrt(len(e))


def table(a, fit_pair):
    better = []
    for n in SIZES:
        es, et, extra = [], [], []
        for trial in range(a.trials):
            x, y, s, t, yt = draw(a.target, n, 1000 * n + trial)
            svc_model, tsvc_model, info = fit_pair(x, y, s)
            es.append(error(svc_model, t, yt))
            et.append(error(tsvc_model, t, yt))
            extra.append(info)
        es, et = np.array(es), np.array(et)
        better.append(et.mean() < es.mean())
        note = (
            ""
            if extra[0] is None
            else "  median chosen C_svc, C_tsvc, δ-scale: " + ", ".join(f"{v:g}" for v in np.median(extra, 0))
        )
        print(
            f"ℓ = {n:3d}: SVC {es.mean():5.2f} ± {se(es):.2f}  TSVC {et.mean():5.2f} ± {se(et):.2f}  "
            f"wins/losses {np.count_nonzero(et < es)}/{np.count_nonzero(et > es)}  "
            f"paper {PAPER[a.target][SIZES.index(n)]}" + note,
            flush=True,
        )
    print(f"TSVC better than SVC on average in every column: {all(better)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["errors", "cv", "clean"])
    ap.add_argument("--target", choices=["lin", "quad"], default="quad")
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--step", choices=["taylor", "exact"], default="taylor")
    ap.add_argument("--mono", action="store_true", help="stop when the SVM objective stops falling")
    ap.add_argument("--C", type=float, default=1.0, help="errors: C of both methods")
    ap.add_argument("--delta-scale", type=float, default=1.0, help="errors: δ_i = scale · σ_i")
    ap.add_argument("--Cs", default="0.001,0.01,0.1,1,10", help="cv: the C grid")
    ap.add_argument("--deltas", default="0.25,0.5,1", help="cv: δ-scale grid; clean: uniform δ values")
    ap.add_argument("--n", type=int, default=2000, help="clean: number of noise-free points")
    a = ap.parse_args()
    exact = a.step == "exact"
    deltas = [float(v) for v in a.deltas.split(",")]
    print(vars(a))
    if a.command == "errors":

        def fixed(x, y, s):
            return (
                svm(x, y, a.C, a.target),
                tsvc(x, y, a.delta_scale * s, a.C, a.target, a.rounds, exact, a.mono),
                None,
            )

        table(a, fixed)
    elif a.command == "cv":
        cs = [float(v) for v in a.Cs.split(",")]

        def tuned(x, y, s):
            c_svc = min(cs, key=lambda c: cv_error(x, y, s, c, None, a))
            c_tsvc, ds = min(
                ((c, d) for c in cs for d in deltas), key=lambda p: cv_error(x, y, s, p[0], p[1], a)
            )
            m = tsvc(x, y, ds * s, c_tsvc, a.target, a.rounds, exact, a.mono)
            return svm(x, y, c_svc, a.target), m, (c_svc, c_tsvc, ds)

        table(a, tuned)
    else:
        rng = np.random.default_rng(5)
        p = rng.uniform(-5, 5, (a.n, 2))
        y = labels_and_distance(p, "quad")[0]
        t = rng.uniform(-5, 5, (20_000, 2))
        yt = labels_and_distance(t, "quad")[0]
        for d in [0.0, *deltas]:
            m = tsvc(p, y, np.full(a.n, d), 1000.0, "quad", 10)
            sv, coef = m.support_vectors_, m.dual_coef_[0]
            q = np.einsum("ij,jk,ik->i", CIRCLE, (sv.T * coef) @ sv, CIRCLE)  # f(r u) = r² uᵀMu + b
            radius = np.sqrt(np.clip(-m.intercept_[0] / q, 0, None)).mean()
            print(
                f"δ = {d}: boundary radius {radius:.4f} (√(9 + δ²) = {np.sqrt(9 + d * d):.4f}), "
                f"clean test error {error(m, t, yt):.2f} %"
            )


if __name__ == "__main__":
    main()
