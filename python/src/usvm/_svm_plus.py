"""SVM+, R-SVM+ and L2-SVM+: learning using privileged information (DESIGN 2.6, paper 004)."""

from __future__ import annotations

import json
import math
import numbers
from typing import Any

import numpy as np

from . import _usvm
from ._base import RegistryClassifier, kernel_params
from ._checks import positive_real

_KERNELS = ("rbf", "linear", "poly")


class SVMPlusClassifier(RegistryClassifier):
    """SVM+ (Vapnik's learning using privileged information): the slacks are modelled by a correcting
    function ``ξ_i = w*ᵀφ*(x*_i) + b*`` of privileged features ``X_star`` seen at training time only.

    The decision function ``f(x) = Σ α_i y_i k(x_i, x) + b`` needs only ``X``. Pass ``X_star`` (one row per
    training example) to ``fit``. ``X_star`` is metadata that scikit-learn routes: to have ``Pipeline``,
    ``GridSearchCV`` or ``cross_val_score`` pass it on (and split it with ``X``)::

        import sklearn
        sklearn.set_config(enable_metadata_routing=True)
        clf = SVMPlusClassifier().set_fit_request(X_star=True)
        GridSearchCV(clf, {"rho": [0.1, 1.0]}).fit(X, y, X_star=X_star)

    Fitted without ``X_star`` (as scikit-learn's estimator checks and tools that do not route it do) the
    estimator is the plain kernel SVM with its ``C``, kernel and ``tol`` (:class:`usvm.KernelSVMClassifier`
    with those values, fitted by the same core solver), and warns with
    :class:`usvm.NoPrivilegedInformationWarning`.

    Parameters
    ----------
    C : float, default=1.0
    rho : float, default=1.0
        Weight of ``‖w*‖²``; ``rho → 0`` gives the plain C-SVM.
    kernel : {'rbf', 'linear', 'poly'}, default='rbf'
    gamma : float or None, default=None
        γ of ``k``; None: ``1/D`` (rbf; ``D`` the mean squared distance between training rows) or
        ``1/n_features`` (poly).
    degree, coef0 : polynomial kernel parameters.
    gamma_star : float or None, default=None
        γ of the Gaussian ``k*`` on ``X_star``; None: ``1/D*``.
    tol : float, default=1e-6
        Bound on the SMO's KKT violation.

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
    classes_, support_vectors_, dual_coef_ (K × n_sv), intercept_ (K,), gamma_, gamma_star_, objective_
    (dual objectives, maximised), n_iter_, converged_. Fitted without ``X_star``: as
    :class:`usvm.KernelSVMClassifier`'s (``objective_`` the minimised ``½αᵀQα − 1ᵀα``, ``support_`` the
    support vectors' training indices), ``gamma_star_`` None.

    >>> import numpy as np
    >>> from usvm import SVMPlusClassifier
    >>> X = np.array([[0.0, 0.0], [0.1, 0.3], [2.0, 2.0], [2.2, 1.9]])
    >>> clf = SVMPlusClassifier(C=10.0).fit(X, [0, 0, 1, 1], X_star=[[0.0], [0.1], [1.0], [0.9]])
    >>> clf.predict(X).tolist()
    [0, 0, 1, 1]
    """

    _method = "svmplus"
    _sparse = False

    def __init__(
        self,
        C: float = 1.0,
        *,
        rho: float = 1.0,
        kernel: str = "rbf",
        gamma: Any = None,
        degree: int = 3,
        coef0: float = 0.0,
        gamma_star: Any = None,
        tol: float = 1e-6,
        n_jobs: int | None = None,
        verbose: int = 0,
        callback: Any = None,
    ) -> None:
        self.C = C
        self.rho = rho
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.gamma_star = gamma_star
        self.tol = tol
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.callback = callback

    def _check_params(self) -> None:
        positive_real("C", self.C)
        positive_real("rho", self.rho)
        positive_real("tol", self.tol)
        positive_real("gamma", self.gamma, allow_none=True)
        positive_real("gamma_star", self.gamma_star, allow_none=True)
        if self.kernel not in _KERNELS:
            raise ValueError(f"kernel must be one of {_KERNELS}; got {self.kernel!r}")
        if not isinstance(self.degree, numbers.Integral) or isinstance(self.degree, bool) or self.degree < 1:
            raise ValueError(f"degree must be a positive integer; got {self.degree!r}")

    def _robust_args(self) -> dict[str, Any]:
        return {}

    def fit(self, X: Any, y: Any, *, X_star: Any = None) -> SVMPlusClassifier:
        """Fits on ``X`` with privileged features ``X_star`` (one row per example).

        Without ``X_star`` (``None``) the core fits the plain kernel SVM with this estimator's ``C``,
        kernel (and ``γ``), ``tol``: the no-privileged-information mode, equal to
        :class:`usvm.KernelSVMClassifier` with those values; ``rho``, ``gamma_star`` (and R-SVM+'s
        ``robust_lambda``, ``sigma_prime``) are not used, and a
        :class:`usvm.NoPrivilegedInformationWarning` says so."""
        return self._fit(X, y, X_star=X_star)

    def _registry_params(
        self, X: Any, cov: Any, sample_weight: np.ndarray | None, star: Any
    ) -> dict[str, Any]:
        kernel = kernel_params(self.kernel, self._gamma(X), self.degree, self.coef0)
        return {
            "method": self._method,
            "regularization": {"C": float(self.C)},
            "kernel": kernel,
            "gamma_star": self._gamma_star(star),
            "rho": float(self.rho),
            "tol": float(self.tol),
            **self._robust_args(),
        }

    def _gamma(self, X: Any) -> float | None:
        """``γ`` of ``k``: as given, else ``1/D`` (rbf; ``D`` the mean squared distance between rows) or
        ``1/n_features`` (poly); None for the linear kernel."""
        if self.kernel == "linear":
            return None
        if self.gamma is not None:
            return float(self.gamma)
        return _usvm.default_gaussian_gamma(X) if self.kernel == "rbf" else 1.0 / X.shape[1]

    def _gamma_star(self, X_star: Any) -> float | None:
        """``γ*`` of the Gaussian ``k*``: as given, else ``1/D*`` on the privileged features (None without
        them)."""
        if self.gamma_star is not None:
            return float(self.gamma_star)
        return None if X_star is None else _usvm.default_gaussian_gamma(X_star)

    def _fitted(self, X: Any, y_enc: np.ndarray, cov: Any, sw: np.ndarray | None) -> None:
        self.support_vectors_ = self.model_.support_vectors
        self.dual_coef_ = self.model_.coef
        self.intercept_ = self.model_.intercept
        params = json.loads(self.model_.params)
        self.gamma_ = params["kernel"].get("gamma")
        self.gamma_star_ = params["gamma_star"]
        self.n_iter_ = np.array([r["n_iter"] for r in self.reports_], dtype=np.intp)


