//! Per-example covariances `Σ_i` behind one small trait.
//!
//! The objective only ever needs `uᵀΣ_i v` (hence `σ_i² = wᵀΣ_i w`) and `Σ_i v`; each storage form
//! implements them at its own cost:
//!
//! | form | storage per example | `wᵀΣw` |
//! |---|---|---|
//! | [`NoCovariance`] (Σ = 0) | 0 | O(1) |
//! | [`Isotropic`] `s² I` | 1 | O(n) |
//! | [`Diagonal`] / [`SparseDiagonal`] | n / nnz | O(n) / O(nnz) |
//! | [`LowRank`] `U Uᵀ + diag(v)` | n·r + n | O(n r) |
//! | [`Full`] | n² | O(n²) |
//!
//! ```
//! use usvm::covariance::{Covariance, Covariances};
//! let cov = Covariances::isotropic(vec![4.0]);
//! assert_eq!(cov.as_dyn().quad_form(0, &[1.0, 1.0]), 8.0); // 4·‖w‖²
//! ```

mod diagonal;
mod full;
mod isotropic;
mod low_rank;

pub use diagonal::{Diagonal, SparseDiagonal};
pub use full::{Full, psd_factor, rank_cutoff};
pub use isotropic::Isotropic;
pub use low_rank::LowRank;

pub(crate) use full::symmetric_eigen as full_eigen;

use ndarray::{Array2, Array3};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::features::{ColumnSet, CsrMatrix};

/// What to do when dense `ℓ × n × n` covariances do not fit in memory.
pub const FULL_REMEDY: &str = "use the low-rank or diagonal form of the covariances, or fewer examples or features";

/// The operations the objective needs from example `i`'s covariance.
pub trait Covariance: Sync {
    /// `uᵀ Σ_i v`.
    fn bilinear(&self, i: usize, u: &[f64], v: &[f64]) -> f64;
    /// `wᵀ Σ_i w`, the variance of the margin `wᵀX` when `X ~ N(x_i, Σ_i)`.
    fn quad_form(&self, i: usize, w: &[f64]) -> f64 {
        self.bilinear(i, w, w)
    }
    /// `(uᵀΣ_i u, uᵀΣ_i v, vᵀΣ_i v)`: `σ_i²` along the line `u + αv` is `q₀ + 2αq₁ + α²q₂`.
    fn line_forms(&self, i: usize, u: &[f64], v: &[f64]) -> [f64; 3] {
        [self.quad_form(i, u), self.bilinear(i, u, v), self.quad_form(i, v)]
    }
    /// `out += alpha · Σ_i v`.
    fn apply_add(&self, i: usize, alpha: f64, v: &[f64], out: &mut [f64]);
    /// `out += alpha · Σ_i (a u + b v)`. The default forms `a u + b v` in `scratch` (resized to `u.len()`)
    /// and calls [`Self::apply_add`]; the diagonal forms need no scratch and touch only their stored entries.
    #[allow(clippy::too_many_arguments)]
    fn apply_combination_add(
        &self,
        i: usize,
        alpha: f64,
        a: f64,
        u: &[f64],
        b: f64,
        v: &[f64],
        out: &mut [f64],
        scratch: &mut Vec<f64>,
    ) {
        scratch.clear();
        scratch.extend(u.iter().zip(v).map(|(&uj, &vj)| a * uj + b * vj));
        self.apply_add(i, alpha, scratch, out);
    }
    /// Entries of `out` that [`Self::apply_add`] reads and writes for example `i` (its cost; `n` by default).
    fn apply_entries(&self, _i: usize, n_features: usize) -> usize {
        n_features
    }
    /// Adds to `used` every column `j` with `(Σ_i)_jk ≠ 0` for some `i, k`, and returns true; returns false
    /// (the default, for the dense forms) when any column may be touched.
    fn mark_columns(&self, _used: &mut ColumnSet) -> bool {
        false
    }
    /// The same covariances on the columns of `kept`, column `j` renumbered `kept.rank(j)` (no `Σ_i` touches
    /// a column outside it, see [`Self::mark_columns`]), or `None` (the default) for forms that cannot drop
    /// columns.
    fn restrict_columns(&self, _kept: &ColumnSet) -> Option<Covariances> {
        None
    }
    /// `tr Σ_i` (`n_features` is needed by the isotropic form only).
    fn trace(&self, i: usize, n_features: usize) -> f64;
    /// A factor `F_i` (`n × r_i`, `Σ_i = F_i F_iᵀ`) for the forms that have one with few columns: the
    /// low-rank factor (with `√v_ij e_j` for each nonzero diagonal entry), the diagonal forms' `√v_ij e_j`, no
    /// column for `Σ_i = 0`; `None` (the default) for the isotropic and full forms.
    fn factor(&self, _i: usize, _n_features: usize) -> Option<Array2<f64>> {
        None
    }
    /// Whether every `Σ_i` is zero (then the expected hinge loss is the hinge loss).
    fn is_zero(&self) -> bool {
        false
    }
}

