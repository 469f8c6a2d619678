//! Estimators: plain-data `*Params` validated at the top of `fit`, returning a separate fitted model.

mod linear;
mod squared_hinge_gsu;
mod subspace;
mod transform;

pub use linear::{FitReport, LinearFit, LinearMethod, LinearSvmParams, Solver};
pub use squared_hinge_gsu::{SquaredHingeGsuLoss, SquaredHingeGsuParams, SquaredHingeGsuSolver};
pub use subspace::project_to_subspaces;
