//! TSVC's settings and results (plain data), shared by the linear and the kernel solvers.

use serde::{Deserialize, Serialize};

use crate::kernel::Kernel;
use crate::model::Model;
use crate::report::FitReport;

/// The uncertainty bounds `δ_i`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Delta {
    /// One bound for every example (a hyper-parameter to tune).
    Uniform(f64),
    /// One bound per example, in example order.
    PerExample(Vec<f64>),
}

/// How to solve linear TSVC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TsvcForm {
    /// Algorithm 1: alternate a hinge SVM on the shifted points with Lemma 1 (linear or kernel).
    Alternating,
    /// The second-order cone programme (eq. 8), solved by Clarabel (linear kernel only); for `C`, when
    /// its relaxation does not certify, the better of its solution and the alternating rounds'.
    Socp,
}

/// Settings of TSVC: plain data, validated in [`TsvcParams::fit`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TsvcParams {
    /// `C > 0` in `½‖w‖² + C Σ c_i ξ_i`.
    pub c: f64,
    /// The bounds `δ_i`.
    pub delta: Delta,
    /// How to solve.
    pub form: TsvcForm,
    /// The kernel (the cone form needs the linear one).
    pub kernel: Kernel,
    /// Fit an intercept `b`.
    pub fit_intercept: bool,
    /// Alternating form: maximum rounds after the first SVM.
    pub max_rounds: usize,
    /// Alternating form: stop when a round lowers the objective by at most `tol·J`.
    pub tol: f64,
    /// Cone form: solve eq. 8 for this fixed norm bound `γ` instead of eq. 7 for `C`.
    pub norm_bound: Option<f64>,
    /// Alternating form with a kernel: each SVM step's SMO iteration limit; 0: `max(10⁷, 100ℓ)`.
    #[serde(default)]
    pub svm_max_iter: usize,
}

impl Default for TsvcParams {
    fn default() -> Self {
        TsvcParams {
            c: 1.0,
            delta: Delta::Uniform(0.0),
            form: TsvcForm::Alternating,
            kernel: Kernel::Linear,
            fit_intercept: true,
            max_rounds: 100,
            tol: 1e-6,
            norm_bound: None,
            svm_max_iter: 0,
        }
    }
}

/// What fitting one binary TSVC problem reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TsvcReport {
    /// `objective`: eq. 7 at the solution (eq. 8's `Σ c_i ξ_i` for a fixed `norm_bound`); `objective_trace`:
    /// eq. 7 after every alternating round (monotone); `n_iter`: SVM solver iterations in total (alternating)
    /// or interior-point iterations in total (cone); `gradient_norm`: the last SVM's optimality residual
    /// (alternating) or the duality gap (cone); `converged`: the stopping rule was met.
    /// `rounds`: SVM solves (alternating, the first one included) or cone programmes solved (cone);
    /// `norm_bound`: the cone form's `γ` of eq. 8 (the optimal one when solving for `C`); `fallback`: the
    /// cone form for `C` when its relaxation did not certify, which of its solution and the alternating
    /// rounds' was returned (the report is then the returned one's, with the cone form's termination).
    pub report: FitReport,
    /// Cone form: eq. 9's objective at the multipliers, and `Σ c_i ξ_i + eq. 9` (≈ 0 at the optimum).
    pub dual_objective: Option<f64>,
    /// Cone form: `Σ c_i ξ_i + eq. 9` (≈ 0 at the optimum).
    pub duality_gap: Option<f64>,
    /// Cone form for `C`: the convex relaxation's value, a lower bound on eq. 7 (equal to `objective` when
    /// the solution is certified globally optimal).
    pub lower_bound: Option<f64>,
}

/// A fitted TSVC model (linear, or kernel over the shifted points) and one report per binary problem.
#[derive(Debug, Clone, PartialEq)]
pub struct TsvcFit {
    /// The fitted model.
    pub model: Model,
    /// One report per binary problem.
    pub reports: Vec<TsvcReport>,
}
