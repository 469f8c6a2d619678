"""KernelGSUClassifier: KSVM-iGSU and RD-KSVM-iGSU (thesis ch. 4) over the usvm Rust core."""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from ._base import RegistryClassifier, kernel_params
from ._checks import positive_int, positive_real

__all__ = ["KernelGSUClassifier"]

_KERNELS = ("rbf", "linear", "poly")
_SOLVERS = ("exact", "sgd")
_APPROXIMATIONS = ("exact", "nystroem", "fourier")


class KernelGSUClassifier(RegistryClassifier):
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
    n_jobs : int or None, default=None
        Threads of the fit (a pool of its own, kept for the next fit from the same thread). ``None``:
        ``OMP_NUM_THREADS`` when set (joblib's process workers set it to their share of the cores), else every
        core; ``-1``: every core.
    verbose : int, default=0
        0: silent; 1: a progress bar (tqdm, when installed and standard error is a terminal) or a line on
        standard error about once a second, with the iteration, the objective and the stopping residual.
    callback : callable or None, default=None
        Called with a dict per solver event: ``iteration``, ``objective``, ``residual``, ``quantity`` (its
        name: ``"gradient_norm"``, ``"kkt_violation"``, ``"duality_gap"``, ``"relative_decrease"``, or
        ``"final"`` for each binary problem's last event, which states its report), ``problem`` and
        ``n_problems`` (one-vs-rest). An exception it raises stops the fit and is raised by ``fit``.

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
        n_jobs: int | None = None,
        verbose: int = 0,
        callback: Any = None,
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
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.callback = callback

    def _check_params(self) -> None:
        positive_real("lam", self.lam)
        positive_real("C", self.C, allow_none=True)
        positive_real("gamma", self.gamma, allow_none=True)
        positive_real("tol", self.tol)
        for name in ("degree", "n_components", "max_iter", "iterations", "batch"):
            positive_int(name, getattr(self, name))
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
        if X_var is not None and X_cov is not None:
            raise ValueError("give X_var or X_cov, not both")
        if X_var is not None:
            X_var = np.asarray(X_var)
            if X_var.ndim == 3:
                raise ValueError("X_var holds variances: shape (n_samples,) or (n_samples, n_features)")
        if X_var is not None:
            return self._fit(X, y, X_cov=X_var, sample_weight=sample_weight, cov_name="X_var")
        return self._fit(X, y, X_cov=X_cov, sample_weight=sample_weight)

    def _registry_params(
        self, X: Any, cov: Any, sample_weight: np.ndarray | None, star: Any
    ) -> dict[str, Any]:
        kernel = kernel_params(self.kernel, self._gamma(X), self.degree, self.coef0)
        if self.solver == "exact":
            solver: dict[str, Any] = {"name": "exact", "tol": float(self.tol), "max_iter": int(self.max_iter)}
        else:
            solver = {"name": "sgd", "iterations": int(self.iterations), "batch": int(self.batch)}
        approximation: dict[str, Any] = {"name": self.approximation}
        if self.approximation != "exact":
            approximation["components"] = int(self.n_components)
        return {
            "method": "ksvm-igsu",
            "regularization": {"lambda": float(self.lam)} if self.C is None else {"C": float(self.C)},
            "fit_intercept": bool(self.fit_intercept),
            "kernel": kernel,
            "solver": solver,
            "approximation": approximation,
        }

    def _gamma(self, X: Any) -> float:
        return 1.0 / X.shape[1] if self.gamma is None else float(self.gamma)

    def _fitted(self, X: Any, y_enc: np.ndarray, cov: Any, sw: np.ndarray | None) -> None:
        self.lam_ = float(self.lam) if self.C is None else 1.0 / (self.C * X.shape[0])
        self.gamma_ = self._gamma(X)
        self.gradient_norm_ = np.array([r["gradient_norm"] for r in self.reports_], dtype=np.float64)
