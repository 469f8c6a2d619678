"""The time of a sharded fit's rounds, as Dask's and Spark's estimators report it."""

from __future__ import annotations

import time
from typing import Any, Callable


class RoundClock:
    """Per round: the wall time, and the compute time of its slowest shard (the rest is waiting)."""

    def __init__(self) -> None:
        self.wall = 0.0
        self.compute = 0.0

    def round(self, started: float, timed: list) -> list[bytes]:
        """The answers of a round that began at ``started`` (``time.perf_counter()``), given as ``(answer,
        seconds of compute)`` per shard."""
        self.wall += time.perf_counter() - started
        self.compute += max((s for _, s in timed), default=0.0)
        return [a for a, _ in timed]

    def fit(self, fit: Callable[[], tuple]) -> tuple:
        """``fit()`` (``_usvm.fit_sharded``'s ``(model, reports, info)``), its ``info`` given
        ``wall_seconds``, ``compute_seconds`` and ``driver_seconds`` (the time between rounds)."""
        started = time.perf_counter()
        model, reports, info = fit()
        info["driver_seconds"] = time.perf_counter() - started - self.wall
        info["wall_seconds"] = self.wall
        info["compute_seconds"] = self.compute
        return model, reports, info


def round_seconds(info: dict[str, Any]) -> dict[str, float]:
    """``{"wall", "compute", "driver"}`` of a fit's ``info``, as the estimators' ``round_seconds_``."""
    return {"wall": info["wall_seconds"], "compute": info["compute_seconds"], "driver": info["driver_seconds"]}
