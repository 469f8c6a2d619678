//! Explicit finite-dimensional feature maps `φ` with `φ(x)ᵀφ(z) ≈ k(x, z)`, so that a kernel method becomes a
//! linear one on the rows `φ(x_i)`.
//!
//! - **Pivoted Cholesky** ([`KernelFactor`]): `K ≈ L Lᵀ`, `L` of shape `ℓ × r`, greedily pivoting on the
//!   largest residual diagonal until it is at most `tol · max_i K_ii`. The pivots `P` act as landmarks:
//!   `L = K[:, P] L_P⁻ᵀ` with `L_P` the (lower-triangular) pivot rows of `L`, so a weight vector `w` on the
//!   rows of `L` is the kernel expansion `α_P = L_P⁻ᵀ w` on the pivots, with `αᵀKα = ‖w‖²` (to the residual).
//!   Cost `O(ℓ r² + ℓ r n)`; `r` is the numerical rank (at most `n` for the linear kernel). With a tiny
//!   tolerance this is the exact kernel problem, restricted to the span where `K` is not negligible.
//! - **Nyström** ([`Nystroem`]): `m` landmarks `z_j` drawn uniformly without replacement (seeded),
//!   `φ(x) = Λ^{-1/2} Uᵀ k_m(x)` with `K_mm = U Λ Uᵀ`, eigenvalues below `10⁻¹² λ_max` clipped (their
//!   directions dropped). Then `φ(x)ᵀφ(z) = k_m(x)ᵀ K_mm⁺ k_m(z)`, exact on the landmarks; with `m = ℓ`
//!   it reproduces `K` itself. A weight vector `w` is the expansion `α_m = U Λ^{-1/2} w` on the landmarks.
//!   Cost `O(ℓ m n + m³)`; any kernel.
//! - **Random Fourier features** ([`RandomFourier`], Rahimi & Recht 2007): for the RBF kernel
//!   `exp(-γ‖x - z‖²)`, `φ_j(x) = √(2/D) cos(ω_jᵀx + β_j)`, `ω_j ~ N(0, 2γ I)`, `β_j ~ U[0, 2π)` (seeded);
//!   `E[φ(x)ᵀφ(z)] = k(x, z)` with error `O(1/√D)` uniformly. Cost `O(ℓ D n)`, independent of the data.
//!
//! **Which to use.** Exact (pivoted Cholesky) while `ℓ` is up to ~10,000 (`ℓ²` doubles of memory and
//! `O(ℓ³)` matrix-product flops when the rank is large: 4–5 s for ℓ = 5,000 at full rank) or the kernel's
//! numerical rank is small (smooth RBF, linear, low-degree polynomial kernels): it is the exact solution. Nyström for large `ℓ`
//! with any kernel: its error shrinks with the spectrum of `K` beyond the `m`-th eigenvalue, so a few hundred
//! landmarks usually suffice, and the model is a kernel expansion over the landmarks. Random Fourier
//! features only for the RBF kernel, when no training set should be kept (the map does not depend on the
//! data) or `ℓ` is huge; they need more components than Nyström for the same accuracy (error `~1/√D`).
//!
//! ```
//! use ndarray::array;
//! use usvm::{Features, Kernel};
//! use usvm::kernel::feature_map::Nystroem;
//! let x = Features::dense(array![[0.0, 1.0], [1.0, 1.0], [2.0, 0.5]]);
//! let kernel = Kernel::Rbf { gamma: 0.5 };
//! let map = Nystroem::fit(kernel, &x, 3, 0).unwrap(); // m = ℓ: exact
//! let phi = map.transform(&x).unwrap();
//! let k01 = phi.row(0).dot(&phi.row(1));
//! assert!((k01 - kernel.eval(&[0.0, 1.0], &[1.0, 1.0])).abs() < 1e-10);
//! ```

