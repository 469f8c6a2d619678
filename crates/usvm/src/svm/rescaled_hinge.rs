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
//! (Xu et al.'s half-quadratic optimisation; examples far on the wrong side get weights `≈ 0`). The rounds
//! start from `f⁰ = 0` (`h = 1`, `J = Σ C_i`, `u_i = η/(e^η − 1)`), stop when a round lowers `J` by at most
//! `tol·J` (`Converged`) or after `max_rounds` SVMs; a round whose approximate (SMO tolerance) solution
//! would raise `J` is rejected and ends the rounds — `Converged` when the rise is at most `tol·J` (the
//! rounds' fixed point, to the SVMs' accuracy), else `Stalled` — so the reported trace is monotone. Costs
//! `C_i u_i` that underflow are floored at the smallest normal number (the example then barely counts).
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
}

impl Default for RescaledHingeParams {
    fn default() -> Self {
        RescaledHingeParams {
            kernel: Kernel::Rbf { gamma: 1.0 },
            c: 1.0,
            eta: 1.0,
            max_rounds: 50,
            tol: 1e-6,
            smo: SmoSettings { tol: 1e-6, cache_mb: 200.0, shrinking: true, max_iter: 0 },
        }
    }
}

/// A fitted RSVM-RHHQ model with one report per binary problem (`objective_trace`: `J` from `f = 0`
/// after each accepted round; `rounds`: the SVMs solved; `gradient_norm`: the last relative decrease).
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
        let gram = Gram::new(self.kernel, &data.features);
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

    /// The half-quadratic rounds of one binary problem.
    fn rounds(
        &self,
        gram: &Gram<'_>,
        y: &[f64],
        costs: &[f64],
        monitor: Monitor<'_>,
    ) -> Result<ovr::Binary<FitReport>> {
        let (n, eta) = (y.len(), self.eta);
        let q = SignedGram { gram, y };
        let minus_one = vec![-1.0; n];
        let mut hinge = vec![1.0; n];
        let mut j: f64 = costs.iter().sum();
        let mut trace = vec![j];
        let (mut coef, mut bias) = (vec![0.0; n], 0.0);
        let (mut n_iter, mut rounds, mut decrease) = (0, 0, f64::INFINITY);
        let mut termination = Termination::MaxIterations;
        while rounds < self.max_rounds && !monitor.stopped() {
            let weighted: Vec<f64> =
                (0..n).map(|i| (costs[i] * rescaled_hinge_weight(hinge[i], eta)).max(f64::MIN_POSITIVE)).collect();
            let s = smo::solve_monitored(&q, &minus_one, y, &weighted, None, &self.smo, monitor.after(n_iter))?;
            rounds += 1;
            n_iter += s.n_iter;
            let b = -s.rho;
            let w2: f64 = s.alpha.iter().zip(&s.gradient).map(|(a, g)| a * (g + 1.0)).sum();
            let h: Vec<f64> = (0..n).map(|i| (-(s.gradient[i] + y[i] * b)).max(0.0)).collect();
            let j_new = 0.5 * w2 + (0..n).map(|i| costs[i] * rescaled_hinge(h[i], eta)).sum::<f64>();
            if !(j_new <= j) {
                // Rejected. A rise of at most `tol·J` is the SVMs' own accuracy: the rounds are at their
                // fixed point (`Converged`); a larger one is `Stalled`.
                let within = j_new - j <= self.tol * j.abs();
                termination = if within { Termination::Converged } else { Termination::Stalled };
                break;
            }
            decrease = (j - j_new) / j.abs().max(f64::MIN_POSITIVE);
            (j, hinge, bias) = (j_new, h, b);
            coef = s.alpha.iter().zip(y).map(|(a, yi)| a * yi).collect();
            trace.push(j);
            monitor.iteration(n_iter, Quantity::RelativeDecrease, || (j, decrease));
            if decrease <= self.tol {
                termination = Termination::Converged;
                break;
            }
        }
        let report = FitReport {
            objective: j,
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
        };
        Ok(ovr::Binary { coef, intercept: bias, report })
    }
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
