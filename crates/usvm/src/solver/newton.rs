//! Newton's method with conjugate-gradient directions and an exact line search (the primal Newton
//! method of Chapelle 2007 for smoothed SVM losses).
//!
//! Each iteration solves `∇²f(x) s = -∇f(x)` — exactly by Cholesky in small dimensions, otherwise by CG from
//! zero to a relative residual
//! `η = min(0.1, √(‖∇f‖/‖∇f(x₀)‖))` (a forcing sequence giving superlinear convergence), then minimises the
//! convex one-dimensional `φ(α) = f(x + α s)` by a safeguarded Newton iteration on `φ'` inside a bracket.
//! Unlike a trust region, the exact line search lets a single step cross many kinks of a nearly
//! piecewise-linear (smoothed hinge) objective, which is what makes a vanishing smoothing floor workable.

use crate::data::{axpy, dot, norm2};
use crate::linalg::columns_from_products;
use crate::progress::{Monitor, Quantity};
use crate::report::Termination;

/// A smooth convex objective as the solver sees it. `value_grad` also prepares `hess_vec` at the same point.
pub trait SmoothFunction {
    /// The number of variables.
    fn dim(&self) -> usize;
    /// `f(x)`, writing `∇f(x)` into `grad` and remembering `x` for [`Self::hess_vec`].
    fn value_grad(&mut self, x: &[f64], grad: &mut [f64]) -> f64;
    /// `out = ∇²f(x) v` at the last `x` given to `value_grad`.
    fn hess_vec(&self, v: &[f64], out: &mut [f64]);
    /// `α ↦ (φ(α), φ'(α), φ''(α))` for `φ(α) = f(x + α d)`.
    fn line<'s>(&'s self, x: &[f64], d: &[f64]) -> Box<dyn Fn(f64) -> (f64, f64, f64) + 's>;
    /// The Hessian at the last `x` given to `value_grad`, column-major into `out` (`dim²` entries); by
    /// default column by column from [`Self::hess_vec`].
    fn hessian(&self, out: &mut [f64]) {
        columns_from_products(self.dim(), out, |e, column| self.hess_vec(e, column));
    }
    /// The minimiser `α ≥ 0` of `φ(α) = f(x + α d)`, `φ'(0) = slope < 0`: by default [`line_minimum`] on
    /// [`Self::line`], one evaluation at a time.
    fn line_minimum(&self, x: &[f64], d: &[f64], slope: f64) -> f64 {
        line_minimum(&*self.line(x, d), slope)
    }
    /// A Newton direction for the gradient `g` at the last `x` computed by the function itself (e.g. from
    /// approximations of the Hessian where products with it are dear), written into `s`; `false` (the
    /// default) for the solver's own: the factored Hessian up to [`DIRECT_MAX_DIM`] variables, conjugate
    /// gradients to a relative residual `forcing` beyond.
    fn newton_direction(&self, _g: &[f64], _forcing: f64, _s: &mut [f64]) -> bool {
        false
    }
}

/// Settings of one Newton run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewtonSettings {
    /// Stop when `‖∇f‖ ≤ tol · gradient_reference`.
    pub tol: f64,
    /// The reference of the relative rule (usually `‖∇f(x₀)‖`).
    pub gradient_reference: f64,
    /// Maximum Newton iterations.
    pub max_iter: usize,
    /// `Some((r, t))`: also require `‖∇f‖ ≤ max(r ‖∇f(x₀)‖, t · gradient_reference)` — a relative decrease
    /// whatever the scale of `gradient_reference` (a continuation's stage, whose start may already meet the
    /// absolute rule), but never below the tolerance `t` of the run it prepares.
    pub reduction: Option<(f64, f64)>,
}

#[derive(Debug, Clone, PartialEq)]
/// What a Newton run returns.
pub struct NewtonResult {
    /// The last iterate.
    pub x: Vec<f64>,
    /// `f(x)`.
    pub value: f64,
    /// `‖∇f(x)‖`.
    pub gradient_norm: f64,
    /// Newton iterations.
    pub n_iter: usize,
    /// Converged, at the iteration limit, or stalled (no representable progress).
    pub termination: Termination,
}

