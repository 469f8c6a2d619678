//! Kernel TSVC (Bi & Zhang section 5.2): Algorithm 1 with a kernel SVM on the shifted points
//! `p_j = x_j + Δx_j` and the first-order Taylor update of the perturbations.
//!
//! With `a_j = α_j y_j` and `f(z) = Σ_j a_j k(z, p_j)`, the objective after a round is
//!
//! `J = ½ Σ_ij a_i a_j k(p_i, p_j) + C Σ c_i max(0, 1 - y_i(f(p_i) + b))`,
//!
//! the kernel SVM's own objective on the shifted points. Step 2 linearises `k(x_i + Δx, ·)` at `x_i`:
//! `y_i f(x_i + Δx) ≈ y_i f(x_i) + y_i Δxᵀ v_i`, `v_i = Σ_j a_j ∇_x k(x_i, p_j)`, maximised over the ball by
//! `Δx_i = y_i δ_i v_i/‖v_i‖`. As a safeguard the new point is kept only where the exact hinge
//! `max(0, 1 - y_i(f(x_i + Δx_i) + b))` is no larger than at the current point, so `J` cannot increase in
//! step 2; step 1 minimises the SVM objective over the whole feature space, which contains the previous
//! hyperplane, so `J` cannot increase there either. The trace is therefore monotone (up to the SVM
//! solver's tolerance; a round that does not lower `J` ends the rounds and is discarded).
//!
//! The kernel SVM step is [`svm_step`]: the dual QP solved by SMO on the dense `Q` (warm-started from
//! the previous round's `α`), or by Clarabel without an intercept.

use ndarray::Array2;
use rayon::prelude::*;

use crate::data::{Dataset, Features, norm2};
use crate::error::{Error, Result};
use crate::model::{KernelModel, Model};
use crate::ovr;
use crate::progress::{Monitor, Quantity};
use crate::report::FitReport;
use crate::report::Termination;
use crate::solver::conic;
use crate::solver::smo::{self, DenseQ, SmoSettings};

use super::tsvc_params::{TsvcFit, TsvcParams, TsvcReport};

/// One fitted binary kernel TSVC: `f(x) = Σ_j coef_j k(x, points_j) + intercept`.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelTsvc {
    /// The shifted training points `x_j + Δx_j`.
    pub points: Array2<f64>,
    /// `α_j y_j`.
    pub coef: Vec<f64>,
    /// The intercept `b`.
    pub intercept: f64,
    /// What the solve reports.
    pub report: TsvcReport,
}

/// SMO's stopping tolerance in the kernel SVM step: tight, so that the rounds' objective is accurate
/// enough to decide whether a round lowered it.
const SMO_TOL: f64 = 1e-8;

/// The kernel SVM step: `(α, b, solved)` for the Gram matrix `k`, labels `y` (±1), box bounds
/// `upper_i = C c_i` and an optional warm start. With an intercept it is the SMO solver
/// (`solver::smo`, `b = -ρ`, at most `max_iter` iterations, 0: `max(10⁷, 100ℓ)`) on the dense `Q`;
/// without one (no equality constraint) Clarabel's interior point. [`Error::TooLarge`] when `Q` (or
/// Clarabel's copy of it) does not fit in memory.
pub fn svm_step(
    k: &Array2<f64>,
    y: &[f64],
    upper: &[f64],
    fit_intercept: bool,
    start: Option<&[f64]>,
    max_iter: usize,
) -> Result<(Vec<f64>, f64, bool)> {
    if !fit_intercept {
        return conic::kernel_svm_dual(k, y, upper, false);
    }
    // Examples of zero weight have α_i = 0: SMO sees only the others.
    let keep: Vec<usize> = (0..y.len()).filter(|&i| upper[i] > 0.0).collect();
    let m = keep.len();
    crate::memory::reserve("the SVM step's matrix Q", crate::kernel::GRAM_REMEDY, &[m, m])?;
    let q = Array2::from_shape_fn((m, m), |(a, b)| y[keep[a]] * y[keep[b]] * k[[keep[a], keep[b]]]);
    let q = DenseQ::new(q.into_raw_vec_and_offset().0, m);
    let pick = |v: &[f64]| keep.iter().map(|&i| v[i]).collect::<Vec<f64>>();
    let start = start.map(pick);
    let settings = SmoSettings { tol: SMO_TOL, max_iter, ..SmoSettings::default() };
    let sol = smo::solve(&q, &vec![-1.0; m], &pick(y), &pick(upper), start.as_deref(), &settings)?;
    let mut alpha = vec![0.0; y.len()];
    keep.iter().zip(&sol.alpha).for_each(|(&i, &a)| alpha[i] = a);
    Ok((alpha, -sol.rho, sol.converged))
}

