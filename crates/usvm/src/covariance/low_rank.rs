use ndarray::{Array2, ArrayView2, ShapeBuilder};
use serde::{Deserialize, Serialize};

use super::{Covariance, check_variances, dot3};
use crate::error::{Error, Result};
use crate::linalg::{axpy, dot};

/// `Σ_i = U_i U_iᵀ + diag(v_i)`: a rank-`r_i` factor `U_i` (`n × r_i`) plus an optional diagonal.
///
/// `wᵀΣw = ‖U_iᵀw‖² + Σ_j v_ij w_j²` and `Σ_i v = U_i(U_iᵀv) + v_i ∘ v` cost O(n r_i): one pass over the
/// factor. Factors may have any memory layout; [`super::Covariances::low_rank`] stores them column-major,
/// so that each factor column is one contiguous vector.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LowRank {
    /// The factors `U_i` (`n × r_i`), one per example.
    pub factors: Vec<Array2<f64>>,
    /// `ℓ × n` diagonal parts, or `None` for a pure low-rank covariance.
    pub diagonal: Option<Array2<f64>>,
}

/// `factor` copied into column-major (Fortran) layout, unless it already is.
pub(super) fn column_major(factor: Array2<f64>) -> Array2<f64> {
    if factor.t().is_standard_layout() {
        return factor;
    }
    let mut out = Array2::zeros(factor.raw_dim().f());
    out.assign(&factor);
    out
}

/// `out = Uᵀu` (`out.len()` = the rank), in one pass over `U` whatever its layout.
#[inline]
fn factor_t_dot(f: ArrayView2<'_, f64>, u: &[f64], out: &mut [f64]) {
    let (n, r) = f.dim();
    let u = &u[..n.min(u.len())];
    if let Some(data) = f.t().to_slice() {
        // Column-major: column k is data[k n .. (k+1) n].
        for (k, o) in out.iter_mut().enumerate() {
            *o = dot(&data[k * n..(k + 1) * n], u);
        }
    } else if let Some(data) = f.to_slice() {
        // Row-major: row j is data[j r .. (j+1) r].
        out.iter_mut().for_each(|o| *o = 0.0);
        for (row, &uj) in data.chunks_exact(r.max(1)).zip(u) {
            for (o, &x) in out.iter_mut().zip(row) {
                *o += x * uj;
            }
        }
    } else {
        for (o, col) in out.iter_mut().zip(f.columns()) {
            *o = col.iter().zip(u).map(|(x, y)| x * y).sum();
        }
    }
}

/// `out += U a`.
#[inline]
fn factor_axpy(f: ArrayView2<'_, f64>, a: &[f64], out: &mut [f64]) {
    let (n, r) = f.dim();
    let n = n.min(out.len());
    if let Some(data) = f.t().to_slice() {
        for (k, &ak) in a.iter().enumerate() {
            axpy(ak, &data[k * f.nrows()..k * f.nrows() + n], &mut out[..n]);
        }
    } else if let Some(data) = f.to_slice() {
        for (row, o) in data.chunks_exact(r.max(1)).zip(out.iter_mut()) {
            *o += row.iter().zip(a).map(|(x, y)| x * y).sum::<f64>();
        }
    } else {
        for (col, &ak) in f.columns().into_iter().zip(a) {
            out.iter_mut().zip(col).for_each(|(o, x)| *o += ak * x);
        }
    }
}

