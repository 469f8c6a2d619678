//! Sublinear losses at their apex: a duality-gap certificate of the linear objective, and an exact finish
//! on the examples whose loss sits at its kink.
//!
//! A sublinear loss `L(d, σ) = max_{p ∈ [0, 1]} p d + ψ(p) σ` ([`MarginLoss::dual_form`]; the expected
//! hinge has `ψ = φ∘Φ⁻¹`) with `σ_i = ‖F_iᵀw‖` (`Σ_i = F_i F_iᵀ`) is `max_{p_i, ‖u_i‖ ≤ 1} p_i d_i +
//! ψ(p_i) u_iᵀF_iᵀw`, so minimising the Lagrangian over `(w, b)` gives, for every `p ∈ [0, 1]^ℓ` with
//! `Σ c_i p_i y_i = 0` (with an intercept) and every `u_i` in the unit ball, the lower bound
//!
//! ```text
//! J* ≥ D(p, u) = (1/ℓ) Σ c_i p_i - ‖g‖²/(2λ),   g = (1/ℓ) Σ c_i (p_i y_i x_i - ψ(p_i) F_i u_i).
//! ```
//!
//! Where `σ_i > 0` the loss is smooth and its derivatives name the maximisers: `p_i = ∂L/∂d`,
//! `ψ(p_i) = ∂L/∂σ`, `F_i u_i = Σ_i w/σ_i` (with the solver's floor, `σ_i' = √(σ_i² + ε²)` in place of
//! `σ_i`: still feasible, `‖u_i‖ = σ_i/σ_i' ≤ 1`). At the apex `d_i = 0, σ_i = 0` the primal point does not
//! name them, and the floor leaves an error of about `ε φ(0)` per example there: at small λ on images with
//! low-rank covariances many examples sit at the apex, and the gap stalls near `10⁻⁸`.
//!
//! **The finish** ([`finish`]) fixes a guessed apex set `A` there (the examples within `10 ε` of the apex
//! after a stage with floor `ε`). On the face `{θ : d_i(θ) = 0, F_iᵀw = 0, i ∈ A}` the objective is the sum
//! over the other examples, smooth (they keep a floor of `10⁻⁶ ε`, which moves an example at
//! `σ_i ≫ 10⁻⁶ ε` by `O(10⁻¹² ε²/σ_i)`), and Newton's method minimises it in an orthonormal basis `Z` of the
//! face's directions (the null space of the constraint rows, from a pivoted QR of their transpose). The rows' multipliers are the apex examples' subgradients:
//! `∇f + Σ_{i ∈ A} (c_i/ℓ)(p_i ∇d_i + F̃_i v_i) = 0` (`F̃_i = [F_i; 0]`), optimal if and only if
//! `p_i ∈ [0, 1]` and `‖v_i‖ ≤ ψ(p_i)`. An example whose multipliers violate this leaves `A`, one that
//! reaches the apex joins it, and the dual point `(p, u_i = v_i/ψ(p_i))` certifies the result.

use faer::Mat;
use ndarray::Array2;

use super::newton::{self, NewtonSettings, SmoothFunction};
use crate::data::{axpy, dot, norm2};
use crate::loss::MarginLoss;
use crate::objective::{Objective, Problem};
use crate::progress::Monitor;

/// A primal value `J(θ)` and a dual lower bound `D ≤ J*`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bound {
    /// `J(θ)` (no floor on `σ_i`).
    pub primal: f64,
    /// `D(p, u)`.
    pub dual: f64,
}

impl Bound {
    /// The relative duality gap `(J - D)/J`, a bound on `(J - J*)/J` (`J > 0` for a nonzero `λ`).
    pub fn gap(&self) -> f64 {
        (self.primal - self.dual) / self.primal.abs().max(f64::MIN_POSITIVE)
    }
}

/// The multipliers of one apex example: `p_i` and `v_i = ψ(p_i) u_i` in the coordinates of its factor.
struct ApexMultipliers<'f> {
    index: usize,
    p: f64,
    v: Vec<f64>,
    factor: &'f Array2<f64>,
}

