//! L2-SVM+ (Li, Dai, Tan, Xu & Van Gool, "Fast algorithms for linear and kernel SVM+", CVPR 2016): the
//! SVM+ baseline of paper 004 Table 1 whose dual is an SVM-type QP with one equality constraint.
//!
//! The bias is absorbed into the kernels (`k̄ = k + 1` on `x`, `k̄* = k* + 1` on `x*`), the margin `t` is a
//! variable (as in ν-SVM), and the correcting function `ξ_i = ⟨w*, ψ̄(x*_i)⟩` enters through a squared
//! (ℓ2) loss without the constraint `ξ_i ≥ 0`:
//!
//! ```text
//! min_{w, w*, t}  ½‖w‖² + ρ/2 ‖w*‖² + ½ Σ C_i ξ_i² − t     s.t.  y_i ⟨w, φ̄(x_i)⟩ ≥ t − ξ_i
//! ```
//!
//! (`C_i = C c_i` with the example weights `c_i`; Li et al.'s `γ` is our `ρ`). With multipliers `α ≥ 0`,
//! `∂/∂t` gives `1ᵀα = 1`, `∂/∂w` gives `w = Σ α_i y_i φ̄(x_i)` and `∂/∂w*` gives
//! `w* = (ρI + ΨᵀDΨ)⁻¹Ψᵀα` (`Ψ` the rows `ψ̄(x*_i)`, `D = diag(C_i)`), so the dual is
//!
//! ```text
//! min_α  ½ αᵀQα   s.t.  1ᵀα = 1,  α ≥ 0,     Q = K̄∘yyᵀ + H,   H = Ψ(ρI + ΨᵀDΨ)⁻¹Ψᵀ = K̄*(ρI + DK̄*)⁻¹
//! ```
//!
//! — no `yᵀα = 0` (the bias is in `k̄`) and no `β` (no `ξ ≥ 0`); for equal costs `C`,
//! `H = (1/C)[I − (I + (C/ρ)K̄*)⁻¹]`, the matrix of the authors' public code. It is solved by
//! the SMO solver (`solver::smo`) with all labels `+1` (LIBSVM's one-class form), from `α = 1/n`.
//!
//! **Margin, certificate, decision.** The slacks at `α` are `ξ = Hα`, so `(Qα)_i = y_i⟨w, φ̄(x_i)⟩ + ξ_i`
//! and `t = min_i (Qα)_i` makes `(w, w*, t)` feasible: the primal value is `½αᵀQα − min_i (Qα)_i` and the
//! duality gap `αᵀQα − min_i (Qα)_i ≥ 0` vanishes at the optimum, where `t = αᵀQα`. `t > 0`, since `Ψᵀα`
//! has the component `1ᵀα = 1` on the constant feature of `k̄*`. The decision function is
//! `f(x) = Σ α_i y_i (k(x_i, x) + 1) / t` — Li et al.'s, divided by `t` so that the margin is 1 as in the
//! other SVMs (same predictions). The report's `objective` is the dual value `−½αᵀQα` (maximised; the
//! primal optimum), `duality_gap` the gap relative to `½αᵀQα`.
//!
//! **`H` without cancellation**: `K̄* = U diag(μ) Uᵀ`, `Ψ = U diag(√μ)`, `H = Ψ M⁻¹ Ψᵀ` with
//! `M = ρI + ΨᵀDΨ ⪰ ρI` (one Cholesky factorisation). Kernels default as SVM+ (`γ = 1/D`,
//! [`super::svm_plus::default_gaussian`]). More than two classes: one-vs-rest sharing `K̄` and `H`.
//!
//! ```
//! use ndarray::array;
//! use usvm::{Dataset, Features, svm::L2SvmPlusParams};
//! let x = array![[0.0, 1.0], [0.5, 1.5], [1.0, -1.0], [1.5, -0.5]];
//! let x_star = array![[1.0], [2.0], [-1.0], [-2.0]];
//! let data = Dataset::dense(x.clone(), vec![1, 1, 0, 0]).with_privileged(Features::dense(x_star));
//! let fit = L2SvmPlusParams { c: 1.0, rho: 1.0, ..Default::default() }.fit(&data).unwrap();
//! assert!(fit.reports[0].converged() && fit.reports[0].duality_gap.unwrap() < 1e-5);
//! assert_eq!(fit.model.predict(&Features::dense(x)).unwrap(), vec![1, 1, 0, 0]);
//! ```

