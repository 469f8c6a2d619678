//! The hinge SVM's primal QP on a working set, by a primal-dual interior-point method whose Newton systems
//! are normal equations the size of `[w; b]`: for working sets of many more examples than coordinates, the
//! exact finish of [`crate::solver::hinge_polish::reduced_solve`] (`n ≪ ℓ`).
//!
//! With the rows `ã_i = y_i [x_i; 1]` (`y_i x_i` without intercept) of the `m` examples, `v = [w; b]`,
//! `R = diag(λ, …, λ, 0)` (the bias unregularised) and a linear term `q` (the fixed examples' share), it solves
//!
//! `min ½vᵀRv + qᵀv + Σ u_i ξ_i` subject to `ã_iᵀv + ξ_i - s_i = 1`, `ξ ≥ 0`, `s ≥ 0`.
//!
//! The multipliers are `β_i ≥ 0` (of the margin constraint, paired with `s_i`) and `η_i = u_i - β_i ≥ 0`
//! (paired with `ξ_i`): the hinge dual's `0 ≤ β_i ≤ u_i`. The optimality conditions are `Rv + q = Ãᵀβ`,
//! `β + η = u` and `β∘s = η∘ξ = 0`. Mehrotra's predictor–corrector follows the central path
//! `β∘s = η∘ξ = μ` with one step length for every variable. Eliminating `Δs`, `Δξ`, `Δη` and `Δβ` from a
//! Newton step leaves
//!
//! `(R + ÃᵀΘÃ) Δv = -r_v + ÃᵀΘρ`,  `Δβ = Θ∘(ρ - ÃΔv)`,  `Θ_i = 1/(ξ_i/η_i + s_i/β_i)`,
//!
//! with `r_v = Rv + q - Ãᵀβ` and `ρ` collecting the other residuals: a `p × p` system (`p` coordinates of `v`),
//! formed in `O(m p²)` (less for sparse rows, see `linalg::NormalPlan`) and factored once per iteration for
//! the predictor, the corrector and, where the factorisation dominates an iteration, Gondzio's centrality
//! correctors, which lengthen the step by evening out the complementarity products.

use ndarray::ArrayView2;

use crate::data::{Features, dot};
use crate::features::DenseMatrix;
use crate::linalg::{Cholesky, NormalPlan, axpy};

/// Iterations before giving up (Mehrotra's method takes 10–30 on these problems).
pub(crate) const MAX_ITERATIONS: usize = 100;
/// Stop when the constraint residual `max |ã_iᵀv + ξ_i - s_i - 1|` is below this (margins are in units of 1).
const PRIMAL_TOL: f64 = 1e-11;
/// Stop when the stationarity residual `‖Rv + q - Ãᵀβ‖_∞` is below this times the size of its terms.
const DUAL_TOL: f64 = 1e-11;
/// Stop when the mean complementarity `μ` is below this times `max u_i`: then `s_i = μ/β_i` is at most
/// `10⁻¹²`-ish on the margin (`β_i` of the order of `u_i`), far inside the band that assigns sides.
const MU_TOL: f64 = 1e-13;
/// Looser tolerances (`PRIMAL_TOL` and `MU_TOL` times this) that still place every example on its side by a
/// wide margin: when round-off ends the iteration first (the normal matrix loses definiteness
/// as `Θ` spans ever more orders of magnitude), the most stationary iterate within them is returned.
const LOOSE: f64 = 1e3;
/// ... but the stationarity residual only within this (relative): it holds to `ε` times the condition of
/// the normal matrix, which columns spanning decades (and `Θ` spanning ever more) push past 10¹⁰. The
/// iterate only has to place the examples on their sides; the active-set solve that follows is exact, and
/// its duality gap says whether it was placed well.
const LOOSE_STATIONARITY: f64 = 1e-5;
/// The fraction of the way to the boundary taken by a step.
const STEP_BACK: f64 = 0.99;
/// Centrality correctors tried per iteration at most ([`WorkingQp::centred`]), where they are cheap next to
/// the factorisation (see [`WorkingQp::correctors`]) ...
const CORRECTORS: usize = 6;
/// ... each aiming this much beyond the step length so far ...
const ASPIRATION: f64 = 0.1;
/// ... by moving the complementarity products into `[σμ/10, 10σμ]`.
const CENTRING_SPREAD: f64 = 10.0;

