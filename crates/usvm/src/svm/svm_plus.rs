//! SVM+ and Robust SVM+ (R-SVM+): learning using privileged information (DESIGN 2.6, paper 004).
//!
//! Training examples `(x_i, x*_i, y_i)` carry privileged features `x*_i` ([`Dataset::privileged`]) that
//! are not available at prediction time. SVM+ (Vapnik & Vashist) models the slack of example `i` by a
//! correcting function `ξ_i = ⟨w*, ψ(x*_i)⟩ + b*` learned in the privileged space:
//!
//! ```text
//! min ½‖w‖² + ρ/2 ‖w*‖² + Σ C_i ξ_i   s.t.  y_i f(x_i) ≥ 1 − ξ_i,  ξ_i ≥ 0,     f(x) = ⟨w, φ(x)⟩ + b
//! ```
//!
//! (`C_i = C c_i` with the example weights `c_i`), whose dual is
//!
//! ```text
//! max 1ᵀα − ½(α∘y)ᵀK(α∘y) − 1/(2ρ) (α+β−C)ᵀK*(α+β−C)   s.t.  1ᵀ(α+β−C) = 0,  yᵀα = 0,  α, β ≥ 0.
//! ```
//!
//! R-SVM+ adds slack `ε_i` with cost `σ'C_i` to the constraint (paper eq. 8), which bounds `α ≤ σ'C`,
//! and the robust regulariser `λΘ` (the mean squared gradient norm of the decision and correcting
//! functions over the training set, paper eq. 12), which replaces `K` by `A = K + (2λ/n) Σ_s H_s` and `K*`
//! by `B = K* + (2λ/(nρ)) Σ_s H*_s` (paper eq. 15; `Σ_s H_s` by [`crate::kernel::gradient`]). With
//! `λ = 0` R-SVM+ is the slack variant of SVM+ (eq. 8/9).
//!
//! Both duals are solved by the SMO solver of `solver::svmplus_qp`, which also recovers `b`
//! (and `b*`) from the KKT conditions. Prediction needs only `x`: `f(x) = Σ α_i y_i k(x_i, x) + b`.
//!
//! Limits: as `ρ → 0` (and `K*` positive definite) the correction term forces `β = C − α`, and SVM+
//! becomes the C-SVM (`0 ≤ α ≤ C`); as `ρ → ∞` the correcting function is the constant `b*`, one slack
//! shared by all examples (the dual keeps only `Σ α_i ≤ Σ C_i`). Issue #7 says the plain SVM is the
//! `ρ → ∞` limit; with `ρ` weighting `‖w*‖²` as here (the `1/(2ρ)` on the `K*` term of the dual, paper 004
//! eq. 2's form) it is the `ρ → 0` limit, and the tests check that.
//!
//! Kernels default to the Gaussian `exp(−γ‖·‖²)` with `γ = 1/D`, `D` the mean squared distance between
//! distinct training rows (of `x` for `k`, of `x*` for `k*`; `γ = 1` if all rows coincide). More than
//! two classes: one-vs-rest sharing the Gram matrices.
//!
//! ```
//! use ndarray::array;
//! use usvm::{Dataset, Features, svm::{SvmPlusParams, LupiMethod}};
//! let x = array![[0.0, 1.0], [0.5, 1.5], [1.0, -1.0], [1.5, -0.5]];
//! let x_star = array![[1.0], [2.0], [-1.0], [-2.0]];
//! let data = Dataset::dense(x.clone(), vec![1, 1, 0, 0]).with_privileged(Features::dense(x_star));
//! let fit = SvmPlusParams { c: 1.0, rho: 1.0, ..Default::default() }.fit(&data).unwrap();
//! assert_eq!(fit.model.predict(&Features::dense(x)).unwrap(), vec![1, 1, 0, 0]);
//! let robust = SvmPlusParams { method: LupiMethod::Robust { lambda: 0.1, sigma_prime: 5.0 }, ..Default::default() };
//! assert!(robust.fit(&data).unwrap().reports[0].converged());
//! ```

use ndarray::{Array1, Array2};
use serde::{Deserialize, Serialize};

