use ndarray::{Array2, Array3, ArrayView2, ShapeBuilder};
use serde::{Deserialize, Serialize};

use super::{Covariance, LowRank};
use crate::error::{Error, Result};
use crate::linalg::dot;

/// Dense covariances, an `ℓ × n × n` array (`wᵀΣw` costs O(n²)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Full {
    /// The matrices, `ℓ × n × n`.
    pub matrices: Array3<f64>,
}

/// Relative tolerance for symmetry and for negative eigenvalues (round-off in estimated covariances).
pub const PSD_TOLERANCE: f64 = 1e-9;

impl Full {
    #[inline]
    fn matrix(&self, i: usize) -> ArrayView2<'_, f64> {
        self.matrices.index_axis(ndarray::Axis(0), i)
    }

    #[inline]
    fn row(&self, i: usize, j: usize) -> &[f64] {
        let n = self.matrices.shape()[1];
        let start = (i * n + j) * n;
        &self.matrices.as_slice().expect("standard layout")[start..start + n]
    }

    pub(super) fn validate(&self, n_features: usize) -> Result<()> {
        let shape = self.matrices.shape();
        for found in [shape[1], shape[2]] {
            if found != n_features {
                return Err(Error::DimensionMismatch {
                    what: "full covariances (features)",
                    expected: n_features,
                    found,
                });
            }
        }
        if !self.matrices.is_standard_layout() {
            return Err(Error::Layout { what: "full covariances" });
        }
        for i in 0..shape[0] {
            check_symmetric_psd(i, self.matrix(i))?;
        }
        Ok(())
    }

    /// Eigen-factors `U_r √Λ_r` of every matrix, keeping only the eigenvalues above the round-off
    /// level (see [`psd_factor`]); the matrices are assumed validated, so the errors are those of the
    /// eigen-decomposition (its memory).
    pub(super) fn to_low_rank(&self) -> Result<LowRank> {
        let factors = (0..self.matrices.shape()[0]).map(|i| psd_factor(i, self.matrix(i))).collect::<Result<_>>()?;
        Ok(LowRank { factors, diagonal: None })
    }
}

/// The eigenvalues of a PSD matrix `A` that are round-off, not rank: `λ ≤ max(n, 1)·ε·λ_max` (ε the
/// machine epsilon), the size of the error a backward-stable eigensolver makes in every eigenvalue.
pub fn rank_cutoff(n: usize, largest_eigenvalue: f64) -> f64 {
    n.max(1) as f64 * f64::EPSILON * largest_eigenvalue.max(0.0)
}

/// A factor `F = U_r Λ_r^{1/2}` (`n × r`, column-major) with `F Fᵀ = A` up to round-off, for the
/// covariance `A` of example `index`: the eigenpairs whose eigenvalues exceed [`rank_cutoff`] are kept,
/// so a matrix of rank `r` gives `r` columns although round-off leaves hundreds of tiny positive
/// eigenvalues. Errors as [`Covariances::validate`](super::Covariances::validate) does when `A` is not
/// finite, symmetric and PSD up to `PSD_TOLERANCE`. Costs one eigen-decomposition, O(n³).
pub fn psd_factor(index: usize, a: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
    let n = a.nrows();
    let scale = check_finite_symmetric(index, a)?;
    if scale == 0.0 {
        return Ok(Array2::zeros((n, 0).f()));
    }
    let (values, vectors) = symmetric_eigen(a)?;
    check_eigenvalues(index, &values, scale)?;
    let cutoff = rank_cutoff(n, values[0]);
    let r = values.iter().take_while(|&&v| v > cutoff).count();
    Ok(Array2::from_shape_fn((n, r).f(), |(row, k)| vectors[[row, k]] * values[k].sqrt()))
}

impl Covariance for Full {
    fn bilinear(&self, i: usize, u: &[f64], v: &[f64]) -> f64 {
        (0..u.len().min(self.matrices.shape()[1])).map(|j| u[j] * dot(self.row(i, j), v)).sum()
    }
    fn apply_add(&self, i: usize, alpha: f64, v: &[f64], out: &mut [f64]) {
        for (j, o) in out.iter_mut().enumerate().take(self.matrices.shape()[1]) {
            *o += alpha * dot(self.row(i, j), v);
        }
    }
    fn apply_entries(&self, _: usize, n_features: usize) -> usize {
        n_features * n_features
    }
    fn trace(&self, i: usize, _: usize) -> f64 {
        self.matrix(i).diag().sum()
    }
}

/// Errors unless `a` is finite, symmetric and positive semi-definite up to [`PSD_TOLERANCE`].
pub(crate) fn check_symmetric_psd(index: usize, a: ArrayView2<'_, f64>) -> Result<()> {
    let scale = check_finite_symmetric(index, a)?;
    if scale == 0.0 {
        return Ok(());
    }
    let (values, _) = symmetric_eigen(a)?;
    check_eigenvalues(index, &values, scale)
}

/// Errors unless `a` is finite and symmetric up to [`PSD_TOLERANCE`] relative to its largest entry,
/// which is returned.
fn check_finite_symmetric(index: usize, a: ArrayView2<'_, f64>) -> Result<f64> {
    let n = a.nrows();
    let mut scale: f64 = 0.0;
    for &v in a.iter() {
        if !v.is_finite() {
            return Err(Error::NonFinite { what: "full covariance", index, value: v });
        }
        scale = scale.max(v.abs());
    }
    for r in 0..n {
        for c in 0..r {
            let difference = (a[[r, c]] - a[[c, r]]).abs();
            if difference > PSD_TOLERANCE * scale {
                return Err(Error::AsymmetricCovariance { index, row: r, col: c, difference });
            }
        }
    }
    Ok(scale)
}

/// Errors when the smallest of the (descending) `values` is negative beyond round-off.
fn check_eigenvalues(index: usize, values: &[f64], scale: f64) -> Result<()> {
    let smallest = values.iter().copied().fold(f64::INFINITY, f64::min);
    if smallest < -PSD_TOLERANCE * scale * values.len() as f64 {
        return Err(Error::NotPositiveSemidefinite { index, eigenvalue: smallest });
    }
    Ok(())
}

/// Eigenvalues (descending) and eigenvectors (columns, same order) of a symmetric matrix.
pub(crate) fn symmetric_eigen(a: ArrayView2<'_, f64>) -> Result<(Vec<f64>, Array2<f64>)> {
    crate::linalg::symmetric_eigen(a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_distr::{Distribution, StandardNormal};

    /// A rank-2 matrix on 784 features keeps exactly 2 eigenpairs, and the factor reproduces it.
    #[test]
    fn factor_keeps_the_true_rank() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
        let n = 784;
        let u = Array2::from_shape_fn((n, 2), |_| StandardNormal.sample(&mut rng));
        let a = u.dot(&u.t());
        let f = psd_factor(0, a.view()).unwrap();
        assert_eq!(f.ncols(), 2);
        let scale = a.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let err = (&f.dot(&f.t()) - &a).iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(err <= 1e-12 * scale, "{err}");
        // Zero and non-PSD matrices.
        assert_eq!(psd_factor(0, Array2::<f64>::zeros((3, 3)).view()).unwrap().dim(), (3, 0));
        let bad = ndarray::array![[1.0, 0.0], [0.0, -1.0]];
        assert!(matches!(psd_factor(4, bad.view()), Err(Error::NotPositiveSemidefinite { index: 4, .. })));
        let asym = ndarray::array![[1.0, 0.5], [0.0, 1.0]];
        assert!(matches!(psd_factor(1, asym.view()), Err(Error::AsymmetricCovariance { index: 1, .. })));
    }
}