impl NewtonResult {
    /// Whether the gradient rule was met.
    pub fn converged(&self) -> bool {
        self.termination == Termination::Converged
    }
}

/// Minimises `f` from `x0`, reporting each iteration to `monitor`.
pub fn minimize<F: SmoothFunction>(
    f: &mut F,
    x0: Vec<f64>,
    settings: NewtonSettings,
    monitor: Monitor<'_>,
) -> NewtonResult {
    let dim = f.dim();
    let mut x = x0;
    let mut g = vec![0.0; dim];
    let mut fx = f.value_grad(&x, &mut g);
    let mut gnorm = norm2(&g);
    let mut target = settings.tol * settings.gradient_reference;
    if let Some((r, t)) = settings.reduction {
        target = target.min((r * gnorm).max(t * settings.gradient_reference));
    }
    let mut s = vec![0.0; dim];
    let mut n_iter = 0;
    while gnorm > target && n_iter < settings.max_iter {
        let forcing = (gnorm / settings.gradient_reference.max(f64::MIN_POSITIVE)).sqrt().min(0.1);
        if !f.newton_direction(&g, forcing, &mut s) && (dim > DIRECT_MAX_DIM || !direct_solve(f, &g, &mut s)) {
            conjugate_gradient(&|v, out| f.hess_vec(v, out), &g, forcing, &mut s);
        }
        if !(dot(&g, &s) < 0.0) || s.iter().any(|v| !v.is_finite()) {
            // Not a descent direction (round-off in a singular Hessian): fall back to steepest descent.
            s.iter_mut().zip(&g).for_each(|(si, gi)| *si = -gi);
        }
        let alpha = f.line_minimum(&x, &s, dot(&g, &s));
        if alpha * norm2(&s) <= 1e-15 * norm2(&x).max(1.0) {
            break; // no representable progress
        }
        axpy(alpha, &s, &mut x);
        fx = f.value_grad(&x, &mut g);
        gnorm = norm2(&g);
        n_iter += 1;
        if monitor.iteration(n_iter, Quantity::GradientNorm, || (fx, gnorm)) {
            break;
        }
    }
    let termination = Termination::of_run(gnorm <= target, n_iter, settings.max_iter);
    NewtonResult { termination, x, value: fx, gradient_norm: gnorm, n_iter }
}

/// Up to this dimension the Newton system is solved exactly: the Hessian is formed from `dim`
/// Hessian-vector products and factored (no CG iterations, fewer Newton iterations).
pub(crate) const DIRECT_MAX_DIM: usize = 64;

/// Solves `(H + μD²) s = -g` by Cholesky on the equilibrated `D⁻¹HD⁻¹ + μI`, `D = diag(√H_jj)`, with
/// `μ = 10⁻¹⁰`: a ridge relative to each variable's own curvature, so that the direction is invariant under a
/// rescaling of the variables (columns spanning 1e-8…1e8, or `w` and the intercept at different scales). A
/// variable without curvature (the unregularised bias when no example is on the margin) gets the largest
/// diagonal's scale. `false` if the factorisation fails.
fn direct_solve<F: SmoothFunction>(f: &F, g: &[f64], s: &mut [f64]) -> bool {
    let dim = g.len();
    let mut columns = vec![0.0; dim * dim];
    f.hessian(&mut columns);
    let h = |i: usize, j: usize| 0.5 * (columns[j * dim + i] + columns[i * dim + j]);
    let largest = (0..dim).map(|j| h(j, j)).fold(f64::MIN_POSITIVE, f64::max);
    let d: Vec<f64> = (0..dim).map(|j| if h(j, j) > 0.0 { h(j, j) } else { largest }.sqrt()).collect();
    let entry = |i: usize, j: usize| h(i, j) / (d[i] * d[j]) + if i == j { 1e-10 } else { 0.0 };
    let Some(y) = crate::linalg::cholesky_solve(dim, entry, |i| -g[i] / d[i]) else { return false };
    s.iter_mut().zip(y.iter().zip(&d)).for_each(|(si, (yi, di))| *si = yi / di);
    s.iter().all(|v| v.is_finite())
}

