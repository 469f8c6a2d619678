"""Weak scaling of the sharded exact fit (usvm.dask.DaskGSUClassifier) on a local Dask cluster.

For each configuration the rows per worker stay fixed (weak scaling): 1, 2, 4 and 8 worker processes
(``--workers``; on a 2-core machine 4 and 8 workers share the cores, so their rounds measure the protocol's
rounds and latency, not a speed-up). Each run fits twice on the same cluster and keeps the faster (the
first also pays the workers' first import of usvm), and prints rounds, bytes each way, fit time, the time per round
("ms/round": the fit's time, with building the shards, over its rounds; "round trip ms": the rounds alone)
split into the slowest shard's compute and the rest (waiting: scheduling, transfer), and the in-process
GSUClassifier fit of the same data as the reference (its objective must equal the sharded one to 1e-12
for GSU). The last lines project the time of one λ on a larger problem (3·10⁸ × 100 on 32 workers) from
measured costs: the driver's own time between rounds, and per round the latency and the slowest shard's
compute, split into a part per row and a fixed part (the few thousand rows near the margin that the
hinge's exact finish gathers, a number that does not grow with the rows) by a second 1-worker fit with
``--projection-rows`` rows.

    python bench/dask_scaling.py [--rows-per-worker 100000] [--features 50] [--lam 1e-4] [--method gsu]
                                 [--workers 1,2,4,8] [--projection-rows 500000]

``--method hinge`` or ``power`` runs the sharded hinge (the distributed dual method and its exact finish)
or Power SVM's rounds of it; their local reference takes other routes to the same optimum, so the
objectives agree to the solvers' tolerance rather than bit for bit.

Needs `pip install 'usvm[dask]'` (dask[array,distributed]); no network (the cluster is loopback only).
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def data(n: int, d: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    # Overlapping classes: about 2 standard deviations apart.
    centres = rng.normal(size=(2, d)) * 1.5 / np.sqrt(d)
    X = centres[y] + rng.normal(size=(n, d))
    V = rng.uniform(0.1, 1.0, size=(n, d))
    return X, y, V


def run(
    workers: int, partitions: int, rows_per_worker: int, d: int, lam: float, method: str
) -> dict:
    import dask.array as da
    from distributed import Client, LocalCluster
    from usvm import GSUClassifier
    from usvm.dask import DaskGSUClassifier

    n = rows_per_worker * workers
    X, y, V = data(n, d)
    chunks = (n // partitions,) * (partitions - 1) + (
        n - (n // partitions) * (partitions - 1),
    )
    cluster = LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        host="127.0.0.1",
    )
    with Client(cluster) as client:
        # The data go to the workers once, before the fit is timed (as data loaded by Dask would be there).
        Xd = client.persist(da.from_array(X, chunks=(chunks, d)))
        yd = client.persist(da.from_array(y, chunks=(chunks,)))
        Vd = client.persist(da.from_array(V, chunks=(chunks, d)))
        client.wait_for_workers(workers)
        # The better of two fits: the first also pays the workers' first import of usvm.
        fit_time = float("inf")
        for _ in range(2):
            t = time.perf_counter()
            sharded = DaskGSUClassifier(lam=lam, method=method).fit(Xd, yd, X_cov=Vd)
            fit_time = min(fit_time, time.perf_counter() - t)
    cluster.close()
    t = time.perf_counter()
    local = GSUClassifier(lam=lam, method=method).fit(X, y, X_cov=V)
    local_time = time.perf_counter() - t
    rel = abs(sharded.objective_[0] - local.objective_[0]) / abs(local.objective_[0])
    return {
        "workers": workers,
        "partitions": partitions,
        "rows": n,
        "rounds": sharded.n_rounds_,
        "newton": sharded.n_iter_,
        "sent": sharded.bytes_sent_,
        "received": sharded.bytes_received_,
        "fit": fit_time,
        "per_round": fit_time / sharded.n_rounds_,
        "compute": sharded.round_seconds_["compute"] / sharded.n_rounds_,
        "round_wall": sharded.round_seconds_["wall"] / sharded.n_rounds_,
        "driver": sharded.round_seconds_["driver"],
        "local": local_time,
        "rel": rel,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows-per-worker", type=int, default=100_000)
    ap.add_argument("--features", type=int, default=50)
    ap.add_argument("--lam", type=float, default=1e-4)
    ap.add_argument("--method", default="gsu", choices=["gsu", "iso", "hinge", "power"])
    ap.add_argument("--workers", default="1,2,4,8", help="worker counts, one partition each")
    ap.add_argument(
        "--projection-rows",
        type=int,
        help="rows of the second 1-worker fit that splits a round's compute into per-row and fixed parts "
        "(default 5 × --rows-per-worker)",
    )
    a = ap.parse_args()
    workers = [int(w) for w in a.workers.split(",")]
    if workers[0] != 1:
        ap.error("--workers must start with 1 (the projection's measures)")
    rows = [run(w, w, a.rows_per_worker, a.features, a.lam, a.method) for w in workers]
    big = run(1, 1, a.projection_rows or 5 * a.rows_per_worker, a.features, a.lam, a.method)
    print(
        f"# sharded {a.method} fit, {a.rows_per_worker} rows × {a.features} diagonal-Σ features per worker, "
        f"λ={a.lam}"
    )
    print(
        "workers | partitions | rows | rounds | iterations | KiB sent | KiB received | fit s | ms/round | "
        "round trip ms | of which compute | in-process s | fit / in-process | rel. objective diff"
    )
    print("---|---|---|---|---|---|---|---|---|---|---|---|---|---")
    for r in rows + [big]:
        print(
            f"{r['workers']} | {r['partitions']} | {r['rows']} | {r['rounds']} | {r['newton']} | "
            f"{r['sent'] / 1024:.0f} | {r['received'] / 1024:.0f} | {r['fit']:.2f} | {1e3 * r['per_round']:.1f} | "
            f"{1e3 * r['round_wall']:.1f} | {1e3 * r['compute']:.1f} | "
            f"{r['local']:.2f} | {r['fit'] / r['local']:.2f} | {r['rel']:.1e}"
        )
    one = rows[0]
    if len(rows) > 1:
        efficiency = one["per_round"] / rows[1]["per_round"]
        print(f"weak-scaling efficiency 1 → 2 workers (time per round): {efficiency:.2f}")
    # Projection: a round costs latency + fixed + (rows per worker) × (cost per row), all measured with 1
    # worker: per row and fixed from the slowest shard's compute per round at two sizes, latency the rest
    # of a round trip; and the driver's own time between rounds, which does not grow with the rows.
    per_row_round = max(big["compute"] - one["compute"], 0.0) / (big["rows"] - one["rows"])
    fixed = max(one["compute"] - per_row_round * one["rows"], 0.0)
    latency = max(one["round_wall"] - one["compute"], 0.0)
    driver = max(r["driver"] for r in rows + [big])
    big_rows, big_workers = 3e8, 32
    rounds = max(r["rounds"] for r in rows + [big])
    per_round = latency + fixed + per_row_round * big_rows / big_workers * (100 / a.features)
    minutes = (driver + per_round * rounds) / 60
    print(
        f"projection, 3e8 × 100 on 32 workers: {driver:.1f} s in the driver + {per_round:.2f} s per round "
        f"(latency {1e3 * latency:.1f} ms + fixed {1e3 * fixed:.1f} ms + {per_row_round * 1e9:.1f} ns "
        f"per row and round × 100/{a.features} features) × {rounds} rounds ≈ {minutes:.1f} min per λ "
        f"(the most rounds and the longest driver time measured here, at {a.features} features)"
    )


if __name__ == "__main__":
    main()
