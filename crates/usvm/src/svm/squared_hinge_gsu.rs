//! Uncertainty-aware squared-hinge classification layer (DESIGN 2.4, thesis chapter 5): `K` one-vs-rest
//! hyperplanes `(w_j, b_j)`, each minimising
//!
//! `J_j(w, b) = λ/2‖w‖² + (1/ℓ) Σ_i c_i L(μ_ij, σ_ij)`, `μ_ij = 1 - y_ij(wᵀx_i + b)`, `σ_ij² = wᵀΣ_i w`,
//!
//! with `y_ij = +1` for the examples of class `j` and `-1` otherwise (the thesis' total loss `Σ_j L_j`
//! separates over `j`, so the `K` problems are solved one by one). Two classes give one hyperplane
//! (the other is its negative). The loss is either
//!
//! - [`SquaredHingeGsuLoss::Thesis`]: `Φ(μ/σ) μ²` (eq. 5.11, [`ThesisSquaredHinge`]; non-convex), or
//! - [`SquaredHingeGsuLoss::Expected`]: the exact `E[max(0, D)²]` ([`ExpectedSquaredHinge`]; convex).
//!
//! Both are the plain squared hinge (LIBLINEAR's L2-loss SVM) where `Σ_i = 0`. The means `x_i` and
//! covariances `Σ_i` are typically the mean and variance pooled over a feature map; any
//! [`crate::Covariances`] form works. Solvers: L-BFGS (default; its objective trace is strictly
//! decreasing, which is the certificate one gets for the non-convex thesis loss), Newton (exact line
//! search, convex loss only) and mini-batch SGD with suffix averaging.
//!
//! ```
//! use ndarray::array;
//! use usvm::svm::{SquaredHingeGsuLoss, SquaredHingeGsuParams};
//! use usvm::{Covariances, Dataset};
//! let x = array![[1.0, 2.0], [2.0, 3.0], [-1.0, -1.5], [-2.0, -2.0], [0.0, 3.0], [0.5, 4.0]];
//! let var = array![[0.1, 0.1], [0.2, 0.1], [0.1, 0.3], [0.1, 0.1], [0.2, 0.2], [0.1, 0.1]];
//! let data = Dataset::dense(x, vec![0, 0, 1, 1, 2, 2]).with_covariances(Covariances::diagonal(var));
//! for loss in [SquaredHingeGsuLoss::Expected, SquaredHingeGsuLoss::Thesis] {
//!     let fit = SquaredHingeGsuParams { loss, lambda: 0.01, ..Default::default() }.fit(&data).unwrap();
//!     assert_eq!(fit.reports.len(), 3); // one-vs-rest
//!     assert!(fit.reports.iter().all(|r| r.objective_trace.windows(2).all(|w| w[1] < w[0])));
//! }
//! ```

use serde::{Deserialize, Serialize};

use super::LinearFit;
use crate::data::Dataset;
use crate::error::{Result, invalid};
use crate::loss::{ExpectedSquaredHinge, MarginLoss, ThesisSquaredHinge};
use crate::model::LinearModel;
use crate::objective::{Objective, Problem};
use crate::progress::Monitor;
use crate::report::FitReport;
use crate::solver::averaged_sgd;
use crate::solver::exact::{self, ExactSettings};
use crate::solver::lbfgs::{self, LbfgsSettings};
use crate::solver::pegasos::SgdSettings;

/// Which squared-hinge loss under the Gaussian.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SquaredHingeGsuLoss {
    /// `Φ(μ/σ) μ²`, thesis eq. (5.11): non-convex.
    Thesis,
    /// `E[max(0, D)²] = (μ² + σ²)Φ(μ/σ) + μσφ(μ/σ)`: convex.
    Expected,
}

