//! Dual coordinate descent for the linear hinge (L1-loss) and squared-hinge (L2-loss) SVM — Hsieh, Chang,
//! Lin, Keerthi & Sundararajan (ICML 2008), LIBLINEAR's `-s 3` and `-s 1` — with the bias left
//! **unregularised**, as everywhere in this crate.
//!
//! In C-form (`C = 1/(λℓ)`, `P = J/λ`) the primal and its dual are
//!
//! `P(w, b) = ½‖w‖² + C Σ c_i ξ(d_i)`, `d_i = 1 - y_i(wᵀx_i + b)`, `ξ(d) = max(0, d)` (L1) or `max(0, d)²` (L2),
//!
//! `D(α) = Σ α_i - ½‖Σ α_i y_i x_i‖² - ½ Σ D_ii α_i²` over `0 ≤ α_i ≤ U_i` and `yᵀα = 0`,
//!
//! with `U_i = C c_i, D_ii = 0` (L1) or `U_i = ∞, D_ii = 1/(2 C c_i)` (L2), and `w = Σ α_i y_i x_i`. Examples
//! with `c_i = 0` keep `α_i = 0` and are never visited. The λ-form multipliers are `β_i = λ α_i`
//! (`λw = Σ β_i y_i x_i`, `β_i ≤ c_i/ℓ` for L1) and the λ-form dual is `λ D`.
//!
//! **The bias.** LIBLINEAR appends a constant feature `B` to every `x_i`: that drops the equality constraint
//! but adds `b²/(2B²)` to `P`, a different problem. Here `yᵀα = 0` is kept by the method of multipliers
//! (augmented Lagrangian) with multiplier `μ` — the bias itself — and penalty `ρ`: each subproblem
//! `min_box -D(α) + μ yᵀα + ρ/2 (yᵀα)²` is followed by `μ ← μ + ρ yᵀα`. The penalty's Hessian `ρ y yᵀ` is the
//! Gram matrix of a constant feature `√ρ`, so a subproblem is LIBLINEAR's augmented problem with a shifted
//! linear term: coordinate `i` has gradient `G_i = y_i(wᵀx_i + μ + ρ yᵀα) - 1 + D_ii α_i` (the current bias
//! estimate `μ + ρ yᵀα` where LIBLINEAR has `B·w_B`) and curvature `‖x_i‖² + ρ + D_ii`. On the primal side the
//! subproblem is the proximal-point step `min P(w, b) + (b - μ)²/(2ρ)`, whose proximal term vanishes at
//! convergence; so the limit is the optimum with an unregularised bias. `ρ`, all of `mean ‖x_i‖²` at a
//! small C down to a tenth of it at a large one ([`bias_penalty`]), puts the constant feature at the scale
//! of the data.
//!
//! **LIBLINEAR's problem as data.** Without intercept, a column equal to `B` in every row (LIBLINEAR's `-B`
//! feature, a user's column of ones) is that regularised bias, whose rank-one block `B² y yᵀ` of the dual
//! coordinate descent crawls through at a large C. Where `B²` exceeds the penalty `ρ` above, the same
//! multipliers solve it, their step moved to the regularised bias' fixed point ([`Multipliers`]); the
//! certificates are those of the problem as given, at the bias estimate where it gives the lower `P`
//! (text, its `-B 1` problem, at λ = 1e-5 to a gap of 1e-10: 154 → 87 passes; at λ = 1e-7 to 0.5: 158 → 93).
//!
//! Coordinate steps are LIBLINEAR's: one seeded random permutation of the active examples per epoch, the
//! clipped Newton step `α_i ← clip(α_i - G_i/(‖x_i‖² + ρ + D_ii), 0, U_i)` with `w` and `yᵀα` updated in
//! place, and shrinking of bounded coordinates whose gradient lies beyond the previous epoch's extremes of
//! the projected gradient `PG`. A subproblem is solved when `max PG - min PG ≤ ε` over all examples (a
//! shrunk coordinate's `PG` is 0). Solved on the shrunk set, it is checked over every example not by an
//! epoch, as LIBLINEAR does, but by a certificate (below), which computes every margin anyway: each
//! example's `PG` at those margins, and the shrinking of the next epochs by the same rule
//! ([`check_at_certificate`]). LIBLINEAR's check is an epoch that shrinks nothing, so the epoch after it
//! visits every example once more to shrink them, and a solved check was followed by a certificate: two
//! passes and a certificate where this costs one certificate (text at λ = 1e-3, to a gap of 8e-6: 9 → 6
//! passes; its `-B 1` problem to 6.4e-7: 11 → 7; to 1e-10: 19 → 10). Once solved, the
//! multiplier moves, unless its step `|ρ yᵀα|` is below `ε` too, in which case `ε` falls by the factor
//! that would bring the last gap (or its guess) to `tol/2` if the gap fell in proportion to `ε`, at least
//! a decade and at most two, and it goes on (early in the run and far from `tol`, a subproblem solved on
//! the shrunk set goes on to the next `ε` without that check over every example, [`SKIP_CHECK_GAP`]).
//! After an epoch or a check that visited every example the multiplier moves whether or not the subproblem
//! is solved. A certificate costs about an epoch:
//!
//! - the primal `P(w, b*)` at `w = Σ α_i y_i x_i` (recomputed from `α`, which also removes the drift of the
//!   in-place updates) with the bias `b*` that minimises `P(w, ·)` exactly (a weighted median of the
//!   breakpoints for L1, a piecewise-linear root for L2);
//! - the dual `D(α')` at `α'` = `α` with the larger class' multipliers scaled down so that `yᵀα' = 0`
//!   (feasible, inside the box), a lower bound on the optimum.
//!
//! It is computed when a running guess of the gap, kept in O(1) per coordinate step ([`GapEstimate`]),
//! says that `tol` may be met after an epoch over every example, or after any epoch half a pass after a
//! certificate whose gap was within a factor 2 of its guess ([`GapEstimate::agreed`]); where the gap's
//! rate of decrease over the latter half of the work so far projects `tol` ([`next_certificate`]); at a
//! solved subproblem when the guess is within `10 tol` or an exact finish may be tried (below); and once
//! `ε` reaches round-off. Those of the exact finish and of the progress checks wait for half a pass of row
//! visits since the last certificate (MNIST images at λ = 1e-3 to a gap of 8.5e-4: 66 passes and 12
//! certificates → 62 and 7; with the attempts' `tol` limit below, 64 and 7). The run stops when the
//! relative duality gap `(P - D(α'))/P ≤ tol`.
//!
//! **Exact finish.** On the hinge coordinate descent converges slowly once the free set is larger than the
//! rank of its Gram matrix (`n ≪ ℓ` and a large C, or repeated rows whatever `n` is); the exact optimum is
//! then found from the current multipliers instead: the optimality conditions solved on the free set
//! ([`hinge_polish::polish_sides`], damped exchanges; dense rows: at most [`hinge_polish::MAX_MARGIN`] free
//! examples; sparse rows: any number, by conjugate gradients above a few hundred),
//! tried at solved subproblems and (for a `tol` of at most `10⁻⁴`) after doubling (×1.5) amounts of work
//! once the best gap so far is below `10⁻²` (above it, the attempt's certificate waits until the gap's
//! recent rate projects `10⁻²`: MNIST images at λ = 1e-3 certified 4 fewer times on the way to a gap of
//! 1e-3, 5 % of the fit), but
//! only where it costs fewer row visits than the epochs it would save at the best gap's mean rate so far,
//! and whatever it costs when a progress check finds the gap stalled (with another route to follow, only once
//! the best gap so far is below 10⁻², as for the attempts); and for `n ≪ ℓ` and `tol ≤ 10⁻⁴` the
//! primal QP on a working set of the examples nearest the margin followed by the same active-set solve
//! ([`hinge_polish::reduced_solve`]), where it costs fewer row visits than the epochs it would save (MNIST
//! images at λ = 1e-2 and `-B 1` took it for 0.22 s to a gap of 4.1e-6, where 13 more passes took 0.01 s). Either is accepted only if its own duality gap (its multipliers as the
//! dual point) meets `tol`; it is exact to round-off.
//!
//! **Warm start.** [`solve_monitored`] may start from given multipliers and bias ([`Start`], e.g. the
//! certificate of [`crate::solver::hinge_newton`]): `α` clipped into the box, `w = Σ α_i y_i x_i`, and `μ` such
//! that the bias estimate `μ + ρ yᵀα` is the given bias.
//!
//! ```
//! use ndarray::array;
//! use usvm::Features;
//! use usvm::solver::dual_cd::{self, DualCdSettings, DualLoss};
//! let x = Features::dense(array![[0.0, 1.0], [1.0, 2.0], [0.0, -1.0], [1.0, -2.0], [0.5, 0.2]]);
//! let y = [1.0, 1.0, -1.0, -1.0, -1.0];
//! let fit = dual_cd::solve(&x, &y, None, 0.1, DualLoss::Hinge, true, &DualCdSettings::default());
//! assert!(fit.converged && fit.relative_gap() <= 1e-10);
//! ```

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

