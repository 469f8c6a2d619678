"""Figures rendered by the Rust ``usvm-plot`` crate (PNG or SVG, no matplotlib needed).

Each function returns the image bytes, and with ``path`` also writes them to that file (atomically; the
format is the file's extension unless ``format`` is given).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from typing import Any

import numpy as np

from . import _usvm

__all__ = ["plot_angle", "plot_boundary", "plot_pr"]


def _format(path: Any, format: str | None) -> str:
    if format is not None:
        return str(format).lower()
    if path is None:
        return "png"
    ext = os.path.splitext(os.fspath(path))[1].lower().lstrip(".")
    if ext not in ("png", "svg"):
        raise ValueError(f"{os.fspath(path)}: unknown plot format (use a .png or .svg file name)")
    return ext


def _output(data: bytes, path: Any) -> bytes:
    if path is not None:
        path = os.fspath(path)
        folder = os.path.dirname(path) or "."
        fd, tmp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.remove(tmp)
            raise
    return data


def _covariances_2d(X_cov: Any, n: int) -> np.ndarray | None:
    """``(n, 2, 2)`` covariances from None, isotropic ``(n,)``, diagonal ``(n, 2)`` or full ``(n, 2, 2)``."""
    if X_cov is None:
        return None
    if hasattr(X_cov, "toarray"):
        X_cov = X_cov.toarray()
    c = np.asarray(X_cov, dtype=np.float64)
    if c.shape == (n,):
        return c[:, None, None] * np.eye(2)
    if c.shape == (n, 2):
        return np.einsum("ij,jk->ijk", c, np.eye(2))
    if c.shape == (n, 2, 2):
        return np.ascontiguousarray(c)
    raise ValueError(f"X_cov must have shape ({n},), ({n}, 2) or ({n}, 2, 2) for a boundary plot; got {c.shape}")


def _line(clf: Any) -> tuple[np.ndarray, float]:
    if isinstance(clf, tuple) and len(clf) == 2:
        w, b = clf
        return np.asarray(w, dtype=np.float64).ravel(), float(b)
    coef = getattr(clf, "coef_", None)
    if coef is None:
        raise ValueError(f"{clf!r} is neither a fitted linear classifier (coef_, intercept_) nor a (w, b) pair")
    coef = np.asarray(coef, dtype=np.float64)
    if coef.ndim == 2 and coef.shape[0] != 1:
        raise ValueError(f"a boundary plot needs binary classifiers; coef_ has shape {coef.shape}")
    return coef.ravel(), float(np.ravel(clf.intercept_)[0])


def plot_boundary(
    X: Any,
    y: Any,
    *,
    X_cov: Any = None,
    classifiers: Any = (),
    labels: Any = None,
    sigmas: float = 2.0,
    path: Any = None,
    format: str | None = None,
    width: int = 800,
    height: int = 600,
    title: str | None = None,
) -> bytes:
    """2-D decision boundaries over Gaussian training examples (thesis Fig. 3.3).

    Parameters
    ----------
    X : array of shape (n, 2)
        The means.
    y : array of shape (n,)
        At most two classes; the larger label (``classes_[1]`` of a fitted binary estimator) is drawn
        as ``+``, the other as ``×``.
    X_cov : None, or array of shape (n,), (n, 2) or (n, 2, 2)
        Isotropic variances, diagonal variances or full covariances; each example's ellipse at
        Mahalanobis radius ``sigmas`` is drawn.
    classifiers : sequence of fitted binary linear estimators (``coef_``, ``intercept_``) or ``(w, b)`` pairs
        Each is drawn as the line ``w·x + b = 0``.
    labels : sequence of str, optional
        Legend names (default: the estimator's ``method`` or class name, or ``"line k"``).

    Returns the PNG or SVG bytes (and writes them to ``path`` if given).

    >>> import numpy as np, usvm
    >>> X = np.array([[1.0, 1.0], [2.0, 0.0], [-1.0, -1.0], [-2.0, 0.5]])
    >>> png = usvm.plot_boundary(X, [1, 1, 0, 0], X_cov=np.full((4, 2), 0.1), classifiers=[((1.0, 1.0), 0.0)])
    >>> png[:4] == b"\\x89PNG"
    True
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != 2:
        raise ValueError(f"a boundary plot needs X of shape (n, 2); got {X.shape}")
    y = np.asarray(y)
    if y.shape != (X.shape[0],):
        raise ValueError(f"y must have shape ({X.shape[0]},); got {y.shape}")
    classes = np.unique(y)
    if len(classes) > 2:
        raise ValueError(f"a boundary plot needs at most 2 classes; got {len(classes)}")
    positive = [bool(v) for v in (y == classes[-1])] if len(classes) == 2 else [False] * len(y)
    classifiers = list(classifiers)
    names = list(labels) if labels is not None else []
    if len(names) > len(classifiers):
        raise ValueError(f"{len(names)} labels for {len(classifiers)} classifiers")
    lines = []
    for k, clf in enumerate(classifiers):
        w, b = _line(clf)
        if w.shape != (2,):
            raise ValueError(f"classifier {k} has {w.size} coefficients; a boundary plot needs 2")
        name = names[k] if k < len(names) else getattr(clf, "method", None) or (
            f"line {k + 1}" if isinstance(clf, tuple) else type(clf).__name__
        )
        lines.append((str(name), float(w[0]), float(w[1]), b))
    covs = _covariances_2d(X_cov, X.shape[0])
    data = _usvm.render_boundary(
        X, positive, covs, lines, float(sigmas), _format(path, format), int(width), int(height), title
    )
    return _output(data, path)


def plot_pr(
    y_true: Any,
    scores: Any,
    *,
    labels: Any = None,
    pos_label: Any = None,
    path: Any = None,
    format: str | None = None,
    width: int = 800,
    height: int = 600,
    title: str | None = None,
) -> bytes:
    """Precision-recall curves, one per score vector, with the average precision in the legend.

    ``scores`` is one array of decision values, a sequence of them, or a mapping ``name -> array``.
    ``pos_label`` is the positive class (default: the largest label).

    >>> import usvm
    >>> svg = usvm.plot_pr([0, 1, 1, 0], {"a": [0.1, 0.9, 0.4, 0.3]}, format="svg")
    >>> b"<svg" in svg
    True
    """
    y_true = np.asarray(y_true)
    if y_true.ndim != 1 or y_true.size == 0:
        raise ValueError(f"y_true must be a non-empty 1-dimensional array; got shape {y_true.shape}")
    if pos_label is None:
        pos_label = np.unique(y_true)[-1]
    y = [bool(v) for v in (y_true == pos_label)]
    if isinstance(scores, Mapping):
        named = [(str(k), v) for k, v in scores.items()]
    else:
        if isinstance(scores, (list, tuple)) and len(scores) > 0 and np.ndim(scores[0]) == 1:
            seq = list(scores)
        else:
            seq = [scores]
        names = list(labels) if labels is not None else [f"scores {k + 1}" for k in range(len(seq))]
        if len(names) != len(seq):
            raise ValueError(f"{len(names)} labels for {len(seq)} score vectors")
        named = list(zip(names, seq))
    curves = []
    for name, s in named:
        s = np.asarray(s, dtype=np.float64).ravel()
        if s.shape != (len(y),):
            raise ValueError(f"scores {name!r} have {s.size} values for {len(y)} labels")
        curves.append((name, y, s.tolist()))
    data = _usvm.render_pr(curves, _format(path, format), int(width), int(height), title)
    return _output(data, path)


def plot_angle(
    series: Mapping[str, Any],
    *,
    references: Any = (),
    path: Any = None,
    format: str | None = None,
    width: int = 800,
    height: int = 600,
    title: str | None = None,
) -> bytes:
    """Angle (degrees) against sample size N on a log axis (thesis Fig. 3.4).

    ``series`` maps a curve name to ``(n, angle)`` or ``(n, angle, low, high)`` arrays; ``references``
    are ``(name, n, angle)`` points drawn as diamonds.
    """
    out = []
    for name, arrays in series.items():
        arrays = [np.asarray(a, dtype=np.float64).ravel().tolist() for a in arrays]
        if len(arrays) not in (2, 4):
            raise ValueError(f"series {name!r} must be (n, angle) or (n, angle, low, high)")
        low, high = (arrays[2], arrays[3]) if len(arrays) == 4 else (None, None)
        out.append((str(name), arrays[0], arrays[1], low, high))
    refs = [(str(r[0]), float(r[1]), float(r[2])) for r in references]
    data = _usvm.render_angle(out, refs, _format(path, format), int(width), int(height), title)
    return _output(data, path)