use ndarray::{Array2, Axis};
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal, Uniform};
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::{Kernel, squared_norms};
use crate::data::{Features, axpy};
use crate::error::{Error, Result, invalid};

/// Eigenvalues of `K_mm` below this fraction of the largest are clipped (Nyström).
pub const NYSTROEM_CLIP: f64 = 1e-12;

/// Rows per parallel block of the pivoted-Cholesky column update.
const ROW_BLOCK: usize = 512;

/// A pivoted-Cholesky factor `K ≈ L Lᵀ` of a training Gram matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelFactor {
    /// The pivot examples, in pivoting order.
    pub pivots: Vec<usize>,
    /// `ℓ × r`; row `pivots[k]` is zero beyond column `k`.
    pub l: Array2<f64>,
    /// The largest residual diagonal `max_i (K - LLᵀ)_ii` at the end.
    pub residual: f64,
}

impl KernelFactor {
    /// Factors the Gram matrix of `x` until the largest residual diagonal is at most `tol · max_i K_ii`
    /// (or the rank reaches `max_rank`).
    ///
    /// Two phases with the same pivoting rule (same result up to rounding): while the rank is small, only
    /// the `r` pivot columns of `K` are computed (`O(ℓ r n)` kernel evaluations, `O(ℓ r²)` memory-bound
    /// updates). Once the rank passes `ℓ/8` (and `ℓ ≤` [`DENSE_FACTOR_MAX`]) the rank is evidently large, and
    /// the factorisation continues on the whole residual matrix `K[R, R] - L_R L_Rᵀ` of the remaining rows
    /// `R`, blocked like LAPACK's `dpstrf`: [`FACTOR_PANEL`] pivots at a time, each panel's update of the
    /// trailing matrix one (lower-triangular) matrix product. That costs `O(ℓ³/3)` flops at matrix-product
    /// speed instead of `O(ℓ r²)` at memory speed, and `ℓ²` doubles of memory.
    pub fn new(kernel: Kernel, x: &Features, tol: f64, max_rank: usize) -> Result<KernelFactor> {
        Self::with_dense_switch(kernel, x, tol, max_rank, true)
    }

