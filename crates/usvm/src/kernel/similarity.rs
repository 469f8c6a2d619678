//! Similarity measures `s(x, y)` for basis expansion (BE-SVM, Aghazadeh & Carlsson), none assumed positive
//! definite.
//!
//! - every [`Kernel`] (linear `xᵀy`, RBF `exp(-γ‖x - y‖²)`, polynomial) is a similarity;
//! - on grid-structured inputs (`H × W` cells of `c` channels, row-major, channels innermost; `φ(x, p)` is
//!   the `c`-vector of cell `p`, zero outside the grid) the invariant measures of the paper:
//!   - rigid (eq. 11) `K_R(x, y) = max_{z ∈ Z_R} Σ_p φ(x, p)ᵀ φ(y, p + z)`, the largest cross-correlation
//!     over global shifts `Z_R = {-h_R..h_R}²`;
//!   - deformable (eq. 12) `K_L(x, y) = max_{z ∈ Z_R} Σ_p max_{u ∈ Z_L} φ(x, p)ᵀ φ(y, p + z + u)`, each
//!     cell of `y` moving by a further local shift `u ∈ Z_L = {-h_L..h_L}²`.
//!
//! Both are indefinite in general (Gram matrices with negative eigenvalues); `K_R` is symmetric, `K_L` is
//! not (the cells of the second argument deform). With `h_L = 0`, `K_L = K_R`; with `h_R = h_L = 0` both are
//! the linear kernel.
//!
//! Computation. Rigid: `Σ_p φ(x, p)ᵀφ(y, p + z) = (T_z x)ᵀ y` with `(T_z x)(p) = x(p - z)` (zero-padded),
//! so a block of `K_R` is an element-wise maximum of `(2h_R + 1)²` matrix products of shifted rows with the
//! other side — vectorised over cells by the product, parallel over row blocks. Deformable, per pair: the
//! cell-wise correlations `D_t(p) = φ(x, p)ᵀ φ(y, p + t)` for every total shift `|t|∞ ≤ h_R + h_L` (one
//! contiguous dot product per grid row and shift), then for each `z` the cell-wise maximum over `u` of
//! `D_{z+u}` and its sum — vectorised over cells, parallel over pairs. Results do not depend on the
//! number of threads.
//!
//! ```
//! use ndarray::array;
//! use usvm::Features;
//! use usvm::kernel::similarity::{Grid, Invariant, Similarity};
//! // A 1×3 "image" and the same image shifted right by one cell.
//! let x = Features::dense(array![[1.0, 2.0, 0.0], [0.0, 1.0, 2.0]]);
//! let rigid = Invariant::Rigid { grid: Grid { height: 1, width: 3, channels: 1 }, shift: 1 };
//! let s = rigid.cross_similarity(&x, &x).unwrap();
//! assert_eq!(s[[0, 1]], 5.0); // aligned by the shift: as similar as x is to itself
//! ```

use ndarray::{Array2, ArrayView2, Axis};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::Kernel;
use crate::data::{Features, dot};
use crate::error::{Error, Result, invalid};

/// What to do when a similarity matrix does not fit in memory.
const REMEDY: &str = "use fewer rows or a smaller basis";

/// A pairwise similarity `s(a, b)`; nothing assumes symmetry or positive definiteness.
pub trait Similarity: Sync {
    /// `S[i, j] = s(a_i, b_j)`; [`Error::TooLarge`] when the matrix does not fit in memory.
    fn cross_similarity(&self, a: &Features, b: &Features) -> Result<Array2<f64>>;
    /// Checks the parameters, and that inputs with `n_features` features fit the measure.
    fn check(&self, n_features: usize) -> Result<()>;
}

impl Similarity for Kernel {
    fn cross_similarity(&self, a: &Features, b: &Features) -> Result<Array2<f64>> {
        self.cross_gram(a, b)
    }
    fn check(&self, _: usize) -> Result<()> {
        if *self == Kernel::Precomputed {
            return Err(invalid("similarity", "precomputed", "a precomputed Gram matrix has no similarity to a basis"));
        }
        self.validate()
    }
}

/// The shape of a grid-structured input: `height × width` cells of `channels` values each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grid {
    /// Cells down.
    pub height: usize,
    /// Cells across.
    pub width: usize,
    /// Values per cell.
    pub channels: usize,
}

