#!/usr/bin/env python3
"""Paired comparison of the WDBC protocol's classifiers from `usvm demo --json` reports.

For every report (one per standard-error rule, say) and every method, prints the test accuracy's mean ±
sample std over the splits; then, for LSVM-GSU against each other method, the per-split differences
d_s = acc_GSU(s) - acc_other(s) (same split s, same seed): their mean ± sample std, the splits where
LSVM-GSU is better / worse, the two-sided paired t-test on d and the two-sided Wilcoxon signed-rank test
(zero differences dropped, normal approximation with tie correction: accuracies are multiples of 1/57,
so ties are the rule). scipy computes both tests; nothing here comes from usvm.

Usage:
    usvm demo --splits 100 --json paper.json
    usvm demo --splits 100 --se-rule range-squared --json squared.json
    python3 bench/wdbc_paired.py paper.json squared.json
"""

import json
import sys

import numpy as np
from scipy import stats


def report(path: str) -> None:
    with open(path) as f:
        demo = json.load(f)
    rows = {r["method"]: np.asarray(r["test_accuracies"]) for r in demo["results"]}
    n = len(next(iter(rows.values())))
    print(f"{path}: rule {demo.get('se_rule', '?')}, {n} splits, {demo.get('folds', '?')}-fold CV")
    for name, acc in rows.items():
        print(f"  {name:<10} {100 * acc.mean():6.2f} ± {100 * acc.std(ddof=1):.2f} %")
    gsu = rows["LSVM-GSU"]
    for name, acc in rows.items():
        if name == "LSVM-GSU":
            continue
        d = gsu - acc
        t = stats.ttest_rel(gsu, acc)
        nonzero = np.count_nonzero(d)
        w = stats.wilcoxon(gsu, acc, zero_method="wilcox", method="approx") if nonzero else None
        wp = f"{w.pvalue:.3g}" if w is not None else "n/a"
        print(
            f"  LSVM-GSU − {name:<9}: {100 * d.mean():+.2f} ± {100 * d.std(ddof=1):.2f} points, "
            f"better on {np.count_nonzero(d > 0)}, worse on {np.count_nonzero(d < 0)} of {n}; "
            f"paired t p = {t.pvalue:.3g}, Wilcoxon p = {wp}"
        )


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for p in sys.argv[1:]:
        report(p)
