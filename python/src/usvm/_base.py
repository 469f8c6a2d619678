"""One estimator base over the core's method registry, and the generic ``Classifier``.

Every method of the registry (``usvm.METHODS``) is reachable through :class:`Classifier` with no code of its
own: the estimator sends ``{"method": ..., **params}`` as JSON to the core's single ``fit``, keeps the
fitted ``Model``; ``decision_function`` and ``predict`` are the base's, as for every estimator.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from . import _usvm
from ._checks import FLOATS as _FLOATS
from ._checks import check_class_labels, checked_sample_weight, encode_classes, seed_of, threads_of
from ._covariance import _as_cov
from ._persist import CoreState
from ._progress import watch

__all__ = ["Classifier", "NoPrivilegedInformationWarning"]


class NoPrivilegedInformationWarning(UserWarning):
    """A method that learns from privileged features (SVM+, R-SVM+, L2-SVM+) was fitted without
    ``X_star``: the core fitted the plain kernel SVM with the estimator's ``C``, kernel, ``tol`` (what
    :class:`usvm.KernelSVMClassifier` fits with those values and ``multiclass='ovr'``), not the
    privileged-information model."""


class DegenerateFitWarning(UserWarning):
    """A fitted classifier predicts one class for every training example although both are present
    (``reports_[k]["degenerate"]``; RSVM-RHHQ checks this): not a solver failure, but rarely the model
    wanted — try another ``start``, a larger ``C`` or a smaller ``eta``."""


class RegistryClassifier(CoreState, ClassifierMixin, BaseEstimator):
    """Base of the estimators fitted through the registry (internal: not an estimator of its own, and not
    exported; ``usvm.Classifier`` fits any method by name).

    A subclass says which method it fits and with which registry fields (:meth:`_registry_params`, from its
    scikit-learn parameters and the validated training data); fitting, the fit attributes, warnings,
    ``decision_function`` and ``predict`` are shared. Its ``fit`` keeps its own signature (scikit-learn's
    metadata routing reads it) and calls :meth:`_fit`.
    """

    def _registry_params(
        self, X: Any, cov: Any, sample_weight: np.ndarray | None, star: Any
    ) -> dict[str, Any]:  # pragma: no cover
        raise NotImplementedError

    # Whether fit and predict take CSR matrices.
    _sparse = True
    # Whether every method the estimator fits checks its X for NaN and infinity in the core (naming the
    # example, as a ValueError): then fit skips scikit-learn's own pass over X, a second one (2 ms of a
    # 55 ms fit on 5,000 MNIST images as a dense array).
    _core_checks_finite = False

    # Progress (every estimator's ``verbose`` and ``callback`` parameters; these defaults serve estimators
    # built without them).
    verbose = 0
    callback = None

    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self._sparse
        return tags

    def _seed(self) -> int:
        """The seed of the fit's random parts: from ``random_state`` where the estimator has one, else 0."""
        return seed_of(self.random_state) if hasattr(self, "random_state") else 0

    def _check_params(self) -> None:
        """Checks of the scikit-learn parameters by their Python names (the core checks its fields again)."""

    def _fit(
        self,
        X: Any,
        y: Any,
        *,
        X_cov: Any = None,
        sample_weight: Any = None,
        X_star: Any = None,
        ensure_min_samples: int = 1,
        cov_name: str = "X_cov",
        fit_params: dict[str, Any] | None = None,
    ) -> Any:
        """Validates the data, fits through the core's ``fit`` (``fit_params``: registry fields given to this
        ``fit`` call, over the estimator's own) and sets ``classes_``, ``model_``,
        ``reports_``, ``n_iter_``, ``objective_``, ``converged_`` (and ``support_``, the support vectors'
        training indices, where the method has them); warns (``ConvergenceWarning``) when a
        solver did not converge."""
        self._check_params()
        accept_sparse = "csr" if self.__sklearn_tags__().input_tags.sparse else False
        X, y = validate_data(
            self,
            X,
            y,
            accept_sparse=accept_sparse,
            dtype=_FLOATS,
            order=None,
            ensure_min_samples=ensure_min_samples,
            ensure_all_finite=not self._core_checks_finite,
        )
        check_class_labels(y)
        n, d = X.shape
        classes, y_enc = encode_classes(self, y)
        del y  # a copy validate_data made is not needed beside y_enc during the fit
        cov = _as_cov(X_cov, n, d, name=cov_name)
        sw = checked_sample_weight(sample_weight, n, y_enc)
        star = None
        if X_star is not None:
            star = check_array(X_star, accept_sparse="csr", dtype=_FLOATS, input_name="X_star")
            if star.shape[0] != n:
                raise ValueError(f"X_star has {star.shape[0]} rows for {n} samples")
        warm = getattr(self, "warm_start", False) and np.array_equal(getattr(self, "classes_", None), classes)
        start = self.model_ if warm else None
        model, reports, support = self._fit_core(X, y_enc, cov, sw, star, start=start, fit_params=fit_params)
        self.classes_ = classes
        self.model_ = model
        self.reports_ = reports
        if support is not None:
            self.support_ = np.asarray(support, dtype=np.intp)
        elif hasattr(self, "support_"):
            del self.support_  # from an earlier fit of a kind that names its support vectors
        self.n_iter_ = int(max(r["n_iter"] for r in reports))
        self.objective_ = np.array([r["objective"] for r in reports], dtype=np.float64)
        self.converged_ = np.array([r["converged"] for r in reports], dtype=bool)
        self._fitted(X, y_enc, cov, sw)
        warn_unconverged(type(self).__name__, model.method, reports, stacklevel=4)
        warn_degenerate(type(self).__name__, model.method, reports, stacklevel=4)
        return self

    def _fit_core(
        self,
        X: Any,
        y_enc: np.ndarray,
        cov: Any,
        sw: np.ndarray | None,
        star: Any = None,
        start: Any = None,
        fit_params: dict[str, Any] | None = None,
    ) -> tuple[Any, list[dict], Any]:
        """One call of the core's ``fit`` on validated data (labels ``0..K-1``)."""
        params = {**self._registry_params(X, cov, sw, star), **(fit_params or {})}
        if star is None and _usvm.uses_privileged(params["method"]):
            warnings.warn(
                f"{type(self).__name__} ({params['method']}) was fitted without X_star: this is the plain "
                "kernel SVM with the same C and kernel, no privileged information was used. Pass X_star to "
                "fit (in a Pipeline or GridSearchCV: sklearn.set_config(enable_metadata_routing=True) and "
                "set_fit_request(X_star=True))",
                NoPrivilegedInformationWarning,
                stacklevel=4,
            )
        if sw is not None and "lambda" in params.get("regularization", {}):
            # The core's λ form is the weighted mean (1/Σc) Σ c_i L_i: it rescales the weights to mean one
            # itself, with a copy of the covariances; rescaled here, they reach it at mean one and it copies
            # nothing.
            sw = sw * (len(sw) / sw.sum())
        with watch(self) as callback:
            return _usvm.fit(
                json.dumps(params),
                X,
                np.asarray(y_enc, dtype=np.int64),
                cov=cov,
                sample_weight=sw,
                x_star=star,
                seed=self._seed(),
                threads=threads_of(getattr(self, "n_jobs", None)),
                start=start,
                callback=callback,
            )

    def _fitted(self, X: Any, y_enc: np.ndarray, cov: Any, sw: np.ndarray | None) -> None:
        """Sets a subclass's own fit attributes (after ``model_`` and ``reports_``)."""

    def decision_function(self, X: Any) -> np.ndarray:
        """``f(x)``: shape (n_samples,) for two classes (``> 0`` means ``classes_[1]``), else
        (n_samples, n_classes), one column per class (one-vs-rest)."""
        scores = self._scores(X)
        if self.model_.multiclass == "ovo":
            return self.model_.class_scores(np.ascontiguousarray(scores))
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X: Any) -> np.ndarray:
        """The class of each example: ``classes_[f > 0]`` for two classes, else ``classes_[argmax_k f_k]``, or
        for a one-vs-one kernel model the most votes (ties to the first class, LIBSVM's rule)."""
        scores = self._scores(X)  # checks that the estimator is fitted
        if self.model_.multiclass == "ovo":
            return self.classes_[self.model_.predict_from(np.ascontiguousarray(scores))]
        return self.classes_[class_index(scores)]

    def _scores(self, X: Any) -> np.ndarray:
        """The decision values as an (n_samples, n_outputs) array."""
        check_is_fitted(self, "model_")
        accept_sparse = "csr" if self.__sklearn_tags__().input_tags.sparse else False
        X = validate_data(self, X, accept_sparse=accept_sparse, dtype=_FLOATS, order=None, reset=False)
        return np.asarray(self.model_.decision_function(X)).reshape(X.shape[0], -1)

    def to_json(self) -> str:
        """The model file (version 2, or 3 for a model that stores only its used columns), as ``usvm train`` writes it, readable by ``usvm predict``: integer
        class labels as they are, other labels as their indices into ``classes_``."""
        check_is_fitted(self, "model_")
        if np.issubdtype(self.classes_.dtype, np.integer):
            return self.model_.to_json([int(c) for c in self.classes_])
        return self.model_.to_json()


