"""Paper 004's Table 1 baselines from Python: L2-SVM+'s dual against an independent cvxpy solve on six
random problems, RSVM-RHHQ's monotone half-quadratic trace and its η → 0 limit (the kernel SVM), the
generic ``Classifier`` reaching both through the registry, and typed errors for bad input."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import usvm
from usvm import KernelSVMClassifier, L2SVMPlusClassifier, RescaledHingeSVMClassifier


def lupi(seed, n):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], n // 2)
    s = np.where(y == 1, 1.0, -1.0)
    X = np.column_stack([s + 1.5 * rng.normal(size=n), 1.5 * rng.normal(size=(n, 2))])
    X_star = np.column_stack([s + 0.3 * rng.normal(size=n), 0.3 * rng.normal(size=n)])
    return X, y, X_star


def rbf(A, gamma):
    d2 = ((A[:, None, :] - A[None, :, :]) ** 2).sum(-1)
    return np.exp(-gamma * d2)


@pytest.mark.parametrize(
    "seed,n,C,rho",
    [
        (1, 20, 1.0, 1.0),
        (2, 30, 10.0, 0.1),
        (3, 40, 0.1, 10.0),
        (4, 50, 1.0, 0.01),
        (5, 60, 100.0, 1.0),
        (6, 70, 1.0, 100.0),
    ],
)
def test_l2svmplus_dual_matches_cvxpy(seed, n, C, rho):
    X, y, X_star = lupi(seed, n)
    clf = L2SVMPlusClassifier(C=C, rho=rho, gamma=0.3, gamma_star=0.7, tol=1e-12).fit(X, y, X_star=X_star)
    assert clf.converged_.all()
    # Q = K̄∘yyᵀ + H, H = (1/C)[I − (I + (C/ρ)K̄*)⁻¹] (the authors' formula; the core uses eigen + Cholesky).
    k_bar, k_star_bar = rbf(X, 0.3) + 1.0, rbf(X_star, 0.7) + 1.0
    H = (np.eye(n) - np.linalg.inv(np.eye(n) + (C / rho) * k_star_bar)) / C
    s = np.where(y == 1, 1.0, -1.0)
    Q = k_bar * np.outer(s, s) + H
    Q = 0.5 * (Q + Q.T)
    a = cp.Variable(n)
    problem = cp.Problem(cp.Minimize(0.5 * cp.quad_form(a, cp.psd_wrap(Q))), [cp.sum(a) == 1, a >= 0])
    problem.solve(solver=cp.CLARABEL, tol_gap_abs=1e-14, tol_gap_rel=1e-14, tol_feas=1e-13)
    ours = -clf.objective_[0]
    assert ours == pytest.approx(problem.value, rel=1e-8)
    assert clf.reports_[0]["duality_gap"] <= 1e-8


def noisy_blobs(seed, n):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], n // 2)
    X = np.where(y == 1, 1.0, -1.0)[:, None] + 0.8 * rng.normal(size=(n, 2))
    y[::7] = 1 - y[::7]
    return X, y


@pytest.mark.parametrize("eta", [0.5, 2.0, 10.0])
@pytest.mark.parametrize("start", ["zero", "svm", "best"])
def test_rhhq_trace_never_rises(eta, start):
    X, y = noisy_blobs(3, 60)
    clf = RescaledHingeSVMClassifier(C=10.0, eta=eta, gamma=0.5, tol=1e-9, start=start).fit(X, y)
    trace = np.array(clf.reports_[0]["objective_trace"])
    assert np.all(np.diff(trace) <= 0) and clf.objective_[0] == trace[-1]
    if start == "zero":
        assert len(trace) >= 3 and trace[-1] < trace[0]


def digits_plus(n=80, seed=0):
    """80 of the 5s and 8s of scikit-learn's 8 x 8 digits, pooled to 4 x 4 and L1-normalised (the
    digits-plus task of paper 004's Table 1 protocol)."""
    from sklearn.datasets import load_digits

    d = load_digits()
    keep = np.isin(d.target, [5, 8])
    img = d.images[keep].reshape(-1, 4, 2, 4, 2).mean(axis=(2, 4)).reshape(-1, 16)
    idx = np.random.default_rng(seed).permutation(len(img))[:n]
    X = img[idx] / img[idx].sum(axis=1, keepdims=True)
    return X, d.target[keep][idx]


