"""The exact linear fit over the partitions of a Spark DataFrame (``pip install 'usvm[spark]'``).

``SparkGSUClassifier`` is a ``pyspark.ml`` Estimator (the pattern of XGBoost's and LightGBM's Spark
packages): ``fit`` runs one *barrier* stage in which every partition's task builds the shard of its rows and
task 0 runs the same exact solver as :class:`usvm.GSUClassifier`, asking every task for its partial sums
over a direct connection and adding the answers in partition order — the protocol of
:mod:`usvm.dask`, so the model is the local fit's up to the order of additions. A failed task fails the
stage, which Spark re-runs from the partitions: the result is the same. A barrier stage runs all its tasks
at once, so a DataFrame with more partitions than the cluster's task slots is repartitioned to that many.
Each task reads its partition as Arrow record batches (a barrier ``mapInArrow``, PySpark 3.5+ with pyarrow),
not as one Python Row object per row, which costs seconds per 10⁵ rows; older PySpark takes the Row path.
The tasks meet first at a rendezvous the driver serves (the pattern of XGBoost's tracker), where they learn
the classes, the width and task 0's address: ``BarrierTaskContext.allGather`` does the same but holds the
first task to arrive for a whole second (measured: 1.00–1.01 s per call in ``local[2]``).
``SparkGSUModel`` adds the decision values and the predicted label as columns.
"""

from __future__ import annotations

import json
import select
import socket
import struct
import threading
import time
from typing import Any

import numpy as np

try:
    from pyspark import BarrierTaskContext, keyword_only
    from pyspark.ml import Estimator, Model
    from pyspark.ml.linalg import Vectors, VectorUDT
    from pyspark.ml.param import Param, Params, TypeConverters
    from pyspark.ml.param.shared import (
        HasFeaturesCol,
        HasFitIntercept,
        HasLabelCol,
        HasMaxIter,
        HasPredictionCol,
        HasRawPredictionCol,
        HasRegParam,
        HasTol,
        HasWeightCol,
    )
    from pyspark.sql import functions as F
    from pyspark.sql.types import DoubleType
except ImportError as e:  # pragma: no cover
    raise ImportError("usvm.spark needs PySpark: pip install 'usvm[spark]' (and Java 17)") from e

from . import _usvm
from ._base import warn_unconverged
from ._clock import RoundClock, round_seconds
from ._estimators import GSUClassifier

__all__ = ["SparkGSUClassifier", "SparkGSUModel"]


class _GSUParams(
    HasFeaturesCol,
    HasLabelCol,
    HasWeightCol,
    HasPredictionCol,
    HasRawPredictionCol,
    HasMaxIter,
    HasTol,
    HasRegParam,
    HasFitIntercept,
):
    varianceCol = Param(
        Params._dummy(),
        "varianceCol",
        "column of each row's covariance: per-feature variances (vector or array), or one isotropic variance "
        "(double); empty for none",
        typeConverter=TypeConverters.toString,
    )
    method = Param(
        Params._dummy(), "method", "gsu, iso, hinge or power", typeConverter=TypeConverters.toString
    )
    radiusScale = Param(
        Params._dummy(), "radiusScale", "power: radius multiplier", typeConverter=TypeConverters.toFloat
    )
    maxRounds = Param(
        Params._dummy(), "maxRounds", "power: maximum alternating rounds", typeConverter=TypeConverters.toInt
    )
    gapTol = Param(
        Params._dummy(),
        "gapTol",
        "the relative duality gap (J - D)/J at which a certified fit stops, in (0, 1)",
        typeConverter=TypeConverters.toFloat,
    )

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._setDefault(varianceCol="", weightCol="", method="gsu", regParam=0.01, tol=1e-6, maxIter=1000)
        self._setDefault(fitIntercept=True, radiusScale=1.0, maxRounds=100, gapTol=1e-10)

    def _registry_params(self) -> str:
        """The registry object (λ = ``regParam``, the exact solver)."""
        method = self.getOrDefault(self.method)
        if method not in ("gsu", "iso", "hinge", "power"):
            raise ValueError(f"method must be gsu, iso, hinge or power for a sharded fit; got {method!r}")
        gap_tol = float(self.getOrDefault(self.gapTol))
        if not 0 < gap_tol < 1:
            raise ValueError(f"gapTol must be in (0, 1); got {gap_tol!r}")
        params = {
            "method": method,
            "regularization": {"lambda": float(self.getOrDefault(self.regParam))},
            "fit_intercept": bool(self.getOrDefault(self.fitIntercept)),
            "solver": {
                "name": "exact",
                "tol": float(self.getOrDefault(self.tol)),
                "max_iter": int(self.getOrDefault(self.maxIter)),
                "gap_tol": gap_tol,
            },
        }
        if method == "power":
            params["radius_scale"] = float(self.getOrDefault(self.radiusScale))
            params["max_rounds"] = int(self.getOrDefault(self.maxRounds))
        return json.dumps(params)


