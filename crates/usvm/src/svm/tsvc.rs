//! TSVC — total support vector classification for bounded input uncertainty (Bi & Zhang, paper 003).
//!
//! Each input is known only up to a ball, `x_i + Δx_i` with `‖Δx_i‖ ≤ δ_i`, and the classifier may move
//! every point within its ball to where it fits best (eq. 6):
//!
//! `min_{w,b,Δx} ½‖w‖² + C Σ c_i max(0, 1 - y_i(wᵀ(x_i + Δx_i) + b))`, `‖Δx_i‖ ≤ δ_i`.
//!
//! **Lemma 1**: for a fixed hyperplane the best perturbation is `Δx_i = y_i δ_i w/‖w‖` (Cauchy-Schwarz:
//! `y_i wᵀΔx_i ≤ δ_i‖w‖`), which turns eq. 6 into eq. 7, a non-convex problem in `(w, b)` alone:
//!
//! `J(w, b) = ½‖w‖² + C Σ c_i max(0, 1 - y_i(wᵀx_i + b) - δ_i‖w‖)`.
//!
//! Power SVM (radius `r_i` from the covariance) is the same loss with `δ_i = r_i`, and uses the same code.
//!
//! Solved three ways:
//! - **alternating** (Algorithm 1): fix `Δx`, solve a hinge SVM on `x_i + Δx_i`; fix `w`, set `Δx` by
//!   Lemma 1. This is majorisation-minimisation: with `u = w_k/‖w_k‖`, the round's SVM objective
//!   `½‖w‖² + C Σ c_i max(0, 1 - y_i(wᵀx_i + b) - δ_i wᵀu)` is ≥ `J(w, b)` everywhere and equal at `w_k`, so
//!   `J` never increases. The rounds stop when `J` decreases by less than `tol·J` (or not at all);
//!   the report carries the objective after every round.
//! - **cone programme** (eq. 8, `solver::conic`): for a fixed norm bound `γ` the problem is an
//!   SOCP; with `γ` free and `½γ²` added it is a convex relaxation of eq. 7 that is exact whenever its
//!   cone constraint is active, so it certifies the global minimum; its dual (eq. 9) gives a duality gap.
//!   For `C`, where the relaxation does not certify (non-separable data), the alternating rounds run as
//!   well and the lower eq. 7 of the two solutions is returned (the report says `NotCertified`, and its
//!   `fallback` which solution was taken): they usually beat the relaxation's search over `γ`.
//! - **kernel** ([`super::tsvc_kernel`]): a kernel SVM on the shifted points, then the first-order Taylor
//!   update `Δx_i = y_i δ_i v_i/‖v_i‖`, `v_i = Σ_j y_j α_j ∇_x k(x_i, x_j + Δx_j)`.
//!
//! ```
//! use ndarray::array;
//! use usvm::Dataset;
//! use usvm::svm::{Delta, TsvcParams};
//! let x = array![[1.0, 2.0], [2.0, 3.0], [-1.0, -1.5], [-2.0, -2.0]];
//! let data = Dataset::dense(x, vec![1, 1, 0, 0]);
//! let params = TsvcParams { c: 1.0, delta: Delta::PerExample(vec![0.1, 0.3, 0.2, 0.1]), ..Default::default() };
//! let fit = params.fit(&data).unwrap();
//! let trace = &fit.reports[0].report.objective_trace;
//! assert!(trace.windows(2).all(|w| w[1] <= w[0]));
//! assert_eq!(fit.model.predict(&data.features).unwrap(), vec![1, 1, 0, 0]);
//! ```

use crate::covariance::{Covariances, NoCovariance};
use crate::data::{Dataset, Features, dot, norm2};
use crate::error::{Error, Result, invalid};
use crate::kernel::Kernel;
use crate::loss::BallHinge;
use crate::model::{LinearModel, Model};
use crate::objective::{Objective, Problem};
use crate::ovr;
use crate::report::{Candidate, Fallback, FitReport, Termination};
use crate::solver::conic::{self, NormBound};

use super::alternating::alternate;
use super::linear::{LinearMethod, LinearSvmParams};
pub use super::tsvc_params::{Delta, TsvcFit, TsvcForm, TsvcParams, TsvcReport};
use crate::progress::Monitor;

/// Cone form for `C` when the relaxation is not exact: values of `γ` on the log grid, and golden-section steps.
const GAMMA_GRID: usize = 12;
const GOLDEN_STEPS: usize = 12;

