//! The plain hinge over shards in tens of round trips (and Power SVM's rounds, which are hinge fits): a
//! distributed dual method, then an exact finish on the rows near the margin.
//!
//! **The dual method** is CoCoA+ (Ma, Smith, Jaggi, Jordan, Richtárik & Takáč 2015; Smith et al. 2018) on the
//! C-form dual of [`crate::solver::dual_cd`], `C = 1/(λ Σc)`: each round every shard runs `passes` passes of
//! coordinate descent on its own multipliers against the local subproblem scaled by `σ' = K` (the number of
//! shards), and the driver adds the updates of `w = Σ α_i y_i x_i` (`γ = 1`, "adding"). The equality
//! constraint `yᵀα = 0` of the unregularised bias is kept as locally, by an augmented Lagrangian (penalty
//! `ρ` = the mean `‖x_i‖²`, multiplier `μ` moved by `ρ yᵀα` after every round), so the problem stays the
//! one with an unregularised bias. Each round also certifies the multipliers it starts from: the primal
//! `J` at the round's `w` and the best of a ladder of biases around `b̂ = μ + ρ yᵀα`, the dual at the
//! multipliers with the larger class scaled to meet `yᵀα = 0` (from the shards' class sums, so free of the
//! drift of added updates). The shards keep the multipliers (or pass them along, [`super::DualState`]).
//!
//! **The smoothed start.** Where a multiplier needs many coordinate steps to cross its box (large `C`: small
//! λ, long rows), the dual method's rounds progress slowly, as the local dual coordinate descent's epochs
//! do; and where the finish gathers a small share of the rows (over ~10⁵ rows), its band around the margin
//! is too narrow for the dual method's points. There the fit starts, as the local fit's primal route does,
//! with Newton on the hinge smoothed down to the floor [`SMOOTHED_FLOOR`] over the shards (the Hessian sent
//! up to 64 variables, GIANT's directions beyond, one-round line searches that bring the next derivatives
//! along: about two rounds a step), and goes straight to the exact finish from its solution. One stage at
//! `σ = 0.1` is usually near enough: going on to `σ = 0.01` at once, Newton took 16 more small steps on the
//! nearly unsmoothed hinge (GIANT's directions, 2 shards of 20,000 × 100: 55 rounds in all, now 20). If the
//! finish does not certify, one more stage at a tenth of the floor and the finish again (down to
//! [`SMOOTHED_FLOOR_MIN`], while the stages converge); the dual method's rounds follow only after that.
//!
//! **A warm start** (Power SVM's next round, whose moved points are near the last round's, or a path's
//! next λ) tries the exact finish from the nearby solution first: its margin rows are nearly the new
//! ones (Power SVM at λ = 1e-5 on 2 shards of 20,000 × 20: 3 rounds per alternation instead of 24, 43 in
//! all instead of 169).
//!
//! **The exact finish.** Coordinate descent reaches a gap of a few percent in tens of rounds but `10⁻¹⁰`
//! only slowly; at the optimum, though, only the rows on the margin are undetermined. Once the gap is below
//! [`FINISH_GAP`] (or after [`FIRST_TRY`] rounds and each doubling of them), the rows nearest the margin
//! are gathered ([`super::Question::Margin`]: a few thousand, [`gather_target`], within a band chosen from
//! the round's histogram of `|d_i|`) and every other row with `d_i > band` is summed per class into one row
//! of weight `Σ c_i` (while its rows keep `d_i > 0` it is the same linear term). The driver solves this small
//! hinge problem exactly: by the working-set solve of [`reduced_solve`] with the summed rows fixed as a
//! linear term (at 10⁶ rows they weigh ~10⁵ times as much as a gathered row, and every route of the local
//! solver stalls on such rows), else by the local certified solver ([`LinearSvmParams`]'s plain hinge),
//! and asks for the hinge at its solution: its multipliers, spread over the summed rows in proportion to `c_i`, are a
//! dual point of the whole problem with the same dual value, so the whole primal against the small
//! problem's dual is a certificate of the whole fit. If a row left outside changed side the gap shows it;
//! the same round evaluates the whole objective along the segment from the point the small problem was
//! built at and gathers the band around the new solution, and the finish goes on from the segment's best
//! point (a descent: the objective is convex; where that point is not the new solution, which overshot,
//! from the band around it, one round more) for at most [`FINISH_ATTEMPTS`] rounds, or until it makes no
//! progress. Then the dual method's rounds go on, and a finish is tried again once the gap has halved.

