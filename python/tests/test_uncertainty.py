"""Uncertainty-modelling helpers against numpy/scipy computed directly."""

import numpy as np
import pytest
import scipy.signal

import usvm
from usvm import (
    GSUClassifier,
    LowRankCovariance,
    block_pool,
    gaussians_from_repeats,
    standard_errors_to_variances,
    translation_covariance,
    welch_pool,
)


def _groups(seed=0, sizes=(2, 3, 5, 9), n=4):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(k, n)) * rng.uniform(0.5, 3, n) for k in sizes]


@pytest.mark.parametrize("cov_type", ["full", "diag", "iso", "lowrank"])
def test_repeats_equal_numpy_cov(cov_type):
    groups = _groups()
    means, cov = gaussians_from_repeats(groups, cov_type=cov_type)
    n = groups[0].shape[1]
    for i, g in enumerate(groups):
        want = np.cov(g, rowvar=False)  # unbiased, ddof = 1 (eq. 4.12)
        np.testing.assert_allclose(means[i], g.mean(axis=0), rtol=1e-14, atol=1e-15)
        if cov_type == "full":
            np.testing.assert_allclose(cov[i], want, rtol=1e-12, atol=1e-14)
        elif cov_type == "diag":
            np.testing.assert_allclose(cov[i], np.diag(want), rtol=1e-12)
        elif cov_type == "iso":
            np.testing.assert_allclose(cov[i], np.trace(want) / n, rtol=1e-12)
        else:
            assert isinstance(cov, LowRankCovariance)
            u = cov.factors[i]
            np.testing.assert_allclose(u @ u.T, want, rtol=1e-12, atol=1e-14)


def test_repeats_from_a_grouped_array_and_training():
    rng = np.random.default_rng(1)
    centres = np.repeat(np.array([[2.0, 2.0], [-2.0, -2.0]] * 10), 4, axis=0)
    obs = centres + rng.normal(size=centres.shape)
    groups = np.repeat(np.arange(20), 4)[::-1]  # any labels; examples ordered as np.unique(groups)
    means, cov = gaussians_from_repeats(obs, groups, cov_type="diag")
    for k in range(20):
        np.testing.assert_allclose(cov[k], obs[groups == k].var(axis=0, ddof=1), rtol=1e-12)
    y = np.sign(means[:, 0])
    clf = GSUClassifier(lam=0.1).fit(means, y, X_cov=cov)
    assert clf.score(means, y) > 0.9
    _, lr = gaussians_from_repeats(obs, groups, cov_type="lowrank")
    assert GSUClassifier(lam=0.1).fit(means, y, X_cov=lr).score(means, y) > 0.9


def test_repeats_bad_input():
    ok = np.ones((3, 2))
    with pytest.raises(ValueError, match="at least two"):
        gaussians_from_repeats([ok, np.ones((1, 2))])
    with pytest.raises(ValueError, match="dimension mismatch"):
        gaussians_from_repeats([ok, np.ones((3, 3))])
    bad = ok.copy()
    bad[1, 1] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        gaussians_from_repeats([ok, bad])
    with pytest.raises(ValueError, match="groups"):
        gaussians_from_repeats(np.ones((4, 2)), groups=[0, 0, 1])
    with pytest.raises(ValueError, match="cov_type"):
        gaussians_from_repeats([ok], cov_type="dense")
    with pytest.raises(ValueError, match="empty"):
        gaussians_from_repeats([])


def _central(img):
    p = np.pad(img, 1)
    return (p[1:-1, 2:] - p[1:-1, :-2]) / 2, (p[2:, 1:-1] - p[:-2, 1:-1]) / 2


def test_translation_covariance_is_scaled_central_differences():
    rng = np.random.default_rng(2)
    images = rng.uniform(0, 16, size=(5, 6 * 7))
    cov = translation_covariance(images, 6, 7, pixels=1.5)
    assert cov.shape == (5, 42, 2)
    for i in range(5):
        gx, gy = _central(images[i].reshape(6, 7))
        np.testing.assert_allclose(cov.factors[i][:, 0], 0.5 * gx.ravel(), rtol=1e-15)
        np.testing.assert_allclose(cov.factors[i][:, 1], 0.5 * gy.ravel(), rtol=1e-15)
    # Σ = J diag(σ_h², σ_v²) Jᵀ with unequal spreads.
    c2 = translation_covariance(images, 6, 7, sigma=(0.3, 0.1))
    gx, gy = _central(images[0].reshape(6, 7))
    j = np.stack([gx.ravel(), gy.ravel()], axis=1)
    np.testing.assert_allclose(c2.factors[0] @ c2.factors[0].T, j @ np.diag([0.09, 0.01]) @ j.T, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="dimension mismatch"):
        translation_covariance(images, 6, 6, pixels=1)
    bad = images.copy()
    bad[3, 0] = np.inf
    with pytest.raises(ValueError, match="example 3"):
        translation_covariance(bad, 6, 7, pixels=1)
    with pytest.raises(ValueError, match="exactly one"):
        translation_covariance(images, 6, 7)