use crate::data::{Features, dot};
use crate::features::RowProducts;
use crate::progress::{Monitor, Quantity};
use crate::solver::hinge_polish::{self, Side};

mod certificate;
mod estimate;

pub(crate) use certificate::class_scales;
use certificate::{certify, feasible_dual, gradient_norm, primal_value};
pub use certificate::{dual_value, hinge_subgradient_norm, objective_value};
use estimate::GapEstimate;

/// The loss of the linear SVM solved in the dual.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DualLoss {
    /// `max(0, d)` (LIBLINEAR `-s 3`).
    Hinge,
    /// `max(0, d)²` (LIBLINEAR `-s 1`).
    SquaredHinge,
}

/// Settings of the dual coordinate descent: plain data.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DualCdSettings {
    /// Stop when the relative duality gap `(P - D)/P` is at most this.
    pub tol: f64,
    /// Maximum passes (epochs) over the active examples.
    pub max_epochs: usize,
    /// Maximum work, in passes over all examples (row visits / ℓ); with `max_epochs`, whichever comes first.
    pub max_passes: usize,
    /// Seed of the permutations.
    pub seed: u64,
    /// LIBLINEAR's shrinking of bounded coordinates.
    pub shrinking: bool,
    /// Hinge only: try the exact solve of the optimality conditions on the margin set of the current
    /// multipliers ([`crate::solver::hinge_polish`]) where it costs fewer row visits than the epochs it
    /// would save, and whatever it costs when the gap's progress stalls (the checks of `detect_stall`) where
    /// no other route follows (`detect_stall` off) or the best gap so far is below 10⁻²; stop if it certifies.
    pub polish: bool,
    /// Stop early, as stalled, when the gap's progress between certificates at doubling amounts of work
    /// (from [`STALL_FIRST`] passes) projects more than [`STALL_FACTOR`] times the work done so far to
    /// reach `tol`, or more than the work limits allow: another route should take over.
    #[serde(default)]
    pub detect_stall: bool,
}

impl Default for DualCdSettings {
    fn default() -> Self {
        DualCdSettings {
            tol: 1e-10,
            max_epochs: 100_000,
            max_passes: 3000,
            seed: 0,
            shrinking: true,
            polish: true,
            detect_stall: false,
        }
    }
}

/// The solution and its certificate.
#[derive(Debug, Clone, PartialEq)]
pub struct DualCdResult {
    /// `[w; b]`, or `w` without intercept.
    pub theta: Vec<f64>,
    /// λ-form multipliers `β_i = λ α_i` (`λw = Σ β_i y_i x_i` before the feasibility scaling).
    pub beta: Vec<f64>,
    /// `J(θ)`.
    pub primal: f64,
    /// The λ-form dual `λ D(α')` at the feasible multipliers: a lower bound on `min J`.
    pub dual: f64,
    /// Passes over the active examples.
    pub epochs: usize,
    /// The work done, in passes over every example (row visits of the epochs over `ℓ`, rounded up): an
    /// epoch over a shrunk active set counts its share.
    pub passes: usize,
    /// Multiplier (bias) updates of the augmented Lagrangian.
    pub bias_updates: usize,
    /// Whether the duality gap reached `tol` within the limits.
    pub converged: bool,
    /// Whether the run stopped early because its progress projected too much work to reach `tol`
    /// ([`DualCdSettings::detect_stall`]).
    pub stalled: bool,
    /// The residual at `θ`: the KKT residual of the exact active-set solve on the margin set when that gave
    /// the solution (hinge only; see [`hinge_polish::Polished`]), else the norm of the primal gradient
    /// `λw - (1/ℓ) Σ c_i ξ'(d_i) y_i x_i` (and its bias part `-(1/ℓ) Σ c_i ξ'(d_i) y_i`), with the
    /// sub-gradient `ξ'(d) = 1_{d > 0}` for the hinge and `ξ'(d) = 2 max(0, d)` for the squared hinge.
    pub gradient_norm: f64,
    /// `‖∇J(0)‖`, the same gradient at `θ = 0`.
    pub initial_gradient_norm: f64,
}

impl DualCdResult {
    /// `(J - D)/J`, at least 0 (`J > 0` unless every loss and `w` vanish).
    pub fn relative_gap(&self) -> f64 {
        relative_gap(self.primal, self.dual)
    }
}

/// `(primal - dual)/|primal|`, clamped at 0 (round-off can make it slightly negative at an exact optimum).
pub fn relative_gap(primal: f64, dual: f64) -> f64 {
    if primal == dual { 0.0 } else { ((primal - dual) / primal.abs().max(f64::MIN_POSITIVE)).max(0.0) }
}

