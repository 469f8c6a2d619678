"""Metadata routing: X_cov (and sample_weight) are split with X by cross-validation tools."""

import numpy as np
import pytest
import sklearn
from numpy.testing import assert_allclose
from sklearn.exceptions import UnsetMetadataPassedError
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_predict, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from usvm import GSUClassifier, LowRankCovariance

LAMS = [1e-3, 1e-2, 1e-1, 1.0]


@pytest.fixture(autouse=True)
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


def manual_cv_scores(X, y, V, lam, cv, **fit_params):
    scores = []
    for train, test in cv.split(X, y):
        cov = V[train] if not isinstance(V, tuple) else (V[0][train], V[1][train])
        clf = GSUClassifier(lam=lam).fit(X[train], y[train], X_cov=cov, **fit_params)
        scores.append(clf.score(X[test], y[test]))
    return np.array(scores)


def test_grid_search_routes_covariances(data):
    X, y, V = data
    V = V * 4  # strong uncertainty, so that a wrong split would show
    cv = StratifiedKFold(4, shuffle=True, random_state=0)
    search = GridSearchCV(GSUClassifier().set_fit_request(X_cov=True), {"lam": LAMS}, cv=cv)
    search.fit(X, y, X_cov=V)
    for k, lam in enumerate(LAMS):
        expected = manual_cv_scores(X, y, V, lam, cv)
        assert_allclose(search.cv_results_["mean_test_score"][k], expected.mean(), rtol=1e-12)
    # the refit on all data used the covariances too
    best = GSUClassifier(lam=search.best_params_["lam"]).fit(X, y, X_cov=V)
    assert_allclose(search.best_estimator_.coef_, best.coef_, rtol=1e-12)
    # and without them it would have been different
    assert not np.allclose(GSUClassifier(lam=search.best_params_["lam"]).fit(X, y).coef_, best.coef_)


def test_cross_val_score_routes_low_rank_and_weights(data):
    X, y, V = data
    n, d = X.shape
    rng = np.random.default_rng(5)
    cov = LowRankCovariance(rng.normal(0, 0.5, (n, d, 2)), V)
    w = rng.uniform(0.5, 2.0, n)
    cv = StratifiedKFold(3, shuffle=True, random_state=1)
    clf = (
        GSUClassifier(lam=0.01)
        .set_fit_request(X_cov=True, sample_weight=True)
        .set_score_request(sample_weight=False)
    )
    got = cross_val_score(clf, X, y, cv=cv, params={"X_cov": cov, "sample_weight": w})
    expected = []
    for train, test in cv.split(X, y):
        fold = GSUClassifier(lam=0.01).fit(X[train], y[train], X_cov=cov[train], sample_weight=w[train])
        expected.append(fold.score(X[test], y[test]))
    assert_allclose(got, expected, rtol=1e-12)


def test_pipeline_and_predict_proba_routing(data):
    X, y, V = data
    clf = GSUClassifier(probability=True).set_fit_request(X_cov=True).set_predict_proba_request(X_cov=True)
    pipe = make_pipeline(StandardScaler(with_mean=False, with_std=False), clf)
    P = cross_val_predict(pipe, X, y, cv=3, method="predict_proba", params={"X_cov": V})
    assert P.shape == (len(y), 2)
    assert_allclose(P.sum(1), 1.0)


def test_covariances_must_be_requested(data):
    X, y, V = data
    with pytest.raises(UnsetMetadataPassedError):
        GridSearchCV(GSUClassifier(), {"lam": LAMS}, cv=3).fit(X, y, X_cov=V)


def test_low_rank_tuple_is_not_routable(data):
    X, y, V = data
    n, d = X.shape
    pair = (np.ones((n, d, 1)), V)
    GSUClassifier().fit(X, y, X_cov=pair)  # fine without cross-validation
    clf = GSUClassifier().set_fit_request(X_cov=True)
    with pytest.raises(ValueError, match="pass a LowRankCovariance instead"):
        cross_val_score(clf, X, y, cv=3, params={"X_cov": pair}, error_score="raise")
