"""One estimator base over the core's method registry, and the generic ``Classifier``.

Every method of the registry (``usvm.METHODS``) is reachable through :class:`Classifier` with no code of its
own: the estimator sends ``{"method": ..., **params}`` as JSON to the core's single ``fit``, keeps the
fitted ``Model``; ``decision_function``/``predict`` come from ``DecisionMixin`` as for every estimator.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from . import _usvm
from ._checks import checked_sample_weight, encode_classes
from ._decision import DecisionMixin
from ._estimators import _as_cov

__all__ = ["Classifier", "RegistryClassifier"]

_FLOATS = [np.float64, np.float32]


class RegistryClassifier(DecisionMixin, ClassifierMixin, BaseEstimator):
    """Base of the estimators fitted through the registry.

    A subclass says which method it fits and which registry fields its parameters are
    (:meth:`_registry_params`); fitting, warnings, ``decision_function`` and ``predict`` are shared.
    """

    def _registry_params(self) -> dict[str, Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _seed(self) -> int:
        return 0

    def fit(self, X: Any, y: Any, *, X_cov: Any = None, sample_weight: Any = None, X_star: Any = None) -> Any:
        """Fits the method on means ``X`` (array or CSR), labels ``y``, optional covariances ``X_cov``
        (any form :class:`usvm.GSUClassifier` takes), weights and privileged features ``X_star``."""
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=_FLOATS, order=None, ensure_min_samples=1)
        check_classification_targets(y)
        n, d = X.shape
        classes, y_enc = encode_classes(self, y)
        cov = _as_cov(X_cov, n, d)
        sw = checked_sample_weight(sample_weight, n, y_enc)
        star = None
        if X_star is not None:
            star = check_array(X_star, accept_sparse="csr", dtype=_FLOATS, input_name="X_star")
            if star.shape[0] != n:
                raise ValueError(f"X_star has {star.shape[0]} rows for {n} samples")
        params = self._registry_params()
        model, reports = _usvm.fit(
            json.dumps(params), X, y_enc.astype(np.int64), cov=cov, sample_weight=sw, x_star=star, seed=self._seed()
        )
        self.classes_ = classes
        self.model_ = model
        self.reports_ = reports
        self.n_iter_ = int(max(r["n_iter"] for r in reports))
        self.converged_ = np.array([r["converged"] for r in reports], dtype=bool)
        failed = [r["termination"] for r in reports if not r["converged"]]
        if failed:
            warnings.warn(
                f"{type(self).__name__} ({params['method']}): the solver did not converge "
                f"({', '.join(sorted(set(failed)))}) in {len(failed)} of {len(reports)} binary problem(s)",
                ConvergenceWarning,
                stacklevel=2,
            )
        return self

    def _scores(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "model_")
        X = validate_data(self, X, accept_sparse="csr", dtype=_FLOATS, order=None, reset=False)
        return np.asarray(self.model_.decision_function(X)).reshape(X.shape[0], -1)

    def to_json(self) -> str:
        """The model file (version 2), as ``usvm train`` writes it (labels are the class indices)."""
        check_is_fitted(self, "model_")
        return self.model_.to_json()


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

    >>> import numpy as np
    >>> from usvm import Classifier
    >>> X = np.array([[0.0, 1.0], [1.0, 2.0], [0.0, -1.0], [1.0, -2.0]])
    >>> Classifier(method="logistic").fit(X, [1, 1, 0, 0]).predict(X).tolist()
    [1, 1, 0, 0]
    """

    def __init__(self, method: str = "gsu", params: dict[str, Any] | None = None, seed: int = 0) -> None:
        self.method = method
        self.params = params
        self.seed = seed

    def _registry_params(self) -> dict[str, Any]:
        if self.params is not None and not isinstance(self.params, dict):
            raise TypeError(f"params must be a dict of registry fields; got {type(self.params).__name__}")
        if "method" in (self.params or {}):
            raise _usvm.ParamsError("give the method as Classifier(method=...), not inside params")
        return {"method": self.method, **(self.params or {})}

    def _seed(self) -> int:
        return int(self.seed)


def default_params(method: str) -> dict[str, Any]:
    """Every field of ``method`` with its default, as the core defines them."""
    return json.loads(_usvm.default_params(method))