/// The subproblem tolerance `ε` on `max PG - min PG` to start from (LIBLINEAR's default).
const FIRST_EPS: f64 = 0.1;
/// The first exact-solve attempt between certificates comes after this many passes' worth of row visits.
const FIRST_ATTEMPT: usize = 5;
/// Exact solves are tried only once the relative duality gap is below this (the sides are roughly known).
const ATTEMPT_GAP: f64 = 1e-2;
/// ... and the attempts at growing amounts of work only for tolerances at least this tight: a looser one is
/// met by a few more epochs, and each attempt costs a certificate (MNIST images at λ = 1e-2 to a gap of
/// 8.1e-4: 3 certificates → 1, the same 14 passes; at λ = 1e-3 to 8.5e-4: 62 passes → 64, 7 certificates).
const ATTEMPT_MAX_TOL: f64 = 1e-4;
/// The working-set QP ([`reduced`]) costs about as much as ten epochs (dense 50,000 × 100: 13 epochs then
/// the QP, where coordinate descent alone takes 250 epochs to a relative gap of 4·10⁻⁶); it is tried only
/// for tolerances at least this tight.
const REDUCED_MAX_TOL: f64 = 1e-4;
/// A working-set QP estimated at most this many row visits ([`hinge_polish::reduced_solve_visits`]) is
/// tried whatever coordinate descent would still need: on small problems it is cheap, and exact.
const REDUCED_ANYWAY: f64 = 1e5;
/// The scale of the gap guess ([`GapEstimate`]) before the first certificate.
const FIRST_CALIBRATION: f64 = 0.25;
/// `ε` is not lowered below this: the projected gradients are then at round-off.
const MIN_EPS: f64 = 1e-14;
/// A subproblem solved on the shrunk set within [`STALL_FIRST`] passes, while the gap's guess exceeds this
/// many times `tol`, goes on to the next `ε` without the certificate that would check it over every example
/// (not twice in a row). Text (24,177 hashed documents), passes + certificates without → with the skip:
/// its `-B 1` problem at λ = 1e-3 to 6.4e-7 7 + 4 → 7 + 3, at λ = 1e-5 to 1.4e-5 45 + 12 → 44 + 8 and to
/// 1e-10 157 + 18 → 154 + 16; but with intercept at λ = 1e-5 to 1.4e-5 28 + 10 → 34 + 9 (a certificate
/// costs about half a pass there). MNIST images never solve a shrunk subproblem that early.
const SKIP_CHECK_GAP: f64 = 100.0;
/// The first progress check of [`DualCdSettings::detect_stall`] comes after this many passes' worth of row
/// visits, the next ones at each doubling.
pub const STALL_FIRST: usize = 20;
/// A run is stalled when the gap's rate of decrease between two progress checks projects more than this
/// many times the work done so far (at least [`STALL_FIRST`] passes' worth) to reach `tol`.
pub const STALL_FACTOR: f64 = 20.0;
/// ... and never before this many row visits in all: small problems finish where they are, cheaply.
pub const STALL_MIN_VISITS: usize = 200_000;

/// The data of one binary problem in C-form. The per-example constants are computed when read, not
/// stored: three fewer vectors of `ℓ` values.
struct Setup<'a> {
    x: &'a Features<'a>,
    /// The products of `x`'s rows in the inner loops.
    rows: RowProducts<'a, 'a>,
    y: &'a [f64],
    /// `c_i` (`None`: all 1).
    weights: Option<&'a [f64]>,
    /// `C = 1/(λℓ)`.
    big_c: f64,
    loss: DualLoss,
    fit_intercept: bool,
    /// Without intercept, a column of the visited rows equal to `B ≠ 0` throughout, as `(j, B)`
    /// ([`Features::constant_column`]): a bias regularised by `b²/(2B²)` ([`Multipliers`]).
    constant: Option<(usize, f64)>,
}

impl<'a> Setup<'a> {
    /// The problem at `λ` (`C = 1/(λℓ)`).
    fn new(
        x: &'a Features<'a>,
        y: &'a [f64],
        weights: Option<&'a [f64]>,
        lambda: f64,
        loss: DualLoss,
        fit_intercept: bool,
    ) -> Self {
        let big_c = 1.0 / (lambda * y.len() as f64);
        Setup { x, rows: RowProducts::new(x), y, weights, big_c, loss, fit_intercept, constant: None }
    }

    /// The same problem, with its constant column ([`Setup::constant`]) found.
    fn with_constant_column(mut self) -> Self {
        if !self.fit_intercept {
            let visited = (0..self.y.len()).filter(|&i| self.cost(i) > 0.0);
            self.constant = self.x.constant_column(visited).filter(|(_, b)| b.is_finite());
        }
        self
    }

    /// `C c_i`.
    #[inline]
    fn cost(&self, i: usize) -> f64 {
        self.big_c * self.weights.map_or(1.0, |c| c[i])
    }

    /// `U_i`: `C c_i` for the hinge, ∞ for the squared hinge (0 for an example left out, `c_i = 0`).
    #[inline]
    fn upper(&self, i: usize) -> f64 {
        let c = self.cost(i);
        match self.loss {
            DualLoss::Hinge => c,
            DualLoss::SquaredHinge if c > 0.0 => f64::INFINITY,
            DualLoss::SquaredHinge => 0.0,
        }
    }

    /// `ξ(d)`: `max(0, d)` for the hinge, `max(0, d)²` for the squared hinge.
    #[inline]
    fn loss_at(&self, d: f64) -> f64 {
        let d = d.max(0.0);
        if self.loss == DualLoss::Hinge { d } else { d * d }
    }

    /// `ξ'(d)`, the loss' slope: the sub-gradient `1_{d > 0}` for the hinge, `2 max(0, d)` for the squared hinge.
    #[inline]
    fn slope(&self, d: f64) -> f64 {
        match self.loss {
            DualLoss::Hinge => {
                if d > 0.0 {
                    1.0
                } else {
                    0.0
                }
            }
            DualLoss::SquaredHinge => 2.0 * d.max(0.0),
        }
    }

    /// `D_ii`: 0 for the hinge, `1/(2 C c_i)` for the squared hinge (∞ for an example left out).
    #[inline]
    fn diag(&self, i: usize) -> f64 {
        match self.loss {
            DualLoss::Hinge => 0.0,
            DualLoss::SquaredHinge => {
                let c = self.cost(i);
                if c > 0.0 { 0.5 / c } else { f64::INFINITY }
            }
        }
    }
}

/// Minimises `λ/2‖w‖² + (1/ℓ) Σ c_i ξ(1 - y_i(wᵀx_i + b))` (`ξ` per `loss`; `b = 0` without intercept) by
/// dual coordinate descent; `y_i ∈ {-1, +1}`, weights `c_i ≥ 0` (`None`: all 1).
pub fn solve(
    x: &Features,
    y: &[f64],
    weights: Option<&[f64]>,
    lambda: f64,
    loss: DualLoss,
    fit_intercept: bool,
    settings: &DualCdSettings,
) -> DualCdResult {
    solve_monitored(x, y, weights, lambda, loss, fit_intercept, settings, None, Monitor::default())
}

/// A warm start: λ-form multipliers `β_i` (clipped into the box) and a bias.
#[derive(Debug, Clone, Copy)]
pub struct Start<'s> {
    /// `β_i = λ α_i`, one per example (a shorter slice is a caller's bug: the solve panics).
    pub beta: &'s [f64],
    /// The bias `b`.
    pub bias: f64,
}

/// [`solve`] from `start` if given (e.g. a primal method's certificate), reporting each duality-gap
/// certificate (epochs so far, the primal objective, the relative gap) to `monitor`.
#[allow(clippy::too_many_arguments)]
pub fn solve_monitored(
    x: &Features,
    y: &[f64],
    weights: Option<&[f64]>,
    lambda: f64,
    loss: DualLoss,
    fit_intercept: bool,
    settings: &DualCdSettings,
    start: Option<Start<'_>>,
    monitor: Monitor<'_>,
) -> DualCdResult {
    let setup = Setup::new(x, y, weights, lambda, loss, fit_intercept).with_constant_column();
    run(&setup, lambda, settings, start, monitor)
}

