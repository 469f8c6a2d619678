//! Example features: dense row-major means or a compressed-sparse-row matrix, with the row operations the
//! objective and the kernels need.

use ndarray::Array2;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::linalg::{axpy, dot};

/// A compressed-sparse-row matrix of `f64` (row `i` holds `indices[indptr[i]..indptr[i+1]]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CsrMatrix {
    /// Number of columns.
    pub n_cols: usize,
    /// Row pointers: row `i` is `indptr[i]..indptr[i+1]` (length `n_rows + 1`).
    pub indptr: Vec<usize>,
    /// Column index of each stored entry (increasing within a row).
    pub indices: Vec<usize>,
    /// Value of each stored entry.
    pub values: Vec<f64>,
}

impl CsrMatrix {
    /// Builds a CSR matrix from rows of `(column, value)` pairs; columns must be `< n_cols`.
    pub fn from_rows(n_cols: usize, rows: &[Vec<(usize, f64)>]) -> Result<Self> {
        let mut m =
            CsrMatrix { n_cols, indptr: Vec::with_capacity(rows.len() + 1), indices: Vec::new(), values: Vec::new() };
        m.indptr.push(0);
        for row in rows {
            for &(j, v) in row {
                if j >= n_cols {
                    return Err(Error::DimensionMismatch {
                        what: "sparse column index",
                        expected: n_cols,
                        found: j + 1,
                    });
                }
                m.indices.push(j);
                m.values.push(v);
            }
            m.indptr.push(m.indices.len());
        }
        Ok(m)
    }

    /// Number of rows.
    pub fn n_rows(&self) -> usize {
        self.indptr.len().saturating_sub(1)
    }

    /// The stored `(indices, values)` of row `i`.
    #[inline]
    pub fn row(&self, i: usize) -> (&[usize], &[f64]) {
        let r = self.indptr[i]..self.indptr[i + 1];
        (&self.indices[r.clone()], &self.values[r])
    }

    /// The rows `idx`, in that order.
    pub fn select_rows(&self, idx: &[usize]) -> CsrMatrix {
        let mut m = CsrMatrix { n_cols: self.n_cols, indptr: vec![0], indices: Vec::new(), values: Vec::new() };
        for &i in idx {
            let (ix, v) = self.row(i);
            m.indices.extend_from_slice(ix);
            m.values.extend_from_slice(v);
            m.indptr.push(m.indices.len());
        }
        m
    }

    /// Sets `used[j]` for every stored column `j`.
    pub fn mark_columns(&self, used: &mut [bool]) {
        self.indices.iter().for_each(|&j| used[j] = true);
    }

    /// The same matrix on the kept columns: column `j` becomes `new_index[j]` of `n_kept` (every stored
    /// column must be kept; see [`Self::mark_columns`]).
    pub fn restrict_columns(&self, new_index: &[usize], n_kept: usize) -> CsrMatrix {
        CsrMatrix {
            n_cols: n_kept,
            indptr: self.indptr.clone(),
            indices: self.indices.iter().map(|&j| new_index[j]).collect(),
            values: self.values.clone(),
        }
    }

    /// The dense `n_rows × n_cols` matrix.
    pub fn to_dense(&self) -> Array2<f64> {
        let mut a = Array2::zeros((self.n_rows(), self.n_cols));
        for i in 0..self.n_rows() {
            let (idx, val) = self.row(i);
            for (&j, &v) in idx.iter().zip(val) {
                a[[i, j]] += v;
            }
        }
        a
    }

    /// Checks the structure (monotone `indptr`, in-range columns) and that every value is finite.
    pub fn validate(&self, what: &'static str) -> Result<()> {
        let ok = !self.indptr.is_empty()
            && self.indptr[0] == 0
            && self.indptr.windows(2).all(|w| w[0] <= w[1])
            && *self.indptr.last().unwrap() == self.indices.len()
            && self.indices.len() == self.values.len();
        if !ok {
            return Err(Error::MalformedSparse {
                what,
                detail: "row pointers or column indices out of order or range".into(),
            });
        }
        for i in 0..self.n_rows() {
            let (idx, val) = self.row(i);
            for (&j, &v) in idx.iter().zip(val) {
                if j >= self.n_cols {
                    return Err(Error::DimensionMismatch { what, expected: self.n_cols, found: j + 1 });
                }
                if !v.is_finite() {
                    return Err(Error::NonFinite { what, index: i, value: v });
                }
            }
        }
        Ok(())
    }
}

/// The example means `x_i`, one row per example.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Features {
    /// Row-major dense means.
    Dense(Array2<f64>),
    /// Sparse means.
    Sparse(CsrMatrix),
}

impl Features {
    /// Number of examples (rows).
    pub fn n_samples(&self) -> usize {
        match self {
            Features::Dense(a) => a.nrows(),
            Features::Sparse(m) => m.n_rows(),
        }
    }

    /// Number of features (columns).
    pub fn n_features(&self) -> usize {
        match self {
            Features::Dense(a) => a.ncols(),
            Features::Sparse(m) => m.n_cols,
        }
    }

    /// Stored entries of row `i` (`n_features` for dense rows).
    #[inline]
    pub fn row_entries(&self, i: usize) -> usize {
        match self {
            Features::Dense(a) => a.ncols(),
            Features::Sparse(m) => m.indptr[i + 1] - m.indptr[i],
        }
    }