use super::driver::ShardedObjective;
use super::dual_round::{bin_edge, stack};
use super::protocol::{Answer, BINS, DualAnswer, DualRound, MarginAnswer, Question, Target};
use crate::covariance::Covariances;
use crate::data::{Features, axpy, dot, norm2};
use crate::objective::Problem;
use crate::progress::Monitor;
use crate::report::{FitReport, Route, Termination};
use crate::solver::dual_cd::{DualLoss, class_scales, dual_value, relative_gap};
use crate::solver::exact::{Continuation, ExactSettings, continuation};
use crate::solver::hinge_polish::{reduced_solve, working_set_size};
use crate::svm::{LinearMethod, LinearSvmParams, Solver};

/// The smoothed start ([`ShardedObjective::smoothed_start_pays`]) stops at this floor on `σ_i` (its
/// first: one stage).
pub const SMOOTHED_FLOOR: f64 = 1e-1;
/// ... and, while the finish from a stage does not certify, at a tenth of the last floor down to this one
/// (the finish gathers a number of rows that does not grow with the data: the more rows, the narrower
/// their band around the margin, and the nearer the optimum the finish has to start);
pub const SMOOTHED_FLOOR_MIN: f64 = 1e-6;
/// ... in at most this many Newton steps per stage,
pub const SMOOTHED_MAX_ITER: usize = 20;
/// ... and is taken from this many coordinate steps per multiplier's box (and rows per coordinate): fewer
/// than the local fit's 10 for its primal route, since a round costs more than an epoch (measured with the
/// two-stage smoothed start, to σ = 0.01: the dual method takes 15–19 rounds at 1–3.5 steps, 51 at 5; the
/// smoothed start 17–22 at 5–100, 28 at 3.5. The one-stage start is not re-measured against it).
pub const SMOOTHED_START_STEPS: f64 = 4.0;
/// ... or whenever the exact finish gathers less than this share of the rows.
pub const SMOOTHED_START_SHARE: f64 = 0.05;
/// Passes of coordinate descent per shard and round.
pub const PASSES: usize = 2;
/// A finish is first tried once the relative duality gap is below this.
pub const FINISH_GAP: f64 = 5e-2;
/// ... or at the latest after this many rounds, and after each doubling of the rounds.
pub const FIRST_TRY: u64 = 8;
/// Rounds of one finish (each certifies the last small solution and gathers the band for the next).
pub const FINISH_ATTEMPTS: usize = 6;
/// Steps `τ = 2^-k`, `k = 1…`, of a finish's line search (with `τ = 1`).
const LINE_STEPS: usize = 12;
/// Rows gathered for a finish at most (else [`working_set_size`]).
const MAX_GATHER: usize = 20_000;

/// Interior-point iterations of a finish's working-set solve ([`reduced_solve`]), over its QPs.
const REDUCED_QP: usize = 2 * crate::solver::hinge_qp::MAX_ITERATIONS;

/// The best point and dual bound so far.
struct Certificate {
    theta: Vec<f64>,
    primal: f64,
    dual: f64,
}

impl Certificate {
    /// The relative duality gap (`+∞` before both bounds are known).
    fn gap(&self) -> f64 {
        if self.primal.is_finite() && self.dual.is_finite() {
            relative_gap(self.primal, self.dual)
        } else {
            f64::INFINITY
        }
    }

    fn offer(&mut self, theta: &[f64], primal: f64) {
        if primal < self.primal {
            self.primal = primal;
            self.theta = theta.to_vec();
        }
    }
}

/// A small problem's exact solution: its point, its dual value (a lower bound for the whole problem) and
/// the residual of its optimality conditions.
struct Reduced {
    theta: Vec<f64>,
    dual: f64,
    residual: f64,
}