/// The dual optimality violation of `α` (LIBSVM's `max_{I_up} -y_i G_i - min_{I_low} -y_i G_i` with an
/// intercept, the largest projected gradient entry without), `G = Qα - 1`, `f = K(α∘y)`.
fn kkt_violation(f: &[f64], y: &[f64], alpha: &[f64], upper: &[f64], fit_intercept: bool) -> f64 {
    let eps = |u: f64| 1e-7 * u.max(1e-12);
    let (mut up, mut low) = (f64::NEG_INFINITY, f64::INFINITY);
    let mut projected = 0.0f64;
    for i in 0..y.len() {
        let g = y[i] * f[i] - 1.0;
        let (at_low, at_high) = (alpha[i] <= eps(upper[i]), alpha[i] >= upper[i] - eps(upper[i]));
        let v = -y[i] * g;
        if (y[i] > 0.0 && !at_high) || (y[i] < 0.0 && !at_low) {
            up = up.max(v);
        }
        if (y[i] < 0.0 && !at_high) || (y[i] > 0.0 && !at_low) {
            low = low.min(v);
        }
        let p = if at_low {
            g.min(0.0)
        } else if at_high {
            g.max(0.0)
        } else {
            g
        };
        projected = projected.max(p.abs());
    }
    if fit_intercept { (up - low).max(0.0) } else { projected }
}

struct Svm {
    alpha: Vec<f64>,
    a: Vec<f64>,
    b: f64,
    value: f64,
    xi: Vec<f64>,
    solved: bool,
    violation: f64,
}

/// Bundles a problem's constant inputs.
struct Task<'a> {
    x: &'a Array2<f64>,
    y: &'a [f64],
    weights: Option<&'a [f64]>,
    delta: &'a [f64],
    params: &'a TsvcParams,
    upper: Vec<f64>,
}

impl Task<'_> {
    fn weight(&self, i: usize) -> f64 {
        self.weights.map_or(1.0, |c| c[i])
    }

    fn hinge(&self, i: usize, f: f64, b: f64) -> f64 {
        (1.0 - self.y[i] * (f + b)).max(0.0)
    }

    fn svm(&self, points: &Array2<f64>, start: Option<&[f64]>) -> Result<Svm> {
        let p = self.params;
        let k = p.kernel.gram(&Features::dense_view(points.view()))?;
        let (alpha, b, solved) = svm_step(&k, self.y, &self.upper, p.fit_intercept, start, p.svm_max_iter)?;
        let a: Vec<f64> = alpha.iter().zip(self.y).map(|(a, y)| a * y).collect();
        let f = k.dot(&ndarray::ArrayView1::from(&a[..])).to_vec();
        let reg = 0.5 * a.iter().zip(&f).map(|(a, f)| a * f).sum::<f64>();
        let xi: Vec<f64> = (0..a.len()).map(|i| self.hinge(i, f[i], b)).collect();
        let value = reg + p.c * xi.iter().enumerate().map(|(i, v)| self.weight(i) * v).sum::<f64>();
        let violation = kkt_violation(&f, self.y, &alpha, &self.upper, p.fit_intercept);
        Ok(Svm { alpha, a, b, value, xi, solved, violation })
    }

    /// Step 2: the Taylor perturbations, kept where the exact hinge does not increase.
    fn perturb(&self, points: &Array2<f64>, svm: &Svm) -> Result<Array2<f64>> {
        let (l, n) = self.x.dim();
        let rows: Vec<Vec<f64>> = (0..l)
            .into_par_iter()
            .map(|i| {
                let mut row = self.x.row(i).to_vec();
                if self.delta[i] == 0.0 {
                    return row;
                }
                let (mut v, mut g) = (vec![0.0; n], vec![0.0; n]);
                for j in 0..l {
                    if svm.a[j] != 0.0 {
                        let pj = points.row(j);
                        self.params.kernel.gradient_into(&row, pj.as_slice().expect("standard layout"), &mut g);
                        v.iter_mut().zip(&g).for_each(|(v, g)| *v += svm.a[j] * g);
                    }
                }
                let norm = norm2(&v);
                if norm > 0.0 {
                    let s = self.y[i] * self.delta[i] / norm;
                    row.iter_mut().zip(&v).for_each(|(r, v)| *r += s * v);
                }
                row
            })
            .collect();
        let candidates = Array2::from_shape_fn((l, n), |(i, j)| rows[i][j]);
        let fc = self
            .params
            .kernel
            .cross_gram(&Features::dense_view(candidates.view()), &Features::dense_view(points.view()))?;
        let fc = fc.dot(&ndarray::ArrayView1::from(&svm.a[..]));
        let mut next = points.clone();
        for i in 0..l {
            if self.hinge(i, fc[i], svm.b) <= svm.xi[i] {
                next.row_mut(i).assign(&candidates.row(i));
            }
        }
        Ok(next)
    }
}

