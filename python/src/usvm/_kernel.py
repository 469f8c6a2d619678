"""KernelGSUClassifier: KSVM-iGSU and RD-KSVM-iGSU (thesis ch. 4) over the usvm Rust core."""

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

from ._checks import checked_sample_weight, encode_classes, positive_real
from . import _usvm
from ._decision import DecisionMixin
from ._checks import FLOATS as _FLOATS
from ._checks import seed_of as _seed
from ._covariance import _as_cov

__all__ = ["KernelGSUClassifier"]

_KERNELS = ("rbf", "linear", "poly")
_SOLVERS = ("exact", "sgd")
_APPROXIMATIONS = ("exact", "nystroem", "fourier")


class KernelGSUClassifier(DecisionMixin, ClassifierMixin, BaseEstimator):
    """Kernel SVM for examples known up to isotropic Gaussian noise (KSVM-iGSU, Tzelepis thesis ch. 4).

    Example ``i`` is ``N(x_i, σ_i² I)``; the decision function ``f(x) = Σ_j α_j k(x, x_j) + b`` minimises

        J(α, b) = λ/2 αᵀKα + (1/ℓ) Σ c_i L(d_i, s_i),  d_i = 1 - y_i(K_iᵀα + b),  s_i² = σ_i² αᵀKα,

    ``L`` the expected hinge loss, ``c_i`` the relevance degrees (``sample_weight``: RD-KSVM-iGSU). The
    variances come from ``X_var`` (shape (n,) for ``σ_i²``, or (n, d) per-feature variances, whose mean
    is used) or from ``X_cov`` in any form :class:`GSUClassifier` accepts (``σ_i² = tr Σ_i / d``, the
    nearest isotropic covariance); neither means ``σ_i = 0``, the plain kernel SVM.

    Parameters
    ----------
    lam : float, default=0.01
        ``λ``; ignored when ``C`` is given (``λ = 1/(C ℓ)``).
    C : float or None, default=None
    kernel : {"rbf", "linear", "poly"}, default="rbf"
        ``exp(-γ‖x - z‖²)``, ``xᵀz``, ``(γ xᵀz + coef0)^degree``.
    gamma : float or None, default=None
        ``γ``; ``None`` means ``1 / n_features``.
    degree : int, default=3
    coef0 : float, default=0.0
    solver : {"exact", "sgd"}, default="exact"
        Exact (Newton on a pivoted-Cholesky factor of ``K``) or the thesis' mini-batch SGD (Algorithm 2).
    approximation : {"exact", "nystroem", "fourier"}, default="exact"
        The exact Gram matrix (up to a few thousand examples), Nyström features on ``n_components``
        landmarks (any kernel, large data), or random Fourier features (RBF only).
    n_components : int, default=500
    tol, max_iter : exact solver stopping rule ``‖∇J‖ ≤ tol ‖∇J(0)‖`` and iteration cap.
    iterations, batch : SGD iterations ``T`` and mini-batch size ``k``.
    fit_intercept : bool, default=True
    random_state : int, RandomState or None, default=0
        Seeds the SGD batches, the Nyström landmarks and the Fourier frequencies.

    To have ``cross_val_score`` or ``GridSearchCV`` split the variances with ``X``, enable metadata
    routing and request them: ``KernelGSUClassifier().set_fit_request(X_var=True)``.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 2))
    >>> y = (np.hypot(X[:, 0], X[:, 1]) > 1.1).astype(int)
    >>> clf = KernelGSUClassifier(lam=1e-3, gamma=1.0).fit(X, y, X_var=np.full(60, 0.01))
    >>> bool(clf.score(X, y) > 0.9)
    True
    """

    def __init__(
        self,
        *,
        lam: float = 0.01,
        C: float | None = None,
        kernel: str = "rbf",
        gamma: float | None = None,
        degree: int = 3,
        coef0: float = 0.0,
        solver: str = "exact",
        approximation: str = "exact",
        n_components: int = 500,
        tol: float = 1e-6,
        max_iter: int = 1000,
        iterations: int = 1000,
        batch: int = 100,
        fit_intercept: bool = True,
        random_state: Any = 0,
    ) -> None:
        self.lam = lam
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.solver = solver
        self.approximation = approximation
        self.n_components = n_components
        self.tol = tol
        self.max_iter = max_iter
        self.iterations = iterations
        self.batch = batch
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _check_params(self) -> None:
        positive_real("lam", self.lam)
        positive_real("C", self.C, allow_none=True)
        positive_real("gamma", self.gamma, allow_none=True)
        positive_real("tol", self.tol)
        for name in ("degree", "n_components", "max_iter", "iterations", "batch"):
            value = getattr(self, name)
            if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive integer; got {value!r}")
        if not isinstance(self.coef0, numbers.Real) or not math.isfinite(self.coef0):
            raise ValueError(f"coef0 must be a finite number; got {self.coef0!r}")
        for name, allowed in (("kernel", _KERNELS), ("solver", _SOLVERS), ("approximation", _APPROXIMATIONS)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}; got {getattr(self, name)!r}")
        if self.approximation == "fourier" and self.kernel != "rbf":
            raise ValueError("approximation='fourier' approximates the RBF kernel only")

    def fit(
        self, X: Any, y: Any, *, X_var: Any = None, X_cov: Any = None, sample_weight: Any = None
    ) -> KernelGSUClassifier:
        """Fits the kernel classifier(s) (one-vs-rest for more than two classes).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        X_var : array-like of shape (n_samples,) or (n_samples, n_features), default=None
            Isotropic variances ``σ_i²``, or per-feature variances (their mean is ``σ_i²``).
        X_cov : covariances as for :meth:`GSUClassifier.fit`, default=None
            Alternative to ``X_var``: ``σ_i² = tr Σ_i / n_features``.
        sample_weight : array-like of shape (n_samples,), default=None
            Relevance degrees ``c_i ≥ 0``.
        """
        self._check_params()
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=_FLOATS, order=None, ensure_min_samples=1)
        check_classification_targets(y)
        n, d = X.shape
        classes, y_enc = encode_classes(self, y)
        if X_var is not None and X_cov is not None:
            raise ValueError("give X_var or X_cov, not both")
        cov = _as_cov(X_var, n, d, name="X_var") if X_var is not None else _as_cov(X_cov, n, d)
        if X_var is not None and getattr(cov, "ndim", 1) == 3:
            raise ValueError("X_var holds variances: shape (n_samples,) or (n_samples, n_features)")
        sw = checked_sample_weight(sample_weight, n, y_enc)
        if self.C is not None:
            lam = 1.0 / (self.C * n)
        else:
            lam = float(self.lam)
            if sw is not None:  # weighted mean: (1/Σc) Σ c_i L_i
                sw = sw * (n / sw.sum())
        gamma = 1.0 / d if self.gamma is None else float(self.gamma)
        result = _usvm.fit_kernel_igsu(
            X,
            np.asarray(y_enc, dtype=np.int64),
            cov=cov,
            sample_weight=sw,
            kernel=self.kernel,
            gamma=gamma,
            degree=int(self.degree),
            coef0=float(self.coef0),
            lam=lam,
            fit_intercept=bool(self.fit_intercept),
            solver=self.solver,
            approximation=self.approximation,
            n_components=int(self.n_components),
            tol=float(self.tol),
            max_iter=int(self.max_iter),
            iterations=int(self.iterations),
            batch=int(self.batch),
            seed=_seed(self.random_state),
        )
        self.classes_ = classes
        self.model_ = result["model"]
        self.lam_ = lam
        self.gamma_ = gamma
        self.n_iter_ = int(max(result["n_iter"]))
        self.objective_ = np.asarray(result["objective"], dtype=np.float64)
        self.converged_ = np.asarray(result["converged"], dtype=bool)
        self.gradient_norm_ = np.asarray(result["gradient_norm"], dtype=np.float64)
        if self.solver == "exact" and not self.converged_.all():
            warnings.warn(
                f"the exact solver stopped after {self.n_iter_} iterations with "
                f"‖∇J‖ = {self.gradient_norm_.max():.3g} above tol={self.tol:g} × ‖∇J(0)‖",
                ConvergenceWarning,
                stacklevel=2,
            )
        return self

    def _scores(self, X: Any) -> np.ndarray:
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=_FLOATS, order=None, reset=False)
        return np.asarray(_usvm.model_decision_function(self.model_, X))
