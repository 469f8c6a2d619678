//! Example features: dense row-major means or a compressed-sparse-row matrix, with the row operations the
//! objective and the kernels need.
//!
//! Both forms either own their storage or borrow it (`Features<'a>`, copy-on-write): a caller holding a
//! row-major or column-major `f64` matrix (a numpy array, a memory map) fits from it without a copy.
//! Everything the crate builds and stores — models, selected rows, widened copies — is `Features<'static>`,
//! owned.

use std::borrow::Cow;

use ndarray::{Array2, ArrayView1, ArrayView2, ArrayViewMut2, ShapeBuilder};
use rayon::prelude::*;
use serde::{Deserialize, Deserializer, Serialize};

use crate::error::{Error, Result};
use crate::linalg::{axpy, dot};

/// Column `j` as a stored `u32` index, or an error naming `what` when `j ≥ 2^32`.
pub fn column_index(j: usize, what: &'static str) -> Result<u32> {
    u32::try_from(j).map_err(|_| Error::MalformedSparse {
        what,
        detail: format!("column index {j} exceeds the 32-bit column range (at most {})", u32::MAX),
    })
}

/// A compressed-sparse-row matrix of `f64` (row `i` holds `indices[indptr[i]..indptr[i+1]]`), owning or
/// borrowing its three arrays. Column indices are `u32` (scipy's default int32 indices are borrowed as they
/// are; at most 2^32 columns), row pointers `usize` (stored entries may exceed 2^32).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CsrMatrix<'a> {
    /// Number of columns.
    pub n_cols: usize,
    /// Row pointers: row `i` is `indptr[i]..indptr[i+1]` (length `n_rows + 1`).
    pub indptr: Cow<'a, [usize]>,
    /// Column index of each stored entry (increasing within a row).
    pub indices: Cow<'a, [u32]>,
    /// Value of each stored entry.
    pub values: Cow<'a, [f64]>,
}

impl CsrMatrix<'static> {
    /// A CSR matrix owning its arrays (checked later by [`CsrMatrix::validate`]).
    pub fn new(n_cols: usize, indptr: Vec<usize>, indices: Vec<u32>, values: Vec<f64>) -> Self {
        CsrMatrix { n_cols, indptr: indptr.into(), indices: indices.into(), values: values.into() }
    }

    /// Builds a CSR matrix from rows of `(column, value)` pairs; columns must be `< n_cols`.
    pub fn from_rows(n_cols: usize, rows: &[Vec<(usize, f64)>]) -> Result<Self> {
        let mut indptr = Vec::with_capacity(rows.len() + 1);
        let (mut indices, mut values) = (Vec::new(), Vec::new());
        indptr.push(0);
        for row in rows {
            for &(j, v) in row {
                if j >= n_cols {
                    return Err(Error::DimensionMismatch {
                        what: "sparse column index",
                        expected: n_cols,
                        found: j + 1,
                    });
                }
                indices.push(column_index(j, "sparse column index")?);
                values.push(v);
            }
            indptr.push(indices.len());
        }
        Ok(CsrMatrix::new(n_cols, indptr, indices, values))
    }
}

impl<'a> CsrMatrix<'a> {
    /// A CSR matrix borrowing its arrays (checked later by [`CsrMatrix::validate`]).
    pub fn borrowed(n_cols: usize, indptr: &'a [usize], indices: &'a [u32], values: &'a [f64]) -> Self {
        CsrMatrix { n_cols, indptr: indptr.into(), indices: indices.into(), values: values.into() }
    }

    /// The same matrix owning its arrays (copies what was borrowed).
    pub fn into_owned(self) -> CsrMatrix<'static> {
        CsrMatrix {
            n_cols: self.n_cols,
            indptr: self.indptr.into_owned().into(),
            indices: self.indices.into_owned().into(),
            values: self.values.into_owned().into(),
        }
    }

    /// Number of rows.
    pub fn n_rows(&self) -> usize {
        self.indptr.len().saturating_sub(1)
    }

    /// The stored `(indices, values)` of row `i`.
    #[inline]
    pub fn row(&self, i: usize) -> (&[u32], &[f64]) {
        let r = self.indptr[i]..self.indptr[i + 1];
        (&self.indices[r.clone()], &self.values[r])
    }

    /// The rows `idx`, in that order.
    pub fn select_rows(&self, idx: &[usize]) -> CsrMatrix<'static> {
        let (mut indptr, mut indices, mut values) = (vec![0], Vec::new(), Vec::new());
        for &i in idx {
            let (ix, v) = self.row(i);
            indices.extend_from_slice(ix);
            values.extend_from_slice(v);
            indptr.push(indices.len());
        }
        CsrMatrix::new(self.n_cols, indptr, indices, values)
    }

    /// Adds every stored column to `used`.
    pub fn mark_columns(&self, used: &mut ColumnSet) {
        self.indices.iter().for_each(|&j| used.insert(j));
    }

    /// The same matrix on the columns of `kept`, column `j` renumbered [`ColumnSet::rank`]`(j)` (every
    /// stored column must be in `kept`; see [`Self::mark_columns`]). Only the column indices are new: the
    /// row pointers and values are borrowed from `self`.
    pub fn restrict_columns(&self, kept: &ColumnSet) -> CsrMatrix<'_> {
        // In blocks on the pool's threads (each rank is a popcount: see `ranks_into`).
        const BLOCK: usize = 1 << 16;
        let mut indices = vec![0u32; self.indices.len()];
        indices.par_chunks_mut(BLOCK).zip(self.indices.par_chunks(BLOCK)).for_each(|(out, columns)| {
            kept.ranks_into(columns, out);
        });
        CsrMatrix {
            n_cols: kept.len(),
            indptr: Cow::Borrowed(&self.indptr),
            indices: indices.into(),
            values: Cow::Borrowed(&self.values),
        }
    }

    /// The dense `n_rows × n_cols` matrix.
    pub fn to_dense(&self) -> Array2<f64> {
        let mut a = Array2::zeros((self.n_rows(), self.n_cols));
        for i in 0..self.n_rows() {
            let (idx, val) = self.row(i);
            for (&j, &v) in idx.iter().zip(val) {
                a[[i, j as usize]] += v;
            }
        }
        a
    }

    /// Checks the structure (monotone `indptr`, in-range columns) and that every value is finite.
    pub fn validate(&self, what: &'static str) -> Result<()> {
        self.validate_structure(what)?;
        // One vectorised pass when all is well; the row-by-row search only to name a fault.
        if crate::linalg::all_finite(&self.values) {
            return Ok(());
        }
        for i in 0..self.n_rows() {
            if let Some(&v) = self.row(i).1.iter().find(|v| !v.is_finite()) {
                return Err(Error::NonFinite { what, index: i, value: v });
            }
        }
        Ok(())
    }

    /// The structure checks of [`Self::validate`]: monotone `indptr` that covers the entries, and every column
    /// index below `n_cols`.
    pub(crate) fn validate_structure(&self, what: &'static str) -> Result<()> {
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
        match self.indices.iter().copied().max() {
            Some(j) if j as usize >= self.n_cols => {
                Err(Error::DimensionMismatch { what, expected: self.n_cols, found: j as usize + 1 })
            }
            _ => Ok(()),
        }
    }
}

