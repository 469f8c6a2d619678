//! The coefficients of a linear model, stored in full or only on the columns a fit could move.
//!
//! On wide sparse data (millions of features, a few per example) a feature that no training example stores
//! and no covariance touches has the optimum `w_j = 0` exactly: its only term in the objective is
//! `λ/2 w_j²` (see `solver::columns`). A model fitted there stores the used columns and their coefficients
//! only, so that neither the fit, nor the model file, nor a prediction pays for the `n`-sized zero vector.

use std::borrow::Cow;

use ndarray::{Array2, ArrayView2};
use serde::{Deserialize, Serialize};

use crate::data::Features;
use crate::error::{Error, Result};
use crate::features::ColumnSet;

/// The `K × n` coefficients of a linear model, one row per hyperplane: every column, or the columns of a
/// support with every other coefficient exactly 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "CoefficientsRepr", try_from = "CoefficientsRepr")]
pub struct Coefficients {
    /// `K × m`: the coefficients of every column (`m = n`), or of the support's columns in increasing order.
    values: Array2<f64>,
    support: Option<Support>,
}

/// The columns whose coefficients are stored (frozen, so that a column's position is its rank; the bitmap may
/// end before `n_features`, after the last member).
#[derive(Debug, Clone)]
struct Support {
    columns: ColumnSet,
    n_features: usize,
}

impl PartialEq for Support {
    /// The same members of the same width, however long the bitmaps.
    fn eq(&self, other: &Self) -> bool {
        self.n_features == other.n_features && self.columns.members().eq(other.columns.members())
    }
}

impl From<Array2<f64>> for Coefficients {
    /// All `n` coefficients of each row.
    fn from(values: Array2<f64>) -> Self {
        Coefficients { values, support: None }
    }
}

impl Coefficients {
    /// The coefficients `values[k, r]` of the `r`-th member of `columns` (frozen, all below `n_features`),
    /// zero on the other columns.
    pub fn on_columns(values: Array2<f64>, columns: ColumnSet, n_features: usize) -> Self {
        assert_eq!(values.ncols(), columns.len(), "one value per member of the support");
        Coefficients { values, support: Some(Support { columns, n_features }) }
    }

    /// [`Self::on_columns`] from a list of columns, checked to be strictly increasing and below
    /// `n_features` (e.g. a model file's `columns`). `n_features` is believed up to `2³²` (columns are
    /// 32-bit) but never allocated: the column bitmap spans the columns listed (`last/8` bytes, checked
    /// against the memory available), so a file cannot make a reader allocate by stating a large width.
    pub fn from_column_list(values: Array2<f64>, columns: &[u32], n_features: usize) -> Result<Self> {
        if n_features > 1 << 32 {
            return Err(Error::Format(format!("n_features = {n_features} is beyond 2^32, the widest sparse model")));
        }
        let span = columns.last().map_or(0, |&j| j as usize + 1);
        // The bitmap's words and ranks: 12 bytes per 64 columns, reserved as 2 f64 per 64.
        crate::memory::reserve("a model's column bitmap", "check the file's columns", &[2, span.div_ceil(64)])?;
        if let Some(w) = columns.windows(2).find(|w| w[0] >= w[1]) {
            return Err(Error::Format(format!("columns must be strictly increasing, found {} then {}", w[0], w[1])));
        }
        if let Some(&j) = columns.last().filter(|&&j| j as usize >= n_features) {
            return Err(Error::Format(format!("column {j} is not below n_features = {n_features}")));
        }
        if values.ncols() != columns.len() {
            return Err(Error::Format(format!(
                "{} columns but {} coefficients per row",
                columns.len(),
                values.ncols()
            )));
        }
        let mut set = ColumnSet::new(span);
        columns.iter().for_each(|&j| set.insert(j));
        set.freeze();
        Ok(Self::on_columns(values, set, n_features))
    }

    /// The number of hyperplanes `K`.
    pub fn n_outputs(&self) -> usize {
        self.values.nrows()
    }

    /// The input dimension `n`.
    pub fn n_features(&self) -> usize {
        self.support.as_ref().map_or(self.values.ncols(), |s| s.n_features)
    }

