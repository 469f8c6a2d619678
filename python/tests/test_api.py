"""The Python API: input forms, covariance forms, errors, GIL, pickling, probabilities."""

import doctest
import json
import pickle
import threading
import time
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import erfc
from sklearn.base import clone

import usvm
from usvm import GSUClassifier, LowRankCovariance, _usvm


def gsu_objective(X, y, coef, intercept, variances, lam, weights=None):
    """Independent numpy evaluation of λ/2‖w‖² + (1/ℓ) Σ c_i L(d_i, σ_i), diagonal Σ_i."""
    s = np.where(y == y.max(), 1.0, -1.0)
    d = 1 - s * (X @ coef + intercept)
    sigma = np.sqrt(variances @ coef**2)
    t = d / sigma
    cdf = 0.5 * erfc(-t / np.sqrt(2))
    pdf = np.exp(-0.5 * t * t) / np.sqrt(2 * np.pi)
    loss = d * cdf + sigma * pdf
    c = np.ones(len(y)) if weights is None else weights
    return 0.5 * lam * coef @ coef + np.mean(c * loss)


def test_docstrings_run():
    for module in (usvm, usvm._estimators):
        result = doctest.testmod(module)
        assert result.failed == 0 and result.attempted > 0


def test_version():
    assert usvm.__version__ == "0.1.0"


def test_coef_is_a_read_only_view_of_the_model_that_outlives_the_estimator(data):
    # No copy of the coefficients (16 MB for a hyperplane in 2·10⁶ features): a view of the model's own
    # array, read-only because the model is immutable, keeping the model alive.
    X, y, _ = data
    clf = usvm.GSUClassifier(method="hinge").fit(X, y)
    coef = clf.coef_
    assert not coef.flags.writeable and not coef.flags.owndata
    with pytest.raises(ValueError, match="read-only"):
        coef[0, 0] = 1.0
    with pytest.raises(ValueError):
        coef.setflags(write=True)
    expected, intercept = coef.copy(), clf.intercept_[0]
    assert_allclose(X @ coef.ravel() + intercept, clf.decision_function(X), rtol=1e-12, atol=1e-12)
    del clf
    assert_array_equal(coef, expected)  # the model (the view's base) is still alive
    restored = pickle.loads(pickle.dumps(coef))
    assert_array_equal(restored, expected)


# ------------------------------------------------------------------------------------------ inputs


@pytest.mark.parametrize(
    "name",
    [
        "GSUClassifier",
        "GSUSquaredHingeClassifier",
        "KernelGSUClassifier",
        "KernelSVMClassifier",
        "BasisExpansionClassifier",
        "TSVCClassifier",
        "SVMPlusClassifier",
        "RobustSVMPlusClassifier",
        "L2SVMPlusClassifier",
        "RescaledHingeSVMClassifier",
        "Classifier",
    ],
)
def test_a_fortran_ordered_array_fits_every_estimator_as_a_c_ordered_one(data, name):
    # Column-major float64 reaches the core as a view; its rows are strided walks, so only the order of the
    # sums differs from the C-ordered fit, and the fits agree to within the solvers' stopping tolerances
    # (RSVM-RHHQ's SMO rounds, which stop at a KKT violation of 1e-3, differ the most: 1.5e-5 relative).
    X, y, _ = data
    a = getattr(usvm, name)().fit(X, y)
    b = getattr(usvm, name)().fit(np.asfortranarray(X), y)
    scale = np.abs(a.decision_function(X)).max()
    assert_allclose(b.decision_function(np.asfortranarray(X)), a.decision_function(X), rtol=0, atol=1e-4 * scale)
    assert_array_equal(b.predict(np.asfortranarray(X)), a.predict(X))


