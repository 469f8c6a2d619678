"""RSVM-RHHQ: the kernel SVM with the rescaled hinge loss, by half-quadratic rounds (paper 004's baseline)."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ._base import RegistryClassifier, kernel_params
from ._checks import positive_real
from ._kernel_svm import KernelSVMClassifier

__all__ = ["RescaledHingeSVMClassifier"]

_KERNELS = ("linear", "rbf", "poly")
_STARTS = ("svm", "zero", "best")


class RescaledHingeSVMClassifier(RegistryClassifier):
    """Robust kernel SVM of Xu et al. (2016): minimises ``½‖w‖² + Σ_i C·c_i β[1 − exp(−η·h_i)]``,
    ``h_i`` the hinge of example ``i`` and ``β = 1/(1 − e^{−η})``, by half-quadratic rounds — each a
    weighted SVM with costs ``C·c_i·βη·exp(−η h_i)`` — whose objective never increases (``reports_[k]
    ["objective_trace"]``). ``eta → 0`` gives the hinge SVM; a large ``eta`` ignores far outliers.

    Parameters
    ----------
    C : float, default=1.0
    eta : float, default=1.0
        Scale ``η > 0`` of the rescaled hinge.
    kernel : {'linear', 'rbf', 'poly'}, default='rbf'
    gamma : {'scale', 'auto'} or float, default='scale'
        As :class:`KernelSVMClassifier`.
    degree, coef0 : polynomial kernel parameters.
    tol : float, default=1e-6
        Stop when a round lowers the objective by at most ``tol`` relative.
    svm_tol : float, default=1e-6
        Each weighted SVM's bound on the SMO's KKT violation.
    max_rounds : int, default=50
        Weighted SVMs solved, the start's included.
    start : {'svm', 'zero', 'best'}, default='svm'
        Where the half-quadratic rounds start: the C-SVM (the ``eta → 0`` limit, as the half-quadratic
        literature starts), ``f = 0`` (whose first costs ``C·η/(e^η − 1)`` are nearly zero for a large
        ``eta``, so the rounds can stay at the constant classifier), or both, keeping the lower objective.
        A fit that predicts one class on its training set warns (``DegenerateFitWarning``).
    n_jobs : int or None, default=None
        Threads of the fit (a pool of its own, kept for the next fit from the same thread).
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
    classes_, support_vectors_, dual_coef_, intercept_, objective_ (final objectives), n_iter_,
    converged_, gamma_.

    >>> import numpy as np
    >>> from usvm import RescaledHingeSVMClassifier
    >>> X = np.array([[0.0, 0.0], [0.1, 0.3], [2.0, 2.0], [2.2, 1.9]])
    >>> RescaledHingeSVMClassifier(C=10.0, gamma=0.5).fit(X, [0, 0, 1, 1]).predict(X).tolist()
    [0, 0, 1, 1]
    """

    def __init__(
        self,
        C: float = 1.0,
        *,
        eta: float = 1.0,
        kernel: str = "rbf",
        gamma: Any = "scale",
        degree: int = 3,
        coef0: float = 0.0,
        tol: float = 1e-6,
        svm_tol: float = 1e-6,
        max_rounds: int = 50,
        start: str = "svm",
        n_jobs: int | None = None,
        verbose: int = 0,
        callback: Any = None,
    ) -> None:
        self.C = C
        self.eta = eta
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.tol = tol
        self.svm_tol = svm_tol
        self.max_rounds = max_rounds
        self.start = start
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.callback = callback

    def _check_params(self) -> None:
        for name in ("C", "eta", "tol", "svm_tol"):
            positive_real(name, getattr(self, name))
        if self.kernel not in _KERNELS:
            raise ValueError(f"kernel must be one of {_KERNELS}; got {self.kernel!r}")
        if self.start not in _STARTS:
            raise ValueError(f"start must be one of {_STARTS}; got {self.start!r}")
        if isinstance(self.gamma, str):
            if self.gamma not in ("scale", "auto"):
                raise ValueError(f"gamma must be 'scale', 'auto' or a positive float; got {self.gamma!r}")
        else:
            positive_real("gamma", self.gamma)
        for name in ("degree", "max_rounds"):
            v = getattr(self, name)
            if not isinstance(v, numbers.Integral) or isinstance(v, bool) or v < 1:
                raise ValueError(f"{name} must be a positive integer; got {v!r}")

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> RescaledHingeSVMClassifier:
        """Fits the machine(s); ``sample_weight`` scales each example's cost."""
        return self._fit(X, y, sample_weight=sample_weight)

    def _registry_params(
        self, X: Any, cov: Any, sample_weight: np.ndarray | None, star: Any
    ) -> dict[str, Any]:
        gamma = None if self.kernel == "linear" else KernelSVMClassifier._gamma(self, X, sample_weight)  # type: ignore[arg-type]
        return {
            "method": "rsvm-rhhq",
            "regularization": {"C": float(self.C)},
            "kernel": kernel_params(self.kernel, gamma, self.degree, self.coef0),
            "eta": float(self.eta),
            "tol": float(self.tol),
            "svm_tol": float(self.svm_tol),
            "max_rounds": int(self.max_rounds),
            "start": self.start,
        }

    def _fitted(self, X: Any, y_enc: np.ndarray, cov: Any, sw: np.ndarray | None) -> None:
        self.gamma_ = None if self.kernel == "linear" else KernelSVMClassifier._gamma(self, X, sw)  # type: ignore[arg-type]
        self.support_vectors_ = self.model_.support_vectors
        self.dual_coef_ = self.model_.coef
        self.intercept_ = self.model_.intercept
        self.n_iter_ = np.array([r["n_iter"] for r in self.reports_], dtype=np.intp)
