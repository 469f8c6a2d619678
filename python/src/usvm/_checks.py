"""Parameter checks shared by the estimators (raised at ``fit``, as scikit-learn expects)."""

from __future__ import annotations

import math
import numbers
from typing import Any


def _finite_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def positive_real(name: str, value: Any, *, allow_none: bool = False) -> None:
    """Raise ``ValueError`` unless ``value`` is a finite real > 0 (or ``None`` when allowed)."""
    if value is None and allow_none:
        return
    if not _finite_real(value) or value <= 0:
        raise ValueError(f"{name} must be a positive finite number; got {value!r}")


def non_negative_real(name: str, value: Any) -> None:
    """Raise ``ValueError`` unless ``value`` is a finite real ≥ 0."""
    if not _finite_real(value) or value < 0:
        raise ValueError(f"{name} must be a non-negative finite number; got {value!r}")


def positive_int(name: str, value: Any) -> None:
    """Raise ``ValueError`` unless ``value`` is an integer ≥ 1 (not a bool)."""
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive integer; got {value!r}")
