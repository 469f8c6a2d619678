"""Low-rank covariances (LowRankCovariance) through every estimator that takes covariances, at the papers'
28×28 image size with rank-2 translation covariances, and through the CLI's low-rank file forms."""

import json
import subprocess

import numpy as np
import pytest

from test_agreement import usvm_binary
from usvm import (
    GSUClassifier,
    GSUSquaredHingeClassifier,
    KernelGSUClassifier,
    LowRankCovariance,
    translation_covariance,
)


def _images(n_per_class=15, side=28, seed=0):
    """Two classes of smooth blobs (a vertical and a horizontal bar) with noise, pixels in [0, 1]."""
    rng = np.random.default_rng(seed)
    r, c = np.mgrid[0:side, 0:side] / side
    images, labels = [], []
    for k in range(2 * n_per_class):
        cls = k % 2
        centre = 0.5 + rng.normal(scale=0.05, size=2)
        spread = (0.05, 0.25) if cls else (0.25, 0.05)
        img = np.exp(-((r - centre[0]) ** 2 / spread[0] + (c - centre[1]) ** 2 / spread[1]) * 0.5)
        images.append(np.clip(img + rng.normal(scale=0.05, size=img.shape), 0, 1).ravel())
        labels.append(1 if cls else -1)
    return np.array(images), np.array(labels)


def _dense(cov):
    return np.einsum("ijr,ikr->ijk", cov.factors, cov.factors) + (
        0 if cov.diagonal is None else np.einsum("ij,jk->ijk", cov.diagonal, np.eye(cov.factors.shape[1]))
    )


def test_translation_factor_at_28x28_is_rank_2():
    X, _ = _images(4)
    cov = translation_covariance(X, 28, 28, pixels=5)
    assert isinstance(cov, LowRankCovariance) and cov.factors.shape == (8, 784, 2)
    # J Σ_t Jᵀ from central differences, computed here independently.
    for i in range(len(X)):
        img = X[i].reshape(28, 28)
        gy, gx = np.gradient(img)  # central differences inside, one-sided at the border
        gx[:, 0], gx[:, -1] = (img[:, 1] - 0) / 2, (0 - img[:, -2]) / 2  # zero padding outside the image
        gy[0, :], gy[-1, :] = (img[1, :] - 0) / 2, (0 - img[-2, :]) / 2
        J = np.stack([gx.ravel(), gy.ravel()], axis=1)
        want = J @ np.diag([(5 / 3) ** 2] * 2) @ J.T
        got = cov.factors[i] @ cov.factors[i].T
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * np.abs(want).max())


@pytest.mark.parametrize(
    "make",
    [
        lambda: GSUClassifier(lam=0.05, tol=1e-10),
        lambda: GSUSquaredHingeClassifier(lam=0.05, tol=1e-10),
        lambda: KernelGSUClassifier(lam=0.05, kernel="linear", tol=1e-10),
    ],
)
def test_every_estimator_takes_low_rank_as_the_same_dense_covariance(make):
    X, y = _images(10)
    cov = translation_covariance(X, 28, 28, pixels=5)
    rng = np.random.default_rng(1)
    with_diag = LowRankCovariance(cov.factors, rng.uniform(0, 1e-3, size=X.shape))
    for c in (cov, with_diag):
        low = make().fit(X, y, X_cov=c)
        dense = make().fit(X, y, X_cov=_dense(c))
        np.testing.assert_allclose(low.decision_function(X), dense.decision_function(X), rtol=1e-5, atol=1e-7)
        # The (U, v) pair is the same input.
        pair = make().fit(X, y, X_cov=(c.factors, c.diagonal))
        np.testing.assert_allclose(pair.decision_function(X), low.decision_function(X), rtol=0, atol=0)


def test_low_rank_splits_with_the_examples_and_bad_factors_are_named():
    X, y = _images(6)
    cov = translation_covariance(X, 28, 28, pixels=5)
    part = cov[np.arange(6)]
    assert part.factors.shape == (6, 784, 2)
    GSUClassifier(lam=0.1).fit(X[:6], y[:6], X_cov=part)
    with pytest.raises(ValueError, match="(?i)factor"):
        GSUClassifier().fit(X, y, X_cov=LowRankCovariance(cov.factors[:, :700, :]))
    bad = cov.factors.copy()
    bad[3, 10, 1] = np.nan
    with pytest.raises(ValueError, match="(?i)NaN|non-finite"):
        GSUClassifier().fit(X, y, X_cov=LowRankCovariance(bad))
    with pytest.raises(ValueError, match="(?i)rank"):
        GSUClassifier().fit(X[:, :3], y, X_cov=LowRankCovariance(np.ones((12, 3, 4))))