impl ShardedObjective<'_, '_> {
    /// The hinge fit of this objective (its target: the method's rows or Power SVM's moved ones) by the
    /// distributed dual method and the exact finish, certified to `settings.gap_tol`; `settings.max_iter`
    /// bounds its rounds. From `start` (a nearby solution: Power SVM's last round, a path's last λ) the
    /// exact finish is tried first, and a smoothed start begins there rather than at 0.
    pub(super) fn hinge_by_dual(&self, settings: &ExactSettings, start: Option<Vec<f64>>) -> (Vec<f64>, FitReport) {
        let (n, dim) = (self.n, self.dim());
        let tol = settings.gap_tol;
        let upper = self.inv_l / self.lambda;
        let rho = if self.fit_intercept { self.driver.rho } else { 0.0 };
        let offsets = bias_offsets(self.fit_intercept);
        let solve = self.driver.next_solve();
        let (mut w, mut t, mut mu) = (vec![0.0; n], 0.0, 0.0);
        let mut best = Certificate { theta: vec![0.0; dim], primal: f64::INFINITY, dual: f64::NEG_INFINITY };
        let (mut rounds, mut dual_rounds) = (0, 0);
        let mut residual = None;
        let few = self.driver.n_samples <= gather_target(dim);
        let start = start.filter(|x| x.len() == dim && x.iter().any(|&v| v != 0.0));
        if few {
            // Few rows: the finish gathers them all, and its small problem is the whole one.
            let from = best.theta.clone();
            let (found, used) = self.finish(&mut best, &from, f64::INFINITY, settings, settings.max_iter, false);
            rounds += used;
            residual = found;
        } else if let Some(x0) = &start {
            // A nearby solution (Power SVM's last round, a path's last λ): its margin rows are nearly this
            // one's, so the finish from it.
            let (found, used) = self.finish(&mut best, x0, f64::INFINITY, settings, settings.max_iter, true);
            rounds += used;
            residual = found;
        }
        if !few && best.gap() > tol && !self.driver.failed() && self.smoothed_start_pays() {
            // Large `C`, where the dual method's rounds progress slowly: Newton on the hinge smoothed down to
            // the floor SMOOTHED_FLOOR (one-round line searches bringing the next derivatives along), then
            // the exact finish from there; if that does not certify, one more stage at a tenth of the floor
            // and the finish again, down to SMOOTHED_FLOOR_MIN. The more rows, the narrower the band of the
            // rows the finish gathers, and the nearer the optimum it has to start.
            let smoothed = ShardedObjective { grid_line: true, target: self.target.clone(), ..*self };
            // At most SMOOTHED_MAX_ITER Newton steps per stage (each about two rounds), and a quarter of the
            // budget in all: it only has to come near enough for the finish, and the dual method keeps the
            // rest should it not.
            let mut newton_budget = (settings.max_iter / 4).max(1);
            let mut x = start.unwrap_or_else(|| vec![0.0; dim]);
            let mut floor = SMOOTHED_FLOOR;
            while newton_budget > 0 && rounds < settings.max_iter && !self.driver.failed() {
                let before = self.driver.rounds();
                let max_iter = newton_budget.min(SMOOTHED_MAX_ITER);
                let smoothing = ExactSettings { sigma_floor: floor, max_iter, ..*settings };
                let (theta, stage) = continuation(&smoothed, x, &smoothing, Monitor::default());
                newton_budget -= stage.n_iter.clamp(1, newton_budget);
                rounds += self.driver.rounds() - before;
                if rounds >= settings.max_iter || self.driver.failed() {
                    break;
                }
                let (found, used) =
                    self.finish(&mut best, &theta, f64::INFINITY, settings, settings.max_iter - rounds, false);
                rounds += used;
                residual = found.or(residual);
                // A stage that did not converge (ill-scaled columns) would not do better at a lower floor.
                if best.gap() <= tol || floor <= SMOOTHED_FLOOR_MIN || !stage.converged() {
                    break;
                }
                floor *= 0.1;
                x = theta;
            }
        }
        let mut finish_below = FINISH_GAP;
        let mut next_try = FIRST_TRY;
        while rounds < settings.max_iter && best.gap() > tol && !self.driver.failed() {
            let bias = mu + rho * t;
            let mut theta = w.clone();
            if self.fit_intercept {
                theta.push(bias);
            }
            let question = Question::Dual(DualRound {
                at: self.point(&theta, 0.0),
                solve,
                round: dual_rounds,
                upper,
                rho,
                sigma: self.driver.n_shards as f64,
                passes: PASSES,
                offsets: offsets.clone(),
            });
            rounds += 1;
            dual_rounds += 1;
            let Some(sum) = self.dual_sums(&question) else { break };
            let (k, hinge) =
                sum.hinge.iter().enumerate().fold((0, f64::INFINITY), |b, (k, &h)| if h < b.1 { (k, h) } else { b });
            if self.fit_intercept {
                theta[n] = bias + offsets[k];
            }
            best.offer(&theta, 0.5 * self.lambda * dot(&w, &w) + self.inv_l * hinge);
            best.dual = best.dual.max(self.lambda * feasible_dual(&sum, self.fit_intercept));
            if best.gap() <= tol {
                break;
            }
            let scheduled = dual_rounds >= next_try;
            if (best.gap() <= finish_below || scheduled) && rounds < settings.max_iter {
                next_try = 2 * dual_rounds.max(FIRST_TRY / 2);
                let target = gather_target(dim);
                let band = band_for(&sum.histogram, target);
                let from = best.theta.clone();
                let (found, used) = self.finish(&mut best, &from, band, settings, settings.max_iter - rounds, false);
                rounds += used;
                if found.is_some() {
                    residual = found;
                }
                if best.gap() <= tol {
                    break;
                }
                finish_below = best.gap() / 2.0;
            }
            // The multipliers after the round: `w` from the class sums (exact), plus the added updates.
            w = sum.class_sums[0].clone();
            axpy(-1.0, &sum.class_sums[1], &mut w);
            axpy(1.0, &sum.delta_w, &mut w);
            t = sum.class_alpha[0] - sum.class_alpha[1] + sum.delta_t;
            mu += rho * t;
        }
        let gap = best.gap();
        let met = gap <= tol;
        let gradient_norm = match residual {
            Some(r) if met => r,
            _ => self.subgradient_norm(&best.theta).unwrap_or(f64::INFINITY),
        };
        let report = FitReport {
            objective: best.primal,
            n_iter: rounds,
            termination: if self.driver.failed() {
                Termination::Stalled
            } else {
                Termination::of_run(met, rounds, settings.max_iter)
            },
            gradient_norm,
            initial_gradient_norm: None,
            sigma_floor: Some(0.0),
            objective_trace: vec![best.primal],
            duality_gap: Some(gap),
            rounds: 0,
            norm_bound: None,
            fallback: None,
            routes: vec![Route::Cocoa],
            degenerate: false,
        };
        (best.theta, report)
    }

