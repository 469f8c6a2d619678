//! The exact solver for the linear objective: Newton with an exact line search (see [`super::newton`]) and a
//! continuation on the floor `ε` of `σ_i = √(wᵀΣ_i w + ε²)`.
//!
//! With `ε > 0` the objective is twice differentiable everywhere (even where `wᵀΣ_i w = 0`, e.g. at
//! `w = 0` or for zero covariances, where the expected hinge is the non-smooth hinge). Because
//! `∂L/∂σ = φ ≤ 1/√(2π)`, the floor changes each loss by at most `ε/√(2π)`, so `ε = 1e-8` (the default)
//! leaves the objective within `4e-9·mean(c)` of the exact one. Starting from `ε = 0.1` (`1e-4` from a
//! given nonzero start) and dividing by ten per stage (warm-started) keeps every Newton stage well
//! conditioned. As soon as every `σ_i` exceeds `10⁴ ε` the floor no longer matters and the solver jumps to
//! the final `ε`. (A trust-region Newton method, LIBLINEAR's TRON, stalls on the nearly piecewise-linear
//! smoothed hinge; the exact line search does not.) Each stage also reduces its own starting gradient
//! tenfold, so that the path is followed at small λ too.
//!
//! For the expected hinge the floor is the accuracy limit where examples sit at the loss' apex
//! (`d_i = 0, σ_i = 0`): after every stage but a cold start's first, [`apex::finish`] fixes the examples
//! near the apex there and solves the rest exactly, and stops the continuation once its duality gap
//! ([`apex::bound`]) meets `gap_tol`. Every fit of a loss with a dual form reports its gap.

use serde::{Deserialize, Serialize};

use super::apex;
use super::columns::UsedColumns;
use super::newton::{self, NewtonSettings, SmoothFunction};
use crate::data::norm2;
use crate::loss::MarginLoss;
use crate::objective::{Curvature, Objective};
use crate::progress::Monitor;
use crate::report::{FitReport, Route, Termination};

/// Settings of the exact solver.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ExactSettings {
    /// Stop when `‖∇J‖ ≤ tol · ‖∇J(0)‖`.
    pub tol: f64,
    /// Maximum Newton iterations in total.
    pub max_iter: usize,
    /// The final floor `ε` on every margin standard deviation.
    pub sigma_floor: f64,
    /// Stop at this relative duality gap `(J - D)/J`, a certified bound on the distance to the optimum (the
    /// default, `10⁻¹⁰`, is the optimum to round-off): the plain hinge (every `Σ_i = 0`) runs until it holds;
    /// a sublinear loss with covariances (the expected hinge) stops as soon as an exact finish at its apex
    /// (`solver::apex`) certifies it, and is `Converged` whenever its gap meets it.
    pub gap_tol: f64,
    /// The plain hinge only: the route to take alone (`None`, the default: chosen from the data, and a
    /// route that stalls hands its iterate to the other; see `svm::linear`'s plain hinge).
    pub route: Option<Route>,
}

impl Default for ExactSettings {
    fn default() -> Self {
        ExactSettings { tol: 1e-6, max_iter: 1000, sigma_floor: 1e-8, gap_tol: 1e-10, route: None }
    }
}

/// The first floor of the continuation.
const FIRST_FLOOR: f64 = 0.1;
/// The first floor when starting from a given nonzero point.
const WARM_FIRST_FLOOR: f64 = 1e-4;
/// Intermediate stages stop at this relative gradient norm when Newton directions are exact (Cholesky).
const STAGE_TOL: f64 = 1e-2;
/// ... and at this one when they come from conjugate gradients: each stage is stiffer than the last
/// (curvature up to `1/ε`), so a stage must hand the next a point near its optimum or the next stage's
/// Newton steps cross the kinks a few at a time, each with hundreds of CG iterations (28×28 images with
/// rank-2 covariances: 45 Newton steps and 2,500 CG iterations instead of over 100 and 16,000).
const STAGE_TOL_CG: f64 = 1e-4;
/// ... and in any case at a tenth of the gradient they start from (but not below a thousandth of the final
/// tolerance, which lets an apex finish start from a well-resolved stage without solving stages to round-off): at
/// small λ the absolute rule can hold at the start of every stage (the gradient is of the size of `λ‖w‖`),
/// and the last stage then has to cover the whole way from the coarsest floor (2 × 50 images at λ = 1e-5:
/// 100 Newton steps in it instead of 11).
const STAGE_REDUCTION: f64 = 0.1;
/// Each stage multiplies the floor by this factor (unless the objective says otherwise:
/// [`Continuation::stage_factor`]).
pub(crate) const STAGE_FACTOR: f64 = 0.1;

/// The objective at one floor, as Newton's method sees it.
pub(crate) struct Smooth<'a, L> {
    objective: Objective<'a, L>,
    at: Vec<f64>,
    curvature: Option<Curvature>,
}

