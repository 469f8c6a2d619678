"""Progress of a fit: the estimators' ``verbose`` and ``callback`` turned into the one callable the core's
``fit`` calls with a record per solver event (``iteration``, ``objective``, ``residual``, ``quantity``,
``problem``, ``n_problems``).

``verbose=1`` draws a tqdm bar when tqdm is installed and standard error is a terminal; otherwise it writes
a line to standard error about once a second (and one per binary problem when it ends).
"""

from __future__ import annotations

import contextlib
import numbers
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["watch", "describe"]

# Seconds between two lines when no bar is drawn.
_INTERVAL = 1.0


def describe(record: dict[str, Any]) -> str:
    """``iteration 12 · objective 1.234568e-01 · gradient_norm 3.2e-05`` (with ``[problem 2/3]`` for
    one-vs-rest)."""
    problem = f"[problem {record['problem'] + 1}/{record['n_problems']}] " if record["n_problems"] > 1 else ""
    return (
        f"{problem}iteration {record['iteration']} · objective {record['objective']:.6e} · "
        f"{record['quantity']} {record['residual']:.1e}"
    )


class _Lines:
    """A line on standard error at most every ``_INTERVAL`` seconds, and at each problem's end."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.last = -float("inf")

    def __call__(self, record: dict[str, Any]) -> None:
        now = time.monotonic()
        if record["quantity"] == "final" or now - self.last >= _INTERVAL:
            self.last = now
            print(f"{self.name}: {describe(record)}", file=sys.stderr, flush=True)

    def close(self) -> None:
        pass


class _Bar:
    """A tqdm bar counting iterations, the objective and residual in its postfix."""

    def __init__(self, name: str, tqdm: Any) -> None:
        self.name = name
        self.bar = tqdm(desc=name, unit="it", file=sys.stderr, leave=False, dynamic_ncols=True)
        self.problem = 0

    def __call__(self, record: dict[str, Any]) -> None:
        if record["problem"] != self.problem:
            self.problem = record["problem"]
            self.bar.reset()
        if record["n_problems"] > 1:
            which = f"{record['problem'] + 1}/{record['n_problems']}"
            self.bar.set_description(f"{self.name} [{which}]", refresh=False)
        postfix = f"objective {record['objective']:.6e} · {record['quantity']} {record['residual']:.1e}"
        self.bar.set_postfix_str(postfix, refresh=False)
        self.bar.update(max(0, record["iteration"] - self.bar.n))

    def close(self) -> None:
        self.bar.close()


def _display(name: str) -> _Bar | _Lines:
    """A bar on a terminal when tqdm is installed, else lines."""
    if sys.stderr is not None and hasattr(sys.stderr, "isatty") and sys.stderr.isatty():
        try:
            from tqdm.auto import tqdm
        except ImportError:
            pass
        else:
            return _Bar(name, tqdm)
    return _Lines(name)


@contextlib.contextmanager
def watch(estimator: Any) -> Iterator[Callable[[dict[str, Any]], None] | None]:
    """The callable to give the core for ``estimator``'s ``verbose`` and ``callback`` (``None`` when both
    are off), closing any bar on exit."""
    verbose = getattr(estimator, "verbose", 0)
    callback = getattr(estimator, "callback", None)
    if callback is not None and not callable(callback):
        raise TypeError(f"callback must be callable or None; got {type(callback).__name__}")
    if not isinstance(verbose, numbers.Integral) or verbose < 0:
        raise ValueError(f"verbose must be a non-negative integer; got {verbose!r}")
    display = _display(type(estimator).__name__) if verbose else None
    if display is None and callback is None:
        yield None
        return

    def call(record: dict[str, Any]) -> None:
        if display is not None:
            display(record)
        if callback is not None:
            callback(record)

    try:
        yield call
    finally:
        if display is not None:
            display.close()