/// The largest feature magnitude a fit accepts: squares and sums of squares of larger values overflow
/// (`(10¹⁶⁰)² = ∞`), and near it the solvers' curvatures lose all precision. Beyond it the data are refused
/// with [`Error::OutOfRange`], naming the feature to rescale.
pub const MAX_MAGNITUDE: f64 = 1e100;

/// A set of columns `j < n` as a bitmap (`n/8` bytes), with each word's rank (the number of members in the
/// words before it) once [`Self::freeze`] has run: the members numbered in increasing order, `j ↦ rank(j)`,
/// in O(1) without an `n`-sized index map.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnSet {
    words: Vec<u64>,
    /// `ranks[w]` = members in `words[..w]`; empty until [`Self::freeze`].
    ranks: Vec<u32>,
}

impl ColumnSet {
    /// The empty set of columns `0..n` (`n ≤ 2^32`).
    pub fn new(n: usize) -> Self {
        ColumnSet { words: vec![0; n.div_ceil(64)], ranks: Vec::new() }
    }

    /// Adds column `j`.
    #[inline]
    pub fn insert(&mut self, j: u32) {
        self.words[j as usize / 64] |= 1 << (j % 64);
    }

    /// Whether `j` is a member (false past the set's width).
    #[inline]
    pub fn contains(&self, j: u32) -> bool {
        self.words.get(j as usize / 64).is_some_and(|w| w >> (j % 64) & 1 == 1)
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether there are no members.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// Computes the ranks [`Self::rank`] reads (after the last [`Self::insert`]).
    pub fn freeze(&mut self) {
        let mut total = 0;
        self.ranks = self
            .words
            .iter()
            .map(|w| {
                let before = total;
                total += w.count_ones();
                before
            })
            .collect();
    }

    /// The position of member `j` among the members in increasing order: the members below it (needs
    /// [`Self::freeze`]).
    #[inline]
    pub fn rank(&self, j: u32) -> u32 {
        let (w, bit) = (j as usize / 64, j % 64);
        self.ranks[w] + (self.words[w] & ((1u64 << bit) - 1)).count_ones()
    }

    /// `out[k] = rank(columns[k])`. With the CPU's population count where it has one: the portable build
    /// counts bits in a dozen instructions (1.7·10⁶ ranks of a text set: 3.4 → 2.4 ms on one core).
    pub fn ranks_into(&self, columns: &[u32], out: &mut [u32]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("popcnt") {
            #[target_feature(enable = "popcnt")]
            fn with_popcnt(set: &ColumnSet, columns: &[u32], out: &mut [u32]) {
                out.iter_mut().zip(columns).for_each(|(o, &j)| *o = set.rank(j));
            }
            // SAFETY: the CPU has the instruction.
            return unsafe { with_popcnt(self, columns, out) };
        }
        out.iter_mut().zip(columns).for_each(|(o, &j)| *o = self.rank(j));
    }

    /// Appends the `n` entries of the vector that holds `values[r]` at the `r`-th member and 0 elsewhere
    /// (`values` has one value per member, `n` covers every member), in one sequential pass.
    pub fn spread(&self, values: &[f64], n: usize, out: &mut Vec<f64>) {
        const ZEROS: [f64; 64] = [0.0; 64];
        let mut values = values.iter();
        for (w, &word) in self.words.iter().enumerate() {
            let base = out.len();
            out.extend_from_slice(&ZEROS[..(n - (w * 64).min(n)).min(64)]);
            let mut bits = word;
            while bits != 0 {
                out[base + bits.trailing_zeros() as usize] = *values.next().expect("a value per member");
                bits &= bits - 1;
            }
        }
    }

    /// The members in increasing order.
    pub fn members(&self) -> impl Iterator<Item = u32> + '_ {
        self.words.iter().enumerate().flat_map(|(w, &word)| {
            let mut bits = word;
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let j = (w * 64) as u32 + bits.trailing_zeros();
                    bits &= bits - 1;
                    j
                })
            })
        })
    }
}

/// A dense `f64` matrix that owns or borrows its values, stored row after row or (for a borrowed
/// column-major array, e.g. a Fortran-ordered numpy array) column after column.
///
/// Every row operation reads either layout: a column-major row is a strided walk (entry `j` of row `i` at
/// `i + j·n_rows`). Code that needs rows as contiguous slices (the kernels' blocked products) asks for
/// [`Self::row_major`], which copies a column-major matrix once.
#[derive(Debug, Clone)]
pub struct DenseMatrix<'a> {
    values: Cow<'a, [f64]>,
    n_rows: usize,
    n_cols: usize,
    column_major: bool,
}

impl DenseMatrix<'static> {
    /// The rows of `a`, owned (copied into row-major order if `a` is not already).
    pub fn from_array(a: Array2<f64>) -> Self {
        let (n_rows, n_cols) = a.dim();
        let a = if a.is_standard_layout() { a } else { a.as_standard_layout().into_owned() };
        let (mut values, offset) = a.into_raw_vec_and_offset();
        if let Some(o) = offset.filter(|&o| o > 0) {
            values.drain(..o);
        }
        values.truncate(n_rows * n_cols);
        DenseMatrix { values: values.into(), n_rows, n_cols, column_major: false }
    }
}

impl<'a> DenseMatrix<'a> {
    /// Borrows `a` when it is contiguous in row-major or in column-major order; otherwise copies it into
    /// row-major order.
    pub fn from_view(a: ArrayView2<'a, f64>) -> Self {
        let (n_rows, n_cols) = a.dim();
        if let Some(values) = a.to_slice() {
            return DenseMatrix { values: values.into(), n_rows, n_cols, column_major: false };
        }
        match a.reversed_axes().to_slice() {
            Some(values) => DenseMatrix { values: values.into(), n_rows, n_cols, column_major: true },
            None => DenseMatrix::from_array(a.as_standard_layout().into_owned()),
        }
    }