/// `(J(θ), D)` at the dual point `θ` names through the derivatives at floor `floor` (see the module
/// documentation), with the multipliers of `apex` in place of those of its examples; `None` for a loss
/// that is not sublinear.
pub fn bound<L: MarginLoss>(objective: &Objective<'_, L>, theta: &[f64], floor: f64) -> Option<Bound> {
    dual_bound(objective, theta, floor, &[])
}

fn dual_bound<L: MarginLoss>(
    objective: &Objective<'_, L>,
    theta: &[f64],
    floor: f64,
    apex: &[ApexMultipliers<'_>],
) -> Option<Bound> {
    let psi = objective.loss.dual_form()?;
    let p = &objective.problem;
    let (l, n) = (p.n_samples(), p.n_features());
    let exact = Objective { sigma_floor: 0.0, ..*objective };
    let smoothed = Objective { sigma_floor: floor, ..*objective };
    let mut at_apex = vec![usize::MAX; l];
    for (k, a) in apex.iter().enumerate() {
        at_apex[a.index] = k;
    }
    // p_i, and σ_i' off the apex, before balancing.
    let mut level = vec![0.0; l];
    let mut sigma = vec![0.0; l];
    for i in 0..l {
        if at_apex[i] != usize::MAX {
            level[i] = apex[at_apex[i]].p.clamp(0.0, 1.0);
        } else {
            let (d, s) = smoothed.margin(theta, i);
            level[i] = objective.loss.derivatives(d, s).d.clamp(0.0, 1.0);
            sigma[i] = s;
        }
    }
    // Σ c_i p_i y_i = 0: the heavier class's levels scaled down.
    if objective.fit_intercept {
        let side = |positive: bool| -> f64 {
            (0..l).filter(|&i| (p.y[i] > 0.0) == positive).map(|i| p.weight(i) * level[i]).sum()
        };
        let (plus, minus) = (side(true), side(false));
        let heavy = plus > minus;
        let ratio = if heavy { minus / plus } else { plus / minus.max(f64::MIN_POSITIVE) };
        if ratio < 1.0 {
            (0..l).filter(|&i| (p.y[i] > 0.0) == heavy).for_each(|i| level[i] *= ratio);
        }
    }
    let mut g = vec![0.0; n];
    let mut level_sum = 0.0;
    let w = &theta[..n];
    for i in 0..l {
        let c = p.weight(i);
        level_sum += c * level[i];
        p.features.row_axpy(i, c * level[i] * p.y[i], &mut g);
        if at_apex[i] != usize::MAX {
            // u_i = v_i/ψ(p_i⁰), kept in the unit ball: the term is ψ(p_i) F_i u_i.
            let a = &apex[at_apex[i]];
            let norm = norm2(&a.v);
            if norm > 0.0 {
                let scale = psi(level[i]) / psi(a.p.clamp(0.0, 1.0)).max(norm);
                for (k, &vk) in a.v.iter().enumerate() {
                    g.iter_mut().zip(a.factor.column(k)).for_each(|(gj, &f)| *gj -= c * scale * vk * f);
                }
            }
        } else if sigma[i] > 0.0 {
            // F_i u_i = Σ_i w/σ_i' (‖u_i‖ = σ_i/σ_i' ≤ 1).
            let s = psi(level[i]) / sigma[i];
            if s != 0.0 {
                p.covariances.apply_add(i, -c * s, w, &mut g);
            }
        }
    }
    let inv_l = 1.0 / l as f64;
    let gnorm = norm2(&g) * inv_l;
    let dual = level_sum * inv_l - gnorm * gnorm / (2.0 * objective.lambda);
    Some(Bound { primal: exact.value(theta), dual })
}

/// The result of [`finish`]: a point, its certificate and the Newton iterations spent.
#[derive(Debug, Clone)]
pub struct Finish {
    /// `θ` on the face of the final apex set.
    pub theta: Vec<f64>,
    /// Its certificate.
    pub bound: Bound,
    /// Newton iterations over all the face solves.
    pub n_iter: usize,
    /// The norm of the objective's gradient along the face at `theta`.
    pub gradient_norm: f64,
}

/// An example is guessed at the apex when `√(d_i² + σ_i²)` is at most this multiple of the stage's floor
/// (at a smoothed optimum an apex example sits at `d_i/σ_i' = Φ⁻¹(p_i)`, a few floors from the apex).
const APEX_RADIUS: f64 = 10.0;
/// The other examples keep a floor of this multiple of the stage's: an example that leaves the apex starts
/// at its kink, where the unsmoothed loss has no curvature to guide Newton's method, and the floor's effect
/// on an example at `σ_i ≫ ε` is `O(ε²/σ_i)`.
const FACE_FLOOR: f64 = 1e-6;
/// At most this many Newton iterations per finish (over all its rounds): a wrong guess must not cost more
/// than a few stages.
const MAX_NEWTON: usize = 50;
/// The finish forms an orthonormal basis of the variables (`dim²` floats, 134 MB at this size) and
/// materialises factors up to `dim` columns: beyond it there is none.
const MAX_DIM: usize = 4096;
/// At most this many rounds of leaving and joining.
const MAX_ROUNDS: usize = 12;
/// Newton on a face stops at this gradient norm relative to `‖∇J(0)‖` (or when it stops making progress).
const FACE_TOL: f64 = 1e-13;
/// A multiplier violation above this (relative to 1, the scale of `p_i`) sends its example off the apex.
const VIOLATION_TOL: f64 = 1e-9;

/// The exact finish from `theta`, the solution of a stage with floor `floor` (see the module
/// documentation): the best point found (lowest gap) within `max_iter` Newton iterations, or `None` when
/// there is nothing to finish (no example near the apex, a loss that is not sublinear, a covariance form
/// without a factor, more apex rows than variables, more than `MAX_DIM` (4,096) variables). Stops early once the gap is at most `gap_tol`.
pub fn finish<L: MarginLoss>(
    objective: &Objective<'_, L>,
    theta: &[f64],
    floor: f64,
    gap_tol: f64,
    max_iter: usize,
    monitor: Monitor<'_>,
) -> Option<Finish> {
    let psi = objective.loss.dual_form()?;
    let p = &objective.problem;
    let (l, n, dim) = (p.n_samples(), p.n_features(), objective.dim());
    if dim > MAX_DIM {
        return None;
    }
    let exact = Objective { sigma_floor: 0.0, ..*objective };
    // Example i is within `APEX_RADIUS ε` of the apex at θ.
    let near = |theta: &[f64], i: usize, floor: f64| {
        let (d, s) = exact.margin(theta, i);
        p.weight(i) > 0.0 && d.hypot(s) <= APEX_RADIUS * floor
    };
    let mut members: Vec<usize> = (0..l).filter(|&i| near(theta, i, floor)).collect();
    if members.is_empty() {
        return None;
    }
    let mut factors: Vec<Option<Array2<f64>>> = vec![None; l];
    let mut left = vec![false; l];
    let reference = super::exact::initial_gradient_norm(&exact);
    let face_floor = FACE_FLOOR * floor;
    let mut theta = theta.to_vec();
    let mut best: Option<Finish> = None;
    let mut n_iter = 0;
    let max_iter = max_iter.min(MAX_NEWTON);
    for _ in 0..MAX_ROUNDS {
        // The face's rows must be fewer than the variables: stop materialising factors once they are not
        // (a dense diagonal has n columns per example).
        let mut rows = 0;
        for &i in &members {
            if factors[i].is_none() {
                factors[i] = Some(p.covariances.factor(i, n)?);
            }
            rows += 1 + factors[i].as_ref().map_or(0, |f| f.ncols());
            if rows >= dim {
                break;
            }
        }
        let Some(face) = Face::new(objective, &members, &factors, &theta) else { break };
        let weights: Vec<f64> = (0..l).map(|i| if face.contains(i) { 0.0 } else { p.weight(i) }).collect();
        let rest =
            Objective { problem: Problem { weights: Some(&weights), ..*p }, sigma_floor: face_floor, ..*objective };
        let mut on_face = OnFace::new(&rest, &face);
        let start = vec![0.0; on_face.dim()];
        let result = newton::minimize(
            &mut on_face,
            start,
            NewtonSettings {
                tol: FACE_TOL,
                gradient_reference: reference,
                max_iter: max_iter.saturating_sub(n_iter),
                reduction: None,
            },
            monitor.after(n_iter),
        );
        n_iter += result.n_iter;
        theta = on_face.point(&result.x);
        let mut gradient = vec![0.0; dim];
        rest.value_grad(&theta, &mut gradient);
        let multipliers = face.multipliers(&gradient, l as f64, |i| p.weight(i));
        let bound = dual_bound(objective, &theta, face_floor, &multipliers)?;
        if best.as_ref().is_none_or(|b| bound.gap() < b.bound.gap()) {
            best = Some(Finish { theta: theta.clone(), bound, n_iter, gradient_norm: result.gradient_norm });
        }
        if bound.gap() <= gap_tol || n_iter >= max_iter {
            break;
        }
        // Leave: multipliers outside {p ∈ [0, 1], ‖v‖ ≤ ψ(p)}; join: examples that reached the apex.
        let violation = |m: &ApexMultipliers<'_>| {
            let p = m.p.clamp(0.0, 1.0);
            (-m.p).max(m.p - 1.0).max(norm2(&m.v) - psi(p))
        };
        let leaving: Vec<usize> =
            multipliers.iter().filter(|m| violation(m) > VIOLATION_TOL).map(|m| m.index).collect();
        let joining: Vec<usize> =
            (0..l).filter(|&i| !face.contains(i) && !left[i] && near(&theta, i, face_floor)).collect();
        if leaving.is_empty() && joining.is_empty() {
            break;
        }
        members.retain(|i| !leaving.contains(i));
        leaving.iter().for_each(|&i| left[i] = true);
        members.extend(joining);
        members.sort_unstable();
        if members.is_empty() {
            break;
        }
    }
    best.map(|b| Finish { n_iter, ..b })
}

