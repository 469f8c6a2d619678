//! Fitted models: decision functions and predictions, and the JSON model file of DESIGN 6.

pub(crate) mod basis_expansion;
mod besvm;
mod besvm_file;
mod coefficients;
mod file;
mod kernel;
mod linear;
mod mapped;
mod packed;

use std::borrow::Cow;

use ndarray::Array2;

pub use basis_expansion::{BasisExpansion, Block};
pub use besvm::BeSvmModel;
pub use besvm_file::{BasisExpansionFile, BlockFile};
pub use coefficients::Coefficients;
pub use file::{Coef, Intercept, ModelFile, Platt, SupportVectors};
pub use kernel::{KernelModel, Multiclass, class_pairs, ovr_scores, vote};
pub use linear::LinearModel;
pub use mapped::MappedModel;
pub use packed::PackedRows;

use crate::data::Features;
use crate::error::Result;
use crate::linalg::all_finite;

/// Any fitted classifier that a model file can hold.
#[derive(Debug, Clone, PartialEq)]
pub enum Model {
    /// Hyperplanes on the inputs.
    Linear(LinearModel),
    /// A kernel expansion over support vectors.
    Kernel(KernelModel),
    /// A linear model on an explicit feature map (random Fourier features).
    Mapped(MappedModel),
    /// BE-SVM: a linear model on a basis expansion.
    BasisExpansion(BeSvmModel),
}

impl Model {
    /// The class labels.
    pub fn classes(&self) -> &[i64] {
        match self {
            Model::Linear(m) => &m.classes,
            Model::Kernel(m) => &m.classes,
            Model::Mapped(m) => &m.linear.classes,
            Model::BasisExpansion(m) => m.classes(),
        }
    }

    /// The input dimension.
    pub fn n_features(&self) -> usize {
        match self {
            Model::Linear(m) => m.n_features(),
            Model::Kernel(m) => m.n_features(),
            Model::Mapped(m) => m.n_features(),
            Model::BasisExpansion(m) => m.n_features(),
        }
    }

    /// Number of outputs: 1 for a binary model, one per class for one-vs-rest, one per pair of classes for
    /// a one-vs-one kernel model.
    pub fn n_outputs(&self) -> usize {
        match self {
            Model::Linear(m) => m.coef.n_outputs(),
            Model::Kernel(m) => m.coef.nrows(),
            Model::Mapped(m) => m.linear.coef.n_outputs(),
            Model::BasisExpansion(m) => m.linear.coef.n_outputs(),
        }
    }

    /// The coefficients (one row per output: hyperplanes on the inputs, expansion coefficients over the
    /// support vectors, or hyperplanes on the mapped features) and the intercepts. The coefficients are
    /// borrowed unless a linear model stores only its support ([`Coefficients`]).
    pub fn coef_intercept(&self) -> (Cow<'_, Array2<f64>>, &[f64]) {
        let coef = match self {
            Model::Linear(m) => m.coef.dense(),
            Model::Kernel(m) => Cow::Borrowed(&m.coef),
            Model::Mapped(m) => m.linear.coef.dense(),
            Model::BasisExpansion(m) => m.linear.coef.dense(),
        };
        (coef, self.intercept())
    }

    /// The intercepts, one per output.
    pub fn intercept(&self) -> &[f64] {
        match self {
            Model::Linear(m) => &m.intercept,
            Model::Kernel(m) => &m.intercept,
            Model::Mapped(m) => &m.linear.intercept,
            Model::BasisExpansion(m) => &m.linear.intercept,
        }
    }

    /// Whether every coefficient and intercept is finite.
    pub fn is_finite(&self) -> bool {
        let finite =
            |coef: &Array2<f64>| coef.as_slice().map_or_else(|| coef.iter().all(|v| v.is_finite()), all_finite);
        let coef = match self {
            Model::Linear(m) => m.coef.is_finite(),
            Model::Kernel(m) => finite(&m.coef),
            Model::Mapped(m) => m.linear.coef.is_finite(),
            Model::BasisExpansion(m) => m.linear.coef.is_finite(),
        };
        coef && all_finite(self.intercept())
    }

    /// `f_k(x)` per row (columns: one output, one per class, or one per pair of classes).
    pub fn decision_function(&self, x: &Features) -> Result<Array2<f64>> {
        match self {
            Model::Linear(m) => m.decision_function(x),
            Model::Kernel(m) => m.decision_function(x),
            Model::Mapped(m) => m.decision_function(x),
            Model::BasisExpansion(m) => m.decision_function(x),
        }
    }

    /// The predicted class of every row of `x`.
    pub fn predict(&self, x: &Features) -> Result<Vec<i64>> {
        Ok(self.predict_from(&self.decision_function(x)?))
    }

    /// The classes that the decision values `f` (rows of [`Self::decision_function`]) predict.
    pub fn predict_from(&self, f: &Array2<f64>) -> Vec<i64> {
        match self {
            Model::Kernel(m) => m.predict_from(f),
            _ => argmax_classes(self.classes(), f),
        }
    }
}

/// Class of each row of decision values: `classes[f > 0]` for one output, else the class of the largest.
pub(crate) fn argmax_classes(classes: &[i64], f: &Array2<f64>) -> Vec<i64> {
    f.rows()
        .into_iter()
        .map(|row| {
            if row.len() == 1 {
                classes[usize::from(row[0] > 0.0)]
            } else {
                classes[(0..row.len()).fold(0, |b, c| if row[c] > row[b] { c } else { b })]
            }
        })
        .collect()
}