/// Which solver.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "name")]
pub enum SquaredHingeGsuSolver {
    /// L-BFGS with a strong-Wolfe line search, from zero (`solver::lbfgs`).
    Lbfgs(LbfgsSettings),
    /// Newton-CG with an exact line search and a vanishing floor on `σ_i` (`solver::exact`);
    /// the expected loss only (the line search assumes convexity).
    Newton(ExactSettings),
    /// Mini-batch SGD (`solver::averaged_sgd`: Algorithm 1's step `1/(λ(t + t₀))` with an offset
    /// `t₀` bounding the first step, projection on the ball `√(2J(0)/λ)`, and suffix averaging).
    Sgd(SgdSettings),
}

/// Settings of the squared-hinge classification layer: plain data, validated in
/// [`SquaredHingeGsuParams::fit`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SquaredHingeGsuParams {
    /// The loss.
    pub loss: SquaredHingeGsuLoss,
    /// `λ > 0` in `λ/2‖w‖²` (`C = 1/(λℓ)`).
    pub lambda: f64,
    /// Fit an intercept `b`.
    pub fit_intercept: bool,
    /// The solver.
    pub solver: SquaredHingeGsuSolver,
}

impl Default for SquaredHingeGsuParams {
    fn default() -> Self {
        SquaredHingeGsuParams {
            loss: SquaredHingeGsuLoss::Expected,
            lambda: 1e-2,
            fit_intercept: true,
            solver: SquaredHingeGsuSolver::Lbfgs(LbfgsSettings::default()),
        }
    }
}

impl SquaredHingeGsuParams {
    fn validate(&self) -> Result<()> {
        if !(self.lambda > 0.0 && self.lambda.is_finite()) {
            return Err(invalid("lambda", self.lambda, "must be positive and finite"));
        }
        let tol = |tol: f64| {
            if tol > 0.0 && tol.is_finite() { Ok(()) } else { Err(invalid("tol", tol, "must be positive and finite")) }
        };
        match self.solver {
            SquaredHingeGsuSolver::Lbfgs(s) => {
                tol(s.tol)?;
                if s.memory == 0 {
                    return Err(invalid("memory", 0, "must be at least 1"));
                }
            }
            SquaredHingeGsuSolver::Newton(s) => {
                tol(s.tol)?;
                if !(s.sigma_floor >= 0.0 && s.sigma_floor.is_finite()) {
                    return Err(invalid("sigma_floor", s.sigma_floor, "must be finite and non-negative"));
                }
                if self.loss == SquaredHingeGsuLoss::Thesis {
                    return Err(invalid(
                        "solver",
                        "newton",
                        "the thesis loss is non-convex: use lbfgs or sgd (Newton's line search needs convexity)",
                    ));
                }
            }
            SquaredHingeGsuSolver::Sgd(s) => {
                if s.iterations == 0 {
                    return Err(invalid("iterations", 0, "must be at least 1"));
                }
                if s.batch == 0 {
                    return Err(invalid("batch", 0, "must be at least 1"));
                }
            }
        }
        Ok(())
    }

    /// Fits the layer: one hyperplane for two classes (`classes[1]` positive), one-vs-rest otherwise.
    pub fn fit(&self, data: &Dataset) -> Result<LinearFit> {
        self.fit_from(data, None)
    }

    /// [`Self::fit`] warm-started from a model of the same classes and features (e.g. the solution for a
    /// nearby λ on a regularisation path; a model that does not match is ignored): L-BFGS and Newton start
    /// from its hyperplanes, under the same stopping rule (relative to `‖∇J(0)‖`); SGD starts from zero,
    /// as Algorithm 1 does.
    pub fn fit_from(&self, data: &Dataset, start: Option<&LinearModel>) -> Result<LinearFit> {
        self.fit_monitored(data, start, Monitor::default())
    }

    /// [`Self::fit_from`], reporting the solver's iterations to `monitor`.
    pub fn fit_monitored(
        &self,
        data: &Dataset,
        start: Option<&LinearModel>,
        monitor: Monitor<'_>,
    ) -> Result<LinearFit> {
        self.validate()?;
        data.validate()?;
        let (model, reports) =
            LinearModel::one_vs_rest(data, self.fit_intercept, start, monitor, |y, theta0, monitor| {
                let problem = Problem {
                    features: &data.features,
                    y,
                    weights: data.weights.as_deref(),
                    covariances: data.covariances.as_dyn(),
                };
                Ok(match self.loss {
                    SquaredHingeGsuLoss::Thesis => self.solve(problem, ThesisSquaredHinge, theta0, monitor),
                    SquaredHingeGsuLoss::Expected => self.solve(problem, ExpectedSquaredHinge, theta0, monitor),
                })
            })?;
        Ok(LinearFit { model, reports })
    }

