use ndarray::Array2;
use serde::{Deserialize, Serialize};

use super::{Covariance, check_variances, dot3, weighted_forms};
use crate::error::{Error, Result};
use crate::features::{ColumnSet, CsrMatrix};

/// `Σ_i = diag(v_i)`, the variances stored densely as an `ℓ × n` array.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diagonal {
    /// The variances `Σ_i,jj`, one row per example (`ℓ × n`).
    pub variances: Array2<f64>,
}

impl Diagonal {
    #[inline]
    fn row(&self, i: usize) -> &[f64] {
        self.variances.row(i).to_slice().expect("standard layout")
    }

    pub(super) fn validate(&self, n_features: usize) -> Result<()> {
        if self.variances.ncols() != n_features {
            return Err(Error::DimensionMismatch {
                what: "diagonal covariances (features)",
                expected: n_features,
                found: self.variances.ncols(),
            });
        }
        if !self.variances.is_standard_layout() {
            return Err(Error::Layout { what: "diagonal covariances" });
        }
        for (i, row) in self.variances.rows().into_iter().enumerate() {
            check_variances(i, row.iter())?;
        }
        Ok(())
    }
}

impl Covariance for Diagonal {
    #[inline]
    fn bilinear(&self, i: usize, u: &[f64], v: &[f64]) -> f64 {
        dot3(self.row(i), u, v)
    }
    #[inline]
    fn line_forms(&self, i: usize, u: &[f64], v: &[f64]) -> [f64; 3] {
        weighted_forms(self.row(i), u, v)
    }
    #[inline]
    fn apply_add(&self, i: usize, alpha: f64, v: &[f64], out: &mut [f64]) {
        for ((o, s), x) in out.iter_mut().zip(self.row(i)).zip(v) {
            *o += alpha * s * x;
        }
    }
    #[inline]
    fn apply_combination_add(
        &self,
        i: usize,
        alpha: f64,
        a: f64,
        u: &[f64],
        b: f64,
        v: &[f64],
        out: &mut [f64],
        _: &mut Vec<f64>,
    ) {
        for (((o, s), x), z) in out.iter_mut().zip(self.row(i)).zip(u).zip(v) {
            *o += alpha * s * (a * x + b * z);
        }
    }
    fn trace(&self, i: usize, _: usize) -> f64 {
        self.row(i).iter().sum()
    }
    fn factor(&self, i: usize, n_features: usize) -> Option<Array2<f64>> {
        let diagonal: Vec<(usize, f64)> = self.row(i).iter().copied().enumerate().collect();
        Some(super::factor_with_diagonal(Array2::zeros((n_features, 0)).view(), &diagonal))
    }
}

/// `Σ_i = diag(v_i)` with the variances stored sparsely (absent entries are zero).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SparseDiagonal {
    /// The variances `Σ_i,jj`, one sparse row per example (absent entries are 0).
    pub variances: CsrMatrix<'static>,
}

impl SparseDiagonal {
    pub(super) fn validate(&self, n_features: usize) -> Result<()> {
        if self.variances.n_cols != n_features {
            return Err(Error::DimensionMismatch {
                what: "diagonal covariances (features)",
                expected: n_features,
                found: self.variances.n_cols,
            });
        }
        self.variances.validate("variances")?;
        for i in 0..self.variances.n_rows() {
            check_variances(i, self.variances.row(i).1)?;
        }
        Ok(())
    }
}

impl Covariance for SparseDiagonal {
    #[inline]
    fn bilinear(&self, i: usize, u: &[f64], v: &[f64]) -> f64 {
        let (idx, var) = self.variances.row(i);
        idx.iter().zip(var).map(|(&j, &s)| s * u[j as usize] * v[j as usize]).sum()
    }
    #[inline]
    fn apply_add(&self, i: usize, alpha: f64, v: &[f64], out: &mut [f64]) {
        let (idx, var) = self.variances.row(i);
        for (&j, &s) in idx.iter().zip(var) {
            let j = j as usize;
            out[j] += alpha * s * v[j];
        }
    }
    #[inline]
    fn apply_combination_add(
        &self,
        i: usize,
        alpha: f64,
        a: f64,
        u: &[f64],
        b: f64,
        v: &[f64],
        out: &mut [f64],
        _: &mut Vec<f64>,
    ) {
        let (idx, var) = self.variances.row(i);
        for (&j, &s) in idx.iter().zip(var) {
            let j = j as usize;
            out[j] += alpha * s * (a * u[j] + b * v[j]);
        }
    }
    fn apply_entries(&self, i: usize, _: usize) -> usize {
        self.variances.row(i).0.len()
    }
    fn mark_columns(&self, used: &mut ColumnSet) -> bool {
        self.variances.mark_columns(used);
        true
    }
    fn restrict_columns(&self, kept: &ColumnSet) -> Option<super::Covariances> {
        Some(super::Covariances::sparse_diagonal(self.variances.restrict_columns(kept).into_owned()))
    }
    fn trace(&self, i: usize, _: usize) -> f64 {
        self.variances.row(i).1.iter().sum()
    }
    fn factor(&self, i: usize, n_features: usize) -> Option<Array2<f64>> {
        let (idx, var) = self.variances.row(i);
        let diagonal: Vec<(usize, f64)> = idx.iter().zip(var).map(|(&j, &v)| (j as usize, v)).collect();
        Some(super::factor_with_diagonal(Array2::zeros((n_features, 0)).view(), &diagonal))
    }
}
