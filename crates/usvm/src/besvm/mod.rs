//! BE-SVM — the basis-expanding SVM of Aghazadeh & Carlsson ("Large scale, large margin classification
//! using indefinite similarity measures"; DESIGN 2.7).
//!
//! A linear squared-hinge SVM ([`l2svm`], the paper's eq. 6) on the normalised similarities of each
//! example to a basis chosen from the training set ([`basis`], eq. 3-4):
//! `f(x) = wᵀφ(x) + b`. The similarities ([`crate::kernel::similarity`]) need not be positive definite:
//! the model is linear in `φ`, so training is a convex problem whatever the measure, and its Gram matrix
//! `φ(x_i)ᵀφ(x_j)` is positive semi-definite by construction. Multi-class: one-vs-rest. A model stores
//! `B` basis vectors and `K·(Σ_m B_m + 1)` weights, against a kernel SVM's support vectors.
//!
//! Margin relation (paper 2.6): with unnormalised maps `φ̃`, the hinge loss and every training example as
//! basis, `s = k`, BE-SVM is the kernel SVM with the Gram matrix `S_BXᵀS_BX = K²`: its dual optimum `β`
//! gives `w = Σ y_i β_i φ̃(x_i)` and margin `(βᵀYK²Yβ)^{-1}`, against `(αᵀYKYα)^{-1}` for the kernel SVM.
//!
//! ```
//! use ndarray::Array2;
//! use usvm::Dataset;
//! use usvm::besvm::{BasisExpansionParams, BasisSize, BeSvmParams};
//! use usvm::kernel::similarity::Measure;
//! let x = Array2::from_shape_fn((40, 2), |(i, j)| ((i * 7 + j * 3) % 11) as f64 / 11.0 + (i % 2) as f64);
//! let labels: Vec<i64> = (0..40).map(|i| (i % 2) as i64).collect();
//! let data = Dataset::dense(x, labels.clone());
//! let params = BeSvmParams {
//!     expansion: BasisExpansionParams {
//!         measures: vec![Measure::Kernel(usvm::Kernel::Rbf { gamma: 1.0 })],
//!         basis_size: BasisSize::Fraction(0.5),
//!         ..Default::default()
//!     },
//!     ..Default::default()
//! };
//! let fit = params.fit(&data).unwrap();
//! assert!(fit.reports[0].converged());
//! assert_eq!(fit.model.predict(&data.features).unwrap(), labels);
//! ```

pub mod basis;
pub mod kmedoids;
pub mod l2svm;

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

pub use basis::{BasisExpansion, BasisExpansionParams, BasisSelection, BasisSize, Block, Normalisation};
pub use l2svm::{SquaredHingeSolver, SquaredHingeSvmParams};

use crate::data::{Dataset, Features};
use crate::error::Result;
pub use crate::model::BeSvmModel;
use crate::progress::Monitor;
use crate::report::FitReport;

/// Settings of BE-SVM: the feature map and the linear SVM on it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct BeSvmParams {
    /// The feature map: measures, basis and normalisation.
    pub expansion: BasisExpansionParams,
    /// The paper uses `C = 1` for every measure and basis size (the normalisation makes that work).
    pub svm: SquaredHingeSvmParams,
}

/// A fitted model and one solver report per binary problem.
#[derive(Debug, Clone, PartialEq)]
pub struct BeSvmFit {
    /// The fitted map and hyperplanes.
    pub model: BeSvmModel,
    /// One report per binary problem.
    pub reports: Vec<FitReport>,
}

impl BeSvmParams {
    /// Fits the map on the training features, then the squared-hinge SVM on the mapped training set.
    pub fn fit(&self, data: &Dataset) -> Result<BeSvmFit> {
        self.fit_from(data, None)
    }

    /// [`Self::fit`] warm-started from a model (e.g. the solution for a nearby `C` on a path): when the
    /// map fitted here is the start's (the same basis and normalisation — the map does not depend on `C`),
    /// the SVM starts from the start's hyperplanes; otherwise from zero.
    pub fn fit_from(&self, data: &Dataset, start: Option<&BeSvmModel>) -> Result<BeSvmFit> {
        self.fit_monitored(data, start, Monitor::default())
    }

    /// [`Self::fit_from`], reporting the SVM solvers' progress to `monitor`.
    pub fn fit_monitored(&self, data: &Dataset, start: Option<&BeSvmModel>, monitor: Monitor<'_>) -> Result<BeSvmFit> {
        self.svm.validate()?;
        data.validate()?;
        let (expansion, mapped) = self.expansion.fit_transform(&data.features)?;
        let mapped_data = Dataset {
            features: Features::dense(mapped),
            labels: Cow::Borrowed(&data.labels),
            weights: data.weights.clone(),
            covariances: crate::Covariances::None,
            privileged: None,
        };
        let start = start.filter(|m| m.expansion == expansion).map(|m| &m.linear);
        let fit = self.svm.fit_monitored(&mapped_data, start, monitor)?;
        Ok(BeSvmFit { model: BeSvmModel { expansion, linear: fit.model }, reports: fit.reports })
    }
}
