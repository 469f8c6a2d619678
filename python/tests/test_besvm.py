"""BE-SVM: the squared-hinge solver against LIBLINEAR -s 2, the estimators, scikit-learn's checks, the
model file through ``usvm predict``'s reader."""

import json

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from usvm import BasisExpansion, BasisExpansionClassifier, _usvm

liblinear = pytest.importorskip("liblinear.liblinearutil")


def primal(X, s, w, C):
    return 0.5 * w @ w + C * (np.maximum(0.0, 1 - s * (X @ w)) ** 2).sum()


def problem(n=200, d=8, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    X = rng.normal(0, 1, (n, d)) + np.where(y[:, None] == 1, 0.5, -0.5)
    return X, y


@pytest.mark.parametrize("C", [0.01, 1.0, 100.0])
def test_squared_hinge_matches_liblinear_s2_without_bias(C):
    # The same features: a BE-SVM map of the data (indefinite rigid similarity on 3x3 grids + RBF).
    X, y = problem()
    Z = BasisExpansion(similarity=["rigid", "rbf"], grid=(2, 4, 1), basis_size=40).fit_transform(X)
    s = np.where(y == 1, 1.0, -1.0)
    # LIBLINEAR -s 2 (L2-regularised squared hinge, primal TRON), no bias (-B -1 is the default), tight -e.
    m = liblinear.train(s.tolist(), Z.tolist(), f"-s 2 -c {C} -e 1e-10 -q")
    w_ll = np.asarray(m.get_decfun()[0])
    if m.get_labels()[0] != 1:  # LIBLINEAR's positive class is its first label
        w_ll = -w_ll
    ours = _usvm.fit_squared_hinge(Z, y.astype(np.int64), c=C, fit_intercept=False, tol=1e-12)
    w = ours["coef"][0]
    assert all(ours["converged"])
    p_ll, p_ours = primal(Z, s, w_ll, C), primal(Z, s, w, C)
    assert abs(p_ours - p_ll) <= 1e-6 * p_ll, (p_ours, p_ll)
    assert p_ours <= p_ll * (1 + 1e-12)
    # our reported objective is J = P/(C n)
    assert ours["objective"][0] * C * len(y) == pytest.approx(p_ours, rel=1e-10)
    # scikit-learn's LinearSVC(loss="squared_hinge", dual=False) is LIBLINEAR -s 2 too
    svc = LinearSVC(loss="squared_hinge", dual=False, C=C, tol=1e-10, fit_intercept=False, max_iter=10**5).fit(Z, y)
    assert abs(primal(Z, s, svc.coef_[0], C) - p_ours) <= 1e-6 * p_ours


def test_basis_expansion_statistics_come_from_training_data():
    X, _ = problem(n=120)
    train, test = X[:80], X[80:]
    be = BasisExpansion(basis_size=0.25, random_state=3).fit(train)
    Z = be.transform(train)
    assert Z.shape == (80, 20)
    assert np.allclose(Z.mean(axis=0), 0, atol=1e-12)
    assert np.linalg.norm(Z, axis=1).mean() == pytest.approx(1.0, rel=1e-12)
    assert np.all(be.basis_indices_ < 80)
    Zt = be.transform(test)
    assert np.abs(Zt.mean(axis=0)).max() > 1e-3  # not re-centred on the test batch
    np.testing.assert_allclose(be.transform(test[5:6])[0], Zt[5], rtol=0, atol=1e-12)
    # The same map inside a pipeline, and the classifier's own map is the same map.
    clf = BasisExpansionClassifier(basis_size=0.25, random_state=3).fit(train, np.arange(80) % 2)
    np.testing.assert_array_equal(clf.expansion_.transform(test), Zt)
    np.testing.assert_array_equal(clf.expansion_.basis_indices_, be.basis_indices_)


def digits_like(n=120, seed=0):
    """6x6 images of a horizontal or vertical bar at random positions."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    X = np.zeros((n, 36))
    for i in range(n):
        oy, ox = rng.integers(0, 3, 2)
        for t in range(3):
            r, q = [(oy + t, ox + 1), (oy + 1, ox + t), (oy + t, ox + t)][y[i]]
            X[i, r * 6 + q] = 1.0
    return X + 0.05 * rng.normal(size=X.shape), y


@pytest.mark.parametrize("selection", ["random", "index", "kmedoids", "nystroem"])
def test_classifier_with_invariant_similarities(selection):
    X, y = digits_like()
    clf = BasisExpansionClassifier(
        similarity=["rigid", "deformable"], grid=(6, 6), shift=2, local_shift=1, basis_size=0.3,
        basis_selection=selection,
    ).fit(X[:90], y[:90])
    assert clf.converged_.all()
    assert clf.coef_.shape[0] == 3 and clf.decision_function(X).shape == (120, 3)
    assert clf.score(X[90:], y[90:]) >= 0.9
    assert clf.n_parameters_ > 0


def test_model_file_round_trip_through_the_cli_reader(tmp_path):
    X, y = digits_like()
    clf = BasisExpansionClassifier(similarity="rigid,rbf".split(","), grid=(6, 6, 1), basis_size=20).fit(X, y)
    text = clf.to_json()
    f = json.loads(text)
    assert f["format"] == "usvm-model" and f["method"] == "besvm" and f["n_features"] == 36
    assert [m["type"] for m in f["basis_expansion"]["measures"]] == ["rigid", "rbf"]
    assert len(f["basis_expansion"]["basis"]["dense"]) == 20
    np.testing.assert_allclose(np.asarray(f["coef"]), clf.coef_, rtol=0, atol=0)


def test_pipeline_and_sparse_input():
    X, y = problem(n=60)
    pipe = make_pipeline(BasisExpansion(basis_size=15), LinearSVC(dual=False)).fit(X, y)
    assert pipe.score(X, y) > 0.7
    clf = BasisExpansionClassifier(basis_size=15).fit(X, y)
    np.testing.assert_allclose(
        clf.decision_function(sp.csr_matrix(X)), clf.decision_function(X), rtol=0, atol=1e-10
    )


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"similarity": "cosine"}, "similarity must be one of"),
        ({"similarity": []}, "at least one measure"),
        ({"similarity": "rigid"}, "needs grid"),
        ({"similarity": "rigid", "grid": (3, 3)}, "dimension mismatch"),
        ({"basis_size": 0}, "basis_size"),
        ({"basis_size": 1.5}, "basis_size"),
        ({"basis_size": 1000}, "exceeds"),
        ({"basis_selection": "greedy"}, "basis_selection"),
        ({"gamma": -1.0}, "gamma"),
        ({"C": 0.0}, "C must be"),
        ({"shift": -1, "similarity": "rigid", "grid": (2, 4)}, "shift"),
    ],
)
def test_bad_parameters(kwargs, message):
    X, y = problem(n=40)
    with pytest.raises(ValueError, match=message):
        BasisExpansionClassifier(**kwargs).fit(X, y)


def test_bad_data():
    X, y = problem(n=40)
    X[3, 2] = np.nan
    with pytest.raises(ValueError):
        BasisExpansionClassifier().fit(X, y)
    with pytest.raises(ValueError, match="at least 2 classes"):
        BasisExpansionClassifier().fit(problem(n=40)[0], np.zeros(40))


WEIGHT_REASON = (
    "the feature map is built from the training rows, not the weights: the basis is a subset of the rows "
    "(its size a fraction of the row count; a repeated row can enter it twice, a weighted one once), and "
    "gamma='scale' and the normalisation statistics (mean, mean norm) count repeated rows, which a sample "
    "weight does not reproduce; the squared-hinge SVM on the mapped features is weighted exactly"
)


def expected_failed_checks(estimator):
    return {
        "check_sample_weight_equivalence_on_dense_data": WEIGHT_REASON,
        "check_sample_weight_equivalence_on_sparse_data": WEIGHT_REASON,
    }


@parametrize_with_checks(
    [BasisExpansionClassifier(), BasisExpansion(), BasisExpansionClassifier(similarity=["rbf", "linear"])],
    expected_failed_checks=expected_failed_checks,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
