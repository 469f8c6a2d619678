"""Pickle and skops state with the core's objects as their JSON text.

A fitted estimator holds core objects (``Model``, ``BasisExpansionMap``). Pickle could restore them by
their ``__reduce__``, but skops (safe persistence) rebuilds only plain data and types the user trusts. So
the state carries each core object as ``{"__usvm__": kind, "json": text}`` — the model file for a model,
the map's JSON for a basis expansion — and restoring parses it again: a skops file of a usvm estimator
contains only the estimator's own type (``skops_trusted_types()``) besides plain data.
"""

from __future__ import annotations

from typing import Any

from . import _usvm

__all__ = ["CoreState", "skops_trusted_types"]


def _dump(value: Any) -> Any:
    if isinstance(value, _usvm.Model):
        return {"__usvm__": "Model", "json": value.to_json()}
    if isinstance(value, _usvm.BasisExpansionMap):
        _, (text,) = value.__reduce__()
        return {"__usvm__": "BasisExpansionMap", "json": text}
    return value


def _load(value: Any) -> Any:
    if isinstance(value, dict) and set(value) == {"__usvm__", "json"}:
        kind = value["__usvm__"]
        if kind == "Model":
            return _usvm.Model.from_json(value["json"])
        if kind == "BasisExpansionMap":
            return _usvm._besvm_map_from_state(value["json"])
        raise ValueError(f"unknown core object {kind!r} in a saved usvm estimator")
    return value


class CoreState:
    """Mixin: ``__getstate__``/``__setstate__`` with core objects as JSON (module docs)."""

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()  # type: ignore[misc]
        return {k: _dump(v) for k, v in state.items()}

    def __setstate__(self, state: dict[str, Any]) -> None:
        restored = {k: _load(v) for k, v in state.items()}
        parent = getattr(super(), "__setstate__", None)
        if parent is None:
            self.__dict__.update(restored)
        else:
            parent(restored)


def skops_trusted_types() -> list[str]:
    """The fully qualified names of every public usvm estimator and transformer class (those of
    ``usvm.dask`` once it is imported), for ``skops.io.load(path, trusted=usvm.skops_trusted_types())``:
    the only non-plain types in a saved usvm estimator besides scikit-learn's own in a pipeline."""

    def public(cls: type) -> list[type]:
        out = [] if cls.__name__.startswith("_") or cls is CoreState else [cls]
        for sub in cls.__subclasses__():
            out += public(sub)
        return out

    return sorted({f"{c.__module__}.{c.__qualname__}" for c in public(CoreState)})