class RobustSVMPlusClassifier(SVMPlusClassifier):
    """R-SVM+ (paper 004 eq. 15): SVM+ with the robust regulariser ``robust_lambda · Σ_s ‖∇f(x_s)‖²`` and
    the box ``α ≤ sigma_prime · C``. Parameters and attributes as :class:`SVMPlusClassifier`.

    >>> import numpy as np
    >>> from usvm import RobustSVMPlusClassifier
    >>> X = np.array([[0.0, 0.0], [0.1, 0.3], [2.0, 2.0], [2.2, 1.9]])
    >>> clf = RobustSVMPlusClassifier(C=10.0).fit(X, [0, 0, 1, 1], X_star=[[0.0], [0.1], [1.0], [0.9]])
    >>> clf.predict(X).tolist()
    [0, 0, 1, 1]
    """

    _method = "rsvmplus"

    def __init__(
        self,
        C: float = 1.0,
        *,
        rho: float = 1.0,
        robust_lambda: float = 0.1,
        sigma_prime: float = 1.0,
        kernel: str = "rbf",
        gamma: Any = None,
        degree: int = 3,
        coef0: float = 0.0,
        gamma_star: Any = None,
        tol: float = 1e-6,
        n_jobs: int | None = None,
        verbose: int = 0,
        callback: Any = None,
    ) -> None:
        super().__init__(
            C,
            rho=rho,
            kernel=kernel,
            gamma=gamma,
            degree=degree,
            coef0=coef0,
            gamma_star=gamma_star,
            tol=tol,
            n_jobs=n_jobs,
            verbose=verbose,
            callback=callback,
        )
        self.robust_lambda = robust_lambda
        self.sigma_prime = sigma_prime

    def _robust_args(self) -> dict[str, Any]:
        lam, sp = self.robust_lambda, self.sigma_prime
        if not isinstance(lam, numbers.Real) or isinstance(lam, bool) or not math.isfinite(lam) or lam < 0:
            raise ValueError(f"robust_lambda must be a non-negative finite number; got {lam!r}")
        if not isinstance(sp, numbers.Real) or isinstance(sp, bool) or not math.isfinite(sp) or sp <= 0:
            raise ValueError(f"sigma_prime must be a positive finite number; got {sp!r}")
        return {"robust_lambda": float(lam), "sigma_prime": float(sp)}


class L2SVMPlusClassifier(SVMPlusClassifier):
    """L2-SVM+ (Li et al., CVPR 2016; a baseline of paper 004): the correcting function
    ``ξ_i = w*ᵀψ̄(x*_i)`` enters through ``½ Σ C ξ_i²`` (no ``ξ ≥ 0``) with a margin variable and the bias
    in the kernels, so the dual is ``min ½αᵀQα`` over ``Σ α_i = 1``, ``α ≥ 0``. Parameters and
    attributes as :class:`SVMPlusClassifier` (``rho`` weighs ``‖w*‖²``; ``objective_`` is ``−½αᵀQα``).

    >>> import numpy as np
    >>> from usvm import L2SVMPlusClassifier
    >>> X = np.array([[0.0, 0.0], [0.1, 0.3], [2.0, 2.0], [2.2, 1.9]])
    >>> clf = L2SVMPlusClassifier(C=10.0).fit(X, [0, 0, 1, 1], X_star=[[0.0], [0.1], [1.0], [0.9]])
    >>> clf.predict(X).tolist()
    [0, 0, 1, 1]
    """

    _method = "l2svmplus"

    def __init__(
        self,
        C: float = 1.0,
        *,
        rho: float = 1.0,
        kernel: str = "rbf",
        gamma: Any = None,
        degree: int = 3,
        coef0: float = 0.0,
        gamma_star: Any = None,
        tol: float = 1e-6,
        n_jobs: int | None = None,
        verbose: int = 0,
        callback: Any = None,
    ) -> None:
        super().__init__(
            C,
            rho=rho,
            kernel=kernel,
            gamma=gamma,
            degree=degree,
            coef0=coef0,
            gamma_star=gamma_star,
            tol=tol,
            n_jobs=n_jobs,
            verbose=verbose,
            callback=callback,
        )
