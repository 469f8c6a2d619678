"""ONNX export (``usvm.onnx``) and safe persistence (skops): onnxruntime's scores equal
``decision_function`` for every exported model type, labels equal ``predict``; skops round trips every
estimator with ``usvm.skops_trusted_types()``."""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_uncertain
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import usvm

ort = pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")
from usvm.onnx import register, to_onnx  # noqa: E402


def _privileged(X):
    return np.abs(X[:, :2]) + 0.1


# (name, factory, needs X_star)
ESTIMATORS = [
    ("gsu", lambda: usvm.GSUClassifier(lam=0.05), False),
    ("hinge", lambda: usvm.Classifier(method="hinge"), False),
    ("iso", lambda: usvm.Classifier(method="iso"), False),
    ("power", lambda: usvm.Classifier(method="power"), False),
    ("sampling", lambda: usvm.Classifier(method="sampling"), False),
    ("logistic", lambda: usvm.Classifier(method="logistic"), False),
    ("sqhinge-gsu", lambda: usvm.GSUSquaredHingeClassifier(), False),
    ("svm-rbf", lambda: usvm.KernelSVMClassifier(gamma=0.3), False),
    ("svm-poly", lambda: usvm.KernelSVMClassifier(kernel="poly", gamma=0.2, coef0=1.0, degree=3), False),
    ("svm-linear", lambda: usvm.KernelSVMClassifier(kernel="linear"), False),
    ("svm-ovo-shape", lambda: usvm.KernelSVMClassifier(gamma=0.3, decision_function_shape="ovo"), False),
    ("svm-ovr", lambda: usvm.KernelSVMClassifier(gamma=0.3, multiclass="ovr"), False),
    ("ksvm-igsu", lambda: usvm.KernelGSUClassifier(gamma=0.3), False),
    (
        "ksvm-igsu-nystroem",
        lambda: usvm.KernelGSUClassifier(approximation="nystroem", n_components=30),
        False,
    ),
    ("ksvm-igsu-fourier", lambda: usvm.KernelGSUClassifier(approximation="fourier", n_components=40), False),
    ("tsvc-linear", lambda: usvm.TSVCClassifier(), False),
    ("tsvc-rbf", lambda: usvm.TSVCClassifier(kernel="rbf", gamma=0.3), False),
    ("besvm", lambda: usvm.BasisExpansionClassifier(), False),
    ("besvm-two-measures", lambda: usvm.BasisExpansionClassifier(similarity=["rbf", "linear"]), False),
    (
        "besvm-nystroem",
        lambda: usvm.BasisExpansionClassifier(basis_selection="nystroem", basis_size=0.5),
        False,
    ),
    ("rsvm-rhhq", lambda: usvm.RescaledHingeSVMClassifier(gamma=0.3), False),
    ("svmplus", lambda: usvm.SVMPlusClassifier(), True),
    ("rsvmplus", lambda: usvm.RobustSVMPlusClassifier(), True),
    ("l2svmplus", lambda: usvm.L2SVMPlusClassifier(), True),
]


def _fit(factory, needs_star, X, y, V=None):
    est = factory()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        if needs_star:
            return est.fit(X, y, X_star=_privileged(X))
        return est.fit(X, y)


def _run(model, X):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {session.get_inputs()[0].name: X})


def _assert_same(est, label, scores, X, rtol):
    f = est.decision_function(X).reshape(X.shape[0], -1)
    assert scores.shape == f.shape
    np.testing.assert_allclose(scores, f, rtol=0, atol=rtol * max(1.0, np.abs(f).max()))
    np.testing.assert_array_equal(label, est.predict(X))


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("name,factory,needs_star", ESTIMATORS, ids=[e[0] for e in ESTIMATORS])
def test_onnxruntime_scores_equal_decision_function(name, factory, needs_star, n_classes):
    X, y, _ = make_uncertain(n=90, d=4, seed=3, n_classes=n_classes)
    est = _fit(factory, needs_star, X, y)
    label, scores = _run(to_onnx(est), X)
    _assert_same(est, label, scores, X, rtol=1e-6)


def test_sparse_support_vectors_string_and_float_labels():
    X, y, _ = make_uncertain(n=80, d=5, seed=4)
    Xs = sp.csr_matrix(np.where(np.abs(X) < 0.5, 0.0, X))
    est = usvm.KernelSVMClassifier(gamma=0.2).fit(Xs, np.array(["no", "yes"])[y])
    label, scores = _run(to_onnx(est), Xs.toarray())
    _assert_same(est, label, scores, Xs, rtol=1e-6)
    assert label.dtype == object and set(label) <= {"no", "yes"}
    est = usvm.GSUClassifier().fit(X, np.array([-1.0, 2.0])[y])
    label, scores = _run(to_onnx(est), X)
    _assert_same(est, label, scores, X, rtol=1e-6)