    /// [`KernelFactor::new`] with the switch to the blocked dense phase on or off (off: column by column
    /// throughout, the reference implementation).
    pub fn with_dense_switch(
        kernel: Kernel,
        x: &Features,
        tol: f64,
        max_rank: usize,
        dense: bool,
    ) -> Result<KernelFactor> {
        kernel.validate()?;
        if !(tol >= 0.0 && tol.is_finite()) {
            return Err(invalid("factor tolerance", tol, "must be finite and non-negative"));
        }
        let l = x.n_samples();
        if l == 0 {
            return Err(Error::Empty("no examples to factor"));
        }
        let norms = squared_norms(x);
        let mut diag: Vec<f64> = (0..l)
            .map(|i| {
                let row = x.row_dense(i);
                kernel.eval(&row, &row)
            })
            .collect();
        let scale = diag.iter().fold(0.0f64, |m, &v| m.max(v));
        let stop = tol * scale;
        let cap = max_rank.min(l);
        let switch = if dense && l <= DENSE_FACTOR_MAX { (l / 8).max(FACTOR_PANEL) } else { usize::MAX };
        let mut is_pivot = vec![false; l];
        let mut pivots = Vec::new();
        let mut columns: Vec<Vec<f64>> = Vec::new();
        let mut residual = scale;
        let mut finished = false;
        while pivots.len() < cap {
            if pivots.len() >= switch {
                break;
            }
            let (p, best) = (0..l).filter(|&i| !is_pivot[i]).fold((usize::MAX, f64::NEG_INFINITY), |(bi, bv), i| {
                if diag[i] > bv { (i, diag[i]) } else { (bi, bv) }
            });
            residual = best.max(0.0);
            if p == usize::MAX || !(best > stop) || best <= 0.0 {
                finished = true;
                break;
            }
            // The factor grows by column; check the memory each time it doubles (`r` more columns of `ℓ`).
            if columns.len().is_power_of_two() {
                crate::memory::reserve("the kernel factor's columns", super::GRAM_REMEDY, &[columns.len(), l])?;
            }
            let mut col = vec![0.0; l];
            kernel.column_into(x, &norms, p, &mut col);
            let coeffs: Vec<f64> = columns.iter().map(|c| c[p]).collect();
            let pivot = best.sqrt();
            col.par_chunks_mut(ROW_BLOCK).enumerate().for_each(|(blk, chunk)| {
                let start = blk * ROW_BLOCK;
                for (c, &a) in columns.iter().zip(&coeffs) {
                    if a != 0.0 {
                        axpy(-a, &c[start..start + chunk.len()], chunk);
                    }
                }
                chunk.iter_mut().for_each(|v| *v /= pivot);
            });
            for &q in &pivots {
                col[q] = 0.0;
            }
            col[p] = pivot;
            for (d, v) in diag.iter_mut().zip(&col) {
                *d -= v * v;
            }
            diag[p] = 0.0;
            is_pivot[p] = true;
            pivots.push(p);
            columns.push(col);
        }
        if !finished && pivots.len() < cap {
            residual = dense_phase(kernel, x, stop, cap, &mut pivots, &mut columns, &is_pivot, &diag)?;
        } else if pivots.len() == cap {
            residual = (0..l).filter(|&i| !is_pivot[i]).map(|i| diag[i]).fold(0.0, f64::max);
        }
        let r = columns.len();
        crate::memory::reserve("the kernel factor", super::GRAM_REMEDY, &[l, r])?;
        let mut flat = Vec::with_capacity(l * r);
        for c in columns {
            flat.extend(c);
        }
        let lmat = Array2::from_shape_vec((r, l), flat).expect("r columns of length ℓ").reversed_axes();
        let lmat = lmat.as_standard_layout().into_owned();
        Ok(KernelFactor { pivots, l: lmat, residual })
    }

    /// The number of columns of the factor.
    pub fn rank(&self) -> usize {
        self.pivots.len()
    }

    /// `L_P`: the pivot rows of `L` in pivoting order (`r × r`, lower triangular).
    pub fn pivot_block(&self) -> Array2<f64> {
        self.l.select(Axis(0), &self.pivots)
    }

    /// `α_P = L_P⁻ᵀ w`: the coefficients on the pivots of the function whose values on the training rows
    /// are `L w`.
    pub fn pivot_coefficients(&self, w: &[f64]) -> Vec<f64> {
        solve_pivot_block(&self.pivot_block(), w)
    }
}

/// `L_P⁻ᵀ w` for the lower-triangular pivot block `L_P` ([`KernelFactor::pivot_block`]), by back substitution
/// on the rows of `L_P` (contiguous in memory).
pub fn solve_pivot_block(lp: &Array2<f64>, w: &[f64]) -> Vec<f64> {
    let r = lp.nrows();
    let mut a = vec![0.0; r];
    // (L_Pᵀ a)_k = Σ_{j ≥ k} L_P[j, k] a_j = w_k, solved for j = r-1, ..., 0; acc_k collects Σ_{j > k}.
    let mut acc = vec![0.0; r];
    for j in (0..r).rev() {
        let row = lp.row(j);
        let row = row.as_slice().expect("standard layout");
        a[j] = (w[j] - acc[j]) / row[j];
        axpy(a[j], &row[..j], &mut acc[..j]);
    }
    a
}

/// Rank past which [`KernelFactor::new`] switches to the blocked dense phase applies only up to this many
/// examples (`ℓ²` doubles: 2 GiB).
pub const DENSE_FACTOR_MAX: usize = 16_384;

/// Pivots per panel of the blocked dense phase.
pub const FACTOR_PANEL: usize = 64;