def test_dtype_order_and_sparse_inputs_agree(data):
    X, y, V = data
    ref = GSUClassifier().fit(X, y, X_cov=V)
    for Xi in (np.asfortranarray(X), sp.csr_matrix(X), sp.csr_array(X), sp.csc_matrix(X)):
        clf = GSUClassifier().fit(Xi, y, X_cov=np.asfortranarray(V))
        assert_allclose(clf.coef_, ref.coef_, rtol=1e-12, atol=1e-14)
        assert_allclose(clf.intercept_, ref.intercept_, rtol=1e-12, atol=1e-14)
        assert_allclose(clf.decision_function(Xi), ref.decision_function(X), rtol=1e-12, atol=1e-12)
    # float32 is widened exactly: the same as fitting the float64 copy of the float32 values
    X32, V32 = X.astype(np.float32), V.astype(np.float32)
    a = GSUClassifier().fit(X32, y, X_cov=V32)
    b = GSUClassifier().fit(X32.astype(np.float64), y, X_cov=V32.astype(np.float64))
    assert_array_equal(a.coef_, b.coef_)
    # CSR with 64-bit indices and float32 values
    S = sp.csr_matrix(X32)
    S.indices, S.indptr = S.indices.astype(np.int64), S.indptr.astype(np.int64)
    assert_allclose(GSUClassifier().fit(S, y, X_cov=V32).coef_, a.coef_, rtol=1e-12)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_borrowed_csr_fits_as_dense_and_bad_indices_are_errors(data, index_dtype):
    """float64 values with int32 column indices reach the core as views (int64 indices are narrowed to u32):
    the same fit as from the dense rows; a negative or out-of-range index is a DataError naming the array."""
    X, y, V = data
    S = sp.csr_matrix(X)
    S.indices, S.indptr = S.indices.astype(index_dtype), S.indptr.astype(index_dtype)
    dense = GSUClassifier().fit(X, y, X_cov=V)
    assert_allclose(GSUClassifier().fit(S, y, X_cov=V).coef_, dense.coef_, rtol=1e-12, atol=1e-14)
    bad = S.copy()
    bad.indices[0] = -1
    with pytest.raises(usvm.DataError, match="CSR indices"):
        GSUClassifier().fit(bad, y, X_cov=V)
    bad.indices[0] = X.shape[1]
    with pytest.raises(usvm.DataError, match=f"features: expected {X.shape[1]}, found {X.shape[1] + 1}"):
        GSUClassifier().fit(bad, y, X_cov=V)
    if index_dtype == np.int64:
        bad.indices, bad.indptr = bad.indices.astype(np.int64), bad.indptr.astype(np.int64)  # copy() may narrow
        bad.indices[0] = 2**32
        with pytest.raises(usvm.DataError, match="CSR indices: column index 4294967296 exceeds the 32-bit"):
            GSUClassifier().fit(bad, y, X_cov=V)


def test_int32_and_int64_indexed_csr_give_identical_models():
    """The core's columns are u32: int32 indices are borrowed, int64 ones narrowed; on wide data (most
    columns unused, so the solver renumbers the used ones) both fits are the same bits."""
    S = sp.random(300, 50_000, density=4e-4, format="csr", random_state=np.random.default_rng(3))
    y = (S @ np.linspace(-1.0, 1.0, S.shape[1]) > 0).astype(np.int64)
    assert S.indices.dtype == np.int32
    S64 = S.copy()
    S64.indices, S64.indptr = S.indices.astype(np.int64), S.indptr.astype(np.int64)
    a, b = GSUClassifier(lam=1e-3).fit(S, y), GSUClassifier(lam=1e-3).fit(S64, y)
    assert_array_equal(a.coef_, b.coef_)
    assert_array_equal(a.intercept_, b.intercept_)
    assert np.count_nonzero(a.coef_) > 0


def test_covariance_forms_agree(data):
    """One covariance Σ_i = s_i² I stored as isotropic, diagonal (dense and sparse), full and low-rank."""
    X, y, _ = data
    n, d = X.shape
    s2 = np.random.default_rng(3).uniform(0.1, 1.0, n)
    forms = {
        "iso": s2,
        "diag": np.repeat(s2[:, None], d, axis=1),
        "sparse diag": sp.csr_matrix(np.repeat(s2[:, None], d, axis=1)),
        "full": s2[:, None, None] * np.eye(d),
        "low-rank pair": (np.sqrt(s2)[:, None, None] * np.eye(d), None),
        "low-rank diag only": (np.zeros((n, d, 0)), np.repeat(s2[:, None], d, axis=1)),
        "LowRankCovariance": LowRankCovariance(np.sqrt(s2)[:, None, None] * np.eye(d)),
        "full float32 F-order": np.asfortranarray((s2[:, None, None] * np.eye(d)).astype(np.float32)),
    }
    ref = GSUClassifier().fit(X, y, X_cov=forms.pop("iso"))
    for name, cov in forms.items():
        clf = GSUClassifier().fit(X, y, X_cov=cov)
        rtol = 1e-5 if "float32" in name else 1e-8
        assert_allclose(clf.coef_, ref.coef_, rtol=rtol, atol=1e-9, err_msg=name)
        assert_allclose(clf.objective_, ref.objective_, rtol=rtol, err_msg=name)


