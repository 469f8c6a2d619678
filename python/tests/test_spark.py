"""usvm.spark: the barrier-stage sharded fit over Spark partitions is the local fit (objective to 1e-12,
coefficients to 1e-10, the same Newton iterations); a partition that cannot be part of it is named.
Runs in Spark's local mode (2 cores); skipped without pyspark or Java."""

import json
import shutil
import sys

import numpy as np
import pytest

pyspark = pytest.importorskip("pyspark")
if shutil.which("java") is None:
    pytest.skip("PySpark needs Java", allow_module_level=True)

from pyspark.ml.linalg import Vectors  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402

from usvm import GSUClassifier  # noqa: E402
from usvm.spark import SparkGSUClassifier  # noqa: E402


@pytest.fixture(scope="module")
def spark():
    import os

    os.environ["PYSPARK_PYTHON"] = sys.executable  # the workers run this interpreter (with numpy, usvm)
    session = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def blobs(n=600, d=4, classes=2, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, n)
    X = rng.normal(size=(classes, d))[y] * 1.5 + rng.normal(size=(n, d))
    V = rng.uniform(0.1, 1.0, size=(n, d))
    return X, y, V


def frame(spark, X, y, V, partitions=3):
    rows = [(Vectors.dense(x), float(t), Vectors.dense(v)) for x, t, v in zip(X, y, V)]
    return spark.createDataFrame(rows, ["features", "label", "var"]).coalesce(1).repartition(partitions)


@pytest.mark.parametrize("classes", [2, 3])
def test_spark_fit_is_the_local_fit(spark, classes):
    X, y, V = blobs(classes=classes, seed=classes)
    df = frame(spark, X, y, V)
    # The rows in the DataFrame's partition order: the local fit must see the same rows (any order).
    model = SparkGSUClassifier(varianceCol="var", regParam=1e-3).fit(df)
    local = GSUClassifier(lam=1e-3).fit(X, y, X_cov=V)
    np.testing.assert_allclose(model.objective, local.objective_, rtol=1e-12)
    np.testing.assert_allclose(
        model.coefficients, local.coef_, atol=1e-10 * max(1, np.abs(local.coef_).max())
    )
    assert [r["n_iter"] for r in model.reports] == [r["n_iter"] for r in local.reports_]
    assert model.numRounds > 0
    sent, received = model.bytesExchanged
    assert sent > 0 and received > 0
    seconds = model.roundSeconds
    assert set(seconds) == {"wall", "compute", "driver"}
    assert 0 < seconds["compute"] <= seconds["wall"] and seconds["driver"] >= 0
    out = model.transform(df).select("features", "prediction").collect()
    pred = np.array([r.prediction for r in out])
    feats = np.array([r.features.toArray() for r in out])
    np.testing.assert_array_equal(pred, local.predict(feats).astype(float))
    np.testing.assert_array_equal(model.to_local().predict(X), local.predict(X))


def test_spark_power_svm_is_the_local_fit_to_the_solvers_tolerance(spark):
    X, y, V = blobs(seed=9)
    df = frame(spark, X, y, V)
    model = SparkGSUClassifier(varianceCol="var", regParam=1e-2, method="power", radiusScale=0.5).fit(df)
    local = GSUClassifier(lam=1e-2, method="power", radius_scale=0.5).fit(X, y, X_cov=V)
    np.testing.assert_allclose(model.objective, local.objective_, rtol=1e-7)
    assert [r["rounds"] for r in model.reports] == [r["rounds"] for r in local.reports_]
    np.testing.assert_array_equal(model.to_local().predict(X), local.predict(X))


def test_bad_partitions_are_named(spark):
    X, y, V = blobs(seed=5)
    V[10, 1] = -1.0  # a negative variance
    df = frame(spark, X, y, V, partitions=2)
    with pytest.raises(ValueError, match=r"partition \d: negative variance"):
        SparkGSUClassifier(varianceCol="var").fit(df)
    with pytest.raises(ValueError, match="at least 2 classes"):
        SparkGSUClassifier().fit(frame(spark, X, np.zeros(len(y)), V))
    with pytest.raises(ValueError, match="method must be"):
        SparkGSUClassifier(method="sampling").fit(frame(spark, X, y, V))
    with pytest.raises(ValueError, match=r"gapTol must be in \(0, 1\)"):
        SparkGSUClassifier(method="hinge", gapTol=0.0).fit(frame(spark, X, y, V))


