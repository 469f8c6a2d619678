//! `sqhinge-gsu`: the squared-hinge classification layer under Gaussian inputs (thesis ch. 5),
//! one-vs-rest, fitted by [`crate::svm::SquaredHingeGsuParams`].

use serde::{Deserialize, Serialize};

use super::{Fit, FitOptions, Regularization, SgdParams, positive};
use crate::data::Dataset;
use crate::error::{Result, invalid};
use crate::model::{LinearModel, Model};
use crate::solver::exact::ExactSettings;
use crate::solver::lbfgs::LbfgsSettings;
use crate::svm::{SquaredHingeGsuLoss, SquaredHingeGsuParams, SquaredHingeGsuSolver};

/// The solver of the squared-hinge layer.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "name", rename_all = "snake_case")]
pub enum SqhingeSolver {
    /// L-BFGS with a strong-Wolfe line search (`--solver exact` of the CLI).
    Exact(LbfgsSettings),
    /// Newton-CG with a vanishing floor on `σ_i` (the convex `expected` loss only).
    Newton(ExactSettings),
    /// Averaged mini-batch SGD.
    Sgd(SgdParams),
}

/// The squared-hinge GSU layer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SqhingeGsu {
    /// `λ` (default 0.01) or `C`.
    pub regularization: Regularization,
    /// Fit an intercept `b`.
    pub fit_intercept: bool,
    /// `thesis` (eq. 5.11, non-convex) or `expected` (`E[max(0, D)²]`, convex).
    pub loss: SquaredHingeGsuLoss,
    /// The solver.
    pub solver: SqhingeSolver,
}

impl Default for SqhingeGsu {
    fn default() -> Self {
        SqhingeGsu {
            regularization: Regularization::Lambda(1e-2),
            fit_intercept: true,
            loss: SquaredHingeGsuLoss::Expected,
            solver: SqhingeSolver::Exact(LbfgsSettings::default()),
        }
    }
}

impl SqhingeGsu {
    pub(crate) fn validate(&self, n_samples: usize) -> Result<()> {
        self.regularization.lambda(n_samples)?;
        match self.solver {
            SqhingeSolver::Exact(s) => positive("tol", s.tol),
            SqhingeSolver::Newton(s) => positive("tol", s.tol),
            SqhingeSolver::Sgd(s) if s.iterations == 0 || s.batch == 0 => {
                Err(invalid("iterations/batch", format!("{}/{}", s.iterations, s.batch), "must be at least 1"))
            }
            SqhingeSolver::Sgd(_) => Ok(()),
        }
    }

    pub(crate) fn fit(&self, data: &Dataset, opts: &FitOptions) -> Result<Fit> {
        let params = SquaredHingeGsuParams {
            loss: self.loss,
            lambda: self.regularization.lambda(data.n_samples())?,
            fit_intercept: self.fit_intercept,
            solver: match self.solver {
                SqhingeSolver::Exact(s) => SquaredHingeGsuSolver::Lbfgs(s),
                SqhingeSolver::Newton(s) => SquaredHingeGsuSolver::Newton(s),
                SqhingeSolver::Sgd(s) => SquaredHingeGsuSolver::Sgd(s.settings(opts.seed)),
            },
        };
        let fit = params.fit_monitored(data, LinearModel::warm_start(opts.start), opts.monitor())?;
        Ok(Fit::new(Model::Linear(fit.model), fit.reports))
    }
}
