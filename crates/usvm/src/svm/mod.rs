//! Estimators: plain-data `*Params` validated at the top of `fit`, returning a separate fitted model.

mod linear;
mod subspace;
pub mod svm_plus;
mod transform;

pub use linear::{FitReport, LinearFit, LinearMethod, LinearSvmParams, Solver};
pub use subspace::project_to_subspaces;
pub use svm_plus::{LupiMethod, SvmPlusFit, SvmPlusParams};