/// The QP on a working set: the rows `ã_i` (`m × p`, row-major), the bounds `u_i > 0`, the linear term `q`
/// and the diagonal of `R` (`λ` on `w`, 0 on `b`); and optionally an early stop ([`Accept`]).
pub(crate) struct WorkingQp<'a> {
    pub rows: ArrayView2<'a, f64>,
    /// The same rows for the passes over them ([`passes_over`]); the normal matrix's product reads `rows`.
    pub passes: &'a Features<'a>,
    pub upper: &'a [f64],
    pub q: &'a [f64],
    pub ridge: &'a [f64],
    pub accept: Option<Accept<'a>>,
}

/// The rows `rows` as [`Features`] for the passes over them: compressed ([`DenseMatrix::compressed`]) if
/// `compress` and at most a third of their entries are non-zero, else the dense rows themselves, borrowed.
pub(crate) fn passes_over(rows: ArrayView2<'_, f64>, compress: bool) -> Features<'_> {
    let dense = DenseMatrix::from_view(rows);
    match compress.then(|| dense.compressed()).flatten() {
        Some(sparse) => Features::Sparse(sparse),
        None => Features::Dense(dense),
    }
}

/// `takes(k, v, β)` of [`Accept`].
pub(crate) type Takes<'a> = dyn Fn(usize, &[f64], &[f64]) -> bool + 'a;

/// An early stop of [`WorkingQp::solve`]: `takes(k, v, β)`, whether to take a point after `k` iterations
/// (e.g. whether a duality-gap certificate of the whole problem already meets a loose tolerance there),
/// asked at every iterate and, with `full_steps`, also at the full step of each affine direction (`β` then
/// may leave its box: `takes` clips it).
#[derive(Clone, Copy)]
pub(crate) struct Accept<'a> {
    pub takes: &'a Takes<'a>,
    pub full_steps: bool,
}

/// The result of [`WorkingQp::solve`].
pub(crate) struct QpSolution {
    /// The minimiser `v = [w; b]`, or the accepted iterate.
    pub v: Vec<f64>,
    /// Interior-point iterations taken.
    pub iterations: usize,
    /// The multipliers `β` of an iterate that `accept` took (`None`: converged).
    pub accepted: Option<Vec<f64>>,
}

/// The variables of the interior-point iteration.
#[derive(Clone)]
struct Point {
    v: Vec<f64>,
    xi: Vec<f64>,
    s: Vec<f64>,
    beta: Vec<f64>,
    eta: Vec<f64>,
}