/// The face `{θ : d_i(θ) = 0, F_iᵀw = 0, i ∈ A}`: its constraint rows `y_i x̃_i` (right-hand side 1) and
/// `F̃_iᵀ` (0), their pivoted QR `[rows]ᵀ P = Q R`, and a feasible point.
struct Face<'f> {
    members: Vec<usize>,
    factors: Vec<&'f Array2<f64>>,
    q: Mat<f64>,
    r: Mat<f64>,
    /// `perm[k]` = the row that became column `k` of `[rows]ᵀ P`.
    perm: Vec<usize>,
    rank: usize,
    origin: Vec<f64>,
}

impl<'f> Face<'f> {
    fn new<L: MarginLoss>(
        objective: &Objective<'_, L>,
        members: &[usize],
        factors: &'f [Option<Array2<f64>>],
        theta: &[f64],
    ) -> Option<Self> {
        let p = &objective.problem;
        let (n, dim) = (p.n_features(), objective.dim());
        let factors: Vec<&Array2<f64>> = members.iter().map(|&i| factors[i].as_ref()).collect::<Option<_>>()?;
        let m: usize = factors.iter().map(|f| 1 + f.ncols()).sum();
        if m >= dim {
            return None;
        }
        // [rows]ᵀ, dim × m, and the right-hand side.
        let mut rows_t = Mat::<f64>::zeros(dim, m);
        let mut rhs = vec![0.0; m];
        let mut column = vec![0.0; n];
        let mut k = 0;
        for (&i, f) in members.iter().zip(&factors) {
            column.iter_mut().for_each(|v| *v = 0.0);
            p.features.row_axpy(i, p.y[i], &mut column);
            for (j, &v) in column.iter().enumerate() {
                rows_t[(j, k)] = v;
            }
            if objective.fit_intercept {
                rows_t[(n, k)] = p.y[i];
            }
            rhs[k] = 1.0;
            k += 1;
            for c in 0..f.ncols() {
                for j in 0..n {
                    rows_t[(j, k)] = f[[j, c]];
                }
                k += 1;
            }
        }
        let qr = rows_t.col_piv_qr();
        let r = qr.R().to_owned();
        let perm: Vec<usize> = qr.P().arrays().0.to_vec();
        let top = r[(0, 0)].abs();
        let rank = (0..m).take_while(|&k| r[(k, k)].abs() > 1e-10 * top).count();
        let q = qr.compute_Q();
        // The nearest feasible point: θ + Q₁ z, R₁₁ᵀ z = Pᵀ(e - Cθ) on the first `rank` rows.
        let residual: Vec<f64> = (0..m).map(|k| rhs[k] - column_dot(&rows_t, k, theta)).collect();
        let mut z = vec![0.0; rank];
        for a in 0..rank {
            let s: f64 = (0..a).map(|b| r[(b, a)] * z[b]).sum();
            z[a] = (residual[perm[a]] - s) / r[(a, a)];
        }
        let mut origin = theta.to_vec();
        for (a, &za) in z.iter().enumerate() {
            axpy(za, q.col_as_slice(a), &mut origin);
        }
        // The rows beyond the rank must hold too (consistent constraints).
        let scale = residual.iter().fold(1.0_f64, |m, v| m.max(v.abs()));
        if (0..m).any(|k| (rhs[k] - column_dot(&rows_t, k, &origin)).abs() > 1e-8 * scale) {
            return None;
        }
        Some(Face { members: members.to_vec(), factors, q, r, perm, rank, origin })
    }

