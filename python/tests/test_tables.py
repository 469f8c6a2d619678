"""Tables in: Parquet files, pyarrow Tables, pandas and polars DataFrames (``usvm.from_table``,
``usvm.read_parquet``, the CLI's ``--parquet``): the same fit as from CSV, and errors that name the column."""

import json
import subprocess

import numpy as np
import pytest
from conftest import make_uncertain
from test_agreement import usvm_binary, write_csv

import usvm

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def _table(X, y, V, w):
    """Columns f0, label (in the middle), f1.., w, then v0.. — in an order the CSV files do not share."""
    cols = {"f0": X[:, 0], "label": y.astype(np.int64)}
    cols.update({f"f{j}": X[:, j] for j in range(1, X.shape[1])})
    cols["w"] = w
    cols.update({f"v{j}": V[:, j] for j in range(X.shape[1])})
    return pa.table(cols)


def _data():
    X, y, V = make_uncertain(n=80, d=3, seed=11)
    w = 1.0 + (np.arange(len(y)) % 3)
    return X, y, V, w


def _names(d):
    return [f"f{j}" for j in range(d)], [f"v{j}" for j in range(d)]


def test_parquet_fit_equals_the_csv_fit_in_the_cli_and_in_python(tmp_path):
    X, y, V, w = _data()
    feats, vars_ = _names(X.shape[1])
    pq.write_table(_table(X, y, V, w), tmp_path / "t.parquet")
    write_csv(
        tmp_path / "x.csv",
        [*feats, "w", "label"],
        [[*map(float, r), float(c), int(t)] for r, c, t in zip(X, w, y)],
    )
    write_csv(tmp_path / "v.csv", feats, [[float(v) for v in r] for r in V])
    run = [str(usvm_binary()), "train", "--method", "gsu", "--lambda", "0.05", "--quiet"]
    csv_model, pq_model = tmp_path / "csv.json", tmp_path / "pq.json"
    subprocess.run(
        [
            *run,
            "--csv",
            str(tmp_path / "x.csv"),
            "--var-csv",
            str(tmp_path / "v.csv"),
            "--weight-col",
            "w",
            "--model",
            str(csv_model),
        ],
        check=True,
    )
    subprocess.run(
        [
            *run,
            "--parquet",
            str(tmp_path / "t.parquet"),
            "--label-col",
            "label",
            "--weight-col",
            "w",
            "--var-cols",
            ",".join(vars_),
            "--model",
            str(pq_model),
        ],
        check=True,
    )
    assert pq_model.read_text() == csv_model.read_text()
    # Python: read_parquet gives the arrays the fit from numpy takes, and the same model as the CLI.
    Xp, yp, Vp, wp = usvm.read_parquet(
        tmp_path / "t.parquet", label_col="label", var_cols=vars_, weight_col="w"
    )
    np.testing.assert_array_equal(Xp, X)
    np.testing.assert_array_equal(Vp, V)
    np.testing.assert_array_equal(wp, w)
    a = usvm.Classifier(method="gsu", params={"regularization": {"lambda": 0.05}}).fit(
        Xp, yp, X_cov=Vp, sample_weight=wp
    )
    cli = json.loads(csv_model.read_text())
    np.testing.assert_allclose(a.model_.coef.ravel(), np.ravel(cli["coef"]), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(a.model_.intercept, np.ravel(cli["intercept"]), rtol=1e-12, atol=1e-14)


def test_dataframes_give_the_same_arrays():
    X, y, V, w = _data()
    feats, vars_ = _names(X.shape[1])
    table = _table(X, y, V, w)
    ref = usvm.from_table(table, label_col="label", var_cols=vars_, weight_col="w")
    frames = [table.to_pandas()]
    try:  # polars is optional
        import polars

        frames.append(polars.from_arrow(table))
    except ImportError:
        pass
    for frame in frames:
        got = usvm.from_table(frame, label_col="label", var_cols=vars_, weight_col="w")
        for a, b in zip(got, ref):
            np.testing.assert_array_equal(a, b)
    X2, y2, V2, w2 = usvm.from_table(table.select([*feats, "label"]))  # default label: the last column
    np.testing.assert_array_equal(X2, X)
    assert V2 is None and w2 is None and y2.tolist() == y.tolist()


FULL = {"label_col": "label", "weight_col": "w", "var_cols": ["v0", "v1", "v2"]}


@pytest.mark.parametrize(
    "change,kwargs,message",
    [
        (None, {"label_col": "nope"}, r"no column named 'nope' \(columns: f0, label"),
        (None, {"var_cols": ["v0", "v1"]}, r"2 variance columns for 4 feature columns \(f0, f1, f2, v2\)"),
        (None, {"weight_col": "label"}, r"'label' is named as both the label column and a weight column"),
        ("text", {}, r"column 'f1' \(feature\) has type string, not a number"),
        ("null", {}, r"column 'f1' \(feature\) has a missing value in row 3 \(counted from 1\)"),
        ("nan", {}, r"column 'f1' \(feature\) has nan in row 3 \(counted from 1\)"),
        ("negative", {}, r"column 'v1' \(variance\) is negative in row 3 \(counted from 1\)"),
    ],
)
def test_bad_tables_name_the_column(change, kwargs, message):
    table = _table(*_data())
    name = "v1" if change == "negative" else "f1"
    values = table.column(name).to_pylist()
    column = {
        "text": pa.array([str(v) for v in values]),
        "null": pa.array([*values[:2], None, *values[3:]], type=pa.float64()),
        "nan": pa.array([*values[:2], float("nan"), *values[3:]]),
        "negative": pa.array([*values[:2], -1.0, *values[3:]]),
    }.get(change)
    if column is not None:
        table = table.set_column(table.column_names.index(name), name, column)
    with pytest.raises(ValueError, match=message):
        usvm.from_table(table, **{**FULL, **kwargs})


def test_cli_parquet_errors_name_the_column_and_write_nothing(tmp_path):
    X, y, V, w = _data()
    table = _table(X, y, V, w)
    values = table.column("f1").to_pylist()
    bad = table.set_column(table.column_names.index("f1"), "f1", pa.array([str(v) for v in values]))
    pq.write_table(bad, tmp_path / "text.parquet")
    pq.write_table(table, tmp_path / "ok.parquet")
    model = tmp_path / "m.json"
    cases = [
        (
            ["--parquet", str(tmp_path / "text.parquet"), "--label-col", "label"],
            "field 'f1': has type Utf8, not a number",
        ),
        (["--parquet", str(tmp_path / "ok.parquet"), "--label-col", "nope"], "field 'nope': no such column"),
        (
            [
                "--parquet",
                str(tmp_path / "ok.parquet"),
                "--label-col",
                "label",
                "--weight-col",
                "w",
                "--var-cols",
                "v0,v1",
            ],
            "2 variance columns for 4 feature columns (f0, f1, f2, v2)",
        ),
    ]
    for flags, message in cases:
        out = subprocess.run(
            [str(usvm_binary()), "train", "--method", "gsu", *flags, "--model", str(model)],
            capture_output=True,
            text=True,
        )
        assert out.returncode == 1, out.stderr
        assert message in out.stderr, out.stderr
        assert not model.exists()
