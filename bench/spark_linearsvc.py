"""usvm on Spark against Spark MLlib's LinearSVC (L-BFGS on the plain hinge) in one run, local[2], the same
rows and the same objective: ``(1/n) Σ max(0, 1 - y_i(wᵀx_i + b)) + (λ/2)‖w‖²``, the intercept
unregularised (MLlib's with ``standardization=False``; usvm's ``method="hinge"`` with ``regParam = λ``).

    python bench/spark_linearsvc.py [--rows 200000] [--features 50] [--lam 1e-4] [--repeat 2]

Fits, each timed on the cached DataFrame (best of --repeat):
  1. MLlib LinearSVC (maxIter=1000, tol=1e-6): its wall time, iterations and objective J_mllib;
  2. usvm SparkGSUClassifier(method="hinge") at the optimum (gapTol 1e-10): wall time, rounds, objective J*;
  3. usvm at MLlib's objective: gapTol = r/(1 + r), r = J_mllib/J* - 1, which certifies J ≤ J_mllib;
  4. usvm in process (GSUClassifier, method="hinge") for reference.
Prints the time ratios usvm / MLlib. Needs `pip install pyspark` and Java 17; the data of
bench/dask_scaling.py (2 partitions, one per core).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from dask_scaling import data


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--features", type=int, default=50)
    ap.add_argument("--lam", type=float, default=1e-4)
    ap.add_argument("--repeat", type=int, default=2)
    a = ap.parse_args()
    from pyspark.ml.classification import LinearSVC
    from pyspark.ml.linalg import Vectors
    from pyspark.sql import SparkSession
    from usvm import GSUClassifier
    from usvm.spark import SparkGSUClassifier

    X, y, _ = data(a.rows, a.features)
    s = 2 * y - 1

    def objective(w: np.ndarray, b: float) -> float:
        return float(np.maximum(0, 1 - s * (X @ w + b)).mean() + 0.5 * a.lam * w @ w)

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "4g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    frame = spark.createDataFrame(
        [(float(t), Vectors.dense(x)) for x, t in zip(X, y)], ["label", "features"]
    )
    frame = frame.repartition(2).cache()
    frame.count()

    def timed(fit):
        best, result = float("inf"), None
        for _ in range(a.repeat):
            t = time.perf_counter()
            result = fit()
            best = min(best, time.perf_counter() - t)
        return best, result

    t_ml, model = timed(
        lambda: LinearSVC(regParam=a.lam, maxIter=1000, tol=1e-6, standardization=False).fit(frame)
    )
    summary = model.summary() if callable(model.summary) else model.summary
    ml_iterations = summary.totalIterations
    j_ml = objective(model.coefficients.toArray(), model.intercept)

    def usvm_fit(gap_tol: float):
        return SparkGSUClassifier(method="hinge", regParam=a.lam, gapTol=gap_tol).fit(frame)

    t_opt, opt = timed(lambda: usvm_fit(1e-10))
    j_opt = objective(opt.coefficients[0], float(opt.intercept[0]))
    r = j_ml / j_opt - 1
    gap = r / (1 + r) if r > 0 else 1e-10
    t_match, match = timed(lambda: usvm_fit(max(gap, 1e-10)))
    j_match = objective(match.coefficients[0], float(match.intercept[0]))
    spark.stop()
    t_local, local = timed(lambda: GSUClassifier(lam=a.lam, method="hinge").fit(X, y))

    print(f"# plain hinge, {a.rows} × {a.features}, λ = regParam = {a.lam}, local[2], 2 partitions, best of {a.repeat}")
    print("fit | wall s | iterations / rounds | objective | above usvm's optimum | time / MLlib")
    print("---|---|---|---|---|---")
    print(f"MLlib LinearSVC (L-BFGS, tol 1e-6) | {t_ml:.2f} | {ml_iterations} | {j_ml:.10g} | {r:.1e} | 1")
    print(
        f"usvm on Spark, at MLlib's objective (gapTol {gap:.1e}) | {t_match:.2f} | {match.numRounds} | "
        f"{j_match:.10g} | {j_match / j_opt - 1:.1e} | {t_match / t_ml:.3f}"
    )
    print(
        f"usvm on Spark, optimum (gapTol 1e-10) | {t_opt:.2f} | {opt.numRounds} | {j_opt:.10g} | 0 | "
        f"{t_opt / t_ml:.3f}"
    )
    print(
        f"usvm in process (GSUClassifier) | {t_local:.2f} | — | {local.objective_[0]:.10g} | "
        f"{local.objective_[0] / j_opt - 1:.1e} | {t_local / t_ml:.3f}"
    )
    for name, fit in (("at MLlib's objective", match), ("optimum", opt)):
        s = fit.roundSeconds
        print(
            f"usvm on Spark, {name}: rounds {s['wall']:.2f} s (slowest partition's compute {s['compute']:.2f} s, "
            f"waiting {s['wall'] - s['compute']:.2f} s), task 0 between rounds {s['driver']:.2f} s"
        )


if __name__ == "__main__":
    main()
