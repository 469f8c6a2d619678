//! Gaussians from repeated observations (thesis eq. 4.12).
//!
//! Example `i` is observed `N_i ≥ 2` times, `x_i^1..x_i^{N_i} ∈ R^n`. Its mean and unbiased covariance are
//!
//! ```text
//! x_i = (1/N_i) Σ_t x_i^t,        Σ_i = (1/(N_i - 1)) Σ_t (x_i^t - x_i)(x_i^t - x_i)ᵀ = U_i U_iᵀ,
//! U_i = [x_i^1 - x_i, …, x_i^{N_i} - x_i] / √(N_i - 1)   (n × N_i).
//! ```
//!
//! Stored as the full matrix, its diagonal (per-feature sample variances), the Frobenius-nearest
//! isotropic matrix `σ_i² I` with `σ_i² = tr Σ_i / n` (thesis 4.3.1), or the factor `U_i` itself
//! (exact, `O(n N_i)` storage: the form to use when `N_i ≪ n`).

use ndarray::{Array2, Array3, ArrayView2, Axis};

use crate::covariance::Covariances;
use crate::error::{Error, Result, invalid};

/// How to store the estimated covariances.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CovarianceForm {
    /// Dense `n × n` matrices.
    Full,
    /// The diagonal only (per-feature unbiased variances).
    Diagonal,
    /// `(tr Σ_i / n) I`.
    Isotropic,
    /// The exact factor `U_i` of the centred observations over `√(N_i - 1)` (`Σ_i = U_i U_iᵀ`), or, with
    /// more observations than features, its eigen-factor (at most `n` columns).
    LowRank,
}

/// Means (`ℓ × n`) and covariances of `ℓ` Gaussians.
#[derive(Debug, Clone, PartialEq)]
pub struct Gaussians {
    /// The means, one row per Gaussian.
    pub means: Array2<f64>,
    /// The covariances, in the requested form.
    pub covariances: Covariances,
}