fn run(
    setup: &Setup<'_>,
    lambda: f64,
    settings: &DualCdSettings,
    start: Option<Start<'_>>,
    monitor: Monitor<'_>,
) -> DualCdResult {
    let (x, y, loss, fit_intercept) = (setup.x, setup.y, setup.loss, setup.fit_intercept);
    let (l, n) = (x.n_samples(), x.n_features());
    // The examples visited (c_i > 0), as u32: the visiting order is the solver's largest per-example state
    // after α.
    assert!(l <= u32::MAX as usize, "dual coordinate descent indexes at most 2³² - 1 examples");
    let mut index: Vec<u32> = (0..l).filter(|&i| setup.cost(i) > 0.0).map(|i| i as u32).collect();
    // One pass over the rows for `ρ` ([`bias_penalty`]) and `‖∇J(0)‖`: at `θ = 0` every `d_i = 1`, so
    // `∇J(0) = -λ Σ C c_i ξ'(1) y_i [x_i; 1]` (`1/ℓ = λC`), accumulated in `w` (zero until the start).
    let mut w = vec![0.0; n];
    // `‖x_i‖²` of sparse rows, kept (see below); dense rows give it in their dot product's pass.
    let mut norm2 = if matches!(x, Features::Sparse(_)) { vec![0.0; l] } else { Vec::new() };
    let (mut norms, mut scaled_norms, mut costs, mut bias_part) = (0.0, 0.0, 0.0, 0.0);
    for i in index.iter().map(|&i| i as usize) {
        let norm = x.row_norm2(i);
        if let Some(slot) = norm2.get_mut(i) {
            *slot = norm;
        }
        norms += norm;
        scaled_norms += setup.cost(i) * norm;
        costs += setup.cost(i);
        let s = setup.cost(i) * setup.slope(1.0) * y[i];
        setup.rows.axpy(i, s, &mut w);
        bias_part += s;
    }
    let bias_part = if fit_intercept { bias_part } else { 0.0 };
    let initial_gradient_norm = lambda * (dot(&w, &w) + bias_part * bias_part).sqrt();
    w.fill(0.0);
    // The curvature of coordinate i is `‖x_i‖² + ρ + D_ii`: for sparse rows `‖x_i‖²` is kept from that pass
    // (recomputed at every visit, a second pass over the row's values, it cost 11 % of an epoch over MNIST
    // rows), for dense ones it comes with `x_iᵀw` (one pass, and no vector of ℓ: a fit of 10⁶ rows keeps
    // its peak memory within 0.3× its data, python/tests/test_memory.py). A zero (an empty row, no
    // intercept, L1) makes the step a jump to a bound.
    let visited = index.len() as f64;
    let bias = if index.is_empty() {
        Multipliers::NONE
    } else if fit_intercept {
        Multipliers::unregularised(bias_penalty(norms / visited, scaled_norms / visited))
    } else if let Some((_, b)) = setup.constant {
        // The rows' constant column: its share `B²` of each curvature leaves them.
        let own = b * b;
        let (norms, scaled_norms) = (norms - own * visited, scaled_norms - own * costs);
        Multipliers::regularised(bias_penalty(norms / visited, scaled_norms / visited), own)
    } else {
        Multipliers::NONE
    };

    let rows = setup.rows;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(settings.seed);
    let mut alpha = vec![0.0; l];
    let mut scratch = Vec::new();
    // `x_iᵀw` at the last certificate.
    let mut margins = Vec::new();
    let mut ya = 0.0; // yᵀα
    let mut mu = 0.0; // the multiplier: the bias is μ + ρ yᵀα
    if let Some(start) = start {
        assert_eq!(start.beta.len(), l, "a warm start has one multiplier per example");
        for i in index.iter().map(|&i| i as usize) {
            alpha[i] = (start.beta[i] / lambda).clamp(0.0, setup.upper(i));
            x.row_axpy(i, alpha[i] * y[i], &mut w);
            ya += alpha[i] * y[i];
        }
        // The bias estimate `μ + ρ yᵀα` at the given bias, or at `B² yᵀα`, the constant column's.
        mu = if fit_intercept { start.bias } else { bias.own * ya } - bias.rho * ya;
    }
    let mut eps = FIRST_EPS;
    let total = index.len();
    let mut active = total;
    let (mut pg_max_old, mut pg_min_old) = (f64::INFINITY, f64::NEG_INFINITY);
    let (mut epochs, mut bias_updates) = (0, 0);
    let mut finished = None;
    let mut polished = None;
    let mut estimate = GapEstimate::new(setup, &alpha, &w);
    // An exact finish needs at most `n + 1` free multipliers among the `ℓ` (see `polish`).
    let can_polish = settings.polish && loss == DualLoss::Hinge;
    // Row visits so far, and when to try the exact solve next (at twice the work of the last try).
    // (Not before the work at which the gap's recent rate projects ATTEMPT_GAP, `attempt_reach`.)
    let (mut work, mut next_attempt, mut attempt_reach) = (0, FIRST_ATTEMPT * total, 0);
    // Progress checks for `detect_stall`: the work of the next one, and the work and gap of the last one.
    let (mut next_check, mut last_check) = (STALL_FIRST * total, None::<(usize, f64)>);
    let mut stalled = false;
    let mut best_gap = f64::INFINITY;
    // (work, best gap) at each certificate, from a cold start first the origin's (at `α = 0`, `D = 0`: a
    // relative gap of 1); and the work at which their recent rate projects `tol`.
    let mut history: Vec<(usize, f64)> = if start.is_none() { vec![(0, 1.0)] } else { Vec::new() };
    let mut projected = usize::MAX;
    // The work at the last certificate.
    let mut certified_at = 0;
    // The gap falls about in proportion to ε: lower ε by the factor that would bring the gap to half of
    // `tol`, between one decade and two (text at λ = 1e-3 and a `tol` of 8e-6: ε 0.1 → 0.0017 at a gap
    // of 2.3e-4 certified after 10.3 passes, not 0.1 → 0.01 → 0.001 after 12.4).
    let lower = |eps: f64, gap: f64| (eps * (0.5 * settings.tol / gap).clamp(0.01, 0.1)).max(MIN_EPS);
    // Whether the last subproblem solved on the shrunk set went on without the check over every example.
    let mut skipped_check = false;
    // (An epoch runs only if its row visits fit in the work limit.)
    while epochs < settings.max_epochs && work + active <= settings.max_passes.saturating_mul(total) {
        epochs += 1;
        work += active;
        // An epoch over every example (the first ones, until some are shrunk, and all without shrinking)
        // checks the subproblem over all of them, and shrinks as it goes.
        let full = active == total;
        for j in 0..active {
            let k = j + rng.random_range(0..active - j);
            index.swap(j, k);
        }
        let (mut pg_max, mut pg_min) = (f64::NEG_INFINITY, f64::INFINITY);
        let mut s = 0;
        while s < active {
            let i = index[s] as usize;
            if let Some(&next) = index.get(s + 1) {
                rows.prefetch(next as usize);
            }
            let (yi, a, u) = (y[i], alpha[i], setup.upper(i));
            let (f, norm) = match norm2.get(i) {
                Some(&norm) => (rows.dot(i, &w), norm),
                None => x.row_dot_norm2(i, &w),
            };
            let margin = yi * (f + bias.shift(mu, ya));
            estimate.visit(i, setup.cost(i) * setup.loss_at(1.0 - margin));
            let g = margin - 1.0 + setup.diag(i) * a;
            let Some(pg) = projected_gradient(a, u, g, (pg_max_old, pg_min_old), settings.shrinking) else {
                if full {
                    // The check over every example counts a shrunk coordinate's projected gradient, 0 (as
                    // `check_at_certificate` does; the next bounds are the same with or without it).
                    pg_max = pg_max.max(0.0);
                    pg_min = pg_min.min(0.0);
                }
                active -= 1;
                index.swap(s, active);
                continue;
            };
            pg_max = pg_max.max(pg);
            pg_min = pg_min.min(pg);
            if pg.abs() > 1e-12 {
                let q = norm + bias.rho - bias.own + setup.diag(i);
                let new = if q > 0.0 {
                    (a - g / q).clamp(0.0, u)
                } else if g < 0.0 {
                    u
                } else {
                    0.0
                };
                let delta = (new - a) * yi;
                if delta != 0.0 {
                    alpha[i] = new;
                    rows.axpy(i, delta, &mut w);
                    ya += delta;
                    estimate.step(a, new, delta, f, norm, setup.diag(i));
                }
            }
            s += 1;
        }
        let mut solved = pg_max - pg_min <= eps;
        if !solved && full && bias.steps() {
            // An epoch over every example: the multiplier takes its step without waiting for
            // the subproblem (an inexact step of the method of multipliers). Waiting, the bias estimate lags
            // and `yᵀα` stays off zero, which the dual certificate pays for: MNIST images at λ = 1e-3 spent
            // 77 passes at `yᵀα = -0.07` (a bias estimate of -0.44 against the optimum's -0.65).
            mu += bias.step(mu, ya);
            bias_updates += 1;
        }
        (pg_max_old, pg_min_old) = shrinking_bounds(pg_max, pg_min);
        // Solved on the shrunk set: the certificate, which computes every margin, checks every example
        // (`check_at_certificate`), unless the check is skipped.
        let verify = solved && !full;
        if verify {
            // Early in the run (within STALL_FIRST passes) and far from `tol` (the gap's guess above
            // SKIP_CHECK_GAP · tol), the check over every example can neither stop the run nor tell much: ε
            // falls at once and the shrunk set goes on, the next time round checked again.
            let guess = estimate.gap(ya, fit_intercept);
            let skip = !skipped_check
                && work < STALL_FIRST * total
                && guess.is_finite()
                && guess > SKIP_CHECK_GAP * settings.tol
                && eps > MIN_EPS;
            skipped_check = skip;
            if skip {
                eps = lower(eps, guess);
                continue;
            }
        } else if solved && bias.step(mu, ya).abs() > eps {
            mu += bias.step(mu, ya);
            bias_updates += 1;
            continue;
        }
        // A certificate costs about a pass over every example. Those of the exact finish and of the progress
        // checks wait for half a pass of row visits since the last one: on a small shrunk set their triggers
        // come a few cheap epochs apart (MNIST images at λ = 1e-2, `-B 1`, 180 active: certificates at 19.4,
        // 19.6, 19.8 and 20.0 passes, each costing about a pass, some 30 of those epochs).
        let spaced = work >= certified_at + total / 2;
        // Slow convergence on the free set (large C, n ≪ ℓ): try the exact solve at doubling amounts of work.
        let attempt =
            can_polish && settings.tol <= ATTEMPT_MAX_TOL && spaced && work >= next_attempt.max(attempt_reach);
        if attempt {
            next_attempt = work + work / 2;
        }
        // A certificate costs about an epoch: computed when the estimate says the target may be met, where
        // an exact finish may be tried (each solved subproblem, and the attempts at geometrically spaced
        // amounts of work), or once `ε` is at round-off.
        let guess = estimate.gap(ya, fit_intercept);
        // (The guess is trusted after an epoch that visited every example, or, half a pass after the last
        // certificate, when that certificate's gap was within a factor 2 of its guess: shrunk examples keep
        // older losses, which on images misled it 100-fold, while on text at λ = 1e-7 it tracked the gap
        // within 15 %. Text `-B 1` at λ = 1e-7 to 0.24: 214 → 172 passes; text to 0.24: 128 → 97.)
        // Progress checks cost a certificate each (about an epoch) at doubling amounts of work.
        // (Also without `detect_stall` where an exact finish may be tried: a stalled run then gets one.)
        let check = (settings.detect_stall || can_polish) && spaced && work >= next_check;
        if check {
            next_check = 2 * work;
        }
        let worth = verify
            || ((full || (spaced && estimate.agreed())) && guess <= settings.tol)
            || (solved && ((can_polish && spaced) || eps <= MIN_EPS || guess <= 10.0 * settings.tol))
            || attempt
            || check
            || work >= projected;
        if !worth {
            if solved {
                eps = lower(eps, guess);
            }
            continue;
        }
        let cert = certify(setup, &alpha, &mut w, &mut scratch, &mut margins, bias.estimate(mu, ya));
        certified_at = work;
        estimate.recompute_norm(&w);
        let gap = relative_gap(cert.primal, cert.dual);
        if verify {
            let (all_max, all_min, kept) = check_at_certificate(
                setup,
                &alpha,
                &margins,
                bias.shift(mu, ya),
                &mut index,
                (pg_max_old, pg_min_old),
                settings.shrinking,
                &mut estimate,
            );
            active = kept;
            solved = all_max - all_min <= eps;
            (pg_max_old, pg_min_old) = shrinking_bounds(all_max, all_min);
            if !solved && bias.steps() {
                // As after an epoch over every example.
                mu += bias.step(mu, ya);
                bias_updates += 1;
            }
        }
        if monitor.iteration(epochs, Quantity::DualityGap, || (cert.primal * lambda, gap)) {
            break;
        }
        if gap <= settings.tol || (solved && eps <= MIN_EPS) {
            finished = Some(cert);
            break;
        }
        estimate.calibrate(guess, gap);
        // Row visits coordinate descent would still need at the mean rate of the best gap so far (a gap
        // that stops falling makes it slower and slower): an exact finish is tried only where it costs less
        // (a loose `tol` is met by a few more epochs).
        best_gap = best_gap.min(gap);
        projected = next_certificate(&history, (work, best_gap), settings.tol, total);
        // Above ATTEMPT_GAP no exact finish is tried: the next attempt (and its certificate) waits until the
        // recent rate projects that gap.
        attempt_reach =
            if best_gap > ATTEMPT_GAP { next_certificate(&history, (work, best_gap), ATTEMPT_GAP, total) } else { 0 };
        history.push((work, best_gap));
        let first = history[0];
        let remaining = remaining_visits(first, (work, best_gap), settings.tol);
        if check {
            let limit = settings.max_passes.saturating_mul(total).min(work + (settings.max_epochs - epochs) * active);
            // The first check, where another route may take over, measures the rate since the first
            // certificate (the origin's gap of 1 from a cold start): MNIST images at λ = 1e-5 hand over
            // after 20 passes at a gap of 0.99, not 40.
            let since = last_check.or(Some(first).filter(|&(w0, _)| settings.detect_stall && w0 < work));
            if let Some(last) = since
                && progress_stalls(last, (work, gap), settings.tol, total, limit)
            {
                // Where coordinate descent crawls on (no other route follows), or where the sides are
                // roughly known: the exact finish, whatever it costs (a few factorisations of at most
                // `MAX_MARGIN` dense rows, or conjugate gradients on sparse ones). Far from the optimum
                // with another route to follow it is futile and dear (MNIST images at λ ≤ 1e-4, gap
                // 0.77–0.99: 0.09–0.35 s of conjugate gradients on dense margin rows before the QP route).
                if can_polish
                    && (!settings.detect_stall || best_gap <= ATTEMPT_GAP)
                    && let Some(p) = polish(setup, &alpha, &margins, cert.bias, lambda, f64::INFINITY)
                    && relative_gap(p.primal, p.dual) <= settings.tol
                {
                    polished = Some(p);
                    break;
                }
                if settings.detect_stall {
                    stalled = true;
                    finished = Some(cert);
                    break;
                }
            }
            last_check = Some((work, gap));
        }
        if solved
            && can_polish
            && let Some(p) = polish(setup, &alpha, &margins, cert.bias, lambda, remaining)
            && relative_gap(p.primal, p.dual) <= settings.tol
        {
            polished = Some(p);
            break;
        }
        if attempt && best_gap <= ATTEMPT_GAP {
            let mut theta = w.clone();
            theta.push(cert.bias);
            let reduced = || {
                if settings.tol <= REDUCED_MAX_TOL { reduced(setup, &alpha, lambda, &theta, remaining) } else { None }
            };
            if let Some(p) = polish(setup, &alpha, &margins, cert.bias, lambda, remaining).or_else(reduced)
                && relative_gap(p.primal, p.dual) <= settings.tol
            {
                polished = Some(p);
                break;
            }
        }
        if solved {
            let step = bias.step(mu, ya);
            if verify && step.abs() > eps {
                mu += step;
                bias_updates += 1;
            } else {
                eps = lower(eps, gap);
            }
        }
    }
    if let Some(p) = polished {
        let Exact { theta, beta, primal, dual, residual } = p;
        let converged = true;
        return DualCdResult {
            theta,
            beta,
            primal,
            dual,
            epochs,
            passes: work.div_ceil(total.max(1)),
            bias_updates,
            converged,
            stalled: false,
            gradient_norm: residual,
            initial_gradient_norm,
        };
    }
    drop(index);
    let cert =
        finished.unwrap_or_else(|| certify(setup, &alpha, &mut w, &mut scratch, &mut margins, bias.estimate(mu, ya)));
    let converged = relative_gap(cert.primal, cert.dual) <= settings.tol;
    let gradient_norm = lambda * gradient_norm(setup, &alpha, &margins, cert.bias, &mut scratch);
    let mut theta = w;
    if fit_intercept {
        theta.push(cert.bias);
    } else if let Some((j, b)) = setup.constant {
        theta[j] += cert.bias / b; // the certified primal point (`certify`)
    }
    let mut beta = alpha;
    beta.iter_mut().for_each(|a| *a *= lambda);
    DualCdResult {
        theta,
        beta,
        primal: cert.primal * lambda,
        dual: cert.dual * lambda,
        epochs,
        passes: work.div_ceil(total.max(1)),
        bias_updates,
        converged,
        stalled: stalled && !converged,
        gradient_norm,
        initial_gradient_norm,
    }
}