/// Σ_i = 0 for every example: plain vectors.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct NoCovariance;

impl Covariance for NoCovariance {
    fn bilinear(&self, _: usize, _: &[f64], _: &[f64]) -> f64 {
        0.0
    }
    fn apply_add(&self, _: usize, _: f64, _: &[f64], _: &mut [f64]) {}
    fn apply_combination_add(
        &self,
        _: usize,
        _: f64,
        _: f64,
        _: &[f64],
        _: f64,
        _: &[f64],
        _: &mut [f64],
        _: &mut Vec<f64>,
    ) {
    }
    fn apply_entries(&self, _: usize, _: usize) -> usize {
        0
    }
    fn mark_columns(&self, _: &mut ColumnSet) -> bool {
        true
    }
    fn restrict_columns(&self, _: &ColumnSet) -> Option<Covariances> {
        Some(Covariances::None)
    }
    fn trace(&self, _: usize, _: usize) -> f64 {
        0.0
    }
    fn factor(&self, _: usize, n_features: usize) -> Option<Array2<f64>> {
        Some(Array2::zeros((n_features, 0)))
    }
    fn is_zero(&self) -> bool {
        true
    }
}

/// The covariances of a whole training set, in one of the five storage forms.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub enum Covariances {
    #[default]
    /// No uncertainty: `Σ_i = 0`.
    None,
    /// `Σ_i = s_i² I`.
    Isotropic(Isotropic),
    /// `Σ_i = diag(v_i)`, dense.
    Diagonal(Diagonal),
    /// `Σ_i = diag(v_i)`, sparse rows.
    SparseDiagonal(SparseDiagonal),
    /// `Σ_i = U_i U_iᵀ + diag(v_i)`.
    LowRank(LowRank),
    /// Dense `n × n` matrices.
    Full(Full),
}

impl Covariances {
    /// `Σ_i = s_i² I` from the variances `s_i²`.
    pub fn isotropic(variances: Vec<f64>) -> Self {
        Covariances::Isotropic(Isotropic { variances })
    }
    /// `Σ_i = diag(v_i)` from an `ℓ × n` array of variances.
    pub fn diagonal(variances: Array2<f64>) -> Self {
        Covariances::Diagonal(Diagonal { variances })
    }
    /// Sparse diagonal variances (absent entries are zero).
    pub fn sparse_diagonal(variances: CsrMatrix<'_>) -> Self {
        Covariances::SparseDiagonal(SparseDiagonal { variances: variances.into_owned() })
    }
    /// `Σ_i = U_i U_iᵀ + diag(v_i)`, `U_i` of shape `n × r_i`.
    /// The factors are stored column-major (each column contiguous), the layout the O(n r) products
    /// read fastest.
    pub fn low_rank(factors: Vec<Array2<f64>>, diagonal: Option<Array2<f64>>) -> Self {
        let factors = factors.into_iter().map(low_rank::column_major).collect();
        Covariances::LowRank(LowRank { factors, diagonal })
    }
    /// Dense `ℓ × n × n` covariances.
    pub fn full(matrices: Array3<f64>) -> Self {
        Covariances::Full(Full { matrices })
    }

    /// The storage form as the trait the objective uses.
    pub fn as_dyn(&self) -> &dyn Covariance {
        match self {
            Covariances::None => &NoCovariance,
            Covariances::Isotropic(c) => c,
            Covariances::Diagonal(c) => c,
            Covariances::SparseDiagonal(c) => c,
            Covariances::LowRank(c) => c,
            Covariances::Full(c) => c,
        }
    }

