//! The fitted BE-SVM: a basis expansion (fitted by the `besvm` module) and linear hyperplanes on its outputs.

use ndarray::Array2;
use serde::{Deserialize, Serialize};

use super::LinearModel;
use super::{BasisExpansion, Block};
use crate::data::Features;
use crate::error::{Error, Result};

/// A fitted BE-SVM: the feature map and the hyperplane(s) on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BeSvmModel {
    /// The fitted basis expansion.
    pub expansion: BasisExpansion,
    /// Hyperplanes over the `expansion.n_outputs()` mapped features.
    pub linear: LinearModel,
}

impl BeSvmModel {
    /// The class labels.
    pub fn classes(&self) -> &[i64] {
        &self.linear.classes
    }

    /// The input dimension.
    pub fn n_features(&self) -> usize {
        self.expansion.n_features()
    }

    /// `f_k(x_i)` for every example (rows) and output (columns).
    pub fn decision_function(&self, x: &Features) -> Result<Array2<f64>> {
        if x.n_features() != self.n_features() {
            return Err(Error::DimensionMismatch {
                what: "features at prediction",
                expected: self.n_features(),
                found: x.n_features(),
            });
        }
        let mapped = Features::dense(self.expansion.transform(x)?);
        self.linear.decision_function(&mapped)
    }

    /// The predicted class of every row of `x`.
    pub fn predict(&self, x: &Features) -> Result<Vec<i64>> {
        Ok(super::argmax_classes(self.classes(), &self.decision_function(x)?))
    }

    /// Numbers stored to predict: the basis vectors' entries plus the hyperplanes' weights and intercepts
    /// (the normalisation's statistics, one mean per mapped feature and a scale per measure, are counted
    /// too). The paper counts `B·(d+1)` for the basis, as for a kernel SVM's `n_sv·(d+1)`.
    pub fn n_parameters(&self) -> usize {
        let basis = self.expansion.basis.n_samples() * self.n_features();
        let linear = self.linear.coef.stored().len() + self.linear.intercept.len();
        let stats: usize = self
            .expansion
            .blocks
            .iter()
            .map(|b| match b {
                Block::Centred { mean, .. } => mean.len() + 1,
                Block::Nystroem { projection } => projection.len(),
            })
            .sum();
        basis + linear + stats
    }
}
