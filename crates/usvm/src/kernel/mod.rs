//! Kernels `k(x, z)` and their Gram matrices.
//!
//! - linear `xᵀz`
//! - RBF `exp(-γ‖x - z‖²)`, computed as `exp(-γ(‖x‖² + ‖z‖² - 2xᵀz))` clamped at distance 0
//! - polynomial `(γ xᵀz + c₀)^d`
//! - precomputed (LIBSVM's convention): a row `x` holds kernel values, `x[j] = K(x, x_j)` for the
//!   training example with serial number `j ≥ 1`, and a training row also holds its own serial number in
//!   column 0; `k(x, z) = x[z[0]]`. Such rows are not vectors: only [`Kernel::eval`], [`Kernel::gram`],
//!   [`Kernel::cross_gram`] and [`Kernel::column_into`] apply, not [`Kernel::from_dot`].
//!
//! Every kernel is a function of `(xᵀz, ‖x‖², ‖z‖²)`, so a Gram block is one matrix product of the two
//! sets of rows followed by an elementwise map. Dense blocks use faer's matrix product; sparse rows are
//! scattered into a dense scratch row. Rows are processed in parallel, in fixed blocks (same bits whatever
//! the thread count). A Gram matrix larger than the memory available is an error
//! ([`crate::Error::TooLarge`]), not an abort.
//!
//! ```
//! use ndarray::array;
//! use usvm::{Features, kernel::Kernel};
//! let x = Features::dense(array![[0.0, 1.0], [1.0, 1.0]]);
//! let k = Kernel::Rbf { gamma: 0.5 }.gram(&x).unwrap();
//! assert!((k[[0, 1]] - (-0.5f64).exp()).abs() < 1e-15 && k[[0, 0]] == 1.0);
//! ```

pub mod feature_map;
pub mod gradient;
pub mod similarity;

use ndarray::{Array2, ArrayView2, Axis, s};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::data::{Features, dot};
use crate::error::{Result, invalid};

pub mod cache;

/// What to do when a kernel matrix does not fit in memory.
pub(crate) const GRAM_REMEDY: &str =
    "use fewer rows, or a kernel approximation (Nyström or random Fourier features) with a linear solver";

/// A positive-definite kernel; in model files `{"type": "rbf", "gamma": ...}` etc.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Kernel {
    /// `xᵀz`.
    Linear,
    /// `exp(-γ‖x - z‖²)`.
    Rbf {
        /// `γ > 0`.
        gamma: f64,
    },
    /// `(γ xᵀz + coef0)^degree`.
    Polynomial {
        /// `γ > 0`.
        gamma: f64,
        /// The constant `coef0`.
        coef0: f64,
        /// The degree (at least 1).
        degree: u32,
    },
    /// The rows are kernel values with the serial number in column 0 (see the module docs).
    Precomputed,
}

/// Rows per parallel block of a Gram computation.
const BLOCK: usize = 128;

