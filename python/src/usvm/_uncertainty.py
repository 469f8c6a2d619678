"""Uncertainty modelling (DESIGN 2.9): turn raw measurements into the means and covariances the
classifiers learn from. Thin wrappers over ``usvm::gaussians``.

>>> import numpy as np
>>> from usvm import gaussians_from_repeats
>>> obs = np.array([[0.0, 1.0], [2.0, 1.0], [1.0, 4.0], [5.0, 5.0], [5.0, 7.0]])
>>> means, cov = gaussians_from_repeats(obs, groups=[0, 0, 0, 1, 1], cov_type="full")
>>> means[0].tolist(), cov[0].tolist()
([1.0, 2.0], [[1.0, 0.0], [0.0, 3.0]])
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from . import _usvm
from ._covariance import LowRankCovariance

__all__ = [
    "gaussians_from_repeats",
    "translation_covariance",
    "standard_errors_to_variances",
    "welch_pool",
    "block_pool",
]


def _f64(a: Any, ndim: int, what: str) -> npt.NDArray[np.float64]:
    arr = np.ascontiguousarray(a, dtype=np.float64)
    if arr.ndim != ndim:
        raise ValueError(f"{what} must be {ndim}-dimensional; got shape {arr.shape}")
    return arr


def gaussians_from_repeats(
    observations: Any, groups: Any = None, *, cov_type: str = "full"
) -> tuple[npt.NDArray[np.float64], Any]:
    """Mean and unbiased covariance (thesis eq. 4.12) of each example's repeated observations.

    ``observations`` is either a list of ``(N_i, n)`` arrays (one per example), or one ``(N, n)`` array
    with ``groups`` giving each row's example (examples then ordered as ``np.unique(groups)``). Every
    example needs ``N_i ≥ 2`` observations. Returns ``(means, cov)`` with ``means`` of shape ``(ℓ, n)``
    and ``cov``, by ``cov_type``:

    - ``"full"``: ``(ℓ, n, n)``, ``Σ_i = Σ_t (x_t - x̄)(x_t - x̄)ᵀ / (N_i - 1)`` (``np.cov`` of the group);
    - ``"diag"``: ``(ℓ, n)``, its diagonal;
    - ``"iso"``: ``(ℓ,)``, ``tr Σ_i / n`` (the Frobenius-nearest ``σ² I``);
    - ``"lowrank"``: a :class:`LowRankCovariance` whose factor ``U_i`` holds the centred observations
      divided by ``√(N_i - 1)`` (zero-padded to the largest ``N_i``), so ``Σ_i = U_i U_iᵀ`` exactly.

    Every ``cov`` can be passed to ``GSUClassifier.fit(X, y, X_cov=cov)``.
    """
    if groups is None:
        if isinstance(observations, np.ndarray):
            raise ValueError("pass groups=... with a 2-D observation array, or a list of per-example arrays")
        parts = [_f64(g, 2, f"observations[{i}]") for i, g in enumerate(observations)]
    else:
        obs = _f64(observations, 2, "observations")
        groups = np.asarray(groups)
        if groups.shape != (obs.shape[0],):
            raise ValueError(f"groups must have one entry per observation ({obs.shape[0]}); got shape {groups.shape}")
        keys, inverse = np.unique(groups, return_inverse=True)
        parts = [np.ascontiguousarray(obs[inverse == k]) for k in range(len(keys))]
    means, cov = _usvm.repeats_to_gaussians(parts, cov_type)
    if cov_type == "lowrank":
        n, r = means.shape[1], max(f.shape[1] for f in cov)
        factors = np.zeros((len(cov), n, r))
        for i, f in enumerate(cov):
            factors[i, :, : f.shape[1]] = f
        cov = LowRankCovariance(factors)
    return means, cov


def translation_covariance(
    images: Any,
    height: int,
    width: int,
    *,
    pixels: float | None = None,
    sigma: float | tuple[float, float] | None = None,
) -> LowRankCovariance:
    """Rank-2 covariances of images under small random translations (thesis appendix C).

    Each row of ``images`` (``(ℓ, height·width)``, row-major) is linearised as ``f(t) ≈ f + J t`` with
    ``J`` the horizontal/vertical central differences (zero outside the border). For
    ``t ~ N(0, diag(σ_h², σ_v²))`` the covariance is ``J Σ_t Jᵀ = U Uᵀ``, ``U = [σ_h ∂f/∂x, σ_v ∂f/∂y]``,
    returned as a :class:`LowRankCovariance` with factors ``(ℓ, n, 2)``. ``pixels=p_t`` sets
    ``σ = p_t/3`` (the thesis' default: 99.7% of the shifts within ``±p_t``); ``sigma`` gives σ, or
    ``(σ_h, σ_v)``, directly.
    """
    if (pixels is None) == (sigma is None):
        raise ValueError("give exactly one of pixels= and sigma=")
    if pixels is not None:
        sh = sv = float(pixels) / 3.0
    elif isinstance(sigma, tuple):
        sh, sv = map(float, sigma)
    else:
        sh = sv = float(sigma)  # type: ignore[arg-type]
    x = _f64(images, 2, "images")
    return LowRankCovariance(_usvm.translation_factors(x, int(height), int(width), sh, sv))


def standard_errors_to_variances(
    means: Any, se: Any, *, rule: str = "paper", fraction: float = 0.8, reference: Any = None
) -> npt.NDArray[np.float64]:
    """Variances of mean columns from their reported standard errors (DESIGN 8).

    With ``s_ij = fraction · range_j · se_ij / max se_j`` (the range of mean column ``j`` and the largest
    standard error taken over the rows ``reference``, e.g. the training split; default all rows):
    ``rule="paper"`` (the WDBC protocol as the thesis states it, "the maximum variance is set to 80% of
    the range"): ``s``; ``rule="range-squared"`` (``"range"`` is its old name): ``s²``, i.e. ``s`` read as
    a standard deviation; ``rule="squared"``: ``se²``.
    """
    m, s = _f64(means, 2, "means"), _f64(se, 2, "se")
    ref = None if reference is None else np.ascontiguousarray(reference, dtype=np.int64)
    if rule == "squared":
        return _usvm.se_to_variances(m, s, ref, None)
    if rule in ("paper", "range-squared", "range"):
        return _usvm.se_to_variances(m, s, ref, float(fraction), rule != "paper")
    raise ValueError(f"rule must be 'paper', 'range-squared' or 'squared'; got {rule!r}")


def welch_pool(
    x: Any,
    *,
    segment_len: int = 256,
    overlap: int | None = None,
    window: str = "hann",
    fs: float = 1.0,
    detrend: bool = True,
    ddof: int = 1,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Per-frequency mean and variance of Welch segment periodograms.

    ``x`` is one series ``(N,)`` or one per row ``(ℓ, N)``. Segments of ``segment_len`` samples overlap by
    ``overlap`` (default half), are detrended (mean removed), windowed (``"hann"``, ``"hamming"``,
    ``"boxcar"``; periodic) and turned into one-sided densities exactly as ``scipy.signal.welch`` does; the
    mean over segments is Welch's estimate and the variance (``ddof``) over segments its uncertainty.
    Returns ``(freqs, means, variances)``; the last two have the shape of ``x`` with the time axis replaced
    by ``segment_len // 2 + 1`` frequencies.
    """
    arr = np.ascontiguousarray(x, dtype=np.float64)
    if arr.ndim not in (1, 2):
        raise ValueError(f"x must be 1- or 2-dimensional; got shape {arr.shape}")
    seg = int(segment_len)
    ov = seg // 2 if overlap is None else int(overlap)
    if seg < 0 or ov < 0 or ddof < 0:
        raise ValueError("segment_len, overlap and ddof must be non-negative")
    f, m, v = _usvm.welch_rows(np.atleast_2d(arr), seg, ov, window, float(fs), bool(detrend), int(ddof))
    if arr.ndim == 1:
        return f, m[0], v[0]
    return f, m, v


def block_pool(
    maps: Any, block_height: int, block_width: int, *, ddof: int = 1
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Mean and variance pooling of feature maps over non-overlapping blocks.

    ``maps`` is one ``(H, W, C)`` map or a batch ``(ℓ, H, W, C)``; ``H`` and ``W`` must be multiples of the
    block size. Returns ``(means, variances)`` of shape ``(H/bh, W/bw, C)`` (or ``(ℓ, H/bh, W/bw, C)``):
    each block's per-channel mean and variance (``ddof``) over its ``bh·bw`` cells.
    """
    arr = np.ascontiguousarray(maps, dtype=np.float64)
    if arr.ndim not in (3, 4):
        raise ValueError(f"maps must have shape (H, W, C) or (n, H, W, C); got {arr.shape}")
    if block_height < 1 or block_width < 1 or ddof < 0:
        raise ValueError("block sizes must be positive and ddof non-negative")
    batch = arr if arr.ndim == 4 else arr[None]
    h, w, c = batch.shape[1:]
    shape = (h // block_height, w // block_width, c)
    means, variances = [], []
    for m in batch:
        mu, var = _usvm.block_pool_map(np.ascontiguousarray(m), int(block_height), int(block_width), int(ddof))
        means.append(mu.reshape(shape))
        variances.append(var.reshape(shape))
    if arr.ndim == 3:
        return means[0], variances[0]
    return np.stack(means), np.stack(variances)