def test_gsu_objective_matches_independent_numpy(data):
    X, y, V = data
    clf = GSUClassifier(lam=0.05).fit(X, y, X_cov=V)
    w, b = clf.coef_[0], clf.intercept_[0]
    assert clf.converged_.all()
    expected = gsu_objective(X, y, w, b, V, 0.05)
    assert_allclose(clf.objective_[0], expected, rtol=1e-10)
    # the core's objective through the binding
    s = np.where(y == 1, 1.0, -1.0)
    assert_allclose(_usvm.objective(X, s, w, b, cov=V, lam=0.05), expected, rtol=1e-10)
    # optimality: perturbing the solution never lowers the objective
    rng = np.random.default_rng(0)
    for _ in range(10):
        dw = rng.normal(0, 1e-4, w.shape)
        assert gsu_objective(X, y, w + dw, b, V, 0.05) >= expected - 1e-14


def test_C_is_lambda_times_n(data):
    X, y, V = data
    n = len(y)
    a = GSUClassifier(C=2.0).fit(X, y, X_cov=V)
    b = GSUClassifier(lam=1 / (2.0 * n)).fit(X, y, X_cov=V)
    assert_allclose(a.coef_, b.coef_, rtol=1e-12)
    assert a.lam_ == pytest.approx(1 / (2.0 * n))


def test_sample_weight_is_a_weighted_mean(data):
    X, y, V = data
    w = np.random.default_rng(1).integers(1, 4, len(y)).astype(float)
    a = GSUClassifier(tol=1e-10).fit(X, y, X_cov=V, sample_weight=w)
    b = GSUClassifier(tol=1e-10).fit(X, y, X_cov=V, sample_weight=3 * w)  # scale-free in the λ-form
    assert_allclose(a.coef_, b.coef_, rtol=1e-8)
    idx = np.repeat(np.arange(len(y)), w.astype(int))
    c = GSUClassifier(tol=1e-10).fit(X[idx], y[idx], X_cov=V[idx])
    assert_allclose(a.coef_, c.coef_, rtol=1e-7)


def test_methods(data):
    X, y, V = data
    fits = {
        m: GSUClassifier(method=m).fit(X, y, X_cov=V) for m in ("gsu", "hinge", "iso", "sampling", "power")
    }
    # the hinge ignores the covariances
    assert_allclose(fits["hinge"].coef_, GSUClassifier(method="hinge").fit(X, y).coef_, rtol=1e-12)
    # uncertainty changes the solution
    assert not np.allclose(fits["gsu"].coef_, fits["hinge"].coef_, rtol=1e-3)
    for m, clf in fits.items():
        assert clf.score(X, y) > 0.7, m
    # sampling is seeded by random_state
    a = GSUClassifier(method="sampling", random_state=7).fit(X, y, X_cov=V)
    b = GSUClassifier(method="sampling", random_state=7).fit(X, y, X_cov=V)
    c = GSUClassifier(method="sampling", random_state=8).fit(X, y, X_cov=V)
    assert_array_equal(a.coef_, b.coef_)
    assert not np.array_equal(a.coef_, c.coef_)
    # subspace learning with p = 1 keeps every axis: plain GSU
    p1 = GSUClassifier(subspace_variance=1.0).fit(X, y, X_cov=V)
    assert_allclose(p1.coef_, fits["gsu"].coef_, rtol=1e-10)
    # SGD lands near the exact optimum
    sgd = GSUClassifier(solver="sgd", iterations=20000, batch=50).fit(X, y, X_cov=V)
    assert sgd.objective_[0] < 1.05 * fits["gsu"].objective_[0]


def test_vanishing_covariance_is_the_hinge(data):
    X, y, _ = data
    hinge = GSUClassifier(method="hinge").fit(X, y)
    gsu = GSUClassifier().fit(X, y, X_cov=np.full(X.shape, 1e-16))
    assert_allclose(gsu.objective_, hinge.objective_, rtol=1e-6)


