"""The exact linear fit over the row partitions of Dask collections (``pip install 'usvm[dask]'``).

Each partition of the rows becomes a *shard* on the worker that holds it: its means, labels, weights and
covariances in the core's storage (a ``usvm._usvm.Shard``, a Dask future: the worker's only copy of those
rows besides the input collection). The driver, in this process, runs the same exact
solver as :class:`usvm.GSUClassifier` — the same smoothing stages, Newton steps and line searches — and
asks the shards for partial sums at each point (value and gradient with the small Hessian, Hessian-vector
products above 64 features, the objective along a line). It adds their answers in partition order, so the
fit is the local fit up to the order of floating-point additions and is bit-for-bit the same from run to run.
No model averaging, no ADMM: one model, the optimum of the whole data.

Every question carries the point it is asked at, so when a worker dies Dask rebuilds the lost shard from
its partition's graph on another worker, which gives the same answer: the fit goes on, with the same
result.

The plain hinge (``method="hinge"``, and each round of ``"power"``) is solved in tens of round trips by a
distributed dual method (CoCoA+) and an exact finish on the rows near the margin. Its rounds update each
shard's multipliers; those are a Dask future per shard and round (``_usvm.DualState``), computed from the
shard and the previous round's state, so a lost state is recomputed from that lineage, bit for bit.
"""

from __future__ import annotations

import json
import math
import operator
import time
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

try:
    import dask
    import dask.array as da
    from distributed import get_client
except ImportError as e:  # pragma: no cover
    raise ImportError("usvm.dask needs Dask: pip install 'usvm[dask]' (dask[array,distributed])") from e

from . import _usvm
from ._base import warn_unconverged
from ._checks import positive_int, positive_real
from ._clock import RoundClock, round_seconds
from ._covariance import _as_cov
from ._estimators import GSUClassifier
from ._persist import CoreState

__all__ = ["DaskGSUClassifier", "DaskGSUClassifierCV", "ShardError"]

_METHODS = ("gsu", "iso", "hinge", "power")


class ShardError(ValueError):
    """A partition that cannot be part of the fit (bad values, a different feature count): names it."""


def _shard(index: int, x: Any, y: Any, cov: Any, w: Any, classes: np.ndarray, params: str) -> Any:
    """Partition ``index``'s shard for a fit of ``params``: labels as indices into ``classes``. It is the
    partition's only copy of its rows on the worker. Weights are kept as given: the core's driver takes the
    λ form's weighted mean over all shards."""
    x = np.asarray(x)
    n, d = x.shape
    y = np.asarray(y)
    if y.shape != (n,):
        raise ShardError(f"partition {index}: y has shape {y.shape} for {n} rows")
    codes = np.searchsorted(classes, y).astype(np.int64)
    try:
        cov = _as_cov(None if cov is None else np.asarray(cov), n, d)
        w = None if w is None else np.asarray(w, dtype=np.float64)
        return _usvm.Shard(params, x, codes, cov=cov, sample_weight=w)
    except (ValueError, TypeError) as e:
        raise ShardError(f"partition {index}: {e}") from None


def _answer(shard: Any, question: bytes) -> tuple[bytes, float]:
    """A shard's answer to ``question``, and the seconds it took."""
    t = time.perf_counter()
    answer = shard.answer(question)
    return answer, time.perf_counter() - t


def _answer_with_state(shard: Any, previous: Any, question: bytes) -> tuple:
    """A shard's ``(state, (answer, seconds))`` to a round of the dual method from the ``previous`` round's
    result (``None`` before the first): the state stays in the result, on the worker."""
    t = time.perf_counter()
    state, answer = shard.answer_with_state(None if previous is None else previous[0], question)
    return state, (answer, time.perf_counter() - t)


def _ask(client: Any, shards: list, states: list, question: bytes, clock: RoundClock | None = None) -> list[bytes]:
    """One round: ``question`` to every shard (futures), answers in order. A round of the dual method goes
    with each shard's last result (``states``, futures holding the state, replaced by the round's; only the
    answer travels)."""
    clock = clock or RoundClock()
    started = time.perf_counter()
    if not _usvm.question_keeps_state(question):
        timed = client.gather([client.submit(_answer, shard, question, pure=False) for shard in shards])
        return clock.round(started, timed)
    states[:] = [
        client.submit(_answer_with_state, shard, state, question, pure=False) for shard, state in zip(shards, states)
    ]
    return clock.round(started, client.gather([client.submit(operator.getitem, f, 1, pure=False) for f in states]))


