//! Estimators: plain-data `*Params` validated at the top of `fit`, returning a separate fitted model.

mod kernel_svm;
mod linear;
mod subspace;
mod transform;
pub mod tsvc;
pub mod tsvc_kernel;

pub use kernel_svm::{Gram, KernelSvmFit, KernelSvmParams, KernelSvmReport};
pub use linear::{FitReport, LinearFit, LinearMethod, LinearSvmParams, Solver};
pub use subspace::project_to_subspaces;
pub use tsvc::{Delta, TsvcFit, TsvcForm, TsvcParams, TsvcReport};