/// The projected gradient `PG` of a coordinate at `a ∈ [0, u]` with gradient `g`, or `None` where it is
/// shrunk: at a bound with its gradient beyond the extremes `bounds` ([`shrinking_bounds`]) of the last
/// epoch (LIBLINEAR's rule), if `shrinking`.
#[inline]
fn projected_gradient(a: f64, u: f64, g: f64, bounds: (f64, f64), shrinking: bool) -> Option<f64> {
    if a == 0.0 {
        if shrinking && g > bounds.0 { None } else { Some(g.min(0.0)) }
    } else if a == u {
        if shrinking && g < bounds.1 { None } else { Some(g.max(0.0)) }
    } else {
        Some(g)
    }
}

/// A subproblem solved on the shrunk set, checked over every example from a certificate's margins
/// `f_i = x_iᵀw` at the bias estimate `bias`, in place of an epoch over every example (no step is taken):
/// each example's loss for the `estimate`, and its projected gradient with the shrinking `bounds` of the
/// next epochs. The examples kept active come first in `index`. Returns the extremes of the projected
/// gradient over every example (a shrunk one counts 0) and how many are kept.
#[allow(clippy::too_many_arguments)]
fn check_at_certificate(
    setup: &Setup<'_>,
    alpha: &[f64],
    margins: &[f64],
    bias: f64,
    index: &mut [u32],
    bounds: (f64, f64),
    shrinking: bool,
    estimate: &mut GapEstimate,
) -> (f64, f64, usize) {
    let y = setup.y;
    let (mut pg_max, mut pg_min) = (f64::NEG_INFINITY, f64::INFINITY);
    let mut active = index.len();
    let mut s = 0;
    while s < active {
        let i = index[s] as usize;
        let margin = y[i] * (margins[i] + bias);
        estimate.visit(i, setup.cost(i) * setup.loss_at(1.0 - margin));
        let g = margin - 1.0 + setup.diag(i) * alpha[i];
        let pg = match projected_gradient(alpha[i], setup.upper(i), g, bounds, shrinking) {
            Some(pg) => {
                s += 1;
                pg
            }
            None => {
                active -= 1;
                index.swap(s, active);
                0.0
            }
        };
        pg_max = pg_max.max(pg);
        pg_min = pg_min.min(pg);
    }
    (pg_max, pg_min, active)
}