def _as_dask_rows(a: Any, name: str) -> Any:
    """``a`` as a Dask array with known row chunks (dataframes and series through ``to_dask_array``)."""
    if a is None:
        return None
    if hasattr(a, "to_dask_array"):
        a = a.to_dask_array(lengths=True)
    if not isinstance(a, da.Array):
        raise TypeError(
            f"{name} must be a Dask array, dataframe or series partitioned by rows; got {type(a).__name__}"
        )
    if a.ndim == 0 or any(math.isnan(c) for c in a.chunks[0]):
        raise ValueError(
            f"{name} has no known row chunks (shape {a.shape}): compute them first, e.g. "
            "df.to_dask_array(lengths=True) or array.compute_chunk_sizes()"
        )
    return a


def _aligned(a: Any, rows: tuple, name: str) -> Any:
    """``a`` chunked like the rows of ``X`` (one chunk along every other axis)."""
    a = _as_dask_rows(a, name)
    if a is None:
        return None
    if a.shape[0] != sum(rows):
        raise ValueError(f"{name} has {a.shape[0]} rows; X has {sum(rows)}")
    return a.rechunk((rows,) + tuple(-1 for _ in a.shape[1:]))


class _Partitions:
    """The shards of one fit, one per row partition, as Dask futures on the workers (built from the
    partitions, validated, labels encoded) until :meth:`close`. A shard lost with its
    worker is rebuilt by Dask from the partition's lineage; a shard moved between workers pickles as its
    rows. ``params``: the method the shards are prepared for (any λ: a path reuses them)."""

    def __init__(
        self,
        client: Any,
        params: str,
        X: Any,
        y: Any,
        X_cov: Any,
        sample_weight: Any,
    ) -> None:
        X = _as_dask_rows(X, "X")
        if X.ndim != 2:
            raise ValueError(f"X must be 2-dimensional; got shape {X.shape}")
        X = X.rechunk({1: -1})
        rows = X.chunks[0]
        y = _aligned(y, rows, "y")
        if y.ndim != 1:
            raise ValueError(f"y must be 1-dimensional; got shape {y.shape}")
        cov = _aligned(X_cov, rows, "X_cov")
        sw = _aligned(sample_weight, rows, "sample_weight")
        classes = np.unique(client.compute(da.unique(y)).result())
        if len(classes) < 2:
            raise ValueError(f"the fit needs at least 2 classes; y has only {classes.tolist()}")
        blocks = [b.to_delayed().ravel() if b is not None else [None] * len(rows) for b in (X, y, cov, sw)]
        self.client = client
        self.classes = classes
        self.rows = rows
        self.n_features = X.shape[1]
        self.parts = client.compute(
            [
                dask.delayed(_shard, pure=False)(i, xb, yb, cb, wb, classes, params)
                for i, (xb, yb, cb, wb) in enumerate(zip(*blocks))
            ]
        )

    def fit(self, params: str, ask: Any, which: list[int] | None = None, start: Any = None) -> tuple:
        """The sharded fit of ``params`` over the shards of partitions ``which`` (default all), through
        ``ask(client, shards, question)``; a warm start from ``start``."""
        indices = range(len(self.parts)) if which is None else which
        shards = [self.parts[i] for i in indices]
        states: list = [None] * len(shards)
        clock = RoundClock()

        def round_trip(question: bytes) -> list[bytes]:
            return ask(self.client, shards, states, question, clock)

        return clock.fit(lambda: _usvm.fit_sharded(params, round_trip, start=start))

    def accuracy(self, model: Any, which: list[int]) -> float:
        """The share of the rows of partitions ``which`` that ``model`` classifies right."""
        futures = [self.client.submit(_correct, model, self.parts[i], pure=False) for i in which]
        right, total = map(sum, zip(*self.client.gather(futures)))
        return right / total if total else float("nan")

    def close(self) -> None:
        self.client.cancel(self.parts)


def _correct(model: Any, shard: Any) -> tuple[int, int]:
    """(correctly classified rows, rows) of one shard."""
    return shard.correct(model), shard.n_samples


