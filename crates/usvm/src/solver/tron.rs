//! Trust-region Newton method with conjugate-gradient inner solves (Lin, Weng & Keerthi 2008; the
//! TRON of LIBLINEAR), for twice-differentiable objectives given by values, gradients and
//! Hessian-vector products. Steihaug's rule stops CG at the trust-region boundary or on nonpositive
//! curvature.

use crate::data::{axpy, dot, norm2};

/// A smooth objective as the solver sees it. `value_grad` also prepares `hess_vec` at the same point.
pub trait SmoothFunction {
    fn dim(&self) -> usize;
    /// `f(x)`, writing `∇f(x)` into `grad` and remembering `x` for [`Self::hess_vec`].
    fn value_grad(&mut self, x: &[f64], grad: &mut [f64]) -> f64;
    /// `out = ∇²f(x) v` at the last `x` given to `value_grad`.
    fn hess_vec(&self, v: &[f64], out: &mut [f64]);
}

/// Settings of one TRON run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TronSettings {
    /// Stop when `‖∇f‖ ≤ tol · gradient_reference`.
    pub tol: f64,
    pub gradient_reference: f64,
    pub max_iter: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TronResult {
    pub x: Vec<f64>,
    pub value: f64,
    pub gradient_norm: f64,
    pub n_iter: usize,
    pub converged: bool,
}

const ETA0: f64 = 1e-4;
const ETA1: f64 = 0.25;
const ETA2: f64 = 0.75;
const SIGMA1: f64 = 0.25;
const SIGMA2: f64 = 0.5;
const SIGMA3: f64 = 4.0;

/// Minimises `f` from `x0`.
pub fn minimize<F: SmoothFunction>(f: &mut F, x0: Vec<f64>, settings: TronSettings) -> TronResult {
    let dim = f.dim();
    let mut x = x0;
    let mut g = vec![0.0; dim];
    let mut fx = f.value_grad(&x, &mut g);
    let mut gnorm = norm2(&g);
    let target = settings.tol * settings.gradient_reference;
    let mut delta = gnorm;
    let (mut s, mut r) = (vec![0.0; dim], vec![0.0; dim]);
    let mut x_new = vec![0.0; dim];
    let mut g_new = vec![0.0; dim];
    let mut n_iter = 0;
    let mut first = true;
    while gnorm > target && n_iter < settings.max_iter {
        conjugate_gradient(f, delta, &g, &mut s, &mut r);
        x_new.copy_from_slice(&x);
        axpy(1.0, &s, &mut x_new);
        let gs = dot(&g, &s);
        let predicted = -0.5 * (gs - dot(&s, &r));
        // The next point's gradient is computed with its value (and kept only if the step is taken); this
        // also moves the Hessian to x_new, so a rejected step re-linearises at x below.
        let f_new = f.value_grad(&x_new, &mut g_new);
        let actual = fx - f_new;
        let snorm = norm2(&s);
        if first {
            delta = delta.min(snorm);
            first = false;
        }
        let alpha = if f_new - fx - gs <= 0.0 {
            SIGMA3
        } else {
            SIGMA1.max(-0.5 * (gs / (f_new - fx - gs)))
        };
        delta = if actual < ETA0 * predicted {
            (alpha.max(SIGMA1) * snorm).min(SIGMA2 * delta)
        } else if actual < ETA1 * predicted {
            (SIGMA1 * delta).max((alpha * snorm).min(SIGMA2 * delta))
        } else if actual < ETA2 * predicted {
            (SIGMA1 * delta).max((alpha * snorm).min(SIGMA3 * delta))
        } else {
            delta.max((alpha * snorm).min(SIGMA3 * delta))
        };
        if actual > ETA0 * predicted {
            n_iter += 1;
            std::mem::swap(&mut x, &mut x_new);
            std::mem::swap(&mut g, &mut g_new);
            fx = f_new;
            gnorm = norm2(&g);
        } else {
            f.value_grad(&x, &mut g_new);
        }
        let stalled = (actual.abs() <= 0.0 && predicted <= 0.0)
            || (actual.abs() <= 1e-12 * fx.abs() && predicted.abs() <= 1e-12 * fx.abs())
            || delta <= 1e-300;
        if stalled {
            break;
        }
    }
    TronResult {
        converged: gnorm <= target,
        x,
        value: fx,
        gradient_norm: gnorm,
        n_iter,
    }
}

/// Approximately solves `H s = -g` inside `‖s‖ ≤ delta`; leaves the residual `r = -g - H s`.
fn conjugate_gradient<F: SmoothFunction>(
    f: &F,
    delta: f64,
    g: &[f64],
    s: &mut [f64],
    r: &mut [f64],
) {
    let dim = g.len();
    s.iter_mut().for_each(|v| *v = 0.0);
    for (ri, gi) in r.iter_mut().zip(g) {
        *ri = -gi;
    }
    let mut d = r.to_vec();
    let mut hd = vec![0.0; dim];
    let mut rtr = dot(r, r);
    let cg_tol = 0.1 * norm2(g);
    for _ in 0..(2 * dim + 20) {
        if rtr.sqrt() <= cg_tol {
            break;
        }
        f.hess_vec(&d, &mut hd);
        let dhd = dot(&d, &hd);
        let mut alpha = rtr / dhd;
        if !(dhd > 0.0) {
            alpha = to_boundary(s, &d, delta);
            axpy(alpha, &d, s);
            axpy(-alpha, &hd, r);
            return;
        }
        axpy(alpha, &d, s);
        if norm2(s) > delta {
            axpy(-alpha, &d, s);
            alpha = to_boundary(s, &d, delta);
            axpy(alpha, &d, s);
            axpy(-alpha, &hd, r);
            return;
        }
        axpy(-alpha, &hd, r);
        let rtr_new = dot(r, r);
        let beta = rtr_new / rtr;
        for (di, ri) in d.iter_mut().zip(r.iter()) {
            *di = beta * *di + ri;
        }
        rtr = rtr_new;
    }
}

/// The step `τ ≥ 0` with `‖s + τ d‖ = delta` (s inside the region).
fn to_boundary(s: &[f64], d: &[f64], delta: f64) -> f64 {
    let (std, sts, dtd) = (dot(s, d), dot(s, s), dot(d, d));
    if dtd == 0.0 {
        return 0.0;
    }
    let dsq = delta * delta;
    let rad = (std * std + dtd * (dsq - sts).max(0.0)).sqrt();
    if std >= 0.0 {
        (dsq - sts).max(0.0) / (std + rad)
    } else {
        (rad - std) / dtd
    }
}