impl WorkingQp<'_> {
    /// The minimiser `v = [w; b]` and the iterations taken, from `start` (only the slacks' initial values
    /// depend on it), within `max_iterations`, or the first iterate `accept` takes; else (the iteration does
    /// not converge, not even to the loose tolerances before round-off ends it) the iterations spent.
    pub(crate) fn solve(&self, start: &[f64], max_iterations: usize) -> Result<QpSolution, usize> {
        let m = self.upper.len();
        if m == 0 {
            return Err(0);
        }
        // A strictly interior start on the constraints: ξ - s = d = 1 - ãᵀv, both at least 1; β = η = u/2.
        let d: Vec<f64> = (0..m).map(|i| 1.0 - self.row_dot(i, start)).collect();
        let mut p = Point {
            v: start.to_vec(),
            xi: d.iter().map(|&d| d.max(0.0) + 1.0).collect(),
            s: d.iter().map(|&d| (-d).max(0.0) + 1.0).collect(),
            beta: self.upper.iter().map(|u| u / 2.0).collect(),
            eta: self.upper.iter().map(|u| u / 2.0).collect(),
        };
        let u_max = self.upper.iter().fold(0.0, |a: f64, &u| a.max(u));
        // The most stationary iterate within the loose tolerances, with its relative stationarity residual.
        let mut fallback: Option<(f64, Vec<f64>, usize)> = None;
        let mut spent = max_iterations;
        let mut plan = NormalPlan::new(self.passes);
        let correctors = self.correctors();
        for it in 0..max_iterations {
            let (r_v, v_scale) = self.stationarity(&p);
            let r_u: Vec<f64> = (0..m).map(|i| self.upper[i] - p.beta[i] - p.eta[i]).collect();
            let r_c: Vec<f64> = (0..m).map(|i| self.row_dot(i, &p.v) + p.xi[i] - p.s[i] - 1.0).collect();
            let mu = (dot(&p.beta, &p.s) + dot(&p.eta, &p.xi)) / (2 * m) as f64;
            if max_abs(&r_c) <= PRIMAL_TOL && max_abs(&r_v) <= DUAL_TOL * v_scale && mu <= MU_TOL * u_max {
                return Ok(QpSolution { v: p.v, iterations: it, accepted: None });
            }
            if it > 0 && self.accept.is_some_and(|accept| (accept.takes)(it, &p.v, &p.beta)) {
                return Ok(QpSolution { v: p.v, iterations: it, accepted: Some(p.beta) });
            }
            let stationarity = max_abs(&r_v) / v_scale;
            if max_abs(&r_c) <= LOOSE * PRIMAL_TOL
                && stationarity <= LOOSE_STATIONARITY
                && mu <= LOOSE * MU_TOL * u_max
                && fallback.as_ref().is_none_or(|(r, ..)| stationarity < *r)
            {
                fallback = Some((stationarity, p.v.clone(), it));
            }
            let theta: Vec<f64> = (0..m).map(|i| 1.0 / (p.xi[i] / p.eta[i] + p.s[i] / p.beta[i])).collect();
            let Some(normal) = Cholesky::normal(self.rows, &theta, self.ridge, &mut plan) else {
                spent = it;
                break;
            };
            let residuals = Residuals { r_v: &r_v, r_u: &r_u, r_c: &r_c, theta: &theta };
            // Predictor: the affine direction (σ = 0).
            let c_s: Vec<f64> = (0..m).map(|i| p.beta[i] * p.s[i]).collect();
            let c_xi: Vec<f64> = (0..m).map(|i| p.eta[i] * p.xi[i]).collect();
            let affine = self.direction(&p, &residuals, &normal, &c_s, &c_xi);
            // The full step zeroes every linear residual: its multipliers, clipped, often certify a loose
            // tolerance an iteration or two before the damped iterates do (MNIST images at λ = 1e-5 and a
            // gap of 0.45: 6 iterations, not 8).
            if let Some(accept) = self.accept.filter(|accept| accept.full_steps) {
                let v: Vec<f64> = p.v.iter().zip(&affine.v).map(|(v, dv)| v + dv).collect();
                let beta: Vec<f64> = p.beta.iter().zip(&affine.beta).map(|(b, db)| b + db).collect();
                if (accept.takes)(it + 1, &v, &beta) {
                    return Ok(QpSolution { v, iterations: it + 1, accepted: Some(beta) });
                }
            }
            let alpha = max_step(&p, &affine);
            let mu_affine = (0..m)
                .map(|i| {
                    (p.beta[i] + alpha * affine.beta[i]) * (p.s[i] + alpha * affine.s[i])
                        + (p.eta[i] + alpha * affine.eta[i]) * (p.xi[i] + alpha * affine.xi[i])
                })
                .sum::<f64>()
                / (2 * m) as f64;
            let target = (mu_affine / mu).powi(3) * mu;
            // Corrector: centring towards σμ plus the second-order term of the affine direction.
            let c_s: Vec<f64> = (0..m).map(|i| c_s[i] + affine.beta[i] * affine.s[i] - target).collect();
            let c_xi: Vec<f64> = (0..m).map(|i| c_xi[i] + affine.eta[i] * affine.xi[i] - target).collect();
            let step = self.direction(&p, &residuals, &normal, &c_s, &c_xi);
            let (step, reach) = self.centred(&p, &normal, &theta, step, target, correctors);
            let alpha = (STEP_BACK * reach).min(1.0);
            for (x, dx) in [(&mut p.v, &step.v), (&mut p.xi, &step.xi), (&mut p.s, &step.s)] {
                axpy(alpha, dx, x);
            }
            for (x, dx) in [(&mut p.beta, &step.beta), (&mut p.eta, &step.eta)] {
                axpy(alpha, dx, x);
            }
        }
        fallback.map(|(_, v, iterations)| QpSolution { v, iterations, accepted: None }).ok_or(spent)
    }

    /// How many centrality correctors an iteration may try: one per eight correctors' worth of multiply-adds
    /// in the normal matrix (`m p²/2`; a corrector: two passes over the rows and a dozen over `m`-vectors),
    /// at most [`CORRECTORS`]. Where `p` is small next to the rows' entries they do not pay (20,000 × 20
    /// ill-scaled rows: 3 fewer iterations, 20 % more time), where it is large they do (MNIST images at
    /// λ = 10⁻⁷: 25 → 19 iterations, 12 → 8 to a gap of 0.45).
    fn correctors(&self) -> usize {
        let (m, p) = self.rows.dim();
        let corrector = 2 * self.passes.stored_entries() + 12 * m;
        (m * p * p / 2 / (8 * corrector).max(1)).min(CORRECTORS)
    }

    /// Gondzio's centrality correctors on Mehrotra's `step` from `p`, with its largest step `α`: each aims
    /// at `α̃ = α + ASPIRATION`, asks the products at `α̃` (`β∘s`, `η∘ξ`) to move into `[σμ/10, 10σμ]`
    /// (`σμ = target`; the excess of a large one capped at `10σμ`), and is kept while it lengthens the step
    /// by at least a tenth of that aim. Each costs a solve with the factorisation at hand and two passes
    /// over the rows. The corrected step and its `α`.
    fn centred(
        &self,
        p: &Point,
        normal: &Cholesky,
        theta: &[f64],
        mut step: Point,
        target: f64,
        correctors: usize,
    ) -> (Point, f64) {
        let m = self.upper.len();
        let mut reach = max_step(p, &step);
        let (low, high) = (target / CENTRING_SPREAD, target * CENTRING_SPREAD);
        let into_band = |v: f64| {
            if v < low {
                low - v
            } else if v > high {
                (high - v).max(-high)
            } else {
                0.0
            }
        };
        for _ in 0..correctors {
            if reach >= 1.0 {
                break;
            }
            let aim = (reach + ASPIRATION).min(1.0);
            let to_s: Vec<f64> =
                (0..m).map(|i| into_band((p.beta[i] + aim * step.beta[i]) * (p.s[i] + aim * step.s[i]))).collect();
            let to_xi: Vec<f64> =
                (0..m).map(|i| into_band((p.eta[i] + aim * step.eta[i]) * (p.xi[i] + aim * step.xi[i]))).collect();
            let mut candidate = self.corrector(p, normal, theta, &to_s, &to_xi);
            candidate.add(&step);
            let longer = max_step(p, &candidate);
            if longer < reach + ASPIRATION / 10.0 {
                break;
            }
            (step, reach) = (candidate, longer);
        }
        (step, reach)
    }

    /// The Newton direction that changes the complementarity products by `to_s` (`β∘s`) and `to_xi`
    /// (`η∘ξ`) and leaves every linear residual as it is: `(R + ÃᵀΘÃ) Δv = ÃᵀΘρ` with
    /// `ρ = to_s/β - to_ξ/η`, without refinement (a correction to a refined direction).
    fn corrector(&self, p: &Point, normal: &Cholesky, theta: &[f64], to_s: &[f64], to_xi: &[f64]) -> Point {
        let m = self.upper.len();
        let rho: Vec<f64> = (0..m).map(|i| to_s[i] / p.beta[i] - to_xi[i] / p.eta[i]).collect();
        let weighted: Vec<f64> = (0..m).map(|i| theta[i] * rho[i]).collect();
        let mut rhs = vec![0.0; self.q.len()];
        self.add_transposed(&weighted, &mut rhs);
        let dv = normal.solve(&rhs);
        let dbeta: Vec<f64> = (0..m).map(|i| theta[i] * (rho[i] - self.row_dot(i, &dv))).collect();
        let ds: Vec<f64> = (0..m).map(|i| (to_s[i] - p.s[i] * dbeta[i]) / p.beta[i]).collect();
        let deta: Vec<f64> = dbeta.iter().map(|d| -d).collect();
        let dxi: Vec<f64> = (0..m).map(|i| (to_xi[i] - p.xi[i] * deta[i]) / p.eta[i]).collect();
        Point { v: dv, xi: dxi, s: ds, beta: dbeta, eta: deta }
    }

    /// `Δv` with `(R + ÃᵀΘÃ) Δv = rhs`, by the factorisation `normal` and one step of iterative refinement
    /// (the residual `rhs - RΔv - ÃᵀΘÃΔv` from the rows, solved for again): as `Θ` spans ever more decades
    /// the factorisation's own solution loses digits, and with them the stationarity of the next iterate.
    fn refined(&self, normal: &Cholesky, theta: &[f64], rhs: &[f64]) -> Vec<f64> {
        let mut dv = normal.solve(rhs);
        let mut residual: Vec<f64> = rhs.iter().zip(&dv).zip(self.ridge).map(|((r, d), q)| r - q * d).collect();
        let weighted: Vec<f64> = (0..self.upper.len()).map(|i| -theta[i] * self.row_dot(i, &dv)).collect();
        self.add_transposed(&weighted, &mut residual);
        axpy(1.0, &normal.solve(&residual), &mut dv);
        dv
    }

    /// `ã_iᵀv`.
    fn row_dot(&self, i: usize, v: &[f64]) -> f64 {
        self.passes.row_dot(i, v)
    }

    /// `r_v = Rv + q - Ãᵀβ` and the size of its terms (`max(‖Rv‖_∞, ‖q‖_∞, ‖Ãᵀβ‖_∞)`, at least 1e-300).
    fn stationarity(&self, p: &Point) -> (Vec<f64>, f64) {
        let mut at_beta = vec![0.0; self.q.len()];
        self.add_transposed(&p.beta, &mut at_beta);
        let rv: Vec<f64> = p.v.iter().zip(self.ridge).map(|(v, r)| v * r).collect();
        let scale = max_abs(&rv).max(max_abs(self.q)).max(max_abs(&at_beta)).max(1e-300);
        let r = (0..self.q.len()).map(|j| rv[j] + self.q[j] - at_beta[j]).collect();
        (r, scale)
    }

    /// `out += Ãᵀz`.
    fn add_transposed(&self, z: &[f64], out: &mut [f64]) {
        for (i, &zi) in z.iter().enumerate().filter(|(_, zi)| **zi != 0.0) {
            self.passes.row_axpy(i, zi, out);
        }
    }

    /// The Newton direction for the complementarity targets `β∘s + Δβ∘s + β∘Δs = β∘s - c_s` (and likewise
    /// `c_ξ` for `η∘ξ`), with the normal matrix of this iterate factored in `normal`.
    fn direction(&self, p: &Point, r: &Residuals<'_>, normal: &Cholesky, c_s: &[f64], c_xi: &[f64]) -> Point {
        let m = self.upper.len();
        // ρ = -r_c + (c_ξ + ξ∘r_u)/η - c_s/β
        let rho: Vec<f64> =
            (0..m).map(|i| -r.r_c[i] + (c_xi[i] + p.xi[i] * r.r_u[i]) / p.eta[i] - c_s[i] / p.beta[i]).collect();
        let weighted: Vec<f64> = (0..m).map(|i| r.theta[i] * rho[i]).collect();
        let mut rhs: Vec<f64> = r.r_v.iter().map(|v| -v).collect();
        self.add_transposed(&weighted, &mut rhs);
        let dv = self.refined(normal, r.theta, &rhs);
        let dbeta: Vec<f64> = (0..m).map(|i| r.theta[i] * (rho[i] - self.row_dot(i, &dv))).collect();
        let ds: Vec<f64> = (0..m).map(|i| (-c_s[i] - p.s[i] * dbeta[i]) / p.beta[i]).collect();
        let deta: Vec<f64> = (0..m).map(|i| r.r_u[i] - dbeta[i]).collect();
        let dxi: Vec<f64> = (0..m).map(|i| (-c_xi[i] - p.xi[i] * deta[i]) / p.eta[i]).collect();
        Point { v: dv, xi: dxi, s: ds, beta: dbeta, eta: deta }
    }
}

