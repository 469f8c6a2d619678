"""Σ → 0: GSUClassifier is the hinge-loss SVM, checked against LIBLINEAR (LinearSVC) and LIBSVM (SVC).

Objectives in the C-form P(w, b) = ½‖w‖² + C Σ_i max(0, 1 - y_i(wᵀx_i + b)); ours minimises
J = λ/2‖w‖² + (1/n) Σ_i L_i with λ = 1/(C n), i.e. P = C n J. LinearSVC regularises its bias (an extra
feature), so it is compared without intercept; SVC(kernel="linear") has an unregularised bias, like ours:
there the reference is LIBSVM's dual value D(α) = Σα_i - ½‖Σ α_i y_i x_i‖² (a lower bound on the optimum for
any feasible α), since the primal value at SVC's (w, b) suffers from the bias LIBSVM averages over free
support vectors (2.5e-6 above the optimum at C = 100).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.svm import SVC, LinearSVC

from usvm import GSUClassifier


def primal(X, y, w, b, C):
    s = np.where(y == 1, 1.0, -1.0)
    return 0.5 * w @ w + C * np.maximum(0.0, 1 - s * (X @ w + b)).sum()


def problem(n=300, d=6, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    X = rng.normal(0, 1, (n, d)) + np.where(y[:, None] == 1, 0.6, -0.6)
    return X, y


@pytest.mark.parametrize("C", [0.01, 1.0, 100.0])
@pytest.mark.parametrize("sparse", [False, True])
def test_matches_liblinear_without_intercept(C, sparse):
    X, y = problem()
    Xi = sp.csr_matrix(X) if sparse else X
    # (tol=1e-12 makes LIBLINEAR's shrinking stall at max_iter; 1e-10 converges to ~1e-10 of the optimum)
    ll = LinearSVC(
        loss="hinge", C=C, dual=True, tol=1e-10, max_iter=10**6, fit_intercept=False, random_state=0
    ).fit(Xi, y)
    ours = GSUClassifier(C=C, method="hinge", fit_intercept=False).fit(Xi, y)
    p_ll = primal(X, y, ll.coef_[0], 0.0, C)
    p_ours = primal(X, y, ours.coef_[0], 0.0, C)
    assert ours.converged_.all()
    assert abs(p_ours - p_ll) <= 1e-6 * p_ll, (p_ours, p_ll)
    # our reported objective is the same function: P = C n J
    assert ours.objective_[0] * C * len(y) == pytest.approx(p_ours, rel=1e-10)
    # GSU with vanishing covariances is the same problem
    gsu = GSUClassifier(C=C, fit_intercept=False).fit(Xi, y, X_cov=np.full(X.shape, 1e-20))
    assert abs(primal(X, y, gsu.coef_[0], 0.0, C) - p_ll) <= 1e-6 * p_ll


@pytest.mark.parametrize("C", [0.01, 1.0, 100.0])
def test_matches_libsvm_with_unregularised_bias(C):
    X, y = problem(seed=1)
    svc = SVC(kernel="linear", C=C, tol=1e-12).fit(X, y)
    s = np.where(y == 1, 1.0, -1.0)
    alpha = np.zeros(len(y))
    alpha[svc.support_] = svc.dual_coef_[0] * s[svc.support_]  # dual_coef_ holds α_i y_i
    assert abs(alpha @ s) < 1e-9 * C and alpha.min() >= 0 and alpha.max() <= C * (1 + 1e-12)
    v = (alpha * s) @ X
    dual = alpha.sum() - 0.5 * v @ v
    ours = GSUClassifier(C=C).fit(X, y)  # no X_cov: Σ = 0
    p_ours = primal(X, y, ours.coef_[0], ours.intercept_[0], C)
    assert ours.converged_.all()
    # weak duality: dual ≤ optimum ≤ p_ours; the gap certifies p_ours within 1e-6 of the optimum
    assert dual <= p_ours * (1 + 1e-12)
    assert p_ours - dual <= 1e-6 * p_ours, (p_ours, dual)
    assert p_ours <= primal(X, y, svc.coef_[0], svc.intercept_[0], C) * (1 + 1e-12)
    assert np.mean(ours.predict(X) == svc.predict(X)) > 0.99
