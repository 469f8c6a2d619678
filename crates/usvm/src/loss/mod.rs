//! Losses as scalar functions of the margin violation's mean `d = 1 - y(wᵀx + b)` and standard
//! deviation `σ = √(wᵀΣw)`.
//!
//! Every loss returns its value and the derivatives the objective needs:
//! `∂L/∂d`, `∂L/∂σ` and the 2×2 Hessian in `(d, σ)`. The objective composes them with
//! `∂d/∂w = -y x`, `∂σ/∂w = Σw/σ` (see [`crate::objective`]).
//!
//! ```
//! use usvm::loss::{ExpectedHinge, MarginLoss};
//! // With σ = 0 the expected hinge loss is the hinge loss.
//! assert_eq!(ExpectedHinge.value(0.5, 0.0), 0.5);
//! // It is never below the hinge and at most σ/√(2π) above it.
//! let l = ExpectedHinge.value(0.5, 1.0);
//! assert!(l >= 0.5 && l <= 0.5 + 1.0 / (2.0 * std::f64::consts::PI).sqrt());
//! ```

mod expected_hinge;
mod hinge;
pub mod special;
mod squared_hinge_gsu;

pub use expected_hinge::ExpectedHinge;
pub use hinge::{BallHinge, Hinge, SquaredHinge};
pub use squared_hinge_gsu::{ExpectedSquaredHinge, ThesisSquaredHinge};

/// Value and derivatives of a loss at `(d, σ)`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LossDerivatives {
    /// `L(d, σ)`.
    pub value: f64,
    /// `∂L/∂d`
    pub d: f64,
    /// `∂L/∂σ`
    pub s: f64,
    /// `∂²L/∂d²`
    pub dd: f64,
    /// `∂²L/∂d∂σ`
    pub ds: f64,
    /// `∂²L/∂σ²`
    pub ss: f64,
}

/// A loss of the margin violation's mean `d` and standard deviation `σ ≥ 0`.
pub trait MarginLoss: Sync + Send + Copy {
    /// A short name for reports (`expected_hinge`, `hinge`, ...).
    fn name(&self) -> &'static str;
    /// `L(d, σ)`.
    fn value(&self, d: f64, sigma: f64) -> f64;
    /// Value, gradient and Hessian (a subgradient / generalised Hessian where the loss has a kink).
    fn derivatives(&self, d: f64, sigma: f64) -> LossDerivatives;
    /// Whether the loss is convex in `(d, σ)` jointly and nondecreasing in `σ` — then the objective is
    /// convex in `(w, b)` and the exact solver's certificate is a global one.
    fn is_convex(&self) -> bool {
        true
    }
    /// For a loss of the form `L(d, σ) = max_{p ∈ [0, 1]} p d + ψ(p) σ` (convex, positively homogeneous,
    /// smooth except at its apex `d = σ = 0`), the function `ψ`: it gives the objective a dual and the exact
    /// solver a finish at the apex (`solver::apex`). `None` (the default) for other losses.
    fn dual_form(&self) -> Option<fn(f64) -> f64> {
        None
    }
}