    /// A short name of the form: `none`, `iso`, `diag`, `lowrank`, `full` (the CLI's `--cov-type`).
    pub fn kind(&self) -> &'static str {
        match self {
            Covariances::None => "none",
            Covariances::Isotropic(_) => "iso",
            Covariances::Diagonal(_) | Covariances::SparseDiagonal(_) => "diag",
            Covariances::LowRank(_) => "lowrank",
            Covariances::Full(_) => "full",
        }
    }

    /// Number of examples stored (`None` fits any number).
    pub fn n_samples(&self) -> Option<usize> {
        match self {
            Covariances::None => None,
            Covariances::Isotropic(c) => Some(c.variances.len()),
            Covariances::Diagonal(c) => Some(c.variances.nrows()),
            Covariances::SparseDiagonal(c) => Some(c.variances.n_rows()),
            Covariances::LowRank(c) => Some(c.factors.len()),
            Covariances::Full(c) => Some(c.matrices.shape()[0]),
        }
    }

    /// Checks shape against `ℓ × n`, finiteness, non-negative variances, symmetry and PSD, and that every
    /// trace is finite (finite factor entries near 1e155 square to an infinite `Σ_i`).
    pub fn validate(&self, n_samples: usize, n_features: usize) -> Result<()> {
        if let Some(found) = self.n_samples().filter(|&found| found != n_samples) {
            return Err(Error::DimensionMismatch { what: "covariances (examples)", expected: n_samples, found });
        }
        match self {
            Covariances::None => Ok(()),
            Covariances::Isotropic(c) => c.validate(),
            Covariances::Diagonal(c) => c.validate(n_features),
            Covariances::SparseDiagonal(c) => c.validate(n_features),
            Covariances::LowRank(c) => c.validate(n_features),
            Covariances::Full(c) => c.validate(n_features),
        }?;
        let c = self.as_dyn();
        match (0..n_samples).map(|i| (i, c.trace(i, n_features))).find(|(_, t)| !t.is_finite()) {
            Some((index, value)) => Err(Error::NonFinite { what: "covariance trace", index, value }),
            None => Ok(()),
        }
    }

    /// LSVM-iso: the Frobenius-nearest isotropic matrix `(tr Σ_i / n) I` of every example.
    pub fn to_isotropic(&self, n_samples: usize, n_features: usize) -> Covariances {
        if matches!(self, Covariances::None) {
            return Covariances::None;
        }
        let c = self.as_dyn();
        Covariances::isotropic((0..n_samples).map(|i| c.trace(i, n_features) / n_features as f64).collect())
    }

    /// The same covariances in factored form `F_i F_iᵀ + diag(v_i)`: full matrices through their
    /// eigen-decomposition, keeping the eigenvalues above `max(n, 1)·ε·λ_max` ([`psd_factor`]; the rank
    /// kept is [`LowRank::ranks`]); [`Error::TooLarge`] when an eigen-decomposition does not fit in memory.
    pub fn to_low_rank(&self, n_samples: usize, n_features: usize) -> Result<LowRank> {
        let zeros = || Array2::zeros((n_features, 0));
        Ok(match self {
            Covariances::None => LowRank { factors: vec![zeros(); n_samples], diagonal: None },
            Covariances::Isotropic(c) => LowRank {
                factors: vec![zeros(); n_samples],
                diagonal: Some(Array2::from_shape_fn((n_samples, n_features), |(i, _)| c.variances[i])),
            },
            Covariances::Diagonal(c) => {
                LowRank { factors: vec![zeros(); n_samples], diagonal: Some(c.variances.clone()) }
            }
            Covariances::SparseDiagonal(c) => {
                LowRank { factors: vec![zeros(); n_samples], diagonal: Some(c.variances.to_dense()) }
            }
            Covariances::LowRank(c) => c.clone(),
            Covariances::Full(c) => c.to_low_rank()?,
        })
    }

    /// The same covariances as dense `ℓ × n × n` matrices (column `j` of `Σ_i` is `Σ_i e_j`);
    /// [`Error::TooLarge`] when they do not fit in memory.
    pub fn to_full(&self, n_samples: usize, n_features: usize) -> Result<Full> {
        if let Covariances::Full(c) = self {
            return Ok(c.clone());
        }
        let n = n_features;
        crate::memory::reserve("full covariances", FULL_REMEDY, &[n_samples, n, n])?;
        let c = self.as_dyn();
        let mut matrices = Array3::zeros((n_samples, n, n));
        let (mut e, mut column) = (vec![0.0; n], vec![0.0; n]);
        for i in 0..n_samples {
            for j in 0..n {
                e[j] = 1.0;
                column.iter_mut().for_each(|v| *v = 0.0);
                c.apply_add(i, 1.0, &e, &mut column);
                e[j] = 0.0;
                for (r, v) in column.iter().enumerate() {
                    matrices[[i, r, j]] = *v;
                }
            }
        }
        Ok(Full { matrices })
    }

    /// The covariances of examples `idx`, in that order.
    pub fn select(&self, idx: &[usize]) -> Covariances {
        match self {
            Covariances::None => Covariances::None,
            Covariances::Isotropic(c) => Covariances::isotropic(idx.iter().map(|&i| c.variances[i]).collect()),
            Covariances::Diagonal(c) => Covariances::diagonal(c.variances.select(ndarray::Axis(0), idx)),
            Covariances::SparseDiagonal(c) => Covariances::sparse_diagonal(c.variances.select_rows(idx)),
            Covariances::LowRank(c) => Covariances::low_rank(
                idx.iter().map(|&i| c.factors[i].clone()).collect(),
                c.diagonal.as_ref().map(|d| d.select(ndarray::Axis(0), idx)),
            ),
            Covariances::Full(c) => Covariances::full(c.matrices.select(ndarray::Axis(0), idx)),
        }
    }
}

