"""Agreement of the Python package with the Rust API and with the CLI.

Rust API: the data set of crates/usvm-py/tests/agreement.rs, rebuilt with the same integer arithmetic,
fitted through the Python package, must give the objectives that the Rust API recorded in
data/agreement.json (that Rust test checks the file against the Rust API on every `cargo test`).

CLI: the same data set, written as a CSV with a header (label in the last column) and a variance CSV with
the same header, is fitted by `usvm train --csv F [--var-csv V] --lambda L --model M --report R.json`;
R.json's objective must equal objective_ (rtol 1e-10) and the model file's coef/intercept coef_/intercept_
(1e-6). The WDBC protocol against `usvm demo` is in test_wdbc.py, which uses `usvm_binary` from here.
"""

import functools
import json
import os
import pathlib
import shutil
import subprocess

import numpy as np
import pytest
from numpy.testing import assert_allclose

from usvm import GSUClassifier

REPO = pathlib.Path(__file__).resolve().parents[2]
RECORD = json.loads((pathlib.Path(__file__).parent / "data" / "agreement.json").read_text())
N, D = RECORD["n"], RECORD["d"]


def dataset(cov):
    i, j = np.meshgrid(np.arange(N), np.arange(D), indexing="ij")
    y = np.arange(N) % 2
    X = ((i * 7 + j * 13) % 17) / 4.0 - 2.0 + np.where(y == 1, 0.5, -0.5)[:, None]
    V = 0.05 + ((i * 3 + j * 5) % 7) * 0.1
    covs = {
        "none": None,
        "diag": V,
        "full": np.einsum("nd,de->nde", V, np.eye(D)),
        "iso": np.ascontiguousarray(V[:, 0]),
    }
    return X, y, covs[cov]


PARAMS = {
    "gsu": {},
    "hinge": {"method": "hinge"},
    "iso": {"method": "iso"},
    "power": {"method": "power", "radius_scale": 1.0},
    "sampling": {"method": "sampling", "samples": 5, "random_state": 3},
    "gsu-subspace": {"subspace_variance": 0.6},
    "gsu-sgd": {"solver": "sgd", "iterations": 500, "batch": 20, "random_state": 1},
}


@pytest.mark.parametrize("case", RECORD["cases"], ids=lambda c: f"{c['name']}-{c['cov']}")
def test_same_objective_as_the_rust_api(case):
    X, y, cov = dataset(case["cov"])
    clf = GSUClassifier(lam=RECORD["lambda"], **PARAMS[case["name"]]).fit(X, y, X_cov=cov)
    assert_allclose(clf.objective_[0], case["objective"], rtol=1e-10)
    # The minimiser is pinned down only to the solver's tolerance (‖∇J‖ ≤ 1e-6‖∇J(0)‖), the optimal value
    # to its square: compare the objective tightly and the solution loosely.
    assert_allclose(clf.coef_[0], case["coef"], rtol=1e-5, atol=1e-7)
    assert_allclose(clf.intercept_[0], case["intercept"], rtol=1e-5, atol=1e-7)


@functools.cache
def usvm_binary() -> pathlib.Path:
    """The `usvm` CLI: $USVM_BIN if set; else the newer of <target>/release/usvm and <target>/debug/usvm
    (<target> is $CARGO_TARGET_DIR or <repo>/target); else built here with `cargo build --release -p
    usvm-cli` (skips the calling test only if cargo is unavailable)."""
    if os.environ.get("USVM_BIN"):
        path = pathlib.Path(os.environ["USVM_BIN"])
        assert path.is_file(), f"USVM_BIN={path} is not a file"
        return path
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")
    if not target.is_absolute():
        target = REPO / target
    built = [p for p in (target / "release" / "usvm", target / "debug" / "usvm") if p.is_file()]
    if built:
        return max(built, key=lambda p: p.stat().st_mtime)
    cargo = shutil.which("cargo")
    if cargo is None:
        pytest.skip("no usvm binary (set USVM_BIN or build crates/usvm-cli) and cargo is not available")
    subprocess.run([cargo, "build", "--release", "-p", "usvm-cli"], cwd=REPO, check=True)
    return target / "release" / "usvm"


def write_csv(path, header, rows):
    # repr() is the shortest round-trip form: the CLI parses exactly the floats that Python holds.
    lines = [",".join(header)] + [",".join(repr(v) for v in row) for row in rows]
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("method", ["gsu", "hinge"])
@pytest.mark.parametrize("cov", ["diag", "none"])
def test_same_objective_and_model_as_the_cli(tmp_path, method, cov):
    X, y, V = dataset(cov)
    features = [f"x{j}" for j in range(D)]
    rows = [[*map(float, x), int(label)] for x, label in zip(X, y)]
    write_csv(tmp_path / "data.csv", [*features, "y"], rows)
    args = ["--csv", str(tmp_path / "data.csv")]
    if V is not None:
        write_csv(tmp_path / "var.csv", features, V.tolist())  # the label column is optional there
        args += ["--var-csv", str(tmp_path / "var.csv")]
    lam = RECORD["lambda"]
    model, report = tmp_path / "model.json", tmp_path / "report.json"
    cmd = [str(usvm_binary()), "train", "--method", method, *args, "--lambda", repr(float(lam))]
    done = subprocess.run(
        [*cmd, "--model", str(model), "--report", str(report)], capture_output=True, text=True
    )
    assert done.returncode == 0, f"{cmd} failed:\n{done.stderr}"
    report, model = json.loads(report.read_text()), json.loads(model.read_text())

    clf = GSUClassifier(lam=lam, method=method).fit(X, y, X_cov=V)
    assert (report["n_samples"], report["n_features"]) == (N, D)
    assert model["classes"] == [0, 1] and clf.classes_.tolist() == [0, 1]
    assert_allclose(report["objective"], clf.objective_[0], rtol=1e-10)
    assert_allclose(model["coef"], clf.coef_[0], rtol=1e-6, atol=1e-6)
    assert_allclose(model["intercept"], clf.intercept_[0], rtol=1e-6, atol=1e-6)
