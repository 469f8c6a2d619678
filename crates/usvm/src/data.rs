//! Training data: the example means (dense or sparse), labels, optional per-example weights and
//! covariances. Plain data with public fields; [`Dataset::validate`] checks it once, at the top of `fit`.

use std::borrow::Cow;

use ndarray::{Array2, ArrayView2};
use serde::{Deserialize, Serialize};

use crate::covariance::Covariances;
use crate::error::{Error, Result};
pub use crate::features::{CsrMatrix, Features};
pub(crate) use crate::linalg::{axpy, dot, norm2};

/// A labelled training set: means, integer class labels, optional weights `c_i` and covariances `Σ_i`.
/// The means and the labels may borrow their storage (`Dataset<'a>`, see [`Features`]); the rest is owned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dataset<'a> {
    /// The example means `x_i`.
    pub features: Features<'a>,
    /// Integer class labels, one per example: owned (`vec.into()`) or borrowed (`slice.into()`).
    pub labels: Cow<'a, [i64]>,
    /// Per-example weights (relevance degrees) `c_i ≥ 0`; `None` means all 1.
    pub weights: Option<Vec<f64>>,
    /// The covariances `Σ_i` (`Covariances::None` for plain vectors).
    pub covariances: Covariances,
    /// Privileged features `x*_i` (learning using privileged information, DESIGN 2.6): one row per example,
    /// available at training time only; `None` for the methods that do not use them.
    #[serde(default)]
    pub privileged: Option<Features<'a>>,
}

impl Dataset<'static> {
    /// A dataset of dense means (copied to row-major layout if they are not already) and no uncertainty.
    pub fn dense(features: Array2<f64>, labels: impl Into<Cow<'static, [i64]>>) -> Self {
        let features =
            if features.is_standard_layout() { features } else { features.as_standard_layout().into_owned() };
        Dataset::new(Features::dense(features), labels)
    }
}

impl<'a> Dataset<'a> {
    /// A dataset of these means and labels, without weights, covariances or privileged features. The labels
    /// are a `Vec<i64>` (owned) or a `&[i64]` (borrowed, no copy).
    pub fn new(features: Features<'a>, labels: impl Into<Cow<'a, [i64]>>) -> Self {
        Dataset { features, labels: labels.into(), weights: None, covariances: Covariances::None, privileged: None }
    }

    /// A dataset borrowing row-major dense means (no copy) and no uncertainty; labels as in [`Self::new`].
    pub fn dense_view(features: ArrayView2<'a, f64>, labels: impl Into<Cow<'a, [i64]>>) -> Self {
        Dataset::new(Features::dense_view(features), labels)
    }

    /// Whether any storage is borrowed: the means, the labels or the privileged features.
    pub fn is_view(&self) -> bool {
        self.features.is_view()
            || matches!(self.labels, Cow::Borrowed(_))
            || self.privileged.as_ref().is_some_and(Features::is_view)
    }