/// Lemma 1: the perturbation `y δ w/‖w‖` of norm at most `δ` that maximises `y wᵀΔx` (zero for `w = 0`).
pub fn optimal_perturbation(w: &[f64], y: f64, delta: f64) -> Vec<f64> {
    let norm = norm2(w);
    if norm > 0.0 { w.iter().map(|wj| y * delta * wj / norm).collect() } else { vec![0.0; w.len()] }
}

/// Eq. 7, `½‖w‖² + C Σ c_i max(0, 1 - y_i(wᵀx_i + b) - δ_i‖w‖)`, for labels `y_i = ±1`.
pub fn tsvc_objective(
    x: &Features,
    y: &[f64],
    weights: Option<&[f64]>,
    delta: &[f64],
    c: f64,
    w: &[f64],
    b: f64,
) -> f64 {
    let norm = norm2(w);
    let loss: f64 = (0..y.len())
        .map(|i| weights.map_or(1.0, |c| c[i]) * (1.0 - y[i] * (x.row_dot(i, w) + b) - delta[i] * norm).max(0.0))
        .sum();
    0.5 * dot(w, w) + c * loss
}

impl TsvcParams {
    fn validate(&self, data: &Dataset) -> Result<()> {
        if !(self.c > 0.0 && self.c.is_finite()) {
            return Err(invalid("C", self.c, "must be positive and finite"));
        }
        match &self.delta {
            Delta::Uniform(d) if !(*d >= 0.0 && d.is_finite()) => {
                return Err(invalid("delta", d, "must be finite and non-negative"));
            }
            Delta::PerExample(d) => {
                if d.len() != data.n_samples() {
                    return Err(Error::DimensionMismatch { what: "delta", expected: data.n_samples(), found: d.len() });
                }
                if let Some((i, &v)) = d.iter().enumerate().find(|(_, v)| !(v.is_finite() && **v >= 0.0)) {
                    return Err(Error::InvalidParameter {
                        name: "delta",
                        value: format!("{v} (example {i})"),
                        reason: "must be finite and non-negative",
                    });
                }
            }
            Delta::Uniform(_) => {}
        }
        if !(self.tol >= 0.0 && self.tol.is_finite()) {
            return Err(invalid("tol", self.tol, "must be finite and non-negative"));
        }
        self.kernel.validate()?;
        if self.kernel == Kernel::Precomputed {
            return Err(invalid("kernel", "precomputed", "TSVC moves the inputs: it needs a kernel of the inputs"));
        }
        if self.form == TsvcForm::Socp && self.kernel != Kernel::Linear {
            return Err(invalid("form", "socp", "the cone form is for the linear kernel; use alternating"));
        }
        if let Some(g) = self.norm_bound {
            if self.form != TsvcForm::Socp {
                return Err(invalid("norm_bound", g, "applies to the socp form only"));
            }
            if !(g >= 0.0 && g.is_finite()) {
                return Err(invalid("norm_bound", g, "must be finite and non-negative"));
            }
        }
        Ok(())
    }

    /// The bounds `δ_i` of the `ℓ` examples.
    fn deltas(&self, l: usize) -> Vec<f64> {
        match &self.delta {
            Delta::Uniform(d) => vec![*d; l],
            Delta::PerExample(d) => d.clone(),
        }
    }

    /// Fits TSVC: binary for two classes (`classes[1]` positive), one-vs-rest otherwise.
    pub fn fit(&self, data: &Dataset) -> Result<TsvcFit> {
        self.fit_monitored(data, Monitor::default())
    }

    /// [`Self::fit`], reporting the rounds and the solvers' iterations to `monitor`.
    pub fn fit_monitored(&self, data: &Dataset, monitor: Monitor<'_>) -> Result<TsvcFit> {
        data.validate()?;
        self.validate(data)?;
        let delta = self.deltas(data.n_samples());
        // The moved points `x_i ± δ_i u` enter inner products: `(‖x_i‖ + δ_i)²` must be finite.
        for (i, &d) in delta.iter().enumerate() {
            let reach = crate::linalg::norm2(&data.features.row_dense(i)) + d;
            if !(reach * reach).is_finite() {
                return Err(Error::InvalidParameter {
                    name: "delta",
                    value: format!("{d} (example {i})"),
                    reason: "with this example, (‖x_i‖ + δ_i)² overflows the floating-point range",
                });
            }
        }
        if self.kernel != Kernel::Linear {
            return super::tsvc_kernel::fit_one_vs_rest(self, data, &delta, monitor);
        }
        let s = ovr::one_vs_rest(data.classes(), data.n_features(), false, monitor, |_, positive, monitor| {
            let y = ovr::signs(data.labels.iter(), positive);
            let (w, b, report) = match self.form {
                TsvcForm::Alternating => self.fit_alternating(data, &y, &delta, monitor),
                TsvcForm::Socp if self.norm_bound.is_some() => self.fit_socp(data, &y, &delta)?,
                TsvcForm::Socp => self.fit_socp_or_alternating(data, &y, &delta, monitor)?,
            };
            Ok(ovr::Binary { coef: w, intercept: b, report })
        })?;
        let model = LinearModel { classes: s.classes, coef: s.coef.into(), intercept: s.intercept };
        Ok(TsvcFit { model: Model::Linear(model), reports: s.reports })
    }