impl Grid {
    /// `height · width · channels`.
    pub fn n_features(&self) -> usize {
        self.height * self.width * self.channels
    }

    fn validate(&self, n_features: usize) -> Result<()> {
        if self.height == 0 || self.width == 0 || self.channels == 0 {
            return Err(invalid("grid", format!("{self:?}"), "every dimension must be at least 1"));
        }
        if self.n_features() != n_features {
            return Err(Error::DimensionMismatch {
                what: "features of a grid (height × width × channels)",
                expected: self.n_features(),
                found: n_features,
            });
        }
        Ok(())
    }
}

/// The invariant similarity measures of the paper on grid-structured inputs; in model files
/// `{"type": "rigid", "grid": {...}, "shift": h_R}` or `{"type": "deformable", ..., "local_shift": h_L}`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Invariant {
    /// Eq. 11: maximum cross-correlation over global shifts `|z|∞ ≤ shift`.
    Rigid {
        /// The grid the shifts move on.
        grid: Grid,
        /// The shift range `H` (cells, each direction).
        shift: usize,
    },
    /// Eq. 12: as rigid, with every cell of the second argument moving by a further `|u|∞ ≤ local_shift`.
    Deformable {
        /// The grid the shifts move on.
        grid: Grid,
        /// The global shift range `H` (cells).
        shift: usize,
        /// The local shift range `HL` (cells).
        local_shift: usize,
    },
}

/// Any similarity measure of BE-SVM; in model files a kernel's or an invariant measure's JSON object.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Measure {
    /// A kernel on the raw vectors.
    Kernel(Kernel),
    /// A shift-invariant similarity.
    Invariant(Invariant),
}

impl Measure {
    /// The measure's name (`linear`, `rbf`, `rigid`, `deformable`).
    pub fn name(&self) -> &'static str {
        match self {
            Measure::Kernel(k) => k.name(),
            Measure::Invariant(Invariant::Rigid { .. }) => "rigid",
            Measure::Invariant(Invariant::Deformable { .. }) => "deformable",
        }
    }
}

impl Similarity for Measure {
    fn cross_similarity(&self, a: &Features, b: &Features) -> Result<Array2<f64>> {
        match self {
            Measure::Kernel(k) => k.cross_similarity(a, b),
            Measure::Invariant(m) => m.cross_similarity(a, b),
        }
    }
    fn check(&self, n_features: usize) -> Result<()> {
        match self {
            Measure::Kernel(k) => Similarity::check(k, n_features),
            Measure::Invariant(m) => m.check(n_features),
        }
    }
}

/// `γ = 1/(n · Var(x))` over all entries of the training features (scikit-learn's `gamma="scale"`);
/// 1 when the features are constant.
pub fn gamma_scale(x: &Features) -> f64 {
    let (l, n) = (x.n_samples(), x.n_features());
    let count = (l * n) as f64;
    let (mut sum, mut sum2) = (0.0, 0.0);
    for i in 0..l {
        let row = x.row_dense(i);
        sum += row.iter().sum::<f64>();
        sum2 += dot(&row, &row);
    }
    let mean = sum / count;
    let var = (sum2 / count - mean * mean).max(0.0);
    if var > 0.0 && var.is_finite() { 1.0 / (n as f64 * var) } else { 1.0 }
}

/// Rows of `a` per parallel block.
const BLOCK: usize = 16;

impl Invariant {
    /// The grid the measure shifts on.
    pub fn grid(&self) -> Grid {
        match *self {
            Invariant::Rigid { grid, .. } | Invariant::Deformable { grid, .. } => grid,
        }
    }

    /// `(h_R, h_L)`.
    fn shifts(&self) -> (usize, usize) {
        match *self {
            Invariant::Rigid { shift, .. } => (shift, 0),
            Invariant::Deformable { shift, local_shift, .. } => (shift, local_shift),
        }
    }
}

impl Similarity for Invariant {
    fn check(&self, n_features: usize) -> Result<()> {
        self.grid().validate(n_features)
    }