    fn contains(&self, i: usize) -> bool {
        self.members.binary_search(&i).is_ok()
    }

    /// The multipliers of the rows for `∇f + [rows]ᵀ μ = 0` (least squares, basic solution), as each
    /// member's `(p_i, v_i)`: `μ_d = -(c_i/ℓ) p_i`, `μ_F = (c_i/ℓ) v_i`.
    fn multipliers(&self, gradient: &[f64], l: f64, weight: impl Fn(usize) -> f64) -> Vec<ApexMultipliers<'f>> {
        let rank = self.rank;
        // R₁₁ (Pᵀμ)₁ = -Q₁ᵀ∇f.
        let qg: Vec<f64> = (0..rank).map(|a| -dot(self.q.col_as_slice(a), gradient)).collect();
        let mut pmu = vec![0.0; rank];
        for a in (0..rank).rev() {
            let s: f64 = (a + 1..rank).map(|b| self.r[(a, b)] * pmu[b]).sum();
            pmu[a] = (qg[a] - s) / self.r[(a, a)];
        }
        let m: usize = self.factors.iter().map(|f| 1 + f.ncols()).sum();
        let mut mu = vec![0.0; m];
        for (a, &v) in pmu.iter().enumerate() {
            mu[self.perm[a]] = v;
        }
        let mut k = 0;
        self.members
            .iter()
            .zip(&self.factors)
            .map(|(&i, f)| {
                let scale = l / weight(i);
                let p = -mu[k] * scale;
                let v = mu[k + 1..k + 1 + f.ncols()].iter().map(|x| x * scale).collect();
                k += 1 + f.ncols();
                ApexMultipliers { index: i, p, v, factor: f }
            })
            .collect()
    }
}