impl Kernel {
    /// The kernel's name in files (`linear`, `rbf`, `polynomial`, `precomputed`).
    pub fn name(&self) -> &'static str {
        match self {
            Kernel::Linear => "linear",
            Kernel::Rbf { .. } => "rbf",
            Kernel::Polynomial { .. } => "polynomial",
            Kernel::Precomputed => "precomputed",
        }
    }

    /// Checks `γ > 0`, finite `c₀`, `d ≥ 1`.
    pub fn validate(&self) -> Result<()> {
        match *self {
            Kernel::Linear | Kernel::Precomputed => Ok(()),
            Kernel::Rbf { gamma } | Kernel::Polynomial { gamma, .. } if !(gamma > 0.0 && gamma.is_finite()) => {
                Err(invalid("gamma", gamma, "must be positive and finite"))
            }
            Kernel::Polynomial { coef0, .. } if !coef0.is_finite() => Err(invalid("coef0", coef0, "must be finite")),
            Kernel::Polynomial { degree: 0, .. } => Err(invalid("degree", 0, "must be at least 1")),
            _ => Ok(()),
        }
    }

    /// `k` from `xᵀz`, `‖x‖²`, `‖z‖²`.
    ///
    /// # Panics
    /// For [`Kernel::Precomputed`], which is not a function of dot products.
    #[inline]
    pub fn from_dot(&self, xz: f64, xx: f64, zz: f64) -> f64 {
        match *self {
            Kernel::Linear => xz,
            Kernel::Rbf { gamma } => (-gamma * (xx + zz - 2.0 * xz).max(0.0)).exp(),
            Kernel::Polynomial { gamma, coef0, degree } => (gamma * xz + coef0).powi(degree as i32),
            Kernel::Precomputed => panic!("a precomputed kernel is not a function of dot products"),
        }
    }

    /// `k(x, z)` for two dense vectors of equal length.
    pub fn eval(&self, x: &[f64], z: &[f64]) -> f64 {
        match *self {
            Kernel::Rbf { gamma } => {
                let d2: f64 = x.iter().zip(z).map(|(a, b)| (a - b) * (a - b)).sum();
                (-gamma * d2).exp()
            }
            Kernel::Precomputed => precomputed(x, z.first().copied().unwrap_or(0.0)),
            _ => self.from_dot(dot(x, z), dot(x, x), dot(z, z)),
        }
    }

    /// The gradient in the first argument, `∇_x k(x, z)`, written to `out` (dense vectors of equal length):
    /// linear `z`; RBF `-2γ k(x, z) (x - z)`; polynomial `d γ (γ xᵀz + c₀)^(d-1) z`.
    ///
    /// # Panics
    /// For [`Kernel::Precomputed`], which is not a function of the inputs.
    pub fn gradient_into(&self, x: &[f64], z: &[f64], out: &mut [f64]) {
        match *self {
            Kernel::Linear => out.copy_from_slice(z),
            Kernel::Rbf { gamma } => {
                let k = self.eval(x, z);
                for ((o, a), b) in out.iter_mut().zip(x).zip(z) {
                    *o = -2.0 * gamma * k * (a - b);
                }
            }
            Kernel::Precomputed => panic!("a precomputed kernel has no gradient"),
            Kernel::Polynomial { gamma, coef0, degree } => {
                let scale = degree as f64 * gamma * (gamma * dot(x, z) + coef0).powi(degree as i32 - 1);
                for (o, b) in out.iter_mut().zip(z) {
                    *o = scale * b;
                }
            }
        }
    }

    /// `K[i, j] = k(x_i, x_j)` over the rows of `x`.
    pub fn gram(&self, x: &Features) -> Result<Array2<f64>> {
        self.cross_gram(x, x)
    }

    /// `K[i, j] = k(a_i, b_j)`. Rows with fewer features than the other side are read as zero-padded.
    /// [`crate::Error::TooLarge`] when the `n_a × n_b` matrix exceeds the memory available.
    pub fn cross_gram(&self, a: &Features, b: &Features) -> Result<Array2<f64>> {
        let (na, nb) = (a.n_samples(), b.n_samples());
        crate::memory::reserve("a kernel matrix", GRAM_REMEDY, &[na, nb])?;
        if *self == Kernel::Precomputed {
            let serials: Vec<f64> = (0..nb).map(|j| serial(b, j)).collect();
            let mut out = Array2::zeros((na, nb));
            let mut scratch = vec![0.0; a.n_features()];
            for (i, mut row) in out.rows_mut().into_iter().enumerate() {
                scratch.iter_mut().for_each(|v| *v = 0.0);
                a.row_axpy(i, 1.0, &mut scratch);
                row.iter_mut().zip(&serials).for_each(|(v, &s)| *v = precomputed(&scratch, s));
            }
            return Ok(out);
        }
        let (a_norms, b_norms) = (squared_norms(a), squared_norms(b));
        let mut out = Array2::zeros((na, nb));
        let b_dense = match b {
            Features::Dense(m) => Some(m.view()),
            Features::Sparse(_) => None,
        };
        let blocks: Vec<_> = out.axis_chunks_iter_mut(Axis(0), BLOCK).collect();
        blocks.into_par_iter().enumerate().for_each(|(blk, mut rows)| {
            let start = blk * BLOCK;
            match (a, b_dense) {
                (Features::Dense(am), Some(bm)) if am.ncols() == bm.ncols() => {
                    let block = am.view().slice_move(s![start..start + rows.nrows(), ..]);
                    dense_dots(block, bm, &mut rows);
                }
                _ => {
                    let width = a.n_features().max(b.n_features());
                    let mut scratch = vec![0.0; width];
                    for (r, mut row) in rows.rows_mut().into_iter().enumerate() {
                        scratch.iter_mut().for_each(|v| *v = 0.0);
                        a.row_axpy(start + r, 1.0, &mut scratch);
                        for (j, v) in row.iter_mut().enumerate() {
                            *v = b.row_dot(j, &scratch);
                        }
                    }
                }
            }
            for (r, mut row) in rows.rows_mut().into_iter().enumerate() {
                let xx = a_norms[start + r];
                for (v, &zz) in row.iter_mut().zip(&b_norms) {
                    *v = self.from_dot(*v, xx, zz);
                }
            }
        });
        Ok(out)
    }

    /// `k(x_j, x_i)` for every row `j` of `x`, into `out` (one Gram column, for solvers that cache columns).
    pub fn column_into(&self, x: &Features, norms: &[f64], i: usize, out: &mut [f64]) {
        if *self == Kernel::Precomputed {
            let mut row = vec![0.0; x.n_features()];
            for (j, v) in out.iter_mut().enumerate() {
                row.iter_mut().for_each(|r| *r = 0.0);
                x.row_axpy(j, 1.0, &mut row);
                *v = precomputed(&row, serial(x, i));
            }
            return;
        }
        let xi = x.row_dense(i);
        let xx = norms[i];
        out.par_chunks_mut(1024).enumerate().for_each(|(blk, chunk)| {
            for (r, v) in chunk.iter_mut().enumerate() {
                let j = blk * 1024 + r;
                *v = self.from_dot(x.row_dot(j, &xi), norms[j], xx);
            }
        });
    }
}