    /// Number of rows.
    #[inline]
    pub fn nrows(&self) -> usize {
        self.n_rows
    }

    /// Number of columns.
    #[inline]
    pub fn ncols(&self) -> usize {
        self.n_cols
    }

    /// Whether the values are stored column after column.
    pub fn is_column_major(&self) -> bool {
        self.column_major
    }

    /// Row `i` (strided when column-major).
    #[inline]
    pub fn row(&self, i: usize) -> ArrayView1<'_, f64> {
        self.view().index_axis_move(ndarray::Axis(0), i)
    }

    /// Row `i` as a contiguous slice, when the matrix is row-major.
    #[inline]
    pub fn row_slice(&self, i: usize) -> Option<&[f64]> {
        (!self.column_major).then(|| &self.values[i * self.n_cols..(i + 1) * self.n_cols])
    }

    /// The entries of column-major row `i`, in column order.
    #[inline]
    fn strided_row(&self, i: usize) -> impl Iterator<Item = f64> + '_ {
        self.values[i..].iter().step_by(self.n_rows).copied()
    }

    /// `x_iᵀ w` (the first `ncols` entries of `w`).
    #[inline]
    pub fn row_dot(&self, i: usize, w: &[f64]) -> f64 {
        match self.row_slice(i) {
            Some(r) => dot(r, w),
            None => self.strided_row(i).zip(w).map(|(v, w)| v * w).sum(),
        }
    }

    /// `(x_iᵀw, ‖x_i‖²)` in one pass over the row.
    #[inline]
    pub fn row_dot_norm2(&self, i: usize, w: &[f64]) -> (f64, f64) {
        match self.row_slice(i) {
            Some(r) => crate::linalg::dot_norm2(r, w),
            None => self.strided_row(i).zip(w).fold((0.0, 0.0), |(d, s), (v, w)| (d + v * w, s + v * v)),
        }
    }

    /// `‖x_i‖²`.
    #[inline]
    pub fn row_norm2(&self, i: usize) -> f64 {
        match self.row_slice(i) {
            Some(r) => dot(r, r),
            None => self.strided_row(i).map(|v| v * v).sum(),
        }
    }

    /// `out += alpha · x_i`.
    #[inline]
    pub fn row_axpy(&self, i: usize, alpha: f64, out: &mut [f64]) {
        match self.row_slice(i) {
            Some(r) => axpy(alpha, r, out),
            None => self.strided_row(i).zip(out).for_each(|(v, o)| *o += alpha * v),
        }
    }

    /// Number of values (`nrows · ncols`).
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// All values, row after row, when the matrix is row-major.
    pub fn as_slice(&self) -> Option<&[f64]> {
        (!self.column_major).then_some(&self.values[..])
    }

    /// The matrix as an ndarray view (in its own layout).
    pub fn view(&self) -> ArrayView2<'_, f64> {
        let shape = (self.n_rows, self.n_cols).set_f(self.column_major);
        ArrayView2::from_shape(shape, &self.values).expect("n_rows × n_cols values")
    }

    /// The matrix as a mutable ndarray view (copies borrowed values first).
    pub fn view_mut(&mut self) -> ArrayViewMut2<'_, f64> {
        let shape = (self.n_rows, self.n_cols).set_f(self.column_major);
        ArrayViewMut2::from_shape(shape, self.values.to_mut()).expect("n_rows × n_cols values")
    }

    /// The same rows compressed (CSR), if at most a third of the entries are non-zero (a pass over them
    /// then reads less than half the bytes) and a column index fits in `u32`; else `None`.
    ///
    /// One pass, no count first: the density of some 64 rows spread over the matrix sizes the copy, or,
    /// above a third, ends there without allocating (dense rows cost a look at 64 of them). Each row is
    /// compacted into a row-sized buffer in L1 without a branch per entry (with AVX2, 4 entries at a time:
    /// the non-zero lanes' mask picks the permutation that moves them to the front), then appended. The copy
    /// grows at most to its bound of a third of the entries: past it, the rows are read as they are. 5,000
    /// MNIST images: 2.6 ms, where counting first took 5.0 ms and a pass that only reads them 1.9 ms (a
    /// standalone loop, best of 60).
    pub fn compressed(&self) -> Option<CsrMatrix<'static>> {
        let (n_rows, n_cols, total) = (self.n_rows, self.n_cols, self.values.len());
        if n_cols as u64 > 1 << 32 {
            return None;
        }
        let bound = total / 3;
        let stride = n_rows.div_ceil(64).max(1);
        let (sampled_rows, sampled) = (0..n_rows)
            .step_by(stride)
            .fold((0, 0), |(r, nz), i| (r + 1, nz + self.row(i).iter().filter(|&&v| v != 0.0).count()));
        if 3 * sampled > sampled_rows * n_cols {
            return None;
        }
        // The sample's density with an eighth to spare, and a row.
        let guess = (sampled as f64 / sampled_rows.max(1) as f64 * n_rows as f64 * 1.125) as usize + n_cols;
        let capacity = guess.min(bound);
        let (mut indices, mut values) = (Vec::with_capacity(capacity), Vec::with_capacity(capacity));
        let (mut row_indices, mut row_values) = (vec![0u32; n_cols + 4], vec![0.0; n_cols + 4]);
        let mut indptr = Vec::with_capacity(n_rows + 1);
        indptr.push(0);
        let mut gathered = Vec::new();
        for i in 0..n_rows {
            let row = match self.as_slice() {
                Some(all) => &all[i * n_cols..(i + 1) * n_cols],
                None => {
                    gathered.clear();
                    gathered.extend(self.row(i).iter());
                    &gathered[..]
                }
            };
            let m = crate::linalg::compact_nonzeros(row, &mut row_indices, &mut row_values);
            let len = indices.len() + m;
            if len > bound {
                return None;
            }
            if len > indices.capacity() {
                // Double, up to the bound (a guess short of the rows' density).
                let grown = (2 * indices.capacity()).clamp(len, bound);
                indices.reserve_exact(grown - indices.len());
                values.reserve_exact(grown - values.len());
            }
            indices.extend_from_slice(&row_indices[..m]);
            values.extend_from_slice(&row_values[..m]);
            indptr.push(len);
        }
        Some(CsrMatrix::new(n_cols, indptr, indices, values))
    }

    /// An owned row-major (standard layout) ndarray copy, whatever the layout.
    pub fn to_array(&self) -> Array2<f64> {
        self.view().as_standard_layout().into_owned()
    }

    /// The same matrix row-major: itself, or a row-major copy of a column-major matrix.
    pub fn row_major(&self) -> Cow<'_, DenseMatrix<'a>> {
        if self.column_major { Cow::Owned(DenseMatrix::from_array(self.to_array())) } else { Cow::Borrowed(self) }
    }

    /// Whether the values are borrowed.
    pub fn is_view(&self) -> bool {
        matches!(self.values, Cow::Borrowed(_))
    }

    /// The same matrix borrowing these values (no copy).
    pub fn reborrow(&self) -> DenseMatrix<'_> {
        let DenseMatrix { n_rows, n_cols, column_major, .. } = *self;
        DenseMatrix { values: Cow::Borrowed(&self.values), n_rows, n_cols, column_major }
    }

    /// The same matrix owning its values (copies them if borrowed).
    pub fn into_owned(self) -> DenseMatrix<'static> {
        let DenseMatrix { values, n_rows, n_cols, column_major } = self;
        DenseMatrix { values: values.into_owned().into(), n_rows, n_cols, column_major }
    }
}

