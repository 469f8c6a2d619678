"""TSVC — total support vector classification for bounded input uncertainty (Bi & Zhang)."""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ._checks import checked_sample_weight, encode_classes, non_negative_real, positive_real
from . import _usvm
from ._decision import DecisionMixin

__all__ = ["TSVCClassifier"]

_FLOATS = [np.float64, np.float32]


class TSVCClassifier(DecisionMixin, ClassifierMixin, BaseEstimator):
    """Total SVC: every input may move within a ball ``‖Δx_i‖ ≤ δ_i`` to where it fits best.

    Minimises ``½‖w‖² + C Σ_i c_i max(0, 1 - y_i(wᵀx_i + b) - δ_i‖w‖)`` (eq. 7; ``c_i`` the
    ``sample_weight``), by alternating a hinge SVM on the shifted points ``x_i + y_i δ_i w/‖w‖`` with the
    optimal shifts (Algorithm 1; monotone objective), or, for the linear kernel, as a second-order cone
    programme (``form='socp'``, Clarabel) with the dual's duality gap. With ``kernel='rbf'`` or ``'poly'``
    the shifts follow the first-order Taylor expansion of the kernel (section 5.2).

    Parameters
    ----------
    C : float, default=1.0
    delta : float or array of shape (n_samples,), default=0.0
        The bounds: one value for every example, or one per training example (``fit(..., delta=...)``
        overrides it for that fit).
    form : {'alternating', 'socp'}, default='alternating'
    kernel : {'linear', 'rbf', 'poly'}, default='linear'
    gamma : float, default=1.0
    degree : int, default=3
    coef0 : float, default=0.0
    max_rounds : int, default=100
    tol : float, default=1e-6
        Stop the rounds when the objective decreases by at most ``tol`` relatively.
    fit_intercept : bool, default=True

    Attributes
    ----------
    classes_, coef_ and intercept_ (linear), support_vectors_ (the shifted points), dual_coef_ and
    intercept_ (kernel), objective_, objective_trace_, n_rounds_, converged_, gamma_bound_ and
    duality_gap_ (socp).

    >>> import numpy as np
    >>> from usvm import TSVCClassifier
    >>> X = np.array([[1.0, 2.0], [2.0, 3.0], [-1.0, -1.5], [-2.0, -2.0]])
    >>> clf = TSVCClassifier(C=1.0, delta=0.2).fit(X, [1, 1, 0, 0])
    >>> clf.predict(X).tolist()
    [1, 1, 0, 0]
    """

    def __init__(
        self,
        C: float = 1.0,
        *,
        delta: Any = 0.0,
        form: str = "alternating",
        kernel: str = "linear",
        gamma: float = 1.0,
        degree: int = 3,
        coef0: float = 0.0,
        max_rounds: int = 100,
        tol: float = 1e-6,
        fit_intercept: bool = True,
    ) -> None:
        self.C = C
        self.delta = delta
        self.form = form
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.max_rounds = max_rounds
        self.tol = tol
        self.fit_intercept = fit_intercept

    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _check_params(self) -> None:
        positive_real("C", self.C)
        non_negative_real("tol", self.tol)
        if self.form not in ("alternating", "socp"):
            raise ValueError(f"form must be 'alternating' or 'socp'; got {self.form!r}")
        if self.kernel not in ("linear", "rbf", "poly"):
            raise ValueError(f"kernel must be 'linear', 'rbf' or 'poly'; got {self.kernel!r}")
        if self.form == "socp" and self.kernel != "linear":
            raise ValueError("form='socp' needs kernel='linear'")
        positive_real("gamma", self.gamma)
        if not isinstance(self.degree, numbers.Integral) or isinstance(self.degree, bool) or self.degree < 1:
            raise ValueError(f"degree must be a positive integer; got {self.degree!r}")
        if not isinstance(self.coef0, numbers.Real) or not math.isfinite(self.coef0):
            raise ValueError(f"coef0 must be a finite number; got {self.coef0!r}")
        if not isinstance(self.max_rounds, numbers.Integral) or isinstance(self.max_rounds, bool) or self.max_rounds < 0:
            raise ValueError(f"max_rounds must be a non-negative integer; got {self.max_rounds!r}")

    def _deltas(self, delta: Any, n: int) -> list[float]:
        d = np.asarray(delta, dtype=np.float64)
        if d.ndim == 0:
            d = d.reshape(1)
        elif d.shape != (n,):
            raise ValueError(f"delta must be a number or have shape ({n},); got {d.shape}")
        if not np.all(np.isfinite(d)) or np.any(d < 0):
            raise ValueError("delta must be finite and non-negative")
        if n == 1 and d.size == 1:
            return [float(d[0])]
        return d.tolist()

    def fit(self, X: Any, y: Any, sample_weight: Any = None, delta: Any = None) -> TSVCClassifier:
        """Fits TSVC. ``delta`` (optional) gives this fit's per-example bounds instead of ``self.delta``."""
        self._check_params()
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=_FLOATS, order="C")
        check_classification_targets(y)
        n = X.shape[0]
        classes, y_enc = encode_classes(self, y)
        deltas = self._deltas(self.delta if delta is None else delta, n)
        sw = checked_sample_weight(sample_weight, n, y_enc)
        result = _usvm.fit_tsvc(
            X,
            y_enc.astype(np.int64),
            delta=deltas,
            sample_weight=sw,
            kernel=self.kernel,
            gamma=float(self.gamma),
            degree=int(self.degree),
            coef0=float(self.coef0),
            c=float(self.C),
            form=self.form,
            max_rounds=int(self.max_rounds),
            tol=float(self.tol),
            fit_intercept=bool(self.fit_intercept),
        )
        self.classes_ = classes
        if self.kernel == "linear":
            self.coef_ = result["coef"]
            self.intercept_ = result["intercept"]
        else:
            self.support_vectors_ = result["support_vectors"]
            self.dual_coef_ = result["dual_coef"]
            self.intercept_ = result["intercept"]
        self.objective_ = np.asarray(result["objective"], dtype=np.float64)
        self.objective_trace_ = [np.asarray(t, dtype=np.float64) for t in result["objective_trace"]]
        self.n_rounds_ = np.asarray(result["rounds"], dtype=np.intp)
        self.converged_ = np.asarray(result["converged"], dtype=bool)
        self.gamma_bound_ = result["gamma"]
        self.duality_gap_ = result["duality_gap"]
        if not self.converged_.all():
            warnings.warn(
                "TSVC did not meet its stopping rule (max_rounds reached or the solver did not converge)",
                ConvergenceWarning,
                stacklevel=2,
            )
        return self

    def _scores(self, X: Any) -> np.ndarray:
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=_FLOATS, order="C", reset=False)
        if self.kernel == "linear":
            return np.asarray(X @ self.coef_.T) + self.intercept_
        if self.support_vectors_.shape[0] == 0:
            return np.tile(self.intercept_, (X.shape[0], 1))
        return _usvm.kernel_decision_function(
            X,
            np.ascontiguousarray(self.support_vectors_),
            np.ascontiguousarray(self.dual_coef_),
            np.asarray(self.intercept_, np.float64),
            kernel=self.kernel,
            gamma=float(self.gamma),
            degree=int(self.degree),
            coef0=float(self.coef0),
        )
