"""The ``*CV`` estimators: a regularisation parameter chosen by k-fold cross-validation, each fold's fits
along one warm-started path."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import check_cv
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import Classifier, RegistryClassifier, class_index
from ._besvm import BasisExpansionClassifier
from ._checks import FLOATS, checked_sample_weight, encode_classes, positive_real
from ._covariance import _as_cov, _take_cov
from ._estimators import GSUClassifier
from ._persist import CoreState
from ._sqhinge import GSUSquaredHingeClassifier

__all__ = ["BasisExpansionClassifierCV", "ClassifierCV", "GSUClassifierCV", "GSUSquaredHingeClassifierCV"]

# The fit attributes a *CV estimator takes over from its refitted best estimator, where it has them.
_FROM_BEST = ("classes_", "coef_", "intercept_", "n_iter_", "objective_", "converged_", "model_", "reports_")


class _PathCV(CoreState, ClassifierMixin, BaseEstimator):
    """Cross-validation of one regularisation parameter along warm-started paths.

    In every fold the candidates are fitted from the most to the least regularised, each fit starting from
    the previous solution (``FitOptions::start`` of the core), instead of from zero for every candidate as
    a grid search does. The folds are scikit-learn's (``check_cv(cv, y, classifier=True)``:
    ``StratifiedKFold(5)`` by default, as ``GridSearchCV``), the score is the accuracy on the held-out fold,
    and ties go to the first candidate in the order given, as ``GridSearchCV`` breaks them; so both pick
    the same value. The chosen value is then refitted on all the data.

    A subclass names the wrapped estimator class (``_wrapped``) and its parameter (``_param``, e.g.
    ``"lam"``; the candidates are the ``_param + "s"`` parameter) and says whether larger values regularise
    more (``_larger_regularises``); the wrapped estimator for one value (``_estimator``) takes every
    parameter the two share from this one. Attributes after ``fit``: ``<param>_``
    (the value chosen), ``<param>s_`` (the candidates in the order given), ``scores_`` (n_folds ×
    n_candidates held-out accuracies), ``mean_scores_``, ``n_iter_path_`` (the iterations of every path
    fit, the largest over one-vs-rest problems), ``best_estimator_`` and its fit attributes.
    """

    _param = "lam"
    _larger_regularises = True
    _default_grid = 2.0 ** np.arange(-12, 3)
    _wrapped: type[RegistryClassifier]

    def _estimator(self, value: float) -> RegistryClassifier:
        """The wrapped estimator at ``value``: its parameters that this estimator shares are this one's."""
        shared = set(self._get_param_names())
        kwargs = {n: getattr(self, n) for n in self._wrapped._get_param_names() if n in shared}
        return self._wrapped(**{**kwargs, self._param: value})

    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self._estimator(1.0).__sklearn_tags__().input_tags.sparse
        return tags

    def _candidates(self) -> np.ndarray:
        name = self._param + "s"
        given = getattr(self, name)
        values = np.asarray(self._default_grid if given is None else given, dtype=np.float64)
        if values.ndim != 1 or len(values) == 0:
            raise ValueError(f"{name} must be a non-empty 1-d array; got shape {values.shape}")
        for v in values:
            positive_real(name, float(v))
        return values

    def _path_fit(self, X: Any, y: Any, X_cov: Any, sample_weight: Any) -> Any:
        values = self._candidates()
        self._estimator(float(values[0]))._check_params()
        sparse = "csr" if self.__sklearn_tags__().input_tags.sparse else False
        X, y = validate_data(self, X, y, accept_sparse=sparse, dtype=FLOATS, order=None)
        check_classification_targets(y)
        n, d = X.shape
        classes, y_enc = encode_classes(self, y)
        cov = _as_cov(X_cov, n, d)
        sw = checked_sample_weight(sample_weight, n, y_enc)
        splits = list(check_cv(self.cv, y, classifier=True).split(X, y))
        # Most regularised first: each solution is the warm start of the next, less regularised, problem.
        path = np.argsort(-values if self._larger_regularises else values, kind="stable")
        scores = np.empty((len(splits), len(values)))
        n_iter = np.empty((len(splits), len(values)), dtype=np.int64)
        for f, (train, test) in enumerate(splits):
            start = None
            sw_train = None if sw is None else sw[train]
            for j in path:
                est = self._estimator(float(values[j]))
                est._check_params()
                model, reports, _ = est._fit_core(
                    X[train], y_enc[train], _take_cov(cov, train), sw_train, start=start
                )
                start = model
                f_test = np.asarray(model.decision_function(X[test])).reshape(len(test), -1)
                scores[f, j] = np.mean(class_index(f_test) == y_enc[test])
                n_iter[f, j] = max(r["n_iter"] for r in reports)
        setattr(self, self._param + "s_", values)
        self.scores_ = scores
        self.mean_scores_ = scores.mean(axis=0)
        self.n_iter_path_ = n_iter
        best = float(values[int(np.argmax(self.mean_scores_))])
        setattr(self, self._param + "_", best)
        refit = {"X_cov": X_cov} if X_cov is not None else {}
        self.best_estimator_ = self._estimator(best).fit(X, classes[y_enc], sample_weight=sw, **refit)
        for name in _FROM_BEST:
            if hasattr(self.best_estimator_, name):
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