use crate::data::{Dataset, Features};
use crate::error::{Error, Result, invalid};
use crate::kernel::{Kernel, gradient::gradient_gram_sum, squared_norms};
use crate::model::KernelModel;
use crate::ovr;
use crate::progress::Monitor;
use crate::report::FitReport;
use crate::report::Termination;
use crate::solver::svmplus_qp::{QpSettings, QpSolution, SvmPlusQp};

/// Which LUPI method.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum LupiMethod {
    /// SVM+ (paper 004 eq. 2).
    SvmPlus,
    /// R-SVM+ (paper 004 eq. 15): robust regulariser weight `λ ≥ 0`, box `α ≤ σ'C` (`σ' > 0`).
    Robust {
        /// `λ ≥ 0`, the weight of the robust regulariser.
        lambda: f64,
        /// `σ' > 0`, the box `α ≤ σ'C`.
        sigma_prime: f64,
    },
}

/// SVM+ / R-SVM+ settings (plain data, validated in [`SvmPlusParams::fit`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SvmPlusParams {
    /// SVM+ or R-SVM+.
    pub method: LupiMethod,
    /// `C > 0`.
    pub c: f64,
    /// `ρ > 0`, the weight of `‖w*‖²` (the capacity of the correcting space).
    pub rho: f64,
    /// `k` on `x` (`None`: Gaussian with `γ = 1/D`).
    pub kernel: Option<Kernel>,
    /// `k*` on `x*` (`None`: Gaussian with `γ* = 1/D*`).
    pub kernel_star: Option<Kernel>,
    /// The SMO stopping rule.
    pub qp: QpSettings,
}

impl Default for SvmPlusParams {
    fn default() -> Self {
        SvmPlusParams {
            method: LupiMethod::SvmPlus,
            c: 1.0,
            rho: 1.0,
            kernel: None,
            kernel_star: None,
            qp: QpSettings { tol: 1e-4, ..QpSettings::default() },
        }
    }
}

/// The QP matrices of one training set: `A`, `B` and the kernels actually used.
#[derive(Debug, Clone)]
pub struct LupiMatrices {
    /// `A` of the dual.
    pub a: Array2<f64>,
    /// `B` of the dual.
    pub b: Array2<f64>,
    /// The kernel on `x` used.
    pub kernel: Kernel,
    /// The kernel on `x*` used.
    pub kernel_star: Kernel,
}

/// A fitted SVM+ / R-SVM+ model (over `x` only) with one report and one dual solution per binary problem.
#[derive(Debug, Clone)]
pub struct SvmPlusFit {
    /// The fitted model.
    pub model: KernelModel,
    /// `objective` is the dual objective (maximised), `gradient_norm` the final KKT violation.
    pub reports: Vec<FitReport>,
    /// The dual solution of each binary problem.
    pub solutions: Vec<QpSolution>,
    /// The kernel on `x*` actually used.
    pub kernel_star: Kernel,
}

/// The mean of `‖x_i − x_j‖²` over pairs `i ≠ j`, in `O(n n_x)`:
/// `(2n Σ‖x_i‖² − 2‖Σ x_i‖²) / (n(n−1))`.
pub fn mean_squared_distance(x: &Features) -> f64 {
    let n = x.n_samples();
    if n < 2 {
        return 0.0;
    }
    let norms: f64 = squared_norms(x).iter().sum();
    let mut total = vec![0.0; x.n_features()];
    for i in 0..n {
        x.row_axpy(i, 1.0, &mut total);
    }
    let sum_sq: f64 = total.iter().map(|v| v * v).sum();
    ((2.0 * n as f64 * norms - 2.0 * sum_sq) / (n as f64 * (n as f64 - 1.0))).max(0.0)
}

/// The Gaussian kernel with `γ = 1/D` (`γ = 1` when all rows coincide).
pub fn default_gaussian(x: &Features) -> Kernel {
    let d = mean_squared_distance(x);
    Kernel::Rbf { gamma: if d > 0.0 && d.is_finite() { 1.0 / d } else { 1.0 } }
}

