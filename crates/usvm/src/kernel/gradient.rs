//! Sums of kernel-gradient Gram matrices, the robust regulariser of R-SVM+ (DESIGN 2.6, paper 004 §3.2):
//!
//! ```text
//! S = Σ_s H_s,   H_s[i, j] = ⟨∇_{x_s} k(x_i, x_s), ∇_{x_s} k(x_j, x_s)⟩,   s = 1..n over the training rows
//! ```
//!
//! so that `(α∘y)ᵀ S (α∘y) = Σ_s ‖∇f(x_s)‖²` for `f = Σ_i α_i y_i k(x_i, ·)`.
//!
//! Closed forms, never forming the `n` matrices `H_s` (`K` the Gram matrix, `G = XXᵀ`, `D = diag ‖x_s‖²`):
//! - Gaussian `exp(−γ‖x − z‖²)`: `∇_{x_s} k(x_i, x_s) = 2γ (x_i − x_s) k_is`, and
//!   `S = 4γ² [K D K − K(K∘G) − (K∘G)K + G∘(KK)]`. With `R = K∘(D1ᵀ − 2G)` this is
//!   `S = 4γ² [sym(K R) + G∘(KK)]`, `sym(M) = ½(M + Mᵀ)`: one `n × n` by `n × 2n` product,
//!   `O(n² n_x + n³)` instead of `O(n³ n_x)`. `S` is translation invariant, so dense rows are centred
//!   first (smaller `‖x‖²`, less cancellation).
//! - linear `xᵀz`: `∇ = x_i`, `S = n G`;
//! - polynomial `(γxᵀz + c₀)^d`: `∇ = dγ (γ G_is + c₀)^{d−1} x_i`, `S = d²γ² G∘(K'K')`,
//!   `K'_is = (γ G_is + c₀)^{d−1}`.
//!
//! ```
//! use ndarray::array;
//! use usvm::{Features, kernel::{Kernel, gradient}};
//! let x = Features::dense(array![[0.0, 1.0], [1.0, 0.5], [-1.0, 0.0]]);
//! let k = Kernel::Rbf { gamma: 0.7 };
//! let fast = gradient::gradient_gram_sum(&k, &x).unwrap();
//! let naive = gradient::gradient_gram_sum_naive(&k, &x);
//! assert!((&fast - &naive).iter().all(|d| d.abs() < 1e-12));
//! ```

use ndarray::{Array2, Axis, s};
use rayon::prelude::*;

use super::Kernel;
use crate::data::Features;
use crate::error::Result;

/// Rows per parallel block of the products.
const BLOCK: usize = 128;

/// `Σ_s H_s` by the closed forms of the module docs; [`crate::Error::TooLarge`] when the five `n × n`
/// matrices it holds at once do not fit in memory.
///
/// # Panics
/// For [`Kernel::Precomputed`] (no gradient in `x`).
pub fn gradient_gram_sum(kernel: &Kernel, x: &Features) -> Result<Array2<f64>> {
    let n = x.n_samples();
    crate::memory::reserve("the gradient Gram sum of R-SVM+", super::GRAM_REMEDY, &[5, n, n])?;
    Ok(match *kernel {
        Kernel::Linear => Kernel::Linear.gram(x)? * n as f64,
        Kernel::Polynomial { gamma, coef0, degree } => {
            let g = Kernel::Linear.gram(x)?;
            let kp = g.mapv(|v| (gamma * v + coef0).powi(degree as i32 - 1));
            let kk = product(&kp, &kp);
            let scale = (degree as f64 * gamma).powi(2);
            g * kk * scale
        }
        Kernel::Rbf { gamma } => {
            let centred;
            let x = match x {
                Features::Dense(m) => {
                    let m = m.view();
                    let mean = m.mean_axis(Axis(0)).expect("non-empty");
                    centred = Features::dense(&m - &mean);
                    &centred
                }
                Features::Sparse(_) => x,
            };
            let g = Kernel::Linear.gram(x)?;
            let k = kernel.gram(x)?;
            let d: Vec<f64> = (0..n).map(|i| g[[i, i]]).collect();
            // R[s, i] = K[s, i] (D_s − 2 G[s, i]).
            let r = Array2::from_shape_fn((n, n), |(s, i)| k[[s, i]] * (d[s] - 2.0 * g[[s, i]]));
            // T = K R + G∘(K K), by row blocks; then S = 4γ² sym(T) (G∘KK is symmetric).
            let kr = product(&k, &r);
            let kk = product(&k, &k);
            let mut t = kr + g * kk;
            let scale = 4.0 * gamma * gamma;
            for i in 0..n {
                for j in 0..i {
                    let v = 0.5 * scale * (t[[i, j]] + t[[j, i]]);
                    t[[i, j]] = v;
                    t[[j, i]] = v;
                }
                t[[i, i]] *= scale;
            }
            t
        }
        Kernel::Precomputed => panic!("a precomputed kernel has no gradient"),
    })
}

/// `a b` for row-major `n × n` matrices, parallel over row blocks of `a` (faer's product per block;
/// same bits whatever the thread count).
fn product(a: &Array2<f64>, b: &Array2<f64>) -> Array2<f64> {
    let (n, m) = (a.nrows(), b.ncols());
    let mut out = Array2::zeros((n, m));
    let blocks: Vec<_> = out.axis_chunks_iter_mut(Axis(0), BLOCK).collect();
    blocks.into_par_iter().enumerate().for_each(|(blk, mut rows)| {
        let start = blk * BLOCK;
        let block = a.slice(s![start..start + rows.nrows(), ..]);
        crate::linalg::mul_into(block, b.view(), &mut rows);
    });
    out
}

/// `∇_z k(x, z)` at `z` (the gradient in the second argument).
///
/// # Panics
/// For [`Kernel::Precomputed`] (no gradient in `x`).
pub fn kernel_gradient(kernel: &Kernel, x: &[f64], z: &[f64]) -> Vec<f64> {
    match *kernel {
        Kernel::Linear => x.to_vec(),
        Kernel::Rbf { gamma } => {
            let k = kernel.eval(x, z);
            x.iter().zip(z).map(|(a, b)| 2.0 * gamma * (a - b) * k).collect()
        }
        Kernel::Polynomial { gamma, coef0, degree } => {
            let xz: f64 = x.iter().zip(z).map(|(a, b)| a * b).sum();
            let f = degree as f64 * gamma * (gamma * xz + coef0).powi(degree as i32 - 1);
            x.iter().map(|a| f * a).collect()
        }
        Kernel::Precomputed => panic!("a precomputed kernel has no gradient"),
    }
}

/// `Σ_s H_s` by its definition, forming every `H_s` from the gradients (`O(n³ n_x)`): the reference for
/// tests and small problems.
pub fn gradient_gram_sum_naive(kernel: &Kernel, x: &Features) -> Array2<f64> {
    let n = x.n_samples();
    let rows: Vec<Vec<f64>> = (0..n).map(|i| x.row_dense(i)).collect();
    let mut sum = Array2::zeros((n, n));
    for xs in &rows {
        let grads: Vec<Vec<f64>> = rows.iter().map(|xi| kernel_gradient(kernel, xi, xs)).collect();
        for i in 0..n {
            for j in 0..n {
                sum[[i, j]] += grads[i].iter().zip(&grads[j]).map(|(a, b)| a * b).sum::<f64>();
            }
        }
    }
    sum
}