/// The next epoch's shrinking bounds from this epoch's extremes of the projected gradient (LIBLINEAR's
/// `PGmax_old`, `PGmin_old`): a bounded coordinate whose gradient lies beyond them is shrunk; an extreme on
/// the wrong side of 0 shrinks nothing on its side.
fn shrinking_bounds(pg_max: f64, pg_min: f64) -> (f64, f64) {
    (if pg_max <= 0.0 { f64::INFINITY } else { pg_max }, if pg_min >= 0.0 { f64::NEG_INFINITY } else { pg_min })
}

/// The method of multipliers on the bias: its penalty `ρ` (0: none), the bias' own penalty `1/(2B²)`
/// as `κ = 1/B²` (0: unregularised), and the share `B²·yᵀα` of every `x_iᵀw` that a constant column `B` of
/// the rows already holds (`own = B²`; 0 without one).
///
/// **A constant column.** Without intercept, a column of the rows equal to `B ≠ 0` throughout (LIBLINEAR's
/// `-B`) is a bias regularised by `b²/(2B²)` (`b = B w_B`): in the dual the rank-one block `B² y yᵀ`, which
/// coordinate descent crawls through where it outweighs the rest of the curvature (text `-B 1` at λ = 1e-7:
/// a gap of 2.1e-5 after 1,000 passes, where the unregularised bias certified after 218). It is solved as
/// the unregularised bias is, by proximal-point steps on `b` with a smaller penalty `ρ < B²`: each
/// subproblem `min P(w, b) + b²/(2B²) + (b - ν)²/(2ρ')`, `1/ρ = 1/B² + 1/ρ'`, is the unregularised one's
/// with its centre `μ = ρν/ρ'`, and the step `ν ← b = μ + ρ yᵀα` is `μ ← (1 - ρ/B²)(μ + ρ yᵀα)`. Its fixed
/// point `μ = (B² - ρ) yᵀα` puts the bias estimate at `B² yᵀα = B w_B`, where every coordinate's gradient is
/// that of the problem as given; so the optimum is the problem's, and the certificates (of the problem as
/// given, the column kept in `w`) need no change.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Multipliers {
    rho: f64,
    kappa: f64,
    own: f64,
}

impl Multipliers {
    const NONE: Multipliers = Multipliers { rho: 0.0, kappa: 0.0, own: 0.0 };

    fn unregularised(rho: f64) -> Self {
        Multipliers { rho, kappa: 0.0, own: 0.0 }
    }

