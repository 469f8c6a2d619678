//! Variances from reported standard errors (DESIGN 8, WDBC protocol; thesis 3.5.3).
//!
//! A data set may report, for measurement `j` of example `i`, a mean `m_ij` and its standard error
//! `se_ij` (a standard deviation). Two rules turn it into the variance of feature `j`:
//!
//! - [`StandardErrorRule::Squared`]: `s²_ij = se_ij²`, the variance of the reported mean.
//! - [`StandardErrorRule::RangeScaled`]: the WDBC protocol as the thesis states it ("the maximum variance
//!   is set to 80% of the range"): `s²_ij = fraction · range_j · se_ij / max_k se_kj`, so that the largest
//!   standard error of the reference rows (the training split) becomes a *variance* of `fraction` (0.8 in
//!   the thesis) times the range of mean `j` over the reference rows. Not unit-consistent (a variance
//!   proportional to a length), but what the paper says.
//! - [`StandardErrorRule::RangeScaledSquared`]: the same rescaled value read as a standard deviation,
//!   `s²_ij = (fraction · range_j · se_ij / max_k se_kj)²` — unit-consistent, a different model.
//!
//! Variances are in the units of the means (squared units for the first and last rule); divide by `std_j²`
//! when the features are standardised. A column whose reference standard errors are all zero gets variance 0.

use ndarray::{Array2, ArrayView2};

use crate::error::{Error, Result, invalid};

/// How a standard error becomes a variance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StandardErrorRule {
    /// `σ² = SE²`.
    Squared,
    /// `σ² = fraction · range · SE / max SE`: the largest reference standard error maps to a variance of
    /// `fraction · range` of the mean column (the thesis' WDBC rule).
    RangeScaled {
        /// The fraction of the mean column's range the largest standard error maps to.
        fraction: f64,
    },
    /// `σ² = (fraction · range · SE / max SE)²`: the largest reference standard error maps to a standard
    /// deviation of `fraction · range`.
    RangeScaledSquared {
        /// The fraction of the mean column's range the largest standard error maps to.
        fraction: f64,
    },
}

