use ndarray::Array2;
use serde::{Deserialize, Serialize};

use super::LinearModel;
use crate::data::Features;
use crate::error::{Error, Result};
use crate::kernel::feature_map::FeatureMap;

/// A linear classifier on an explicit feature map: `f_k(x) = w_kᵀφ(x) + b_k` (e.g. KSVM-iGSU trained on
/// random Fourier features). Binary / one-vs-rest as for [`LinearModel`], whose `coef` has one column per
/// feature-space dimension.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MappedModel {
    /// The feature map.
    pub map: FeatureMap,
    /// The hyperplanes on the mapped features.
    pub linear: LinearModel,
}

impl MappedModel {
    /// Number of input features.
    pub fn n_features(&self) -> usize {
        self.map.n_features()
    }

    /// `f_k(x_i)` for every example (rows) and output (columns).
    pub fn decision_function(&self, x: &Features) -> Result<Array2<f64>> {
        if x.n_features() > self.n_features() {
            return Err(Error::DimensionMismatch {
                what: "features at prediction",
                expected: self.n_features(),
                found: x.n_features(),
            });
        }
        self.linear.decision_function(&Features::dense(self.map.transform(x)?))
    }

    /// The predicted class of every example.
    pub fn predict(&self, x: &Features) -> Result<Vec<i64>> {
        Ok(super::argmax_classes(&self.linear.classes, &self.decision_function(x)?))
    }
}
