"""usvm.dask: the exact fit over Dask row partitions is the local fit (objective to 1e-12, coefficients
to 1e-10, the same Newton iterations), bit-identical between runs, survives a worker restarted mid-fit,
and names the partition that cannot be part of it. On a LocalCluster of 2 worker processes, loopback only."""

import json
import pickle

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")

from usvm import GSUClassifier  # noqa: E402
from usvm.dask import DaskGSUClassifier, ShardError  # noqa: E402

ROWS = (700, 0, 1300, 1000)  # uneven, one empty


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1"
    )
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def blobs(n=3000, d=8, classes=2, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, n)
    centres = rng.normal(size=(classes, d)) * 1.5
    X = centres[y] + rng.normal(size=(n, d))
    V = rng.uniform(0.1, 1.0, size=(n, d))
    return X, y, V


def rows(a, chunks=ROWS):
    return da.from_array(a, chunks=(chunks,) + a.shape[1:])


def assert_same_fit(sharded, local):
    np.testing.assert_array_equal(sharded.classes_, local.classes_)
    np.testing.assert_allclose(sharded.objective_, local.objective_, rtol=1e-12, atol=0)
    scale = max(1.0, np.abs(local.coef_).max())
    np.testing.assert_allclose(sharded.coef_, local.coef_, rtol=0, atol=1e-10 * scale)
    np.testing.assert_allclose(sharded.intercept_, local.intercept_, rtol=0, atol=1e-10 * scale)
    assert [r["n_iter"] for r in sharded.reports_] == [r["n_iter"] for r in local.reports_]
    assert sharded.converged_.all()


@pytest.mark.parametrize("method", ["gsu", "iso"])
def test_sharded_fit_is_the_local_fit(client, method):
    X, y, V = blobs()
    local = GSUClassifier(lam=1e-3, method=method).fit(X, y, X_cov=V)
    sharded = DaskGSUClassifier(lam=1e-3, method=method).fit(rows(X), rows(y), X_cov=rows(V))
    assert_same_fit(sharded, local)
    assert sharded.n_shards_ == 4 and sharded.n_rounds_ > 0 and sharded.bytes_received_ > 0
    seconds = sharded.round_seconds_
    assert set(seconds) == {"wall", "compute", "driver"} and 0 < seconds["compute"] < seconds["wall"]
    assert seconds["driver"] > 0
    again = DaskGSUClassifier(lam=1e-3, method=method).fit(rows(X), rows(y), X_cov=rows(V))
    np.testing.assert_array_equal(again.coef_, sharded.coef_)  # bit-identical
    np.testing.assert_array_equal(again.intercept_, sharded.intercept_)
    # Predictions: lazily on Dask arrays, directly on numpy, and through the local estimator.
    np.testing.assert_array_equal(sharded.predict(rows(X)).compute(), local.predict(X))
    np.testing.assert_allclose(sharded.decision_function(X), local.decision_function(X), atol=1e-9)
    np.testing.assert_array_equal(sharded.to_local().predict(X), local.predict(X))


def test_sharded_power_svm_is_the_local_fit_to_the_solvers_tolerance(client):
    # Power SVM's rounds: each a hinge fit on points the workers move (sharded: Newton continuation;
    # locally: dual coordinate descent), so the same rounds and optimum to the solvers' tolerance.
    X, y, V = blobs(n=400, d=4, seed=4)
    local = GSUClassifier(lam=1e-2, method="power", radius_scale=0.5).fit(X, y, X_cov=V)
    chunks = (150, 0, 150, 100)
    sharded = DaskGSUClassifier(lam=1e-2, method="power", radius_scale=0.5)
    sharded.fit(rows(X, chunks), rows(y, chunks), X_cov=rows(V, chunks))
    np.testing.assert_allclose(sharded.objective_, local.objective_, rtol=1e-7)
    scale = max(1.0, np.abs(local.coef_).max())
    np.testing.assert_allclose(sharded.coef_, local.coef_, rtol=0, atol=1e-4 * scale)
    assert [r["rounds"] for r in sharded.reports_] == [r["rounds"] for r in local.reports_]
    assert sharded.converged_.all()
    assert sharded.to_local().get_params()["radius_scale"] == 0.5