def test_multiclass(data3):
    X, y, V = data3
    labels = np.array(["ant", "bee", "cat"])[y]
    clf = GSUClassifier().fit(X, labels, X_cov=V)
    assert_array_equal(clf.classes_, ["ant", "bee", "cat"])
    assert clf.coef_.shape == (3, X.shape[1]) and clf.intercept_.shape == (3,)
    f = clf.decision_function(X)
    assert f.shape == (len(y), 3)
    assert_array_equal(clf.predict(X), clf.classes_[f.argmax(1)])
    assert clf.objective_.shape == (3,) and clf.converged_.all()
    assert clf.score(X, labels) > 0.7


# ------------------------------------------------------------------------------------------ errors


@pytest.mark.parametrize(
    "X_cov, match",
    [
        (lambda n, d: -np.ones((n, d)), "negative variance -1 in covariance of example 0"),
        (lambda n, d: np.ones((n, d + 1)), "X_cov must have shape"),
        (lambda n, d: np.ones((n - 1,)), "X_cov must have shape"),
        (lambda n, d: np.full((n, d), np.nan), "NaN"),
        (lambda n, d: np.tile(np.array([[1.0, 2.0], [0.0, 1.0]]), (n, 1, 1)), "not symmetric"),
        (lambda n, d: np.tile(np.array([[1.0, 2.0], [2.0, 1.0]]), (n, 1, 1)), "not positive semi-definite"),
        (lambda n, d: (np.ones((n, d, 1)), np.ones((n, d + 1))), "low-rank X_cov diagonal"),
    ],
)
def test_bad_covariances_are_value_errors(X_cov, match):
    X = np.array([[0.0, 1.0], [1.0, 2.0], [0.0, -1.0], [1.0, -2.0]])
    with pytest.raises(ValueError, match=match):
        GSUClassifier().fit(X, [1, 1, 0, 0], X_cov=X_cov(4, 2))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("sparse", [False, True])
def test_non_finite_features_are_refused_by_the_core_naming_the_example(bad, sparse):
    # GSUClassifier leaves the check to the core (one pass over X, not two): still a ValueError, now naming
    # the example.
    X = np.array([[0.0, 1.0], [1.0, 2.0], [0.0, -1.0], [1.0, -2.0]])
    X[2, 1] = bad
    X = sp.csr_matrix(X) if sparse else X
    for method in ("gsu", "hinge"):
        with pytest.raises(ValueError, match=rf"non-finite value -?(NaN|inf) in features \(example 2\)"):
            GSUClassifier(method=method).fit(X, [1, 1, 0, 0])


def test_errors():
    X = np.array([[0.0, 1.0], [1.0, 2.0], [0.0, -1.0], [1.0, -2.0]])
    y = [1, 1, 0, 0]
    with pytest.raises(ValueError, match="NaN"):
        GSUClassifier().fit(np.where(X > 1.5, np.nan, X), y)
    with pytest.raises(ValueError, match="method must be one of"):
        GSUClassifier(method="svm").fit(X, y)
    with pytest.raises(ValueError, match="lam must be a positive"):
        GSUClassifier(lam=0).fit(X, y)
    with pytest.raises(ValueError, match="only one class"):
        GSUClassifier().fit(X, [1, 1, 1, 1])
    with pytest.raises(ValueError, match="subspace learning needs diagonal"):
        GSUClassifier(subspace_variance=0.5).fit(X, y, X_cov=np.ones(4))
    with pytest.raises(ValueError, match="X has 3 features"):
        GSUClassifier().fit(X, y).predict(np.ones((2, 3)))
    # The binding itself: Rust errors are ValueError with the core's message, bad types TypeError
    with pytest.raises(ValueError, match=r"invalid parameter lambda = -1: must be positive and finite"):
        _usvm.fit('{"method": "gsu", "regularization": {"lambda": -1.0}}', X, np.array(y, dtype=np.int64))
    with pytest.raises(TypeError, match="X must be a 2-dimensional numpy array of float64 or float32"):
        _usvm.fit('{"method": "gsu"}', X.astype(np.int64), np.array(y, dtype=np.int64))
    with pytest.raises(ValueError, match="a single class"):
        _usvm.fit('{"method": "gsu"}', X, np.zeros(4, dtype=np.int64))