def test_cli_low_rank_files_train_like_python(tmp_path):
    usvm_cli = usvm_binary()
    X, y = _images(8)
    header = ",".join(f"p{k}" for k in range(784)) + ",label"
    rows = [",".join(repr(float(v)) for v in x) + f",{label}" for x, label in zip(X, y)]
    (tmp_path / "img.csv").write_text(header + "\n" + "\n".join(rows) + "\n")
    run = lambda *a: subprocess.run([usvm_cli, *a], check=True, capture_output=True, text=True)
    run("uncertainty", "translation", "--images", str(tmp_path / "img.csv"), "--height", "28", "--width", "28",
        "--pixels", "5", "--out-csv", str(tmp_path / "d.csv"), "--out-var-csv", str(tmp_path / "v.csv"))
    assert (tmp_path / "v.csv").read_text().splitlines()[0].startswith("u1:p0_0,")
    run("train", "--method", "gsu", "--csv", str(tmp_path / "d.csv"), "--var-csv", str(tmp_path / "v.csv"),
        "--lambda", "0.05", "--tol", "1e-9", "--model", str(tmp_path / "m.json"))
    model = json.loads((tmp_path / "m.json").read_text())
    clf = GSUClassifier(lam=0.05, tol=1e-9).fit(X, y, X_cov=translation_covariance(X, 28, 28, pixels=5))
    np.testing.assert_allclose(np.ravel(model["coef"]), clf.coef_.ravel(), rtol=1e-6, atol=1e-9)


def _independent_gap(X, y, factors, lam, w, b):
    """The relative duality gap of (w, b) for LSVM-GSU with Σ_i = F_i F_iᵀ, computed here with numpy/scipy
    alone: D(p, u) = mean(p) - ‖g‖²/(2λ), g = (1/ℓ) Σ (p_i y_i x_i - ψ(p_i) F_i u_i), ψ = φ∘Φ⁻¹, over
    p ∈ [0, 1] with Σ p_i y_i = 0 and ‖u_i‖ ≤ 1. Off the apex p_i = Φ(d_i/σ_i), u_i = F_iᵀw/σ_i; at the apex
    (d_i = σ_i = 0 to round-off) the multipliers come from the stationarity conditions by least squares."""
    from scipy.special import ndtr, ndtri

    ell = len(y)
    d = 1.0 - y * (X @ w + b)
    z = np.einsum("ijr,j->ir", factors, w)
    sigma = np.linalg.norm(z, axis=1)
    pdf = lambda t: np.exp(-0.5 * t * t) / np.sqrt(2 * np.pi)
    safe = np.where(sigma > 0, sigma, 1.0)
    loss = np.where(sigma > 0, d * ndtr(d / safe) + sigma * pdf(d / safe), np.maximum(d, 0))
    primal = 0.5 * lam * w @ w + loss.mean()
    apex = (np.abs(d) <= 1e-9) & (sigma <= 1e-9 * max(1.0, np.linalg.norm(w)))
    p = np.where(sigma > 0, ndtr(d / safe), (d > 0).astype(float))
    units = z / safe[:, None] * (sigma > 0)[:, None]
    off = ~apex
    vterm = sum(pdf(d[i] / sigma[i]) * factors[i] @ units[i] for i in np.flatnonzero(off & (sigma > 0)))
    members = np.flatnonzero(apex)
    if members.size:
        target = np.concatenate([lam * ell * w - (p[off] * y[off]) @ X[off] + vterm, [-(p[off] * y[off]).sum()]])
        columns = []
        for i in members:
            columns.append(np.concatenate([y[i] * X[i], [y[i]]]))
            columns += [np.concatenate([-c, [0.0]]) for c in factors[i].T]
        solution = np.linalg.lstsq(np.array(columns).T, target, rcond=None)[0].reshape(len(members), -1)
        for i, row in zip(members, solution):
            p[i] = np.clip(row[0], 0, 1)
            psi = pdf(ndtri(p[i])) if 0 < p[i] < 1 else 0.0
            units[i] = row[1:] / max(psi, np.linalg.norm(row[1:])) if np.any(row[1:]) else 0
    pos, neg = p[y > 0].sum(), p[y < 0].sum()
    p[y > 0 if pos > neg else y < 0] *= min(pos, neg) / max(pos, neg)
    psi = np.where((p > 0) & (p < 1), pdf(ndtri(np.clip(p, 1e-300, 1 - 1e-16))), 0.0)
    g = ((p * y) @ X - np.einsum("i,ijr,ir->j", psi, factors, units)) / ell
    dual = p.mean() - g @ g / (2 * lam)
    return (primal - dual) / primal, members.size


@pytest.mark.parametrize("lam", [1e-3, 1e-5])
def test_gsu_at_small_lambda_is_certified_at_the_apex_independently(lam):
    # 2 × 25 images with rank-2 translation covariances: at small λ examples sit at the expected hinge's
    # apex (d_i = 0, U_iᵀw = 0), where the solver's exact finish puts them (one of them here at λ = 1e-5).
    X, y = _images(25)
    cov = translation_covariance(X, 28, 28, pixels=5)
    clf = GSUClassifier(lam=lam).fit(X, y, X_cov=cov)
    report = clf.reports_[0]
    assert report["converged"] and report["duality_gap"] <= 1e-10, report
    assert report["n_iter"] <= 80, report
    gap, at_apex = _independent_gap(X, np.where(y == clf.classes_[1], 1.0, -1.0), cov.factors, lam,
                                    clf.coef_.ravel(), clf.intercept_[0])
    assert gap <= 1e-9, (gap, at_apex)
    assert at_apex > 0 or lam > 1e-5  # the finish ran where it matters