    /// Stored entries of all rows (`ℓ·n` for dense features).
    pub fn stored_entries(&self) -> usize {
        match self {
            Features::Dense(a) => a.len(),
            Features::Sparse(m) => m.indices.len(),
        }
    }

    /// `x_iᵀ w` (only the first `n_features` entries of `w` are read).
    #[inline]
    pub fn row_dot(&self, i: usize, w: &[f64]) -> f64 {
        match self {
            Features::Dense(a) => dot(a.row(i).as_slice().expect("standard layout"), w),
            Features::Sparse(m) => {
                let (idx, val) = m.row(i);
                idx.iter().zip(val).map(|(&j, &v)| v * w[j]).sum()
            }
        }
    }

    /// `x_iᵀ w` over the features `j < w.len()` only: features past the end of `w` count as zero
    /// coefficients (a model trained on fewer features; LIBLINEAR's rule).
    #[inline]
    pub fn row_dot_truncated(&self, i: usize, w: &[f64]) -> f64 {
        match self {
            Features::Dense(a) => dot(a.row(i).as_slice().expect("standard layout"), w),
            Features::Sparse(m) => {
                let (idx, val) = m.row(i);
                idx.iter().zip(val).filter(|(j, _)| **j < w.len()).map(|(&j, &v)| v * w[j]).sum()
            }
        }
    }

    /// The same rows with `n ≥ n_features` columns, the new ones zero.
    pub fn widened(&self, n: usize) -> Features {
        debug_assert!(n >= self.n_features());
        match self {
            Features::Dense(a) => {
                let mut wide = Array2::zeros((a.nrows(), n));
                wide.slice_mut(ndarray::s![.., ..a.ncols()]).assign(a);
                Features::Dense(wide)
            }
            Features::Sparse(m) => Features::Sparse(CsrMatrix { n_cols: n, ..m.clone() }),
        }
    }

    /// `out += alpha · x_i`.
    #[inline]
    pub fn row_axpy(&self, i: usize, alpha: f64, out: &mut [f64]) {
        match self {
            Features::Dense(a) => axpy(alpha, a.row(i).as_slice().expect("standard layout"), out),
            Features::Sparse(m) => {
                let (idx, val) = m.row(i);
                for (&j, &v) in idx.iter().zip(val) {
                    out[j] += alpha * v;
                }
            }
        }
    }

    /// The Gram matrix `G_rc = x_{rows[r]}ᵀ x_{rows[c]}` of the rows `rows`, row-major `m × m`. Sparse rows
    /// are multiplied column by column (each stored column `j` adds `x_rj x_cj` for every pair of the
    /// rows that store it), which costs `Σ_j m_j²` for `m_j` rows storing column `j` — never O(m·n).
    pub fn gram(&self, rows: &[usize]) -> Vec<f64> {
        let m = rows.len();
        let mut g = vec![0.0; m * m];
        match self {
            Features::Dense(a) => {
                let row = |r: usize| a.row(rows[r]).to_slice().expect("standard layout");
                for r in 0..m {
                    for c in 0..m {
                        g[r * m + c] = dot(row(r), row(c));
                    }
                }
            }
            Features::Sparse(x) => {
                // (column, position in `rows`, value), sorted by column (then position, then value order).
                let mut entries: Vec<(usize, usize, f64)> = Vec::new();
                for (r, &i) in rows.iter().enumerate() {
                    let (idx, val) = x.row(i);
                    entries.extend(idx.iter().zip(val).map(|(&j, &v)| (j, r, v)));
                }
                entries.sort_by_key(|&(j, r, _)| (j, r));
                for group in entries.chunk_by(|a, b| a.0 == b.0) {
                    for &(_, r, u) in group {
                        for &(_, c, v) in group {
                            g[r * m + c] += u * v;
                        }
                    }
                }
            }
        }
        g
    }

    /// Row `i` as a dense vector.
    pub fn row_dense(&self, i: usize) -> Vec<f64> {
        let mut out = vec![0.0; self.n_features()];
        self.row_axpy(i, 1.0, &mut out);
        out
    }

    /// A dense copy of all rows.
    pub fn to_dense(&self) -> Array2<f64> {
        match self {
            Features::Dense(a) => a.clone(),
            Features::Sparse(m) => m.to_dense(),
        }
    }

    /// The rows `idx`, in that order, in the same storage form.
    pub fn select_rows(&self, idx: &[usize]) -> Features {
        match self {
            Features::Dense(a) => Features::Dense(a.select(ndarray::Axis(0), idx)),
            Features::Sparse(m) => Features::Sparse(m.select_rows(idx)),
        }
    }

    /// Dense rows must be contiguous (row-major) for the row kernels.
    pub(crate) fn check_layout(&self) -> Result<()> {
        match self {
            Features::Dense(a) if !a.is_standard_layout() => Err(Error::Layout { what: "dense features" }),
            _ => Ok(()),
        }
    }

    pub(crate) fn validate(&self) -> Result<()> {
        self.validate_as("features")
    }

    /// [`Features::validate`] naming the matrix `what` in errors.
    pub(crate) fn validate_as(&self, what: &'static str) -> Result<()> {
        self.check_layout()?;
        match self {
            Features::Dense(a) => {
                for (i, row) in a.rows().into_iter().enumerate() {
                    if let Some(&v) = row.iter().find(|v| !v.is_finite()) {
                        return Err(Error::NonFinite { what, index: i, value: v });
                    }
                }
                Ok(())
            }
            Features::Sparse(m) => m.validate(what),
        }
    }
}