def _array(values: Any) -> np.ndarray:
    return np.asarray(values.toArray() if hasattr(values, "toArray") else values, dtype=np.float64)


def _send(conn: socket.socket, payload: bytes) -> None:
    conn.sendall(struct.pack("<Q", len(payload)) + payload)


def _receive(conn: socket.socket) -> bytes:
    def exactly(n: int) -> bytes:
        chunks = []
        while n:
            chunk = conn.recv(min(n, 1 << 20))
            if not chunk:
                raise ConnectionError("a partition's task closed its connection")
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    (length,) = struct.unpack("<Q", exactly(8))
    return exactly(length)


def _arrays_from_rows(rows: list, with_var: bool, with_weight: bool) -> tuple:
    """``(x, labels, cov, weights)`` of a partition's Rows (features, label[, variance][, weight])."""
    n_features = len(_array(rows[0][0])) if rows else 0
    x = np.array([_array(r[0]) for r in rows]).reshape(len(rows), n_features)
    labels = np.array([r[1] for r in rows], dtype=np.float64)
    cov = _variances(np.array([_array(r[2]) for r in rows]), x.shape) if with_var else None
    w = np.array([float(r[-1]) for r in rows]) if with_weight else None
    return x, labels, cov, w


def _variances(cov: np.ndarray, shape: tuple) -> np.ndarray:
    """A partition's variances as read: one row per example of the features' ``shape`` for per-feature
    variances (or one feature), else one isotropic variance per example."""
    return cov.reshape(shape) if cov.ndim > 1 or shape[1] == 1 else cov


def _column(col: Any) -> np.ndarray:
    """An Arrow column as numbers: a Spark ML vector (its struct of ``type, size, indices, values``, dense or
    sparse), an array of doubles (one row each), or one number per row."""
    import pyarrow as pa

    if pa.types.is_struct(col.type):
        kinds = col.field("type").to_numpy(zero_copy_only=False)
        values = col.field("values")
        if (kinds == 1).all():  # dense vectors: their values, row after row
            return values.flatten().to_numpy(zero_copy_only=False).reshape(len(col), -1)
        sizes, indices = col.field("size").to_pylist(), col.field("indices").to_pylist()
        widths = {len(v) if k == 1 else sizes[i] for i, (k, v) in enumerate(zip(kinds, values.to_pylist()))}
        if len(widths) > 1:
            raise ValueError(f"vectors of different sizes {sorted(widths)} in one column")
        out = np.zeros((len(col), widths.pop()))
        for i, (kind, vals) in enumerate(zip(kinds, values.to_pylist())):
            if kind == 1:
                out[i] = vals
            else:
                out[i, np.asarray(indices[i], dtype=np.int64)] = vals
        return out
    if pa.types.is_list(col.type) or pa.types.is_large_list(col.type):
        return col.flatten().to_numpy(zero_copy_only=False).reshape(len(col), -1).astype(np.float64)
    return col.to_numpy(zero_copy_only=False).astype(np.float64)


