//! Limited-memory BFGS (Nocedal & Wright, *Numerical Optimization*, Algorithms 7.4-7.5) with a
//! strong-Wolfe line search (Algorithms 3.5-3.6, safeguarded cubic interpolation).
//!
//! The direction is `-H ∇f`, `H` the inverse-Hessian approximation of the last `m` pairs
//! `s_k = x_{k+1} - x_k`, `y_k = ∇f_{k+1} - ∇f_k` (two-loop recursion, initial scaling
//! `γ = sᵀy / yᵀy`). The line search returns a step with
//!
//! `f(x + αd) ≤ f(x) + c₁ α ∇fᵀd` and `|∇f(x + αd)ᵀd| ≤ c₂ |∇fᵀd|`, `c₁ = 10⁻⁴`, `c₂ = 0.9`,
//!
//! or, if the interval shrinks to round-off first, the best step that satisfies the first (sufficient
//! decrease) condition. Every such step lowers `f` strictly. When no step gives a decrease that `f` can
//! resolve (round-off level, which ill-conditioned problems reach at a moderate gradient norm), the step
//! is taken from Hager & Zhang's approximate Wolfe conditions instead: `c₂|∇fᵀd| ≤ -∇f(x + αd)ᵀd` and
//! `∇f(x + αd)ᵀd ≤ (1 - 2c₁)|∇fᵀd|` (which round-off does not defeat) with `f(x + αd) ≤ f(x) + 10⁻¹²|f(x)|`.
//! The objective trace is therefore monotone even on non-convex functions — strictly until the round-off
//! stage, and within `10⁻¹²` relative in it. A pair with `sᵀy ≤ 10⁻¹⁰ ‖s‖‖y‖` is not stored (it would
//! make `H` indefinite). When the line search finds no decrease along the quasi-Newton direction the
//! memory is cleared and steepest descent is tried once; if that fails too the run stops and reports
//! `termination = Stalled`.
//!
//! Only values and gradients are used: [`minimize`] takes any [`SmoothFunction`], [`minimize_fn`] a
//! closure.
//!
//! ```
//! use usvm::progress::Monitor;
//! use usvm::solver::lbfgs::{LbfgsSettings, minimize_fn};
//! // Rosenbrock's function, minimum 0 at (1, 1).
//! let f = |x: &[f64], g: &mut [f64]| {
//!     let (a, b) = (1.0 - x[0], x[1] - x[0] * x[0]);
//!     g[0] = -2.0 * a - 400.0 * x[0] * b;
//!     g[1] = 200.0 * b;
//!     a * a + 100.0 * b * b
//! };
//! let settings = LbfgsSettings { tol: 1e-10, ..Default::default() };
//! let r = minimize_fn(f, vec![-1.2, 1.0], &settings, 1.0, Monitor::default());
//! assert!(r.converged() && (r.x[0] - 1.0).abs() < 1e-8 && (r.x[1] - 1.0).abs() < 1e-8);
//! assert!(r.trace.windows(2).all(|w| w[1] <= w[0] + 1e-12 * w[0].abs()));
//! ```

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::newton::SmoothFunction;
use crate::data::{axpy, dot, norm2};
use crate::progress::{Monitor, Quantity};
use crate::report::Termination;

/// Settings of an L-BFGS run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LbfgsSettings {
    /// Stop when `‖∇f‖ ≤ tol · gradient_reference`.
    pub tol: f64,
    /// Maximum iterations (accepted steps).
    pub max_iter: usize,
    /// Number of stored correction pairs `m`.
    pub memory: usize,
}

impl Default for LbfgsSettings {
    fn default() -> Self {
        LbfgsSettings { tol: 1e-6, max_iter: 1000, memory: 10 }
    }
}

/// What an L-BFGS run returns.
#[derive(Debug, Clone, PartialEq)]
pub struct LbfgsResult {
    /// The last iterate.
    pub x: Vec<f64>,
    /// `f(x)`.
    pub value: f64,
    /// `‖∇f(x)‖`.
    pub gradient_norm: f64,
    /// Accepted steps.
    pub n_iter: usize,
    /// Function and gradient evaluations.
    pub n_evals: usize,
    /// Converged, at the iteration limit, or stalled (no decrease found, or a non-finite value).
    pub termination: Termination,
    /// `f` at the start and after every accepted step: strictly decreasing, except at round-off level
    /// (see the module documentation), where it may rise by at most `10⁻¹²` relative.
    pub trace: Vec<f64>,
}

