"""Agreement with the Rust API: the data set of crates/usvm-py/tests/agreement.rs, rebuilt with the same
integer arithmetic, fitted through the Python package, must give the objectives that the Rust API recorded
in data/agreement.json (that Rust test checks the file against the Rust API on every `cargo test`).

Agreement with the CLI (`usvm train --report`) and the WDBC protocol reproducing `usvm demo` are still to
come: the CLI is being written in parallel (crates/usvm-cli). TODO(cli): fit the same CSV through
`usvm train --csv ... --var-csv ... --report R.json` and compare R.json's objective to objective_ (1e-10),
and run the WDBC protocol of DESIGN 8 in Python against `usvm demo`'s table.
"""

import json
import pathlib

import numpy as np
import pytest
from numpy.testing import assert_allclose

from usvm import GSUClassifier

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