/// Runs `body` with a zeroed scratch slice of length `r` (on the stack for the usual small ranks).
#[inline]
fn with_scratch<T>(r: usize, body: impl FnOnce(&mut [f64]) -> T) -> T {
    const STACK: usize = 16;
    if r <= STACK { body(&mut [0.0; STACK][..r]) } else { body(&mut vec![0.0; r]) }
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
            if u.ncols() > n_features {
                return Err(Error::DimensionMismatch {
                    what: "low-rank covariance factor (rank at most the number of features)",
                    expected: n_features,
                    found: u.ncols(),
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
                return Err(Error::Layout { what: "low-rank diagonal" });
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

    /// The rank `r_i` of each factor (columns of `U_i`).
    pub fn ranks(&self) -> Vec<usize> {
        self.factors.iter().map(|f| f.ncols()).collect()
    }
}

impl Covariance for LowRank {
    fn bilinear(&self, i: usize, u: &[f64], v: &[f64]) -> f64 {
        let f = self.factors[i].view();
        // (Uᵀu)·(Uᵀv) + Σ_j d_j u_j v_j.
        let s = with_scratch(2 * f.ncols(), |scratch| {
            let (a, b) = scratch.split_at_mut(f.ncols());
            factor_t_dot(f, u, a);
            factor_t_dot(f, v, b);
            a.iter().zip(b.iter()).map(|(x, y)| x * y).sum::<f64>()
        });
        s + self.diagonal_row(i).map_or(0.0, |d| dot3(d, u, v))
    }

    fn quad_form(&self, i: usize, w: &[f64]) -> f64 {
        let f = self.factors[i].view();
        let s = with_scratch(f.ncols(), |a| {
            factor_t_dot(f, w, a);
            a.iter().map(|x| x * x).sum::<f64>()
        });
        s + self.diagonal_row(i).map_or(0.0, |d| dot3(d, w, w))
    }

    fn apply_add(&self, i: usize, alpha: f64, v: &[f64], out: &mut [f64]) {
        let f = self.factors[i].view();
        with_scratch(f.ncols(), |a| {
            factor_t_dot(f, v, a);
            a.iter_mut().for_each(|x| *x *= alpha);
            factor_axpy(f, a, out);
        });
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

    fn factor(&self, i: usize, _: usize) -> Option<Array2<f64>> {
        let diagonal: Vec<(usize, f64)> =
            self.diagonal_row(i).map_or(Vec::new(), |d| d.iter().copied().enumerate().collect());
        Some(super::factor_with_diagonal(self.factors[i].view(), &diagonal))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    /// Every layout gives the dense `Σ = U Uᵀ + diag(d)`'s values.
    #[test]
    fn layouts_agree_with_dense() {
        let u = array![[1.0, -2.0], [0.5, 0.25], [3.0, 1.0]];
        let d = array![[0.1, 0.0, 0.3]];
        let sigma = u.dot(&u.t()) + Array2::from_diag(&d.row(0));
        let (w, v) = ([0.3, -1.2, 0.7], [1.0, 2.0, -0.5]);
        let dense_bilinear: f64 = (0..3).map(|a| (0..3).map(|b| w[a] * sigma[[a, b]] * v[b]).sum::<f64>()).sum();
        let dense_apply: Vec<f64> = (0..3).map(|a| (0..3).map(|b| sigma[[a, b]] * v[b]).sum()).collect();
        let strided = {
            let wide = array![[1.0, 9.0, -2.0], [0.5, 9.0, 0.25], [3.0, 9.0, 1.0]];
            wide.slice(ndarray::s![.., ..;2]).to_owned()
        };
        for factor in [u.clone(), column_major(u.clone()), strided] {
            let c = LowRank { factors: vec![factor], diagonal: Some(d.clone()) };
            assert!((c.bilinear(0, &w, &v) - dense_bilinear).abs() < 1e-12);
            assert!((c.quad_form(0, &w) - c.bilinear(0, &w, &w)).abs() < 1e-12);
            let mut out = vec![1.0; 3];
            c.apply_add(0, 2.0, &v, &mut out);
            for (o, e) in out.iter().zip(&dense_apply) {
                assert!((o - (1.0 + 2.0 * e)).abs() < 1e-12);
            }
        }
        // A non-contiguous view (every other column) takes the generic path.
        let wide = array![[1.0, 9.0, -2.0], [0.5, 9.0, 0.25], [3.0, 9.0, 1.0]];
        let mut a = [0.0; 2];
        factor_t_dot(wide.slice(ndarray::s![.., ..;2]), &w, &mut a);
        assert!((a[0] - (0.3 - 0.6 + 2.1)).abs() < 1e-12);
    }

    #[test]
    fn rank_zero_is_the_diagonal() {
        let c = LowRank { factors: vec![Array2::zeros((2, 0))], diagonal: Some(array![[2.0, 3.0]]) };
        assert_eq!(c.quad_form(0, &[1.0, 1.0]), 5.0);
        assert_eq!(c.ranks(), [0]);
    }
}
