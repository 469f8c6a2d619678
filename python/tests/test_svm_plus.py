"""SVM+ / R-SVM+ / L2-SVM+ estimators: fit/predict, the dual against cvxpy, X_star as routed metadata
(Pipeline, GridSearchCV, cross_val_score), the no-privileged-information mode (the plain kernel SVM, with a
warning), bad input, and scikit-learn's estimator checks (which fit without X_star, i.e. in that mode)."""

import warnings

import numpy as np
import pytest
import sklearn
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

import usvm
from usvm import (
    KernelSVMClassifier,
    L2SVMPlusClassifier,
    NoPrivilegedInformationWarning,
    RobustSVMPlusClassifier,
    SVMPlusClassifier,
)

LUPI = [SVMPlusClassifier, RobustSVMPlusClassifier, L2SVMPlusClassifier]


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
    objective = (
        cp.sum(a)
        - 0.5 * cp.quad_form(cp.multiply(a, y), cp.psd_wrap(K))
        - cp.quad_form(v, cp.psd_wrap(Ks)) / (2 * rho)
    )
    problem = cp.Problem(cp.Maximize(objective), [cp.sum(v) == 0, y @ a == 0, a >= 0, b >= 0])
    problem.solve(solver=cp.CLARABEL)
    assert abs(clf.objective_[0] - problem.value) < 1e-5 * max(1.0, abs(problem.value))


def test_three_classes_and_linear_kernel():
    X, y, X_star = lupi_problem(60)
    y3 = np.where(X[:, 1] > 0.3, 2, y)
    clf = SVMPlusClassifier(kernel="linear").fit(X, y3, X_star=X_star)
    assert clf.decision_function(X).shape == (60, 3)
    assert clf.dual_coef_.shape[0] == 3


@pytest.mark.parametrize("cls", LUPI)
def test_metadata_routing_splits_x_star(cls):
    X, y, X_star = lupi_problem(60)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoPrivilegedInformationWarning)  # X_star reaches every fit
        with sklearn.config_context(enable_metadata_routing=True):
            clf = cls().set_fit_request(X_star=True)
            search = GridSearchCV(clf, {"rho": [0.1, 1.0]}, cv=3).fit(X, y, X_star=X_star)
            # Each fold's fit gets its own rows of X_star: the scores of a loop over the same folds.
            folds = KFold(3, shuffle=True, random_state=0)
            scores = cross_val_score(clf, X, y, cv=folds, params={"X_star": X_star})
            pipe = make_pipeline(StandardScaler(), cls().set_fit_request(X_star=True))
            pipe.fit(X, y, X_star=X_star)
    assert search.best_params_["rho"] in (0.1, 1.0)
    best = cls(rho=search.best_params_["rho"]).fit(X, y, X_star=X_star)
    np.testing.assert_array_equal(search.best_estimator_.decision_function(X), best.decision_function(X))
    loop = [cls().fit(X[tr], y[tr], X_star=X_star[tr]).score(X[te], y[te]) for tr, te in folds.split(X, y)]
    np.testing.assert_array_equal(scores, loop)
    Z = StandardScaler().fit_transform(X)
    np.testing.assert_array_equal(
        pipe.decision_function(X), cls().fit(Z, y, X_star=X_star).decision_function(Z)
    )
    assert pipe[-1].gamma_star_ > 0  # the correcting space was used


KERNELS = [
    {"kernel": "rbf", "gamma": 0.7},
    {"kernel": "linear"},
    {"kernel": "poly", "gamma": 0.5, "degree": 2},
]


@pytest.mark.parametrize("cls", LUPI)
@pytest.mark.parametrize("kernel", KERNELS)
def test_without_x_star_it_is_the_kernel_svm_and_warns(cls, kernel):
    X, y, X_star = lupi_problem(60)
    Xt, _, _ = lupi_problem(50, seed=3)
    with pytest.warns(NoPrivilegedInformationWarning, match="without X_star"):
        plain = cls(C=3.0, tol=1e-6, **kernel).fit(X, y)
    svm = KernelSVMClassifier(C=3.0, tol=1e-6, **kernel).fit(X, y)
    np.testing.assert_allclose(plain.decision_function(Xt), svm.decision_function(Xt), rtol=0, atol=1e-8)
    np.testing.assert_array_equal(plain.support_, svm.support_)
    assert plain.gamma_star_ is None
    # With X_star: the privileged-information model, no warning, and no support_ left from the plain fit.
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoPrivilegedInformationWarning)
        lupi = plain.fit(X, y, X_star=X_star)
    assert not hasattr(lupi, "support_") and lupi.gamma_star_ > 0
    assert np.abs(lupi.decision_function(Xt) - svm.decision_function(Xt)).max() > 1e-4


def test_default_gamma_without_x_star_is_svmplus_own():
    X, y, _ = lupi_problem(40)
    with pytest.warns(NoPrivilegedInformationWarning):
        plain = SVMPlusClassifier().fit(X, y)
    assert plain.gamma_ == usvm._usvm.default_gaussian_gamma(X)  # 1/D, as with X_star
    svm = KernelSVMClassifier(gamma=plain.gamma_, tol=1e-6).fit(X, y)  # SVMPlusClassifier's default tol
    np.testing.assert_allclose(plain.decision_function(X), svm.decision_function(X), rtol=0, atol=1e-8)


def test_generic_classifier_warns_without_x_star():
    X, y, X_star = lupi_problem(40)
    with pytest.warns(NoPrivilegedInformationWarning, match=r"Classifier \(l2svmplus\)"):
        clf = usvm.Classifier(method="l2svmplus").fit(X, y)
    assert clf.model_.method == "l2svmplus"
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoPrivilegedInformationWarning)
        usvm.Classifier(method="l2svmplus").fit(X, y, X_star=X_star)
        usvm.Classifier(method="svm").fit(X, y)  # not a privileged-information method


def test_bad_input():
    X, y, X_star = lupi_problem(20)
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


@pytest.mark.filterwarnings("ignore::usvm.NoPrivilegedInformationWarning")
@parametrize_with_checks(
    [
        SVMPlusClassifier(),
        RobustSVMPlusClassifier(),
        L2SVMPlusClassifier(),
        SVMPlusClassifier(kernel="linear", tol=1e-8),
    ]
)
def test_sklearn_estimator_checks(estimator, check):
    """The checks fit without X_star: the no-privileged-information mode (every check passes)."""
    check(estimator)