def _arrays_from_batches(batches: Any, with_var: bool, with_weight: bool) -> tuple:
    """``(x, labels, cov, weights)`` of a partition's Arrow record batches (columnar: no Python object per
    row, the cost of moving rows to Python that the Row path pays)."""
    import pyarrow as pa

    batches = list(batches)
    if not batches or sum(b.num_rows for b in batches) == 0:
        empty = np.zeros((0, 0))
        return empty, np.zeros(0), empty if with_var else None, np.zeros(0) if with_weight else None
    table = pa.Table.from_batches(batches)
    cols = [c.combine_chunks() for c in table.columns]
    x = _column(cols[0])
    x = x.reshape(table.num_rows, -1)
    labels = _column(cols[1])
    cov = _variances(_column(cols[2]), x.shape) if with_var else None
    w = _column(cols[-1]) if with_weight else None
    return x, labels, cov, w


# How long the driver's rendezvous waits for a connection's message (a task sends it as it connects).
_ARRIVAL_SECONDS = 60.0


class _Rendezvous:
    """Where a barrier stage's tasks meet before they build their shards: a TCP server on the driver. Each
    task sends what it read (``_serve``'s ``mine``: its partition, the stage's task count, its task attempt);
    once every partition has a live task waiting, each gets every task's ``mine``, in partition order.

    A re-run stage (after a failed task) meets again: a later attempt of a partition replaces an earlier
    one, and a waiting task whose connection closed (killed with the failed stage) is dropped. Each arrival
    is read on its own thread, within ``_ARRIVAL_SECONDS``: a stray connection that sends nothing or
    something else is closed and holds up no task."""

    def __init__(self, host: str) -> None:
        self._server = socket.create_server(("", 0))
        self.address = f"{host}:{self._server.getsockname()[1]}"
        self._waiting: dict[int, tuple[socket.socket, dict]] = {}
        self._lock = threading.Lock()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                if self._server.fileno() < 0:  # closed: the stage is over
                    return
                continue
            threading.Thread(target=self._arrive, args=(conn,), daemon=True).start()

    def _arrive(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(_ARRIVAL_SECONDS)
            mine = json.loads(_receive(conn))
            partition, tasks, attempt = int(mine["partition"]), int(mine["tasks"]), int(mine["attempt"])
            conn.settimeout(None)
        except (OSError, ConnectionError, ValueError, KeyError, TypeError):
            conn.close()
            return
        with self._lock:
            earlier = self._waiting.get(partition)
            if earlier is not None and earlier[1]["attempt"] > attempt:
                conn.close()
                return
            if earlier is not None:
                earlier[0].close()
            self._waiting[partition] = (conn, mine)
            self._waiting = {p: cm for p, cm in self._waiting.items() if not _closed(cm[0])}
            if len(self._waiting) == tasks:
                met, self._waiting = self._waiting, {}
                gathered = json.dumps([met[p][1] for p in sorted(met)]).encode()
                for c, _ in met.values():
                    with c:
                        _send(c, gathered)

    def close(self) -> None:
        self._server.close()
        with self._lock:
            for conn, _ in self._waiting.values():
                conn.close()


def _closed(conn: socket.socket) -> bool:
    """Whether the other end closed ``conn`` (a waiting task sends nothing more until it is answered)."""
    try:
        readable, _, _ = select.select([conn], [], [], 0)
        return bool(readable) and not conn.recv(1, socket.MSG_PEEK)
    except OSError:  # reset
        return True


def _meet(rendezvous: str, ctx: Any, mine: dict) -> list[dict]:
    """Every task's ``mine``, from the driver's :class:`_Rendezvous`."""
    host, port = rendezvous.rsplit(":", 1)
    with socket.create_connection((host, int(port))) as conn:
        _send(conn, json.dumps({**mine, "attempt": ctx.taskAttemptId()}).encode())
        return json.loads(_receive(conn))


def _serve(params: str, rendezvous: str, read: Any) -> Any:
    """One partition's part of the barrier stage: read its arrays (``read()``), agree with the others on
    the classes and the width, build its shard, then answer (or, in task 0, drive) the fit. Returns task 0's
    ``(kind, text, extra)`` (``extra``: reports, info and classes as JSON), ``None`` elsewhere.

    The tasks meet at the driver's rendezvous to learn every partition's labels, width, any error and where
    task 0 listens — in place of Spark jobs that would find the classes and the width first. Every other task
    then connects to task 0 and reports whether it could build its shard; the questions and answers follow
    over the same connections (a barrier round per question would cost Spark's synchronisation latency)."""
    ctx = BarrierTaskContext.get()
    me = ctx.partitionId()
    x = labels = cov = w = None
    try:
        x, labels, cov, w = read()
        mine = {"error": "", "classes": np.unique(labels).tolist(), "width": x.shape[1] if len(x) else None}
    except (ValueError, TypeError) as e:
        mine = {"error": f"partition {me}: {e}", "classes": [], "width": None}
    server, address = None, ""
    if me == 0:
        server = socket.create_server(("", 0))
        host = ctx.getTaskInfos()[0].address.rsplit(":", 1)[0]
        address = f"{host}:{server.getsockname()[1]}"
    tasks = len(ctx.getTaskInfos())
    gathered = _meet(rendezvous, ctx, {**mine, "partition": me, "tasks": tasks, "address": address})
    classes = np.array(sorted({c for g in gathered for c in g["classes"]}), dtype=np.float64)
    widths = [g["width"] for g in gathered if g["width"] is not None]
    errors = [g["error"] for g in gathered if g["error"]]
    if not errors and not widths:
        errors = ["no training examples"]
    if not errors and len(classes) < 2:
        errors = [f"SparkGSUClassifier needs at least 2 classes; the labels are {classes.tolist()}"]
    if errors:
        if server is not None:
            server.close()
            return ("error", errors[0], "")
        return None
    shard, built = None, ""
    try:
        if len(x) == 0:  # an empty partition: no rows of the common width
            x = np.zeros((0, widths[0]))
            cov = None if cov is None else np.zeros((0, widths[0]))
        codes = np.searchsorted(classes, labels).astype(np.int64)
        shard = _usvm.Shard(params, x, codes, cov=cov, sample_weight=w)
    except (ValueError, TypeError) as e:
        built = f"partition {me}: {e}"
    if me != 0:
        host, port = gathered[0]["address"].rsplit(":", 1)
        with socket.create_connection((host, int(port))) as conn:
            _send(conn, json.dumps([me, built]).encode())
            while question := _receive(conn):  # none if any shard could not be built
                started = time.perf_counter()
                answer = shard.answer(question)
                _send(conn, struct.pack("<d", time.perf_counter() - started))
                _send(conn, answer)
        return None
    peers: dict[int, socket.socket] = {}
    unbuilt = {0: built} if built else {}  # partition: why its shard could not be built
    with server:
        while len(peers) < len(gathered) - 1:
            conn, _ = server.accept()
            pid, their_error = json.loads(_receive(conn))
            peers[pid] = conn
            unbuilt.update({pid: their_error} if their_error else {})
    order = [peers[k] for k in sorted(peers)]

    clock = RoundClock()

    def ask(question: bytes) -> list[bytes]:
        started = time.perf_counter()
        for conn in order:
            _send(conn, question)
        computing = time.perf_counter()
        own = shard.answer(question)
        timed = [(own, time.perf_counter() - computing)]
        # Each peer's answer comes after the seconds it took, a message of its own (no copy of the answer).
        for conn in order:
            (seconds,) = struct.unpack("<d", _receive(conn))
            timed.append((_receive(conn), seconds))
        return clock.round(started, timed)

    try:
        if unbuilt:
            return ("error", unbuilt[min(unbuilt)], "")
        model, reports, info = clock.fit(lambda: _usvm.fit_sharded(params, ask))
        extra = {"reports": reports, "info": info, "classes": classes.tolist()}
        return ("model", model.to_json(), json.dumps(extra))
    except ValueError as e:
        return ("error", str(e), "")
    finally:
        for conn in order:
            _send(conn, b"")
            conn.close()


def _train(params: str, rendezvous: str, with_var: bool, with_weight: bool) -> Any:
    """The barrier task of every partition over its Rows (``RDD.barrier().mapPartitions``)."""

    def task(rows: Any) -> Any:
        read = lambda: _arrays_from_rows(list(rows), with_var, with_weight)  # noqa: E731
        result = _serve(params, rendezvous, read)
        if result is not None:
            yield result

    return task


def _train_arrow(params: str, rendezvous: str, with_var: bool, with_weight: bool) -> Any:
    """The barrier task of every partition over its Arrow batches (``mapInArrow(..., barrier=True)``)."""
    import pyarrow as pa

    def task(batches: Any) -> Any:
        read = lambda: _arrays_from_batches(batches, with_var, with_weight)  # noqa: E731
        result = _serve(params, rendezvous, read)
        if result is not None:
            kind, text, extra = result
            yield pa.RecordBatch.from_pydict({"kind": [kind], "text": [text], "extra": [extra]})

    return task


def _arrow_barrier(dataset: Any) -> bool:
    """Whether this PySpark runs barrier ``mapInArrow`` stages (3.5+) and pyarrow is installed."""
    import inspect

    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return "barrier" in inspect.signature(dataset.mapInArrow).parameters


class SparkGSUClassifier(Estimator, _GSUParams):
    """LSVM-GSU (or LSVM-iso, LSVM) fitted by the exact solver over the partitions of a Spark DataFrame.

    Columns: ``featuresCol`` (vector), ``labelCol`` (numeric labels), optional ``varianceCol`` (per-feature
    variances as a vector or array, or one isotropic variance) and ``weightCol``. ``regParam`` is λ of
    :class:`usvm.GSUClassifier` (``λ/2‖w‖² + (1/n) Σ c_i L_i``; weights as given). The model is
    ``GSUClassifier(lam=regParam)``'s on the same rows.
    """

    @keyword_only
    def __init__(
        self,
        *,
        featuresCol: str = "features",
        labelCol: str = "label",
        varianceCol: str = "",
        weightCol: str = "",
        method: str = "gsu",
        radiusScale: float = 1.0,
        maxRounds: int = 100,
        gapTol: float = 1e-10,
        regParam: float = 0.01,
        tol: float = 1e-6,
        maxIter: int = 1000,
        fitIntercept: bool = True,
        predictionCol: str = "prediction",
        rawPredictionCol: str = "rawPrediction",
    ) -> None:
        super().__init__()
        self._set(**self._input_kwargs)

    def _fit(self, dataset: Any) -> SparkGSUModel:
        params = self._registry_params()
        label = self.getOrDefault(self.labelCol)
        columns = [self.getOrDefault(self.featuresCol), label]
        var, weight = self.getOrDefault(self.varianceCol), self.getOrDefault(self.weightCol)
        columns += [c for c in (var, weight) if c]
        rows = dataset.select(*columns)
        # A barrier stage runs all its tasks at once: no more partitions than the cluster has task slots.
        context = dataset.sparkSession.sparkContext
        slots = context.defaultParallelism
        if rows.rdd.getNumPartitions() > slots:
            rows = rows.repartition(slots)
        rendezvous = _Rendezvous(context.getConf().get("spark.driver.host"))
        try:
            if _arrow_barrier(rows):
                # Columnar batches: moving the rows to Python as Row objects would cost seconds per 10⁵ rows.
                task = _train_arrow(params, rendezvous.address, bool(var), bool(weight))
                outputs = rows.mapInArrow(task, "kind string, text string, extra string", barrier=True).collect()
            else:
                task = _train(params, rendezvous.address, bool(var), bool(weight))
                outputs = rows.rdd.barrier().mapPartitions(task).collect()
        finally:
            rendezvous.close()
        kind, text, extra = outputs[0]
        if kind == "error":
            raise ValueError(text)
        details = json.loads(extra)
        method = self.getOrDefault(self.method)
        warn_unconverged(type(self).__name__, method, details["reports"], stacklevel=4)
        model = SparkGSUModel(text, details["classes"], details["reports"], details["info"])
        return self._copyValues(model)


class SparkGSUModel(Model, _GSUParams):
    """A fitted :class:`SparkGSUClassifier`: ``transform`` adds ``rawPredictionCol`` (the decision values
    ``f_k(x)``, one per hyperplane) and ``predictionCol`` (the label)."""

    def __init__(
        self, model_json: str = "", classes: list | None = None, reports: list | None = None, info: Any = None
    ) -> None:
        super().__init__()
        self.model_json = model_json
        self.classes = classes or []
        self.reports = reports or []
        self.info = info or {}
        self._model = _usvm.Model.from_json(model_json) if model_json else None

    @property
    def coefficients(self) -> np.ndarray:
        """The hyperplanes, one row per binary problem."""
        return self._model.coef

    @property
    def intercept(self) -> np.ndarray:
        return self._model.intercept

    @property
    def objective(self) -> list[float]:
        return [r["objective"] for r in self.reports]

    @property
    def numRounds(self) -> int:
        """Questions asked of the partitions over the whole fit."""
        return int(self.info["total_rounds"])

    @property
    def bytesExchanged(self) -> tuple[int, int]:
        """``(sent, received)``: the bytes of the questions to and answers from the partitions."""
        return int(self.info["bytes_sent"]), int(self.info["bytes_received"])

    @property
    def roundSeconds(self) -> dict[str, float]:
        """``{"wall": s, "compute": s, "driver": s}``, as :class:`usvm.dask.DaskGSUClassifier`'s
        ``round_seconds_``: the rounds' wall time in task 0 (which drives the fit), the compute time of each
        round's slowest partition summed over the rounds (the rest is waiting: sockets, latency), and
        task 0's time between rounds (its own solves and sums)."""
        return round_seconds(self.info)

    def to_local(self) -> GSUClassifier:
        """The same fitted model as an ordinary :class:`usvm.GSUClassifier`."""
        local = GSUClassifier(
            lam=self.getOrDefault(self.regParam),
            method=self.getOrDefault(self.method),
            radius_scale=self.getOrDefault(self.radiusScale),
            max_rounds=self.getOrDefault(self.maxRounds),
            tol=self.getOrDefault(self.tol),
            max_iter=self.getOrDefault(self.maxIter),
            gap_tol=self.getOrDefault(self.gapTol),
            fit_intercept=self.getOrDefault(self.fitIntercept),
        )
        local.classes_ = np.array(self.classes)
        local.model_ = self._model
        local.reports_ = self.reports
        local.intercept_ = self._model.intercept  # (`coef_` is read from `model_`)
        local.n_features_in_ = self._model.n_features
        local.n_iter_ = int(max(r["n_iter"] for r in self.reports))
        local.objective_ = np.array(self.objective)
        local.converged_ = np.array([r["converged"] for r in self.reports])
        local.gradient_norm_ = np.array([r["gradient_norm"] for r in self.reports])
        local.lam_ = float(self.getOrDefault(self.regParam))
        return local

    def _transform(self, dataset: Any) -> Any:
        # The model pickles (as its JSON) into each task once, not once per row.
        model, classes = self._model, self.classes

        def raw(v: Any) -> Any:
            f = np.asarray(model.decision_function(_array(v).reshape(1, -1))).ravel()
            return Vectors.dense(f)

        def label(f: Any) -> float:
            f = f.toArray()
            return float(classes[int(f[0] > 0)] if len(f) == 1 else classes[int(np.argmax(f))])

        raw_col, pred_col = self.getOrDefault(self.rawPredictionCol), self.getOrDefault(self.predictionCol)
        out = dataset.withColumn(raw_col, F.udf(raw, VectorUDT())(F.col(self.getOrDefault(self.featuresCol))))
        return out.withColumn(pred_col, F.udf(label, DoubleType())(F.col(raw_col)))
