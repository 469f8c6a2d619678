"""``GSUClassifierCV``: λ chosen by cross-validation along warm-started regularisation paths."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import check_cv
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import class_index
from ._checks import FLOATS, checked_sample_weight, encode_classes, positive_int, positive_real
from ._covariance import _as_cov, _take_cov
from ._estimators import GSUClassifier

__all__ = ["GSUClassifierCV"]


class GSUClassifierCV(ClassifierMixin, BaseEstimator):
    r""":class:`GSUClassifier` with λ chosen by k-fold cross-validation, each fold's fits along one
    warm-started path.

    In every fold the λ of ``lams`` are fitted from the largest to the smallest, each fit starting from the
    previous solution (the exact solver then skips its coarsest smoothing stages), instead of from zero for
    every λ as a grid search does. The folds are scikit-learn's (``check_cv(cv, y, classifier=True)``:
    ``StratifiedKFold(5)`` by default, as ``GridSearchCV``), the score is the accuracy on the held-out fold,
    and ties go to the first λ in the order given, as ``GridSearchCV`` breaks them; so both pick the same λ.
    The chosen λ is then refitted on all the data.

    Parameters
    ----------
    lams : array-like of float, default=2**arange(-12, 3)
        The candidate λ > 0.
    cv : int, cross-validation generator or iterable, default=5
    method : {"gsu", "hinge", "iso", "sampling", "power"}, default="gsu"
    subspace_variance, tol, max_iter, fit_intercept, random_state, n_jobs
        As :class:`GSUClassifier`'s (exact solver).

    Attributes
    ----------
    lam_ : float
        The λ chosen.
    lams_ : ndarray
        The candidates, in the order given.
    scores_ : ndarray of shape (n_folds, n_lams)
        Held-out accuracy per fold and λ.
    mean_scores_ : ndarray of shape (n_lams,)
    n_iter_path_ : ndarray of shape (n_folds, n_lams)
        Newton iterations of each path fit (the largest over one-vs-rest problems).
    best_estimator_ : GSUClassifier
        Refitted with ``lam_`` on all the data; ``coef_``, ``intercept_``, ``classes_``, ``predict`` and
        ``decision_function`` are its.
    """

    def __init__(
        self,
        *,
        lams: Any = None,
        cv: Any = 5,
        method: str = "gsu",
        subspace_variance: float | None = None,
        tol: float = 1e-6,
        max_iter: int = 1000,
        fit_intercept: bool = True,
        random_state: Any = 0,
        n_jobs: int | None = None,
    ) -> None:
        self.lams = lams
        self.cv = cv
        self.method = method
        self.subspace_variance = subspace_variance
        self.tol = tol
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.n_jobs = n_jobs

    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _estimator(self, lam: float) -> GSUClassifier:
        return GSUClassifier(
            lam=lam,
            method=self.method,
            subspace_variance=self.subspace_variance,
            tol=self.tol,
            max_iter=self.max_iter,
            fit_intercept=self.fit_intercept,
            random_state=self.random_state,
            n_jobs=self.n_jobs,
        )

    def fit(self, X: Any, y: Any, *, X_cov: Any = None, sample_weight: Any = None) -> GSUClassifierCV:
        """Cross-validates every λ of ``lams`` (arguments as :meth:`GSUClassifier.fit`); refits the best."""
        lams = np.asarray(2.0 ** np.arange(-12, 3) if self.lams is None else self.lams, dtype=np.float64)
        if lams.ndim != 1 or len(lams) == 0:
            raise ValueError(f"lams must be a non-empty 1-d array of λ; got shape {lams.shape}")
        for lam in lams:
            positive_real("lams", float(lam))
        positive_real("tol", self.tol)
        positive_int("max_iter", self.max_iter)
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=FLOATS, order=None)
        check_classification_targets(y)
        n, d = X.shape
        classes, y_enc = encode_classes(self, y)
        cov = _as_cov(X_cov, n, d)
        sw = checked_sample_weight(sample_weight, n, y_enc)
        splits = list(check_cv(self.cv, y, classifier=True).split(X, y))
        # Largest λ first: each solution is the warm start of the next, less regularised, problem.
        path = np.argsort(-lams, kind="stable")
        scores = np.empty((len(splits), len(lams)))
        n_iter = np.empty((len(splits), len(lams)), dtype=np.int64)
        for f, (train, test) in enumerate(splits):
            start = None
            sw_train = None if sw is None else sw[train]
            for j in path:
                est = self._estimator(float(lams[j]))
                est._check_params()
                model, reports, _ = est._fit_core(
                    X[train], y_enc[train], _take_cov(cov, train), sw_train, start=start
                )
                start = model
                f_test = np.asarray(model.decision_function(X[test])).reshape(len(test), -1)
                scores[f, j] = np.mean(class_index(f_test) == y_enc[test])
                n_iter[f, j] = max(r["n_iter"] for r in reports)
        self.lams_ = lams
        self.scores_ = scores
        self.mean_scores_ = scores.mean(axis=0)
        self.n_iter_path_ = n_iter
        self.lam_ = float(lams[int(np.argmax(self.mean_scores_))])
        self.best_estimator_ = self._estimator(self.lam_).fit(
            X, classes[y_enc], X_cov=X_cov, sample_weight=sw
        )
        for name in ("classes_", "coef_", "intercept_", "n_iter_", "objective_", "converged_", "model_"):
            setattr(self, name, getattr(self.best_estimator_, name))
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        """The refitted model's ``f(x)``."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.decision_function(X)

    def predict(self, X: Any) -> np.ndarray:
        """The refitted model's classes."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict(X)