/// The serial number in column 0 of row `i` (0 when absent).
pub fn serial(x: &Features, i: usize) -> f64 {
    match x {
        Features::Dense(m) => m.row(i).first().copied().unwrap_or(0.0),
        Features::Sparse(m) => {
            let (idx, val) = m.row(i);
            if idx.first() == Some(&0) { val[0] } else { 0.0 }
        }
    }
}

/// `row[s]` for a serial number `s`, 0 when `s` is not an index of `row` (serials are validated at fit).
#[inline]
fn precomputed(row: &[f64], s: f64) -> f64 {
    if s >= 1.0 && s.fract() == 0.0 { row.get(s as usize).copied().unwrap_or(0.0) } else { 0.0 }
}

/// `‖x_i‖²` for every row.
pub fn squared_norms(x: &Features) -> Vec<f64> {
    match x {
        Features::Dense(m) => (0..m.nrows()).map(|i| m.row_norm2(i)).collect(),
        Features::Sparse(m) => (0..m.n_rows()).map(|i| m.row(i).1.iter().map(|v| v * v).sum()).collect(),
    }
}

/// `out = a bᵀ` (sequential: the caller parallelises over blocks).
fn dense_dots(a: ArrayView2<f64>, b: ArrayView2<f64>, out: &mut ndarray::ArrayViewMut2<f64>) {
    crate::linalg::mul_transposed_into(a, b, out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::CsrMatrix;

    fn brute(k: &Kernel, a: &Array2<f64>, b: &Array2<f64>) -> Array2<f64> {
        Array2::from_shape_fn((a.nrows(), b.nrows()), |(i, j)| {
            k.eval(a.row(i).as_slice().unwrap(), b.row(j).as_slice().unwrap())
        })
    }

    #[test]
    fn gram_matches_pairwise_evaluation_dense_and_sparse() {
        let a = Array2::from_shape_fn((300, 5), |(i, j)| ((i * 7 + j * 3) % 11) as f64 * 0.3 - 1.0);
        let b = Array2::from_shape_fn((7, 5), |(i, j)| ((i * 5 + j) % 4) as f64 * 0.5 - 0.7);
        let sparse = |m: &Array2<f64>| {
            let rows: Vec<Vec<(usize, f64)>> = m
                .rows()
                .into_iter()
                .map(|r| r.iter().enumerate().filter(|(_, v)| **v != 0.0).map(|(j, v)| (j, *v)).collect())
                .collect();
            Features::Sparse(CsrMatrix::from_rows(m.ncols(), &rows).unwrap())
        };
        for k in [Kernel::Linear, Kernel::Rbf { gamma: 0.3 }, Kernel::Polynomial { gamma: 0.5, coef0: 1.0, degree: 3 }]
        {
            let want = brute(&k, &a, &b);
            for (fa, fb) in [
                (Features::dense(a.clone()), Features::dense(b.clone())),
                (sparse(&a), Features::dense(b.clone())),
                (Features::dense(a.clone()), sparse(&b)),
            ] {
                let got = k.cross_gram(&fa, &fb).unwrap();
                let err = (&got - &want).iter().fold(0.0f64, |m, v| m.max(v.abs()));
                assert!(err < 1e-12, "{k:?}: {err}");
            }
            let fa = Features::dense(a.clone());
            let norms = squared_norms(&fa);
            let mut col = vec![0.0; a.nrows()];
            k.column_into(&fa, &norms, 4, &mut col);
            let gram = k.gram(&fa).unwrap();
            assert!(col.iter().zip(gram.column(4)).all(|(x, y)| (x - y).abs() < 1e-12));
        }
    }

    #[test]
    fn gradients_match_central_differences() {
        let x = [0.3, -1.2, 0.7];
        let z = [-0.5, 0.4, 1.1];
        for k in [
            Kernel::Linear,
            Kernel::Rbf { gamma: 0.4 },
            Kernel::Polynomial { gamma: 0.5, coef0: 1.0, degree: 3 },
            Kernel::Polynomial { gamma: 1.0, coef0: 0.0, degree: 2 },
            Kernel::Polynomial { gamma: 0.7, coef0: -0.3, degree: 1 },
        ] {
            let mut g = [0.0; 3];
            k.gradient_into(&x, &z, &mut g);
            for j in 0..3 {
                let h = 1e-5;
                let (mut xp, mut xm) = (x, x);
                xp[j] += h;
                xm[j] -= h;
                let fd = (k.eval(&xp, &z) - k.eval(&xm, &z)) / (2.0 * h);
                assert!((fd - g[j]).abs() <= 1e-8 * g[j].abs().max(1.0), "{k:?} coordinate {j}: {fd} vs {}", g[j]);
            }
        }
    }

    #[test]
    fn validation_rejects_bad_parameters() {
        assert!(Kernel::Rbf { gamma: 0.0 }.validate().is_err());
        assert!(Kernel::Rbf { gamma: f64::NAN }.validate().is_err());
        assert!(Kernel::Polynomial { gamma: 1.0, coef0: 0.0, degree: 0 }.validate().is_err());
        assert!(Kernel::Polynomial { gamma: 1.0, coef0: f64::INFINITY, degree: 2 }.validate().is_err());
        assert!(Kernel::Polynomial { gamma: 1.0, coef0: 0.0, degree: 2 }.validate().is_ok());
        let k: Kernel = serde_json::from_str(r#"{"type":"rbf","gamma":0.25}"#).unwrap();
        assert_eq!(k, Kernel::Rbf { gamma: 0.25 });
        assert_eq!(Kernel::Linear.eval(&[1.0, 2.0], &[3.0, 4.0]), 11.0);
    }
}