impl<L: MarginLoss> SmoothFunction for Smooth<'_, L> {
    fn dim(&self) -> usize {
        self.objective.dim()
    }
    fn value_grad(&mut self, x: &[f64], grad: &mut [f64]) -> f64 {
        let (v, c) = self.objective.value_grad(x, grad);
        self.at.clear();
        self.at.extend_from_slice(x);
        self.curvature = Some(c);
        v
    }
    fn hess_vec(&self, v: &[f64], out: &mut [f64]) {
        let c = self.curvature.as_ref().expect("value_grad before hess_vec");
        self.objective.hess_vec(&self.at, c, v, out);
    }
    fn hessian(&self, out: &mut [f64]) {
        let c = self.curvature.as_ref().expect("value_grad before hessian");
        self.objective.hessian(&self.at, c, out);
    }
    fn line<'s>(&'s self, x: &[f64], d: &[f64]) -> Box<dyn Fn(f64) -> (f64, f64, f64) + 's> {
        let line = self.objective.line(x, d);
        Box::new(move |alpha| line.eval(alpha))
    }
}

/// `‖∇J(0)‖` of the unsmoothed objective: the reference of the relative stopping rule.
pub fn initial_gradient_norm<L: MarginLoss>(objective: &Objective<'_, L>) -> f64 {
    let exact = Objective { sigma_floor: 0.0, ..*objective };
    norm2(&exact.gradient(&vec![0.0; objective.dim()]))
}

/// An objective as the continuation sees it: smooth stages at a floor `ε`, and the unsmoothed quantities
/// it decides on. The local [`Objective`] is one; the driver of a fit over row shards
/// (`crate::sharded`) is another, so both run exactly [`continuation`].
pub(crate) trait Continuation {
    /// The objective at one floor.
    type Stage<'s>: SmoothFunction
    where
        Self: 's;
    /// The number of variables.
    fn dim(&self) -> usize;
    /// The objective with floor `ε`.
    fn stage(&self, floor: f64) -> Self::Stage<'_>;
    /// `‖∇J(0)‖` at `ε = 0`.
    fn initial_gradient_norm(&self) -> f64;
    /// `(J(x), min_i σ_i(x))` at `ε = 0`.
    fn exact(&self, x: &[f64]) -> (f64, f64);
    /// The factor from one stage's floor to the next's: [`STAGE_FACTOR`] by default.
    fn stage_factor(&self) -> f64 {
        STAGE_FACTOR
    }
    /// `min_i σ_i(x)` at `ε = 0` after a stage ending at `x`, whose next stage has the floor `next_floor`
    /// unless the answer makes it jump to the final one: by default [`Self::exact`]'s. (Over row shards
    /// that round also brings the next stage's first sums along.)
    fn min_sigma_before(&self, x: &[f64], _next_floor: f64) -> f64 {
        self.exact(x).1
    }
    /// The duality-gap certificate of `x`, a stage's solution at floor `ε` ([`apex::bound`]); `None` (the
    /// default) where the objective has no dual form.
    fn bound(&self, _x: &[f64], _floor: f64) -> Option<apex::Bound> {
        None
    }
    /// The exact finish on the examples at the loss' apex from a stage's solution ([`apex::finish`]);
    /// `None` (the default) where there is none.
    fn finish(
        &self,
        _x: &[f64],
        _floor: f64,
        _gap_tol: f64,
        _max_iter: usize,
        _monitor: Monitor<'_>,
    ) -> Option<apex::Finish> {
        None
    }
}

impl<'a, L: MarginLoss> Continuation for Objective<'a, L> {
    type Stage<'s>
        = Smooth<'a, L>
    where
        Self: 's;
    fn dim(&self) -> usize {
        Objective::dim(self)
    }
    fn stage(&self, floor: f64) -> Smooth<'a, L> {
        Smooth { objective: Objective { sigma_floor: floor, ..*self }, at: Vec::new(), curvature: None }
    }
    fn initial_gradient_norm(&self) -> f64 {
        initial_gradient_norm(self)
    }
    fn exact(&self, x: &[f64]) -> (f64, f64) {
        let (sum, min_sigma) = self.data_exact(x);
        (self.regulariser(x) + sum / self.problem.n_samples() as f64, min_sigma)
    }
    fn bound(&self, x: &[f64], floor: f64) -> Option<apex::Bound> {
        apex::bound(self, x, floor)
    }
    fn finish(
        &self,
        x: &[f64],
        floor: f64,
        gap_tol: f64,
        max_iter: usize,
        monitor: Monitor<'_>,
    ) -> Option<apex::Finish> {
        apex::finish(self, x, floor, gap_tol, max_iter, monitor)
    }
}