/// The mean and unbiased covariance of each group of observations (`groups[i]` is `N_i × n`, one
/// observation per row). Errors: no groups, no features, groups of different widths, a group with fewer
/// than two observations (the unbiased estimate needs `N_i - 1 > 0`), non-finite values.
pub fn gaussians_from_repeats(groups: &[ArrayView2<f64>], form: CovarianceForm) -> Result<Gaussians> {
    let Some(first) = groups.first() else {
        return Err(Error::Empty("groups of observations"));
    };
    let n = first.ncols();
    if n == 0 {
        return Err(Error::Empty("features"));
    }
    for (i, g) in groups.iter().enumerate() {
        if g.ncols() != n {
            return Err(Error::DimensionMismatch {
                what: "observations (features per row)",
                expected: n,
                found: g.ncols(),
            });
        }
        if g.nrows() < 2 {
            return Err(invalid(
                "observations per example",
                format!("{} (example {i})", g.nrows()),
                "at least two are needed for an unbiased covariance",
            ));
        }
        if let Some(&v) = g.iter().find(|v| !v.is_finite()) {
            return Err(Error::NonFinite { what: "observations", index: i, value: v });
        }
    }
    let l = groups.len();
    let mut means = Array2::zeros((l, n));
    let mut centred = Vec::with_capacity(l);
    for (i, g) in groups.iter().enumerate() {
        let m = g.mean_axis(Axis(0)).expect("at least two rows");
        // Rows x^t - x: Σ = CᵀC / (N - 1).
        means.row_mut(i).assign(&m);
        centred.push(g - &m);
    }
    let dof = |c: &Array2<f64>| (c.nrows() - 1) as f64;
    let covariances = match form {
        // The centred observations over √(N_i - 1) are a factor; with more observations than features it
        // is re-factored to at most n columns (the same Σ_i), so that every rank is at most n.
        CovarianceForm::LowRank => Covariances::low_rank(
            centred
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let u = c.t().to_owned() / dof(c).sqrt();
                    if u.ncols() > n { crate::covariance::psd_factor(i, u.dot(&u.t()).view()) } else { Ok(u) }
                })
                .collect::<Result<_>>()?,
            None,
        ),
        CovarianceForm::Diagonal => {
            let mut v = Array2::zeros((l, n));
            for (i, c) in centred.iter().enumerate() {
                v.row_mut(i).assign(&c.map_axis(Axis(0), |col| col.dot(&col) / dof(c)));
            }
            Covariances::diagonal(v)
        }
        CovarianceForm::Isotropic => Covariances::isotropic(
            centred.iter().map(|c| c.iter().map(|x| x * x).sum::<f64>() / dof(c) / n as f64).collect(),
        ),
        CovarianceForm::Full => {
            crate::memory::reserve("full covariances", crate::covariance::FULL_REMEDY, &[l, n, n])?;
            let mut m = Array3::zeros((l, n, n));
            for (i, c) in centred.iter().enumerate() {
                m.index_axis_mut(Axis(0), i).assign(&(c.t().dot(c) / dof(c)));
            }
            Covariances::full(m)
        }
    };
    Ok(Gaussians { means, covariances })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{Array2, array};
    use rand::SeedableRng;
    use rand_distr::{Distribution, StandardNormal};
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn random_groups(seed: u64, sizes: &[usize], n: usize) -> Vec<Array2<f64>> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        sizes.iter().map(|&k| Array2::from_shape_fn((k, n), |_| StandardNormal.sample(&mut rng))).collect()
    }

    /// Σ by the textbook double loop, entry by entry.
    fn direct_covariance(g: &Array2<f64>) -> (Vec<f64>, Array2<f64>) {
        let (k, n) = g.dim();
        let mean: Vec<f64> = (0..n).map(|j| (0..k).map(|t| g[[t, j]]).sum::<f64>() / k as f64).collect();
        let s = Array2::from_shape_fn((n, n), |(a, b)| {
            (0..k).map(|t| (g[[t, a]] - mean[a]) * (g[[t, b]] - mean[b])).sum::<f64>() / (k - 1) as f64
        });
        (mean, s)
    }

    #[test]
    fn every_form_matches_the_direct_formula() {
        let n = 5;
        let groups = random_groups(3, &[2, 3, 7, 12], n);
        let views: Vec<_> = groups.iter().map(|g| g.view()).collect();
        let all = [CovarianceForm::Full, CovarianceForm::Diagonal, CovarianceForm::Isotropic, CovarianceForm::LowRank];
        let fits: Vec<Gaussians> = all.iter().map(|&f| gaussians_from_repeats(&views, f).unwrap()).collect();
        for (i, g) in groups.iter().enumerate() {
            let (mean, s) = direct_covariance(g);
            for fit in &fits {
                fit.covariances.validate(groups.len(), n).unwrap();
                for (j, m) in mean.iter().enumerate() {
                    assert!((fit.means[[i, j]] - m).abs() < 1e-14);
                }
            }
            let e = |a: usize| (0..n).map(|j| f64::from(u8::from(j == a))).collect::<Vec<_>>();
            for a in 0..n {
                for b in 0..n {
                    let want = s[[a, b]];
                    for (fit, form) in fits.iter().zip(all) {
                        let got = fit.covariances.as_dyn().bilinear(i, &e(a), &e(b));
                        let want = match form {
                            CovarianceForm::Full | CovarianceForm::LowRank => want,
                            CovarianceForm::Diagonal if a == b => want,
                            CovarianceForm::Isotropic if a == b => s.diag().sum() / n as f64,
                            _ => 0.0,
                        };
                        assert!((got - want).abs() < 1e-12, "{form:?} example {i} ({a},{b}): {got} vs {want}");
                    }
                }
            }
        }
        // The low-rank factor has one column per observation, at most n: N_i - 1 centred observations are
        // independent (rank N_i - 1 ≤ n), more are re-factored to rank n.
        let Covariances::LowRank(lr) = &fits[3].covariances else { panic!() };
        assert_eq!(lr.factors.iter().map(|f| f.dim()).collect::<Vec<_>>(), [(5, 2), (5, 3), (5, 5), (5, 5)]);
    }

    #[test]
    fn bad_input_is_a_typed_error() {
        let ok = array![[1.0, 2.0], [3.0, 4.0]];
        let f = CovarianceForm::Diagonal;
        assert_eq!(gaussians_from_repeats(&[], f), Err(Error::Empty("groups of observations")));
        let ragged = array![[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]];
        assert!(matches!(
            gaussians_from_repeats(&[ok.view(), ragged.view()], f),
            Err(Error::DimensionMismatch { expected: 2, found: 3, .. })
        ));
        let single = array![[1.0, 2.0]];
        let e = gaussians_from_repeats(&[ok.view(), single.view()], f).unwrap_err();
        assert!(matches!(&e, Error::InvalidParameter { value, .. } if value == "1 (example 1)"), "{e}");
        let nan = array![[1.0, f64::NAN], [3.0, 4.0]];
        assert!(matches!(gaussians_from_repeats(&[ok.view(), nan.view()], f), Err(Error::NonFinite { index: 1, .. })));
        let empty = Array2::<f64>::zeros((3, 0));
        assert_eq!(gaussians_from_repeats(&[empty.view()], f), Err(Error::Empty("features")));
    }
}