/// `(column k of A)ᵀ θ`.
fn column_dot(a: &Mat<f64>, k: usize, theta: &[f64]) -> f64 {
    dot(a.col_as_slice(k), theta)
}

/// `f(origin + Z y)` over `y`, `Z` the face's directions (the columns of `Q` beyond the rank).
struct OnFace<'o, 'f, L> {
    stage: super::exact::Smooth<'o, L>,
    face: &'f Face<'f>,
    lift: std::cell::RefCell<(Vec<f64>, Vec<f64>)>,
}

impl<'o, 'f, L: MarginLoss> OnFace<'o, 'f, L> {
    fn new(rest: &Objective<'o, L>, face: &'f Face<'f>) -> Self {
        let dim = face.origin.len();
        OnFace {
            stage: super::exact::Continuation::stage(rest, rest.sigma_floor),
            face,
            lift: std::cell::RefCell::new((vec![0.0; dim], vec![0.0; dim])),
        }
    }

    /// `Z y` (into `out`).
    fn lift_into(&self, y: &[f64], out: &mut [f64]) {
        out.iter_mut().for_each(|v| *v = 0.0);
        for (a, &ya) in y.iter().enumerate() {
            if ya != 0.0 {
                axpy(ya, self.face.q.col_as_slice(self.face.rank + a), out);
            }
        }
    }