class DaskGSUClassifier(CoreState, ClassifierMixin, BaseEstimator):
    r"""LSVM-GSU (and LSVM-iso, LSVM, Power SVM) fitted by the exact solver over the row partitions of Dask
    collections.

    The model is :class:`usvm.GSUClassifier`'s on the whole data (same objective, same solver, same Newton
    steps, coefficients equal up to the order of additions); the data stay on the workers. See the module
    documentation for how it works.

    Parameters
    ----------
    lam : float, default=0.01
        Regularisation λ > 0 (ignored when ``C`` is given).
    C : float or None, default=None
        If given, ``λ = 1 / (C · n_samples)``.
    method : {"gsu", "iso", "hinge", "power"}, default="gsu"
        ``"hinge"`` runs a distributed dual method (CoCoA+) and an exact finish on the rows near the
        margin: the local optimum, certified by the whole problem's duality gap, in tens of rounds.
        ``"power"`` runs Power SVM's alternating rounds, each such a hinge fit on the points moved by the
        workers (same rounds and optimum as the local fit, to the solvers' tolerance).
    radius_scale : float, default=1.0
        ``method="power"``: radius multiplier, as :class:`usvm.GSUClassifier`'s.
    max_rounds : int, default=100
        ``method="power"``: maximum alternating rounds.
    tol : float, default=1e-6
        Stop when ``‖∇J‖ ≤ tol · ‖∇J(0)‖``.
    max_iter : int, default=1000
        Newton iterations (for ``"hinge"`` and ``"power"``: rounds of the dual method per hinge fit).
    gap_tol : float in (0, 1), default=1e-10
        The relative duality gap ``(J - D)/J`` at which a certified fit stops (the hinge's and Power SVM's
        rounds; GSU's exact finish), as :class:`usvm.GSUClassifier`'s.
    fit_intercept : bool, default=True
    client : distributed.Client or None, default=None
        The Dask client; by default the current one (``distributed.get_client()``).

    Attributes
    ----------
    coef_, intercept_, classes_, n_features_in_, n_iter_, objective_, converged_
        As :class:`usvm.GSUClassifier`'s.
    lam_ : float
        The λ actually used.
    n_shards_ : int
        Partitions (shards) of the rows.
    n_rounds_ : int
        Questions asked of the shards (each one round trip to every shard), over all binary problems.
    rounds_ : list of int
        Rounds per binary problem.
    bytes_sent_, bytes_received_ : int
        The numbers exchanged with the shards, in bytes (8 per number).
    round_seconds_ : dict
        ``{"wall": s, "compute": s, "driver": s}``: the rounds' wall time in this process, the compute time
        of each round's slowest shard summed over the rounds (the rest is waiting: scheduling, transfer,
        latency), and the time this process spent between rounds (its own solves and sums).
    model_ : usvm Model
        The fitted model (as a local estimator's ``model_``).
    """

    def __init__(
        self,
        *,
        lam: float = 0.01,
        C: float | None = None,
        method: str = "gsu",
        radius_scale: float = 1.0,
        max_rounds: int = 100,
        tol: float = 1e-6,
        max_iter: int = 1000,
        gap_tol: float = 1e-10,
        fit_intercept: bool = True,
        client: Any = None,
    ) -> None:
        self.lam = lam
        self.C = C
        self.method = method
        self.radius_scale = radius_scale
        self.max_rounds = max_rounds
        self.tol = tol
        self.max_iter = max_iter
        self.gap_tol = gap_tol
        self.fit_intercept = fit_intercept
        self.client = client

    def _params(self, lam: float | None = None) -> dict[str, Any]:
        """The registry object; ``lam`` given: at that λ instead of the estimator's ``lam``/``C``."""
        if lam is None:
            positive_real("lam", self.lam)
            positive_real("C", self.C, allow_none=True)
            regularization = {"lambda": float(self.lam)} if self.C is None else {"C": float(self.C)}
        else:
            regularization = {"lambda": lam}
        positive_real("tol", self.tol)
        positive_int("max_iter", self.max_iter)
        if not 0 < self.gap_tol < 1:
            raise ValueError(f"gap_tol must be in (0, 1); got {self.gap_tol!r}")
        if self.method not in _METHODS:
            raise ValueError(f"method must be one of {_METHODS} for a sharded fit; got {self.method!r}")
        params = {
            "method": self.method,
            "regularization": regularization,
            "fit_intercept": bool(self.fit_intercept),
            "solver": {
                "name": "exact",
                "tol": float(self.tol),
                "max_iter": int(self.max_iter),
                "gap_tol": float(self.gap_tol),
            },
        }
        if self.method == "power":
            positive_int("max_rounds", self.max_rounds)
            params.update(radius_scale=float(self.radius_scale), max_rounds=int(self.max_rounds))
        return params

    def fit(self, X: Any, y: Any, X_cov: Any = None, sample_weight: Any = None) -> DaskGSUClassifier:
        """Fits on Dask collections partitioned by rows: ``X`` (n, d) means, ``y`` labels, ``X_cov`` (n,)
        isotropic variances, (n, d) diagonal variances or (n, d, d) full covariances, ``sample_weight`` (n,).
        ``y``, ``X_cov`` and ``sample_weight`` are re-chunked to ``X``'s row partitions."""
        params = json.dumps(self._params())
        partitions = _Partitions(self._client(), params, X, y, X_cov, sample_weight)
        try:
            model, reports, info = partitions.fit(params, self._ask)
        finally:
            partitions.close()
        lam = float(self.lam) if self.C is None else 1.0 / (self.C * info["n_samples"])
        self._set_fitted(partitions, model, reports, info, lam)
        return self

    def _client(self) -> Any:
        return self.client if self.client is not None else get_client()

    def _set_fitted(self, partitions: _Partitions, model: Any, reports: list, info: dict, lam: float) -> None:
        classes = partitions.classes
        self.classes_ = classes
        self.model_ = model
        self.reports_ = reports
        self.coef_ = model.coef
        self.intercept_ = model.intercept
        self.n_features_in_ = partitions.n_features
        self.n_iter_ = int(max(r["n_iter"] for r in reports))
        self.objective_ = np.array([r["objective"] for r in reports], dtype=np.float64)
        self.converged_ = np.array([r["converged"] for r in reports], dtype=bool)
        self.lam_ = lam
        self.n_shards_ = info["n_shards"]
        self.rounds_ = list(info["rounds"])
        self.n_rounds_ = info["total_rounds"]
        self.bytes_sent_ = info["bytes_sent"]
        self.bytes_received_ = info["bytes_received"]
        self.round_seconds_ = round_seconds(info)
        warn_unconverged(type(self).__name__, self.method, reports, stacklevel=4)

    @staticmethod
    def _ask(client: Any, shards: list, states: list, question: bytes, clock: Any = None) -> list[bytes]:
        """One round: ``question`` to every shard (futures), answers in order (see the module's ``_ask``)."""
        return _ask(client, shards, states, question, clock)

    def to_local(self) -> GSUClassifier:
        """The same fitted model as an ordinary :class:`usvm.GSUClassifier` (predicts on numpy/scipy input,
        pickles, exports with ``to_json``)."""
        check_is_fitted(self, "model_")
        local = GSUClassifier(
            lam=self.lam,
            C=self.C,
            method=self.method,
            radius_scale=self.radius_scale,
            max_rounds=self.max_rounds,
            tol=self.tol,
            max_iter=self.max_iter,
            gap_tol=self.gap_tol,
            fit_intercept=self.fit_intercept,
        )
        return self._copy_fitted(local)

    def _copy_fitted(self, local: GSUClassifier) -> GSUClassifier:
        # (`coef_` is read from `model_`.)
        for name in ("classes_", "model_", "reports_", "intercept_", "n_features_in_", "n_iter_"):
            setattr(local, name, getattr(self, name))
        local.objective_ = self.objective_.copy()
        local.converged_ = self.converged_.copy()
        local.gradient_norm_ = np.array([r["gradient_norm"] for r in self.reports_], dtype=np.float64)
        local.lam_ = self.lam_
        return local

    def decision_function(self, X: Any) -> Any:
        """``f(x)`` for a numpy/scipy array (as :class:`usvm.GSUClassifier`), or lazily per block for a Dask
        array."""
        check_is_fitted(self, "model_")
        if isinstance(X, da.Array) or hasattr(X, "to_dask_array"):
            X = _as_dask_rows(X, "X").rechunk({1: -1})
            k = self.coef_.shape[0]
            out = X.map_blocks(_block_scores, self.model_, dtype=np.float64, chunks=(X.chunks[0], (k,)))
            return out[:, 0] if k == 1 else out
        return self.to_local().decision_function(X)

    def predict(self, X: Any) -> Any:
        """The class of each row (lazily per block for a Dask array)."""
        f = self.decision_function(X)
        idx = (f > 0).astype(np.intp) if f.ndim == 1 else f.argmax(axis=1)
        if isinstance(idx, da.Array):
            return idx.map_blocks(self.classes_.take, dtype=self.classes_.dtype)
        return self.classes_[idx]