@pytest.mark.parametrize("window", ["hann", "hamming", "boxcar"])
@pytest.mark.parametrize("seg,overlap", [(64, 32), (50, 10), (33, 0)])
def test_welch_matches_scipy(window, seg, overlap):
    rng = np.random.default_rng(3)
    t = np.arange(2000) / 100.0
    x = np.sin(2 * np.pi * 7.3 * t) + 0.5 * rng.normal(size=t.size) + 0.01 * t
    f, m, v = welch_pool(x, segment_len=seg, overlap=overlap, window=window, fs=100.0)
    fw, pw = scipy.signal.welch(x, fs=100.0, window=window, nperseg=seg, noverlap=overlap)
    np.testing.assert_allclose(f, fw, rtol=1e-14)
    np.testing.assert_allclose(m, pw, rtol=1e-9, atol=1e-16)
    # Per-segment periodograms (same conventions) give the variance directly.
    _, _, segs = scipy.signal.spectrogram(
        x, fs=100.0, window=window, nperseg=seg, noverlap=overlap, detrend="constant", scaling="density", mode="psd"
    )
    np.testing.assert_allclose(v, segs.var(axis=1, ddof=1), rtol=1e-8, atol=1e-16)
    # Rows are pooled independently.
    _, m2, v2 = welch_pool(np.stack([x, 2 * x]), segment_len=seg, overlap=overlap, window=window, fs=100.0)
    np.testing.assert_allclose(m2[1], 4 * m, rtol=1e-12)
    np.testing.assert_allclose(v2[0], v, rtol=1e-12)


def test_welch_bad_input():
    with pytest.raises(ValueError, match="too short"):
        welch_pool(np.zeros(80), segment_len=64)
    with pytest.raises(ValueError, match="overlap"):
        welch_pool(np.zeros(500), segment_len=64, overlap=64)
    with pytest.raises(ValueError, match="non-finite"):
        welch_pool(np.r_[np.zeros(300), np.nan], segment_len=64)
    with pytest.raises(ValueError, match="window"):
        welch_pool(np.zeros(500), segment_len=64, window="kaiser")


def test_block_pool_matches_reshape():
    rng = np.random.default_rng(4)
    maps = rng.normal(size=(3, 6, 8, 5))
    m, v = block_pool(maps, 3, 2)
    blocks = maps.reshape(3, 2, 3, 4, 2, 5).transpose(0, 1, 3, 5, 2, 4).reshape(3, 2, 4, 5, 6)
    np.testing.assert_allclose(m, blocks.mean(axis=-1), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(v, blocks.var(axis=-1, ddof=1), rtol=1e-12)
    m1, v1 = block_pool(maps[1], 3, 2, ddof=0)
    np.testing.assert_allclose(v1, blocks[1].var(axis=-1), rtol=1e-12)
    with pytest.raises(ValueError, match="dimension mismatch"):
        block_pool(maps, 4, 2)
    with pytest.raises(ValueError, match="shape"):
        block_pool(np.zeros((4, 4)), 2, 2)


def test_standard_errors_rule():
    means = np.array([[1.0, 10.0], [3.0, 12.0], [2.0, 11.0]])
    se = np.array([[0.5, 1.0], [1.0, 2.0], [0.25, 4.0]])
    rng_ = means[:2].max(0) - means[:2].min(0)
    scaled = 0.8 * rng_ * se / se[:2].max(0)
    # The default is the paper's rule: the rescaled standard error is the variance.
    np.testing.assert_allclose(standard_errors_to_variances(means, se, reference=[0, 1]), scaled, rtol=1e-14)
    for rule in ["range-squared", "range"]:
        v = standard_errors_to_variances(means, se, rule=rule, reference=[0, 1])
        np.testing.assert_allclose(v, scaled**2, rtol=1e-14)
    np.testing.assert_allclose(standard_errors_to_variances(means, se, rule="squared"), se**2)
    with pytest.raises(ValueError, match="negative variance"):
        standard_errors_to_variances(means, -se)
    with pytest.raises(ValueError, match="rule"):
        standard_errors_to_variances(means, se, rule="cube")


def test_exported():
    for name in ["gaussians_from_repeats", "translation_covariance", "welch_pool", "block_pool"]:
        assert name in usvm.__all__
