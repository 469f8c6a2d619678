"""The figure a sharded fit should beat: Spark MLlib's LinearSVC (L-BFGS on the plain hinge) on the data of
bench/dask_scaling.py, in local mode on this machine's cores.

    python bench/spark_linearsvc.py [--rows 100000] [--features 50] [--lam 1e-4]

Needs `pip install pyspark` and Java 17. Prints the fit time, MLlib's iterations, and its objective under
MLlib's definition (1/n) Σ hinge + (regParam/2)‖w‖² next to usvm's in-process hinge fit of the same data.
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
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--features", type=int, default=50)
    ap.add_argument("--lam", type=float, default=1e-4)
    a = ap.parse_args()
    from pyspark.ml.classification import LinearSVC
    from pyspark.ml.linalg import Vectors
    from pyspark.sql import SparkSession
    from usvm import GSUClassifier

    X, y, _ = data(a.rows, a.features)
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "4g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    frame = spark.createDataFrame(
        [(float(t), Vectors.dense(x)) for x, t in zip(X, y)], ["label", "features"]
    )
    frame = frame.repartition(2).cache()
    frame.count()
    svc = LinearSVC(regParam=a.lam, maxIter=1000, tol=1e-6, standardization=False)
    t = time.perf_counter()
    model = svc.fit(frame)
    t_spark = time.perf_counter() - t
    summary = model.summary() if callable(model.summary) else model.summary
    iterations = summary.totalIterations
    w, b = model.coefficients.toArray(), model.intercept
    spark.stop()
    s = 2 * y - 1

    def objective(w: np.ndarray, b: float) -> float:
        return np.maximum(0, 1 - s * (X @ w + b)).mean() + 0.5 * a.lam * w @ w

    t = time.perf_counter()
    ours = GSUClassifier(lam=a.lam, method="hinge").fit(X, y)
    t_ours = time.perf_counter() - t
    print(f"# plain hinge, {a.rows} × {a.features}, λ = regParam = {a.lam}")
    print(
        f"Spark MLlib LinearSVC (local[2], L-BFGS): {t_spark:.2f} s, {iterations} iterations, "
        f"objective {objective(w, b):.10g}"
    )
    print(
        f"usvm GSUClassifier(method='hinge') in-process: {t_ours:.2f} s, objective {ours.objective_[0]:.10g}"
    )
    print(f"time ratio usvm / Spark: {t_ours / t_spark:.3f}")


if __name__ == "__main__":
    main()
