"""Per-question trace of a sharded fit, in process: every shard's ``Shard.answer`` timed, one line per round.

Runs ``usvm._usvm.fit_sharded`` over shards held in this process (no engine, no transfer), on the rows of
``bench/dask_scaling.py``, and prints each round's question and the shards' compute for it (ms), then the
rounds, the total compute, the Newton iterations, the objective and the routes. It shows where a sharded
fit's compute goes (which questions, how many) without a cluster's noise.

    python bench/sharded_trace.py [--method power] [--features 100] [--lam 1e-5] [--shards 1]
                                  [--rows-per-shard 20000]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from dask_scaling import data

from usvm import _usvm
from usvm.dask import DaskGSUClassifier

# The first byte of an encoded question (postcard's enum index).
KINDS = ["Describe", "ValueGrad", "HessVec", "Line", "Exact", "LocalNewton", "Dual", "Margin"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--method", default="power", choices=["gsu", "iso", "hinge", "power"])
    ap.add_argument("--features", type=int, default=100)
    ap.add_argument("--lam", type=float, default=1e-5)
    ap.add_argument("--shards", type=int, default=1)
    ap.add_argument("--rows-per-shard", type=int, default=20000)
    a = ap.parse_args()
    rows = a.rows_per_shard * a.shards
    X, y, V = data(rows, a.features)
    params = json.dumps(DaskGSUClassifier(lam=a.lam, method=a.method)._params())
    codes = np.searchsorted(np.unique(y), y).astype(np.int64)
    cuts = np.linspace(0, rows, a.shards + 1).astype(int)
    shards = [_usvm.Shard(params, X[i:j], codes[i:j], cov=V[i:j]) for i, j in zip(cuts, cuts[1:])]
    log = []

    def ask(question: bytes) -> list[bytes]:
        started = time.perf_counter()
        answers = [s.answer(question) for s in shards]
        kind = KINDS[question[0]] if question[0] < len(KINDS) else str(question[0])
        log.append((kind, time.perf_counter() - started))
        return answers

    _, reports, _ = _usvm.fit_sharded(params, ask)
    print(" ".join(f"{kind}:{1e3 * seconds:.1f}" for kind, seconds in log))
    r = reports[0]
    print(
        f"{len(log)} rounds, {1e3 * sum(s for _, s in log):.0f} ms of shard compute, "
        f"{r['n_iter']} iterations, objective {r['objective']!r}, routes {r['routes']}"
    )


if __name__ == "__main__":
    main()