/// The residuals of one iterate and its `Θ`.
struct Residuals<'r> {
    r_v: &'r [f64],
    r_u: &'r [f64],
    r_c: &'r [f64],
    theta: &'r [f64],
}

impl Point {
    /// `self += other`.
    fn add(&mut self, other: &Point) {
        for (x, dx) in [
            (&mut self.v, &other.v),
            (&mut self.xi, &other.xi),
            (&mut self.s, &other.s),
            (&mut self.beta, &other.beta),
            (&mut self.eta, &other.eta),
        ] {
            axpy(1.0, dx, x);
        }
    }
}

/// The largest `α ≤ 1` keeping `ξ, s, β, η ≥ 0` along `step`.
fn max_step(p: &Point, step: &Point) -> f64 {
    let pairs = [(&p.xi, &step.xi), (&p.s, &step.s), (&p.beta, &step.beta), (&p.eta, &step.eta)];
    pairs
        .iter()
        .flat_map(|(x, dx)| x.iter().zip(dx.iter()))
        .filter(|(_, dx)| **dx < 0.0)
        .fold(1.0, |alpha: f64, (x, dx)| alpha.min(-x / dx))
}

/// `‖a‖_∞`.
fn max_abs(a: &[f64]) -> f64 {
    a.iter().fold(0.0, |m: f64, v| m.max(v.abs()))
}