/// `[U, √v_j e_j for v_j > 0]`: a factor of `U Uᵀ + diag(v)` (`U` may have no column).
pub(crate) fn factor_with_diagonal(u: ndarray::ArrayView2<'_, f64>, diagonal: &[(usize, f64)]) -> Array2<f64> {
    let (n, r) = u.dim();
    let kept: Vec<_> = diagonal.iter().filter(|(_, v)| *v > 0.0).collect();
    let mut f = Array2::zeros((n, r + kept.len()));
    f.slice_mut(ndarray::s![.., ..r]).assign(&u);
    for (k, &&(j, v)) in kept.iter().enumerate() {
        f[[j, r + k]] = v.sqrt();
    }
    f
}

/// `(Σ s_j u_j², Σ s_j u_j v_j, Σ s_j v_j²)` in one pass (four accumulators each, as [`dot3`]).
#[inline]
pub(crate) fn weighted_forms(s: &[f64], u: &[f64], v: &[f64]) -> [f64; 3] {
    let n = s.len().min(u.len()).min(v.len());
    let (s, u, v) = (&s[..n], &u[..n], &v[..n]);
    let mut acc = [[0.0; 4]; 3];
    let chunks = n / 4;
    for k in 0..chunks {
        let lanes = 4 * k..4 * k + 4;
        let (s4, u4, v4) = (&s[lanes.clone()], &u[lanes.clone()], &v[lanes]);
        for (l, ((&sj, &uj), &vj)) in s4.iter().zip(u4).zip(v4).enumerate() {
            let (su, sv) = (sj * uj, sj * vj);
            acc[0][l] += su * uj;
            acc[1][l] += su * vj;
            acc[2][l] += sv * vj;
        }
    }
    let mut out = acc.map(|a| (a[0] + a[1]) + (a[2] + a[3]));
    for j in 4 * chunks..n {
        out[0] += s[j] * u[j] * u[j];
        out[1] += s[j] * u[j] * v[j];
        out[2] += s[j] * v[j] * v[j];
    }
    out
}

/// `Σ_j a_j b_j c_j` — the diagonal bilinear form.
#[inline]
pub(crate) fn dot3(a: &[f64], b: &[f64], c: &[f64]) -> f64 {
    let n = a.len().min(b.len()).min(c.len());
    let (a, b, c) = (&a[..n], &b[..n], &c[..n]);
    let mut acc = [0.0; 4];
    let chunks = n / 4;
    for k in 0..chunks {
        for l in 0..4 {
            acc[l] += a[4 * k + l] * b[4 * k + l] * c[4 * k + l];
        }
    }
    let mut tail = 0.0;
    for k in 4 * chunks..n {
        tail += a[k] * b[k] * c[k];
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

pub(crate) fn check_variances<'a>(index: usize, values: impl IntoIterator<Item = &'a f64>) -> Result<()> {
    for &v in values {
        if !v.is_finite() {
            return Err(Error::NonFinite { what: "variances", index, value: v });
        }
        if v < 0.0 {
            return Err(Error::NegativeVariance { index, value: v });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fused_line_forms_are_the_three_forms() {
        // 103 features: four-wide chunks and a tail of three.
        let (l, n) = (3, 103);
        let at = |i: usize, j: usize, k: usize| ((i * 31 + j * 17 + k * 7) % 23) as f64 / 7.0 - 1.0;
        let variances = Array2::from_shape_fn((l, n), |(i, j)| at(i, j, 1).abs());
        let diagonal = Diagonal { variances };
        let (u, v): (Vec<f64>, Vec<f64>) = (0..n).map(|j| (at(0, j, 2), 1e-3 * at(1, j, 3))).unzip();
        for i in 0..l {
            let fused = diagonal.line_forms(i, &u, &v);
            let apart = [diagonal.quad_form(i, &u), diagonal.bilinear(i, &u, &v), diagonal.quad_form(i, &v)];
            for (a, b) in fused.iter().zip(apart) {
                assert!((a - b).abs() <= 1e-14 * b.abs().max(1e-300), "{fused:?} vs {apart:?}");
            }
        }
    }
}