/// The variances (`ℓ × k`) of the `k` mean columns `means` given their standard errors `se` (same shape).
/// `reference` selects the rows whose range and maximum define the scaling (default: all rows).
pub fn standard_errors_to_variances(
    means: ArrayView2<f64>,
    se: ArrayView2<f64>,
    reference: Option<&[usize]>,
    rule: StandardErrorRule,
) -> Result<Array2<f64>> {
    if se.dim() != means.dim() {
        return Err(Error::DimensionMismatch {
            what: "standard errors (values)",
            expected: means.len(),
            found: se.len(),
        });
    }
    let (l, k) = se.dim();
    if l == 0 || k == 0 {
        return Err(Error::Empty("standard errors"));
    }
    for (i, (m, s)) in means.rows().into_iter().zip(se.rows()).enumerate() {
        if let Some(&v) = m.iter().find(|v| !v.is_finite()) {
            return Err(Error::NonFinite { what: "means", index: i, value: v });
        }
        if let Some(&v) = s.iter().find(|v| !v.is_finite()) {
            return Err(Error::NonFinite { what: "standard errors", index: i, value: v });
        }
        if let Some(&v) = s.iter().find(|&&v| v < 0.0) {
            return Err(Error::NegativeVariance { index: i, value: v });
        }
    }
    let all: Vec<usize>;
    let rows = match reference {
        Some(r) => {
            if r.is_empty() {
                return Err(Error::Empty("reference rows"));
            }
            if let Some(&bad) = r.iter().find(|&&i| i >= l) {
                return Err(Error::DimensionMismatch { what: "reference row index", expected: l, found: bad });
            }
            r
        }
        None => {
            all = (0..l).collect();
            &all
        }
    };
    match rule {
        StandardErrorRule::Squared => Ok(se.mapv(|s| s * s)),
        StandardErrorRule::RangeScaled { fraction } | StandardErrorRule::RangeScaledSquared { fraction } => {
            let square = matches!(rule, StandardErrorRule::RangeScaledSquared { .. });
            if !(fraction > 0.0 && fraction.is_finite()) {
                return Err(invalid("fraction", fraction, "must be positive and finite"));
            }
            let mut out = Array2::zeros((l, k));
            for j in 0..k {
                let (lo, hi) = rows.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &i| {
                    (lo.min(means[[i, j]]), hi.max(means[[i, j]]))
                });
                let max_se = rows.iter().fold(0.0f64, |a, &i| a.max(se[[i, j]]));
                let scale = if max_se > 0.0 { fraction * (hi - lo) / max_se } else { 0.0 };
                for i in 0..l {
                    let s = scale * se[[i, j]];
                    out[[i, j]] = if square { s * s } else { s };
                }
            }
            Ok(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn range_scaled_maps_the_largest_reference_error_to_the_fraction_of_the_range() {
        let m = array![[1.0, 10.0], [3.0, 10.0], [2.0, 10.0], [100.0, 0.0]];
        let se = array![[0.5, 0.0], [1.0, 0.0], [0.25, 0.0], [9.0, 0.0]];
        let rule = |fraction| StandardErrorRule::RangeScaledSquared { fraction };
        let v = standard_errors_to_variances(m.view(), se.view(), Some(&[0, 1, 2]), rule(0.8)).unwrap();
        // Range 2, max se 1: s = 1.6 · se, squared.
        for (got, want) in v.column(0).iter().zip([0.64, 2.56, 0.16, (1.6f64 * 9.0).powi(2)]) {
            assert!((got - want).abs() < 1e-12 * want, "{got} vs {want}");
        }
        assert_eq!(v.column(1).to_vec(), vec![0.0; 4]);
        // The paper's rule: the same rescaled value, not squared; the largest reference one is 0.8 · range.
        let paper = StandardErrorRule::RangeScaled { fraction: 0.8 };
        let p = standard_errors_to_variances(m.view(), se.view(), Some(&[0, 1, 2]), paper).unwrap();
        for (got, want) in p.column(0).iter().zip([0.8, 1.6, 0.4, 1.6 * 9.0]) {
            assert!((got - want).abs() < 1e-12 * want, "{got} vs {want}");
        }
        assert_eq!(p.column(1).to_vec(), vec![0.0; 4]);
        let sq = standard_errors_to_variances(m.view(), se.view(), None, StandardErrorRule::Squared).unwrap();
        assert_eq!(sq[[1, 0]], 1.0);
    }

    #[test]
    fn bad_input() {
        let m = array![[1.0], [2.0]];
        let rule = StandardErrorRule::RangeScaled { fraction: 0.8 };
        let f =
            |se: ndarray::Array2<f64>, r: Option<&[usize]>| standard_errors_to_variances(m.view(), se.view(), r, rule);
        assert!(matches!(f(array![[1.0], [-1.0]], None), Err(Error::NegativeVariance { index: 1, .. })));
        assert!(matches!(f(array![[f64::NAN], [1.0]], None), Err(Error::NonFinite { index: 0, .. })));
        assert!(matches!(f(array![[1.0, 1.0], [1.0, 1.0]], None), Err(Error::DimensionMismatch { .. })));
        assert!(matches!(f(array![[1.0], [1.0]], Some(&[2])), Err(Error::DimensionMismatch { .. })));
        assert_eq!(f(array![[1.0], [1.0]], Some(&[])), Err(Error::Empty("reference rows")));
        for zero in
            [StandardErrorRule::RangeScaled { fraction: 0.0 }, StandardErrorRule::RangeScaledSquared { fraction: 0.0 }]
        {
            assert!(standard_errors_to_variances(m.view(), m.view(), None, zero).is_err());
        }
    }
}