    /// The same dataset owning all its storage (copies what was borrowed).
    pub fn into_owned(self) -> Dataset<'static> {
        Dataset {
            features: self.features.into_owned(),
            labels: Cow::Owned(self.labels.into_owned()),
            weights: self.weights,
            covariances: self.covariances,
            privileged: self.privileged.map(Features::into_owned),
        }
    }

    /// Attaches privileged features (one row per example).
    pub fn with_privileged(mut self, privileged: Features<'a>) -> Self {
        self.privileged = Some(privileged);
        self
    }

    /// This dataset with covariances.
    pub fn with_covariances(mut self, covariances: Covariances) -> Self {
        self.covariances = covariances;
        self
    }

    /// This dataset with per-example weights `c_i`.
    pub fn with_weights(mut self, weights: Vec<f64>) -> Self {
        self.weights = Some(weights);
        self
    }

    /// The weights rescaled to mean one, `c_i ℓ / Σ c`, when they are given and their mean is not already
    /// one (to 1e-12): the λ form's data term is the weighted mean `(1/Σc) Σ c_i L_i`
    /// ([`crate::Regularization`]), which the solvers' `(1/ℓ) Σ c_i L_i` is for mean-one weights.
    pub fn mean_one_weights(&self) -> Option<Vec<f64>> {
        let w = self.weights.as_ref()?;
        let (sum, n) = (w.iter().sum::<f64>(), w.len() as f64);
        let scale = n / sum;
        ((scale - 1.0).abs() > 1e-12 && scale.is_finite()).then(|| w.iter().map(|&c| c * scale).collect())
    }

    /// This dataset with other weights, borrowing the means, labels and privileged features (the
    /// covariances are copied).
    pub fn reweighted(&self, weights: Vec<f64>) -> Dataset<'_> {
        Dataset {
            features: self.features.reborrow(),
            labels: Cow::Borrowed(&self.labels),
            weights: Some(weights),
            covariances: self.covariances.clone(),
            privileged: self.privileged.as_ref().map(Features::reborrow),
        }
    }

    /// `ℓ`, the number of examples.
    pub fn n_samples(&self) -> usize {
        self.features.n_samples()
    }

    /// `n`, the number of features.
    pub fn n_features(&self) -> usize {
        self.features.n_features()
    }

    /// The sorted distinct labels.
    pub fn classes(&self) -> Vec<i64> {
        let distinct: std::collections::BTreeSet<i64> = self.labels.iter().copied().collect();
        distinct.into_iter().collect()
    }

    /// The examples `idx`, in that order (for cross-validation splits).
    pub fn select(&self, idx: &[usize]) -> Dataset<'static> {
        Dataset {
            features: self.features.select_rows(idx),
            labels: idx.iter().map(|&i| self.labels[i]).collect::<Vec<_>>().into(),
            weights: self.weights.as_ref().map(|w| idx.iter().map(|&i| w[i]).collect()),
            covariances: self.covariances.select(idx),
            privileged: self.privileged.as_ref().map(|p| p.select_rows(idx)),
        }
    }

    /// Checks shapes, finiteness, weights, covariances (symmetry, PSD) and that there are two classes.
    pub fn validate(&self) -> Result<()> {
        self.validate_checking(true)
    }

    /// [`Self::validate`], leaving the values of dense features unchecked unless `dense_values`: a fit that
    /// reads them as their compressed copy checks the copy's values instead (the zeros need no check), a
    /// pass over a third of the bytes or less where the full check is a pass over all of them.
    pub(crate) fn validate_checking(&self, dense_values: bool) -> Result<()> {
        if self.n_samples() == 0 {
            return Err(Error::Empty("no training examples"));
        }
        if self.n_features() == 0 {
            return Err(Error::Empty("no features"));
        }
        self.validate_rows_checking(dense_values)?;
        if let Some(w) = &self.weights
            && w.iter().all(|&v| v == 0.0)
        {
            return Err(Error::InvalidWeight { index: 0, value: 0.0 });
        }
        let classes = self.classes();
        if classes.len() < 2 {
            return Err(Error::SingleClass { label: classes[0] });
        }
        Ok(())
    }

    /// The checks of [`Self::validate`] that hold row by row (shapes, finiteness, non-negative weights,
    /// covariances): a part of the rows — one shard of a sharded fit, possibly empty or of one class —
    /// passes them whenever the whole data would.
    pub fn validate_rows(&self) -> Result<()> {
        self.validate_rows_checking(true)
    }

    /// [`Self::validate_rows`], the values of dense features only if `dense_values`.
    fn validate_rows_checking(&self, dense_values: bool) -> Result<()> {
        let n = self.n_samples();
        if self.labels.len() != n {
            return Err(Error::DimensionMismatch { what: "labels", expected: n, found: self.labels.len() });
        }
        if dense_values || !matches!(self.features, Features::Dense(_)) {
            self.features.validate()?;
        }
        if let Some(w) = &self.weights {
            if w.len() != n {
                return Err(Error::DimensionMismatch { what: "weights", expected: n, found: w.len() });
            }
            if let Some((i, &v)) = w.iter().enumerate().find(|(_, v)| !(v.is_finite() && **v >= 0.0)) {
                return Err(Error::InvalidWeight { index: i, value: v });
            }
        }
        self.covariances.validate(n, self.n_features())?;
        if let Some(p) = &self.privileged {
            if p.n_samples() != n {
                return Err(Error::DimensionMismatch {
                    what: "privileged features",
                    expected: n,
                    found: p.n_samples(),
                });
            }
            if p.n_features() == 0 {
                return Err(Error::Empty("no privileged features"));
            }
            p.validate_as("privileged features")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparse_row_selection_matches_dense() {
        let m = CsrMatrix::from_rows(3, &[vec![(0, 1.0)], vec![], vec![(1, 2.0), (2, 3.0)]]).unwrap();
        let picked = m.select_rows(&[2, 0, 2, 1]);
        assert_eq!(picked.n_rows(), 4);
        assert_eq!(picked.to_dense(), m.to_dense().select(ndarray::Axis(0), &[2, 0, 2, 1]));
        let cov = Covariances::sparse_diagonal(m.clone()).select(&[1, 2]);
        assert_eq!(cov, Covariances::sparse_diagonal(m.select_rows(&[1, 2])));
    }
}