    /// Whether to start from the smoothed hinge rather than the dual method: like the local fit's choice of
    /// its primal route, when a multiplier needs at least [`SMOOTHED_START_STEPS`] coordinate steps to
    /// cross its box (`C` times the mean weight times `2 mean ‖x_i‖²`) and there are at least that many
    /// times more rows than coordinates (the free multipliers' Gram matrix is then rank-deficient); and
    /// whenever the finish gathers less than [`SMOOTHED_START_SHARE`] of the rows, whose band around the
    /// margin is then too narrow for the dual method's points (10⁶ × 10 at λ = 1e-5 on 3 shards: 43–95
    /// rounds from them, 13 from the smoothed start).
    fn smoothed_start_pays(&self) -> bool {
        let (l, dim) = (self.driver.n_samples as f64, self.dim());
        let mean_weight_c = self.inv_l * self.driver.weight_sum / (self.lambda * l);
        let slow =
            l >= SMOOTHED_START_STEPS * dim as f64 && mean_weight_c * 2.0 * self.driver.rho >= SMOOTHED_START_STEPS;
        slow || (gather_target(dim) as f64) < SMOOTHED_START_SHARE * l
    }

    /// The shards' answers to a [`Question::Dual`], summed in shard order; `None` after a failure.
    fn dual_sums(&self, question: &Question) -> Option<DualAnswer> {
        let answers = self.driver.ask_in_solver(question)?;
        let n = self.n;
        let offsets = match question {
            Question::Dual(r) => r.offsets.len(),
            _ => unreachable!("a dual round"),
        };
        let mut sum = DualAnswer {
            class_sums: [vec![0.0; n], vec![0.0; n]],
            class_alpha: [0.0; 2],
            hinge: vec![0.0; offsets],
            histogram: vec![0; BINS],
            delta_w: vec![0.0; n],
            delta_t: 0.0,
        };
        let well_formed = |d: &DualAnswer| {
            d.class_sums.iter().all(|s| s.len() == n)
                && d.delta_w.len() == n
                && d.hinge.len() == offsets
                && d.histogram.len() == BINS
        };
        for (index, a) in answers.into_iter().enumerate() {
            match a {
                Answer::Dual(d) if well_formed(&d) => {
                    for k in 0..2 {
                        axpy(1.0, &d.class_sums[k], &mut sum.class_sums[k]);
                        sum.class_alpha[k] += d.class_alpha[k];
                    }
                    axpy(1.0, &d.hinge, &mut sum.hinge);
                    sum.histogram.iter_mut().zip(&d.histogram).for_each(|(s, h)| *s += h);
                    axpy(1.0, &d.delta_w, &mut sum.delta_w);
                    sum.delta_t += d.delta_t;
                }
                _ => {
                    self.driver.fail(index, "a malformed answer to Dual");
                    return None;
                }
            }
        }
        Some(sum)
    }

