//! Estimators: plain-data `*Params` validated at the top of `fit`, returning a separate fitted model.

pub(crate) mod alternating;
mod kernel_igsu;
mod kernel_svm;
pub mod l2_svm_plus;
mod linear;
pub mod rescaled_hinge;
mod squared_hinge_gsu;
mod subspace;
pub mod svm_plus;
pub(crate) mod transform;
pub mod tsvc;
pub mod tsvc_kernel;
mod tsvc_params;

pub use crate::report::FitReport;
pub use kernel_igsu::{
    Approximation, FACTOR_TOL, GRAM_CACHE_MAX, GramOperator, IMPLICIT_BLOCK, KernelIgsuFit, KernelIgsuParams,
    KernelObjective, isotropic_variances,
};
pub use kernel_svm::{Gram, KernelSvmFit, KernelSvmParams, KernelSvmReport};
pub use l2_svm_plus::{L2SvmPlusFit, L2SvmPlusParams};
pub(crate) use linear::POWER_TOL;
pub use linear::{LinearFit, LinearMethod, LinearSvmParams, Solver};
pub use rescaled_hinge::{HqStart, RescaledHingeFit, RescaledHingeParams};
pub use squared_hinge_gsu::{SquaredHingeGsuLoss, SquaredHingeGsuParams, SquaredHingeGsuSolver};
pub use subspace::project_to_subspaces;
pub use svm_plus::{LupiMethod, SvmPlusFit, SvmPlusParams};
pub use tsvc::{Delta, TsvcFit, TsvcForm, TsvcParams, TsvcReport};
