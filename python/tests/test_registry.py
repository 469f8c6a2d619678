"""The method registry from Python: the generic ``usvm.Classifier`` reaches every method with no code of
its own, typed exceptions name what is wrong, non-convergence warns, and the model file it writes is the
one the CLI writes for the same data and parameters."""

from __future__ import annotations

import json
import subprocess
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

import usvm
from test_agreement import usvm_binary, write_csv


def blobs(n=40, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(1, 1, (n // 2, d)), rng.normal(-1, 1, (n // 2, d))])
    y = np.repeat([1, 0], n // 2)
    return X, y


def test_logistic_through_the_registry_equals_scikit_learn():
    X, y = blobs(60)
    lam = 0.1
    clf = usvm.Classifier(method="logistic", params={"regularization": {"lambda": lam}, "solver": {"tol": 1e-12}})
    clf.fit(X, y)
    ref = LogisticRegression(C=1 / (lam * len(y)), tol=1e-12, max_iter=10_000).fit(X, y)
    coef, intercept = clf.model_.coef, clf.model_.intercept
    assert clf.model_.kind == "linear"
    np.testing.assert_allclose(coef, ref.coef_, rtol=1e-6)
    np.testing.assert_allclose(intercept, ref.intercept_, rtol=1e-6)
    np.testing.assert_array_equal(clf.predict(X), ref.predict(X))
    assert clf.score(X, y) > 0.8


@pytest.mark.parametrize("method", usvm.METHODS)
def test_every_method_fits_through_the_generic_estimator(method):
    X, y = blobs()
    labels = np.where(y == 1, "yes", "no")
    V = np.full(X.shape, 0.1)
    extra = {"X_star": X + 0.1} if method in ("svmplus", "rsvmplus", "l2svmplus") else {}
    clf = usvm.Classifier(method=method).fit(X, labels, X_cov=V, **extra)
    assert clf.model_.method == method
    assert set(clf.predict(X)) <= {"yes", "no"}
    assert clf.score(X, labels) > 0.7
    assert clf.decision_function(X).shape == (len(y),)
    # The params are the registry's defaults for the method, all of them.
    assert json.loads(clf.model_.params) == usvm.default_params(method)
    clone(clf)  # a scikit-learn estimator


def test_typed_exceptions_name_the_problem():
    X, y = blobs()
    with pytest.raises(usvm.ParamsError, match='"gsv"'):
        usvm.Classifier(method="gsv").fit(X, y)
    with pytest.raises(usvm.ParamsError, match="radius_scale"):
        usvm.Classifier(method="gsu", params={"radius_scale": 1.0}).fit(X, y)
    with pytest.raises(usvm.ParamsError, match="kernel.gama"):
        usvm.Classifier(method="svm", params={"kernel": {"type": "rbf", "gama": 1.0}}).fit(X, y)
    with pytest.raises(usvm.InvalidParameterError, match="lambda"):
        usvm.Classifier(method="gsu", params={"regularization": {"lambda": -1.0}}).fit(X, y)
    with pytest.warns(usvm.NoPrivilegedInformationWarning, match="without X_star"):
        usvm.Classifier(method="svmplus").fit(X, y)  # the plain SVM (test_svm_plus.py)
    bad = np.full(X.shape, 0.1)
    bad[3, 1] = -1.0
    with pytest.raises(usvm.DataError, match="negative variance"):
        usvm.Classifier(method="gsu").fit(X, y, X_cov=bad)
    with pytest.raises(usvm.ModelFileError):
        usvm.Model.from_json('{"format": "usvm-model", "version": 7}')
    # Every typed exception is a ValueError, as scikit-learn expects.
    assert issubclass(usvm.ParamsError, ValueError) and issubclass(usvm.DataError, usvm.UsvmError)


def test_non_convergence_warns_with_the_termination():
    X, y = blobs()
    with pytest.warns(ConvergenceWarning, match="max_iterations"):
        usvm.Classifier(method="gsu", params={"solver": {"name": "exact", "max_iter": 1}}).fit(X, y, X_cov=0.1 * np.ones(len(y)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        usvm.Classifier(method="gsu").fit(X, y, X_cov=0.1 * np.ones(len(y)))


def test_model_file_equals_the_cli_and_round_trips(tmp_path):
    X, y = blobs()
    V = np.full(X.shape, 0.2)
    params = {"regularization": {"C": 2.0}, "radius_scale": 0.5}
    clf = usvm.Classifier(method="power", params=params, seed=3).fit(X, y, X_cov=V)
    names = [f"f{j}" for j in range(X.shape[1])]
    write_csv(tmp_path / "x.csv", names + ["label"], [[float(v) for v in r] + [int(t)] for r, t in zip(X, y)])
    write_csv(tmp_path / "v.csv", names, [[float(v) for v in r] for r in V])
    (tmp_path / "p.json").write_text(json.dumps({"method": "power", **params}))
    cli_model = tmp_path / "m.json"
    subprocess.run(
        [str(usvm_binary()), "train", "--params", str(tmp_path / "p.json"), "--seed", "3", "--csv", str(tmp_path / "x.csv"),
         "--var-csv", str(tmp_path / "v.csv"), "--model", str(cli_model)],
        check=True,
    )
    assert clf.to_json() == cli_model.read_text()
    back = usvm.Model.from_json(clf.to_json())
    assert back.to_json() == clf.to_json()
    np.testing.assert_array_equal(back.decision_function(X), clf.decision_function(X))
    p = back.with_platt(-2.0, 0.0).predict_proba(X)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    assert (p[:, 1] > 0.5).tolist() == (clf.decision_function(X) > 0).tolist()


def test_an_overflowing_fit_is_an_error_not_a_nan_model():
    X, y = blobs()
    X = X.copy()
    X[0, -1] = 1e308
    # Refused before any solver runs, naming the column to rescale.
    with pytest.raises(usvm.DataError, match=f"column {X.shape[1] - 1}.*rescale"):
        usvm.GSUClassifier(solver="sgd", iterations=50, batch=5).fit(X, y)


def _leaves(d, prefix=""):
    if not isinstance(d, dict):
        return {prefix: d}
    out = {}
    for k, v in d.items():
        out.update(_leaves(v, f"{prefix}.{k}" if prefix else k))
    return out


@pytest.mark.parametrize(
    "estimator",
    [
        usvm.GSUClassifier(),
        usvm.GSUSquaredHingeClassifier(),
        usvm.KernelGSUClassifier(),
        usvm.KernelSVMClassifier(),
        usvm.TSVCClassifier(),
        usvm.SVMPlusClassifier(),
        usvm.RobustSVMPlusClassifier(),
        usvm.L2SVMPlusClassifier(),
        usvm.RescaledHingeSVMClassifier(),
        usvm.BasisExpansionClassifier(),
    ],
    ids=lambda e: type(e).__name__,
)
def test_an_estimator_built_with_its_defaults_fits_the_cli_defaults(estimator):
    """The same method, the same defaults from Python and the CLI: every registry field an estimator sets
    at its defaults equals the core's default (what `usvm train` uses without flags). The one exception is
    the data-dependent γ of the SVC-like estimators (scikit-learn's ``'scale'``, the CLI's LIBSVM
    ``1/n_features``): a value computed from ``X``, not a field default; it is named in the docs."""
    rng = np.random.default_rng(0)
    X, y, star = rng.normal(size=(20, 3)), np.repeat([0, 1], 10), rng.normal(size=(20, 2))
    params = estimator._registry_params(X, None, None, star)
    mine, core = _leaves(params), _leaves(usvm.default_params(params["method"]))
    data_dependent = {"kernel.gamma", "gamma_star", "similarity"}
    differ = {k: (v, core.get(k)) for k, v in mine.items() if k not in data_dependent and core.get(k) != v}
    assert not differ, f"{type(estimator).__name__}: fields whose defaults differ from the CLI's: {differ}"