    /// For a constant column `B` (`own = B²`), with the penalty `rho` where it is below `B²`; else with
    /// `ρ = B²`, where `μ` stays 0 and the column is coordinate descent's like any other (its own curvature
    /// is then no larger than the penalty would be).
    fn regularised(rho: f64, own: f64) -> Self {
        Multipliers { rho: rho.min(own), kappa: 1.0 / own, own }
    }

    /// Whether the multiplier moves: a penalty, and below a constant column's own `B²`.
    fn steps(&self) -> bool {
        self.rho > 0.0 && (self.own == 0.0 || self.rho < self.own)
    }

    /// The bias estimate `μ + ρ yᵀα` (the constant column's `B² yᵀα` where `μ` stays 0).
    #[inline]
    fn estimate(&self, mu: f64, ya: f64) -> f64 {
        mu + self.rho * ya
    }

    /// What coordinate descent adds to `x_iᵀw`: the bias estimate less the column's `B² yᵀα`.
    #[inline]
    fn shift(&self, mu: f64, ya: f64) -> f64 {
        self.estimate(mu, ya) - self.own * ya
    }

    /// The multiplier's step `ρ (yᵀα - κ b)` at the bias estimate `b = μ + ρ yᵀα`.
    #[inline]
    fn step(&self, mu: f64, ya: f64) -> f64 {
        self.rho * (ya - self.kappa * self.estimate(mu, ya))
    }
}

/// The penalty `ρ` of the method of multipliers on `yᵀα = 0`, from the mean `‖x_i‖²` and the mean
/// `C c_i ‖x_i‖²` of the visited examples: `ρ = s · mean ‖x_i‖²` with `s = clamp(0.3/√(mean C c_i ‖x_i‖²),
/// 0.1, 1)` (1 for an empty or zero mean, then `ρ = 1`).
///
/// `ρ` trades the two halves of the method against each other. Its share `ρ/(‖x_i‖² + ρ)` of every
/// coordinate's curvature shortens every step (and couples all coordinates through `ρ y yᵀ`); its
/// proximal term `(b - μ)²/(2ρ)` slows the bias' outer updates only where it is strong against the
/// loss' curvature in `b`, which grows with `C`. So a small `C` wants the whole `mean ‖x_i‖²` and a large
/// one a tenth of it. Measured (passes to a relative gap of 1e-10, `s = 1` → this rule): MNIST images
/// at λ = 1e-3 84 → 54, text (hashed words, unit rows) at λ = 1e-5 194 → 132 and at λ = 1e-7 407 → 229,
/// raw 8×8 digits at λ = 1e-2 620 → 277; unchanged where `C ‖x‖²` is below 0.1 (text at λ ≥ 1e-3).
fn bias_penalty(mean_norm2: f64, mean_scaled_norm2: f64) -> f64 {
    if mean_norm2 > 0.0 && mean_norm2.is_finite() {
        let share = (0.3 / mean_scaled_norm2.sqrt()).clamp(0.1, 1.0);
        share * mean_norm2
    } else {
        1.0
    }
}

/// Whether the gap's linear rate of decrease from `last` to `now` (work in row visits, relative gap)
/// projects more work to reach `tol` than [`STALL_FACTOR`] times the work so far (at least [`STALL_FIRST`]
/// passes over the `total` examples and [`STALL_MIN_VISITS`] row visits), or than the `limit` of work allows.
fn progress_stalls(last: (usize, f64), now: (usize, f64), tol: f64, total: usize, limit: usize) -> bool {
    let ((w0, g0), (w1, g1)) = (last, now);
    if g1 <= tol {
        return false;
    }
    let rate = (g0 / g1).ln() / (w1 - w0).max(1) as f64;
    let needed = (g1 / tol).ln() / rate;
    let allowed =
        (STALL_FACTOR * w1.max(STALL_FIRST * total).max(STALL_MIN_VISITS) as f64).min(limit.saturating_sub(w1) as f64);
    !(rate > 0.0 && needed <= allowed)
}

/// The row visits coordinate descent needs from `now` to reach `tol` at the gap's linear rate of decrease
/// since `first` (work in row visits, relative gap; `now` with the best gap so far); infinite without
/// progress.
fn remaining_visits(first: (usize, f64), now: (usize, f64), tol: f64) -> f64 {
    let ((w0, g0), (w1, g1)) = (first, now);
    if g1 <= tol {
        0.0
    } else if g0 > g1 && w1 > w0 {
        (g1 / tol).ln() * (w1 - w0) as f64 / (g0 / g1).ln()
    } else {
        f64::INFINITY
    }
}

/// The work (row visits) of the next certificate after one at `now` (work, best relative gap so far): where
/// the gap's linear rate of decrease since the earliest certificate of `history` in the latter half of the
/// work (else the latest one) reaches `tol`, at least a pass over the `total` examples later; never
/// (`usize::MAX`) without progress. The running guess of the gap can be far off near a loose `tol` (MNIST
/// images at λ = 1e-3: a guess of 1.3e-5 at a gap of 1.0e-3), and the certificates of the exact finish's
/// schedule come at growing intervals: with `-B 1` at a `tol` of 8.5e-4 the run certified at 80 passes, a gap
/// of 3.3e-4, where this schedule stops at 69.
fn next_certificate(history: &[(usize, f64)], now: (usize, f64), tol: f64, total: usize) -> usize {
    let work = now.0;
    let Some(&since) = history.iter().find(|&&(w0, _)| 2 * w0 >= work && w0 < work).or(history.last()) else {
        return usize::MAX;
    };
    let more = remaining_visits(since, now, tol).max(total as f64);
    if more < (usize::MAX / 4) as f64 { work + more as usize } else { usize::MAX }
}

/// A free multiplier whose example is misclassified (`d_i > 1`) is guessed bounded by the exact finish, and
/// one beyond the other margin (`d_i < -1`) zero: at a large C multipliers climb to their bound in small
/// steps (an example and its copy under the other label — text sets share boilerplate — can only climb
/// together: 6,300 wide documents at λ = 10⁻⁷ stopped at a gap of 0.74 after 1,000 passes; guessed from
/// their sides, certified after 43).
const SIDE_BAND: f64 = 1.0;

/// The exact hinge solution on the margin set of the current multipliers (the free ones), by
/// [`hinge_polish::polish_sides`] (free ones with `|d_i| > SIDE_BAND` at the certificate's `x_iᵀw` and bias
/// taken by the sign of `d_i`), with its primal value and dual bound; `None` when that set is larger than
/// a consistent system allows (`n + 1` equations for `n + 1` unknowns, dense rows) or than
/// [`hinge_polish::MAX_MARGIN`] dense rows, when it would cost more than the `remaining` row visits of
/// coordinate descent ([`hinge_polish::margin_solve_visits`]), or when the active-set solve does not settle. (Also for `n ≥ ℓ`: the free set's Gram matrix
/// is then generically regular, but not for repeated rows — documents that share their text — on which
/// coordinate descent crawls.)
fn polish(setup: &Setup<'_>, alpha: &[f64], margins: &[f64], bias: f64, lambda: f64, remaining: f64) -> Option<Exact> {
    let (x, y) = (setup.x, setup.y);
    let sides: Vec<Side> = (0..y.len())
        .map(|i| {
            let (a, u) = (alpha[i], setup.upper(i));
            let d = 1.0 - y[i] * (margins[i] + bias);
            if u == 0.0 || a <= 0.0 {
                Side::Inactive
            } else if a >= u * (1.0 - 1e-12) || d > SIDE_BAND {
                Side::Active
            } else if d < -SIDE_BAND {
                Side::Inactive
            } else {
                Side::Margin
            }
        })
        .collect();
    let free = sides.iter().filter(|&&s| s == Side::Margin).count();
    // More margin equations than unknowns (dense rows) is generically inconsistent: the margin set is
    // not identified yet.
    let unknowns = x.n_features() + usize::from(setup.fit_intercept);
    if (matches!(x, Features::Dense(_)) && free > unknowns)
        || hinge_polish::margin_solve_visits(x, free).is_none_or(|visits| visits > remaining)
    {
        return None;
    }
    let p = hinge_polish::polish_sides(x, y, setup.weights, lambda, setup.fit_intercept, sides, true)?;
    Some(certified(setup, lambda, p))
}

