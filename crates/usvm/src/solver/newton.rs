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
}

/// A `dim × dim` matrix, column-major into `out`, from its products `product(e_j, column_j)` with the
/// unit vectors.
pub(crate) fn columns_from_products(dim: usize, out: &mut [f64], mut product: impl FnMut(&[f64], &mut [f64])) {
    let mut e = vec![0.0; dim];
    for (j, column) in out.chunks_mut(dim).enumerate() {
        e[j] = 1.0;
        product(&e, column);
        e[j] = 0.0;
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

/// Minimises `f` from `x0`.
pub fn minimize<F: SmoothFunction>(f: &mut F, x0: Vec<f64>, settings: NewtonSettings) -> NewtonResult {
    let dim = f.dim();
    let mut x = x0;
    let mut g = vec![0.0; dim];
    let mut fx = f.value_grad(&x, &mut g);
    let mut gnorm = norm2(&g);
    let target = settings.tol * settings.gradient_reference;
    let mut s = vec![0.0; dim];
    let mut n_iter = 0;
    while gnorm > target && n_iter < settings.max_iter {
        let forcing = (gnorm / settings.gradient_reference.max(f64::MIN_POSITIVE)).sqrt().min(0.1);
        if dim > DIRECT_MAX_DIM || !direct_solve(f, &g, &mut s) {
            conjugate_gradient(f, &g, forcing, &mut s);
        }
        if !(dot(&g, &s) < 0.0) || s.iter().any(|v| !v.is_finite()) {
            // Not a descent direction (round-off in a singular Hessian): fall back to steepest descent.
            s.iter_mut().zip(&g).for_each(|(si, gi)| *si = -gi);
        }
        let alpha = line_minimum(&*f.line(&x, &s), dot(&g, &s));
        if alpha * norm2(&s) <= 1e-15 * norm2(&x).max(1.0) {
            break; // no representable progress
        }
        axpy(alpha, &s, &mut x);
        fx = f.value_grad(&x, &mut g);
        gnorm = norm2(&g);
        n_iter += 1;
    }
    let termination = Termination::of_run(gnorm <= target, n_iter, settings.max_iter);
    NewtonResult { termination, x, value: fx, gradient_norm: gnorm, n_iter }
}

/// Up to this dimension the Newton system is solved exactly: the Hessian is formed from `dim`
/// Hessian-vector products and factored (no CG iterations, fewer Newton iterations).
pub(crate) const DIRECT_MAX_DIM: usize = 64;

/// `(H + μI) s = -g` by Cholesky, with `H` from [`SmoothFunction::hessian`] and `μ = 10⁻¹⁰ max_j H_jj` (the
/// same role as the damping of [`conjugate_gradient`]). Returns false if the factorisation fails.
fn direct_solve<F: SmoothFunction>(f: &F, g: &[f64], s: &mut [f64]) -> bool {
    let dim = g.len();
    let mut columns = vec![0.0; dim * dim];
    f.hessian(&mut columns);
    let h = |i: usize, j: usize| 0.5 * (columns[j * dim + i] + columns[i * dim + j]);
    let mu = 1e-10 * (0..dim).map(|j| h(j, j).abs()).fold(f64::MIN_POSITIVE, f64::max);
    let entry = |i: usize, j: usize| h(i, j) + if i == j { mu } else { 0.0 };
    let Some(x) = crate::linalg::cholesky_solve(dim, entry, |i| -g[i]) else { return false };
    s.copy_from_slice(&x);
    s.iter().all(|v| v.is_finite())
}

/// CG for `(H + μI) s = -g` from `s = 0` until the residual is at most `forcing · ‖g‖`. The damping
/// `μ = 10⁻¹⁰ · gᵀHg/gᵀg` only matters in directions of (near) zero curvature — the unregularised bias when
/// no example sits on the margin — where it turns an unbounded CG step into a long but finite direction whose
/// length the exact line search then corrects.
fn conjugate_gradient<F: SmoothFunction>(f: &F, g: &[f64], forcing: f64, s: &mut [f64]) {
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
        f.hess_vec(&d, &mut hd);
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
fn line_minimum(phi: &dyn Fn(f64) -> (f64, f64, f64), slope: f64) -> f64 {
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
