//! Comparing two classifiers over resampled train/test partitions, with tests valid for the design.
//!
//! Repeated random splits (and the folds of repeated k-fold cross-validation) share most of their
//! training examples and overlap in their test sets, so the per-partition differences `d_j` of two
//! classifiers' accuracies are positively correlated and the plain paired t-test, which takes them as
//! independent, is anti-conservative (Dietterich 1998). Nadeau & Bengio (2003) correct its variance: with
//! `J` partitions, `n₁` training and `n₂` test examples each, mean `d̄` and sample variance `s²`,
//!
//! ```text
//! t = d̄ / √((1/J + n₂/n₁) · s²),   J − 1 degrees of freedom        (corrected resampled t-test)
//! ```
//!
//! For `r` repetitions of `k`-fold cross-validation, `J = r·k` and `n₂/n₁ = 1/(k − 1)` (Bouckaert & Frank
//! 2004, the corrected repeated k-fold cv test). Several comparisons from one table are corrected by Holm's
//! step-down rule (Holm 1979), which controls the family-wise error rate without assuming independence.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// How the partitions were drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Resampling {
    /// Independent random train/test splits, each of `n_train` training and `n_test` test examples.
    RandomSplits { n_train: usize, n_test: usize },
    /// Repetitions of `folds`-fold cross-validation: every fold is one partition.
    RepeatedKFold { folds: usize },
    /// Partitions that are independent draws (disjoint data): the plain paired t-test.
    Independent,
}

impl Resampling {
    /// The factor `c` of `Var(d̄) ≈ c·s²` for `j` partitions.
    fn variance_factor(self, j: usize) -> f64 {
        let j = j as f64;
        match self {
            Resampling::RandomSplits { n_train, n_test } => 1.0 / j + n_test as f64 / n_train as f64,
            Resampling::RepeatedKFold { folds } => 1.0 / j + 1.0 / (folds as f64 - 1.0),
            Resampling::Independent => 1.0 / j,
        }
    }

    /// The test's name, for tables.
    pub fn test_name(self) -> &'static str {
        match self {
            Resampling::RandomSplits { .. } => "corrected resampled t-test (Nadeau & Bengio 2003)",
            Resampling::RepeatedKFold { .. } => "corrected repeated k-fold cv t-test (Bouckaert & Frank 2004)",
            Resampling::Independent => "paired t-test",
        }
    }
}

/// A two-sided t-test of `mean difference = 0`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TTest {
    /// `d̄`.
    pub mean: f64,
    /// The sample standard deviation `s` of the differences.
    pub std: f64,
    /// `t` (±∞ when every difference is the same nonzero value; 0 when all are 0).
    pub t: f64,
    /// Degrees of freedom, `J − 1`.
    pub df: f64,
    /// Two-sided p-value.
    pub p_value: f64,
}

/// Mean and sample standard deviation (0 for one value; NaN mean for none).
pub fn mean_sd(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    (m, (v.iter().map(|a| (a - m).powi(2)).sum::<f64>() / (n - 1.0).max(1.0)).sqrt())
}

/// The t-test of paired differences `d` (one per partition) under `design`; `None` for fewer than two
/// differences or a non-finite one.
pub fn paired_t_test(d: &[f64], design: Resampling) -> Option<TTest> {
    let j = d.len();
    if j < 2 || d.iter().any(|v| !v.is_finite()) {
        return None;
    }
    if let Resampling::RandomSplits { n_train: 0, .. } | Resampling::RepeatedKFold { folds: 0 | 1 } = design {
        return None;
    }
    let (mean, std) = mean_sd(d);
    let df = (j - 1) as f64;
    let se = design.variance_factor(j).sqrt() * std;
    let (t, p_value) = if se > 0.0 {
        let t = mean / se;
        let dist = StudentsT::new(0.0, 1.0, df).expect("df ≥ 1");
        (t, (2.0 * dist.sf(t.abs())).min(1.0))
    } else if mean == 0.0 {
        (0.0, 1.0)
    } else {
        (mean.signum() * f64::INFINITY, 0.0)
    };
    Some(TTest { mean, std, t, df, p_value })
}

/// Holm's step-down adjustment of `p` (same order): the `i`-th smallest becomes
/// `max_{k ≤ i} min(1, (m − k + 1)·p_(k))`; reject where the adjusted value is at most the level.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut adjusted = vec![0.0; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p[i]).min(1.0));
        adjusted[i] = running;
    }
    adjusted
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: [f64; 10] = [0.02, 0.0, -0.01, 0.035, 0.0175, 0.0, 0.02, -0.0175, 0.01, 0.0];

    /// Reference values from SciPy 1.17 (`2 * scipy.stats.t.sf(|t|, J - 1)` with `t` as in the module docs).
    #[test]
    fn p_values_match_an_independent_implementation() {
        let plain = paired_t_test(&D, Resampling::Independent).unwrap();
        // `scipy.stats.ttest_1samp(D, 0)` for the plain test.
        assert!((plain.t - 1.4917354742965405).abs() < 1e-12, "{plain:?}");
        assert!((plain.p_value - 0.16996395548959614).abs() < 1e-9, "{plain:?}");
        let split = paired_t_test(&D, Resampling::RandomSplits { n_train: 512, n_test: 57 }).unwrap();
        assert!((split.t - 1.026155477540142).abs() < 1e-12, "{split:?}");
        assert!((split.p_value - 0.3316068087317003).abs() < 1e-9, "{split:?}");
        let cv = paired_t_test(&D, Resampling::RepeatedKFold { folds: 5 }).unwrap();
        assert!((cv.t - 0.7973661509306257).abs() < 1e-12, "{cv:?}");
        assert!((cv.p_value - 0.44576441918311877).abs() < 1e-9, "{cv:?}");
    }

    #[test]
    fn the_correction_only_widens_and_degenerate_inputs_are_explicit() {
        let plain = paired_t_test(&D, Resampling::Independent).unwrap();
        let split = paired_t_test(&D, Resampling::RandomSplits { n_train: 512, n_test: 57 }).unwrap();
        assert!(split.p_value > plain.p_value);
        assert_eq!(paired_t_test(&[0.1], Resampling::Independent), None);
        assert_eq!(paired_t_test(&[0.1, f64::NAN], Resampling::Independent), None);
        assert_eq!(paired_t_test(&D, Resampling::RepeatedKFold { folds: 1 }), None);
        let zero = paired_t_test(&[0.0; 4], Resampling::Independent).unwrap();
        assert_eq!((zero.t, zero.p_value), (0.0, 1.0));
        let same = paired_t_test(&[0.01; 4], Resampling::Independent).unwrap();
        assert_eq!((same.t, same.p_value), (f64::INFINITY, 0.0));
    }

    #[test]
    fn holm_steps_down_and_stays_monotone() {
        // m = 4: sorted 0.01, 0.02, 0.03, 0.5 → 0.04, max(0.04, 0.06), max(0.06, 0.06), max(0.06, 0.5).
        let adjusted = holm(&[0.03, 0.5, 0.01, 0.02]);
        let want = [0.06, 0.5, 0.04, 0.06];
        for (a, w) in adjusted.iter().zip(want) {
            assert!((a - w).abs() < 1e-15, "{adjusted:?}");
        }
        assert_eq!(holm(&[0.9, 0.8]), vec![1.0, 1.0]);
        assert!(holm(&[]).is_empty());
    }
}
