//! RSVM-RHHQ (Xu, Cao, Hu & Principe, "Robust support vector machines based on the rescaled hinge loss
//! function", Pattern Recognition 63, 2017): the robust SVM baseline of paper 004 Table 1.
//!
//! The rescaled hinge loss of a margin `z = y f(x)` is, with the hinge `h(z) = max(0, 1 − z)`, `η > 0` and
//! `β = 1/(1 − e^{−η})`,
//!
//! ```text
//! ℓ_η(z) = g(h(z)),   g(h) = β [1 − exp(−η h)]        (bounded by β; equal to the hinge at h = 0 and h = 1)
//! J(f) = ½‖w‖² + Σ C_i ℓ_η(y_i f(x_i)),                f(x) = ⟨w, φ(x)⟩ + b,  C_i = C c_i.
//! ```
//!
//! **Half-quadratic rounds.** `g` is concave and increasing, so `g(h) ≤ g(h⁰) + g'(h⁰)(h − h⁰)` with
//! `g'(h) = βη e^{−ηh}`, an equality at `h = h⁰`. Round `r` minimises this bound at the current margins,
//! i.e. solves the weighted C-SVM
//!
//! ```text
//! min ½‖w‖² + Σ C_i u_i h(y_i f(x_i)),   u_i = g'(h_i⁰) = βη exp(−η h_i⁰)
//! ```
//!
//! by the SMO solver (`solver::smo`); then `J(f¹) ≤ bound(f¹) ≤ bound(f⁰) = J(f⁰)`: the objective never increases
//! (Xu et al.'s half-quadratic optimisation; examples far on the wrong side get weights `≈ 0`).
//!
//! **Start.** The rounds start from the C-SVM with costs `C_i` ([`HqStart::Svm`], the default, the `η → 0`
//! limit; the half-quadratic literature starts from it). The start `f⁰ = 0` ([`HqStart::Zero`]: `h = 1`,
//! `J = Σ C_i`) gives every first weight `u_i = η/(e^η − 1)` — 4.5e-4 at `η = 10` — so the first SVM is
//! almost pure regularisation, predicts one class, and the rounds never leave it: on half of paper 004's `η`
//! grid the fit was the constant classifier. [`HqStart::Best`] runs both and keeps the lower objective.
//! The rounds stop when one lowers `J` by at most `tol·J` (`Converged`) or after `max_rounds` SVMs (the
//! start's included); a round whose approximate (SMO tolerance) solution
//! would raise `J` is rejected and ends the rounds — `Converged` when the rise is at most `tol·J` or
//! `svm_tol·Σ C_i u_i` (the rounds' fixed point, to the SVMs' accuracy), else, after re-solving that SVM
//! with a 100× and a 10⁴× tighter KKT tolerance, `Stalled` — so the reported trace is monotone. Costs
//! `C_i u_i` that underflow (and zero costs `C_i` of the start) are floored at the smallest normal number
//! (the example then barely counts).
//! A fit whose classifier predicts one class on every training example is reported `degenerate`.
//!
//! `J` after each SVM comes from the SMO gradient `G = Qα − 1`: `‖w‖² = Σ α_i (G_i + 1)` and
//! `y_i f(x_i) = G_i + 1 + y_i b`.
//!
//! **Limit** `η → 0`: `β ≈ 1/η`, `ℓ_η → hinge` and `u_i → 1`, so RSVM-RHHQ becomes the C-SVM with costs
//! `C c_i` (checked by the tests). More than two classes: one-vs-rest.
//!
//! ```
//! use ndarray::array;
//! use usvm::{Dataset, Kernel, svm::RescaledHingeParams};
//! let x = array![[0.0, 0.0], [0.2, 0.1], [2.0, 2.0], [2.1, 1.8], [0.1, 0.2]];
//! let data = Dataset::dense(x.clone(), vec![0, 0, 1, 1, 1]); // the last label is an outlier
//! let fit = RescaledHingeParams { kernel: Kernel::Rbf { gamma: 0.5 }, c: 10.0, eta: 2.0, ..Default::default() }
//!     .fit(&data)
//!     .unwrap();
//! let trace = &fit.reports[0].objective_trace;
//! assert!(trace.windows(2).all(|w| w[1] <= w[0]));
//! ```