impl LbfgsResult {
    /// Whether the gradient rule was met.
    pub fn converged(&self) -> bool {
        self.termination == Termination::Converged
    }
}

/// Sufficient-decrease and curvature constants of the strong Wolfe conditions.
const C1: f64 = 1e-4;
const C2: f64 = 0.9;
/// Values within this relative distance of `f(x)` count as unchanged (approximate Wolfe conditions).
const ROUNDOFF: f64 = 1e-12;
/// Evaluations allowed per line search.
const MAX_EVALS: usize = 60;

/// Minimises a [`SmoothFunction`] from `x0` (only `value_grad` is used).
pub fn minimize<F: SmoothFunction>(
    f: &mut F,
    x0: Vec<f64>,
    settings: &LbfgsSettings,
    gradient_reference: f64,
    monitor: Monitor<'_>,
) -> LbfgsResult {
    minimize_fn(|x, g| f.value_grad(x, g), x0, settings, gradient_reference, monitor)
}

/// Minimises `f` (returning `f(x)` and writing `∇f(x)` into its second argument) from `x0`, reporting
/// each iteration to `monitor`.
pub fn minimize_fn(
    f: impl FnMut(&[f64], &mut [f64]) -> f64,
    x0: Vec<f64>,
    settings: &LbfgsSettings,
    gradient_reference: f64,
    monitor: Monitor<'_>,
) -> LbfgsResult {
    minimize_preconditioned(f, x0, settings, gradient_reference, None, monitor)
}

/// [`minimize_fn`] with the initial inverse Hessian `γP`, `P = diag(preconditioner)` (positive entries, e.g.
/// the inverses of an estimate of the Hessian's diagonal) and `γ = sᵀy / yᵀPy` (`γ = 1` before the first
/// pair): L-BFGS in the metric of `P`, so that variables on scales spanning orders of magnitude (raw,
/// unscaled columns) cost iterations only through their correlations. The stopping rule is unchanged.
pub fn minimize_preconditioned(
    mut f: impl FnMut(&[f64], &mut [f64]) -> f64,
    x0: Vec<f64>,
    settings: &LbfgsSettings,
    gradient_reference: f64,
    preconditioner: Option<&[f64]>,
    monitor: Monitor<'_>,
) -> LbfgsResult {
    let dim = x0.len();
    let mut x = x0;
    let mut g = vec![0.0; dim];
    let mut fx = f(&x, &mut g);
    let mut n_evals = 1;
    let mut gnorm = norm2(&g);
    let target = settings.tol * gradient_reference;
    let mut trace = vec![fx];
    let mut memory: VecDeque<(Vec<f64>, Vec<f64>, f64)> = VecDeque::with_capacity(settings.memory);
    let mut d = vec![0.0; dim];
    let (mut x_new, mut g_new) = (vec![0.0; dim], vec![0.0; dim]);
    let mut n_iter = 0;
    while fx.is_finite() && gnorm > target && n_iter < settings.max_iter {
        direction(&g, &memory, preconditioner, &mut d);
        let mut slope = dot(&g, &d);
        if !(slope < 0.0) || d.iter().any(|v| !v.is_finite()) {
            memory.clear();
            direction(&g, &memory, preconditioner, &mut d);
            slope = dot(&g, &d);
        }
        // Without curvature information the first trial step has length 1 (a Newton step where `P` is the
        // inverse Hessian's diagonal).
        let first = if memory.is_empty() && preconditioner.is_none() { 1.0f64.min(1.0 / gnorm) } else { 1.0 };
        let mut search = Search { f: &mut f, x: &x, d: &d, x_new: &mut x_new, g_new: &mut g_new, evals: 0, last: 0.0 };
        let mut step = search.run(fx, slope, first);
        if step.is_none() {
            // No measurable decrease of f: the approximate Wolfe conditions (round-off stage).
            search.evals = 0;
            step = search.approximate(fx, slope, first);
            n_evals += MAX_EVALS;
        }
        n_evals += search.evals;
        let Some(step) = step else {
            if memory.is_empty() {
                break; // even steepest descent finds no decrease: round-off level
            }
            memory.clear();
            continue;
        };
        let mut s = x_new.clone();
        axpy(-1.0, &x, &mut s);
        let mut y = g_new.clone();
        axpy(-1.0, &g, &mut y);
        let sy = dot(&s, &y);
        if sy > 1e-10 * norm2(&s) * norm2(&y) {
            if memory.len() == settings.memory.max(1) {
                memory.pop_front();
            }
            memory.push_back((s, y, 1.0 / sy));
        }
        std::mem::swap(&mut x, &mut x_new);
        std::mem::swap(&mut g, &mut g_new);
        fx = step.f;
        gnorm = norm2(&g);
        trace.push(fx);
        n_iter += 1;
        if monitor.iteration(n_iter, Quantity::GradientNorm, || (fx, gnorm)) {
            break;
        }
    }
    let termination = Termination::of_run(gnorm <= target, n_iter, settings.max_iter);
    LbfgsResult { termination, x, value: fx, gradient_norm: gnorm, n_iter, n_evals, trace }
}