def kernel_params(name: str, gamma: float | None, degree: int, coef0: float) -> dict[str, Any]:
    """The registry's kernel object for scikit-learn's kernel names (``"poly"`` is ``"polynomial"``)."""
    if name in ("linear", "precomputed"):
        return {"type": name}
    assert gamma is not None, "rbf and poly kernels have a gamma"
    kernel: dict[str, Any] = {"type": "rbf" if name == "rbf" else "polynomial", "gamma": float(gamma)}
    if name == "poly":
        kernel.update(degree=int(degree), coef0=float(coef0))
    return kernel


def has_probability(estimator: Any) -> bool:
    """``available_if`` check of ``predict_proba``: the estimator was fitted with ``probability=True``."""
    if not estimator.probability:
        raise AttributeError("predict_proba is available only when probability=True")
    return True


def class_index(scores: np.ndarray) -> np.ndarray:
    """The predicted class of each row of (n, outputs) decision values, as an index into the classes:
    ``f > 0`` for one output (the second class), else the largest ``f_k``."""
    return (scores[:, 0] > 0).astype(np.intp) if scores.shape[1] == 1 else np.argmax(scores, axis=1)


def warn_unconverged(who: str, method: str, reports: list[dict], stacklevel: int) -> None:
    """A ``ConvergenceWarning`` naming the first binary problem whose solver stopped short, if any."""
    failed = [r for r in reports if not r["converged"]]
    if failed:
        warnings.warn(
            f"{who} ({method}): the solver did not converge in {len(failed)} of {len(reports)} binary "
            f"problem(s): {_why(failed[0])}",
            ConvergenceWarning,
            stacklevel=stacklevel,
        )


