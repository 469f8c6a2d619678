"""TSVC — total support vector classification for bounded input uncertainty (Bi & Zhang)."""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from ._base import RegistryClassifier, kernel_params
from ._checks import non_negative_real, positive_real

__all__ = ["TSVCClassifier"]


class TSVCClassifier(RegistryClassifier):
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
        ``'socp'``: the cone programme's relaxation, which certifies the global minimum when its norm
        constraint is active (nearly separable data). When it does not certify, the alternating rounds
        run too and the solution of lower objective (eq. 7) is kept; the fit raises a
        ``ConvergenceWarning`` that says which solution was taken (``reports_[k]["fallback"]``).
    kernel : {'linear', 'rbf', 'poly'}, default='linear'
    gamma : float, default=1.0
    degree : int, default=3
    coef0 : float, default=0.0
    max_rounds : int, default=100
    tol : float, default=1e-6
        Stop the rounds when the objective decreases by at most ``tol`` relatively.
    fit_intercept : bool, default=True

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
    classes_, coef_ and intercept_ (linear), support_vectors_ (the shifted points), dual_coef_ and
    intercept_ (kernel), objective_, objective_trace_, n_rounds_, converged_, gamma_bound_ and
    duality_gap_ (socp; the relative gap ``(J - D)/max(1, |J|)`` of eq. 8 against its dual eq. 9).

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
        n_jobs: int | None = None,
        verbose: int = 0,
        callback: Any = None,
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
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.callback = callback

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
        if (
            not isinstance(self.max_rounds, numbers.Integral)
            or isinstance(self.max_rounds, bool)
            or self.max_rounds < 0
        ):
            raise ValueError(f"max_rounds must be a non-negative integer; got {self.max_rounds!r}")

    def fit(self, X: Any, y: Any, sample_weight: Any = None, delta: Any = None) -> TSVCClassifier:
        """Fits TSVC. ``delta`` (optional) gives this fit's per-example bounds instead of ``self.delta``."""
        return self._fit(
            X,
            y,
            sample_weight=sample_weight,
            fit_params={"delta": _delta(delta)} if delta is not None else None,
        )

    def _registry_params(
        self, X: Any, cov: Any, sample_weight: np.ndarray | None, star: Any
    ) -> dict[str, Any]:
        kernel = kernel_params(self.kernel, float(self.gamma), self.degree, self.coef0)
        form: dict[str, Any] = {"name": self.form}
        if self.form == "alternating":
            form.update(max_rounds=int(self.max_rounds), tol=float(self.tol))
        return {
            "method": "tsvc",
            "regularization": {"C": float(self.C)},
            "kernel": kernel,
            "delta": _delta(self.delta),
            "fit_intercept": bool(self.fit_intercept),
            "form": form,
        }

    def _fitted(self, X: Any, y_enc: np.ndarray, cov: Any, sw: np.ndarray | None) -> None:
        if self.model_.kind == "linear":
            self.coef_ = self.model_.coef
        else:
            self.support_vectors_ = self.model_.support_vectors
            self.dual_coef_ = self.model_.coef
        self.intercept_ = self.model_.intercept
        self.objective_trace_ = [np.asarray(r["objective_trace"], dtype=np.float64) for r in self.reports_]
        self.n_rounds_ = np.array([r["rounds"] for r in self.reports_], dtype=np.intp)
        self.gamma_bound_ = [r["norm_bound"] for r in self.reports_]
        self.duality_gap_ = [r["duality_gap"] for r in self.reports_]


def _delta(delta: Any) -> Any:
    """The bounds as the registry takes them: one number, or a list with one per example (checked by the
    core: finite, non-negative, one per training example)."""
    d = np.asarray(delta, dtype=np.float64)
    if d.ndim == 0:
        return float(d)
    if d.ndim != 1:
        raise ValueError(f"delta must be a number or have shape (n_samples,); got {d.shape}")
    return d.tolist()