def test_rhhq_from_zero_is_degenerate_at_large_eta_and_warns():
    X, y = digits_plus()
    with pytest.warns(usvm.DegenerateFitWarning, match="degenerate: the classifier predicts one class"):
        zero = RescaledHingeSVMClassifier(C=10.0, eta=10.0, gamma=10.0, start="zero").fit(X, y)
    assert zero.reports_[0]["degenerate"] and len(np.unique(zero.predict(X))) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", usvm.DegenerateFitWarning)
        svm = RescaledHingeSVMClassifier(C=10.0, eta=10.0, gamma=10.0).fit(X, y)
        params = {"eta": 10.0, "start": "best", "regularization": {"C": 10.0}, "kernel": {"type": "rbf", "gamma": 10.0}}
        best = usvm.Classifier(method="rsvm-rhhq", params=params).fit(X, y)
    assert not svm.reports_[0]["degenerate"] and len(np.unique(svm.predict(X))) == 2
    assert svm.objective_[0] < 0.5 * zero.objective_[0]
    assert best.reports_[0]["degenerate"] is False and best.objective_[0] <= svm.objective_[0]
    with pytest.raises(ValueError, match="start must be one of"):
        RescaledHingeSVMClassifier(start="random").fit(X, y)


def test_rhhq_with_small_eta_is_the_kernel_svm():
    X, y = noisy_blobs(4, 50)
    w = 0.5 + (np.arange(50) % 4) * 0.5
    a = RescaledHingeSVMClassifier(C=3.0, eta=1e-9, gamma=0.7, tol=1e-12, svm_tol=1e-10)
    a.fit(X, y, sample_weight=w)
    b = KernelSVMClassifier(C=3.0, gamma=0.7, tol=1e-10).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-6)


def test_generic_classifier_reaches_both_through_the_registry():
    X, y, X_star = lupi(7, 40)
    for method, extra in [("l2svmplus", {"X_star": X_star}), ("rsvm-rhhq", {})]:
        clf = usvm.Classifier(method=method, params={"rho": 0.5} if method == "l2svmplus" else {"eta": 2.0})
        clf.fit(X, y, **extra)
        assert clf.model_.method == method and clf.score(X, y) > 0.7
    assert "l2svmplus" in usvm.METHODS and "rsvm-rhhq" in usvm.METHODS


def test_bad_input_is_a_typed_error():
    X, y, X_star = lupi(8, 20)
    with pytest.raises(ValueError, match="X_star has 5 rows"):
        L2SVMPlusClassifier().fit(X, y, X_star=X_star[:5])
    with pytest.raises(ValueError, match="rho"):
        L2SVMPlusClassifier(rho=0.0).fit(X, y, X_star=X_star)
    with pytest.raises(usvm.InvalidParameterError, match="rho"):
        usvm.Classifier(method="l2svmplus", params={"rho": -1.0}).fit(X, y, X_star=X_star)
    with pytest.raises(ValueError, match="eta"):
        RescaledHingeSVMClassifier(eta=0.0).fit(X, y)
    with pytest.raises(usvm.InvalidParameterError, match="eta"):
        usvm.Classifier(method="rsvm-rhhq", params={"eta": -2.0}).fit(X, y)


SMO_ACCURACY = (
    "each weighted SVM of the half-quadratic rounds is solved to a KKT violation of svm_tol (default 1e-6), "
    "so weights and repeated rows give decision values 7e-7 to 1e-6 apart on the check's data, above its "
    "rtol=1e-7; the svm_tol=1e-8 instance passes this check"
)


def expected_failed_checks(estimator):
    if estimator.svm_tol < 1e-7:
        return {}
    return dict.fromkeys(
        (
            "check_sample_weight_equivalence_on_dense_data",
            "check_sample_weight_equivalence_on_sparse_data",
        ),
        SMO_ACCURACY,
    )


@parametrize_with_checks(
    [
        RescaledHingeSVMClassifier(),
        RescaledHingeSVMClassifier(eta=3.0, kernel="linear"),
        RescaledHingeSVMClassifier(svm_tol=1e-8),
    ],
    expected_failed_checks=expected_failed_checks,
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)