    /// The stored values: `K × n`, or `K × |support|` (the support's columns in increasing order).
    pub fn stored(&self) -> ArrayView2<'_, f64> {
        self.values.view()
    }

    /// The columns of the stored values when only a support is stored (increasing), `None` when all are.
    pub fn support(&self) -> Option<impl Iterator<Item = u32> + '_> {
        self.support.as_ref().map(|s| s.columns.members())
    }

    /// Whether the support is stored and is exactly `columns`.
    pub(crate) fn has_support(&self, columns: &ColumnSet) -> bool {
        self.support.as_ref().is_some_and(|s| s.columns.members().eq(columns.members()))
    }

    /// Row `k` over `width` columns: truncated, or zero-padded past `n` (the full row for `width = n`).
    pub fn row_over(&self, k: usize, width: usize) -> Vec<f64> {
        let row = self.values.row(k);
        match &self.support {
            None => (0..width).map(|j| row.get(j).copied().unwrap_or(0.0)).collect(),
            Some(s) => {
                let mut out = vec![0.0; width];
                s.columns
                    .members()
                    .zip(row)
                    .filter(|&(j, _)| (j as usize) < width)
                    .for_each(|(j, &v)| out[j as usize] = v);
                out
            }
        }
    }

    /// The full `K × n` matrix (borrowed when every column is stored).
    pub fn dense(&self) -> Cow<'_, Array2<f64>> {
        let Some(s) = &self.support else { return Cow::Borrowed(&self.values) };
        let mut out = Array2::zeros((self.n_outputs(), s.n_features));
        for (j, column) in s.columns.members().zip(self.values.columns()) {
            out.column_mut(j as usize).assign(&column);
        }
        Cow::Owned(out)
    }

    /// Whether every stored value is finite.
    pub fn is_finite(&self) -> bool {
        self.values.as_slice().map_or_else(|| self.values.iter().all(|v| v.is_finite()), crate::linalg::all_finite)
    }

    /// `f_k(x_i) - b_k = w_kᵀx_i` for every example (rows) and hyperplane (columns). Inputs with fewer
    /// features than the model are read as zero-padded; features beyond the model's have zero coefficients.
    pub fn products(&self, x: &Features) -> Array2<f64> {
        let shape = (x.n_samples(), self.n_outputs());
        let Some(s) = &self.support else {
            let n = x.n_features().min(self.n_features());
            return Array2::from_shape_fn(shape, |(i, c)| {
                x.row_dot_truncated(i, &self.values.row(c).as_slice().expect("standard layout")[..n])
            });
        };
        match x {
            // A sparse row's coefficients are read by rank.
            Features::Sparse(m) => Array2::from_shape_fn(shape, |(i, c)| {
                let (idx, val) = m.row(i);
                let w = self.values.row(c);
                idx.iter()
                    .zip(val)
                    .filter(|&(&j, _)| (j as usize) < s.n_features && s.columns.contains(j))
                    .map(|(&j, &v)| v * w[s.columns.rank(j) as usize])
                    .sum()
            }),
            // A dense row is read at the support's columns (those within its width).
            Features::Dense(a) => {
                let columns: Vec<usize> =
                    s.columns.members().map(|j| j as usize).take_while(|&j| j < a.ncols()).collect();
                Array2::from_shape_fn(shape, |(i, c)| {
                    let (row, w) = (a.row(i), self.values.row(c));
                    columns.iter().zip(w).map(|(&j, &v)| v * row[j]).sum()
                })
            }
        }
    }
}

/// The serialised form: the stored values, and the support's columns when only those are stored (every
/// field always written, so that formats without field names read it back).
#[derive(Serialize, Deserialize)]
struct CoefficientsRepr {
    values: Array2<f64>,
    columns: Option<Vec<u32>>,
    n_features: Option<usize>,
}

impl From<Coefficients> for CoefficientsRepr {
    fn from(c: Coefficients) -> Self {
        let columns = c.support().map(|s| s.collect());
        let n_features = c.support.as_ref().map(|s| s.n_features);
        CoefficientsRepr { values: c.values, columns, n_features }
    }
}

impl TryFrom<CoefficientsRepr> for Coefficients {
    type Error = Error;

    fn try_from(r: CoefficientsRepr) -> Result<Self> {
        match (r.columns, r.n_features) {
            (None, None) => Ok(r.values.into()),
            (Some(columns), Some(n)) => Self::from_column_list(r.values, &columns, n),
            _ => Err(Error::Format("columns and n_features come together".into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use ndarray::array;

    use super::*;
    use crate::data::CsrMatrix;

    fn sparse_model() -> Coefficients {
        Coefficients::from_column_list(array![[1.0, -2.0], [0.5, 3.0]], &[1, 4], 6).unwrap()
    }

    #[test]
    fn a_support_reads_as_its_dense_matrix() {
        let c = sparse_model();
        let dense = c.dense().into_owned();
        assert_eq!(dense, array![[0.0, 1.0, 0.0, 0.0, -2.0, 0.0], [0.0, 0.5, 0.0, 0.0, 3.0, 0.0]]);
        let rows = vec![vec![(1, 2.0), (3, 7.0), (4, 1.0)], vec![(0, 1.0), (5, 1.0)], vec![(4, 1.0), (9, 5.0)]];
        let x = Features::Sparse(CsrMatrix::from_rows(10, &rows).unwrap());
        let on_dense = Coefficients::from(dense.clone());
        assert_eq!(c.products(&x), on_dense.products(&x));
        assert_eq!(c.products(&x), array![[0.0, 4.0], [0.0, 0.0], [-2.0, 3.0]]);
        let d = Features::dense(array![[1.0, 2.0, 3.0, 4.0, 5.0]]);
        assert_eq!(c.products(&d), on_dense.products(&d));
    }

    #[test]
    fn rows_over_a_width_are_truncated_or_padded() {
        let c = sparse_model();
        assert_eq!(c.row_over(0, 3), [0.0, 1.0, 0.0]);
        assert_eq!(c.row_over(1, 8), [0.0, 0.5, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0]);
        let d = Coefficients::from(array![[1.0, 2.0]]);
        assert_eq!(d.row_over(0, 1), [1.0]);
        assert_eq!(d.row_over(0, 3), [1.0, 2.0, 0.0]);
    }

    #[test]
    fn a_stated_width_beyond_the_limits_is_refused_before_allocating() {
        // (Up to 2^32 the bitmap is checked against the memory available, `memory::reserve`.)
        let v = array![[1.0]];
        assert!(matches!(Coefficients::from_column_list(v, &[3], (1 << 32) + 1), Err(Error::Format(_))));
    }

    #[test]
    fn bad_column_lists_are_refused() {
        let v = array![[1.0, 2.0]];
        assert!(Coefficients::from_column_list(v.clone(), &[3, 3], 6).is_err());
        assert!(Coefficients::from_column_list(v.clone(), &[4, 3], 6).is_err());
        assert!(Coefficients::from_column_list(v.clone(), &[3, 6], 6).is_err());
        assert!(Coefficients::from_column_list(v, &[3], 6).is_err());
    }

    #[test]
    fn serialisation_round_trips_both_forms() {
        for c in [sparse_model(), Coefficients::from(array![[1.0, 2.0, 3.0]])] {
            let back: Coefficients = serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
            assert_eq!(back, c);
        }
    }
}
