//! The L2-regularised squared-hinge linear SVM (BE-SVM's eq. 6, LIBLINEAR's `-s 2`):
//!
//! `P(w, b) = ½‖w‖² + C Σ_i c_i max(0, 1 - y_i(wᵀx_i + b))²`,
//!
//! minimised as the library's one objective `J = λ/2‖w‖² + (1/ℓ) Σ c_i L_i` with the
//! [`SquaredHinge`] loss and `λ = 1/(Cℓ)` (so `P = Cℓ·J`; the bias, when fitted, is not regularised —
//! LIBLINEAR's `-B 1` regularises it, so compare without bias). `J` is convex, piecewise quadratic and
//! once continuously differentiable; its generalised Hessian `λI + (2/ℓ) Σ_{d_i > 0} c_i x_i x_iᵀ` makes
//! Newton's method with an exact line search (the finite Newton method of Keerthi & DeCoste 2005,
//! `solver::newton`) converge in finitely many steps up to round-off. It stops when
//! `‖∇J‖ ≤ tol·‖∇J(0)‖`. Alternatively ([`SquaredHingeSolver::DualCd`]) dual coordinate descent
//! (`solver::dual_cd`, LIBLINEAR's `-s 1` with the bias unregularised) solves it to a relative
//! duality gap of `1e-8` and the same Newton method finishes from there (typically one or two steps), so both
//! solvers stop at the same optimum to the same tolerance; the dual route also reports the duality gap.
//! Multi-class: one-vs-rest.

use serde::{Deserialize, Serialize};

use crate::covariance::NoCovariance;
use crate::data::{Dataset, norm2};
use crate::error::{Result, invalid};
use crate::loss::SquaredHinge;
use crate::model::LinearModel;
use crate::objective::{Curvature, Objective, Problem};
use crate::progress::Monitor;
use crate::report::FitReport;
use crate::solver::dual_cd::{self, DualCdSettings, DualLoss};
use crate::solver::newton::{self, NewtonSettings, SmoothFunction};
use crate::svm::LinearFit;

/// How the squared-hinge SVM is solved; both reach the same optimum (to `tol`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SquaredHingeSolver {
    /// Primal finite Newton with an exact line search from zero.
    #[default]
    Newton,
    /// Dual coordinate descent to a relative duality gap of `1e-8`, then Newton from its solution.
    DualCd,
}

/// Settings of the squared-hinge SVM: plain data, validated in [`SquaredHingeSvmParams::fit`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SquaredHingeSvmParams {
    /// `C > 0` in `½‖w‖² + C Σ c_i max(0, 1 - y_i f(x_i))²`.
    pub c: f64,
    /// Fit an unregularised intercept `b`.
    pub fit_intercept: bool,
    /// Stop when `‖∇J‖ ≤ tol · ‖∇J(0)‖`.
    pub tol: f64,
    /// Maximum Newton iterations per binary problem.
    pub max_iter: usize,
    #[serde(default)]
    /// The solver.
    pub solver: SquaredHingeSolver,
}

impl Default for SquaredHingeSvmParams {
    fn default() -> Self {
        SquaredHingeSvmParams {
            c: 1.0,
            fit_intercept: true,
            tol: 1e-10,
            max_iter: 1000,
            solver: SquaredHingeSolver::Newton,
        }
    }
}

/// The relative duality gap to which [`SquaredHingeSolver::DualCd`] runs before Newton finishes.
const DUAL_CD_TOL: f64 = 1e-8;

/// The objective as the Newton solver sees it.
struct Smooth<'o, 'a> {
    objective: &'o Objective<'a, SquaredHinge>,
    at: Vec<f64>,
    curvature: Option<Curvature>,
}

impl SmoothFunction for Smooth<'_, '_> {
    fn dim(&self) -> usize {
        self.objective.dim()
    }
    fn value_grad(&mut self, x: &[f64], grad: &mut [f64]) -> f64 {
        let (v, c) = self.objective.value_grad(x, grad);
        self.at.clear();
        self.at.extend_from_slice(x);
        self.curvature = Some(c);
        v
    }
    fn hess_vec(&self, v: &[f64], out: &mut [f64]) {
        let c = self.curvature.as_ref().expect("value_grad before hess_vec");
        self.objective.hess_vec(&self.at, c, v, out);
    }
    fn line<'s>(&'s self, x: &[f64], d: &[f64]) -> Box<dyn Fn(f64) -> (f64, f64, f64) + 's> {
        let line = self.objective.line(x, d);
        Box::new(move |alpha| line.eval(alpha))
    }
}