use ndarray::Array2;
use serde::{Deserialize, Serialize};

use super::kernel_svm::{Gram, SignedGram};
use crate::data::Dataset;
use crate::error::{Error, Result, invalid};
use crate::kernel::Kernel;
use crate::model::KernelModel;
use crate::ovr;
use crate::progress::{Monitor, Quantity};
use crate::report::{FitReport, Termination};
use crate::solver::smo::{self, SmoSettings};

/// RSVM-RHHQ settings (plain data, validated in [`RescaledHingeParams::fit`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RescaledHingeParams {
    /// The kernel.
    pub kernel: Kernel,
    /// `C > 0`; example `i` gets `C·c_i`.
    pub c: f64,
    /// `η > 0`, the scale of the rescaled hinge (`η → 0`: the hinge).
    pub eta: f64,
    /// Maximum half-quadratic rounds (weighted SVMs), at least 1.
    pub max_rounds: usize,
    /// Stop when a round lowers the objective by at most `tol·J`.
    pub tol: f64,
    /// The SMO settings of each weighted SVM.
    pub smo: SmoSettings,
    /// Where the rounds start.
    pub start: HqStart,
}

/// The start of the half-quadratic rounds (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HqStart {
    /// The C-SVM with costs `C_i` (the hinge, `η → 0`), as the half-quadratic literature starts.
    #[default]
    Svm,
    /// `f = 0`: every hinge is 1 and every first weight `C_i·η/(e^η − 1)`, nearly nothing for a large `η`
    /// (the rounds then stay at the constant classifier).
    Zero,
    /// Both starts; the lower objective is kept.
    Best,
}

impl Default for RescaledHingeParams {
    fn default() -> Self {
        RescaledHingeParams {
            kernel: Kernel::Rbf { gamma: 1.0 },
            c: 1.0,
            eta: 1.0,
            max_rounds: 50,
            tol: 1e-6,
            smo: SmoSettings { tol: 1e-6, cache_mb: 200.0, ..SmoSettings::default() },
            start: HqStart::Svm,
        }
    }
}

/// A fitted RSVM-RHHQ model with one report per binary problem (`objective_trace`: `J` at the start
/// and after each accepted round; `rounds`: the SVMs solved; `gradient_norm`: the last relative decrease).
#[derive(Debug, Clone)]
pub struct RescaledHingeFit {
    /// The fitted model.
    pub model: KernelModel,
    /// One report per binary problem.
    pub reports: Vec<FitReport>,
}

/// `ℓ_η` as a function of the hinge `h ≥ 0`: `g(h) = (1 − e^{−ηh})/(1 − e^{−η})` (by `expm1`).
pub fn rescaled_hinge(h: f64, eta: f64) -> f64 {
    (-h * eta).exp_m1() / (-eta).exp_m1()
}

/// `g'(h) = η e^{−ηh}/(1 − e^{−η})`, the half-quadratic weight.
pub fn rescaled_hinge_weight(h: f64, eta: f64) -> f64 {
    eta * (-eta * h).exp() / -(-eta).exp_m1()
}

impl RescaledHingeParams {
    fn validate(&self) -> Result<()> {
        for (name, v) in [("C", self.c), ("eta", self.eta), ("tol", self.tol)] {
            if !(v > 0.0 && v.is_finite()) {
                return Err(invalid(name, v, "must be positive and finite"));
            }
        }
        if self.max_rounds == 0 {
            return Err(invalid("max_rounds", 0, "must be at least 1"));
        }
        if self.kernel == Kernel::Precomputed {
            return Err(invalid("kernel", "precomputed", "is not supported by RSVM-RHHQ"));
        }
        self.kernel.validate()?;
        self.smo.validate()
    }

    /// Fits RSVM-RHHQ: binary for two classes (`classes[1]` positive), one-vs-rest otherwise.
    pub fn fit(&self, data: &Dataset) -> Result<RescaledHingeFit> {
        self.fit_monitored(data, Monitor::default())
    }