/// CG for `(H + μI) s = -g` from `s = 0` until the residual is at most `forcing · ‖g‖`. The damping
/// `μ = 10⁻¹⁰ · gᵀHg/gᵀg` only matters in directions of (near) zero curvature — the unregularised bias when
/// no example sits on the margin — where it turns an unbounded CG step into a long but finite direction whose
/// length the exact line search then corrects.
pub(crate) fn conjugate_gradient(hess_vec: &dyn Fn(&[f64], &mut [f64]), g: &[f64], forcing: f64, s: &mut [f64]) {
    let dim = g.len();
    s.iter_mut().for_each(|v| *v = 0.0);
    let mut r: Vec<f64> = g.iter().map(|v| -v).collect();
    let mut d = r.clone();
    let mut hd = vec![0.0; dim];
    let mut rtr = dot(&r, &r);
    let tol = forcing * rtr.sqrt();
    let mut damping = None;
    for _ in 0..(2 * dim).max(50) {
        if rtr.sqrt() <= tol {
            break;
        }
        hess_vec(&d, &mut hd);
        let dd = dot(&d, &d);
        let mu = *damping.get_or_insert_with(|| (1e-10 * dot(&d, &hd) / dd).max(f64::MIN_POSITIVE));
        axpy(mu, &d, &mut hd);
        let dhd = dot(&d, &hd);
        if !(dhd > 0.0) {
            break;
        }
        let alpha = rtr / dhd;
        axpy(alpha, &d, s);
        axpy(-alpha, &hd, &mut r);
        let rtr_new = dot(&r, &r);
        let beta = rtr_new / rtr;
        d.iter_mut().zip(&r).for_each(|(di, ri)| *di = beta * *di + ri);
        rtr = rtr_new;
    }
}

/// The minimiser `α ≥ 0` of a convex `φ` with `φ'(0) = slope < 0`: bracket by doubling from the Newton step
/// `α = 1`, then safeguarded Newton on `φ'` (bisection when Newton leaves the bracket).
pub(crate) fn line_minimum(phi: &dyn Fn(f64) -> (f64, f64, f64), slope: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, f64::INFINITY);
    let mut alpha = 1.0;
    for _ in 0..200 {
        let (_, d1, d2) = phi(alpha);
        if d1.abs() <= 1e-12 * slope.abs() {
            return alpha;
        }
        if d1 < 0.0 {
            lo = alpha;
        } else {
            hi = alpha;
        }
        let newton = if d2 > 0.0 { alpha - d1 / d2 } else { f64::NAN };
        alpha = if newton > lo && newton < hi {
            newton
        } else if hi.is_finite() {
            0.5 * (lo + hi)
        } else {
            2.0 * alpha
        };
        if hi.is_finite() && hi - lo <= 1e-15 * hi {
            break;
        }
    }
    if hi.is_finite() { alpha } else { lo }
}

/// `(φ(α), φ'(α))` at one step `α` of a line.
pub(crate) type Slope = (f64, f64);

/// Steps of [`line_grid_minimum`]: `4·2^(-j/2)` for `j < LINE_GRID_FINE`, then tenfold down to `~10⁻¹⁷`.
const LINE_GRID_FINE: usize = 40;
const LINE_GRID_COARSE: usize = 12;
/// ... of which [`LineGrid::Around`] evaluates this many first, and at most as many in each further
/// evaluation but the last of at most `LINE_GRID_ROUNDS` more.
const LINE_GRID_WINDOW: usize = 5;
const LINE_GRID_ROUNDS: usize = 4;

/// The steps a one-round line search ([`line_grid_minimum`]) evaluates first.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum LineGrid {
    /// The [`LINE_GRID_WINDOW`] steps of the grid nearest `last` (the last search's step; `1`, Newton's,
    /// for a first), then more only while the best is next to steps not evaluated and `φ` falls towards
    /// them. `slope` is `φ'(0)`.
    Around { last: f64, slope: f64 },
    /// A first direction from `w = 0`, a scaled gradient rather than a Newton step: the whole span at
    /// twice the spacing, `4·2^(-j)` then tenfold (32 steps instead of 52), for at least 82 % of a
    /// quadratic's decrease.
    Cold,
}