impl SquaredHingeSvmParams {
    /// Checks `C > 0` and `tol > 0`.
    pub fn validate(&self) -> Result<()> {
        if !(self.c > 0.0 && self.c.is_finite()) {
            return Err(invalid("C", self.c, "must be positive and finite"));
        }
        if !(self.tol > 0.0 && self.tol.is_finite()) {
            return Err(invalid("tol", self.tol, "must be positive and finite"));
        }
        Ok(())
    }

    /// `λ = 1/(Cℓ)` for `ℓ` training examples.
    pub fn lambda(&self, n_samples: usize) -> f64 {
        1.0 / (self.c * n_samples as f64)
    }

    /// Fits the classifier: binary for two classes (`classes[1]` positive), one-vs-rest otherwise. The
    /// reports' `objective` is `J`; multiply by `Cℓ` for the C-form `P`. Covariances are ignored.
    pub fn fit(&self, data: &Dataset) -> Result<LinearFit> {
        self.fit_from(data, None)
    }

    /// [`Self::fit`] warm-started from a model of the same classes and features (e.g. the solution for a
    /// nearby `C`; a model that does not match is ignored): Newton starts from its hyperplanes, under the
    /// same stopping rule (relative to `‖∇J(0)‖`); dual coordinate descent starts from zero.
    pub fn fit_from(&self, data: &Dataset, start: Option<&LinearModel>) -> Result<LinearFit> {
        self.fit_monitored(data, start, Monitor::default())
    }

    /// [`Self::fit_from`], reporting the solvers' progress to `monitor`.
    pub fn fit_monitored(
        &self,
        data: &Dataset,
        start: Option<&LinearModel>,
        monitor: Monitor<'_>,
    ) -> Result<LinearFit> {
        self.validate()?;
        data.validate()?;
        let (model, reports) = LinearModel::one_vs_rest(data, self.fit_intercept, start, monitor, |y, theta0, m| {
            Ok(self.fit_binary(data, y, theta0, m))
        })?;
        Ok(LinearFit { model, reports })
    }

    fn fit_binary(
        &self,
        data: &Dataset,
        y: &[f64],
        start: Option<Vec<f64>>,
        monitor: Monitor<'_>,
    ) -> (Vec<f64>, FitReport) {
        let problem =
            Problem { features: &data.features, y, weights: data.weights.as_deref(), covariances: &NoCovariance };
        let objective = Objective {
            fit_intercept: self.fit_intercept,
            ..Objective::new(problem, SquaredHinge, self.lambda(data.n_samples()))
        };
        let reference = norm2(&objective.gradient(&vec![0.0; objective.dim()]));
        let (x0, dual, epochs) = match self.solver {
            SquaredHingeSolver::Newton => (start.unwrap_or_else(|| vec![0.0; objective.dim()]), None, 0),
            SquaredHingeSolver::DualCd => {
                let settings = DualCdSettings { tol: DUAL_CD_TOL, ..DualCdSettings::default() };
                let (x, y, c) = (&data.features, y, data.weights.as_deref());
                let loss = DualLoss::SquaredHinge;
                let cd = dual_cd::solve_monitored(
                    x,
                    y,
                    c,
                    objective.lambda,
                    loss,
                    self.fit_intercept,
                    &settings,
                    None,
                    monitor,
                );
                (cd.theta, Some(cd.dual), cd.epochs)
            }
        };
        let mut smooth = Smooth { objective: &objective, at: Vec::new(), curvature: None };
        let settings =
            NewtonSettings { tol: self.tol, gradient_reference: reference, max_iter: self.max_iter, reduction: None };
        let result = newton::minimize(&mut smooth, x0, settings, monitor.after(epochs));
        let report = FitReport {
            objective: result.value,
            n_iter: result.n_iter + epochs,
            termination: result.termination,
            gradient_norm: result.gradient_norm,
            initial_gradient_norm: Some(reference),
            sigma_floor: None,
            objective_trace: vec![result.value],
            duality_gap: dual.map(|d| dual_cd::relative_gap(result.value, d)),
            rounds: 0,
            norm_bound: None,
            fallback: None,
            routes: Vec::new(),
            degenerate: false,
        };
        (result.x, report)
    }
}
