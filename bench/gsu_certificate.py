#!/usr/bin/env python3
"""Independent optimality certificate for an LSVM-GSU fit with low-rank (or diagonal) covariances.

Reads svm-gsu files (means `<id> j:v`, labels `<id> label`, covariances `<id> uK,J:V ... J,J:V ...`) and
a usvm JSON model, and computes in numpy/scipy only (no usvm code) the primal objective

    J(w, b) = λ/2 ‖w‖² + (1/ℓ) Σ L(d_i, σ_i),  d_i = 1 - y_i(wᵀx_i + b),  σ_i = ‖F_iᵀw‖,
    L(d, σ) = d Φ(d/σ) + σ φ(d/σ),  F_i = [U_i, diag(v_i)^{1/2}]  (Σ_i = F_i F_iᵀ)

and a Lagrange dual lower bound. Since L(d, σ) = max_{p ∈ [0,1], ‖u‖ ≤ 1} p d + ψ(p) uᵀF_iᵀw with
ψ(p) = φ(Φ⁻¹(p)), every p ∈ [0,1]^ℓ with Σ p_i y_i = 0 and unit-ball u_i give

    J* ≥ D(p, u) = (1/ℓ) Σ p_i - ‖g‖²/(2λ),  g = (1/ℓ) Σ (p_i y_i x_i - ψ(p_i) F_i u_i).

The dual point is taken from the primal one with a floor ε on σ (usvm's continuation minimises the
objective with σ_i' = √(σ_i² + ε²), whose stationarity conditions give exactly these multipliers):
p_i = Φ(d_i/σ_i'), u_i = F_iᵀw/σ_i' (‖u_i‖ < 1). At the apex (d_i = 0 and σ_i = 0 to round-off, where
usvm's exact finish puts examples) the primal point does not name the multipliers: they are solved for here
from the stationarity conditions λw = (1/ℓ) Σ (p_i y_i x_i - F_i v_i), Σ p_i y_i = 0 by least squares, then
p_i clipped to [0, 1] and u_i = v_i/max(ψ(p_i), ‖v_i‖). Finally p is rescaled on one class so that
Σ p_i y_i = 0 exactly. Any such point is feasible, so J - D bounds the suboptimality of (w, b):
(J - J*)/J ≤ (J - D)/J, printed as the relative duality gap.

Usage: python3 bench/gsu_certificate.py MEANS LABELS COV MODEL.json LAMBDA [FLOOR]   (FLOOR: 1e-8 by default,
the continuation's; 0 for a fit that usvm's report shows with `sigma_floor` 0, i.e. finished at the apex)
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

    # Dual point off the apex: p = Φ(d/σ'), ψ(p) u = φ(d/σ') Fᵀw/σ', σ' = √(σ² + ε²).
    apex = (np.abs(d) <= 1e-9) & (sigma <= 1e-9 * max(1.0, np.linalg.norm(w)))
    smooth = np.sqrt(sigma**2 + floor**2)
    safe = np.where(smooth > 0, smooth, 1.0)
    p = np.where(smooth > 0, 0.5 * erfc(-(d / safe) / np.sqrt(2.0)), np.where(d > 0, 1.0, 0.0))
    vterm = np.zeros(n)  # Σ_i ψ(p_i) F_i u_i over the examples off the apex
    for i, F in enumerate(factors):
        if not apex[i] and smooth[i] > 0:
            vterm += np.exp(-0.5 * (d[i] / smooth[i]) ** 2) / np.sqrt(2 * np.pi) * (F @ (z[i] / smooth[i]))
    # At the apex: least squares for (p_i, v_i) in λℓw = Σ (p_i y_i x_i) - vterm - Σ_A F_i v_i and
    # Σ p_i y_i = 0, over the examples of A.
    members = np.flatnonzero(apex)
    units = [None] * ell
    if members.size:
        off = ~apex
        target = np.concatenate([lam * ell * w - (p[off] * y[off]) @ X[off] + vterm, [-(p[off] * y[off]).sum()]])
        columns = []
        for i in members:
            columns.append(np.concatenate([y[i] * X[i], [y[i]]]))
            for c in factors[i].T:
                columns.append(np.concatenate([-c, [0.0]]))
        solution, *_ = np.linalg.lstsq(np.array(columns).T, target, rcond=None)
        k = 0
        for i in members:
            r = factors[i].shape[1]
            p[i], v = solution[k], solution[k + 1 : k + 1 + r]
            k += 1 + r
            p[i] = min(max(p[i], 0.0), 1.0)
            psi_i = np.exp(-0.5 * ndtri(p[i]) ** 2) / np.sqrt(2 * np.pi) if 0 < p[i] < 1 else 0.0
            norm = np.linalg.norm(v)
            units[i] = v / max(psi_i, norm) if norm > 0 else np.zeros(r)
    # Σ p_i y_i = 0: the heavier class rescaled; ψ(p) at the final p, u kept.
    s_pos, s_neg = p[y > 0].sum(), p[y < 0].sum()
    if s_pos > s_neg:
        p[y > 0] *= s_neg / s_pos
    else:
        p[y < 0] *= s_pos / s_neg
    psi = np.exp(-0.5 * ndtri(np.clip(p, 1e-300, 1 - 1e-16)) ** 2) / np.sqrt(2 * np.pi)
    psi[(p <= 0) | (p >= 1)] = 0.0
    g = (p * y) @ X
    for i, F in enumerate(factors):
        if apex[i]:
            g -= psi[i] * (F @ units[i])
        elif smooth[i] > 0:
            g -= psi[i] * (F @ (z[i] / smooth[i]))
    g /= ell
    dual = p.mean() - g @ g / (2 * lam)
    print(
        f"ℓ = {ell}, n = {n}, λ = {lam:g}: primal {primal:.15e}, dual bound {dual:.15e}, "
        f"relative gap {(primal - dual) / abs(primal):.3e}, Σ p y = {(p * y).sum():.1e}, "
        f"{members.size} examples at the apex"
    )


if __name__ == "__main__":
    main()