use ndarray::{Array2, ArrayView2};
use serde::{Deserialize, Serialize};

use super::svm_plus::default_gaussian;
use crate::data::Dataset;
use crate::error::{Error, Result, invalid};
use crate::kernel::Kernel;
use crate::model::KernelModel;
use crate::ovr;
use crate::progress::Monitor;
use crate::report::{FitReport, Termination};
use crate::solver::smo::{self, DenseQ, SmoSettings};

/// L2-SVM+ settings (plain data, validated in [`L2SvmPlusParams::fit`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct L2SvmPlusParams {
    /// `C > 0`, the weight of the squared correcting function `½ Σ C_i ξ_i²`.
    pub c: f64,
    /// `ρ > 0`, the weight of `‖w*‖²`.
    pub rho: f64,
    /// `k` on `x` (`None`: Gaussian with `γ = 1/D`).
    pub kernel: Option<Kernel>,
    /// `k*` on `x*` (`None`: Gaussian with `γ* = 1/D*`).
    pub kernel_star: Option<Kernel>,
    /// Stop when the SMO's maximal KKT violation is at most this.
    pub tol: f64,
    /// Maximum SMO iterations per binary problem; 0: `max(10⁷, 100ℓ)`.
    pub max_iter: usize,
}

impl Default for L2SvmPlusParams {
    fn default() -> Self {
        L2SvmPlusParams { c: 1.0, rho: 1.0, kernel: None, kernel_star: None, tol: 1e-6, max_iter: 0 }
    }
}

/// A fitted L2-SVM+ model (over `x` only) with one report, `α` and margin `t` per binary problem.
#[derive(Debug, Clone)]
pub struct L2SvmPlusFit {
    /// The fitted model.
    pub model: KernelModel,
    /// `objective` is the dual value `−½αᵀQα`, `gradient_norm` the final KKT violation.
    pub reports: Vec<FitReport>,
    /// `α` of each binary problem (`Σ α_i = 1`).
    pub alpha: Vec<Vec<f64>>,
    /// The margin `t = αᵀQα` of each binary problem.
    pub margin: Vec<f64>,
    /// The kernel on `x*` actually used.
    pub kernel_star: Kernel,
}

impl L2SvmPlusParams {
    fn validate(&self) -> Result<()> {
        for (name, v) in [("C", self.c), ("rho", self.rho), ("tol", self.tol)] {
            if !(v > 0.0 && v.is_finite()) {
                return Err(invalid(name, v, "must be positive and finite"));
            }
        }
        for k in self.kernel.iter().chain(&self.kernel_star) {
            if *k == Kernel::Precomputed {
                return Err(invalid("kernel", "precomputed", "is not supported by L2-SVM+ (it needs x and x*)"));
            }
            k.validate()?;
        }
        Ok(())
    }

    /// Fits L2-SVM+ on `data` (with `data.privileged`); one-vs-rest for more than two classes.
    pub fn fit(&self, data: &Dataset) -> Result<L2SvmPlusFit> {
        self.fit_monitored(data, Monitor::default())
    }

