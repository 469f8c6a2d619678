//! Solvers. They see an objective only through values, gradients and Hessian-vector products.
//!
//! - [`newton`]: Newton-CG with an exact line search, for smooth convex objectives;
//! - [`exact`]: the exact linear solver — Newton on the objective with a floor `ε` on every `σ_i`,
//!   driven down geometrically (continuation) so that zero covariances (the hinge) converge too; on wide
//!   sparse data it works on the used columns only (`columns`);
//! - [`lbfgs`]: limited-memory BFGS with a strong-Wolfe line search (first order; monotone on
//!   non-convex objectives);
//! - [`conic`]: Clarabel cone programmes (TSVC's SOCP and its dual, the kernel SVM dual);
//! - [`pegasos`]: the thesis' mini-batch stochastic sub-gradient method (Algorithm 1);
//! - [`averaged_sgd`]: mini-batch SGD with a bounded first step and suffix averaging (squared hinges);
//! - [`dual_cd`]: dual coordinate descent for the plain hinge and squared hinge (LIBLINEAR `-s 3`/`-s 1`)
//!   with an unregularised bias kept by an augmented Lagrangian, certified by a duality gap;
//! - [`hinge_polish`]: the exact hinge-SVM solution on a guessed margin set (an active-set solve);
//! - [`smo`]: LIBSVM's SMO (second-order working sets, shrinking, column cache) for SVM-type duals.

pub mod averaged_sgd;
pub(crate) mod columns;
pub mod conic;
pub mod dual_cd;
pub mod exact;
pub mod hinge_polish;
pub mod lbfgs;
pub mod newton;
pub mod pegasos;
pub mod smo;
pub mod svmplus_qp;

use serde::{Deserialize, Serialize};

/// What a solver reports besides the solution. Non-convergence is reported here, never as an error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SolverReport {
    /// The objective at the solution (without any smoothing floor).
    pub objective: f64,
    /// Newton iterations (exact), SGD iterations, or alternating rounds' Newton iterations in total.
    pub n_iter: usize,
    pub converged: bool,
    /// `‖∇J‖` at the solution (of the smoothed objective for the exact solver; a sub-gradient for SGD).
    pub gradient_norm: f64,
    /// `‖∇J(0)‖`, the reference of the relative stopping rule.
    pub initial_gradient_norm: f64,
    /// The final floor `ε` on `σ_i` (0 for SGD).
    pub sigma_floor: f64,
    /// The objective after each round (alternating methods) or stage (continuation); monotone for
    /// the alternating methods.
    pub objective_trace: Vec<f64>,
    /// The relative duality gap `(J - D)/J` of the solution against a dual lower bound `D`, for solvers
    /// that certify one (dual coordinate descent); `None` otherwise.
    #[serde(default)]
    pub duality_gap: Option<f64>,
}