/// Kernel TSVC on one binary problem (labels `y = ±1`, dense inputs `x`); [`Error::TooLarge`] when its
/// three `ℓ × ℓ` matrices (the Gram matrix, the SVM's `Q`, the perturbed points' kernel values) do not fit
/// in memory. From `params`: `c`, `kernel`, `fit_intercept`, `max_rounds`, `tol` and `svm_max_iter`.
pub fn fit_binary(
    x: &Array2<f64>,
    y: &[f64],
    weights: Option<&[f64]>,
    delta: &[f64],
    params: &TsvcParams,
) -> Result<KernelTsvc> {
    fit_binary_monitored(x, y, weights, delta, params, Monitor::default())
}

/// [`fit_binary`], reporting each round (the SVM objective and its relative decrease) to `monitor`.
pub(crate) fn fit_binary_monitored(
    x: &Array2<f64>,
    y: &[f64],
    weights: Option<&[f64]>,
    delta: &[f64],
    params: &TsvcParams,
    monitor: Monitor<'_>,
) -> Result<KernelTsvc> {
    let l = y.len();
    crate::memory::reserve("the kernel matrices of kernel TSVC", crate::kernel::GRAM_REMEDY, &[3, l, l])?;
    let upper = (0..l).map(|i| params.c * weights.map_or(1.0, |w| w[i])).collect();
    let task = Task { x, y, weights, delta, params, upper };
    let mut points = x.clone();
    let mut svm = task.svm(&points, None)?;
    if !svm.value.is_finite() {
        return Err(Error::Degenerate { what: "kernel SVM objective", detail: "not finite".into() });
    }
    let mut trace = vec![svm.value];
    let (mut rounds, mut settled) = (1, false);
    monitor.iteration(rounds, Quantity::RelativeDecrease, || (svm.value, f64::INFINITY));
    for _ in 0..params.max_rounds {
        if monitor.stopped() {
            break;
        }
        let next_points = task.perturb(&points, &svm)?;
        let next = task.svm(&next_points, Some(&svm.alpha))?;
        rounds += 1;
        if !(next.value < svm.value) {
            settled = true;
            break;
        }
        let decrease = svm.value - next.value;
        points = next_points;
        svm = next;
        trace.push(svm.value);
        monitor.iteration(rounds, Quantity::RelativeDecrease, || (svm.value, decrease / svm.value.abs()));
        if decrease <= params.tol * svm.value.abs() {
            settled = true;
            break;
        }
    }
    let report = FitReport {
        objective: svm.value,
        n_iter: rounds,
        termination: Termination::from_converged(settled && svm.solved),
        gradient_norm: svm.violation,
        initial_gradient_norm: None,
        sigma_floor: None,
        objective_trace: trace,
        duality_gap: None,
        rounds,
        norm_bound: None,
        fallback: None,
        routes: Vec::new(),
        degenerate: false,
    };
    Ok(KernelTsvc {
        points,
        coef: svm.a,
        intercept: svm.b,
        report: TsvcReport { report, dual_objective: None, duality_gap: None, lower_bound: None },
    })
}

/// Binary or one-vs-rest kernel TSVC; the model's support vectors are the shifted points of every output
/// (output `o`'s coefficients sit on its own block of `l` points).
pub(crate) fn fit_one_vs_rest(
    params: &TsvcParams,
    data: &Dataset,
    delta: &[f64],
    monitor: Monitor<'_>,
) -> Result<TsvcFit> {
    let x = data.features.to_dense();
    let (l, n) = x.dim();
    let classes = data.classes();
    let k = ovr::positives(&classes).len();
    let s = ovr::one_vs_rest(classes, k * l, false, monitor, |o, positive, monitor| {
        let y = ovr::signs(data.labels.iter(), positive);
        let fit = fit_binary_monitored(&x, &y, data.weights.as_deref(), delta, params, monitor)?;
        let mut coef = vec![0.0; k * l];
        coef[o * l..(o + 1) * l].copy_from_slice(&fit.coef);
        Ok(ovr::Binary { coef, intercept: fit.intercept, report: (fit.report, fit.points) })
    })?;
    let mut points = Array2::zeros((k * l, n));
    let mut reports = Vec::with_capacity(k);
    for (o, (report, p)) in s.reports.into_iter().enumerate() {
        points.slice_mut(ndarray::s![o * l..(o + 1) * l, ..]).assign(&p);
        reports.push(report);
    }
    let model = KernelModel::from_training(params.kernel, s.classes, &Features::dense(points), s.coef, s.intercept);
    Ok(TsvcFit { model: Model::Kernel(model), reports })
}