class GSUClassifierCV(_PathCV):
    r""":class:`GSUClassifier` with λ chosen by k-fold cross-validation, each fold's fits along one
    warm-started path (largest λ first; the exact solver then skips its coarsest smoothing stages).

    Parameters
    ----------
    lams : array-like of float, default=2**arange(-12, 3)
        The candidate λ > 0.
    cv : int, cross-validation generator or iterable, default=5
    method : {"gsu", "hinge", "iso", "sampling", "power"}, default="gsu"
    subspace_variance, tol, gap_tol, route, max_iter, fit_intercept, random_state, n_jobs, verbose, callback
        As :class:`GSUClassifier`'s (exact solver; ``gap_tol`` and ``route`` are the plain hinge's, used where
        ``Σ = 0``).

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

    _wrapped = GSUClassifier

    def __init__(
        self,
        *,
        lams: Any = None,
        cv: Any = 5,
        method: str = "gsu",
        subspace_variance: float | None = None,
        tol: float = 1e-6,
        gap_tol: float = 1e-10,
        route: str | None = None,
        max_iter: int = 1000,
        fit_intercept: bool = True,
        random_state: Any = 0,
        n_jobs: int | None = None,
        verbose: int = 0,
        callback: Any = None,
    ) -> None:
        self.lams = lams
        self.cv = cv
        self.method = method
        self.subspace_variance = subspace_variance
        self.tol = tol
        self.gap_tol = gap_tol
        self.route = route
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.callback = callback

    def fit(self, X: Any, y: Any, *, X_cov: Any = None, sample_weight: Any = None) -> GSUClassifierCV:
        """Cross-validates every λ of ``lams`` (arguments as :meth:`GSUClassifier.fit`); refits the best."""
        return self._path_fit(X, y, X_cov, sample_weight)


class GSUSquaredHingeClassifierCV(_PathCV):
    r""":class:`GSUSquaredHingeClassifier` with λ chosen by k-fold cross-validation along warm-started
    paths (largest λ first, each L-BFGS or Newton solve starting from the previous solution).

    Parameters
    ----------
    lams : array-like of float, default=2**arange(-12, 3)
        The candidate λ > 0.
    cv : int, cross-validation generator or iterable, default=5
    loss, solver, tol, max_iter, iterations, batch, fit_intercept, random_state, n_jobs, verbose, callback
        As :class:`GSUSquaredHingeClassifier`'s (``solver="sgd"`` starts every fit from zero).

    Attributes are those of :class:`GSUClassifierCV`, with a :class:`GSUSquaredHingeClassifier` as
    ``best_estimator_`` and L-BFGS or Newton iterations in ``n_iter_path_``.
    """

    _wrapped = GSUSquaredHingeClassifier

    def __init__(
        self,
        *,
        lams: Any = None,
        cv: Any = 5,
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
        self.lams = lams
        self.cv = cv
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

    def fit(
        self, X: Any, y: Any, *, X_cov: Any = None, sample_weight: Any = None
    ) -> GSUSquaredHingeClassifierCV:
        """Cross-validates every λ of ``lams`` (arguments as :meth:`GSUSquaredHingeClassifier.fit`);
        refits the best."""
        return self._path_fit(X, y, X_cov, sample_weight)


class BasisExpansionClassifierCV(_PathCV):
    r""":class:`BasisExpansionClassifier` with ``C`` chosen by k-fold cross-validation along warm-started
    paths (smallest ``C`` first; the map does not depend on ``C``, so each fold's Newton solves start from
    the previous ``C``'s hyperplanes).

    Parameters
    ----------
    Cs : array-like of float, default=2**arange(-4, 7)
        The candidate ``C > 0``.
    cv : int, cross-validation generator or iterable, default=5
    similarity, gamma, shift, local_shift, grid, basis_size, basis_selection, fit_intercept, tol,
    max_iter, random_state, n_jobs, verbose, callback
        As :class:`BasisExpansionClassifier`'s.

    Attributes are those of :class:`GSUClassifierCV` with ``C_`` and ``Cs_`` for ``lam_`` and ``lams_``,
    and a :class:`BasisExpansionClassifier` as ``best_estimator_``.
    """

    _param = "C"
    _larger_regularises = False
    _default_grid = 2.0 ** np.arange(-4, 7)
    _wrapped = BasisExpansionClassifier

    def __init__(
        self,
        *,
        Cs: Any = None,
        cv: Any = 5,
        similarity: Any = "rbf",
        gamma: Any = "scale",
        shift: int = 1,
        local_shift: int = 1,
        grid: Any = None,
        basis_size: Any = 1.0,
        basis_selection: str = "random",
        fit_intercept: bool = True,
        tol: float = 1e-8,
        max_iter: int = 1000,
        random_state: Any = 0,
        n_jobs: int | None = None,
        verbose: int = 0,
        callback: Any = None,
    ) -> None:
        self.Cs = Cs
        self.cv = cv
        self.similarity = similarity
        self.gamma = gamma
        self.shift = shift
        self.local_shift = local_shift
        self.grid = grid
        self.basis_size = basis_size
        self.basis_selection = basis_selection
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.callback = callback

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> BasisExpansionClassifierCV:
        """Cross-validates every ``C`` of ``Cs``; refits the best."""
        return self._path_fit(X, y, None, sample_weight)


class ClassifierCV(_PathCV):
    """Any registry method with a ``regularization`` field (``logistic``, ``gsu``, ``sqhinge-gsu``, ...)
    with λ chosen by k-fold cross-validation along warm-started paths, as :class:`GSUClassifierCV`.

    Parameters
    ----------
    method : str, default="logistic"
        One of ``usvm.METHODS`` that has a ``regularization`` field.
    params : dict, default=None
        Its other registry fields, as :class:`Classifier`'s (not ``regularization``: the path sets it).
    lams : array-like of float, default=2**arange(-12, 3)
        The candidate λ > 0 (``{"lambda": λ}``).
    cv : int, cross-validation generator or iterable, default=5
    seed : int, default=0
    verbose, callback
        Progress of every fit (each path fit and the refit), as :class:`GSUClassifier`'s.

    Attributes are those of :class:`GSUClassifierCV`, with a :class:`Classifier` as ``best_estimator_``.

    >>> import numpy as np
    >>> from usvm import ClassifierCV
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(1, 1, (40, 2)), rng.normal(-1, 1, (40, 2))])
    >>> y = np.repeat([1, 0], 40)
    >>> ClassifierCV(method="logistic", lams=[1e-3, 1e-1, 10.0], cv=4).fit(X, y).lam_ in (1e-3, 1e-1)
    True
    """

    def __init__(
        self,
        method: str = "logistic",
        params: dict[str, Any] | None = None,
        *,
        lams: Any = None,
        cv: Any = 5,
        seed: int = 0,
        verbose: int = 0,
        callback: Any = None,
    ) -> None:
        self.method = method
        self.params = params
        self.lams = lams
        self.cv = cv
        self.seed = seed
        self.verbose = verbose
        self.callback = callback

    def _estimator(self, value: float) -> Classifier:
        params = {**(self.params or {}), "regularization": {"lambda": value}}
        return Classifier(
            method=self.method, params=params, seed=self.seed, verbose=self.verbose, callback=self.callback
        )

    def fit(self, X: Any, y: Any, *, X_cov: Any = None, sample_weight: Any = None) -> ClassifierCV:
        """Cross-validates every λ of ``lams`` (arguments as :meth:`Classifier.fit`); refits the best."""
        if "regularization" in (self.params or {}):
            raise ValueError("ClassifierCV sets regularization along its path; give the candidates as lams")
        return self._path_fit(X, y, X_cov, sample_weight)
