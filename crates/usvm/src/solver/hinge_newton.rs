//! The plain hinge SVM (every `Σ_i = 0`) in the primal, certified by a duality gap: the route for many
//! more examples than features, where dual coordinate descent crawls on a rank-deficient free set
//! (`n ≪ ℓ`, large `C`), and for ill-scaled columns, where it crawls on an ill-conditioned Gram matrix.
//!
//! Newton's method ([`newton`]) minimises the Gaussian-smoothed hinge `E max(0, d + σz) = dΦ(d/σ) + σφ(d/σ)`,
//! `z ~ N(0, 1)`, at floors `σ = 10⁻¹, 10⁻², …, 10⁻⁸`, each stage warm-started from the last. Newton steps
//! with exact (Cholesky) directions are invariant under a rescaling of the columns, so raw, unscaled
//! features cost no more stages than standardised ones. After each stage the slope of the smoothed loss
//! gives dual multipliers
//!
//! `β_i = (c_i/ℓ) Φ(d_i/σ) ∈ [0, c_i/ℓ]`,
//!
//! inside the dual box; at the stage's optimum `λw = Σ β_i y_i x_i` exactly, so the dual value of `β` (made
//! feasible for `yᵀβ = 0`, [`dual_cd::dual_value`]) is a lower bound on `min J` whose gap to the hinge
//! objective `J(w, b)` is `O(σ)`: `0 ≤ E max(0, d + σz) - max(0, d) ≤ σ φ(0)`. After each stage the exact
//! finish ([`hinge_polish::polish`]) is tried from the stage's solution, with the examples within `3σ` of
//! the margin as the margin set: once the stages have identified the sides it gives the optimum to
//! round-off, with multipliers whose gap certifies it. The run stops when the relative gap `(J - D)/J` is
//! at most `tol`; after the last stage (or at the iteration limit) it returns the best point and the
//! multipliers of its best certificate, for dual coordinate descent to finish from.
//!
//! The best primal point and the best dual bound are kept across stages, so the reported gap only shrinks.

use crate::loss::{ExpectedHinge, MarginLoss};
use crate::objective::Objective;
use crate::progress::{Monitor, Quantity};
use crate::solver::dual_cd::{self, DualLoss};
use crate::solver::exact::{Continuation, initial_gradient_norm};
use crate::solver::hinge_polish;
use crate::solver::newton::{self, NewtonSettings};

/// The first floor.
const FIRST_FLOOR: f64 = 0.1;
/// Each stage divides the floor by ten; the last one of a full pass ([`solve`]). Each stage is stiffer than the last, but by then the
/// exact finish has usually certified the solution.
pub(crate) const LAST_FLOOR: f64 = 1e-8;
/// ... and at a gradient norm that leaves it within this fraction of `J` of the stage's minimum.
const STAGE_SUBOPTIMALITY: f64 = 1e-8;
/// ... but not below this relative gradient norm.
const STAGE_TOL_FLOOR: f64 = 1e-10;
/// Newton iterations one stage may take.
const STAGE_MAX_ITER: usize = 100;
/// The exact finish takes the examples with `|d_i| ≤ BAND σ` as the margin set.
const BAND: f64 = 3.0;
/// Each stage stops at this gradient norm relative to `‖∇J(0)‖`: tight enough that `λw ≈ Σ β_i y_i x_i`
/// and the stage's certificate is `O(σ)`.
const STAGE_TOL: f64 = 1e-4;