    fn cross_similarity(&self, a: &Features, b: &Features) -> Result<Array2<f64>> {
        // The deformable measure holds its values twice (per pair chunk, then as the matrix).
        let copies = if self.shifts().1 == 0 { 1 } else { 2 };
        crate::memory::reserve("a similarity matrix", REMEDY, &[copies, a.n_samples(), b.n_samples()])?;
        let (a, b) = (dense(a), dense(b));
        let grid = self.grid();
        assert!(
            a.ncols() == grid.n_features() && b.ncols() == grid.n_features(),
            "inputs must have height × width × channels features (checked by the caller)"
        );
        Ok(match self.shifts() {
            (h, 0) => rigid(grid, h, a.view(), b.view()),
            (h, hl) => deformable(grid, h, hl, a.view(), b.view()),
        })
    }
}

fn dense<'a>(x: &'a Features) -> ndarray::CowArray<'a, f64, ndarray::Ix2> {
    match x {
        Features::Dense(a) if !a.is_column_major() => a.view().into(),
        Features::Dense(a) => a.to_array().into(),
        Features::Sparse(m) => m.to_dense().into(),
    }
}

/// All shifts `(dy, dx)` with `|dy|, |dx| ≤ h`, row by row.
fn shifts(h: usize) -> Vec<(isize, isize)> {
    let h = h as isize;
    (-h..=h).flat_map(|dy| (-h..=h).map(move |dx| (dy, dx))).collect()
}

/// The overlap of a row/column range of length `n` with itself shifted by `d`: `(start, end)` of the
/// target positions `p` such that `p - d` is inside `0..n`.
#[inline]
fn overlap(n: usize, d: isize) -> (usize, usize) {
    let start = d.max(0) as usize;
    let end = (n as isize + d.min(0)).max(0) as usize;
    (start.min(end), end)
}

/// `out = T_z x` (row-major grid, zero-padded): `out(p) = x(p - z)`.
fn shift_into(grid: Grid, (dy, dx): (isize, isize), x: &[f64], out: &mut [f64]) {
    let (w, c) = (grid.width, grid.channels);
    out.iter_mut().for_each(|v| *v = 0.0);
    let (r0, r1) = overlap(grid.height, dy);
    let (q0, q1) = overlap(w, dx);
    if q0 >= q1 {
        return;
    }
    for r in r0..r1 {
        let src_r = (r as isize - dy) as usize;
        let src_q = (q0 as isize - dx) as usize;
        let len = (q1 - q0) * c;
        out[(r * w + q0) * c..][..len].copy_from_slice(&x[(src_r * w + src_q) * c..][..len]);
    }
}

/// `K_R` by one matrix product per shift: `K_R[i, j] = max_z (T_z a_i)ᵀ b_j`. The larger side is split into
/// parallel row blocks (`K_R` is symmetric in its arguments, so the transpose is computed when `b` is larger).
fn rigid(grid: Grid, h: usize, a: ArrayView2<f64>, b: ArrayView2<f64>) -> Array2<f64> {
    if b.nrows() > a.nrows() {
        return rigid(grid, h, b, a).reversed_axes().as_standard_layout().into_owned();
    }
    let (na, nb, d) = (a.nrows(), b.nrows(), a.ncols());
    let b = b.as_standard_layout();
    let all_shifts = shifts(h);
    let mut out = Array2::from_elem((na, nb), f64::NEG_INFINITY);
    let blocks: Vec<_> = out.axis_chunks_iter_mut(Axis(0), BLOCK).collect();
    blocks.into_par_iter().enumerate().for_each(|(blk, mut rows)| {
        let start = blk * BLOCK;
        let m = rows.nrows();
        let mut shifted = vec![0.0; m * d];
        for &z in &all_shifts {
            for r in 0..m {
                let src = a.row(start + r);
                let src = src.as_slice().expect("standard layout");
                shift_into(grid, z, src, &mut shifted[r * d..(r + 1) * d]);
            }
            let fa = ArrayView2::from_shape((m, d), &shifted).expect("m × d");
            let prod = crate::linalg::mul_transposed(fa, b.view());
            for (r, mut row) in rows.rows_mut().into_iter().enumerate() {
                for (j, v) in row.iter_mut().enumerate() {
                    *v = v.max(prod[[r, j]]);
                }
            }
        }
    });
    out
}