/// The best step of one evaluation of `φ` at a grid of steps, for an objective that evaluates many steps
/// for the price of one (a round of the fit over row shards) and a nearly Newton direction, whose
/// minimiser is near `α = 1`: the steps `4·2^(-j/2)` (`1` among them) down to `~5·10⁻⁶`, then tenfold
/// down to `~10⁻¹⁷` (a first direction from `w = 0`, where the smoothed loss has almost no curvature,
/// needs `α ≈ 10⁻¹¹`), the one with the smallest `φ`. Within a factor `√2` of the minimiser `α*` when `α*`
/// lies in the fine part, so for a quadratic `φ` at least 96 % of the possible decrease, and `α = 1` itself
/// near the solution (Newton's convergence kept). `phis` returns `(φ, φ')` at every step.
///
/// Values that differ by no more than their round-off (`8ε|φ|`, at a stage's optimum) do not tell steps
/// apart; the slope does: of such near-ties the step with the smallest `|φ'|` is taken (for a quadratic,
/// the nearest to `α*`) — else a step of 10⁻⁵ chosen by noise costs another Newton iteration, and (over
/// shards) the round for the gradient that the full step brings along.
///
/// Each step costs a loss evaluation per example, so [`LineGrid`] chooses the steps evaluated first.
/// Successive steps are alike (near 1 near a solution): [`LineGrid::Around`] the last one, five steps.
/// For a convex `φ`, the best step evaluated is the best of the grid unless a neighbour on the grid was
/// not evaluated and `φ'` at the best points towards it; then the minimiser lies between the best and the
/// next evaluated step on that side (or `0`), and the next evaluation takes the five steps there nearest
/// the zero of the secant of `φ'` across that bracket; should that miss, five steps dividing the bracket
/// evenly, and the last of [`LINE_GRID_ROUNDS`] more all of the bracket's. A first step from `w = 0` needs
/// no fine spacing ([`LineGrid::Cold`]).
pub(crate) fn line_grid_minimum(phis: &mut dyn FnMut(&[f64]) -> Vec<Slope>, grid: LineGrid) -> f64 {
    let steps = line_grid(grid == LineGrid::Cold);
    let LineGrid::Around { last, slope } = grid else {
        return steps[grid_best(&phis(&steps))];
    };
    // The window of grid indices (large steps to small) nearest `target` within `range` (which is wider).
    let nearest = |target: f64, range: std::ops::Range<usize>| {
        let distance = |j: usize| (steps[j] / target).ln().abs();
        let centre = range.clone().min_by(|&i, &j| distance(i).total_cmp(&distance(j))).unwrap_or(range.start);
        let start = centre.saturating_sub(LINE_GRID_WINDOW / 2).clamp(range.start, range.end - LINE_GRID_WINDOW);
        start..start + LINE_GRID_WINDOW
    };
    let mut known: Vec<Option<Slope>> = vec![None; steps.len()];
    let mut ask = |indices: Vec<usize>, known: &mut Vec<Option<Slope>>| {
        let at: Vec<f64> = indices.iter().map(|&j| steps[j]).collect();
        for (j, v) in indices.into_iter().zip(phis(&at)) {
            known[j] = Some(v);
        }
    };
    // The grid index of the best step evaluated so far.
    let best_known = |known: &[Option<Slope>]| {
        let (tried, values): (Vec<usize>, Vec<Slope>) =
            known.iter().enumerate().filter_map(|(j, v)| Some((j, (*v)?))).unzip();
        tried[grid_best(&values)]
    };
    ask(nearest(last, 0..steps.len()).collect(), &mut known);
    for round in 1..=LINE_GRID_ROUNDS {
        let best = best_known(&known);
        let (value_slope, at) = (known[best].expect("tried").1, steps[best]);
        // The unevaluated steps between the best and the next evaluated one on the side φ' points to, and
        // that one's step and slope (`0` and `φ'(0)` below the grid; none above it).
        let (bracket, other) = if value_slope > 0.0 && best + 1 < steps.len() && known[best + 1].is_none() {
            let end = (best + 1..steps.len()).find(|&j| known[j].is_some()).unwrap_or(steps.len());
            (best + 1..end, known.get(end).copied().flatten().map_or((0.0, slope), |v| (steps[end], v.1)))
        } else if value_slope < 0.0 && best > 0 && known[best - 1].is_none() {
            let begin = (0..best).rev().find(|&j| known[j].is_some()).map_or(0, |j| j + 1);
            (
                begin..best,
                if begin > 0 { (steps[begin - 1], known[begin - 1].expect("tried").1) } else { (steps[0], f64::NAN) },
            )
        } else {
            return at;
        };
        let width = bracket.len();
        let indices: Vec<usize> = if round == LINE_GRID_ROUNDS || width <= LINE_GRID_WINDOW {
            bracket.collect()
        } else if round == 1 {
            // The zero of the secant of φ' between the bracket's ends (`nearest` keeps to the bracket).
            let (b, sb) = other;
            let zero = at - value_slope * (at - b) / (value_slope - sb);
            let guess = if zero.is_finite() && zero > 0.0 { zero } else { steps[(bracket.start + bracket.end) / 2] };
            nearest(guess, bracket).collect()
        } else {
            // The secant missed: five steps dividing the bracket evenly, a sixth of it left at most.
            (1..=LINE_GRID_WINDOW).map(|k| bracket.start + k * width / (LINE_GRID_WINDOW + 1)).collect()
        };
        ask(indices, &mut known);
    }
    steps[best_known(&known)]
}

