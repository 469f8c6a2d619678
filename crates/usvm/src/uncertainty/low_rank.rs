use ndarray::Array2;
use serde::{Deserialize, Serialize};

use super::{Covariance, check_variances, dot3};
use crate::error::{Error, Result};

/// `Σ_i = U_i U_iᵀ + diag(v_i)`: a rank-`r_i` factor `U_i` (`n × r_i`) plus an optional diagonal.
///
/// `wᵀΣw = ‖U_iᵀw‖² + Σ_j v_ij w_j²` costs O(n r_i).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LowRank {
    pub factors: Vec<Array2<f64>>,
    /// `ℓ × n` diagonal parts, or `None` for a pure low-rank covariance.
    pub diagonal: Option<Array2<f64>>,
}

impl LowRank {
    pub(super) fn validate(&self, n_features: usize) -> Result<()> {
        for (i, u) in self.factors.iter().enumerate() {
            if u.nrows() != n_features {
                return Err(Error::DimensionMismatch {
                    what: "low-rank covariance factor (rows)",
                    expected: n_features,
                    found: u.nrows(),
                });
            }
            if let Some(&v) = u.iter().find(|v| !v.is_finite()) {
                return Err(Error::NonFinite { what: "low-rank covariance factor", index: i, value: v });
            }
        }
        if let Some(d) = &self.diagonal {
            if d.nrows() != self.factors.len() || d.ncols() != n_features {
                return Err(Error::DimensionMismatch {
                    what: "low-rank covariance diagonal",
                    expected: self.factors.len() * n_features,
                    found: d.len(),
                });
            }
            if !d.is_standard_layout() {
                return Err(Error::Numerical("low-rank diagonal must be in row-major layout".into()));
            }
            for (i, row) in d.rows().into_iter().enumerate() {
                check_variances(i, row.iter())?;
            }
        }
        Ok(())
    }

    /// The diagonal part of example `i`, if any.
    #[inline]
    pub fn diagonal_row(&self, i: usize) -> Option<&[f64]> {
        self.diagonal.as_ref().map(|d| d.row(i).to_slice().expect("standard layout"))
    }
}

impl Covariance for LowRank {
    fn bilinear(&self, i: usize, u: &[f64], v: &[f64]) -> f64 {
        let f = &self.factors[i];
        // Σ_k (U_kᵀu)(U_kᵀv) over the columns k of the factor.
        let mut s = 0.0;
        for k in 0..f.ncols() {
            let col = f.column(k);
            let (mut a, mut b) = (0.0, 0.0);
            for (j, &x) in col.iter().enumerate() {
                a += x * u[j];
                b += x * v[j];
            }
            s += a * b;
        }
        s + self.diagonal_row(i).map_or(0.0, |d| dot3(d, u, v))
    }

    fn apply_add(&self, i: usize, alpha: f64, v: &[f64], out: &mut [f64]) {
        let f = &self.factors[i];
        for k in 0..f.ncols() {
            let col = f.column(k);
            let a: f64 = col.iter().zip(v).map(|(x, y)| x * y).sum();
            for (o, &x) in out.iter_mut().zip(col.iter()) {
                *o += alpha * a * x;
            }
        }
        if let Some(d) = self.diagonal_row(i) {
            for ((o, s), x) in out.iter_mut().zip(d).zip(v) {
                *o += alpha * s * x;
            }
        }
    }

    fn apply_entries(&self, i: usize, n_features: usize) -> usize {
        n_features * (2 * self.factors[i].ncols() + 1)
    }

    fn trace(&self, i: usize, _: usize) -> f64 {
        self.factors[i].iter().map(|x| x * x).sum::<f64>() + self.diagonal_row(i).map_or(0.0, |d| d.iter().sum())
    }
}