/// An exact finish ([`hinge_polish`]): `[w; b]`, the λ-form multipliers, `J(θ)`, the λ-form dual bound of the
/// multipliers and the KKT residual.
struct Exact {
    theta: Vec<f64>,
    beta: Vec<f64>,
    primal: f64,
    dual: f64,
    residual: f64,
}

/// An exact finish with its primal value and the dual bound of its multipliers `α = β/λ`.
fn certified(setup: &Setup<'_>, lambda: f64, p: hinge_polish::Polished) -> Exact {
    let dual =
        lambda * feasible_dual(setup, |i| p.beta[i] / lambda, &mut vec![0.0; setup.x.n_features()], &mut Vec::new());
    let primal = primal_value(setup, lambda, &p.theta);
    Exact { theta: p.theta, beta: p.beta, primal, dual, residual: p.residual }
}

/// [`hinge_polish::reduced_solve`] from `theta` (`[w; b]` in any case; `b` is ignored without intercept) on
/// a working set of `4(n + 1)` examples for dense rows, three times as many as there are free multipliers
/// for sparse rows (at least 200, at most [`hinge_polish::MAX_MARGIN`]), with its primal value and dual bound;
/// `None` if the solve fails, if `2(n + 1) > ℓ` (the working-set QP is for the regime `n ≪ ℓ`, where
/// the free set is rank-deficient and coordinate descent stalls), or if it would cost more than the
/// `remaining` row visits of coordinate descent and [`REDUCED_ANYWAY`] ([`hinge_polish::reduced_solve_visits`]).
fn reduced(setup: &Setup<'_>, alpha: &[f64], lambda: f64, theta: &[f64], remaining: f64) -> Option<Exact> {
    let (x, y) = (setup.x, setup.y);
    let l = y.len();
    if 2 * (x.n_features() + 1) > l {
        return None; // not the regime where coordinate descent stalls (rank-deficient free set, n ≪ ℓ)
    }
    let working = match x {
        // At most n + 1 examples sit on the margin of a generic optimum.
        Features::Dense(_) => 4 * (x.n_features() + 1),
        Features::Sparse(_) => 3 * (0..l).filter(|&i| alpha[i] > 0.0 && alpha[i] < setup.upper(i)).count(),
    };
    let working = working.clamp(200, hinge_polish::MAX_MARGIN).min(l);
    if hinge_polish::reduced_solve_visits(x, working) > remaining.max(REDUCED_ANYWAY) {
        return None; // dearer than the epochs it would save
    }
    let theta = if setup.fit_intercept { theta } else { &theta[..x.n_features()] };
    let p = hinge_polish::reduced_solve(
        x,
        y,
        setup.weights,
        lambda,
        setup.fit_intercept,
        theta,
        working,
        crate::solver::hinge_qp::MAX_ITERATIONS,
        None,
        Monitor::default(),
    )
    .ok()?;
    Some(certified(setup, lambda, p))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The projection behind `stalled`: with 1,000 examples the first check comes at 20 passes (20,000
    /// visits) and the allowance is 20 × max(work, 20,000, 200,000) visits, capped by the limit.
    /// The penalty on `yᵀα`: all of `mean ‖x_i‖²` while `mean C c_i ‖x_i‖² ≤ 0.09`, a tenth of it from 9 on,
    /// `0.3/√(C‖x‖²)` of it between, and 1 without rows to measure.
    #[test]
    fn the_bias_penalty_falls_from_the_mean_norm_to_a_tenth_of_it_as_c_grows() {
        assert_eq!(bias_penalty(88.0, 0.05), 88.0);
        assert!((bias_penalty(88.0, 1e4) - 8.8).abs() < 1e-12);
        assert!((bias_penalty(4.0, 1.0) - 1.2).abs() < 1e-12);
        assert_eq!(bias_penalty(0.0, 0.0), 1.0);
        assert_eq!(bias_penalty(f64::INFINITY, f64::INFINITY), 1.0);
    }

    /// The next certificate comes where the recent rate projects `tol`: from the earliest certificate in the
    /// latter half of the work, at least a pass later, never without progress.
    #[test]
    fn the_next_certificate_comes_where_the_recent_rate_reaches_the_tolerance() {
        let total = 1000;
        // Certificates at 10,000 (gap 1e-1, before half the work) and 30,000 visits (1e-2); now 50,000 at 1e-3:
        // the rate since 30,000 is a decade per 20,000 visits, so 1e-4 comes 20,000 visits later.
        let history = [(0, 1.0), (10_000, 1e-1), (30_000, 1e-2)];
        assert_eq!(next_certificate(&history, (50_000, 1e-3), 1e-4, total), 70_000);
        // Without a certificate in the latter half, the latest one: a decade per 40,000 visits since 10,000.
        assert_eq!(next_certificate(&history[..2], (50_000, 1e-2), 1e-3, total), 90_000);
        // Just above the target: at least a pass later.
        assert_eq!(next_certificate(&history, (50_000, 1.0001e-4), 1e-4, total), 51_000);
        // No progress since, or nothing to measure from: never.
        assert_eq!(next_certificate(&history, (50_000, 1e-2), 1e-4, total), usize::MAX);
        assert_eq!(next_certificate(&[], (50_000, 1e-3), 1e-4, total), usize::MAX);
    }

    #[test]
    fn the_gap_projection_calls_slow_progress_a_stall_and_fast_progress_not() {
        let (total, tol, limit) = (1000, 1e-10, usize::MAX);
        // A decade of gap per 100,000 visits: 5 more decades cost 500,000 visits, within 20 × 200,000.
        assert!(!progress_stalls((100_000, 1e-4), (200_000, 1e-5), tol, total, limit));
        // The allowance grows with the work done: at 2·10^6 visits it is 4·10^7, so a decade per 10^6 visits
        // (5·10^6 to go) passes, while a gap down by a factor of 1.2 per 10^6 visits (6.3·10^7 to go) stalls.
        assert!(!progress_stalls((1_000_000, 1e-4), (2_000_000, 1e-5), tol, total, limit));
        assert!(progress_stalls((1_000_000, 1.2e-5), (2_000_000, 1e-5), tol, total, limit));
        // No progress, or a gap that grew: stalled; a gap at the target: never.
        assert!(progress_stalls((100_000, 1e-5), (200_000, 1e-5), tol, total, limit));
        assert!(progress_stalls((100_000, 1e-6), (200_000, 1e-5), tol, total, limit));
        assert!(!progress_stalls((100_000, 1e-4), (200_000, 1e-10), tol, total, limit));
        // Fast enough by the factor, but beyond what the work limit leaves: stalled.
        assert!(progress_stalls((100_000, 1e-4), (200_000, 1e-5), tol, total, 300_000));
    }
}
