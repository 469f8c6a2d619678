"""Ugly data from Python: raw features certify, a limit is a ConvergenceWarning, a huge value is a DataError,
a core panic is a UsvmError (not PyO3's PanicException, which ``except Exception`` does not catch)."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.exceptions import ConvergenceWarning

import usvm
from usvm import GSUClassifier, _usvm


@pytest.fixture(scope="module")
def raw_wdbc():
    return load_breast_cancer(return_X_y=True)


@pytest.mark.parametrize("method", ["hinge", "gsu"])
@pytest.mark.parametrize("lam", [1e-1, 1e-3, 1e-5])
def test_raw_wdbc_certifies(raw_wdbc, method, lam):
    X, y = raw_wdbc
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        clf = GSUClassifier(method=method, lam=lam).fit(X, y)
    report = clf.reports_[0]
    assert report["converged"] and report["duality_gap"] <= 1e-9
    assert report["routes"], report


@pytest.mark.parametrize("route", ["dual", "primal", "qp"])
def test_a_named_route_is_taken_alone(raw_wdbc, route):
    X, y = raw_wdbc
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = GSUClassifier(method="hinge", lam=1e-2, route=route).fit(X, y)
    report = clf.reports_[0]
    assert report["routes"] == [route]
    assert report["converged"] == (report["duality_gap"] <= 1e-10)


def test_the_cross_validated_classifier_takes_the_route_too(raw_wdbc):
    X, y = raw_wdbc
    cv = usvm.GSUClassifierCV(method="hinge", lams=[1e-1, 1e-2], cv=3, route="primal").fit(X, y)
    assert cv.best_estimator_.route == "primal"
    assert all(r["routes"] == ["primal"] for r in cv.best_estimator_.reports_)


def test_an_unknown_route_is_refused(raw_wdbc):
    X, y = raw_wdbc
    with pytest.raises(ValueError, match="route"):
        GSUClassifier(method="hinge", route="newton").fit(X, y)


def test_max_iter_one_is_honoured_and_warns(raw_wdbc):
    X, y = raw_wdbc
    with pytest.warns(ConvergenceWarning):
        clf = GSUClassifier(method="hinge", lam=1e-3, max_iter=1).fit(X, y)
    assert clf.reports_[0]["n_iter"] <= 1
    assert clf.reports_[0]["termination"] == "max_iterations"


def test_a_huge_value_is_a_data_error_naming_its_column():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = np.arange(30) % 2
    X[5, 1] = 1e160
    for method in ["gsu", "hinge", "svm", "logistic"]:
        with pytest.raises(usvm.DataError, match="column 1"):
            usvm.Classifier(method=method).fit(X, y)


def test_a_core_panic_is_a_usvm_error():
    with pytest.raises(usvm.UsvmError, match="internal error.*boom"):
        _usvm._panic_inside_guard("boom")
    try:
        _usvm._panic_inside_guard("boom")
    except Exception as e:  # noqa: BLE001 - the point: a plain `except Exception` catches it
        assert isinstance(e, usvm.UsvmError)