    /// `Zᵀ v` (into `out`).
    fn project_into(&self, v: &[f64], out: &mut [f64]) {
        for (a, o) in out.iter_mut().enumerate() {
            *o = dot(self.face.q.col_as_slice(self.face.rank + a), v);
        }
    }

    /// `origin + Z y`.
    fn point(&self, y: &[f64]) -> Vec<f64> {
        let mut x = vec![0.0; self.face.origin.len()];
        self.lift_into(y, &mut x);
        axpy(1.0, &self.face.origin, &mut x);
        x
    }
}

impl<L: MarginLoss> SmoothFunction for OnFace<'_, '_, L> {
    fn dim(&self) -> usize {
        self.face.origin.len() - self.face.rank
    }
    fn value_grad(&mut self, y: &[f64], grad: &mut [f64]) -> f64 {
        let x = self.point(y);
        let mut g = vec![0.0; x.len()];
        let value = self.stage.value_grad(&x, &mut g);
        self.project_into(&g, grad);
        value
    }
    fn hess_vec(&self, v: &[f64], out: &mut [f64]) {
        let mut lift = self.lift.borrow_mut();
        let (zv, hz) = &mut *lift;
        self.lift_into(v, zv);
        self.stage.hess_vec(zv, hz);
        self.project_into(hz, out);
    }
    fn line<'s>(&'s self, y: &[f64], d: &[f64]) -> Box<dyn Fn(f64) -> (f64, f64, f64) + 's> {
        let x = self.point(y);
        let mut direction = vec![0.0; x.len()];
        self.lift_into(d, &mut direction);
        self.stage.line(&x, &direction)
    }
}

#[cfg(test)]
mod tests {
    use rand::{RngExt, SeedableRng};
    use rand_distr::StandardNormal;
    use rand_xoshiro::Xoshiro256PlusPlus;

    use super::*;
    use crate::covariance::Covariances;
    use crate::features::Features;
    use crate::loss::ExpectedHinge;
    use crate::solver::exact::{self, ExactSettings};