def warn_degenerate(who: str, method: str, reports: list[dict], stacklevel: int) -> None:
    """A ``DegenerateFitWarning`` when some binary problem's classifier predicts one class on its
    whole training set."""
    bad = [k for k, r in enumerate(reports) if r.get("degenerate")]
    if bad:
        which = f" (binary problem {bad[0]})" if len(reports) > 1 else ""
        warnings.warn(
            f"{who} ({method}){which}: degenerate: the classifier predicts one class for every training "
            "example although both are present; try another start, a larger C or a smaller eta",
            DegenerateFitWarning,
            stacklevel=stacklevel,
        )


def _why(report: dict) -> str:
    """A report's termination in words, with its residual."""
    what = {
        "max_iterations": "max_iterations: the iteration limit was reached first; raise it",
        "stalled": "stalled: no further progress before the tolerance; the tolerance may be below the "
        "attainable accuracy",
        "not_certified": "not_certified: the relaxation's bound did not certify the solution",
    }.get(report["termination"], report["termination"])
    rounds = f" in {report['rounds']} rounds" if report.get("rounds") else ""
    why = f"{what} (residual {report['gradient_norm']:.3g} after {report['n_iter']} iterations{rounds})"
    fallback = report.get("fallback")
    if fallback is None:
        return why
    if fallback["taken"] == "alternating":
        return (
            f"{why}; the alternating solution was taken (objective {fallback['alternating_objective']:.6g}, "
            f"below the relaxation's {fallback['relaxation_objective']:.6g})"
        )
    return (
        f"{why}; the relaxation's solution was kept (objective {fallback['relaxation_objective']:.6g}; the "
        f"alternating solution's {fallback['alternating_objective']:.6g})"
    )


class Classifier(RegistryClassifier):
    """Any method of the registry by name, its parameters as a dict of registry fields.

    Parameters
    ----------
    method : str, default="gsu"
        One of ``usvm.METHODS`` (the CLI's ``--method`` names).
    params : dict, default=None
        Registry fields of that method, e.g. ``{"regularization": {"lambda": 0.1}}``; unknown fields raise
        ``usvm.ParamsError`` naming them. ``usvm.default_params(method)`` lists every field and default.
    seed : int, default=0
        The seed of every randomised part of the fit.
    verbose, callback
        Progress of the fit, as :class:`usvm.GSUClassifier`'s.

    >>> import numpy as np
    >>> from usvm import Classifier
    >>> X = np.array([[0.0, 1.0], [1.0, 2.0], [0.0, -1.0], [1.0, -2.0]])
    >>> Classifier(method="logistic").fit(X, [1, 1, 0, 0]).predict(X).tolist()
    [1, 1, 0, 0]
    """

    def __init__(
        self,
        method: str = "gsu",
        params: dict[str, Any] | None = None,
        seed: int = 0,
        *,
        verbose: int = 0,
        callback: Any = None,
    ) -> None:
        self.method = method
        self.params = params
        self.seed = seed
        self.verbose = verbose
        self.callback = callback

    def _registry_params(
        self, X: Any, cov: Any, sample_weight: np.ndarray | None, star: Any
    ) -> dict[str, Any]:
        if self.params is not None and not isinstance(self.params, dict):
            raise TypeError(f"params must be a dict of registry fields; got {type(self.params).__name__}")
        if "method" in (self.params or {}):
            raise _usvm.ParamsError("give the method as Classifier(method=...), not inside params")
        return {"method": self.method, **(self.params or {})}

    def _seed(self) -> int:
        return int(self.seed)

    def fit(self, X: Any, y: Any, *, X_cov: Any = None, sample_weight: Any = None, X_star: Any = None) -> Any:
        """Fits the method on means ``X`` (array or CSR), labels ``y``, optional covariances ``X_cov``
        (any form :class:`usvm.GSUClassifier` takes), weights and privileged features ``X_star``."""
        return self._fit(X, y, X_cov=X_cov, sample_weight=sample_weight, X_star=X_star)


def default_params(method: str) -> dict[str, Any]:
    """Every field of ``method`` with its default, as the core defines them."""
    return json.loads(_usvm.default_params(method))