/// Columns per parallel task of the trailing update.
const UPDATE_COLUMNS: usize = 256;

/// The blocked phase of the pivoted Cholesky factorisation on the explicit residual matrix of the rows not
/// yet pivoted. Appends to `pivots` and `columns` (length-ℓ columns of `L`); returns the final residual, or
/// [`Error::TooLarge`] when the residual matrix does not fit in memory.
#[allow(clippy::too_many_arguments)]
fn dense_phase(
    kernel: Kernel,
    x: &Features,
    stop: f64,
    cap: usize,
    pivots: &mut Vec<usize>,
    columns: &mut Vec<Vec<f64>>,
    is_pivot: &[bool],
    diag: &[f64],
) -> Result<f64> {
    let l = x.n_samples();
    // `rem[i]`: the training row of local index i; `a`: the residual, column-major m × m, lower half used.
    let mut rem: Vec<usize> = (0..l).filter(|&i| !is_pivot[i]).collect();
    let mut m = rem.len();
    // The residual matrix (m²) and the columns still to come (at most `cap - r` of length ℓ).
    let held = m * m + (cap - pivots.len()) * l;
    crate::memory::reserve("the kernel factor's dense phase", super::GRAM_REMEDY, &[held])?;
    let (mut a, _) = kernel.gram(&x.select_rows(&rem))?.into_raw_vec_and_offset();
    if !columns.is_empty() {
        let k = columns.len();
        let mut lr = vec![0.0; m * k];
        for (j, c) in columns.iter().enumerate() {
            for (i, &g) in rem.iter().enumerate() {
                lr[j * m + i] = c[g];
            }
        }
        trailing_update(&mut a, m, &lr, k);
    }
    let mut d: Vec<f64> = rem.iter().map(|&i| diag[i]).collect();
    loop {
        if pivots.len() >= cap || m == 0 {
            return Ok(d.iter().fold(0.0, |acc, &v| acc.max(v)));
        }
        let nb = FACTOR_PANEL.min(cap - pivots.len()).min(m);
        let mut lb = vec![0.0; m * nb];
        let mut taken = vec![false; m];
        let mut jb = 0;
        let mut done = None;
        while jb < nb {
            let (p, best) = (0..m)
                .filter(|&i| !taken[i])
                .fold((usize::MAX, f64::NEG_INFINITY), |(bi, bv), i| if d[i] > bv { (i, d[i]) } else { (bi, bv) });
            if p == usize::MAX || !(best > stop) || best <= 0.0 {
                done = Some(best.max(0.0));
                break;
            }
            let pivot = best.sqrt();
            let (prev, rest) = lb.split_at_mut(jb * m);
            let col = &mut rest[..m];
            for (i, v) in col.iter_mut().enumerate() {
                *v = if i >= p { a[p * m + i] } else { a[i * m + p] };
            }
            for j in 0..jb {
                let c = &prev[j * m..(j + 1) * m];
                axpy(-c[p], c, col);
            }
            col.iter_mut().for_each(|v| *v /= pivot);
            for (i, v) in col.iter_mut().enumerate() {
                if taken[i] {
                    *v = 0.0;
                }
            }
            col[p] = pivot;
            for (di, v) in d.iter_mut().zip(col.iter()) {
                *di -= v * v;
            }
            d[p] = 0.0;
            taken[p] = true;
            let mut global = vec![0.0; l];
            for (&g, &v) in rem.iter().zip(col.iter()) {
                global[g] = v;
            }
            pivots.push(rem[p]);
            columns.push(global);
            jb += 1;
        }
        if let Some(residual) = done {
            return Ok(residual);
        }
        // Drop the panel's pivots: compact `a` (lower half) in place, then the panel rows, `d` and `rem`.
        let keep: Vec<usize> = (0..m).filter(|&i| !taken[i]).collect();
        let m2 = keep.len();
        for (b, &kb) in keep.iter().enumerate() {
            for (q, &ka) in keep.iter().enumerate().skip(b) {
                // New position b·m2 + q never exceeds the old kb·m + ka, and both increase: reads precede
                // overwrites.
                a[b * m2 + q] = a[kb * m + ka];
            }
        }
        a.truncate(m2 * m2);
        let mut lb2 = vec![0.0; m2 * jb];
        for j in 0..jb {
            for (i, &k) in keep.iter().enumerate() {
                lb2[j * m2 + i] = lb[j * m + k];
            }
        }
        d = keep.iter().map(|&i| d[i]).collect();
        rem = keep.iter().map(|&i| rem[i]).collect();
        m = m2;
        trailing_update(&mut a, m, &lb2, jb);
    }
}