@pytest.mark.parametrize("labels", [[0.5, 0.5, 1.5, 1.5], [1e20, 1e20, 1.0, 1.0]])
def test_continuous_labels_are_refused_as_scikit_learn_refuses_them(labels):
    """Float labels that are not integers (or not their int cast: 1e20) get scikit-learn's own error; the
    check's shortcut takes only the labels it accepts."""
    X = np.array([[0.0, 1.0], [1.0, 2.0], [0.0, -1.0], [1.0, -2.0]])
    with pytest.raises(ValueError, match="Unknown label type"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's on casting 1e20 to int, in scikit-learn's check
        GSUClassifier().fit(X, np.array(labels))


def test_integer_bool_and_integral_float_labels_fit_the_same_model():
    X = np.array([[0.0, 1.0], [1.0, 2.0], [0.0, -1.0], [1.0, -2.0], [0.5, 0.1]])
    labels = ([1, 1, 0, 0, 1], [True, True, False, False, True], [1.0, 1.0, 0.0, 0.0, 1.0])
    fits = [GSUClassifier().fit(X, y) for y in labels]
    for fit in fits[1:]:
        np.testing.assert_array_equal(fit.coef_, fits[0].coef_)
        np.testing.assert_array_equal(fit.predict(X).astype(int), fits[0].predict(X).astype(int))


# ------------------------------------------------------------------------------------------ GIL


def test_fit_releases_the_gil():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40_000, 50))
    y = (X[:, 0] + rng.normal(size=len(X)) > 0).astype(int)
    V = rng.uniform(0.1, 1.0, X.shape)
    span = {}

    def work():
        span["start"] = time.perf_counter()
        GSUClassifier(lam=1e-4).fit(X, y, X_cov=V)
        span["end"] = time.perf_counter()

    ticks = []
    worker = threading.Thread(target=work)
    worker.start()
    while worker.is_alive():
        ticks.append(time.perf_counter())
        sum(range(1000))  # pure-Python work: needs the GIL
    worker.join()
    inside = [t for t in ticks if span["start"] + 0.05 < t < span["end"] - 0.05]
    duration = span["end"] - span["start"]
    assert duration > 0.15, "fit too fast to tell"
    # with the GIL held by the fit, the main thread would be stalled for the whole fit
    assert len(inside) > 100, (len(inside), duration)
    assert np.diff(ticks).max() < duration / 2


# ------------------------------------------------------------------------------------------ pickling


def test_a_wide_sparse_fit_stores_its_used_columns_and_coef_is_the_full_matrix():
    # 300 examples, 3 non-zeros each, 100,000 features: the model stores the ~900 used columns only (model
    # file version 3, "columns"); coef_ is the full (1, 100000) matrix, zero off those columns.
    rng = np.random.default_rng(5)
    n, cols = 100_000, rng.integers(0, 100_000, size=(300, 3))
    X = sp.csr_matrix((rng.uniform(0.5, 1.0, 900), cols.ravel(), np.arange(0, 901, 3)), shape=(300, n))
    X.sum_duplicates()
    y = np.where(X @ rng.standard_normal(n) > 0, 1, -1)
    clf = GSUClassifier(method="hinge", lam=1e-3).fit(X, y)
    file = json.loads(clf.to_json())
    used = np.unique(X.indices)
    assert file["version"] == 3 and file["columns"] == used.tolist() and len(file["coef"]) == len(used)
    coef = clf.coef_
    assert coef.shape == (1, n) and not coef.flags.writeable
    assert_array_equal(np.flatnonzero(coef[0]), np.intersect1d(np.flatnonzero(coef[0]), used))
    assert_array_equal(coef[0, used], file["coef"])
    assert_allclose(X @ coef.ravel() + clf.intercept_[0], clf.decision_function(X), rtol=1e-12, atol=1e-12)
    again = pickle.loads(pickle.dumps(clf))
    assert_array_equal(again.coef_, coef)
    assert_array_equal(again.decision_function(X), clf.decision_function(X))


