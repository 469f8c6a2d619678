"""The kernel SVM (C-SVC with per-example costs) over the Rust core's SMO solver."""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.model_selection import StratifiedKFold
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from . import _usvm
from ._base import RegistryClassifier, has_probability, kernel_params
from ._checks import FLOATS as _FLOATS
from ._checks import positive_real

__all__ = ["KernelSVMClassifier"]

_KERNELS = ("linear", "rbf", "poly", "precomputed")


class KernelSVMClassifier(RegistryClassifier):
    """Kernel SVM with per-example costs, solved by LIBSVM's SMO (second-order working sets, shrinking,
    kernel cache) in the Rust core.

    Minimises ``½‖w‖² + Σ_i C·c_i ξ_i`` subject to ``y_i(wᵀφ(x_i) + b) ≥ 1 - ξ_i``, ``ξ_i ≥ 0``, with
    ``c_i`` the ``sample_weight`` (relevance degrees; the KSVM / RD-KSVM baselines). Two classes:
    one machine, ``decision_function > 0`` means ``classes_[1]``. More classes: one-vs-one by default,
    as scikit-learn's ``SVC`` and LIBSVM (one machine per pair of classes, prediction by votes, ties to
    the first class), or one-vs-rest (``multiclass='ovr'``: one machine per class, the largest
    ``decision_function`` wins).

    Parameters
    ----------
    C : float, default=1.0
        Cost ``C > 0``.
    kernel : {'linear', 'rbf', 'poly', 'precomputed'}, default='rbf'
        ``xᵀz``, ``exp(-γ‖x - z‖²)``, ``(γ xᵀz + coef0)^degree``, or a precomputed Gram matrix: ``X`` of
        shape ``(n_samples, n_samples)`` at fit and ``(n_test, n_train)`` at prediction.
    gamma : {'scale', 'auto'} or float, default='scale'
        ``'scale'``: ``1 / (n_features · X.var())`` (the variance weighted by ``sample_weight`` when given);
        ``'auto'``: ``1 / n_features`` (LIBSVM's default).
    degree : int, default=3
    coef0 : float, default=0.0
    tol : float, default=1e-3
        Stop when the maximal KKT violation is below ``tol`` (LIBSVM's ``-e``).
    cache_size : float, default=200
        Kernel cache in MB per binary problem.
    shrinking : bool, default=True
    precision : {'single', 'double'}, default='single'
        Kernel values as cached: ``'single'`` stores ``f32`` entries, as LIBSVM and ``SVC`` do (twice the
        columns per megabyte; dense rows are also read in ``f32``, summed in ``f64``), solving the problem
        with each kernel value rounded to ``f32`` (3e-8 relative); ``'double'`` solves it to the last digit.
    max_iter : int, default=-1
        SMO iterations per binary problem; -1 means LIBSVM's ``max(10⁷, 100ℓ)``.
    multiclass : {'ovo', 'ovr'}, default='ovo'
        How more than two classes are trained: one machine per pair of classes or one per class.
    probability : bool, default=False
        Fit Platt sigmoids on 5-fold cross-validated decision values (as LIBSVM's ``-b 1`` and ``SVC``): one
        per machine; ``predict_proba`` couples a one-vs-one model's pairwise probabilities into class
        probabilities (Wu, Lin & Weng 2004, method 2, solved exactly) and normalises one-vs-rest ones.
        Costs five extra fits. As in ``SVC``, ``predict`` still follows the decision values.
    random_state : int, RandomState or None, default=None
        Seeds the folds of ``probability=True`` (``None``: 0).
    decision_function_shape : {'ovr', 'ovo'}, default='ovr'
        As ``SVC``'s, for one-vs-one models: ``'ovr'`` turns the pairs' values into one column per class
        (votes plus a confidence in (-1/3, 1/3), scikit-learn's transform); ``'ovo'`` returns the pairs'
        values, ``(n_samples, K(K-1)/2)``, in the order ``(0,1), (0,2), …, (1,2), …``, positive for the
        pair's first class. One-vs-rest models have one column per class either way.

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
    classes_, support_ (training indices), support_vectors_ (empty for a precomputed kernel),
    dual_coef_ (``α_i y_i``: one-vs-one, LIBSVM's layout ``(n_classes - 1, n_SV)`` with the support
    vectors grouped by class, as ``SVC``'s; else ``(n_machines, n_SV)``), intercept_ (n_machines,),
    n_support_ (one-vs-one: per class, as ``SVC``'s; else per machine), objective_ (dual objectives
    ``½αᵀQα - 1ᵀα``), n_iter_ (per machine), converged_, gamma_.

    >>> import numpy as np
    >>> from usvm import KernelSVMClassifier
    >>> X = np.array([[0.0, 0.0], [0.1, 0.3], [2.0, 2.0], [2.2, 1.9]])
    >>> clf = KernelSVMClassifier(C=10.0, gamma=0.5).fit(X, [0, 0, 1, 1], sample_weight=[1, 0.5, 1, 1])
    >>> clf.predict(X).tolist()
    [0, 0, 1, 1]
    """

    def __init__(
        self,
        C: float = 1.0,
        *,
        kernel: str = "rbf",
        gamma: Any = "scale",
        degree: int = 3,
        coef0: float = 0.0,
        tol: float = 1e-3,
        cache_size: float = 200.0,
        shrinking: bool = True,
        precision: str = "single",
        max_iter: int = -1,
        multiclass: str = "ovo",
        probability: bool = False,
        random_state: Any = None,
        decision_function_shape: str = "ovr",
        n_jobs: int | None = None,
        verbose: int = 0,
        callback: Any = None,
    ) -> None:
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.tol = tol
        self.cache_size = cache_size
        self.shrinking = shrinking
        self.precision = precision
        self.max_iter = max_iter
        self.multiclass = multiclass
        self.probability = probability
        self.random_state = random_state
        self.decision_function_shape = decision_function_shape
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.callback = callback

    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self.kernel != "precomputed"
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

    def _check_params(self) -> None:
        positive_real("C", self.C)
        positive_real("tol", self.tol)
        positive_real("cache_size", self.cache_size)
        if self.probability and self.kernel == "precomputed":
            raise ValueError("probability=True needs the kernel's inputs, not a precomputed kernel")
        if self.multiclass not in ("ovo", "ovr"):
            raise ValueError(f"multiclass must be 'ovo' or 'ovr'; got {self.multiclass!r}")
        if self.decision_function_shape not in ("ovr", "ovo"):
            raise ValueError(f"decision_function_shape must be 'ovr' or 'ovo'; got {self.decision_function_shape!r}")
        if self.multiclass == "ovr" and self.decision_function_shape == "ovo":
            raise ValueError("decision_function_shape='ovo' needs multiclass='ovo'")
        if self.precision not in ("single", "double"):
            raise ValueError(f"precision must be 'single' or 'double'; got {self.precision!r}")
        if self.kernel not in _KERNELS:
            raise ValueError(f"kernel must be one of {_KERNELS}; got {self.kernel!r}")
        if isinstance(self.gamma, str):
            if self.gamma not in ("scale", "auto"):
                raise ValueError(f"gamma must be 'scale', 'auto' or a positive float; got {self.gamma!r}")
        else:
            positive_real("gamma", self.gamma)
        if not isinstance(self.degree, numbers.Integral) or isinstance(self.degree, bool) or self.degree < 1:
            raise ValueError(f"degree must be a positive integer; got {self.degree!r}")
        if not isinstance(self.coef0, numbers.Real) or not math.isfinite(self.coef0):
            raise ValueError(f"coef0 must be a finite number; got {self.coef0!r}")
        if (
            not isinstance(self.max_iter, numbers.Integral)
            or isinstance(self.max_iter, bool)
            or not (self.max_iter == -1 or self.max_iter >= 1)
        ):
            raise ValueError(f"max_iter must be -1 or a positive integer; got {self.max_iter!r}")

    def _gamma(self, X: Any, sw: np.ndarray | None) -> float:
        """``'scale'``: ``1 / (n_features · Var X)``, the variance of all entries weighted by the examples'
        ``sample_weight`` (so that a weight of 2 equals a repeated example; unweighted, it is SVC's value)."""
        if not isinstance(self.gamma, str):
            return float(self.gamma)
        d = X.shape[1]
        if self.gamma == "auto":
            return 1.0 / d
        w = np.ones(X.shape[0]) if sw is None else sw
        w = w / w.sum()
        if sp.issparse(X):
            mean = (X.T @ w).sum() / d
            var = (X.multiply(X).T @ w).sum() / d - mean**2
        else:
            mean = (w @ X).sum() / d
            var = (w @ ((X - mean) ** 2)).sum() / d
        return 1.0 / (d * var) if var > 0 else 1.0

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> KernelSVMClassifier:
        """Fits the machine(s). ``sample_weight`` (non-negative) scales each example's cost: ``C_i = C·c_i``."""
        return self._fit(X, y, sample_weight=sample_weight)

    def _registry_params(
        self, X: Any, cov: Any, sample_weight: np.ndarray | None, star: Any
    ) -> dict[str, Any]:
        gamma = None if self.kernel in ("linear", "precomputed") else self._gamma(X, sample_weight)
        kernel = kernel_params(self.kernel, gamma, self.degree, self.coef0)
        return {
            "method": "svm",
            "regularization": {"C": float(self.C)},
            "kernel": kernel,
            "tol": float(self.tol),
            "cache_mb": float(self.cache_size),
            "shrinking": bool(self.shrinking),
            "precision": self.precision,
            "multiclass": self.multiclass,
            "max_iter": 0 if self.max_iter == -1 else int(self.max_iter),
        }

    def _fit_core(
        self, X: Any, y_enc: np.ndarray, cov: Any, sw: np.ndarray | None, *args: Any, **kw: Any
    ) -> Any:
        n = X.shape[0]
        n_classes = int(y_enc.max()) + 1
        if sw is not None and self.multiclass == "ovo" and n_classes > 2:
            for k in range(n_classes):
                if not np.any(sw[y_enc == k] > 0):
                    raise ValueError(
                        f"sample_weight leaves class {k} with no example of positive weight: one-vs-one "
                        "needs every class"
                    )
        elif sw is not None:
            for k in range(n_classes if n_classes > 2 else 1):
                pos = y_enc == (k if n_classes > 2 else 1)
                if not (np.any(sw[pos] > 0) and np.any(sw[~pos] > 0)):
                    raise ValueError(
                        "sample_weight leaves a one-vs-rest problem with a single class of positive "
                        "weight: every class and its complement need a positive weight"
                    )
        if self.kernel == "precomputed":
            if X.shape[1] != n:
                raise ValueError(f"a precomputed kernel needs a square Gram matrix; got shape {X.shape}")
            X = _libsvm_layout(X)
        return super()._fit_core(X, y_enc, cov, sw, *args, **kw)

    def _fitted(self, X: Any, y_enc: np.ndarray, cov: Any, sw: np.ndarray | None) -> None:
        precomputed = self.kernel == "precomputed"
        self.gamma_ = 0.0 if precomputed else self._gamma(X, sw)
        self.support_vectors_ = np.empty((0, 0)) if precomputed else X[self.support_]
        self.intercept_ = self.model_.intercept
        k = len(self.classes_)
        if self._one_vs_one():
            # LIBSVM's sv_coef: a vector of class c holds its coefficient in the pair (c, o) in row o (o < c)
            # or o - 1 (o > c); the support vectors are grouped by class.
            sv_class = y_enc[self.support_]
            coef = np.asarray(self.model_.coef)
            self.dual_coef_ = np.zeros((k - 1, coef.shape[1]))
            for p, (a, b) in enumerate((a, b) for a in range(k) for b in range(a + 1, k)):
                for c, o in ((a, b), (b, a)):
                    mine = sv_class == c
                    self.dual_coef_[o if o < c else o - 1, mine] = coef[p, mine]
            self.n_support_ = np.bincount(sv_class, minlength=k).astype(np.intp)
        else:
            self.dual_coef_ = self.model_.coef
            self.n_support_ = np.count_nonzero(self.dual_coef_, axis=1).astype(np.intp)
        self.n_iter_ = np.array([r["n_iter"] for r in self.reports_], dtype=np.intp)
        if self.probability:
            self.probA_, self.probB_ = self._fit_platt(X, y_enc, sw)

    def _fit_platt(self, X: Any, y_enc: np.ndarray, sw: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """One Platt sigmoid per machine on 5-fold cross-validated decision values (LIBSVM's ``-b 1``): a
        pair's on the examples of its two classes, the first class positive; a one-vs-rest machine's on all,
        its class positive; a binary machine's, ``classes_[1]`` positive."""
        scores = np.empty((X.shape[0], len(self.intercept_)))
        n_splits = min(5, int(np.bincount(y_enc).min()))
        if n_splits >= 2:
            # Every fold with the whole data's kernel (gamma='scale' is not recomputed per fold).
            kernel = {"kernel": kernel_params(self.kernel, self.gamma_ or None, self.degree, self.coef0)}
            folds = StratifiedKFold(n_splits, shuffle=True, random_state=self._seed())
            for train, test in folds.split(np.zeros(len(y_enc)), y_enc):
                sw_train = None if sw is None else sw[train]
                model, _, _ = self._fit_core(X[train], y_enc[train], None, sw_train, fit_params=kernel)
                scores[test] = np.asarray(model.decision_function(X[test])).reshape(len(test), -1)
        else:
            scores[:] = self._scores(X)
        return self.model_.fit_platt(scores, np.ascontiguousarray(y_enc, dtype=np.int64))

    @available_if(has_probability)
    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities, shape (n_samples, n_classes): Platt-scaled decision values, coupled (one-vs-one)
        or normalised (one-vs-rest)."""
        return self.model_.class_probabilities(self._scores(X), self.probA_, self.probB_)

    @available_if(has_probability)
    def predict_log_proba(self, X: Any) -> np.ndarray:
        """``log`` of :meth:`predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def _one_vs_one(self) -> bool:
        return self.multiclass == "ovo" and len(self.classes_) > 2

    def _scores(self, X: Any) -> np.ndarray:
        if self.kernel != "precomputed":
            return super()._scores(X)
        check_is_fitted(self)
        X = validate_data(self, X, dtype=_FLOATS, reset=False)
        return np.asarray(X[:, self.support_] @ np.asarray(self.model_.coef).T) + self.intercept_

    def decision_function(self, X: Any) -> np.ndarray:
        """``f(x)``: shape (n_samples,) for two classes (``> 0`` means ``classes_[1]``); else one column per
        class, or, for ``decision_function_shape='ovo'``, one per pair of classes (see the parameters)."""
        scores = self._scores(X)
        if not self._one_vs_one() or self.decision_function_shape == "ovo":
            return scores.ravel() if scores.shape[1] == 1 else scores
        return self.model_.class_scores(np.ascontiguousarray(scores))


def _libsvm_layout(gram: np.ndarray) -> np.ndarray:
    """LIBSVM's precomputed layout: the serial number ``1..n`` in column 0, then the Gram row."""
    return np.hstack([np.arange(1, gram.shape[0] + 1, dtype=np.float64)[:, None], gram])