    /// The exact finish from `from` with at most `budget` rounds, gathering the rows within `band` of
    /// the margin (at most [`gather_target`] over all shards, the nearest in each): updates `best` and returns the last
    /// small problem's residual (if one was solved) and the rounds used. Each round asks at the last small
    /// problem's solution `θ*` for the hinge there, along the segment from the point it was built at, and
    /// the band around `θ*`; the finish goes on from the segment's best point (the whole objective is convex,
    /// so it descends), and stops when that is no better than where it started. With `expect_certified` (a
    /// finish from a nearby solution), the first `θ*` is asked about without the band or the segment: they
    /// come only if it does not certify, in a round of their own.
    fn finish(
        &self,
        best: &mut Certificate,
        from: &[f64],
        band: f64,
        settings: &ExactSettings,
        budget: usize,
        expect_certified: bool,
    ) -> (Option<f64>, usize) {
        let per_shard = self.finish_rows();
        let steps: Vec<f64> = (1..=LINE_STEPS).map(|k| (-(k as f64)).exp2()).collect();
        let mut theta = from.to_vec();
        // The point the last small problem was built at, and its objective.
        let mut origin: Option<(Vec<f64>, f64)> = None;
        let mut last: Option<Reduced> = None;
        let mut used = 0;
        let mut lean = expect_certified;
        for attempt in 0..=FINISH_ATTEMPTS {
            if used >= budget {
                break;
            }
            used += 1;
            let along = origin.as_ref().map_or(&[][..], |(o, _)| o.as_slice());
            let lean_now = lean && last.is_some();
            // A lean question asks for neither rows nor the segment: both come again if it does not certify.
            let (rows, segment) = if lean_now { (0, &[][..]) } else { (per_shard, along) };
            let asked = match &self.target {
                Target::Moved { w: now } if lean_now => self.first_of_next(&theta, now),
                _ => self.margin_sums(&theta, band, rows, (segment, &steps)),
            };
            let Some(mut m) = asked else { break };
            let value =
                |t: &[f64], hinge: f64| 0.5 * self.lambda * dot(&t[..self.n], &t[..self.n]) + self.inv_l * hinge;
            let at_theta = value(&theta, m.hinge);
            best.offer(&theta, at_theta);
            if let Some(r) = &last {
                best.dual = best.dual.max(r.dual);
                if best.gap() <= settings.gap_tol {
                    return (Some(r.residual), used);
                }
            }
            if lean_now {
                // Not certified: the band around `θ*` after all.
                lean = false;
                if used >= budget {
                    break;
                }
                used += 1;
                let Some(full) = self.margin_sums(&theta, band, per_shard, (along, &steps)) else { break };
                m = full;
            }
            // The best point of the segment (`θ*` itself at `τ = 1`).
            let mut here = (theta.clone(), at_theta);
            if let Some((o, at_origin)) = &origin {
                for (&tau, &hinge) in steps.iter().zip(&m.line) {
                    let t: Vec<f64> = o.iter().zip(&theta).map(|(a, b)| a + tau * (b - a)).collect();
                    let v = value(&t, hinge);
                    if v < here.1 {
                        here = (t, v);
                    }
                }
                best.offer(&here.0, here.1);
                if here.1 >= *at_origin {
                    break;
                }
            }
            if attempt == FINISH_ATTEMPTS {
                break;
            }
            if here.1 < at_theta {
                // `θ*` overshot (its small problem's band was far from its own margin: Power SVM's first
                // alternation moves every row by `r_i` at once): the next small problem is built around the
                // segment's best point, from its band, for one more round. Built around `θ*` it overshot
                // again (100,000 × 100, λ = 1e-5: J 0.118 → 0.218 → 2.55), and the fit fell back to the
                // smoothed start, 13 rounds more.
                if used >= budget {
                    break;
                }
                used += 1;
                let Some(at_here) = self.margin_sums(&here.0, band, per_shard, (&[], &[])) else { break };
                m = at_here;
                theta = here.0.clone();
            }
            // The small problem of the band around `θ`, a model of the objective near the segment.
            let Some(r) = self.solve_reduced(&m, &theta, settings) else { break };
            theta = r.theta.clone();
            origin = Some(here);
            last = Some(r);
        }
        (None, used)
    }