/// Equal when the entries are, whatever the layouts.
impl PartialEq for DenseMatrix<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.view() == other.view()
    }
}

/// Serialised as ndarray serialises an `Array2` (`{"v":1,"dim":[rows,cols],"data":[...]}`).
impl Serialize for DenseMatrix<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.view().serialize(s)
    }
}

impl<'de> Deserialize<'de> for DenseMatrix<'_> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        Ok(DenseMatrix::from_array(Array2::<f64>::deserialize(d)?))
    }
}

/// The row products of [`Features`] for the solvers' inner loops, without a bounds check per stored entry of
/// sparse rows (the checks were 6 % of a dual coordinate descent fit on MNIST rows): the column indices are
/// checked once, all below `n_cols`, when this is made, and each product checks that its vector has
/// `n_cols` entries. Only indices the matrix owns (read from a file, compressed from dense rows, renumbered
/// to the used columns): borrowed ones, e.g. a numpy array's, could be changed by another thread during the
/// fit. Other rows (borrowed or not validated indices) and dense rows take [`Features`]' own products.
#[derive(Clone, Copy)]
pub(crate) struct RowProducts<'m, 'a> {
    x: &'m Features<'a>,
    /// The sparse rows own their column indices, and every one is below `n_cols`.
    in_range: bool,
}

impl<'m, 'a> RowProducts<'m, 'a> {
    /// The products of the rows of `x` (sparse rows: [`CsrMatrix::validate_structure`], one pass over the
    /// column indices).
    pub(crate) fn new(x: &'m Features<'a>) -> Self {
        let in_range = match x {
            Features::Sparse(m) => matches!(m.indices, Cow::Owned(_)) && m.validate_structure("features").is_ok(),
            Features::Dense(_) => false,
        };
        RowProducts { x, in_range }
    }

    /// `x_iᵀw`, as [`Features::row_dot`].
    #[inline]
    pub(crate) fn dot(&self, i: usize, w: &[f64]) -> f64 {
        match self.x {
            Features::Sparse(m) if self.in_range && w.len() >= m.n_cols => {
                let (idx, val) = m.row(i);
                // SAFETY: every index is below `n_cols ≤ w.len()` (checked in `new`; `x` is borrowed since).
                unsafe { crate::linalg::gather_dot_unchecked(idx, val, w) }
            }
            x => x.row_dot(i, w),
        }
    }

    /// Asks the cache for the start of row `i` (the next row to visit).
    #[inline]
    pub(crate) fn prefetch(&self, i: usize) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            // SAFETY (both): SSE is part of x86_64, and a prefetch only hints (it never faults).
            match self.x {
                Features::Sparse(m) => {
                    let start = m.indptr[i];
                    if let (Some(j), Some(v)) = (m.indices.get(start), m.values.get(start)) {
                        unsafe {
                            _mm_prefetch::<_MM_HINT_T0>((j as *const u32).cast());
                            _mm_prefetch::<_MM_HINT_T0>((v as *const f64).cast());
                        }
                    }
                }
                Features::Dense(a) => {
                    if let Some(v) = a.as_slice().and_then(|all| all.get(i * a.n_cols)) {
                        unsafe { _mm_prefetch::<_MM_HINT_T0>((v as *const f64).cast()) };
                    }
                }
            }
        }
    }

    /// `out += alpha · x_i`, as [`Features::row_axpy`].
    #[inline(always)]
    pub(crate) fn axpy(&self, i: usize, alpha: f64, out: &mut [f64]) {
        match self.x {
            Features::Sparse(m) if self.in_range && out.len() >= m.n_cols => {
                let (idx, val) = m.row(i);
                // SAFETY: as in `dot`.
                unsafe { crate::linalg::scatter_axpy_unchecked(idx, val, alpha, out) }
            }
            x => x.row_axpy(i, alpha, out),
        }
    }
}

