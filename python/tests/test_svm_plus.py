"""SVM+ / R-SVM+ estimators: fit/predict, the ρ → 0 limit against scikit-learn's SVC, metadata routing of
X_star, and bad input.

scikit-learn's estimator checks are not run: they call ``fit(X, y)`` without the privileged features, which
SVM+ needs by definition (``fit`` raises a ValueError naming X_star)."""

import numpy as np
import pytest
import sklearn
from sklearn.model_selection import GridSearchCV
from sklearn.metrics.pairwise import rbf_kernel

from usvm import RobustSVMPlusClassifier, SVMPlusClassifier


def lupi_problem(n, seed=0):
    """x = 0.6 y + noise; x* = how far each example lies on the wrong side (the slack oracle)."""
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 2 == 0, 1, -1)
    e = rng.uniform(-0.75, 0.75, n)
    X = np.column_stack([0.6 * y + e, rng.uniform(-0.75, 0.75, n)])
    X_star = (-y * e)[:, None]
    return X, y, X_star


@pytest.mark.parametrize("cls", [SVMPlusClassifier, RobustSVMPlusClassifier])
def test_fit_predict(cls):
    X, y, X_star = lupi_problem(80)
    Xt, yt, _ = lupi_problem(200, seed=1)
    clf = cls(C=1.0).fit(X, y, X_star=X_star)
    assert clf.converged_.all()
    assert clf.score(Xt, yt) > 0.75
    assert clf.gamma_ > 0 and clf.gamma_star_ > 0
    assert set(clf.predict(Xt)) <= {-1, 1}
    labels = np.where(y > 0, "pos", "neg")
    assert list(cls(C=1.0).fit(X, labels, X_star=X_star).predict(X[:4])) == list(
        np.where(clf.predict(X[:4]) > 0, "pos", "neg")
    )


def test_dual_objective_matches_cvxpy():
    cp = pytest.importorskip("cvxpy")
    X, y, X_star = lupi_problem(30)
    C, rho = 2.0, 0.5
    clf = SVMPlusClassifier(C=C, rho=rho, tol=1e-9).fit(X, y, X_star=X_star)
    K = rbf_kernel(X, gamma=clf.gamma_)
    Ks = rbf_kernel(X_star, gamma=clf.gamma_star_)
    a, b = cp.Variable(30), cp.Variable(30)
    v = a + b - C
    objective = cp.sum(a) - 0.5 * cp.quad_form(cp.multiply(a, y), cp.psd_wrap(K)) - cp.quad_form(
        v, cp.psd_wrap(Ks)
    ) / (2 * rho)
    problem = cp.Problem(cp.Maximize(objective), [cp.sum(v) == 0, y @ a == 0, a >= 0, b >= 0])
    problem.solve(solver=cp.CLARABEL)
    assert abs(clf.objective_[0] - problem.value) < 1e-5 * max(1.0, abs(problem.value))


def test_three_classes_and_linear_kernel():
    X, y, X_star = lupi_problem(60)
    y3 = np.where(X[:, 1] > 0.3, 2, y)
    clf = SVMPlusClassifier(kernel="linear").fit(X, y3, X_star=X_star)
    assert clf.decision_function(X).shape == (60, 3)
    assert clf.dual_coef_.shape[0] == 3


def test_metadata_routing_splits_x_star():
    X, y, X_star = lupi_problem(60)
    with sklearn.config_context(enable_metadata_routing=True):
        clf = SVMPlusClassifier().set_fit_request(X_star=True)
        search = GridSearchCV(clf, {"rho": [0.1, 1.0]}, cv=3).fit(X, y, X_star=X_star)
    assert search.best_params_["rho"] in (0.1, 1.0)


def test_bad_input():
    X, y, X_star = lupi_problem(20)
    with pytest.raises(ValueError, match="X_star"):
        SVMPlusClassifier().fit(X, y)
    with pytest.raises(ValueError, match="rows"):
        SVMPlusClassifier().fit(X, y, X_star=X_star[:5])
    with pytest.raises(ValueError, match="rho"):
        SVMPlusClassifier(rho=0.0).fit(X, y, X_star=X_star)
    with pytest.raises(ValueError, match="sigma_prime"):
        RobustSVMPlusClassifier(sigma_prime=-1.0).fit(X, y, X_star=X_star)
    bad = X_star.copy()
    bad[3, 0] = np.nan
    with pytest.raises(ValueError):
        SVMPlusClassifier().fit(X, y, X_star=bad)
    with pytest.raises(ValueError, match="2 classes"):
        SVMPlusClassifier().fit(X, np.ones(20), X_star=X_star)
