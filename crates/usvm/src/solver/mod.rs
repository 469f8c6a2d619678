//! Solvers. They see an objective only through values, gradients and Hessian-vector products.
//!
//! - [`newton`]: Newton-CG with an exact line search, for smooth convex objectives;
//! - [`apex`]: the duality gap of a sublinear loss (the expected hinge) and the exact finish on the
//!   examples at its apex `d_i = σ_i = 0`;
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
//! - [`hinge_newton`]: the plain hinge in the primal (Newton on the smoothed hinge, stage by stage) with a
//!   duality-gap certificate from the smoothed loss' slopes, for many more examples than features;
//! - [`hinge_polish`]: the exact hinge-SVM solution on a guessed margin set (an active-set solve), or from a
//!   working set's QP (`hinge_qp`: an interior-point method on normal equations the size of `[w; b]`);
//! - [`smo`]: LIBSVM's SMO (second-order working sets, shrinking, column cache) for SVM-type duals.
//!
//! Internal to the crate (its interface is [`crate::fit`]); the `internals` feature makes it public for
//! the crate's tests, benchmarks and experiments, which use parts the library itself does not.
#![cfg_attr(not(feature = "internals"), allow(dead_code))]

pub mod apex;
pub mod averaged_sgd;
pub(crate) mod columns;
pub mod conic;
pub mod dual_cd;
pub mod exact;
pub mod hinge_newton;
pub mod hinge_polish;
pub(crate) mod hinge_qp;
pub mod lbfgs;
pub mod newton;
pub mod pegasos;
pub mod smo;
pub mod svmplus_qp;