@pytest.mark.parametrize("bad", [0, 1])
def test_a_shard_that_cannot_be_built_is_named_by_its_partition(spark, bad):
    # Rows 0..299 in partition 0, 300..599 in partition 1 (parallelize slices in order): task 0 names its
    # own shard's error, or the one another task reports over its connection before any question.
    X, y, V = blobs(seed=6)
    V[150 + 300 * bad, 2] = -1.0
    rows = [(Vectors.dense(x), float(t), Vectors.dense(v)) for x, t, v in zip(X, y, V)]
    df = spark.sparkContext.parallelize(rows, 2).toDF(["features", "label", "var"])
    with pytest.raises(ValueError, match=rf"partition {bad}: negative variance"):
        SparkGSUClassifier(varianceCol="var").fit(df)
    assert SparkGSUClassifier().fit(df).numRounds > 0  # the same stage without the variances fits


def test_the_rendezvous_answers_each_partitions_latest_live_task():
    # A re-run stage: the killed attempt's task of partition 1 has closed its connection, partition 0's
    # first attempt is superseded by its second; the live tasks get each other's messages, whatever stray
    # connections arrived before them.
    import socket
    import time

    from usvm.spark import _Rendezvous, _receive, _send

    rendezvous = _Rendezvous("127.0.0.1")
    host, port = rendezvous.address.rsplit(":", 1)

    def arrive(partition, attempt):
        conn = socket.create_connection((host, int(port)), timeout=10)
        _send(conn, json.dumps({"partition": partition, "tasks": 2, "attempt": attempt}).encode())
        time.sleep(0.05)  # the rendezvous reads each arrival before the next
        return conn

    try:
        # Strays first: one that sends nothing, one that sends something else; neither holds anyone up.
        silent = socket.create_connection((host, int(port)), timeout=10)
        stray = socket.create_connection((host, int(port)), timeout=10)
        _send(stray, b"GET / HTTP/1.0")
        killed = arrive(1, 1)
        killed.close()
        first = arrive(0, 0)
        second = arrive(0, 2)
        late = arrive(1, 3)
        for conn in (second, late):
            assert [m["attempt"] for m in json.loads(_receive(conn))] == [2, 3]
        assert first.recv(1) == b""  # superseded: closed unanswered
        assert stray.recv(1) == b""  # not a task's message: closed
        silent.close()
    finally:
        rendezvous.close()


def test_columns_arrive_as_arrow_or_rows_alike(spark, monkeypatch):
    # Dense and sparse vectors, an array-of-doubles variance column and weights: the columnar (Arrow) path
    # reads them as the Row path does, and both fit the local model.
    import usvm.spark as us

    X, y, V = blobs(n=300, d=5, seed=11)
    X[:, 3] = 0.0
    w = np.linspace(0.5, 2.0, len(y))
    rows = [
        (Vectors.sparse(5, {j: x[j] for j in range(5) if x[j] != 0}) if i % 2 else Vectors.dense(x), float(t), v.tolist(), float(c))
        for i, (x, t, v, c) in enumerate(zip(X, y, V, w))
    ]
    df = spark.createDataFrame(rows, ["features", "label", "var", "weight"]).coalesce(1).repartition(2)
    est = SparkGSUClassifier(varianceCol="var", weightCol="weight", regParam=1e-2)
    local = GSUClassifier(lam=1e-2).fit(X, y, X_cov=V, sample_weight=w)
    assert us._arrow_barrier(df)
    arrow = est.fit(df)
    monkeypatch.setattr(us, "_arrow_barrier", lambda dataset: False)
    rowwise = est.fit(df)
    for model in (arrow, rowwise):
        np.testing.assert_allclose(model.objective, local.objective_, rtol=1e-10)
    np.testing.assert_array_equal(arrow.coefficients, rowwise.coefficients)