/// The best point found and its certificate.
#[derive(Debug, Clone, PartialEq)]
pub struct HingeNewtonResult {
    /// `[w; b]`, or `w` without intercept.
    pub theta: Vec<f64>,
    /// `J(θ)`.
    pub primal: f64,
    /// The best dual lower bound on `min J` found.
    pub dual: f64,
    /// Newton iterations over all stages.
    pub n_iter: usize,
    /// Whether `(J - D)/J ≤ tol`.
    pub converged: bool,
    /// The multipliers of the best dual bound (λ-form, `λw ≈ Σ β_i y_i x_i`).
    pub beta: Vec<f64>,
    /// `‖∇J(0)‖`, the reference of the stages' gradient tolerance.
    pub initial_gradient_norm: f64,
    /// The KKT residual of the exact finish when that gave `theta` ([`hinge_polish::Polished`]); `None`
    /// when `theta` is a smoothed stage's solution.
    pub residual: Option<f64>,
}

impl HingeNewtonResult {
    /// `(J - D)/J`.
    pub fn relative_gap(&self) -> f64 {
        dual_cd::relative_gap(self.primal, self.dual)
    }
}

/// Minimises the hinge objective (`objective`'s covariances must all be zero; its `sigma_floor` is
/// ignored) from `start` (`[w; b]`, or zero) to a relative duality gap of `tol` within `max_iter` Newton
/// iterations, reporting each Newton iteration and each stage's certificate to `monitor`. A nonzero start
/// (another route's iterate) skips the coarsest stage.
pub fn solve(
    objective: &Objective<'_, ExpectedHinge>,
    tol: f64,
    max_iter: usize,
    start: Option<Vec<f64>>,
    monitor: Monitor<'_>,
) -> HingeNewtonResult {
    solve_to(objective, tol, max_iter, start, LAST_FLOOR, monitor)
}

/// [`solve`] with stages down to `last_floor` only (a first, quick pass that hands over to dual coordinate
/// descent when the exact finish has not certified by then).
pub fn solve_to(
    objective: &Objective<'_, ExpectedHinge>,
    tol: f64,
    max_iter: usize,
    start: Option<Vec<f64>>,
    last_floor: f64,
    monitor: Monitor<'_>,
) -> HingeNewtonResult {
    let hinge = Objective { sigma_floor: 0.0, ..*objective };
    let reference = initial_gradient_norm(&hinge);
    let dim = hinge.dim();
    let mut best = HingeNewtonResult {
        theta: vec![0.0; dim],
        primal: hinge.value(&vec![0.0; dim]),
        dual: f64::NEG_INFINITY,
        n_iter: 0,
        converged: false,
        beta: Vec::new(),
        initial_gradient_norm: reference,
        residual: None,
    };
    let warm = start.as_ref().is_some_and(|t| t.iter().any(|&v| v != 0.0));
    let mut theta = start.unwrap_or_else(|| best.theta.clone());
    if warm {
        best.consider_primal(&hinge, &theta);
    }
    let mut floor = if warm { FIRST_FLOOR * 0.1 } else { FIRST_FLOOR };
    // A quick pass (`last_floor` above the last) keeps the relative stage rule alone: it only prepares a
    // warm start for dual coordinate descent.
    let quick = last_floor > LAST_FLOOR;
    while floor >= last_floor * 0.5 && best.n_iter < max_iter && !monitor.stopped() {
        let mut stage = hinge.stage(floor);
        // `‖∇J‖ ≤ 10⁻⁴ ‖∇J(0)‖`, and small enough for the objective's own scale: a λ-strongly convex stage
        // is within `‖∇J‖²/(2λ)` of its minimum, so `‖∇J‖ ≤ √(2λ J · 10⁻⁸)` puts it within `10⁻⁸ J` (on
        // separable data `J ≪ J(0)`, and the relative rule alone stopped at the first step).
        // Never below `10⁻¹⁰ ‖∇J(0)‖`, near the round-off of the gradient; and a stage that cannot get there
        // gives way to the next after `STAGE_MAX_ITER` steps rather than taking the whole budget.
        let scale = (2.0 * hinge.lambda * best.primal * STAGE_SUBOPTIMALITY).sqrt();
        let tol =
            if reference > 0.0 && !quick { STAGE_TOL.min(scale / reference).max(STAGE_TOL_FLOOR) } else { STAGE_TOL };
        let budget = (max_iter - best.n_iter).min(STAGE_MAX_ITER);
        let settings = NewtonSettings { tol, gradient_reference: reference, max_iter: budget, reduction: None };
        let run = newton::minimize(&mut stage, theta, settings, monitor.after(best.n_iter));
        // The stage's per-example curvature goes before the multipliers and the exact finish are made.
        drop(stage);
        best.n_iter += run.n_iter;
        theta = run.x;
        if monitor.stopped() {
            break;
        }
        best.consider(&hinge, &theta, smoothed_multipliers(&hinge, &theta, floor));
        if best.relative_gap() > tol && worth_polishing(&hinge, &theta, BAND * floor) {
            let p = &hinge.problem;
            let (x, y, c) = (p.features, p.y, p.weights);
            if let Some(exact) = hinge_polish::polish(x, y, c, hinge.lambda, hinge.fit_intercept, &theta, BAND * floor)
                && best.consider(&hinge, &exact.theta, exact.beta)
            {
                best.residual = Some(exact.residual);
            }
        }
        let gap = best.relative_gap();
        if monitor.iteration(best.n_iter, Quantity::DualityGap, || (best.primal, gap)) || gap <= tol {
            break;
        }
        floor *= 0.1;
    }
    best.converged = best.relative_gap() <= tol;
    best
}