    /// `ℓ` noisy points in `n` dimensions, rank-2 covariances (none for every fifth example): at small λ
    /// many examples end at the apex.
    fn problem(seed: u64, l: usize, n: usize) -> (Features<'static>, Vec<f64>, Covariances) {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut normal = move || -> f64 { rng.sample(StandardNormal) };
        let y: Vec<f64> = (0..l).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 }).collect();
        let x = Array2::from_shape_fn((l, n), |(i, j)| normal() + if j == 0 { y[i] } else { 0.0 });
        let factors =
            (0..l).map(|i| Array2::from_shape_fn((n, if i % 5 == 0 { 0 } else { 2 }), |_| 0.3 * normal())).collect();
        (Features::dense(x), y, Covariances::low_rank(factors, None))
    }

    #[test]
    fn weak_duality_holds_at_every_point_and_multiplier() {
        let (x, y, cov) = problem(3, 30, 12);
        let problem = Problem { features: &x, y: &y, weights: None, covariances: cov.as_dyn() };
        let objective = Objective::new(problem, ExpectedHinge, 1e-3);
        let (optimum, report) = exact::solve(&objective, vec![0.0; 13], &ExactSettings::default(), Monitor::default());
        let least = report.objective;
        assert!(report.duality_gap.unwrap() <= 1e-10, "{report:?}");
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(4);
        let factors: Vec<Array2<f64>> = (0..30).map(|i| cov.as_dyn().factor(i, 12).unwrap()).collect();
        for trial in 0..200 {
            let scale = [1e-3, 0.1, 1.0, 10.0][trial % 4];
            let theta: Vec<f64> = optimum.iter().map(|&t| t + scale * rng.sample::<f64, _>(StandardNormal)).collect();
            let floor = [0.0, 1e-8, 1e-2, 1.0][trial / 4 % 4];
            // Any multipliers at all for a few examples: p outside [0, 1], v outside the ball included.
            let apex: Vec<ApexMultipliers<'_>> = (0..trial % 6)
                .map(|k| {
                    let index = (7 * k + trial) % 30;
                    let r = factors[index].ncols();
                    ApexMultipliers {
                        index,
                        p: rng.random_range(-0.5..1.5),
                        v: (0..r).map(|_| rng.sample::<f64, _>(StandardNormal)).collect(),
                        factor: &factors[index],
                    }
                })
                .collect();
            let bound = dual_bound(&objective, &theta, floor, &apex).unwrap();
            assert!(bound.dual <= least * (1.0 + 1e-12), "trial {trial}: D = {} > J* = {least}", bound.dual);
            assert!(bound.primal >= least * (1.0 - 1e-12), "trial {trial}");
        }
    }

    #[test]
    fn the_face_multipliers_make_the_gradient_tangent_to_the_face() {
        let (x, y, cov) = problem(5, 20, 15);
        let problem = Problem { features: &x, y: &y, weights: None, covariances: cov.as_dyn() };
        let objective = Objective::new(problem, ExpectedHinge, 1e-2);
        let members = vec![1, 4, 5, 12];
        let factors: Vec<Option<Array2<f64>>> = (0..20).map(|i| cov.as_dyn().factor(i, 15)).collect();
        let theta: Vec<f64> = (0..16).map(|j| 0.1 * j as f64 - 0.5).collect();
        let face = Face::new(&objective, &members, &factors, &theta).unwrap();
        // The origin is on the face: d_i = 0 and F_iᵀw = 0 for every member.
        let exact = Objective { sigma_floor: 0.0, ..objective };
        for &i in &members {
            let (d, s) = exact.margin(&face.origin, i);
            assert!(d.abs() < 1e-12 && s < 1e-12, "example {i}: d = {d}, σ = {s}");
        }
        // ∇f + Σ (c_i/ℓ)(p_i ∇d_i + F̃_i v_i) has no component across the face (Q₁ᵀ of it is zero).
        let gradient: Vec<f64> = (0..16).map(|j| (j as f64).sin()).collect();
        let mut residual = gradient.clone();
        for m in face.multipliers(&gradient, 20.0, |_| 1.0) {
            let mut row = vec![0.0; 16];
            x.row_axpy(m.index, -y[m.index], &mut row[..15]);
            row[15] = -y[m.index];
            axpy(m.p / 20.0, &row, &mut residual);
            for (k, &vk) in m.v.iter().enumerate() {
                residual.iter_mut().zip(m.factor.column(k)).for_each(|(r, &f)| *r += vk / 20.0 * f);
            }
        }
        for a in 0..face.rank {
            assert!(dot(face.q.col_as_slice(a), &residual).abs() < 1e-12, "direction {a}");
        }
        // ... and along the face it is the gradient's own component.
        for a in face.rank..16 {
            let (t, r) = (dot(face.q.col_as_slice(a), &gradient), dot(face.q.col_as_slice(a), &residual));
            assert!((t - r).abs() < 1e-12);
        }
    }
}