    /// [`Self::fit`], reporting each round's SMO and the rounds' objective to `monitor`.
    pub fn fit_monitored(&self, data: &Dataset, monitor: Monitor<'_>) -> Result<RescaledHingeFit> {
        self.validate()?;
        data.validate()?;
        let n = data.n_samples();
        let costs: Vec<f64> = (0..n).map(|i| self.c * data.weights.as_ref().map_or(1.0, |w| w[i])).collect();
        let gram = Gram::new(self.kernel, &data.features, self.smo.precision);
        let classes = data.classes();
        let s = ovr::one_vs_rest(classes.clone(), n, false, monitor, |_, positive, monitor| {
            let y = ovr::signs(data.labels.iter(), positive);
            if y.iter().all(|&v| v == y[0]) {
                return Err(Error::SingleClass { label: classes[0] });
            }
            self.rounds(&gram, &y, &costs, monitor)
        })?;
        let model = KernelModel::from_training(self.kernel, s.classes, &data.features, s.coef, s.intercept);
        Ok(RescaledHingeFit { model, reports: s.reports })
    }

    /// The half-quadratic rounds of one binary problem from the configured start ([`HqStart::Best`]: both
    /// starts, the lower objective kept, iterations and rounds summed).
    fn rounds(
        &self,
        gram: &Gram<'_>,
        y: &[f64],
        costs: &[f64],
        monitor: Monitor<'_>,
    ) -> Result<ovr::Binary<FitReport>> {
        let from = |start| self.rounds_from(start, gram, y, costs, monitor);
        Ok(match self.start {
            HqStart::Svm => from(HqStart::Svm)?,
            HqStart::Zero => from(HqStart::Zero)?,
            HqStart::Best => {
                let svm = from(HqStart::Svm)?;
                let zero = from(HqStart::Zero)?;
                let (n_iter, rounds) = (svm.report.n_iter + zero.report.n_iter, svm.report.rounds + zero.report.rounds);
                let mut kept = if zero.report.objective < svm.report.objective { zero } else { svm };
                (kept.report.n_iter, kept.report.rounds) = (n_iter, rounds);
                kept
            }
        })
    }