impl HingeNewtonResult {
    /// Keeps `theta` if its objective is lower (then its residual is not known); says whether it did.
    fn consider_primal(&mut self, hinge: &Objective<'_, ExpectedHinge>, theta: &[f64]) -> bool {
        let primal = hinge.value(theta);
        let lower = primal < self.primal;
        if lower {
            self.primal = primal;
            self.theta = theta.to_vec();
            self.residual = None;
        }
        lower
    }

    /// Keeps `theta` if its objective is lower, and `beta` if its dual bound is higher; says whether it kept
    /// `theta`.
    fn consider(&mut self, hinge: &Objective<'_, ExpectedHinge>, theta: &[f64], beta: Vec<f64>) -> bool {
        let kept = self.consider_primal(hinge, theta);
        let p = &hinge.problem;
        let dual =
            dual_cd::dual_value(p.features, p.y, p.weights, hinge.lambda, DualLoss::Hinge, hinge.fit_intercept, &beta);
        if dual > self.dual {
            self.dual = dual;
            self.beta = beta;
        }
        kept
    }
}

/// Whether the examples within `band` of the margin at `theta` are few enough for an exact finish: at most
/// [`hinge_polish::size_limit`], and for dense rows at most `2(n + 1)` (more margin equations than unknowns
/// are inconsistent unless rows repeat: the sides are not identified yet).
fn worth_polishing(hinge: &Objective<'_, ExpectedHinge>, theta: &[f64], band: f64) -> bool {
    let x = hinge.problem.features;
    let unknowns = x.n_features() + usize::from(hinge.fit_intercept);
    let limit = match x {
        crate::data::Features::Dense(_) => (2 * unknowns).min(hinge_polish::size_limit(x)),
        crate::data::Features::Sparse(_) => hinge_polish::size_limit(x),
    };
    let mut count = 0;
    for i in 0..hinge.problem.n_samples() {
        if hinge.margin(theta, i).0.abs() <= band {
            count += 1;
            if count > limit {
                return false;
            }
        }
    }
    true
}

/// `β_i = (c_i/ℓ) ∂/∂d E max(0, d_i + σz) = (c_i/ℓ) Φ(d_i/σ)` at `θ`.
fn smoothed_multipliers(hinge: &Objective<'_, ExpectedHinge>, theta: &[f64], floor: f64) -> Vec<f64> {
    let p = &hinge.problem;
    let l = p.n_samples() as f64;
    (0..p.n_samples()).map(|i| p.weight(i) / l * ExpectedHinge.derivatives(hinge.margin(theta, i).0, floor).d).collect()
}