/// `A -= B Bᵀ` on the lower half of the column-major `m × m` matrix `a`, `B` column-major `m × k`, by
/// matrix products on column panels in parallel.
fn trailing_update(a: &mut [f64], m: usize, b: &[f64], k: usize) {
    crate::linalg::lower_rank_k_update(a, m, b, k, UPDATE_COLUMNS);
}

/// The Nyström feature map over `m` landmarks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Nystroem {
    /// The kernel the map approximates.
    pub kernel: Kernel,
    /// The landmark rows `z_j`.
    pub landmarks: Features<'static>,
    /// The training indices of the landmarks.
    pub indices: Vec<usize>,
    /// `U Λ^{-1/2}`, `m × k` (`k ≤ m` directions kept after clipping).
    pub projection: Array2<f64>,
}

impl Nystroem {
    /// Draws `min(components, ℓ)` landmarks from the rows of `x` with a seeded generator and factors `K_mm`.
    pub fn fit(kernel: Kernel, x: &Features, components: usize, seed: u64) -> Result<Nystroem> {
        kernel.validate()?;
        if components == 0 {
            return Err(invalid("components", 0, "must be at least 1"));
        }
        let l = x.n_samples();
        if l == 0 {
            return Err(Error::Empty("no examples for the Nyström landmarks"));
        }
        let m = components.min(l);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut indices = rand::seq::index::sample(&mut rng, l, m).into_vec();
        indices.sort_unstable();
        Self::with_landmarks(kernel, x, indices)
    }

    /// The map over the given training rows as landmarks.
    pub fn with_landmarks(kernel: Kernel, x: &Features, indices: Vec<usize>) -> Result<Nystroem> {
        let landmarks = x.select_rows(&indices);
        let kmm = kernel.gram(&landmarks)?;
        let (values, vectors) = crate::covariance::full_eigen(kmm.view())?;
        let top = values.first().copied().unwrap_or(0.0);
        let keep: Vec<usize> = (0..values.len()).filter(|&k| values[k] > NYSTROEM_CLIP * top && top > 0.0).collect();
        if keep.is_empty() {
            return Err(Error::Degenerate { what: "Nyström landmarks", detail: "their Gram matrix is zero".into() });
        }
        let projection =
            Array2::from_shape_fn((indices.len(), keep.len()), |(i, c)| vectors[[i, keep[c]]] / values[keep[c]].sqrt());
        Ok(Nystroem { kernel, landmarks, indices, projection })
    }

    /// Feature-space dimension `k`.
    pub fn dim(&self) -> usize {
        self.projection.ncols()
    }

    /// `φ(x_i)` for every row: `k_m(x_i)ᵀ U Λ^{-1/2}`.
    pub fn transform(&self, x: &Features) -> Result<Array2<f64>> {
        check_width(x, self.landmarks.n_features())?;
        Ok(self.kernel.cross_gram(x, &self.landmarks)?.dot(&self.projection))
    }

    /// The expansion coefficients on the landmarks of the feature-space weight vector `w`: `U Λ^{-1/2} w`.
    pub fn landmark_coefficients(&self, w: &[f64]) -> Vec<f64> {
        self.projection.dot(&ndarray::ArrayView1::from(w)).to_vec()
    }
}