def test_multiclass_weights_full_covariances_and_dataframes(client):
    X, y, V = blobs(n=900, d=4, classes=3, seed=1)
    w = np.random.default_rng(2).uniform(0.5, 2.0, len(y))
    full = np.einsum("ij,jk->ijk", V, np.eye(4))
    local = GSUClassifier(C=5.0).fit(X, y, X_cov=full, sample_weight=w)
    chunks = (300, 250, 350)
    sharded = DaskGSUClassifier(C=5.0).fit(
        rows(X, chunks), rows(y, chunks), X_cov=rows(full, chunks), sample_weight=rows(w, chunks)
    )
    assert_same_fit(sharded, local)
    assert len(sharded.rounds_) == 3
    # λ form: the weighted mean (1/Σc) Σ c_i L_i, taken by the core's driver over all shards.
    local = GSUClassifier(lam=1e-2).fit(X, y, X_cov=V, sample_weight=w)
    sharded = DaskGSUClassifier(lam=1e-2).fit(
        rows(X, chunks), rows(y, chunks), X_cov=rows(V, chunks), sample_weight=rows(w, chunks)
    )
    assert_same_fit(sharded, local)
    with pytest.raises(ValueError, match="weight"):
        DaskGSUClassifier(lam=1e-2).fit(rows(X, chunks), rows(y, chunks), sample_weight=rows(0 * w, chunks))
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    frame = dd.from_pandas(pd.DataFrame(X, columns=[f"f{j}" for j in range(4)]), npartitions=3)
    labels = dd.from_pandas(pd.Series(y), npartitions=3)
    sharded = DaskGSUClassifier(C=5.0).fit(frame, labels, X_cov=rows(V, (900,)))  # re-chunked like X
    assert_same_fit(sharded, GSUClassifier(C=5.0).fit(X, y, X_cov=V))


@pytest.mark.filterwarnings("ignore:Sending large graph")
def test_rounds_per_lambda_on_a_20000_by_50_diagonal_problem(client):
    X, y, V = blobs(n=20_000, d=50, seed=3)
    sharded = DaskGSUClassifier(lam=1e-4).fit(
        rows(X, (5000,) * 4), rows(y, (5000,) * 4), X_cov=rows(V, (5000,) * 4)
    )
    assert sharded.rounds_[0] <= 110, sharded.rounds_


def test_a_shard_pickles_as_its_rows():
    # Dask may move a shard between workers: it pickles as its rows and answers as before.
    from usvm import _usvm, default_params

    X, y, V = blobs(n=200, d=3, seed=8)
    params = json.dumps(default_params("gsu"))
    shard = _usvm.Shard(params, X, y.astype(np.int64), cov=V)
    copy = pickle.loads(pickle.dumps(shard))
    assert copy.n_samples == 200
    a = _usvm.fit_sharded(params, lambda q: [shard.answer(q)])[0]
    b = _usvm.fit_sharded(params, lambda q: [copy.answer(q)])[0]
    np.testing.assert_array_equal(a.coef, b.coef)
    assert copy.correct(a) == int(np.sum(a.predict(X) == y))


class RestartsAWorker(DaskGSUClassifier):
    """Restarts a worker (losing its partitions, shards and dual states) before round ``restart_at``."""

    restart_at = 15

    def _ask(self, client, shards, states, question, clock=None):
        self.asked = getattr(self, "asked", 0) + 1
        if self.asked == self.restart_at:
            worker = sorted(client.scheduler_info()["workers"])[0]
            client.restart_workers([worker])
        return DaskGSUClassifier._ask(client, shards, states, question, clock)


