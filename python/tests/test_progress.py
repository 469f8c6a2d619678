"""Progress: ``callback`` sees every solver event (non-decreasing iterations, the objectives ending at
``objective_``), an exception in it stops the fit and is raised by ``fit``, ``verbose=1`` writes to standard
error and ``verbose=0`` writes nothing; ``get_params``/``clone`` carry both; ``BasisExpansion`` supports
``set_output``."""

import numpy as np
import pytest
from conftest import make_uncertain
from sklearn.base import clone

from usvm import (
    BasisExpansion,
    BasisExpansionClassifier,
    Classifier,
    GSUClassifier,
    GSUSquaredHingeClassifier,
    KernelSVMClassifier,
    SVMPlusClassifier,
    TSVCClassifier,
)


def _star(X):
    return X[:, :1] + np.random.default_rng(5).normal(0, 0.3, (len(X), 1))


CASES = [
    (lambda cb: GSUClassifier(callback=cb), "cov"),
    (lambda cb: GSUClassifier(method="hinge", callback=cb), None),
    (lambda cb: GSUClassifier(solver="sgd", iterations=300, callback=cb), "cov"),
    (lambda cb: GSUSquaredHingeClassifier(callback=cb), "cov"),
    (lambda cb: KernelSVMClassifier(C=10.0, callback=cb), None),
    (lambda cb: SVMPlusClassifier(C=10.0, callback=cb), "star"),
    (lambda cb: BasisExpansionClassifier(basis_size=0.5, callback=cb), None),
    (lambda cb: TSVCClassifier(delta=0.2, callback=cb), None),
]


def _fit(make, extra, cb, X, y, V):
    est = make(cb)
    if extra == "cov":
        return est.fit(X, y, X_cov=V)
    if extra == "star":
        return est.fit(X, y, X_star=_star(X))
    return est.fit(X, y)


@pytest.mark.parametrize("make,extra", CASES)
def test_the_callback_sees_iterations_that_end_at_the_objective(make, extra):
    X, y, V = make_uncertain(n=80)
    records = []
    est = _fit(make, extra, records.append, X, y, V)
    assert records, type(est).__name__
    assert {"iteration", "objective", "residual", "quantity", "problem", "n_problems"} <= set(records[0])
    iterations = [r["iteration"] for r in records]
    assert iterations == sorted(iterations)
    assert any(r["quantity"] != "final" for r in records)
    last = records[-1]
    assert last["quantity"] == "final"
    assert last["objective"] == est.objective_[0]
    assert last["iteration"] == est.reports_[0]["n_iter"]
    # The same fit without a callback: the same model.
    silent = _fit(make, extra, None, X, y, V)
    np.testing.assert_array_equal(silent.decision_function(X), est.decision_function(X))


def test_one_vs_rest_records_name_their_binary_problem():
    X, y, V = make_uncertain(n=90, n_classes=3)
    records = []
    GSUClassifier(callback=records.append).fit(X, y, X_cov=V)
    assert {r["problem"] for r in records} == {0, 1, 2}
    assert all(r["n_problems"] == 3 for r in records)
    for k in range(3):
        its = [r["iteration"] for r in records if r["problem"] == k]
        assert its == sorted(its)


class Boom(RuntimeError):
    pass


@pytest.mark.parametrize(
    "est",
    [
        GSUClassifier(),
        KernelSVMClassifier(C=10.0, tol=1e-12),
        Classifier(method="power"),
        GSUClassifier(solver="sgd", iterations=1_000_000),
    ],
)
def test_an_exception_in_the_callback_stops_the_fit_and_is_raised(est):
    X, y, V = make_uncertain(n=80)
    calls = []

    def explode(record):
        calls.append(record)
        raise Boom("stop here")

    with pytest.raises(Boom, match="stop here"):
        est.set_params(callback=explode).fit(X, y)
    assert len(calls) == 1  # called once: the fit stopped there


def test_verbose_writes_to_stderr_and_silence_writes_nothing(capfd):
    X, y, V = make_uncertain(n=80)
    GSUClassifier().fit(X, y, X_cov=V)
    KernelSVMClassifier().fit(X, y)
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    GSUClassifier(verbose=1).fit(X, y, X_cov=V)
    out, err = capfd.readouterr()
    assert out == ""
    assert "GSUClassifier" in err and "objective" in err


def test_verbose_and_callback_are_parameters():
    cb = print
    est = KernelSVMClassifier(verbose=1, callback=cb)
    params = est.get_params()
    assert params["verbose"] == 1 and params["callback"] is cb
    twin = clone(est)
    assert twin.verbose == 1 and twin.callback is cb
    with pytest.raises(TypeError, match="callable"):
        GSUClassifier(callback=3).fit(*make_uncertain(n=40)[:2])
    with pytest.raises(ValueError, match="verbose"):
        GSUClassifier(verbose=-1).fit(*make_uncertain(n=40)[:2])


def test_basis_expansion_sets_pandas_output():
    pd = pytest.importorskip("pandas")
    X = np.random.default_rng(0).normal(size=(30, 3))
    Z = BasisExpansion(basis_size=5).set_output(transform="pandas").fit_transform(X)
    assert isinstance(Z, pd.DataFrame)
    assert list(Z.columns) == [f"be{k}" for k in range(5)]
    np.testing.assert_array_equal(Z.to_numpy(), BasisExpansion(basis_size=5).fit_transform(X))