impl SvmPlusParams {
    fn validate(&self) -> Result<()> {
        let positive = |name: &'static str, v: f64| {
            if v > 0.0 && v.is_finite() { Ok(()) } else { Err(invalid(name, v, "must be positive and finite")) }
        };
        positive("C", self.c)?;
        positive("rho", self.rho)?;
        positive("tol", self.qp.tol)?;
        if self.qp.max_iter == 0 {
            return Err(invalid("max_iter", 0, "must be at least 1"));
        }
        if let LupiMethod::Robust { lambda, sigma_prime } = self.method {
            if !(lambda >= 0.0 && lambda.is_finite()) {
                return Err(invalid("lambda", lambda, "must be non-negative and finite"));
            }
            positive("sigma_prime", sigma_prime)?;
        }
        for k in self.kernel.iter().chain(&self.kernel_star) {
            if *k == Kernel::Precomputed {
                return Err(invalid("kernel", "precomputed", "is not supported by SVM+ (it needs x and x*)"));
            }
            k.validate()?;
        }
        Ok(())
    }

    /// Validates the settings and the data (which must carry privileged features).
    fn check<'d, 'x>(&self, data: &'d Dataset<'x>) -> Result<&'d Features<'x>> {
        self.validate()?;
        data.validate()?;
        data.privileged.as_ref().ok_or(Error::Empty("privileged features (SVM+ needs x* for every example)"))
    }

    /// The kernels and `A`, `B` (`K`, `K*` for SVM+; the robust matrices for R-SVM+) of `x`, `x*`;
    /// [`crate::Error::TooLarge`] when the `n × n` matrices held at once (2, or 12 for R-SVM+: `A`, `B` and
    /// the two gradient Gram sums computed in parallel) do not fit in memory.
    pub fn matrices(&self, x: &Features, x_star: &Features) -> Result<LupiMatrices> {
        let n = x.n_samples();
        let robust = matches!(self.method, LupiMethod::Robust { lambda, .. } if lambda > 0.0);
        let count = if robust { 12 } else { 2 };
        crate::memory::reserve("the kernel matrices of SVM+", crate::kernel::GRAM_REMEDY, &[count, n, n])?;
        let kernel = self.kernel.unwrap_or_else(|| default_gaussian(x));
        let kernel_star = self.kernel_star.unwrap_or_else(|| default_gaussian(x_star));
        let (a, b) = rayon::join(|| kernel.gram(x), || kernel_star.gram(x_star));
        let (mut a, mut b) = (a?, b?);
        if let LupiMethod::Robust { lambda, .. } = self.method
            && lambda > 0.0
        {
            let n = n as f64;
            let (h, h_star) = rayon::join(|| gradient_gram_sum(&kernel, x), || gradient_gram_sum(&kernel_star, x_star));
            a.scaled_add(2.0 * lambda / n, &h?);
            b.scaled_add(2.0 * lambda / (n * self.rho), &h_star?);
        }
        Ok(LupiMatrices { a, b, kernel, kernel_star })
    }

    /// The costs `C_i = C c_i` and bounds (`σ'C_i` for R-SVM+) of `data`.
    pub fn costs(&self, data: &Dataset) -> (Vec<f64>, Option<Vec<f64>>) {
        let c: Vec<f64> = match &data.weights {
            Some(w) => w.iter().map(|w| self.c * w).collect(),
            None => vec![self.c; data.n_samples()],
        };
        let upper = match self.method {
            LupiMethod::SvmPlus => None,
            LupiMethod::Robust { sigma_prime, .. } => Some(c.iter().map(|c| sigma_prime * c).collect()),
        };
        (c, upper)
    }

    /// Fits SVM+ or R-SVM+ on `data` (with `data.privileged`); one-vs-rest for more than two classes.
    pub fn fit(&self, data: &Dataset) -> Result<SvmPlusFit> {
        self.fit_monitored(data, Monitor::default())
    }

    /// [`Self::fit`], reporting the QP solver's progress to `monitor`.
    pub fn fit_monitored(&self, data: &Dataset, monitor: Monitor<'_>) -> Result<SvmPlusFit> {
        let x_star = self.check(data)?;
        let m = self.matrices(&data.features, x_star)?;
        let (c, upper) = self.costs(data);
        solve_all(data, &m, &c, upper.as_deref(), self.rho, &self.qp, monitor)
    }

    /// The C-SVM baseline `max 1ᵀα − ½(α∘y)ᵀK(α∘y)`, `0 ≤ α ≤ C_i`, `yᵀα = 0` with the settings' `C`,
    /// `kernel` and stopping rule (method, `ρ` and `kernel_star` are ignored; `data.privileged` is not
    /// needed): the R-SVM+ dual with `B = 0` and `σ' = 1`, where `β` is a mere slack of
    /// `Σα_i ≤ Σ C_i`, solved by the same SMO.
    pub fn fit_svm(&self, data: &Dataset) -> Result<SvmPlusFit> {
        self.validate()?;
        data.validate()?;
        let kernel = self.kernel.unwrap_or_else(|| default_gaussian(&data.features));
        let n = data.n_samples();
        crate::memory::reserve("the kernel matrices of the SVM", crate::kernel::GRAM_REMEDY, &[2, n, n])?;
        let m = LupiMatrices { a: kernel.gram(&data.features)?, b: Array2::zeros((n, n)), kernel, kernel_star: kernel };
        let plain = SvmPlusParams { method: LupiMethod::Robust { lambda: 0.0, sigma_prime: 1.0 }, ..self.clone() };
        let (c, upper) = plain.costs(data);
        solve_all(data, &m, &c, upper.as_deref(), 1.0, &self.qp, Monitor::default())
    }
}