/// Random Fourier features for the RBF kernel `exp(-γ‖x - z‖²)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RandomFourier {
    /// `γ` of the RBF kernel the map approximates.
    pub gamma: f64,
    /// `ω_j`, one row each (`D × n`).
    pub omega: Array2<f64>,
    /// `β_j ∈ [0, 2π)`.
    pub offset: Vec<f64>,
}

impl RandomFourier {
    /// Draws `components` frequencies for inputs of `n_features` with a seeded generator.
    pub fn new(kernel: Kernel, n_features: usize, components: usize, seed: u64) -> Result<RandomFourier> {
        kernel.validate()?;
        let Kernel::Rbf { gamma } = kernel else {
            return Err(invalid("approximation", "fourier", "random Fourier features approximate the RBF kernel only"));
        };
        if components == 0 {
            return Err(invalid("components", 0, "must be at least 1"));
        }
        if n_features == 0 {
            return Err(Error::Empty("no features"));
        }
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let sd = (2.0 * gamma).sqrt();
        let omega = Array2::from_shape_simple_fn((components, n_features), || {
            let z: f64 = StandardNormal.sample(&mut rng);
            sd * z
        });
        let uniform = Uniform::new(0.0, 2.0 * std::f64::consts::PI).expect("valid range");
        let offset = (0..components).map(|_| uniform.sample(&mut rng)).collect();
        Ok(RandomFourier { gamma, omega, offset })
    }

    /// The map's output dimension.
    pub fn dim(&self) -> usize {
        self.omega.nrows()
    }

    /// `φ(x_i) = √(2/D) cos(Ω x_i + β)` for every row.
    pub fn transform(&self, x: &Features) -> Result<Array2<f64>> {
        check_width(x, self.omega.ncols())?;
        let dim = self.dim();
        let scale = (2.0 / dim as f64).sqrt();
        let mut out = Array2::zeros((x.n_samples(), dim));
        let blocks: Vec<_> = out.axis_chunks_iter_mut(Axis(0), 256).collect();
        blocks.into_par_iter().enumerate().for_each(|(blk, mut rows)| {
            for (r, mut row) in rows.rows_mut().into_iter().enumerate() {
                let i = blk * 256 + r;
                for (j, v) in row.iter_mut().enumerate() {
                    let w = self.omega.row(j);
                    *v = scale * (x.row_dot(i, w.as_slice().expect("standard layout")) + self.offset[j]).cos();
                }
            }
        });
        Ok(out)
    }
}

/// An explicit feature map as stored in a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum FeatureMap {
    /// Nyström features on landmarks.
    Nystroem(Nystroem),
    /// Random Fourier features.
    Fourier(RandomFourier),
}

impl FeatureMap {
    /// The mapped rows of `x` (`n_samples × dim`).
    pub fn transform(&self, x: &Features) -> Result<Array2<f64>> {
        match self {
            FeatureMap::Nystroem(m) => m.transform(x),
            FeatureMap::Fourier(m) => m.transform(x),
        }
    }

    /// The map's output dimension.
    pub fn dim(&self) -> usize {
        match self {
            FeatureMap::Nystroem(m) => m.dim(),
            FeatureMap::Fourier(m) => m.dim(),
        }
    }

    /// Number of input features the map reads.
    pub fn n_features(&self) -> usize {
        match self {
            FeatureMap::Nystroem(m) => m.landmarks.n_features(),
            FeatureMap::Fourier(m) => m.omega.ncols(),
        }
    }
}

fn check_width(x: &Features, n: usize) -> Result<()> {
    if x.n_features() > n {
        return Err(Error::DimensionMismatch {
            what: "features of the feature map",
            expected: n,
            found: x.n_features(),
        });
    }
    Ok(())
}