/// `K_L` pair by pair (see the module documentation).
fn deformable(grid: Grid, h: usize, hl: usize, a: ArrayView2<f64>, b: ArrayView2<f64>) -> Array2<f64> {
    let (na, nb) = (a.nrows(), b.nrows());
    let (height, width, c) = (grid.height, grid.width, grid.channels);
    let cells = height * width;
    let total = h + hl;
    let span = 2 * total + 1;
    let index = |dy: isize, dx: isize| ((dy + total as isize) as usize) * span + (dx + total as isize) as usize;
    let global = shifts(h);
    let local = shifts(hl);
    let all_total = shifts(total);
    let mut out = Array2::zeros((na, nb));
    let pairs = na * nb;
    let chunk = 64;
    let values: Vec<Vec<f64>> = (0..pairs.div_ceil(chunk))
        .into_par_iter()
        .map(|k| {
            let mut corr = vec![0.0; span * span * cells];
            let mut best = vec![0.0; cells];
            (k * chunk..((k + 1) * chunk).min(pairs))
                .map(|p| {
                    let (i, j) = (p / nb, p % nb);
                    let x = a.row(i);
                    let y = b.row(j);
                    let (x, y) = (x.as_slice().expect("standard layout"), y.as_slice().expect("standard layout"));
                    // D_t(p) = φ(x, p)ᵀ φ(y, p + t), zero where p + t is outside the grid: per grid row, the
                    // element-wise products of two contiguous runs of cells.
                    corr.iter_mut().for_each(|v| *v = 0.0);
                    for &(dy, dx) in &all_total {
                        let dt = &mut corr[index(dy, dx) * cells..][..cells];
                        // Cells p with p + t inside: p in overlap(n, -t).
                        let (r0, r1) = overlap(height, -dy);
                        let (q0, q1) = overlap(width, -dx);
                        if q0 >= q1 {
                            continue;
                        }
                        for r in r0..r1 {
                            let yr = (r as isize + dy) as usize;
                            let yq0 = (q0 as isize + dx) as usize;
                            let out = &mut dt[r * width + q0..r * width + q1];
                            let xs = &x[(r * width + q0) * c..(r * width + q1) * c];
                            let ys = &y[(yr * width + yq0) * c..(yr * width + yq0 + (q1 - q0)) * c];
                            if c == 1 {
                                out.iter_mut().zip(xs).zip(ys).for_each(|((o, a), b)| *o = a * b);
                            } else {
                                for ((o, a), b) in out.iter_mut().zip(xs.chunks_exact(c)).zip(ys.chunks_exact(c)) {
                                    *o = dot(a, b);
                                }
                            }
                        }
                    }
                    let mut value = f64::NEG_INFINITY;
                    for &(zy, zx) in &global {
                        best.copy_from_slice(&corr[index(zy + local[0].0, zx + local[0].1) * cells..][..cells]);
                        for &(uy, ux) in &local[1..] {
                            let dt = &corr[index(zy + uy, zx + ux) * cells..][..cells];
                            best.iter_mut().zip(dt).for_each(|(m, &v)| *m = m.max(v));
                        }
                        value = value.max(best.iter().sum::<f64>());
                    }
                    value
                })
                .collect()
        })
        .collect();
    for (k, chunk_values) in values.into_iter().enumerate() {
        for (r, v) in chunk_values.into_iter().enumerate() {
            let p = k * chunk + r;
            out[[p / nb, p % nb]] = v;
        }
    }
    out
}

/// The ratio of negative eigenvalues and their relative energy `Σ|λ_-| / Σλ_+` of the symmetric part of a
/// square similarity matrix (the paper's Table 2 "NgRat" and "NgEng"). Eigenvalues within `10⁻¹²·max|λ|`
/// of zero count as zero.
pub fn negative_spectrum(s: ArrayView2<f64>) -> Result<(f64, f64)> {
    let (values, _) = crate::covariance::full_eigen(s)?;
    let top = values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let eps = 1e-12 * top;
    let neg: Vec<f64> = values.iter().copied().filter(|&v| v < -eps).collect();
    let pos: f64 = values.iter().copied().filter(|&v| v > eps).sum();
    let ratio = neg.len() as f64 / values.len().max(1) as f64;
    let energy = if pos > 0.0 { -neg.iter().sum::<f64>() / pos } else { 0.0 };
    Ok((ratio, energy))
}
