"""The *CV estimators (GSUClassifierCV, GSUSquaredHingeClassifierCV, BasisExpansionClassifierCV,
ClassifierCV): the warm-started paths pick the value GridSearchCV picks over the same grid and folds, with
the same held-out scores, the refitted model is the wrapped estimator's at that value, and the paths take
fewer iterations than cold fits."""

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, StratifiedKFold

from usvm import (
    BasisExpansionClassifier,
    BasisExpansionClassifierCV,
    Classifier,
    ClassifierCV,
    GSUClassifier,
    GSUClassifierCV,
    GSUSquaredHingeClassifier,
    GSUSquaredHingeClassifierCV,
)


def blobs(n=240, d=5, classes=2, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, n)
    X = rng.normal(size=(classes, d))[y] * 0.8 + rng.normal(size=(n, d))
    V = rng.uniform(0.1, 1.0, size=(n, d))
    return X, y, V


@pytest.mark.parametrize("classes", [2, 3])
def test_picks_the_lambda_grid_search_picks(classes):
    X, y, V = blobs(classes=classes, seed=classes)
    lams = 2.0 ** np.arange(-10, 3)
    cv = GSUClassifierCV(lams=lams, tol=1e-8).fit(X, y, X_cov=V)
    with sklearn.config_context(enable_metadata_routing=True):
        grid = GridSearchCV(GSUClassifier(tol=1e-8).set_fit_request(X_cov=True), {"lam": list(lams)})
        grid.fit(X, y, X_cov=V)
    assert cv.lam_ == grid.best_params_["lam"]
    np.testing.assert_allclose(cv.mean_scores_, grid.cv_results_["mean_test_score"], atol=1e-12)
    ref = GSUClassifier(lam=cv.lam_, tol=1e-8).fit(X, y, X_cov=V)
    np.testing.assert_allclose(cv.coef_, ref.coef_, rtol=1e-12)
    np.testing.assert_array_equal(cv.predict(X), ref.predict(X))
    # The path's fits after the first start warm: fewer Newton iterations than cold fits at the same λ.
    cold = sum(
        GSUClassifier(lam=lam, tol=1e-8).fit(X[t], y[t], X_cov=V[t]).n_iter_
        for t, _ in StratifiedKFold(5).split(X, y)
        for lam in lams
    )
    assert cv.n_iter_path_.sum() < cold


def test_folds_weights_and_bad_grids():
    X, y, V = blobs(seed=7)
    w = np.random.default_rng(1).uniform(0.5, 2.0, len(y))
    cv = GSUClassifierCV(lams=[1e-3, 1e-1], cv=StratifiedKFold(3, shuffle=True, random_state=0))
    cv.fit(X, y, X_cov=V, sample_weight=w)
    assert cv.scores_.shape == (3, 2) and cv.lam_ in (1e-3, 1e-1)
    assert clone(cv).get_params()["lams"] == [1e-3, 1e-1]
    for bad in ([], [0.1, -1.0], [[0.1]]):
        with pytest.raises(ValueError):
            GSUClassifierCV(lams=bad).fit(X, y)


# (the CV estimator, the wrapped estimator, its path parameter, the candidates, whether it takes X_cov)
FAMILIES = [
    (
        GSUSquaredHingeClassifierCV(tol=1e-9),
        GSUSquaredHingeClassifier(tol=1e-9),
        "lam",
        2.0 ** np.arange(-10, 3),
        True,
    ),
    (
        GSUSquaredHingeClassifierCV(solver="newton", tol=1e-9),
        GSUSquaredHingeClassifier(solver="newton", tol=1e-9),
        "lam",
        2.0 ** np.arange(-10, 3),
        True,
    ),
    (
        BasisExpansionClassifierCV(basis_size=0.3, tol=1e-10),
        BasisExpansionClassifier(basis_size=0.3, tol=1e-10),
        "C",
        2.0 ** np.arange(-4, 7),
        False,
    ),
]


@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("family", range(len(FAMILIES)))
def test_every_family_picks_what_grid_search_picks(family, classes):
    cv_est, base, param, values, takes_cov = FAMILIES[family]
    X, y, V = blobs(classes=classes, seed=10 + classes)
    fit_args = {"X_cov": V} if takes_cov else {}
    cv = clone(cv_est).set_params(**{param + "s": values}).fit(X, y, **fit_args)
    with sklearn.config_context(enable_metadata_routing=True):
        est = clone(base).set_fit_request(X_cov=True) if takes_cov else clone(base)
        grid = GridSearchCV(est, {param: list(values)}).fit(X, y, **fit_args)
    assert getattr(cv, param + "_") == grid.best_params_[param]
    np.testing.assert_allclose(cv.mean_scores_, grid.cv_results_["mean_test_score"], atol=1e-12)
    ref = clone(base).set_params(**{param: getattr(cv, param + "_")}).fit(X, y, **fit_args)
    np.testing.assert_allclose(cv.coef_, ref.coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(cv.predict(X), ref.predict(X))
    cold = sum(
        clone(base).set_params(**{param: v}).fit(X[t], y[t], **({"X_cov": V[t]} if takes_cov else {})).n_iter_
        for t, _ in StratifiedKFold(5).split(X, y)
        for v in values
    )
    assert cv.n_iter_path_.sum() < cold


def test_classifier_cv_runs_logistic_regression_on_the_registry():
    X, y, _ = blobs(seed=3)
    lams = 2.0 ** np.arange(-10, 3)
    cv = ClassifierCV(method="logistic", params={"solver": {"tol": 1e-10}}, lams=lams).fit(X, y)
    grid = GridSearchCV(
        Classifier(method="logistic"),
        {"params": [{"solver": {"tol": 1e-10}, "regularization": {"lambda": lam}} for lam in lams]},
    ).fit(X, y)
    assert cv.lam_ == grid.best_params_["params"]["regularization"]["lambda"]
    np.testing.assert_allclose(cv.mean_scores_, grid.cv_results_["mean_test_score"], atol=1e-12)
    assert cv.model_.method == "logistic"
    with pytest.raises(ValueError, match="lams"):
        ClassifierCV(params={"regularization": {"C": 1.0}}).fit(X, y)