    /// [`Self::fit`], reporting the SMO's progress to `monitor`.
    pub fn fit_monitored(&self, data: &Dataset, monitor: Monitor<'_>) -> Result<L2SvmPlusFit> {
        self.validate()?;
        data.validate()?;
        let x_star =
            data.privileged.as_ref().ok_or(Error::Empty("privileged features (L2-SVM+ needs x* for every example)"))?;
        let n = data.n_samples();
        // K̄, K̄*, the eigenvectors and their copies, M, M⁻¹Ψᵀ, H, Q: at most 6 n × n at once.
        crate::memory::reserve("the kernel matrices of L2-SVM+", crate::kernel::GRAM_REMEDY, &[6, n, n])?;
        let kernel = self.kernel.unwrap_or_else(|| default_gaussian(&data.features));
        let kernel_star = self.kernel_star.unwrap_or_else(|| default_gaussian(x_star));
        let (k, k_star) = rayon::join(|| kernel.gram(&data.features), || kernel_star.gram(x_star));
        let (mut k, mut k_star) = (k?, k_star?);
        k.mapv_inplace(|v| v + 1.0);
        k_star.mapv_inplace(|v| v + 1.0);
        let costs: Vec<f64> = (0..n).map(|i| self.c * data.weights.as_ref().map_or(1.0, |w| w[i])).collect();
        let h = correcting_matrix(k_star.view(), &costs, self.rho)?;
        drop(k_star);
        let settings = SmoSettings { tol: self.tol, max_iter: self.max_iter, ..SmoSettings::default() };
        let classes = data.classes();
        let s = ovr::one_vs_rest(classes.clone(), n, false, monitor, |_, positive, monitor| {
            let y = ovr::signs(data.labels.iter(), positive);
            if y.iter().all(|&v| v == y[0]) {
                return Err(Error::SingleClass { label: classes[0] });
            }
            let q: Vec<f64> = (0..n * n).map(|e| y[e / n] * y[e % n] * k[[e / n, e % n]] + h[[e / n, e % n]]).collect();
            let (ones, start) = (vec![1.0; n], vec![1.0 / n as f64; n]);
            let sol = smo::solve_monitored(
                &DenseQ::new(q, n),
                &vec![0.0; n],
                &ones,
                &ones,
                Some(&start),
                &settings,
                monitor,
            )?;
            // p = 0: the gradient is Qα.
            let t: f64 = sol.alpha.iter().zip(&sol.gradient).map(|(a, g)| a * g).sum();
            if !(t > 0.0 && t.is_finite()) {
                return Err(Error::Degenerate { what: "L2-SVM+ margin", detail: format!("t = αᵀQα = {t}") });
            }
            let gap = t - sol.gradient.iter().copied().fold(f64::INFINITY, f64::min);
            let coef: Vec<f64> = sol.alpha.iter().zip(&y).map(|(a, yi)| a * yi / t).collect();
            let intercept = coef.iter().sum();
            let report = FitReport {
                objective: -0.5 * t,
                n_iter: sol.n_iter,
                termination: Termination::from_converged(sol.converged),
                gradient_norm: sol.max_violation,
                initial_gradient_norm: None,
                sigma_floor: None,
                objective_trace: Vec::new(),
                duality_gap: Some(gap / (0.5 * t)),
                rounds: 0,
                norm_bound: None,
                fallback: None,
                routes: Vec::new(),
                degenerate: false,
            };
            Ok(ovr::Binary { coef, intercept, report: (report, sol.alpha, t) })
        })?;
        let mut reports = Vec::new();
        let (mut alpha, mut margin) = (Vec::new(), Vec::new());
        for (r, a, t) in s.reports {
            reports.push(r);
            alpha.push(a);
            margin.push(t);
        }
        let model = KernelModel::from_training(kernel, s.classes, &data.features, s.coef, s.intercept);
        Ok(L2SvmPlusFit { model, reports, alpha, margin, kernel_star })
    }
}

/// `H = K̄*(ρI + DK̄*)⁻¹` (`D = diag(costs)`) for the PSD `k_star` (`K̄*`), as `Ψ M⁻¹ Ψᵀ` with
/// `Ψ = U diag(√μ⁺)` from `K̄* = U diag(μ) Uᵀ` and `M = ρI + ΨᵀDΨ`; symmetric.
pub fn correcting_matrix(k_star: ArrayView2<'_, f64>, costs: &[f64], rho: f64) -> Result<Array2<f64>> {
    let n = k_star.nrows();
    let (mu, u) = crate::linalg::symmetric_eigen(k_star)?;
    let psi = Array2::from_shape_fn((n, n), |(i, c)| u[[i, c]] * mu[c].max(0.0).sqrt());
    drop(u);
    let psi_t = psi.t().as_standard_layout().into_owned();
    let d_psi_t = Array2::from_shape_fn((n, n), |(c, i)| psi_t[[c, i]] * costs[i]);
    // ΨᵀDΨ = Ψᵀ (DΨ) = psi_t · d_psi_tᵀ.
    let mut m = crate::linalg::mul_transposed(psi_t.view(), d_psi_t.view());
    drop(d_psi_t);
    m.diag_mut().mapv_inplace(|v| v + rho);
    let x = crate::linalg::cholesky_solve_columns(m.view(), psi_t.view()).ok_or_else(|| Error::SolverFailure {
        solver: "L2-SVM+",
        detail: "the Cholesky factorisation of ρI + ΨᵀDΨ failed".into(),
    })?;
    drop((m, psi_t));
    let mut h = Array2::zeros((n, n));
    crate::linalg::mul_into(psi.view(), x.view(), &mut h.view_mut());
    let sym = Array2::from_shape_fn((n, n), |(i, j)| 0.5 * (h[[i, j]] + h[[j, i]]));
    Ok(sym)
}