    /// `λ = 1/(Cℓ)`: the library's λ-form of the same problem.
    fn lambda(&self, l: usize) -> f64 {
        1.0 / (self.c * l as f64)
    }

    fn fit_alternating(
        &self,
        data: &Dataset,
        y: &[f64],
        delta: &[f64],
        monitor: Monitor<'_>,
    ) -> (Vec<f64>, f64, TsvcReport) {
        let l = data.n_samples();
        let lambda = self.lambda(l);
        let radii2 = Covariances::isotropic(delta.iter().map(|d| d * d).collect());
        let problem =
            Problem { features: &data.features, y, weights: data.weights.as_deref(), covariances: radii2.as_dyn() };
        let objective = Objective { fit_intercept: self.fit_intercept, ..Objective::new(problem, BallHinge, lambda) };
        let svm = LinearSvmParams {
            method: LinearMethod::Hinge,
            lambda,
            fit_intercept: self.fit_intercept,
            ..LinearSvmParams::default()
        };
        let hinge = |features: &Features, start: Option<Vec<f64>>, monitor: Monitor<'_>| {
            let p = Problem { features, covariances: &NoCovariance, ..problem };
            svm.run_expected_hinge(p, lambda, start, monitor)
        };
        let mut run = alternate(&objective, delta, None, self.max_rounds, self.tol, monitor, hinge);
        // Report eq. 7 itself (the λ-form times Cℓ = 1/λ).
        run.report.objective /= lambda;
        run.report.objective_trace.iter_mut().for_each(|v| *v /= lambda);
        if !run.settled {
            run.report.termination = run.report.termination.and(Termination::MaxIterations);
        }
        let n = data.n_features();
        let b = if self.fit_intercept { run.theta[n] } else { 0.0 };
        run.theta.truncate(n);
        let report = TsvcReport { report: run.report, dual_objective: None, duality_gap: None, lower_bound: None };
        (run.theta, b, report)
    }

    /// The cone form for `C`: the relaxation's solution ([`Self::fit_socp`]) when it is certified, else the
    /// better of it and the alternating rounds' ([`Self::fit_alternating`]) on eq. 7 — where the relaxation
    /// does not certify, its search over `γ` can end far above the rounds' local minimum. The termination
    /// stays the relaxation's (`NotCertified`, or `MaxIterations` if the interior-point solver stopped
    /// short); `fallback` says which solution was returned. Taking the rounds' solution, the report is
    /// theirs (objective, trace, iterations, rounds, residual) with the relaxation's lower bound, and no
    /// duality gap or norm bound (those describe the solution not returned).
    fn fit_socp_or_alternating(
        &self,
        data: &Dataset,
        y: &[f64],
        delta: &[f64],
        monitor: Monitor<'_>,
    ) -> Result<(Vec<f64>, f64, TsvcReport)> {
        let (w, b, mut relaxed) = self.fit_socp(data, y, delta)?;
        if relaxed.report.converged() {
            return Ok((w, b, relaxed));
        }
        let (w_alt, b_alt, alternating) = self.fit_alternating(data, y, delta, monitor);
        let (relaxation_objective, alternating_objective) = (relaxed.report.objective, alternating.report.objective);
        let taken =
            if alternating_objective < relaxation_objective { Candidate::Alternating } else { Candidate::Relaxation };
        let fallback = Some(Fallback { taken, relaxation_objective, alternating_objective });
        if taken == Candidate::Relaxation {
            relaxed.report.fallback = fallback;
            return Ok((w, b, relaxed));
        }
        let report = FitReport { termination: relaxed.report.termination, fallback, ..alternating.report };
        let report = TsvcReport { report, dual_objective: None, duality_gap: None, lower_bound: relaxed.lower_bound };
        Ok((w_alt, b_alt, report))
    }

    /// The cone form. For a fixed `norm_bound`: eq. 8 once. For `C`: first the convex relaxation with `γ`
    /// free, whose value is a lower bound on eq. 7 and which is eq. 7's global minimum when its cone
    /// constraint is active (`‖w‖ = γ`). When it is not (many margin violators: `C Σ α_i δ_i > ‖w‖`), eq. 7 is
    /// minimised over `γ` with eq. 8 at each `γ`: [`GAMMA_GRID`] log-spaced values in `(0, √(2CΣc_i)]`
    /// (the optimal `‖w‖` is no larger, since `J(0) ≤ C Σ c_i`), then golden-section refinement around the best.
    /// That search is not guaranteed to reach eq. 7's minimum — its minimiser may sit where eq. 8's cone
    /// constraint is inactive, so that no eq. 8 solution is on the sphere `‖w‖ = γ` (Bi & Zhang's claim that
    /// eq. 8 "produces exactly the same solution" holds only when the constraint is active) — so the report
    /// then says `NotCertified`, with the relaxation's lower bound; the alternating form often does better
    /// there ([`Self::fit_socp_or_alternating`] compares the two).
    fn fit_socp(&self, data: &Dataset, y: &[f64], delta: &[f64]) -> Result<(Vec<f64>, f64, TsvcReport)> {
        let (x, weights) = (&data.features, data.weights.as_deref());
        let solve = |bound| conic::tsvc_socp(x, y, weights, delta, self.fit_intercept, bound, 200);
        let eq7 = |sol: &conic::SocpSolution| tsvc_objective(x, y, weights, delta, self.c, &sol.w, sol.b);
        let (mut n_iter, mut solves, mut solved) = (0usize, 0usize, true);
        let mut count = |sol: &conic::SocpSolution| {
            n_iter += sol.iterations as usize;
            solves += 1;
            solved &= sol.solved;
        };
        let mut certified = true;
        let (best, objective, lower_bound) = match self.norm_bound {
            Some(g) => {
                let sol = solve(NormBound::Fixed(g))?;
                count(&sol);
                let primal = sol.primal;
                (sol, primal, None)
            }
            None => {
                let joint = solve(NormBound::Cost(self.c))?;
                count(&joint);
                let lower = 0.5 * joint.gamma * joint.gamma + self.c * joint.primal;
                if norm2(&joint.w) >= joint.gamma * (1.0 - 1e-6) {
                    let value = eq7(&joint);
                    (joint, value, Some(lower))
                } else {
                    certified = false;
                    let total: f64 = (0..y.len()).map(|i| weights.map_or(1.0, |c| c[i])).sum();
                    let hi = (2.0 * self.c * total).sqrt();
                    let mut evaluate = |g: f64| -> Result<(f64, conic::SocpSolution)> {
                        let sol = solve(NormBound::Fixed(g))?;
                        count(&sol);
                        Ok((eq7(&sol), sol))
                    };
                    let grid: Vec<f64> =
                        (0..GAMMA_GRID).map(|k| hi * 2f64.powi(k as i32 - GAMMA_GRID as i32 + 1)).collect();
                    let mut values = Vec::with_capacity(grid.len());
                    let mut best = (f64::INFINITY, None);
                    for &g in &grid {
                        let (v, sol) = evaluate(g)?;
                        values.push(v);
                        if v < best.0 {
                            best = (v, Some(sol));
                        }
                    }
                    let k = (0..grid.len()).fold(0, |b, k| if values[k] < values[b] { k } else { b });
                    let (mut a, mut d) = (grid[k.saturating_sub(1)], grid[(k + 1).min(grid.len() - 1)]);
                    let phi = 0.5 * (5f64.sqrt() - 1.0);
                    for _ in 0..GOLDEN_STEPS {
                        let (b, c) = (d - phi * (d - a), a + phi * (d - a));
                        let ((vb, sb), (vc, sc)) = (evaluate(b)?, evaluate(c)?);
                        if vb <= vc {
                            d = c
                        } else {
                            a = b
                        }
                        for (v, sol) in [(vb, sb), (vc, sc)] {
                            if v < best.0 {
                                best = (v, Some(sol));
                            }
                        }
                    }
                    let (value, sol) = best;
                    (sol.expect("the grid is not empty"), value, Some(lower))
                }
            }
        };
        let gap = best.duality_gap();
        let report = FitReport {
            objective,
            n_iter,
            termination: match (solved, certified) {
                (false, _) => Termination::MaxIterations,
                (true, false) => Termination::NotCertified,
                (true, true) => Termination::Converged,
            },
            gradient_norm: gap.abs(),
            initial_gradient_norm: None,
            sigma_floor: None,
            objective_trace: vec![objective],
            duality_gap: Some((gap / best.primal.abs().max(1.0)).max(0.0)),
            rounds: solves,
            norm_bound: Some(best.gamma),
            fallback: None,
            routes: Vec::new(),
            degenerate: false,
        };
        let report = TsvcReport { report, dual_objective: Some(best.dual), duality_gap: Some(gap), lower_bound };
        Ok((best.w, best.b, report))
    }
}