    /// Rows a finish gathers per shard: all of them when there are so few; else an even share of
    /// [`gather_target`].
    fn finish_rows(&self) -> usize {
        let target = gather_target(self.dim());
        if self.driver.n_samples <= target {
            self.driver.n_samples
        } else {
            target.div_ceil(self.driver.n_shards).max(1)
        }
    }

    /// The objective at `θ` from the first question of a finish from `θ`, asked ahead (or already, by the
    /// last finish's certificate, [`Self::first_of_next`]) and kept for that finish; NaN after a failure.
    pub(super) fn first_finish_value(&self, theta: &[f64]) -> f64 {
        let question = self.first_question(theta, &[]);
        let Some(answers) = self.driver.ask_kept(&question) else { return f64::NAN };
        self.driver.keep(question, answers.clone());
        match self.gather_margins(answers, 0) {
            Some(m) => 0.5 * self.lambda * dot(&theta[..self.n], &theta[..self.n]) + self.inv_l * m.hinge,
            None => f64::NAN,
        }
    }

    /// The first question of a finish from `θ`: the hinge there and the rows nearest the margin (and the
    /// hinge of the rows moved for `also`, if not empty).
    fn first_question(&self, theta: &[f64], also: &[f64]) -> Question {
        self.margin_question(theta, f64::INFINITY, self.finish_rows(), (&[], &[]), also)
    }

    /// Power SVM's certificate of a warm finish at `θ*`: the hinge of this alternation's moved rows at `θ*`,
    /// brought by the next alternation's first question (the rows moved for `θ*` itself, whose answers
    /// are kept for it) from the same pass. The rows and sums in the result are the next target's.
    fn first_of_next(&self, theta: &[f64], now: &[f64]) -> Option<MarginAnswer> {
        let next = ShardedObjective { target: Target::Moved { w: theta[..self.n].to_vec() }, ..*self };
        let answers = self.driver.ask_in_solver(&next.first_question(theta, now))?;
        self.driver.keep(next.first_question(theta, &[]), answers.clone());
        let mut m = self.gather_margins(answers, 0)?;
        m.hinge = m.also_hinge;
        Some(m)
    }

    /// [`Question::Margin`] at `θ` about this objective's target: the `segment` is its line's origin and
    /// steps (an empty origin for none), `also` a second moved target's `w` (empty for none).
    fn margin_question(
        &self,
        theta: &[f64],
        band: f64,
        max_rows: usize,
        segment: (&[f64], &[f64]),
        also: &[f64],
    ) -> Question {
        let (origin, steps) = segment;
        Question::Margin {
            at: self.point(theta, 0.0),
            band,
            max_rows,
            origin: origin.to_vec(),
            steps: if origin.is_empty() { Vec::new() } else { steps.to_vec() },
            also: also.to_vec(),
        }
    }