def test_pickle_round_trip(data3):
    X, y, V = data3
    for clf in (GSUClassifier(), GSUClassifier(probability=True, method="iso")):
        assert pickle.loads(pickle.dumps(clf)).get_params() == clf.get_params()
        clf.fit(X, y, X_cov=V)
        again = pickle.loads(pickle.dumps(clf))
        assert_array_equal(again.decision_function(X), clf.decision_function(X))
        assert_array_equal(again.predict(X), clf.predict(X))
        for name in ("coef_", "intercept_", "classes_", "objective_", "converged_"):
            assert_array_equal(getattr(again, name), getattr(clf, name))
        if clf.probability:
            assert_array_equal(again.predict_proba(X, X_cov=V), clf.predict_proba(X, X_cov=V))
    cov = LowRankCovariance(np.ones((3, 2, 1)), np.ones((3, 2)))
    assert_array_equal(pickle.loads(pickle.dumps(cov)).factors, cov.factors)


def test_params_round_trip():
    clf = GSUClassifier(lam=0.3, method="power", radius_scale=2.0)
    assert clf.get_params()["radius_scale"] == 2.0
    assert clf.set_params(method="iso").method == "iso"
    cloned = clone(clf)
    assert cloned.get_params() == clf.get_params() and cloned is not clf
    with pytest.raises(TypeError):
        GSUClassifier(0.1)  # keyword-only


# ------------------------------------------------------------------------------------------ probabilities


def test_predict_proba_platt(data):
    X, y, V = data
    clf = GSUClassifier(probability=True).fit(X, y, X_cov=V)
    assert clf.probA_.shape == (1,) and clf.probA_[0] < 0
    P = clf.predict_proba(X)
    assert P.shape == (len(y), 2)
    assert_allclose(P.sum(1), 1.0)
    f = clf.decision_function(X)
    assert_allclose(P[:, 1], 1 / (1 + np.exp(clf.probA_[0] * f + clf.probB_[0])), rtol=1e-12)
    # probabilities are increasing in f
    order = np.argsort(f)
    assert np.all(np.diff(P[order, 1]) >= 0)
    # test-time uncertainty: zero covariance is plain Platt, huge covariance tends to 1/2
    assert_allclose(clf.predict_proba(X, X_cov=np.zeros_like(V)), P, rtol=1e-12)
    wide = clf.predict_proba(X, X_cov=np.full(len(y), 1e8))
    assert_allclose(wide, 0.5, atol=2e-3)
    mid = clf.predict_proba(X, X_cov=V)
    # E[sigmoid] over a Gaussian by Gauss-Hermite equals a brute-force Monte Carlo average
    s = np.sqrt(V[:5] @ clf.coef_[0] ** 2)
    z = np.random.default_rng(0).standard_normal(400_000)
    mc = [np.mean(1 / (1 + np.exp(clf.probA_[0] * (f[i] + s[i] * z) + clf.probB_[0]))) for i in range(5)]
    assert_allclose(mid[:5, 1], mc, atol=3e-3)
    assert np.all(np.abs(mid[:, 1] - 0.5) <= np.abs(P[:, 1] - 0.5) + 1e-12)
    assert_allclose(np.exp(clf.predict_log_proba(X)), P)
    # predict_proba exists only with probability=True (as in SVC)
    assert not hasattr(GSUClassifier().fit(X, y), "predict_proba")


def test_predict_proba_multiclass(data3):
    X, y, V = data3
    clf = GSUClassifier(probability=True).fit(X, y, X_cov=V)
    P = clf.predict_proba(X, X_cov=V)
    assert P.shape == (len(y), 3)
    assert_allclose(P.sum(1), 1.0)
    assert np.mean(P.argmax(1) == y) > 0.7


def test_positive_side_probability(data):
    X, y, V = data
    clf = GSUClassifier().fit(X, y, X_cov=V)
    f = clf.decision_function(X)
    s = np.sqrt(V @ clf.coef_[0] ** 2)
    expected = 0.5 * erfc(-(f / s) / np.sqrt(2))
    assert_allclose(clf.positive_side_probability(X, X_cov=V), expected, rtol=1e-12)
    assert_array_equal(clf.positive_side_probability(X, np.zeros(len(y))), (f > 0).astype(float))
    # LowRankCovariance and a (U, v) pair give the same σ
    U = np.sqrt(V)[:, :, None] * np.ones((1, 1, 1))
    lr = clf.positive_side_probability(X, LowRankCovariance(np.zeros((len(y), X.shape[1], 0)), V))
    assert_allclose(lr, expected, rtol=1e-12)
    full = np.einsum("nd,de->nde", V, np.eye(X.shape[1]))
    assert_allclose(clf.positive_side_probability(X, full), expected, rtol=1e-12)
    assert U.shape[2] == 1