def test_float32_graph_is_within_single_precision():
    X, y, _ = make_uncertain(n=80, d=4, seed=5)
    est = usvm.KernelSVMClassifier(gamma=0.3).fit(X, y)
    model = to_onnx(est, dtype=np.float32)
    label, scores = _run(model, X.astype(np.float32))
    assert scores.dtype == np.float32
    np.testing.assert_allclose(scores.ravel(), est.decision_function(X), atol=1e-4 * np.abs(scores).max())


def test_skl2onnx_converts_pipelines_ending_in_a_usvm_classifier():
    pytest.importorskip("skl2onnx")
    from skl2onnx import to_onnx as skl_to_onnx
    from skl2onnx.common.data_types import DoubleTensorType

    register()
    register()  # idempotent
    X, y, _ = make_uncertain(n=90, d=4, seed=6, n_classes=3)
    X = 3.0 * X + 1.0
    for clf in (usvm.GSUClassifier(), usvm.KernelSVMClassifier(gamma=0.3), usvm.BasisExpansionClassifier()):
        pipe = make_pipeline(StandardScaler(), clf).fit(X, y)
        model = skl_to_onnx(pipe, initial_types=[("X", DoubleTensorType([None, 4]))])
        label, scores = _run(model, X)
        _assert_same(pipe, label, scores, X, rtol=1e-6)


def test_what_onnx_cannot_express_is_a_clear_error():
    X, y, _ = make_uncertain(n=40, d=16, seed=7)
    deformable = usvm.BasisExpansionClassifier(similarity="deformable", grid=(4, 4)).fit(X, y)
    with pytest.raises(ValueError, match="deformable similarity"):
        to_onnx(deformable)
    K = X @ X.T
    pre = usvm.KernelSVMClassifier(kernel="precomputed").fit(K, y)
    with pytest.raises(ValueError, match="precomputed kernel cannot be exported"):
        to_onnx(pre)
    with pytest.raises(NotFittedError):
        to_onnx(usvm.GSUClassifier())
    with pytest.raises(ValueError, match="float64 or float32"):
        to_onnx(usvm.GSUClassifier().fit(X, y), dtype=np.int32)


@pytest.mark.parametrize("name,factory,needs_star", ESTIMATORS, ids=[e[0] for e in ESTIMATORS])
def test_skops_and_pickle_round_trips(name, factory, needs_star):
    sio = pytest.importorskip("skops.io")
    X, y, _ = make_uncertain(n=60, d=4, seed=8)
    est = _fit(factory, needs_star, X, y)
    data = sio.dumps(est)
    untrusted = sio.get_untrusted_types(data=data)
    assert set(untrusted) <= set(usvm.skops_trusted_types()), untrusted
    with pytest.raises(Exception, match="[Uu]ntrusted"):
        sio.loads(data)
    for back in (sio.loads(data, trusted=usvm.skops_trusted_types()), pickle.loads(pickle.dumps(est))):
        np.testing.assert_array_equal(back.decision_function(X), est.decision_function(X))
        assert back.to_json() == est.to_json()


def test_skops_round_trips_the_transformer_and_the_cv_estimators():
    sio = pytest.importorskip("skops.io")
    X, y, _ = make_uncertain(n=60, d=4, seed=9)
    for est in (usvm.BasisExpansion().fit(X), usvm.GSUClassifierCV(lams=[0.01, 0.1], cv=3).fit(X, y)):
        back = sio.loads(sio.dumps(est), trusted=usvm.skops_trusted_types())
        out = "transform" if hasattr(est, "transform") else "decision_function"
        np.testing.assert_array_equal(getattr(back, out)(X), getattr(est, out)(X))


def test_module_docstring_runs():
    import doctest

    import usvm.onnx

    result = doctest.testmod(usvm.onnx)
    assert result.failed == 0 and result.attempted > 0


def test_large_one_vs_one_model_with_packed_support_vectors():
    """Ten digit classes, one-vs-one: over 16,384 stored support-vector values, so the model file packs them
    (base64); the export reads them back exactly."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    est = usvm.KernelSVMClassifier(C=10.0, gamma=0.001).fit(X[:700], y[:700])
    import json

    model = json.loads(est.to_json())
    assert "packed" in model["support_vectors"] and model["multiclass"] == "ovo"
    label, scores = _run(to_onnx(est), X[700:900])
    _assert_same(est, label, scores, X[700:900], rtol=1e-9)