/// Minimises `objective` (its own `sigma_floor` is ignored) from `x0`, reporting each Newton iteration to
/// `monitor`. On wide sparse data the solver works on the used columns only (the others are zero at the
/// optimum, see `solver::columns`).
pub fn solve<L: MarginLoss>(
    objective: &Objective<'_, L>,
    x0: Vec<f64>,
    settings: &ExactSettings,
    monitor: Monitor<'_>,
) -> (Vec<f64>, FitReport) {
    match UsedColumns::of(&objective.problem) {
        Some(used) => {
            let restricted = Objective {
                problem: used.problem(&objective.problem),
                loss: objective.loss,
                lambda: objective.lambda,
                fit_intercept: objective.fit_intercept,
                sigma_floor: objective.sigma_floor,
            };
            let (x, report) = continuation(&restricted, used.restrict(&x0), settings, monitor);
            (used.expand(&x), report)
        }
        None => continuation(objective, x0, settings, monitor),
    }
}

/// The Newton continuation on the floor `ε` (see the module documentation) from `x0`; iterations are
/// numbered across the stages.
pub(crate) fn continuation<C: Continuation>(
    objective: &C,
    x0: Vec<f64>,
    settings: &ExactSettings,
    monitor: Monitor<'_>,
) -> (Vec<f64>, FitReport) {
    let reference = objective.initial_gradient_norm();
    let final_floor = settings.sigma_floor;
    // A warm start is already near a solution: skip the coarsest stages, whose smoothing would move it away.
    let first = if x0.iter().any(|&v| v != 0.0) { WARM_FIRST_FLOOR } else { FIRST_FLOOR };
    let mut floor = first.max(final_floor);
    let mut x = x0;
    let (mut n_iter, mut finish_iter) = (0, 0);
    let mut trace = Vec::new();
    let stage_tol = if objective.dim() > newton::DIRECT_MAX_DIM { STAGE_TOL_CG } else { STAGE_TOL };
    loop {
        let last = floor <= final_floor || floor == 0.0;
        let mut stage = objective.stage(floor);
        let tol = if last { settings.tol } else { stage_tol.max(settings.tol) };
        let result = newton::minimize(
            &mut stage,
            x,
            NewtonSettings {
                tol,
                gradient_reference: reference,
                max_iter: settings.max_iter.saturating_sub(n_iter),
                reduction: (!last).then_some((STAGE_REDUCTION, 1e-3 * settings.tol)),
            },
            monitor.after(n_iter),
        );
        n_iter += result.n_iter;
        x = result.x;
        trace.push(result.value);
        // The exact finish at the loss' apex, tried after every stage but a cold start's first while the
        // finishes so far have cost no more Newton iterations than the stages: at most about half the work.
        let finished = (floor < FIRST_FLOOR && finish_iter <= n_iter - finish_iter && !monitor.stopped())
            .then(|| {
                let budget = settings.max_iter.saturating_sub(n_iter);
                objective.finish(&x, floor, settings.gap_tol, budget, monitor.after(n_iter))
            })
            .flatten();
        finish_iter += finished.as_ref().map_or(0, |f| f.n_iter);
        n_iter += finished.as_ref().map_or(0, |f| f.n_iter);
        let certified = finished.as_ref().is_some_and(|f| f.bound.gap() <= settings.gap_tol);
        if certified || last || n_iter >= settings.max_iter || monitor.stopped() {
            // Not the last stage: the iteration limit ended the continuation early.
            let mut termination = if last { result.termination } else { Termination::MaxIterations };
            let (mut gradient_norm, mut final_floor) = (result.gradient_norm, floor);
            let mut bound = objective.bound(&x, floor);
            if let Some(f) = finished.filter(|f| bound.is_none_or(|b| f.bound.gap() < b.gap())) {
                (x, bound, gradient_norm, final_floor) = (f.theta, Some(f.bound), f.gradient_norm, 0.0);
            }
            if bound.is_some_and(|b| b.gap() <= settings.gap_tol) {
                termination = Termination::Converged;
            }
            let report = FitReport {
                objective: bound.map_or_else(|| objective.exact(&x).0, |b| b.primal),
                n_iter,
                termination,
                gradient_norm,
                initial_gradient_norm: Some(reference),
                sigma_floor: Some(final_floor),
                objective_trace: trace,
                duality_gap: bound.map(|b| b.gap()),
                rounds: 0,
                norm_bound: None,
                fallback: None,
                routes: Vec::new(),
                degenerate: false,
            };
            return (x, report);
        }
        // Next stage: `stage_factor` (ten) times smaller, snapping to the final floor (no stage just above
        // it) as soon as every σ_i is at least 10⁴ ε, so that lowering ε changes nothing that matters.
        let factor = objective.stage_factor();
        let lower = if floor * factor < 1.5 * final_floor { final_floor } else { floor * factor };
        let min_sigma = objective.min_sigma_before(&x, lower);
        floor = if min_sigma >= 1e4 * floor { final_floor } else { lower };
    }
}