def _block_scores(x: np.ndarray, model: Any) -> np.ndarray:
    """The decision values of one block of rows, (rows, outputs)."""
    k = model.coef.shape[0]
    if len(x) == 0:
        return np.empty((0, k))
    return np.asarray(model.decision_function(np.asarray(x, dtype=np.float64))).reshape(len(x), k)


class DaskGSUClassifierCV(DaskGSUClassifier):
    r""":class:`DaskGSUClassifier` with λ chosen by cross-validation over the partitions, along warm-started
    paths over the same shards.

    The partitions are dealt to ``cv`` folds (partition ``i`` to fold ``i mod cv``: whole partitions are
    held out, as grouped cross-validation does). For each fold the shards of the other partitions fit every
    λ of ``lams`` from the largest to the smallest, each fit starting from the previous solution; the
    held-out partitions score it (accuracy). The shards are built once and serve every fold and λ. The λ
    with the best mean accuracy (the first of ``lams`` on a tie) is refitted on all partitions.

    Parameters
    ----------
    lams : array-like of float, default=2**arange(-12, 3)
    cv : int, default=5
        Folds of partitions (at most the number of partitions).
    method, radius_scale, max_rounds, tol, max_iter, gap_tol, fit_intercept, client
        As :class:`DaskGSUClassifier`'s.

    Attributes
    ----------
    lam_, lams_, scores_ (n_folds × n_lams), mean_scores_, n_rounds_path_ (n_folds × n_lams)
        The λ chosen, the candidates, the held-out accuracies, their means and the rounds of each path fit;
        and every attribute of :class:`DaskGSUClassifier` for the refit.
    """

    def __init__(
        self,
        *,
        lams: Any = None,
        cv: int = 5,
        method: str = "gsu",
        radius_scale: float = 1.0,
        max_rounds: int = 100,
        tol: float = 1e-6,
        max_iter: int = 1000,
        gap_tol: float = 1e-10,
        fit_intercept: bool = True,
        client: Any = None,
    ) -> None:
        self.lams = lams
        self.cv = cv
        self.method = method
        self.radius_scale = radius_scale
        self.max_rounds = max_rounds
        self.tol = tol
        self.max_iter = max_iter
        self.gap_tol = gap_tol
        self.fit_intercept = fit_intercept
        self.client = client

    def fit(self, X: Any, y: Any, X_cov: Any = None, sample_weight: Any = None) -> DaskGSUClassifierCV:
        """Cross-validates every λ of ``lams`` over the partitions, then refits the best on all of them."""
        lams = np.asarray(2.0 ** np.arange(-12, 3) if self.lams is None else self.lams, dtype=np.float64)
        if lams.ndim != 1 or len(lams) == 0:
            raise ValueError(f"lams must be a non-empty 1-d array of λ; got shape {lams.shape}")
        for lam in lams:
            positive_real("lams", float(lam))
        positive_int("cv", self.cv)
        if self.cv < 2:
            raise ValueError(f"cv must be at least 2; got {self.cv}")
        lam_params = json.dumps(self._params(float(lams[0])))
        partitions = _Partitions(self._client(), lam_params, X, y, X_cov, sample_weight)
        try:
            n_parts = len(partitions.parts)
            if n_parts < self.cv:
                raise ValueError(f"cv={self.cv} folds of partitions, but X has {n_parts} partitions")
            path = np.argsort(-lams, kind="stable")
            self.scores_ = np.empty((self.cv, len(lams)))
            self.n_rounds_path_ = np.empty((self.cv, len(lams)), dtype=np.int64)
            for f in range(self.cv):
                train = [i for i in range(n_parts) if i % self.cv != f]
                test = [i for i in range(n_parts) if i % self.cv == f]
                start = None
                for j in path:
                    params = json.dumps(self._params(float(lams[j])))
                    start, _, info = partitions.fit(params, self._ask, which=train, start=start)
                    self.scores_[f, j] = partitions.accuracy(start, test)
                    self.n_rounds_path_[f, j] = info["total_rounds"]
            self.lams_ = lams
            self.mean_scores_ = self.scores_.mean(axis=0)
            best = float(lams[int(np.argmax(self.mean_scores_))])
            model, reports, info = partitions.fit(json.dumps(self._params(best)), self._ask)
        finally:
            partitions.close()
        self._set_fitted(partitions, model, reports, info, best)
        return self

    def to_local(self) -> GSUClassifier:
        local = GSUClassifier(
            lam=self.lam_,
            method=self.method,
            radius_scale=self.radius_scale,
            max_rounds=self.max_rounds,
            tol=self.tol,
            max_iter=self.max_iter,
            gap_tol=self.gap_tol,
            fit_intercept=self.fit_intercept,
        )
        return self._copy_fitted(local)
