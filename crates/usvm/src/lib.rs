//! # usvm — maximum-margin learning from uncertain data
//!
//! Examples known only as Gaussians `N(x_i, Σ_i)` are classified by a hyperplane `f(x) = wᵀx + b`
//! minimising `λ/2‖w‖² + (1/ℓ) Σ c_i E[max(0, 1 - y_i(wᵀX_i + b))]` (LSVM-GSU, Tzelepis et al.), whose
//! expectation has the closed form of [`loss::ExpectedHinge`]. The library also fits the papers'
//! baselines (LSVM, LSVM-iso, LSVM-sampling, Power SVM), learns in per-example linear subspaces, and
//! offers an exact Newton solver (conjugate gradients, exact line search) and the thesis' SGD.
//!
//! The core does mathematics only: no files, no printing, no global state.
//!
//! ```
//! use ndarray::array;
//! use usvm::{Covariances, Dataset, LinearMethod, LinearSvmParams};
//! let x = array![[0.0, 1.0], [1.0, 2.0], [0.0, -1.0], [1.0, -2.0]];
//! let data = Dataset::dense(x, vec![1, 1, -1, -1])
//!     .with_covariances(Covariances::isotropic(vec![0.5, 0.1, 0.1, 0.5]));
//! let gsu = LinearSvmParams { lambda: 0.05, ..Default::default() }.fit(&data).unwrap();
//! let lsvm = LinearSvmParams { method: LinearMethod::Hinge, lambda: 0.05, ..Default::default() }.fit(&data).unwrap();
//! assert!(gsu.reports[0].converged() && lsvm.reports[0].converged());
//! ```

// `!(x > 0.0)` is deliberate throughout: unlike `x <= 0.0` it is also true for NaN.
#![allow(clippy::neg_cmp_op_on_partial_ord)]
#![warn(missing_docs)]

pub mod besvm;
pub mod calibration;
pub mod covariance;
pub mod data;
pub mod error;
pub mod features;
pub mod fit;
pub mod gaussians;
pub mod io;
pub mod json;
pub mod kernel;
pub mod linalg;
pub mod loss;
pub mod memory;
pub mod methods;
pub mod metrics;
pub mod model;
pub mod model_selection;
pub mod objective;
pub(crate) mod ovr;
pub mod params;
pub mod progress;
pub mod report;
pub mod sharded;
#[cfg(feature = "internals")]
pub mod solver;
#[cfg(not(feature = "internals"))]
pub(crate) mod solver;
pub mod svm;

pub use covariance::Covariances;
pub use data::{CsrMatrix, Dataset, Features};
pub use error::{Error, Result};
pub use fit::fit;
pub use kernel::Kernel;
pub use methods::{Fit, FitOptions, Regularization};
pub use model::{KernelModel, LinearModel, Model, ModelFile};
pub use params::MethodParams;
pub use report::{Candidate, Fallback, FitReport, Route, Termination};
/// The solvers' settings and results that appear in the method parameters and fits.
pub use solver::{
    exact::ExactSettings, lbfgs::LbfgsSettings, pegasos::SgdSettings, svmplus_qp::QpSettings, svmplus_qp::QpSolution,
};
pub use svm::{LinearFit, LinearMethod, LinearSvmParams, Solver};

/// The Rust example of the documentation's guide (`docs/guide/rust.md`), run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide/rust.md")]
pub struct GuideRust;
