"""Per-example covariances as the estimators take them: validation into the forms the binding accepts,
row selection, and the margin variances ``wᵀΣ_i w``."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import check_array

from ._checks import FLOATS as _FLOATS

__all__ = ["LowRankCovariance"]


class LowRankCovariance:
    """Per-example covariances ``Σ_i = U_i U_iᵀ + diag(v_i)`` in factored form.

    ``factors`` has shape ``(n, d, r)`` (``U_i`` is ``factors[i]``, ``d × r``) and ``diagonal`` shape
    ``(n, d)`` or is ``None``. Computing ``wᵀΣ_i w = ‖U_iᵀw‖² + Σ_j v_ij w_j²`` costs ``O(d r)``
    instead of ``O(d²)`` for a full matrix: the form for rank-2 image-translation covariances or
    covariances estimated from a few observations.

    It indexes along the examples like an array (``len``, ``shape``, ``cov[idx]``), so scikit-learn's
    metadata routing splits it together with ``X`` in ``cross_val_score`` or ``GridSearchCV``. (A plain
    tuple ``(U, v)`` is also accepted by ``fit`` but cannot be split by cross-validation.)

    >>> import numpy as np
    >>> cov = LowRankCovariance(np.ones((4, 3, 2)), np.full((4, 3), 0.1))
    >>> len(cov), cov.shape, cov[[0, 2]].shape
    (4, (4, 3, 2), (2, 3, 2))
    """

    def __init__(self, factors: Any, diagonal: Any = None) -> None:
        factors = np.asarray(factors)
        if factors.ndim != 3:
            raise ValueError(
                f"low-rank factors must have shape (n, d, r); got an array of shape {factors.shape}"
            )
        if diagonal is not None:
            diagonal = np.asarray(diagonal)
            if diagonal.shape != factors.shape[:2]:
                raise ValueError(
                    f"low-rank diagonal must have shape {factors.shape[:2]} (n, d); got {diagonal.shape}"
                )
        self.factors = factors
        self.diagonal = diagonal

    @property
    def shape(self) -> tuple[int, int, int]:
        return tuple(self.factors.shape)  # type: ignore[return-value]

    def __len__(self) -> int:
        return self.factors.shape[0]

    def __getitem__(self, key: Any) -> LowRankCovariance:
        if isinstance(key, tuple):  # scikit-learn's _safe_indexing asks for cov[idx, ...]
            key = key[0]
        key = np.arange(len(self))[key]
        if key.ndim == 0:
            key = key[None]
        return LowRankCovariance(self.factors[key], None if self.diagonal is None else self.diagonal[key])

    def __repr__(self) -> str:
        n, d, r = self.shape
        return f"LowRankCovariance(n={n}, d={d}, rank={r}, diagonal={self.diagonal is not None})"


def _as_cov(X_cov: Any, n_samples: int, n_features: int, *, name: str = "X_cov") -> Any:
    """Validates covariances of ``n_samples × n_features`` data; returns what the binding accepts:
    ``None``, a float array of shape (n,), (n, d) or (n, d, d), a CSR matrix (n, d), or a pair (U, v)."""
    if X_cov is None:
        return None
    if isinstance(X_cov, LowRankCovariance):
        X_cov = (X_cov.factors, X_cov.diagonal)
    if isinstance(X_cov, tuple):
        if len(X_cov) != 2:
            raise ValueError(f"a low-rank {name} is a pair (U, v); got a tuple of length {len(X_cov)}")
        U, v = X_cov
        U = check_array(U, ensure_2d=False, allow_nd=True, dtype=_FLOATS, input_name=f"{name} factors")
        if U.ndim != 3 or U.shape[:2] != (n_samples, n_features):
            raise ValueError(
                f"low-rank {name} factors must have shape ({n_samples}, {n_features}, r); got {U.shape} "
                "(cross-validation cannot split a (U, v) tuple: pass a LowRankCovariance instead)"
            )
        if v is not None:
            v = check_array(v, dtype=_FLOATS, input_name=f"{name} diagonal")
            if v.shape != (n_samples, n_features):
                raise ValueError(
                    f"low-rank {name} diagonal must have shape ({n_samples}, {n_features}); got {v.shape}"
                )
        return (U, v)
    cov = check_array(
        X_cov,
        accept_sparse="csr",
        ensure_2d=False,
        allow_nd=True,
        dtype=_FLOATS,
        input_name=name,
        ensure_min_samples=0,
    )
    expected = {1: (n_samples,), 2: (n_samples, n_features), 3: (n_samples, n_features, n_features)}
    if cov.ndim not in expected or cov.shape != expected[cov.ndim]:
        raise ValueError(
            f"{name} must have shape ({n_samples},) (isotropic), ({n_samples}, {n_features}) (diagonal "
            f"variances) or ({n_samples}, {n_features}, {n_features}) (full), or be a low-rank pair; "
            f"got {cov.shape}"
        )
    # Negative variances, asymmetric or indefinite matrices: the core's validation says which example.
    return cov


def _take_cov(cov: Any, idx: np.ndarray) -> Any:
    if cov is None:
        return None
    if isinstance(cov, tuple):
        U, v = cov
        return (U[idx], None if v is None else v[idx])
    return cov[idx]


def _margin_variance(cov: Any, coef: np.ndarray) -> np.ndarray:
    """``wₖᵀ Σ_i wₖ`` for every example i (rows) and hyperplane k (columns)."""
    if isinstance(cov, tuple):
        U, v = cov
        out = np.einsum("ndr,kd->nkr", U, coef, optimize=True)
        out = np.einsum("nkr,nkr->nk", out, out)
        if v is not None:
            out += np.asarray(v, dtype=np.float64) @ (coef**2).T
        return out
    if sp.issparse(cov) or cov.ndim == 2:
        return np.asarray(safe_sparse_dot(cov, (coef**2).T, dense_output=True), dtype=np.float64)
    if cov.ndim == 1:
        return np.asarray(cov, dtype=np.float64)[:, None] * (coef**2).sum(axis=1)[None, :]
    return np.einsum("nij,ki,kj->nk", cov, coef, coef, optimize=True)
