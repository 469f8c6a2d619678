#!/usr/bin/env python3
"""Independent check of the WDBC comparisons that `usvm demo --json` reports.

From each report's per-partition accuracies this recomputes, with scipy and nothing from usvm, every pairwise
comparison the demo prints (later method in the table minus earlier): the mean ± sample std of the
per-partition differences, the t-test corrected for the overlap of the partitions — Nadeau & Bengio's
corrected resampled t-test for random splits (variance factor 1/J + n_test/n_train), Bouckaert & Frank's
corrected repeated k-fold test for repeated cross-validation (1/J + 1/(k − 1)) — and Holm's adjustment over
the table; it checks each against the report's `comparisons` (to 1e-9) and exits 1 on a mismatch. For
reference it also prints the plain paired t-test and the Wilcoxon signed-rank test, which treat the
partitions as independent and are therefore anti-conservative here (they are not the result).

Usage:
    usvm demo --splits 100 --json paper.json
    usvm demo --cv-repeats 10 --json cv.json
    python3 bench/wdbc_paired.py paper.json cv.json
"""

import json
import sys

import numpy as np
from scipy import stats

# Stratified 90/10 splits of WDBC's 212 malignant and 357 benign rows: round(0.1 n_c) test rows per class.
WDBC_SPLIT = {"n_train": 569 - 21 - 36, "n_test": 21 + 36}


def corrected_t(d: np.ndarray, factor: float) -> tuple[float, float]:
    """(t, two-sided p) of mean(d) = 0 with Var(mean) = factor * s^2 and J - 1 degrees of freedom."""
    s2 = d.var(ddof=1)
    if s2 == 0:
        return (0.0, 1.0) if d.mean() == 0 else (np.sign(d.mean()) * np.inf, 0.0)
    t = d.mean() / np.sqrt(factor * s2)
    return t, min(1.0, 2 * stats.t.sf(abs(t), len(d) - 1))


def holm(p: list[float]) -> list[float]:
    order = np.argsort(p, kind="stable")
    out, running = [0.0] * len(p), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - rank) * p[i]))
        out[i] = running
    return out


def report(path: str) -> bool:
    with open(path) as f:
        demo = json.load(f)
    design = demo.get("design", "random_splits")
    rows = [(r["method"], np.asarray(r["test_accuracies"])) for r in demo["results"]]
    j = len(rows[0][1])
    if design == "random_splits":
        sizes = {k: demo.get(k, WDBC_SPLIT[k]) for k in WDBC_SPLIT}
        factor = 1 / j + sizes["n_test"] / sizes["n_train"]
        test = f"corrected resampled t-test, n_test/n_train = {sizes['n_test']}/{sizes['n_train']}"
    else:
        k = demo.get("outer_folds", 10)  # the demo's default
        factor = 1 / j + 1 / (k - 1)
        test = f"corrected repeated {k}-fold cv t-test"
    print(f"{path}: rule {demo.get('se_rule', '?')}, {design}, {j} partitions; {test}; Holm over the table")
    for name, acc in rows:
        print(f"  {name:<10} {100 * acc.mean():6.2f} ± {100 * acc.std(ddof=1):.2f} %")
    pairs, p = [], []
    for b, (base, acc_b) in enumerate(rows):
        for name, acc in rows[b + 1 :]:
            d = acc - acc_b
            t, pv = corrected_t(d, factor)
            pairs.append((name, base, d, t))
            p.append(pv)
    ok = True
    reported = {(c["method"], c["baseline"]): c for c in demo.get("comparisons", [])}
    for (name, base, d, t), pv, ph in zip(pairs, p, holm(p)):
        plain = stats.ttest_1samp(d, 0).pvalue if d.std() > 0 else float("nan")
        w = stats.wilcoxon(d, zero_method="wilcox", method="approx").pvalue if np.any(d) else float("nan")
        print(
            f"  {name + ' − ' + base:<24} {100 * d.mean():+.2f} ± {100 * d.std(ddof=1):.2f} points, "
            f"better on {np.count_nonzero(d > 0)}, worse on {np.count_nonzero(d < 0)}: t = {t:.2f}, "
            f"p = {pv:.3g}, Holm p = {ph:.3g} (uncorrected, for reference: paired t p = {plain:.3g}, "
            f"Wilcoxon p = {w:.3g})"
        )
        c = reported.get((name, base))
        if c is not None and (abs(c["p_value"] - pv) > 1e-9 or abs(c["holm_p_value"] - ph) > 1e-9):
            print(f"  MISMATCH: the report says p = {c['p_value']}, Holm p = {c['holm_p_value']}")
            ok = False
    if reported:
        print(f"  {len(reported)} reported comparisons {'agree' if ok else 'DISAGREE'}")
    return ok


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    results = [report(p) for p in sys.argv[1:]]
    sys.exit(0 if all(results) else 1)