    /// The objective of one binary problem (labels `±1` in `problem.y`) for this loss, `λ` and intercept
    /// setting — what [`Self::fit`] minimises and reports.
    pub fn objective<'a, L: MarginLoss>(&self, problem: Problem<'a>, loss: L) -> Objective<'a, L> {
        Objective { fit_intercept: self.fit_intercept, ..Objective::new(problem, loss, self.lambda) }
    }

    fn solve<L: MarginLoss>(
        &self,
        problem: Problem<'_>,
        loss: L,
        start: Option<Vec<f64>>,
        monitor: Monitor<'_>,
    ) -> (Vec<f64>, FitReport) {
        let objective = self.objective(problem, loss);
        let x0 = start.unwrap_or_else(|| vec![0.0; objective.dim()]);
        match self.solver {
            SquaredHingeGsuSolver::Lbfgs(settings) => {
                let reference = exact::initial_gradient_norm(&objective);
                let preconditioner = preconditioner(&objective);
                let r = lbfgs::minimize_preconditioned(
                    |x, g| objective.value_grad(x, g).0,
                    x0,
                    &settings,
                    reference,
                    preconditioner.as_deref(),
                    monitor,
                );
                let report = FitReport {
                    objective: r.value,
                    n_iter: r.n_iter,
                    termination: r.termination,
                    gradient_norm: r.gradient_norm,
                    initial_gradient_norm: Some(reference),
                    sigma_floor: None,
                    objective_trace: r.trace,
                    duality_gap: None,
                    rounds: 0,
                    norm_bound: None,
                    fallback: None,
                    routes: Vec::new(),
                    degenerate: false,
                };
                (r.x, report)
            }
            SquaredHingeGsuSolver::Newton(settings) => exact::solve(&objective, x0, &settings, monitor),
            SquaredHingeGsuSolver::Sgd(settings) => {
                averaged_sgd::solve(&objective, &settings, LbfgsSettings::default().tol, monitor)
            }
        }
    }
}

/// Columns whose curvature estimates (below) span more than this ratio are preconditioned.
const SPREAD: f64 = 1e4;

/// L-BFGS's diagonal preconditioner, the inverse of the Hessian's diagonal were every example on its loss'
/// quadratic branch (`L ≈ μ²`, curvature 2 in `μ`): `λ + (2/ℓ) Σ c_i x_ij²` for `w_j`, `(2/ℓ) Σ c_i` for the
/// intercept. It makes the steps invariant to the scale of each column (raw, unscaled data), and is used only
/// where the estimates span more than [`SPREAD`]: on well-scaled columns the plain method (`γI`) follows the
/// same path whatever the floating-point order of the data (weights or repeated rows).
fn preconditioner<L: MarginLoss>(objective: &Objective<'_, L>) -> Option<Vec<f64>> {
    let p = &objective.problem;
    let scale = 2.0 / p.n_samples() as f64;
    let mut diagonal: Vec<f64> =
        p.features.weighted_column_squares(|i| p.weight(i)).iter().map(|s| objective.lambda + scale * s).collect();
    if objective.fit_intercept {
        let curvature = scale * (0..p.n_samples()).map(|i| p.weight(i)).sum::<f64>();
        diagonal.push(if curvature > 0.0 { curvature } else { 1.0 });
    }
    let (low, high) = diagonal.iter().fold((f64::INFINITY, 0.0_f64), |(a, b), &h| (a.min(h), b.max(h)));
    (high > SPREAD * low).then(|| diagonal.iter().map(|h| 1.0 / h).collect())
}