/// The steps of [`line_grid_minimum`]'s grid, from large to small (every other fine one when `coarse`).
fn line_grid(coarse: bool) -> Vec<f64> {
    let every = if coarse { 2 } else { 1 };
    let fine = (0..LINE_GRID_FINE).step_by(every).map(|j| 4.0 * (-(j as f64) / 2.0).exp2());
    let smallest = 4.0 * (-((LINE_GRID_FINE - every) as f64) / 2.0).exp2();
    let tenfold = (1..=LINE_GRID_COARSE).map(|k| smallest * 10f64.powi(-(k as i32)));
    fine.chain(tenfold).collect()
}

/// The step of [`line_grid_minimum`] among `values` (`(φ, φ')` per step): the lowest `φ`, near-ties within
/// round-off by the smallest `|φ'|`.
fn grid_best(values: &[Slope]) -> usize {
    let lowest = values.iter().map(|v| v.0).fold(f64::INFINITY, f64::min);
    let noise = 8.0 * f64::EPSILON * lowest.abs();
    (0..values.len())
        .filter(|&j| values[j].0 <= lowest + noise)
        .min_by(|&a, &b| values[a].1.abs().total_cmp(&values[b].1.abs()).then(a.cmp(&b)))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `φ(α) = q/2 α² + Σ_i c·h_ε(a_i + α b_i)` with `h_ε` the hinge smoothed by a Huber corner of width
    /// `ε`: convex, nearly piecewise linear, its minimiser anywhere between `10⁻¹¹` and `10³`.
    fn phi(q: f64, scale: f64, eps: f64) -> impl Fn(f64) -> (f64, f64, f64) {
        let rows: Vec<(f64, f64)> =
            (0..200).map(|i| (((i * 37) % 101) as f64 / 50.0 - 1.0, -((i * 53 % 97) as f64 + 1.0) / 97.0)).collect();
        move |alpha: f64| {
            let (mut v, mut d1, mut d2) = (0.5 * q * alpha * alpha, q * alpha, q);
            for &(a, b) in &rows {
                let d = a + alpha * b / scale;
                let (h, h1, h2) = if d >= eps {
                    (d - 0.5 * eps, 1.0, 0.0)
                } else if d > 0.0 {
                    (0.5 * d * d / eps, d / eps, 1.0 / eps)
                } else {
                    (0.0, 0.0, 0.0)
                };
                v += h / 200.0;
                d1 += h1 * b / scale / 200.0;
                d2 += h2 * b * b / (scale * scale) / 200.0;
            }
            (v, d1, d2)
        }
    }

    #[test]
    fn the_grid_line_search_takes_most_of_the_decrease_in_one_evaluation() {
        let square = |star: f64| {
            move |steps: &[f64]| -> Vec<Slope> {
                steps.iter().map(|&a| ((a - star) * (a - star), 2.0 * (a - star))).collect()
            }
        };
        // Quadratics with the minimiser anywhere in the grid's span: at least 96 % of the decrease (82 % on
        // the cold grid); around the last step, further evaluations only when the minimiser lies beyond the
        // five steps.
        for star in [1.0, 0.37, 2.9, 1e-3, 3.7e-5, 6e-6] {
            let slope = -2.0 * star;
            for (grid, share, window) in [
                (LineGrid::Around { last: 1.0, slope }, 0.96, 0.6..1.7),
                (LineGrid::Around { last: 1e-3, slope }, 0.96, 6e-4..1.7e-3),
                (LineGrid::Cold, 0.82, 0.0..f64::INFINITY),
            ] {
                let mut calls = 0;
                let mut counted = |steps: &[f64]| {
                    calls += 1;
                    square(star)(steps)
                };
                let alpha = line_grid_minimum(&mut counted, grid);
                if window.contains(&star) {
                    assert_eq!(calls, 1, "α* = {star}, {grid:?}");
                } else {
                    assert!((2..=1 + LINE_GRID_ROUNDS).contains(&calls), "α* = {star}, {grid:?}: {calls} evaluations");
                }
                let f = |a: f64| (a - star) * (a - star);
                assert!(f(0.0) - f(alpha) >= share * f(0.0), "α* = {star}, {grid:?}: α = {alpha}");
            }
        }
        // A first direction of enormous length: a step of 1e-11 found within a factor ten.
        for grid in [LineGrid::Around { last: 1.0, slope: -2e-11 }, LineGrid::Cold] {
            let alpha = line_grid_minimum(&mut square(1e-11), grid);
            assert!((1e-12..=1e-10).contains(&alpha), "{grid:?}: {alpha}");
        }
        // A Newton direction near the solution: the full step.
        assert_eq!(line_grid_minimum(&mut square(1.0), LineGrid::Around { last: 1.0, slope: -2.0 }), 1.0);
        // The nearly piecewise-linear φ of a smoothed hinge, its minimiser anywhere: around the last step,
        // where a secant of φ' guesses badly (scales 1e-6 and 1e-3 divide the bracket evenly after it), the
        // whole grid's best step all the same, in at most five evaluations and fewer steps than the grid.
        let whole = line_grid(false);
        for scale in [1e-6, 1e-3, 0.05, 1.0, 30.0] {
            let f = phi(1e-3, scale, 1e-8);
            let values: Vec<Slope> = whole.iter().map(|&a| (f(a).0, f(a).1)).collect();
            let (mut calls, mut evaluated) = (0, 0);
            let mut counted = |steps: &[f64]| {
                (calls, evaluated) = (calls + 1, evaluated + steps.len());
                steps.iter().map(|&a| (f(a).0, f(a).1)).collect()
            };
            let alpha = line_grid_minimum(&mut counted, LineGrid::Around { last: 1.0, slope: f(0.0).1 });
            assert_eq!(alpha, whole[grid_best(&values)], "scale {scale}");
            assert!(calls <= 1 + LINE_GRID_ROUNDS && evaluated < whole.len(), "scale {scale}: {calls}, {evaluated}");
        }
        // The same on the cold grid: a decrease.
        let f = phi(1e-3, 1.0, 1e-8);
        let alpha = line_grid_minimum(&mut |steps| steps.iter().map(|&a| (f(a).0, f(a).1)).collect(), LineGrid::Cold);
        assert!(f(alpha).0 < f(0.0).0);
        // At a stage's optimum, values equal to round-off: the step of the smallest slope, not the noise's.
        let mut noisy = |steps: &[f64]| -> Vec<Slope> {
            steps.iter().enumerate().map(|(j, &a)| (0.5 + f64::EPSILON * (j % 3) as f64, 1e-9 * (a - 1.0))).collect()
        };
        assert_eq!(line_grid_minimum(&mut noisy, LineGrid::Around { last: 0.01, slope: -1e-9 }), 1.0);
    }
}