def test_low_rank_covariance_indexing():
    cov = LowRankCovariance(np.arange(24.0).reshape(4, 3, 2), np.ones((4, 3)))
    assert len(cov) == 4 and cov.shape == (4, 3, 2)
    assert_array_equal(cov[np.array([3, 1])].factors, cov.factors[[3, 1]])
    assert_array_equal(cov[np.array([True, False, True, False]), ...].diagonal, np.ones((2, 3)))
    assert cov[2].shape == (1, 3, 2)
    with pytest.raises(ValueError, match="diagonal must have shape"):
        LowRankCovariance(np.ones((4, 3, 2)), np.ones((4, 2)))


def test_strided_and_byte_swapped_inputs(data):
    X, y, V = data
    ref = GSUClassifier().fit(
        np.ascontiguousarray(X[::-1, ::2]), y[::-1], X_cov=np.ascontiguousarray(V[::-1, ::2])
    )
    # non-contiguous views with negative strides go to Rust as they are and are copied once there
    got = GSUClassifier().fit(X[::-1, ::2], y[::-1], X_cov=V[::-1, ::2])
    assert_array_equal(got.coef_, ref.coef_)
    swapped = GSUClassifier().fit(X.astype(">f8"), y, X_cov=V.astype(">f4"))
    assert_allclose(swapped.coef_, GSUClassifier().fit(X, y, X_cov=V.astype(np.float32)).coef_, rtol=1e-12)


def test_gap_tol_stops_the_hinge_early_with_a_certified_objective() -> None:
    # The plain hinge is certified by a duality gap: a looser gap_tol stops earlier, and the objective stays
    # within J* / (1 - gap) of the optimum; bad values are a ValueError naming the parameter.
    rng = np.random.default_rng(3)
    X = rng.standard_normal((2000, 5)) + np.where(np.arange(2000) % 2 == 1, 0.4, -0.4)[:, None]
    y = np.arange(2000) % 2
    exact = GSUClassifier(method="hinge", lam=1e-4).fit(X, y)
    best = exact.objective_
    assert exact.reports_[0]["duality_gap"] <= 1e-10
    for gap_tol in (1e-2, 1e-4):
        clf = GSUClassifier(method="hinge", lam=1e-4, gap_tol=gap_tol).fit(X, y)
        gap = clf.reports_[0]["duality_gap"]
        assert clf.converged_ and gap <= gap_tol
        assert best * (1 - 1e-12) <= clf.objective_ <= best / (1 - gap) * (1 + 1e-12)
    for bad in (0.0, 1.0, float("nan")):
        with pytest.raises(ValueError, match="gap_tol"):
            GSUClassifier(method="hinge", gap_tol=bad).fit(X, y)
    # GSUClassifierCV passes it to every path fit and to the refit.
    cv = usvm.GSUClassifierCV(method="hinge", lams=[1e-2, 1e-4], cv=2, gap_tol=1e-2).fit(X, y)
    assert cv.best_estimator_.gap_tol == 1e-2 and cv.reports_[0]["duality_gap"] <= 1e-2
    with pytest.raises(ValueError, match="gap_tol"):
        usvm.GSUClassifierCV(method="hinge", lams=[1e-2], gap_tol=2.0).fit(X, y)


def test_every_exported_estimator_fits_with_its_defaults():
    """No exported class is a base that cannot fit: each estimator in ``usvm.__all__`` fits as built."""
    from sklearn.base import BaseEstimator

    X = np.vstack([np.random.default_rng(0).normal(m, 1, (15, 3)) for m in (1, -1)])
    y = np.repeat([1, 0], 15)
    estimators = [getattr(usvm, n) for n in usvm.__all__ if isinstance(getattr(usvm, n), type)]
    estimators = [e for e in estimators if issubclass(e, BaseEstimator)]
    assert "RegistryClassifier" not in usvm.__all__ and not hasattr(usvm, "RegistryClassifier")
    assert len(estimators) >= 15
    for cls in estimators:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", usvm.NoPrivilegedInformationWarning)
            fitted = cls().fit(X, y)
        assert fitted is not None, cls.__name__