/// `d = -H g` by the two-loop recursion, `H₀ = γP` (steepest descent in the metric of `P` with an empty
/// memory; `P = I` without a preconditioner).
fn direction(g: &[f64], memory: &VecDeque<(Vec<f64>, Vec<f64>, f64)>, preconditioner: Option<&[f64]>, d: &mut [f64]) {
    d.iter_mut().zip(g).for_each(|(di, gi)| *di = -gi);
    let mut alphas = Vec::with_capacity(memory.len());
    for (s, y, rho) in memory.iter().rev() {
        let a = rho * dot(s, d);
        axpy(-a, y, d);
        alphas.push(a);
    }
    let gamma = memory.back().map_or(1.0, |(s, y, _)| {
        let ypy = preconditioner.map_or_else(|| dot(y, y), |p| y.iter().zip(p).map(|(yj, pj)| yj * yj * pj).sum());
        dot(s, y) / ypy
    });
    match preconditioner {
        Some(p) => d.iter_mut().zip(p).for_each(|(v, pj)| *v *= gamma * pj),
        None => d.iter_mut().for_each(|v| *v *= gamma),
    }
    for ((s, y, rho), a) in memory.iter().zip(alphas.iter().rev()) {
        let b = rho * dot(y, d);
        axpy(a - b, s, d);
    }
}

/// One trial point of the line search: `φ(α) = f(x + αd)` and `φ'(α)`.
#[derive(Debug, Clone, Copy)]
struct Probe {
    alpha: f64,
    f: f64,
    slope: f64,
}

struct Search<'a, F> {
    f: &'a mut F,
    x: &'a [f64],
    d: &'a [f64],
    /// The last evaluated point and its gradient.
    x_new: &'a mut Vec<f64>,
    g_new: &'a mut Vec<f64>,
    evals: usize,
    /// The step of the point held in `x_new`.
    last: f64,
}