    /// The half-quadratic rounds from `start` (`Svm` or `Zero`).
    fn rounds_from(
        &self,
        start: HqStart,
        gram: &Gram<'_>,
        y: &[f64],
        costs: &[f64],
        monitor: Monitor<'_>,
    ) -> Result<ovr::Binary<FitReport>> {
        let (n, eta) = (y.len(), self.eta);
        let q = SignedGram { gram, y, rows: None };
        let minus_one = vec![-1.0; n];
        // (SMO iterations, SVMs solved, whether every SVM converged).
        let mut done = (0, 0, true);
        // One weighted SVM: `(coef = α∘y, b, hinges h_i, decision values f(x_i), J)`; with
        // `G = Qα − 1`, `y_i f(x_i) = G_i + 1 + y_i b`.
        let svm = |weights: &[f64], tol: f64, done: &mut (usize, usize, bool)| -> Result<Iterate> {
            let settings = SmoSettings { tol, ..self.smo };
            let s = smo::solve_monitored(&q, &minus_one, y, weights, None, &settings, monitor.after(done.0))?;
            *done = (done.0 + s.n_iter, done.1 + 1, done.2 && s.converged);
            let b = -s.rho;
            let w2: f64 = s.alpha.iter().zip(&s.gradient).map(|(a, g)| a * (g + 1.0)).sum();
            let margin: Vec<f64> = (0..n).map(|i| s.gradient[i] + 1.0 + y[i] * b).collect();
            let hinge: Vec<f64> = margin.iter().map(|m| (1.0 - m).max(0.0)).collect();
            let j = 0.5 * w2 + (0..n).map(|i| costs[i] * rescaled_hinge(hinge[i], eta)).sum::<f64>();
            Ok(Iterate {
                coef: s.alpha.iter().zip(y).map(|(a, yi)| a * yi).collect(),
                bias: b,
                decision: margin.iter().zip(y).map(|(m, yi)| m * yi).collect(),
                hinge,
                j,
            })
        };
        // `f = 0`: every hinge 1, `J = Σ C_i`; or the C-SVM with costs `C_i` (the `η → 0` limit).
        let mut at = match start {
            HqStart::Svm => {
                let floored: Vec<f64> = costs.iter().map(|c| c.max(f64::MIN_POSITIVE)).collect();
                svm(&floored, self.smo.tol, &mut done)?
            }
            _ => Iterate {
                coef: vec![0.0; n],
                bias: 0.0,
                decision: vec![0.0; n],
                hinge: vec![1.0; n],
                j: costs.iter().sum(),
            },
        };
        let mut trace = vec![at.j];
        let mut decrease = f64::INFINITY;
        let mut termination = Termination::MaxIterations;
        while done.1 < self.max_rounds && !monitor.stopped() {
            let weighted: Vec<f64> =
                (0..n).map(|i| (costs[i] * rescaled_hinge_weight(at.hinge[i], eta)).max(f64::MIN_POSITIVE)).collect();
            // A rise within `tol·J` or the SVM's own accuracy (its KKT violation times the sum of its box
            // bounds `Σ C_i u_i`, the order of its duality gap) is the rounds' fixed point; a larger rise
            // re-solves the same SVM 100× tighter, twice at most, before the round is rejected (`Stalled`).
            let mut svm_tol = self.smo.tol;
            let mut next = svm(&weighted, svm_tol, &mut done)?;
            let beyond = |next: &Iterate, svm_tol: f64| {
                next.j - at.j > (self.tol * at.j.abs()).max(svm_tol * weighted.iter().sum::<f64>())
            };
            for _ in 0..2 {
                if next.j <= at.j || !beyond(&next, svm_tol) {
                    break;
                }
                svm_tol *= 0.01;
                next = svm(&weighted, svm_tol, &mut done)?;
            }
            if !(next.j <= at.j) {
                termination = if beyond(&next, svm_tol) { Termination::Stalled } else { Termination::Converged };
                break;
            }
            decrease = (at.j - next.j) / at.j.abs().max(f64::MIN_POSITIVE);
            at = next;
            trace.push(at.j);
            monitor.iteration(done.0, Quantity::RelativeDecrease, || (at.j, decrease));
            if decrease <= self.tol {
                termination = Termination::Converged;
                break;
            }
        }
        let (n_iter, rounds, svms_converged) = done;
        if !svms_converged {
            termination = termination.and(Termination::MaxIterations);
        }
        // Both classes are present: one predicted class on every training example is a degenerate fit.
        let positive = at.decision.iter().filter(|&&f| f > 0.0).count();
        let report = FitReport {
            objective: at.j,
            n_iter,
            termination,
            gradient_norm: decrease,
            initial_gradient_norm: None,
            sigma_floor: None,
            objective_trace: trace,
            duality_gap: None,
            rounds,
            norm_bound: None,
            fallback: None,
            routes: Vec::new(),
            degenerate: positive == 0 || positive == n,
        };
        Ok(ovr::Binary { coef: at.coef, intercept: at.bias, report })
    }
}

/// A solution of the rounds: `f = Σ coef_i k(x_i, ·) + bias`.
struct Iterate {
    coef: Vec<f64>,
    bias: f64,
    /// `f(x_i)` on the training rows.
    decision: Vec<f64>,
    /// `h_i = max(0, 1 − y_i f(x_i))`.
    hinge: Vec<f64>,
    /// `J(f)`.
    j: f64,
}

/// The objective `J` of a binary model on `data` (labels `y = ±1`), evaluated from scratch: `½ (α∘y)ᵀK(α∘y)`
/// on the training rows plus the rescaled-hinge losses of the decision values (for checks).
pub fn rescaled_hinge_objective(
    kernel: Kernel,
    data: &Dataset,
    y: &[f64],
    coef: &[f64],
    intercept: f64,
    c: f64,
    eta: f64,
) -> Result<f64> {
    let k: Array2<f64> = kernel.gram(&data.features)?;
    let v = ndarray::ArrayView1::from(coef);
    let kv = k.dot(&v);
    let mut j = 0.5 * v.dot(&kv);
    for i in 0..y.len() {
        let ci = c * data.weights.as_ref().map_or(1.0, |w| w[i]);
        j += ci * rescaled_hinge((1.0 - y[i] * (kv[i] + intercept)).max(0.0), eta);
    }
    Ok(j)
}
