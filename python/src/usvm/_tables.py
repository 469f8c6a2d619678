"""Columns by name from tables: pyarrow Tables, Parquet files, pandas and polars DataFrames.

The same rules as the CLI's ``--parquet F --label-col NAME --weight-col NAME --var-cols A,B,...``: every
column but the label, weight and variance columns is a feature, in the table's order; the variance columns
give the diagonal of ``Σ_i``, one per feature in the same order. Feature, weight and variance columns must
be numeric and complete; every error names the column.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["from_table", "read_parquet"]


def _arrow(table: Any) -> Any:
    """A pyarrow Table from a pyarrow Table, a polars or a pandas DataFrame."""
    import pyarrow as pa

    if isinstance(table, pa.Table):
        return table
    if hasattr(table, "to_arrow"):  # polars
        return table.to_arrow()
    if hasattr(table, "columns") and hasattr(table, "iloc"):  # pandas
        return pa.Table.from_pandas(table, preserve_index=False)
    raise TypeError(f"expected a pyarrow Table or a pandas/polars DataFrame, got {type(table).__name__}")


def _numbers(table: Any, name: str, what: str) -> np.ndarray:
    import pyarrow.compute as pc
    import pyarrow.types as pt

    column = table.column(name)
    if not (pt.is_integer(column.type) or pt.is_floating(column.type)):
        raise ValueError(f"column {name!r} ({what}) has type {column.type}, not a number")
    if column.null_count:
        row = int(pc.index(pc.is_null(column), True).as_py())
        raise ValueError(f"column {name!r} ({what}) has a missing value in row {row + 1} (counted from 1)")
    values = column.to_numpy().astype(np.float64, copy=False)
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        row = int(bad[0]) + 1
        raise ValueError(f"column {name!r} ({what}) has {values[bad[0]]} in row {row} (counted from 1)")
    return values


def from_table(
    table: Any,
    label_col: str | None = None,
    var_cols: list[str] | None = None,
    weight_col: str | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """``(X, y, X_cov, sample_weight)`` from a pyarrow Table or a pandas/polars DataFrame (module docs).

    ``label_col`` defaults to the last column; ``X_cov`` is ``(n, d)`` variances when ``var_cols`` is
    given, else ``None``; ``sample_weight`` is the weight column, else ``None``.

    >>> import pyarrow as pa
    >>> t = pa.table({"a": [1.0, 2.0], "y": [0, 1], "b": [3, 4], "va": [0.1, 0.2], "vb": [0.3, 0.4]})
    >>> X, y, V, w = from_table(t, label_col="y", var_cols=["va", "vb"])
    >>> X.tolist(), y.tolist(), V.tolist(), w
    ([[1.0, 3.0], [2.0, 4.0]], [0, 1], [[0.1, 0.3], [0.2, 0.4]], None)
    """
    table = _arrow(table)
    names = list(table.column_names)
    if not names:
        raise ValueError("the table has no columns")

    def known(name: str) -> str:
        if name not in names:
            raise ValueError(f"no column named {name!r} (columns: {', '.join(names)})")
        return name

    label = known(label_col) if label_col is not None else names[-1]
    roles = {label: "label"}
    for name, role in [(weight_col, "weight"), *((v, "variance") for v in var_cols or [])]:
        if name is None:
            continue
        if known(name) in roles:
            raise ValueError(f"column {name!r} is named as both the {roles[name]} column and a {role} column")
        roles[name] = role
    features = [c for c in names if c not in roles]
    if not features:
        raise ValueError("no feature columns besides the label, weight and variance columns")
    if var_cols is not None and len(var_cols) != len(features):
        raise ValueError(
            f"{len(var_cols)} variance columns for {len(features)} feature columns ({', '.join(features)}): "
            "give one per feature, in the same order"
        )
    X = np.empty((table.num_rows, len(features)))
    for j, c in enumerate(features):
        X[:, j] = _numbers(table, c, "feature")
    y = table.column(label).to_numpy(zero_copy_only=False)
    V = None
    if var_cols is not None:
        V = np.empty((table.num_rows, len(var_cols)))
        for j, c in enumerate(var_cols):
            V[:, j] = _numbers(table, c, "variance")
        if (V < 0).any():
            row, col = np.argwhere(V < 0)[0]
            raise ValueError(
                f"column {var_cols[col]!r} (variance) is negative in row {int(row) + 1} (counted from 1)"
            )
    w = _numbers(table, weight_col, "weight") if weight_col is not None else None
    return X, y, V, w


def read_parquet(
    path: Any,
    label_col: str | None = None,
    var_cols: list[str] | None = None,
    weight_col: str | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """:func:`from_table` on a Parquet file (read with pyarrow): the same columns ``usvm train --parquet``
    reads, with the same flags."""
    import pyarrow.parquet as pq

    return from_table(pq.read_table(path), label_col=label_col, var_cols=var_cols, weight_col=weight_col)