impl<F: FnMut(&[f64], &mut [f64]) -> f64> Search<'_, F> {
    fn eval(&mut self, alpha: f64) -> Probe {
        self.x_new.copy_from_slice(self.x);
        axpy(alpha, self.d, self.x_new);
        let f = (self.f)(&self.x_new[..], &mut self.g_new[..]);
        self.evals += 1;
        self.last = alpha;
        let slope = dot(&self.g_new[..], self.d);
        // A non-finite value counts as "too far": the bracketing logic then shrinks the step.
        if f.is_finite() && slope.is_finite() {
            Probe { alpha, f, slope }
        } else {
            Probe { alpha, f: f64::INFINITY, slope: f64::NAN }
        }
    }

    /// A step satisfying the strong Wolfe conditions (or at least sufficient decrease), with `x_new`,
    /// `g_new` holding its point and gradient; `None` if no decrease was found.
    fn run(&mut self, f0: f64, slope0: f64, first: f64) -> Option<Probe> {
        let armijo = |p: &Probe| p.f <= f0 + C1 * p.alpha * slope0;
        let mut prev = Probe { alpha: 0.0, f: f0, slope: slope0 };
        let mut alpha = first;
        let found = loop {
            if self.evals >= MAX_EVALS {
                break None;
            }
            let p = self.eval(alpha);
            if !armijo(&p) || (prev.alpha > 0.0 && p.f >= prev.f) {
                break self.zoom(f0, slope0, prev, p);
            }
            if p.slope.abs() <= -C2 * slope0 {
                break Some(p);
            }
            if p.slope >= 0.0 {
                break self.zoom(f0, slope0, p, prev);
            }
            prev = p;
            alpha *= 4.0;
            if !alpha.is_finite() {
                break Some(prev);
            }
        };
        let found = found.or((prev.alpha > 0.0).then_some(prev))?;
        if self.last != found.alpha {
            self.eval(found.alpha);
        }
        Some(found)
    }

    /// Hager & Zhang's approximate Wolfe conditions, for when `f` no longer resolves the decrease:
    /// `c₂ φ'(0) ≤ φ'(α) ≤ (1 - 2c₁)|φ'(0)|` and `φ(α) ≤ φ(0) + ε|φ(0)|`, `ε = 10⁻¹²` — the slope
    /// conditions stay measurable where values do not. Bracketing on the slope, secant steps inside.
    fn approximate(&mut self, f0: f64, slope0: f64, first: f64) -> Option<Probe> {
        let (mut lo, mut hi) = (Probe { alpha: 0.0, f: f0, slope: slope0 }, None::<Probe>);
        let mut alpha = first;
        while self.evals < MAX_EVALS {
            let p = self.eval(alpha);
            let flat = p.f <= f0 + ROUNDOFF * f0.abs();
            if flat && p.slope >= C2 * slope0 && p.slope <= (2.0 * C1 - 1.0) * slope0 {
                return Some(p);
            }
            if flat && p.slope < C2 * slope0 {
                lo = p;
            } else {
                hi = Some(p);
            }
            alpha = match hi {
                None => 4.0 * lo.alpha,
                Some(h) => {
                    let secant = lo.alpha - lo.slope * (h.alpha - lo.alpha) / (h.slope - lo.slope);
                    let (a, b) = (lo.alpha + 0.1 * (h.alpha - lo.alpha), h.alpha - 0.1 * (h.alpha - lo.alpha));
                    if secant.is_finite() && h.slope.is_finite() {
                        secant.clamp(a, b)
                    } else {
                        0.5 * (lo.alpha + h.alpha)
                    }
                }
            };
        }
        None
    }

    /// Algorithm 3.6: `lo` satisfies sufficient decrease with the lowest value so far, and the interval
    /// between `lo` and `hi` contains strong-Wolfe steps. Falls back to `lo` when the interval collapses.
    fn zoom(&mut self, f0: f64, slope0: f64, mut lo: Probe, mut hi: Probe) -> Option<Probe> {
        while self.evals < MAX_EVALS {
            let width = hi.alpha - lo.alpha;
            if width.abs() <= 1e-16 * lo.alpha.abs().max(hi.alpha.abs()) {
                break;
            }
            let alpha = interpolate(&lo, &hi);
            let p = self.eval(alpha);
            if p.f > f0 + C1 * alpha * slope0 || p.f >= lo.f {
                hi = p;
            } else {
                if p.slope.abs() <= -C2 * slope0 {
                    return Some(p);
                }
                if p.slope * (hi.alpha - lo.alpha) >= 0.0 {
                    hi = lo;
                }
                lo = p;
            }
        }
        (lo.alpha > 0.0).then_some(lo)
    }
}

/// The minimiser of the cubic through `lo` and `hi` (values and slopes), kept at least 10% of the
/// interval away from either end; bisection when the cubic is unusable (e.g. `hi` not finite).
fn interpolate(lo: &Probe, hi: &Probe) -> f64 {
    let (a, b) = (lo.alpha, hi.alpha);
    let width = b - a;
    let bisect = a + 0.5 * width;
    if !(hi.f.is_finite() && hi.slope.is_finite()) {
        return bisect;
    }
    let d1 = lo.slope + hi.slope - 3.0 * (lo.f - hi.f) / (a - b);
    let disc = d1 * d1 - lo.slope * hi.slope;
    if !(disc >= 0.0) {
        return bisect;
    }
    let d2 = width.signum() * disc.sqrt();
    let c = b - width * (hi.slope + d2 - d1) / (hi.slope - lo.slope + 2.0 * d2);
    if !c.is_finite() {
        return bisect;
    }
    let (lo_end, hi_end) = (a + 0.1 * width, b - 0.1 * width);
    let (min, max) = if lo_end < hi_end { (lo_end, hi_end) } else { (hi_end, lo_end) };
    c.clamp(min, max)
}