    /// The shards' answers to a [`Question::Margin`] ([`Self::margin_question`]'s arguments), gathered in
    /// shard order; `None` after a failure.
    fn margin_sums(&self, theta: &[f64], band: f64, rows: usize, segment: (&[f64], &[f64])) -> Option<MarginAnswer> {
        let answers = self.driver.ask_kept(&self.margin_question(theta, band, rows, segment, &[]))?;
        self.gather_margins(answers, if segment.0.is_empty() { 0 } else { segment.1.len() })
    }

    /// Margin answers, checked and gathered in shard order (`line` values each); `None` if one is malformed.
    fn gather_margins(&self, answers: Vec<Answer>, line: usize) -> Option<MarginAnswer> {
        let n = self.n;
        let mut parts = Vec::with_capacity(answers.len());
        let (mut hinge, mut also_hinge, mut y, mut c) = (0.0, 0.0, Vec::new(), Vec::new());
        let mut line = vec![0.0; line];
        let (mut active_sums, mut active_weights) = ([vec![0.0; n], vec![0.0; n]], [0.0; 2]);
        for (index, a) in answers.into_iter().enumerate() {
            match a {
                Answer::Margin(m)
                    if m.rows.n_features() == n
                        && m.rows.n_samples() == m.y.len()
                        && m.c.len() == m.y.len()
                        && m.line.len() == line.len()
                        && m.active_sums.iter().all(|s| s.len() == n) =>
                {
                    hinge += m.hinge;
                    also_hinge += m.also_hinge;
                    axpy(1.0, &m.line, &mut line);
                    y.extend_from_slice(&m.y);
                    c.extend_from_slice(&m.c);
                    for k in 0..2 {
                        axpy(1.0, &m.active_sums[k], &mut active_sums[k]);
                        active_weights[k] += m.active_weights[k];
                    }
                    parts.push(m.rows);
                }
                _ => {
                    self.driver.fail(index, "a malformed answer to Margin");
                    return None;
                }
            }
        }
        let rows = stack(&parts.iter().collect::<Vec<_>>(), &[], n);
        Some(MarginAnswer { hinge, line, rows, y, c, active_sums, active_weights, also_hinge })
    }

    /// The small problem of a finish, gathered at `from`: the gathered rows and, per class, the summed row
    /// of those beyond the band, solved exactly in the whole problem's normalisation.
    fn solve_reduced(&self, m: &MarginAnswer, from: &[f64], settings: &ExactSettings) -> Option<Reduced> {
        let n = self.n;
        let mut extra = Vec::new();
        let (mut y, mut c) = (m.y.clone(), m.c.clone());
        for (k, sign) in [(0, 1.0), (1, -1.0)] {
            let weight = m.active_weights[k];
            if weight > 0.0 {
                extra.push(m.active_sums[k].iter().map(|v| v / weight).collect::<Vec<f64>>());
                y.push(sign);
                c.push(weight);
            }
        }
        if !(y.iter().any(|&v| v > 0.0) && y.iter().any(|&v| v < 0.0)) {
            return None;
        }
        let features: Features<'static> = stack(&[&m.rows], &extra, n);
        // `(1/ℓ') Σ c'_i L_i` with `c'_i = c_i ℓ' inv_l` is the whole problem's `inv_l Σ c_i L_i`.
        let scale = y.len() as f64 * self.inv_l;
        c.iter_mut().for_each(|v| *v *= scale);
        // First the working-set solve of the gathered rows with the summed ones fixed on the loss' linear
        // side: a linear term, not two rows weighing thousands of times as much as the others, on which
        // every route of the local solver stalls once the band is narrow (10⁶ rows at 100 features: 5,050
        // gathered, the sums weighing 1.8·10⁵ times as much; a duality gap of 1.8e-5 after 230 iterations).
        // Its certificate takes the first interior-point iterate that meets the gap, if the active-set
        // solve does not settle first. Then, should it fail, the local solver.
        let (x, w) = (&features, Some(c.as_slice()));
        let gap = Some(settings.gap_tol);
        let solved = reduced_solve(
            x,
            &y,
            w,
            self.lambda,
            self.fit_intercept,
            from,
            m.y.len(),
            REDUCED_QP,
            gap,
            Monitor::default(),
        )
        .ok()
        .map(|p| (dual_value(x, &y, w, self.lambda, DualLoss::Hinge, self.fit_intercept, &p.beta), p))
        .filter(|(dual, p)| dual.is_finite() && p.residual.is_finite() && p.theta.iter().all(|v| v.is_finite()));
        if let Some((dual, p)) = solved {
            return Some(Reduced { theta: p.theta, dual, residual: p.residual });
        }
        let params = LinearSvmParams {
            method: LinearMethod::Hinge,
            lambda: self.lambda,
            fit_intercept: self.fit_intercept,
            solver: Solver::Exact(ExactSettings { route: None, ..*settings }),
            max_rounds: 1,
        };
        let covariances = Covariances::None;
        let problem = Problem { features: &features, y: &y, weights: Some(&c), covariances: covariances.as_dyn() };
        let (theta, report) =
            params.plain_hinge(problem, self.lambda, &ExactSettings { route: None, ..*settings }, Monitor::default());
        let gap = report.duality_gap?;
        if !gap.is_finite() || !report.objective.is_finite() {
            return None;
        }
        Some(Reduced { theta, dual: report.objective - gap * report.objective.abs(), residual: report.gradient_norm })
    }