/// One QP per binary problem (one-vs-rest for more than two classes) on shared matrices.
fn solve_all(
    data: &Dataset,
    m: &LupiMatrices,
    c: &[f64],
    upper: Option<&[f64]>,
    rho: f64,
    settings: &QpSettings,
    monitor: Monitor<'_>,
) -> Result<SvmPlusFit> {
    let n = data.n_samples();
    let s = ovr::one_vs_rest(data.classes(), n, true, monitor, |_, positive, monitor| {
        let y = ovr::signs(data.labels.iter(), positive);
        let qp = SvmPlusQp { a: m.a.view(), b: m.b.view(), y: &y, c, upper, rho };
        let sol = qp.solve_monitored(settings, monitor)?;
        let coef = sol.alpha.iter().zip(&y).map(|(a, yi)| a * yi).collect();
        Ok(ovr::Binary { coef, intercept: sol.bias, report: sol })
    })?;
    let reports = s
        .reports
        .iter()
        .map(|s| FitReport {
            objective: s.dual_objective,
            n_iter: s.n_iter,
            termination: Termination::from_converged(s.converged),
            gradient_norm: s.violation,
            initial_gradient_norm: Some(s.initial_violation),
            sigma_floor: None,
            objective_trace: Vec::new(),
            duality_gap: None,
            rounds: 0,
            norm_bound: None,
            fallback: None,
            routes: Vec::new(),
            degenerate: false,
        })
        .collect();
    let model = KernelModel::from_training(m.kernel, s.classes, &data.features, s.coef, s.intercept);
    let solutions = s.reports;
    Ok(SvmPlusFit { model, reports, solutions, kernel_star: m.kernel_star })
}

/// The correcting function `ξ(x*) = (1/ρ) Σ_i (α_i + β_i − C_i) k*(x*_i, x*) + b*` of a binary SVM+
/// solution, at the rows of `at` (the slack SVM+ predicts for each example; for diagnostics).
pub fn correcting_function(
    kernel_star: &Kernel,
    x_star: &Features,
    solution: &QpSolution,
    costs: &[f64],
    rho: f64,
    at: &Features,
) -> Result<Array1<f64>> {
    let v: Array1<f64> = (0..costs.len()).map(|i| solution.alpha[i] + solution.beta[i] - costs[i]).collect();
    Ok(kernel_star.cross_gram(at, x_star)?.dot(&v) / rho + solution.bias_star)
}
