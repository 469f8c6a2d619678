"""The uncertainty-aware squared-hinge classification layer of Tzelepis' thesis, chapter 5."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import RegistryClassifier
from ._checks import positive_int, positive_real

__all__ = ["GSUSquaredHingeClassifier"]

_LOSSES = ("expected", "thesis")
_SOLVERS = ("lbfgs", "newton", "sgd")


class GSUSquaredHingeClassifier(RegistryClassifier):
    r"""Linear one-vs-rest squared-hinge classifier for Gaussian inputs (thesis ch. 5, DESIGN 2.4).

    Each example is ``X_i ~ N(x_i, Σ_i)`` (typically the mean and variance pooled over a feature map).
    For class ``j`` with labels ``y_ij = ±1`` the margin violation ``D = 1 - y_ij(w_jᵀX_i + b_j)`` is
    Gaussian with mean ``μ = 1 - y_ij(w_jᵀx_i + b_j)`` and variance ``σ² = w_jᵀΣ_i w_j``; each hyperplane
    minimises

    .. math::

        J_j(w, b) = \frac{λ}{2}\|w\|^2 + \frac{1}{\sum_i c_i} \sum_i c_i\, L(μ_{ij}, σ_{ij})

    with ``loss="expected"``: the exact, convex ``E[max(0, D)²] = (μ² + σ²)Φ(μ/σ) + μσφ(μ/σ)``, or
    ``loss="thesis"``: eq. (5.11) ``Φ(μ/σ) μ²`` (the squared mean violation weighted by the probability of
    misclassification; non-convex). Both equal the squared hinge ``max(0, μ)²`` when ``Σ_i = 0``, so without
    ``X_cov`` this is LIBLINEAR's L2-loss SVM (``-s 2``) with an unregularised bias. Two classes give one
    hyperplane (``f > 0`` means ``classes_[1]``), more one per class (prediction by the largest ``f_j``).

    Parameters
    ----------
    lam : float, default=0.01
        Regularisation λ > 0. Ignored when ``C`` is given.
    C : float or None, default=None
        If given, ``λ = 1 / (C · n_samples)`` (the C-form ``½‖w‖² + C Σ c_i L_i``).
    loss : {"expected", "thesis"}, default="expected"
    solver : {"lbfgs", "newton", "sgd"}, default="lbfgs"
        ``"lbfgs"``: L-BFGS with a strong-Wolfe line search, stopping at ``‖∇J‖ ≤ tol · ‖∇J(0)‖``; its
        objective trace (``objective_trace_``) is monotone, also for the non-convex thesis loss (strictly
        decreasing until the decrease falls below round-off, within 1e-12 relative after that).
        ``"newton"``: Newton-CG with an exact line search (``loss="expected"`` only). ``"sgd"``: mini-batch
        SGD (``iterations`` steps of ``batch`` examples) with suffix averaging, seeded by ``random_state``.
    tol : float, default=1e-6
    max_iter : int, default=1000
    iterations : int, default=1000
    batch : int, default=100
    fit_intercept : bool, default=True
    random_state : int, RandomState instance or None, default=0

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

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Read-only: a view of the fitted model's own coefficients (``coef_.copy()`` to change them).
    intercept_ : ndarray of shape (1,) or (n_classes,)
    classes_ : ndarray of shape (n_classes,)
    n_iter_ : int
    objective_ : ndarray of shape (n_problems,)
    objective_trace_ : list of ndarray
        The objective after every solver iteration, per binary problem (L-BFGS only; empty for SGD).
    converged_ : ndarray of bool, shape (n_problems,)
    gradient_norm_ : ndarray of shape (n_problems,)
    lam_ : float
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from usvm import GSUSquaredHingeClassifier
    >>> rng = np.random.default_rng(0)
    >>> y = np.arange(90) % 3
    >>> X = rng.normal(0, 1, (90, 4)) + 2.0 * np.eye(3, 4)[y]
    >>> V = rng.uniform(0.1, 0.5, X.shape)   # per-feature variances (diagonal Σ_i)
    >>> clf = GSUSquaredHingeClassifier(loss="thesis", lam=0.01).fit(X, y, X_cov=V)
    >>> clf.coef_.shape, bool(clf.score(X, y) > 0.8)
    ((3, 4), True)
    >>> all(bool(t[-1] < t[0]) and bool(np.all(np.diff(t) <= 1e-12 * np.abs(t[:-1]))) for t in clf.objective_trace_)
    True
    """

    def __init__(
        self,
        *,
        lam: float = 0.01,
        C: float | None = None,
        loss: str = "expected",
        solver: str = "lbfgs",
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
        self.loss = loss
        self.solver = solver
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
        positive_real("tol", self.tol)
        for name in ("max_iter", "iterations", "batch"):
            positive_int(name, getattr(self, name))
        if self.loss not in _LOSSES:
            raise ValueError(f"loss must be one of {_LOSSES}; got {self.loss!r}")
        if self.solver not in _SOLVERS:
            raise ValueError(f"solver must be one of {_SOLVERS}; got {self.solver!r}")
        if self.solver == "newton" and self.loss == "thesis":
            raise ValueError("solver='newton' needs the convex loss='expected'; use 'lbfgs' or 'sgd'")

    def fit(
        self, X: Any, y: Any, *, X_cov: Any = None, sample_weight: Any = None
    ) -> GSUSquaredHingeClassifier:
        """Fits the hyperplane(s).

        ``X`` holds the example means (dense or CSR), ``X_cov`` their covariances in any form
        :class:`GSUClassifier` accepts ((n,) isotropic, (n, d) diagonal or CSR, (n, d, d) full,
        :class:`LowRankCovariance`), ``None`` for Σ = 0; ``sample_weight`` non-negative weights ``c_i``.
        """
        return self._fit(X, y, X_cov=X_cov, sample_weight=sample_weight)

    def _registry_params(
        self, X: Any, cov: Any, sample_weight: np.ndarray | None, star: Any
    ) -> dict[str, Any]:
        if self.solver == "sgd":
            solver: dict[str, Any] = {
                "name": "sgd",
                "iterations": int(self.iterations),
                "batch": int(self.batch),
            }
        else:
            name = "exact" if self.solver == "lbfgs" else "newton"
            solver = {"name": name, "tol": float(self.tol), "max_iter": int(self.max_iter)}
        return {
            "method": "sqhinge-gsu",
            "regularization": {"lambda": float(self.lam)} if self.C is None else {"C": float(self.C)},
            "fit_intercept": bool(self.fit_intercept),
            "loss": self.loss,
            "solver": solver,
        }

    def _fitted(self, X: Any, y_enc: np.ndarray, cov: Any, sw: np.ndarray | None) -> None:
        self.coef_ = self.model_.coef
        self.intercept_ = self.model_.intercept
        self.objective_trace_ = [np.asarray(r["objective_trace"], dtype=np.float64) for r in self.reports_]
        self.gradient_norm_ = np.array([r["gradient_norm"] for r in self.reports_], dtype=np.float64)
        self.lam_ = float(self.lam) if self.C is None else 1.0 / (self.C * X.shape[0])