/// The example means `x_i`, one row per example.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Features<'a> {
    /// Row-major dense means.
    Dense(DenseMatrix<'a>),
    /// Sparse means.
    Sparse(CsrMatrix<'a>),
}

impl<'a> Features<'a> {
    /// Dense features owning the rows of `a`.
    pub fn dense(a: Array2<f64>) -> Self {
        Features::Dense(DenseMatrix::from_array(a))
    }

    /// The same features borrowing these values (no copy).
    pub fn reborrow(&self) -> Features<'_> {
        match self {
            Features::Dense(d) => Features::Dense(d.reborrow()),
            Features::Sparse(s) => Features::Sparse(CsrMatrix::borrowed(s.n_cols, &s.indptr, &s.indices, &s.values)),
        }
    }

    /// Dense features borrowing `a`'s rows when `a` is row-major and contiguous (else a row-major copy).
    pub fn dense_view(a: ArrayView2<'a, f64>) -> Self {
        Features::Dense(DenseMatrix::from_view(a))
    }

    /// The same features owning their storage (copies what was borrowed).
    pub fn into_owned(self) -> Features<'static> {
        match self {
            Features::Dense(a) => Features::Dense(a.into_owned()),
            Features::Sparse(m) => Features::Sparse(m.into_owned()),
        }
    }

    /// The same features with dense rows row-major: themselves, or a row-major copy of column-major rows
    /// (for code that reads whole rows as slices).
    pub fn row_major(&self) -> Cow<'_, Features<'a>> {
        match self {
            Features::Dense(a) if a.is_column_major() => Cow::Owned(Features::Dense(a.row_major().into_owned())),
            _ => Cow::Borrowed(self),
        }
    }

    /// Whether the values are borrowed (dense rows, or a sparse matrix's stored values).
    pub fn is_view(&self) -> bool {
        match self {
            Features::Dense(a) => a.is_view(),
            Features::Sparse(m) => matches!(m.values, Cow::Borrowed(_)),
        }
    }

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

    /// `max_i |x_ij|` for every column `j`, in one pass over the stored entries.
    pub fn column_max_abs(&self) -> Vec<f64> {
        let mut out = vec![0.0f64; self.n_features()];
        match self {
            Features::Dense(a) => (0..a.nrows()).for_each(|i| {
                out.iter_mut().zip(a.row(i)).for_each(|(m, v)| *m = m.max(v.abs()));
            }),
            Features::Sparse(m) => {
                m.indices.iter().zip(m.values.iter()).for_each(|(&j, v)| out[j as usize] = out[j as usize].max(v.abs()))
            }
        }
        out
    }

    /// `Σ_i c_i x_ij²` for every column `j`, `c_i = weight(i)`: O(stored entries).
    pub fn weighted_column_squares(&self, weight: impl Fn(usize) -> f64) -> Vec<f64> {
        let mut out = vec![0.0f64; self.n_features()];
        match self {
            Features::Dense(a) => (0..a.nrows()).for_each(|i| {
                let c = weight(i);
                out.iter_mut().zip(a.row(i)).for_each(|(o, v)| *o += c * v * v);
            }),
            Features::Sparse(m) => (0..m.n_rows()).for_each(|i| {
                let (c, (idx, values)) = (weight(i), m.row(i));
                idx.iter().zip(values).for_each(|(&j, v)| out[j as usize] += c * v * v);
            }),
        }
        out
    }

    /// A column `j` holding one non-zero value `B` in every row of `rows` (e.g. LIBLINEAR's `-B` bias feature,
    /// or a user's column of ones), as `(j, B)`; of several, the largest `|B|` (the first such column on a
    /// tie). `None` for no rows. The first row's non-zeros are the candidates, each looked for in the next
    /// rows at its offset from the end of the previous one (a sparse row's stored entries need not be
    /// sorted): O(1) per row for a column at a fixed offset from either end, as a bias feature is.
    pub fn constant_column(&self, mut rows: impl Iterator<Item = usize>) -> Option<(usize, f64)> {
        // (column, value, stored position in the last row, measured from its end)
        let first = rows.next()?;
        let mut candidates: Vec<(u32, f64, usize)> = match self {
            Features::Dense(a) => {
                let n = a.ncols();
                a.row(first)
                    .iter()
                    .enumerate()
                    .filter(|&(_, &v)| v != 0.0)
                    .map(|(j, &v)| (j as u32, v, n - j))
                    .collect()
            }
            Features::Sparse(m) => {
                let (idx, val) = m.row(first);
                let n = idx.len();
                idx.iter()
                    .zip(val)
                    .enumerate()
                    .filter(|(_, (_, v))| **v != 0.0)
                    .map(|(k, (&j, &v))| (j, v, n - k))
                    .collect()
            }
        };
        for i in rows {
            if candidates.is_empty() {
                return None;
            }
            match self {
                Features::Dense(a) => match a.row_slice(i) {
                    Some(row) => candidates.retain(|&(j, v, _)| row[j as usize] == v),
                    None => candidates.retain(|&(j, v, _)| a.row(i)[j as usize] == v),
                },
                Features::Sparse(m) => {
                    let (idx, val) = m.row(i);
                    let n = idx.len();
                    candidates.retain_mut(|(j, v, from_end)| {
                        let at = n
                            .checked_sub(*from_end)
                            .filter(|&k| idx[k] == *j)
                            .or_else(|| idx.iter().position(|c| c == j));
                        at.is_some_and(|k| {
                            *from_end = n - k;
                            val[k] == *v
                        })
                    });
                }
            }
        }
        candidates.iter().fold(None, |best: Option<(usize, f64)>, &(j, v, _)| match best {
            Some((_, b)) if b.abs() >= v.abs() => best,
            _ => Some((j as usize, v)),
        })
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
            Features::Dense(a) => a.row_dot(i, w),
            Features::Sparse(m) => {
                let (idx, val) = m.row(i);
                crate::linalg::gather_dot(idx, val, w)
            }
        }
    }

    /// `x_iᵀ w` over the features `j < w.len()` only: features past the end of `w` count as zero
    /// coefficients (a model trained on fewer features; LIBLINEAR's rule).
    #[inline]
    pub fn row_dot_truncated(&self, i: usize, w: &[f64]) -> f64 {
        match self {
            Features::Dense(a) => a.row_dot(i, w),
            Features::Sparse(m) => {
                let (idx, val) = m.row(i);
                idx.iter().zip(val).filter(|(j, _)| (**j as usize) < w.len()).map(|(&j, &v)| v * w[j as usize]).sum()
            }
        }
    }

    /// The same rows with `n ≥ n_features` columns, the new ones zero.
    pub fn widened(&self, n: usize) -> Features<'static> {
        debug_assert!(n >= self.n_features());
        match self {
            Features::Dense(a) => {
                let mut wide = Array2::zeros((a.nrows(), n));
                wide.slice_mut(ndarray::s![.., ..a.ncols()]).assign(&a.view());
                Features::dense(wide)
            }
            Features::Sparse(m) => Features::Sparse(CsrMatrix { n_cols: n, ..m.clone().into_owned() }),
        }
    }

    /// `(x_iᵀw, ‖x_i‖²)` in one pass over the row (each equal to [`Self::row_dot`] and [`Self::row_norm2`]).
    #[inline]
    pub fn row_dot_norm2(&self, i: usize, w: &[f64]) -> (f64, f64) {
        match self {
            Features::Dense(a) => a.row_dot_norm2(i, w),
            Features::Sparse(m) => {
                let (idx, val) = m.row(i);
                (crate::linalg::gather_dot(idx, val, w), crate::linalg::dot(val, val))
            }
        }
    }

    /// `‖x_i‖²`.
    #[inline]
    pub fn row_norm2(&self, i: usize) -> f64 {
        match self {
            Features::Dense(a) => a.row_norm2(i),
            Features::Sparse(m) => {
                let values = m.row(i).1;
                dot(values, values)
            }
        }
    }

    /// `out += alpha · x_i`.
    #[inline]
    pub fn row_axpy(&self, i: usize, alpha: f64, out: &mut [f64]) {
        match self {
            Features::Dense(a) => a.row_axpy(i, alpha, out),
            Features::Sparse(m) => {
                let (idx, val) = m.row(i);
                for (&j, &v) in idx.iter().zip(val) {
                    out[j as usize] += alpha * v;
                }
            }
        }
    }

    /// The Gram matrix `G_rc = x_{rows[r]}ᵀ x_{rows[c]}` of the rows `rows`, row-major `m × m`. Sparse rows
    /// are multiplied column by column (each stored column `j` adds `x_rj x_cj` for every pair of the
    /// rows that store it), which costs `Σ_j m_j(m_j + 1)/2` for `m_j` rows storing column `j` — never
    /// O(m·n). Only the upper triangle is computed, then mirrored.
    pub fn gram(&self, rows: &[usize]) -> Vec<f64> {
        let m = rows.len();
        let mut g = vec![0.0; m * m];
        match self {
            Features::Dense(a) => {
                // The rows as slices (a column-major matrix's rows gathered once).
                let rows: Vec<Cow<[f64]>> = rows
                    .iter()
                    .map(|&i| a.row_slice(i).map_or_else(|| a.row(i).to_vec().into(), Cow::Borrowed))
                    .collect();
                for r in 0..m {
                    for c in r..m {
                        g[r * m + c] = dot(&rows[r], &rows[c]);
                    }
                }
            }
            Features::Sparse(x) => {
                // (column, position in `rows`, value), sorted by column (then position, then value order).
                let mut entries: Vec<(u32, usize, f64)> = Vec::new();
                for (r, &i) in rows.iter().enumerate() {
                    let (idx, val) = x.row(i);
                    entries.extend(idx.iter().zip(val).map(|(&j, &v)| (j, r, v)));
                }
                entries.sort_by_key(|&(j, r, _)| (j, r));
                // The upper triangle (`r ≤ c`: a group is in row order). A row that stores a column twice (a
                // non-canonical CSR matrix may) pairs those entries both ways.
                for group in entries.chunk_by(|a, b| a.0 == b.0) {
                    for (k, &(_, r, u)) in group.iter().enumerate() {
                        g[r * m + r] += u * u;
                        for &(_, c, v) in &group[k + 1..] {
                            g[r * m + c] += if c == r { 2.0 * u * v } else { u * v };
                        }
                    }
                }
            }
        }
        // The lower triangle mirrors the upper one (the same products, so the same values).
        for r in 0..m {
            for c in r + 1..m {
                g[c * m + r] = g[r * m + c];
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
            Features::Dense(a) => a.to_array(),
            Features::Sparse(m) => m.to_dense(),
        }
    }

    /// The rows `idx`, in that order, in the same storage form.
    pub fn select_rows(&self, idx: &[usize]) -> Features<'static> {
        match self {
            Features::Dense(a) => Features::dense(a.view().select(ndarray::Axis(0), idx)),
            Features::Sparse(m) => Features::Sparse(m.select_rows(idx)),
        }
    }

    pub(crate) fn validate(&self) -> Result<()> {
        self.validate_as("features")
    }

    /// [`Features::validate`] naming the matrix `what` in errors: the structure, finite values, and no
    /// magnitude beyond [`MAX_MAGNITUDE`] (an [`Error::OutOfRange`] that names the feature to rescale).
    pub(crate) fn validate_as(&self, what: &'static str) -> Result<()> {
        if let Features::Sparse(m) = self {
            m.validate_structure(what)?;
        }
        if self.values_in_range() {
            return Ok(());
        }
        for i in 0..self.n_samples() {
            let mut fault = Ok(());
            self.for_each_in_row(i, |j, v| {
                if fault.is_ok() && !v.is_finite() {
                    fault = Err(Error::NonFinite { what, index: i, value: v });
                } else if fault.is_ok() && v.abs() > MAX_MAGNITUDE {
                    fault = Err(Error::OutOfRange { what, index: i, feature: j, value: v, limit: MAX_MAGNITUDE });
                }
            });
            fault?;
        }
        Ok(())
    }

    /// Whether every stored value is within `±MAX_MAGNITUDE` (so finite): one pass over them.
    pub(crate) fn values_in_range(&self) -> bool {
        let values = match self {
            Features::Dense(a) => &a.values,
            Features::Sparse(m) => &m.values,
        };
        crate::linalg::all_within(values, MAX_MAGNITUDE)
    }

    /// Calls `f(j, x_ij)` for the stored entries of row `i`.
    fn for_each_in_row(&self, i: usize, mut f: impl FnMut(usize, f64)) {
        match self {
            Features::Dense(a) => a.row(i).iter().enumerate().for_each(|(j, &v)| f(j, v)),
            Features::Sparse(m) => {
                let (idx, val) = m.row(i);
                idx.iter().zip(val).for_each(|(&j, &v)| f(j as usize, v));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::ShapeBuilder;

    /// `spread` puts the `r`-th value at the `r`-th member and zeros elsewhere, across word boundaries and a
    /// last partial word; `members` and `rank` agree with it.
    #[test]
    fn spread_inverts_the_ranking_of_the_members() {
        for n in [1, 63, 64, 65, 200] {
            let members: Vec<u32> = [0, 5, 63, 64, 127, 128, 199].into_iter().filter(|&j| j < n as u32).collect();
            let mut set = ColumnSet::new(n);
            members.iter().for_each(|&j| set.insert(j));
            set.freeze();
            let values: Vec<f64> = (1..=members.len()).map(|v| v as f64).collect();
            let mut out = vec![-1.0]; // appended to, not overwritten
            set.spread(&values, n, &mut out);
            let mut expected = vec![0.0; n];
            for (r, &j) in members.iter().enumerate() {
                expected[j as usize] = values[r];
                assert_eq!(set.rank(j) as usize, r);
            }
            assert_eq!(out[0], -1.0);
            assert_eq!(&out[1..], &expected[..], "n = {n}");
            assert_eq!(set.members().collect::<Vec<_>>(), members);
        }
    }

    /// The same 5 × 19 matrix row-major and borrowed column-major (19 columns: past the SIMD width).
    fn both() -> (Array2<f64>, Array2<f64>) {
        let rows = Array2::from_shape_fn((5, 19), |(i, j)| ((3 * i + 7 * j) % 11) as f64 - 4.5);
        let mut columns = Array2::zeros((5, 19).f());
        columns.assign(&rows);
        (rows, columns)
    }

    /// The inner loops' row products equal [`Features`]' own bit for bit: unchecked on rows that own their
    /// indices, all in range; checked on borrowed indices, on rows with an index beyond `n_cols` (a matrix not
    /// validated), or for a short vector.
    #[test]
    fn row_products_equal_the_checked_ones_and_fall_back_on_indices_out_of_range_or_borrowed() {
        let rows = vec![
            vec![(0, 1.5), (3, -2.0), (4, 0.25)],
            vec![],
            vec![(1, 3.0), (2, 1e-3), (3, 7.0), (4, -1.0), (0, 2.0)],
        ];
        let valid = Features::Sparse(CsrMatrix::from_rows(5, &rows).unwrap());
        let beyond = Features::Sparse(CsrMatrix::new(3, vec![0, 2], vec![0, 4], vec![1.0, 2.0]));
        let Features::Sparse(m) = &valid else { unreachable!() };
        let borrowed = Features::Sparse(CsrMatrix::borrowed(5, &m.indptr, &m.indices, &m.values));
        let w = [0.5, -1.0, 2.0, 0.125, 3.0];
        for x in [&valid, &beyond, &borrowed] {
            let products = RowProducts::new(x);
            for i in 0..x.n_samples() {
                assert_eq!(products.dot(i, &w).to_bits(), x.row_dot(i, &w).to_bits());
                let (mut a, mut b) = (w.to_vec(), w.to_vec());
                products.axpy(i, 0.3, &mut a);
                x.row_axpy(i, 0.3, &mut b);
                assert_eq!(a, b);
            }
        }
        assert!(RowProducts::new(&valid).in_range);
        assert!(!RowProducts::new(&beyond).in_range && !RowProducts::new(&borrowed).in_range);
        // A vector shorter than `n_cols` takes the checked product, which panics past its end.
        let short = std::panic::catch_unwind(|| RowProducts::new(&valid).dot(0, &w[..4]));
        assert!(short.is_err());
    }

    /// Rows at most a third non-zero compress to the same rows, from either layout; denser ones do not.
    #[test]
    fn sparse_enough_dense_rows_compress_to_the_same_rows() {
        let mut rows = Array2::<f64>::zeros((6, 9));
        for (i, j) in [(0, 0), (0, 8), (2, 3), (3, 1), (3, 2), (3, 7), (5, 4)] {
            rows[(i, j)] = 1.5 + (i * 9 + j) as f64;
        }
        let mut columns = Array2::zeros((6, 9).f());
        columns.assign(&rows);
        for dense in [DenseMatrix::from_view(rows.view()), DenseMatrix::from_view(columns.view())] {
            let sparse = dense.compressed().expect("7 of 54 entries are non-zero");
            assert_eq!(sparse.n_rows(), 6);
            assert_eq!(sparse.to_dense(), rows);
            assert_eq!(sparse.row(4).0.len(), 0);
        }
        rows.slice_mut(ndarray::s![..3, ..]).fill(2.0);
        assert!(DenseMatrix::from_view(rows.view()).compressed().is_none(), "31 of 54 are non-zero");
        // The bound is exact, wherever the rows that reach it are: 18 of 54 compress, 19 do not.
        let mut third = Array2::<f64>::zeros((6, 9));
        third.slice_mut(ndarray::s![4.., ..]).fill(-1.0);
        assert_eq!(DenseMatrix::from_view(third.view()).compressed().expect("18 of 54").to_dense(), third);
        third[(0, 0)] = 3.0;
        assert!(DenseMatrix::from_view(third.view()).compressed().is_none(), "19 of 54 are non-zero");
    }

    /// The copy sized by a sample that misses the rows' density still compresses them exactly (it grows),
    /// and gives up where the rows it did not sample bring them past a third.
    #[test]
    fn compressed_rows_outgrow_their_sample() {
        // 200 rows: every 4th is sampled (empty here); 40 % of the others' entries are non-zero.
        let (l, n) = (200, 10);
        let mut rows = Array2::<f64>::zeros((l, n));
        for i in (0..l).filter(|i| i % 4 != 0) {
            for j in (i % 3..n).step_by(3).take(4) {
                rows[(i, j)] = (i * n + j) as f64 / 13.0 - 5.0;
            }
        }
        let non_zeros = rows.iter().filter(|&&v| v != 0.0).count();
        assert!(3 * non_zeros <= l * n, "{non_zeros} of {}", l * n);
        let sparse = DenseMatrix::from_view(rows.view()).compressed().expect("at most a third non-zero");
        assert_eq!(sparse.to_dense(), rows);
        // Two more non-zeros per unsampled row: past a third, and no copy.
        for i in (0..l).filter(|i| i % 4 != 0) {
            rows[(i, (i + 1) % n)] = 1.0;
            rows[(i, (i + 2) % n)] = 1.0;
        }
        assert!(3 * rows.iter().filter(|&&v| v != 0.0).count() > l * n);
        assert!(DenseMatrix::from_view(rows.view()).compressed().is_none());
    }

    /// The Gram matrix of sparse rows, an example repeated and a row storing a column twice (a non-canonical
    /// CSR matrix) included, is that of the same rows dense, and symmetric.
    #[test]
    fn sparse_gram_matches_the_dense_one() {
        let rows =
            vec![vec![(0, 1.5), (3, -2.0)], vec![], vec![(1, 0.5), (3, 4.0), (4, 1.0)], vec![(0, -1.0), (4, 2.5)]];
        let sparse = Features::Sparse(CsrMatrix::from_rows(5, &rows).unwrap());
        let dense = Features::dense(sparse.to_dense());
        let pick = [2, 0, 3, 1, 2];
        let (g, d) = (sparse.gram(&pick), dense.gram(&pick));
        assert!(g.iter().zip(&d).all(|(a, b)| (a - b).abs() <= 1e-14 * b.abs().max(1.0)), "{g:?} against {d:?}");
        // Row 0 stores column 3 twice: x_0 = (1.5, 0, 0, -2 + 3, 0).
        let twice =
            Features::Sparse(CsrMatrix::new(5, vec![0, 3, 5], vec![0, 3, 3, 1, 3], vec![1.5, -2.0, 3.0, 0.5, 4.0]));
        assert_eq!(twice.gram(&[0, 1]), vec![1.5 * 1.5 + 1.0, 4.0, 4.0, 0.25 + 16.0]);
    }

    #[test]
    fn a_column_major_view_is_borrowed_and_reads_the_same_rows() {
        let (rows, columns) = both();
        let (r, c) = (Features::dense_view(rows.view()), Features::dense_view(columns.view()));
        let Features::Dense(m) = &c else { unreachable!() };
        assert!(c.is_view() && m.is_column_major() && m.as_slice().is_none());
        assert_eq!(r, c);
        let w: Vec<f64> = (0..19).map(|j| 0.25 * j as f64 - 1.0).collect();
        for i in 0..5 {
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * (1.0 + b.abs());
            assert!(close(c.row_dot(i, &w), r.row_dot(i, &w)));
            let ((d, s), (e, t)) = (c.row_dot_norm2(i, &w), r.row_dot_norm2(i, &w));
            assert!(close(d, e) && close(s, t) && close(c.row_norm2(i), t));
            let (mut u, mut v) = (w.clone(), w.clone());
            c.row_axpy(i, -0.5, &mut u);
            r.row_axpy(i, -0.5, &mut v);
            assert!(u.iter().zip(&v).all(|(a, b)| close(*a, *b)));
            assert_eq!(m.row(i), rows.row(i));
        }
        let g: Vec<f64> = r.gram(&[4, 0, 2]);
        assert!(c.gram(&[4, 0, 2]).iter().zip(&g).all(|(a, b)| (a - b).abs() <= 1e-12 * b.abs().max(1.0)));
        let copy = c.row_major();
        assert!(matches!(&*copy, Features::Dense(m) if !m.is_column_major()) && *copy == r);
        assert_eq!(c.select_rows(&[3, 1]).to_dense(), rows.select(ndarray::Axis(0), &[3, 1]));
        assert!(c.to_dense().is_standard_layout() && c.to_dense() == rows, "copies are row-major");
    }

    #[test]
    fn a_non_finite_entry_of_a_column_major_matrix_names_its_row() {
        let (_, mut columns) = both();
        columns[[3, 17]] = f64::NAN;
        let err = Features::dense_view(columns.view()).validate().unwrap_err();
        assert!(matches!(err, Error::NonFinite { index: 3, .. }), "{err:?}");
    }

    #[test]
    fn neither_c_nor_fortran_contiguous_views_are_copied_row_major() {
        let (rows, _) = both();
        let every_other = rows.slice(ndarray::s![.., ..;2]);
        let Features::Dense(m) = Features::dense_view(every_other) else { unreachable!() };
        assert!(!m.is_view() && !m.is_column_major() && m.view() == every_other);
    }

    /// The constant column is found wherever it sits in dense, column-major and sparse rows (unsorted
    /// entries too), the largest `|B|` of several; a column broken in one row, zero, or NaN is none.
    #[test]
    fn a_constant_column_is_found_in_any_layout() {
        let dense = ndarray::array![[1.0, 2.0, 0.5, -3.0], [1.0, 0.0, 0.5, -3.0], [1.0, 7.0, 0.5, -3.0]];
        let all = || 0..3;
        assert_eq!(Features::dense(dense.clone()).constant_column(all()), Some((3, -3.0)));
        let transposed = dense.t().as_standard_layout().into_owned();
        let fortran = Features::dense_view(transposed.t());
        assert!(matches!(&fortran, Features::Dense(a) if a.is_column_major()));
        assert_eq!(fortran.constant_column(all()), Some((3, -3.0)));
        let mut broken = dense.clone();
        broken[[2, 3]] = -3.0 + 1e-15;
        assert_eq!(Features::dense(broken.clone()).constant_column(all()), Some((0, 1.0)));
        broken[[1, 0]] = 0.0;
        assert_eq!(Features::dense(broken.clone()).constant_column(all()), Some((2, 0.5)));
        broken[[1, 2]] = f64::NAN;
        assert_eq!(Features::dense(broken).constant_column(all()), None);
        // Only the rows given count: row 1 lacks column 1's 2.0.
        assert_eq!(
            Features::dense(ndarray::array![[0.0, 2.0], [0.0, 1.0]]).constant_column([0].into_iter()),
            Some((1, 2.0))
        );
        assert_eq!(Features::dense(ndarray::array![[0.0, 2.0]]).constant_column(std::iter::empty()), None);
        // Sparse rows of different lengths, the constant stored last, first, or in between (unsorted).
        let sparse = CsrMatrix::new(
            6,
            vec![0, 3, 5, 9, 10],
            vec![0, 4, 5, 5, 2, 1, 5, 3, 0, 5],
            vec![0.3, 0.2, 1.0, 1.0, 0.7, 0.1, 1.0, 0.4, 0.9, 1.0],
        );
        assert_eq!(Features::Sparse(sparse).constant_column(0..4), Some((5, 1.0)));
        let missing = CsrMatrix::new(6, vec![0, 2, 3], vec![0, 5, 0], vec![0.3, 1.0, 0.3]);
        assert_eq!(Features::Sparse(missing.clone()).constant_column(0..2), Some((0, 0.3)));
        assert_eq!(Features::Sparse(missing).constant_column([0].into_iter()), Some((5, 1.0)));
    }

    #[test]
    fn column_set_ranks_members_in_increasing_order() {
        let n = 1000;
        let members: Vec<u32> = vec![0, 1, 63, 64, 65, 127, 128, 500, 998, 999];
        let mut set = ColumnSet::new(n);
        members.iter().rev().for_each(|&j| set.insert(j));
        set.insert(64);
        set.freeze();
        assert_eq!(set.len(), members.len());
        assert_eq!(set.members().collect::<Vec<_>>(), members);
        for (k, &j) in members.iter().enumerate() {
            assert_eq!(set.rank(j), k as u32);
        }
        assert!((0..n as u32).all(|j| set.contains(j) == members.contains(&j)));
    }

    #[test]
    fn restricted_columns_keep_each_row_and_borrow_values() {
        let m = CsrMatrix::from_rows(10, &[vec![(2, 1.0), (7, 2.0)], vec![], vec![(7, 3.0), (9, 4.0)]]).unwrap();
        let mut used = ColumnSet::new(10);
        m.mark_columns(&mut used);
        used.freeze();
        let r = m.restrict_columns(&used);
        assert_eq!((r.n_cols, r.indices.as_ref(), r.values.as_ref()), (3, &[0, 1, 1, 2][..], &m.values[..]));
        assert!(matches!(r.values, Cow::Borrowed(_)) && matches!(r.indptr, Cow::Borrowed(_)));
    }
}
