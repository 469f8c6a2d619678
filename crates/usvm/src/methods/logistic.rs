//! `logistic`: L2-regularised logistic regression on the means, `λ/2‖w‖² + (1/ℓ) Σ c_i log(1 + e^{-y_i f(x_i)})`,
//! one-vs-rest. A plain method added through the registry alone: a loss of the margin mean (the
//! covariances are not used) on the one linear objective, solved by the exact Newton solver.

use serde::{Deserialize, Serialize};

use super::{Fit, FitOptions, Regularization, positive};
use crate::covariance::NoCovariance;
use crate::data::Dataset;
use crate::error::Result;
use crate::loss::{LossDerivatives, MarginLoss};
use crate::model::{LinearModel, Model};
use crate::objective::{Objective, Problem};
use crate::solver::exact::{self, ExactSettings};

/// The logistic loss of the margin violation `d = 1 - y f`: `log(1 + e^{d-1})`; `σ` does not enter.
#[derive(Debug, Clone, Copy)]
pub struct LogisticLoss;

impl MarginLoss for LogisticLoss {
    fn name(&self) -> &'static str {
        "logistic"
    }

    fn value(&self, d: f64, _sigma: f64) -> f64 {
        let t = d - 1.0;
        // softplus(t) = max(t, 0) + log(1 + e^{-|t|}), without overflow.
        t.max(0.0) + (-t.abs()).exp().ln_1p()
    }

    fn derivatives(&self, d: f64, sigma: f64) -> LossDerivatives {
        let p = 1.0 / (1.0 + (1.0 - d).exp()); // sigmoid(d - 1)
        LossDerivatives { value: self.value(d, sigma), d: p, dd: p * (1.0 - p), ..LossDerivatives::default() }
    }
}

/// Logistic regression.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Logistic {
    /// `λ` (default 0.01) or `C`.
    pub regularization: Regularization,
    /// Fit an intercept `b`.
    pub fit_intercept: bool,
    /// Newton's settings (`sigma_floor` is irrelevant: `σ` does not enter).
    pub solver: ExactSettings,
}

impl Default for Logistic {
    fn default() -> Self {
        Logistic { regularization: Regularization::Lambda(1e-2), fit_intercept: true, solver: ExactSettings::default() }
    }
}

impl Logistic {
    pub(crate) fn validate(&self, n_samples: usize) -> Result<()> {
        self.regularization.lambda(n_samples)?;
        positive("tol", self.solver.tol)
    }

    /// Fits from zero, or from the hyperplanes of a linear warm start ([`FitOptions::start`]).
    pub(crate) fn fit(&self, data: &Dataset, opts: &FitOptions) -> Result<Fit> {
        let lambda = self.regularization.lambda(data.n_samples())?;
        let start = LinearModel::warm_start(opts.start);
        let (model, reports) =
            LinearModel::one_vs_rest(data, self.fit_intercept, start, opts.monitor(), |y, theta0, m| {
                let problem = Problem {
                    features: &data.features,
                    y,
                    weights: data.weights.as_deref(),
                    covariances: &NoCovariance,
                };
                let objective =
                    Objective { fit_intercept: self.fit_intercept, ..Objective::new(problem, LogisticLoss, lambda) };
                Ok(exact::solve(&objective, theta0.unwrap_or_else(|| vec![0.0; objective.dim()]), &self.solver, m))
            })?;
        Ok(Fit::new(Model::Linear(model), reports))
    }
}