    /// The norm of the hinge's sub-gradient `λw - inv_l Σ_{d_i > 0} c_i y_i x_i` (and its bias part) at
    /// `theta`, from one round.
    fn subgradient_norm(&self, theta: &[f64]) -> Option<f64> {
        let m = self.margin_sums(theta, 0.0, 0, (&[], &[]))?;
        let mut g = theta[..self.n].iter().map(|v| self.lambda * v).collect::<Vec<f64>>();
        axpy(-self.inv_l, &m.active_sums[0], &mut g);
        axpy(self.inv_l, &m.active_sums[1], &mut g);
        if self.fit_intercept {
            g.push(-self.inv_l * (m.active_weights[0] - m.active_weights[1]));
        }
        Some(norm2(&g))
    }
}

/// Rows gathered for a finish: the local working set's size ([`working_set_size`]), at most [`MAX_GATHER`].
fn gather_target(dim: usize) -> usize {
    working_set_size(dim).min(MAX_GATHER)
}

/// The dual value `D(α') = Σ α'_i - ½‖Σ α'_i y_i x_i‖²` (C-form) at the round's multipliers with the larger
/// class scaled down to meet `yᵀα' = 0` (with an intercept): feasible, so a lower bound.
fn feasible_dual(sum: &DualAnswer, fit_intercept: bool) -> f64 {
    let [a_pos, a_neg] = sum.class_alpha;
    let (s_pos, s_neg) = class_scales(a_pos, a_neg, fit_intercept);
    let mut w = sum.class_sums[0].iter().map(|v| s_pos * v).collect::<Vec<f64>>();
    axpy(-s_neg, &sum.class_sums[1], &mut w);
    s_pos * a_pos + s_neg * a_neg - 0.5 * dot(&w, &w)
}

/// The bias offsets of a round's primal: `0, ±10⁻⁸ … ±1` (only `0` without intercept).
fn bias_offsets(fit_intercept: bool) -> Vec<f64> {
    let mut offsets = vec![0.0];
    if fit_intercept {
        for k in 0..=8 {
            let o = 10f64.powi(-k);
            offsets.extend([o, -o]);
        }
    }
    offsets
}

/// The widest band `16·2^-k` holding at most `target` rows by the histogram (at least the narrowest bin's).
fn band_for(histogram: &[u64], target: usize) -> f64 {
    let mut below = 0u64;
    let mut band = bin_edge(BINS - 1);
    for k in (1..BINS).rev() {
        below += histogram[k];
        if below > target as u64 {
            break;
        }
        band = bin_edge(k);
    }
    band
}