@pytest.mark.parametrize("method", ["gsu", "hinge"])
def test_a_worker_restarted_mid_fit_changes_nothing(client, method):
    # The hinge's dual method keeps multipliers on the workers: the lost ones are recomputed from their
    # lineage (the rounds before), so the result is bit-identical too.
    # (The hinge on more rows than its exact finish gathers whole, so that its dual rounds run.)
    n = 3000 if method == "gsu" else 9000
    chunks = tuple(c * n // 3000 for c in ROWS)
    X, y, V = blobs(n=n, d=6, seed=4)
    steady = DaskGSUClassifier(method=method, lam=1e-3).fit(rows(X, chunks), rows(y, chunks), X_cov=rows(V, chunks))
    restarted = RestartsAWorker(method=method, lam=1e-3)
    restarted.restart_at = 15 if method == "gsu" else 5
    restarted.fit(rows(X, chunks), rows(y, chunks), X_cov=rows(V, chunks))
    assert restarted.asked > restarted.restart_at
    np.testing.assert_array_equal(restarted.coef_, steady.coef_)
    np.testing.assert_array_equal(restarted.intercept_, steady.intercept_)
    client.wait_for_workers(2)


def test_bad_partitions_are_named_and_nothing_is_fitted(client):
    X, y, V = blobs(n=300, d=3, seed=5)
    # A partition whose rows have 4 features while the others have 3.
    wide = da.from_delayed(dask.delayed(np.ones)((50, 4)), shape=(50, 3), dtype=float)
    Xbad = da.concatenate([rows(X, (100, 100, 100)), wide])
    ybad = da.concatenate([rows(y, (100, 100, 100)), da.zeros(50, dtype=int, chunks=50)])
    clf = DaskGSUClassifier()
    with pytest.raises(ValueError, match="partition 3 of the rows: 4 features, but partition 0 has 3"):
        clf.fit(Xbad, ybad)
    assert not hasattr(clf, "model_")
    # NaN in one partition's means, a negative variance in another's covariances.
    Xnan = X.copy()
    Xnan[150, 1] = np.nan
    with pytest.raises(ShardError, match="partition 1: non-finite value"):
        clf.fit(rows(Xnan, (100, 100, 100)), rows(y, (100, 100, 100)))
    Vneg = V.copy()
    Vneg[250, 0] = -1.0
    with pytest.raises(ShardError, match="partition 2: negative variance"):
        clf.fit(rows(X, (100, 100, 100)), rows(y, (100, 100, 100)), X_cov=rows(Vneg, (100, 100, 100)))
    assert not hasattr(clf, "model_")
    # Rows whose chunk sizes are unknown; numpy instead of Dask; a single class; a method that does not shard.
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    unknown = dd.from_pandas(pd.DataFrame(X), npartitions=2).to_dask_array()
    with pytest.raises(ValueError, match="no known row chunks"):
        clf.fit(unknown, rows(y, (150, 150)))
    with pytest.raises(TypeError, match="Dask array"):
        clf.fit(X, y)
    with pytest.raises(ValueError, match="at least 2 classes"):
        clf.fit(rows(X, (150, 150)), da.zeros(300, dtype=int, chunks=150))
    with pytest.raises(ValueError, match="method must be one of"):
        DaskGSUClassifier(method="sampling").fit(rows(X, (150, 150)), rows(y, (150, 150)))
    with pytest.raises(ValueError, match=r"gap_tol must be in \(0, 1\)"):
        DaskGSUClassifier(method="hinge", gap_tol=1.5).fit(rows(X, (150, 150)), rows(y, (150, 150)))


def test_cross_validation_over_partitions_along_warm_paths(client):
    from usvm.dask import DaskGSUClassifierCV

    X, y, V = blobs(n=1200, d=5, seed=6)
    chunks = (200,) * 6
    lams = [1e-3, 1e-2, 1e-1, 1.0]
    cv = DaskGSUClassifierCV(lams=lams, cv=3).fit(rows(X, chunks), rows(y, chunks), X_cov=rows(V, chunks))
    # Each fold holds out partitions i ≡ f (mod 3): the same scores from local fits on the same rows.
    part = np.repeat(np.arange(6), 200)
    for f in range(3):
        train, test = part % 3 != f, part % 3 == f
        for j, lam in enumerate(lams):
            local = GSUClassifier(lam=lam).fit(X[train], y[train], X_cov=V[train])
            assert cv.scores_[f, j] == pytest.approx(local.score(X[test], y[test]), abs=1e-12)
    assert cv.lam_ == lams[int(np.argmax(cv.scores_.mean(axis=0)))]
    assert_same_fit(cv, GSUClassifier(lam=cv.lam_).fit(X, y, X_cov=V))
    assert cv.to_local().lam_ == cv.lam_
    with pytest.raises(ValueError, match="cv=7 folds of partitions, but X has 6 partitions"):
        DaskGSUClassifierCV(lams=lams, cv=7).fit(rows(X, chunks), rows(y, chunks))
