"""The WDBC protocol (DESIGN 8, thesis Table 3.2) rebuilt in numpy on top of the Python package, against
`usvm demo --splits 2 --folds 3 --json`.

Only the split indices come from the core (`usvm._usvm.stratified_split` / `stratified_k_fold`, so that both
sides hold out the same examples); the data (scikit-learn's copy of WDBC), the standardisation, the
variance formula, the λ search and the scoring are written here from DESIGN 8 and
crates/usvm-experiments/src/wdbc.rs:

* split `seed` in 0..splits: stratified 90/10; standardise the 30 features with the training split's
  mean and population standard deviation;
* variance of mean-feature j < 10: `0.8 · range_j · se_ij / max_train se_j / var_j` (the paper's rule,
  `usvm demo`'s default; se = column 10 + j, range and max over the training split, var_j the population
  variance); all others 1e-6;
* λ on 2^-12..2^2 by stratified `folds`-fold CV on the training split (folds
  `stratified_k_fold(train labels, folds, seed)`), accuracy = correct held-out predictions / n_train,
  ties to the larger λ; refit on the training split at the chosen λ, score the test split;
* LSVM (hinge), LSVM-iso, Power SVM (radius scale 1), LSVM-GSU.

Like the library's `cross_validate_path`, each fold walks the grid from the largest λ to the smallest,
warm-starting every fit from the previous one (`warm_start=True`). For the convex methods this only saves
time (cold fits give the same solutions to the solver's tolerance); for Power SVM it is the protocol: each
path fit is ONE alternating round (POWER_CV_ROUNDS) from the previous λ's hyperplane, while the refit at
the chosen λ runs to convergence (max_rounds=100, the default), so cold fits would choose other λs.
"""

import json
import subprocess

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from sklearn.datasets import load_breast_cancer
from test_agreement import REPO, usvm_binary

from usvm import GSUClassifier, _usvm

SPLITS, FOLDS, TEST_FRACTION = 2, 3, 0.1
GRID = 2.0 ** np.arange(-12, 3)
SIGMA0_SQ = 1e-6
POWER_CV_ROUNDS = 1  # usvm_experiments::wdbc::POWER_CV_ROUNDS: rounds per Power fit of the λ path
METHODS = {  # usvm demo's names -> estimator parameters
    "LSVM": {"method": "hinge"},
    "LSVM-iso": {"method": "iso"},
    "Power SVM": {"method": "power", "radius_scale": 1.0},
    "LSVM-GSU": {"method": "gsu"},
}


def load():
    X, y = load_breast_cancer(return_X_y=True)
    return X, y.astype(np.int64)


def uncertain(X, train):
    """Standardised means and diagonal variances of every row, from the statistics of rows `train`."""
    Xt = X[train]
    mean, std = Xt.mean(axis=0), Xt.std(axis=0)  # population std (ddof=0)
    std = np.where(std > 0, std, 1.0)
    Z = (X - mean) / std
    V = np.full(X.shape, SIGMA0_SQ)
    for j in range(10):
        value_range = Xt[:, j].max() - Xt[:, j].min()
        max_se = Xt[:, 10 + j].max()
        scale = 0.8 * value_range / max_se if max_se > 0 else 0.0
        V[:, j] = scale * X[:, 10 + j] / std[j] ** 2
    return Z, V


def evaluate(params, Z, V, y, train, test, seed):
    """(test accuracy, chosen λ) of one method on one split."""
    Zt, Vt, yt = Z[train], V[train], y[train]
    folds = _usvm.stratified_k_fold(yt, FOLDS, seed)
    correct = np.zeros(len(GRID), dtype=np.int64)
    for held_out in folds:
        rest = np.setdiff1d(np.arange(len(yt)), held_out)
        clf = GSUClassifier(**params, warm_start=True)
        if params["method"] == "power":
            clf.set_params(max_rounds=POWER_CV_ROUNDS)
        for k in np.argsort(-GRID):  # the largest λ first
            clf.set_params(lam=GRID[k]).fit(Zt[rest], yt[rest], X_cov=Vt[rest])
            correct[k] += np.count_nonzero(clf.predict(Zt[held_out]) == yt[held_out])
    cv = correct / len(yt)
    best = np.flatnonzero(cv == cv.max())[-1]  # ties: the larger λ (the grid ascends)
    clf = GSUClassifier(lam=GRID[best], **params).fit(Zt, yt, X_cov=Vt)
    return np.count_nonzero(clf.predict(Z[test]) == y[test]) / len(test), GRID[best]


def test_sklearn_copy_is_the_embedded_data():
    X, y = load()
    embedded = REPO / "crates" / "usvm" / "data" / "breast_cancer.csv"
    if not embedded.is_file():
        pytest.skip(f"{embedded} not found (tests run outside the clone)")
    raw = np.loadtxt(embedded, delimiter=",", skiprows=1)
    assert raw.shape == (569, 31)
    assert_array_equal(raw[:, :30], X)  # bit for bit: both parse the same decimal strings
    assert_array_equal(raw[:, 30].astype(np.int64), y)
    assert (np.count_nonzero(y == 0), np.count_nonzero(y == 1)) == (212, 357)  # malignant, benign


def test_splits_come_from_the_core():
    _, y = load()
    train, test = _usvm.stratified_split(y, TEST_FRACTION, 0)
    assert_array_equal(np.sort(np.concatenate([train, test])), np.arange(len(y)))
    assert (np.count_nonzero(y[test] == 0), np.count_nonzero(y[test] == 1)) == (21, 36)
    folds = _usvm.stratified_k_fold(y[train], FOLDS, 0)
    assert len(folds) == FOLDS
    assert_array_equal(np.sort(np.concatenate(folds)), np.arange(len(train)))
    for again, fold in zip(_usvm.stratified_k_fold(y[train], FOLDS, 0), folds):
        assert_array_equal(again, fold)


def test_protocol_reproduces_usvm_demo(tmp_path):
    out = tmp_path / "demo.json"
    cmd = [str(usvm_binary()), "demo", "--splits", str(SPLITS), "--folds", str(FOLDS), "--json", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, f"{cmd} failed:\n{done.stderr}"
    demo = {row["method"]: row for row in json.loads(out.read_text())["results"]}
    assert list(demo) == list(METHODS)
    # The table's last columns are the median chosen λ (of two splits: the larger), printed as e.g. 1.250e-1,
    # and the method's time.
    median_lambda = {
        name: float(line.split()[-2])
        for line in done.stdout.splitlines()
        for name in METHODS
        if line.startswith(name + " ")
    }
    assert list(median_lambda) == list(METHODS), done.stdout

    X, y = load()
    splits = []
    for seed in range(SPLITS):
        train, test = _usvm.stratified_split(y, TEST_FRACTION, seed)
        splits.append((seed, train, test, *uncertain(X, train)))
    for name, params in METHODS.items():
        results = [evaluate(params, Z, V, y, train, test, seed) for seed, train, test, Z, V in splits]
        accuracies = np.array([a for a, _ in results])
        mean = accuracies.sum() / len(accuracies)
        std = accuracies.std(ddof=1)
        lambdas = [lam for _, lam in results]
        assert abs(mean - demo[name]["test_accuracy_mean"]) <= 1e-12, (name, accuracies, lambdas, demo[name])
        assert abs(std - demo[name]["test_accuracy_std"]) <= 1e-12, (name, accuracies, lambdas, demo[name])
        median = sorted(lambdas)[len(lambdas) // 2]
        assert abs(median - median_lambda[name]) <= 1e-3 * median, (name, lambdas, median_lambda[name])
