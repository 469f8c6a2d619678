use ndarray::{Array2, Array3, ArrayView2};
use serde::{Deserialize, Serialize};

use super::{Covariance, LowRank};
use crate::data::dot;
use crate::error::{Error, Result};

/// Dense covariances, an `ℓ × n × n` array (`wᵀΣw` costs O(n²)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Full {
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
            return Err(Error::Numerical("full covariances must be in row-major layout".into()));
        }
        for i in 0..shape[0] {
            check_symmetric_psd(i, self.matrix(i))?;
        }
        Ok(())
    }

    /// Eigen-factors `U √Λ` of every matrix (negative round-off eigenvalues dropped).
    pub(super) fn to_low_rank(&self) -> LowRank {
        let factors = (0..self.matrices.shape()[0])
            .map(|i| {
                let (values, vectors) = symmetric_eigen(self.matrix(i)).expect("validated covariance");
                let keep: Vec<usize> = (0..values.len()).filter(|&k| values[k] > 0.0).collect();
                Array2::from_shape_fn((vectors.nrows(), keep.len()), |(r, c)| {
                    vectors[[r, keep[c]]] * values[keep[c]].sqrt()
                })
            })
            .collect();
        LowRank { factors, diagonal: None }
    }
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
    if scale == 0.0 {
        return Ok(());
    }
    let (values, _) = symmetric_eigen(a)?;
    let smallest = values.iter().copied().fold(f64::INFINITY, f64::min);
    if smallest < -PSD_TOLERANCE * scale * n as f64 {
        return Err(Error::NotPositiveSemidefinite { index, eigenvalue: smallest });
    }
    Ok(())
}

/// Eigenvalues (descending) and eigenvectors (columns, same order) of a symmetric matrix.
pub(crate) fn symmetric_eigen(a: ArrayView2<'_, f64>) -> Result<(Vec<f64>, Array2<f64>)> {
    let n = a.nrows();
    let m = faer::Mat::<f64>::from_fn(n, n, |r, c| 0.5 * (a[[r, c]] + a[[c, r]]));
    let evd = m
        .self_adjoint_eigen(faer::Side::Lower)
        .map_err(|e| Error::Numerical(format!("eigen-decomposition failed: {e:?}")))?;
    let (s, u) = (evd.S(), evd.U());
    // faer sorts ascending; reverse to descending.
    let values: Vec<f64> = (0..n).rev().map(|k| s[k]).collect();
    let vectors = Array2::from_shape_fn((n, n), |(r, c)| u[(r, n - 1 - c)]);
    Ok((values, vectors))
}
