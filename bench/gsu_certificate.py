#!/usr/bin/env python3
"""Independent optimality certificate for an LSVM-GSU fit with low-rank (or diagonal) covariances.

Reads svm-gsu files (means `<id> j:v`, labels `<id> label`, covariances `<id> uK,J:V ... J,J:V ...`) and
a usvm JSON model, and computes in numpy/scipy only (no usvm code) the primal objective

    J(w, b) = λ/2 ‖w‖² + (1/ℓ) Σ L(d_i, σ_i),  d_i = 1 - y_i(wᵀx_i + b),  σ_i = ‖F_iᵀw‖,
    L(d, σ) = d Φ(d/σ) + σ φ(d/σ),  F_i = [U_i, diag(v_i)^{1/2}]  (Σ_i = F_i F_iᵀ)

and a Lagrange dual lower bound. Since L(d, σ) = max_{p ∈ [0,1], ‖u‖ ≤ 1} p d + ψ(p) uᵀF_iᵀw with
ψ(p) = φ(Φ⁻¹(p)), every p ∈ [0,1]^ℓ with Σ p_i y_i = 0 and unit-ball u_i give

    J* ≥ D(p, u) = (1/ℓ) Σ p_i - ‖g‖²/(2λ),  g = (1/ℓ) Σ (p_i y_i x_i - ψ(p_i) F_i u_i).

The dual point is taken from the primal one with the solver's floor ε on σ (usvm's exact solver minimises
the objective with σ_i' = √(σ_i² + ε²), ε = 1e-8 by default, whose stationarity conditions give exactly
these multipliers): p_i = Φ(d_i/σ_i'), u_i = F_iᵀw/σ_i' (‖u_i‖ < 1), then p rescaled on one class so that
Σ p_i y_i = 0 exactly. Any such point is feasible, so J - D bounds the suboptimality of (w, b):
(J - J*)/J ≤ (J - D)/J, printed as the relative duality gap.

Usage: python3 bench/gsu_certificate.py MEANS LABELS COV MODEL.json LAMBDA [FLOOR]
"""

import json
import sys

import numpy as np
from scipy.special import erfc, ndtri


def read_rows(path):
    rows = {}
    for line in open(path):
        tokens = line.split()
        if tokens:
            rows[tokens[0]] = tokens[1:]
    return rows


def main():
    means_path, labels_path, cov_path, model_path, lam = sys.argv[1:6]
    lam = float(lam)
    floor = float(sys.argv[6]) if len(sys.argv) > 6 else 1e-8
    model = json.load(open(model_path))
    w = np.array(model["coef"], dtype=float).reshape(-1)
    b = float(np.array(model["intercept"], dtype=float).reshape(-1)[0])
    positive = model["classes"][1]
    n = w.size
    means, cov = read_rows(means_path), read_rows(cov_path)
    ids, y = [], []
    for line in open(labels_path):
        tokens = line.split()
        if tokens:
            ids.append(tokens[0])
            y.append(1.0 if int(float(tokens[1])) == positive else -1.0)
    y = np.array(y)
    ell = len(ids)
    X = np.zeros((ell, n))
    factors = []
    for i, key in enumerate(ids):
        for token in means[key]:
            j, v = token.split(":")
            X[i, int(j) - 1] = float(v)
        cols, diag = {}, np.zeros(n)
        for token in cov.get(key, []):
            index, v = token.split(":")
            if index.startswith("u"):
                k, j = index[1:].split(",")
                cols.setdefault(int(k), np.zeros(n))[int(j) - 1] = float(v)
            else:
                a, c = index.split(",")
                assert a == c, "only low-rank or diagonal covariances"
                diag[int(a) - 1] = float(v)
        F = [cols[k] for k in sorted(cols)] + [np.sqrt(diag)]
        factors.append(np.array(F).T)  # n × (r + 1)

    d = 1.0 - y * (X @ w + b)
    z = [F.T @ w for F in factors]
    sigma = np.array([np.linalg.norm(v) for v in z])
    t = np.where(sigma > 0, d / np.where(sigma > 0, sigma, 1.0), np.where(d > 0, np.inf, -np.inf))
    cdf = 0.5 * erfc(-t / np.sqrt(2.0))
    pdf = np.where(np.isfinite(t), np.exp(-0.5 * np.where(np.isfinite(t), t, 0.0) ** 2) / np.sqrt(2 * np.pi), 0.0)
    loss = np.where(sigma > 0, d * cdf + sigma * pdf, np.maximum(d, 0.0))
    primal = 0.5 * lam * w @ w + loss.mean()

    # Dual point: p = Φ(d/σ'), u = Fᵀw/σ', σ' = √(σ² + ε²); p rescaled on the heavier class so that
    # Σ p_i y_i = 0 exactly.
    smooth = np.sqrt(sigma**2 + floor**2)
    p = 0.5 * erfc(-(d / smooth) / np.sqrt(2.0))
    s_pos, s_neg = p[y > 0].sum(), p[y < 0].sum()
    if s_pos > s_neg:
        p[y > 0] *= s_neg / s_pos
    else:
        p[y < 0] *= s_pos / s_neg
    psi = np.exp(-0.5 * ndtri(np.clip(p, 1e-300, 1 - 1e-16)) ** 2) / np.sqrt(2 * np.pi)
    psi[(p <= 0) | (p >= 1)] = 0.0
    g = (p * y) @ X
    for i, F in enumerate(factors):
        g -= psi[i] * (F @ (z[i] / smooth[i]))
    g /= ell
    dual = p.mean() - g @ g / (2 * lam)
    print(
        f"ℓ = {ell}, n = {n}, λ = {lam:g}: primal {primal:.15e}, dual bound {dual:.15e}, "
        f"relative gap {(primal - dual) / abs(primal):.3e}, Σ p y = {(p * y).sum():.1e}"
    )


if __name__ == "__main__":
    main()
