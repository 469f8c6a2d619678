"""SVM+ dual: usvm's dedicated SMO against Clarabel (via cvxpy) on the same problems, back to back.

Usage: OMP_NUM_THREADS=1 python bench/svmplus_peers.py [--sizes 500 1000 2000 5000] [--tol 1e-6]
(needs the usvm wheel, numpy and cvxpy with Clarabel; see python/ci.sh for the wheel).

Problem: the synthetic LUPI task of `usvm_experiments::lupi::LupiTask` (10 noisy regular features; the
privileged view is the 2 clean signal coordinates and the bad-sensor flag), C = 1, ρ = 1, Gaussian k and k*
with γ = 1/D (D the mean squared pairwise distance of each view). The dual (maximised):

    D(α, β) = 1ᵀα − ½ (α∘y)ᵀ K (α∘y) − 1/(2ρ) tᵀ K* t,   t = α + β − C,
    s.t. 1ᵀt = 0, yᵀα = 0, α ≥ 0, β ≥ 0.

The peer is written the well-formulated way: with the auxiliary variable t = α + β − C, so that the
quadratic form is two dense n × n blocks (K on α∘y and K* on t) rather than one dense 2n × 2n matrix over
(α, β). Both objectives are D above on the same γ, γ*: usvm's as it reports it (`objective_`, computed
in Rust from its α, β), Clarabel's by numpy from its α, β (clipped at 0).

Times are CPU seconds of this process (single-threaded: usvm with n_jobs=1, Clarabel is sequential):
usvm's whole fit (Gram matrices, QP, bias), and for the peer Clarabel's solve alone: the CPU time of
`problem.solve` minus that of one compilation to Clarabel's form (`get_problem_data`, printed separately).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import cvxpy as cp

from usvm import SVMPlusClassifier


def lupi(n: int, seed: int = 1, d: int = 10, s: int = 2) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """LupiTask's recipe: latent z ~ N(0, I), label sign(z_1 + z_2), x = z + σ_i ε (σ_i = 3 for 40 %,
    else 0.3), x* = (z_1, z_2, [bad sensor])."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, d))
    bad = rng.random(n) < 0.4
    x = z + np.where(bad, 3.0, 0.3)[:, None] * rng.normal(size=(n, d))
    y = (z[:, :s].sum(axis=1) > 0).astype(np.int64)
    x_star = np.column_stack([z[:, :s], bad.astype(float)])
    return x, y, x_star


def sq_dists(x: np.ndarray) -> np.ndarray:
    nrm = (x * x).sum(axis=1)
    return np.maximum(nrm[:, None] + nrm[None, :] - 2.0 * x @ x.T, 0.0)


def gaussian(x: np.ndarray) -> tuple[np.ndarray, float]:
    """exp(−γ‖x_i − x_j‖²) with γ = 1/D, D the mean squared distance over pairs i ≠ j."""
    d2 = sq_dists(x)
    n = len(x)
    gamma = 1.0 / (d2.sum() / (n * (n - 1)))
    return np.exp(-gamma * d2), gamma


def dual(k, ks, y, c, rho, alpha, beta) -> float:
    ay, t = alpha * y, alpha + beta - c
    return alpha.sum() - 0.5 * ay @ k @ ay - t @ ks @ t / (2 * rho)


def clarabel(k, ks, y, c, rho):
    n = len(y)
    a, b, t = cp.Variable(n), cp.Variable(n), cp.Variable(n)
    obj = cp.sum(a) - 0.5 * cp.quad_form(cp.multiply(a, y), cp.psd_wrap(k)) - cp.quad_form(t, cp.psd_wrap(ks)) / (2 * rho)
    prob = cp.Problem(cp.Maximize(obj), [t == a + b - c, cp.sum(t) == 0, y @ a == 0, a >= 0, b >= 0])
    start = time.process_time()
    prob.get_problem_data(cp.CLARABEL)
    compile_s = time.process_time() - start
    start = time.process_time()
    prob.solve(solver=cp.CLARABEL)
    # `solve` compiles again: its CPU time minus one compilation is Clarabel's.
    solve_s = time.process_time() - start - compile_s
    return solve_s, compile_s, prob.status, np.maximum(a.value, 0.0), np.maximum(b.value, 0.0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[500, 1000, 2000, 5000])
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--rho", type=float, default=1.0)
    args = ap.parse_args()
    c, rho = args.C, args.rho
    print(f"SVM+ dual, LUPI task, C = {c}, ρ = {rho}; usvm SMO tol {args.tol} (n_jobs=1); Clarabel via cvxpy "
          f"{cp.__version__}, auxiliary t = α + β − C; CPU seconds")
    print(f"{'n':>6} {'usvm s':>8} {'steps':>7} {'Clarabel s':>10} {'compile s':>9} {'Clarabel/usvm':>13} "
          f"{'usvm dual':>20} {'Clarabel dual':>20} {'status':>8}")
    for n in args.sizes:
        x, y01, x_star = lupi(n)
        y = np.where(y01 == 1, 1.0, -1.0)
        k, gamma = gaussian(x)
        ks, gamma_star = gaussian(x_star)
        clf = SVMPlusClassifier(C=c, rho=rho, gamma=gamma, gamma_star=gamma_star, tol=args.tol, n_jobs=1)
        start = time.process_time()
        clf.fit(x, y01, X_star=x_star)
        t_us = time.process_time() - start
        d_us = float(clf.objective_[0])
        t_cl, t_cvx, status, a, b = clarabel(k, ks, y, c, rho)
        d_cl = dual(k, ks, y, c, rho, a, b)
        print(f"{n:>6} {t_us:>8.3f} {int(clf.n_iter_[0]):>7} {t_cl:>10.3f} {t_cvx:>9.2f} {t_cl / t_us:>12.1f}x "
              f"{d_us:>20.10f} {d_cl:>20.10f} {status:>8}", flush=True)


if __name__ == "__main__":
    main()
