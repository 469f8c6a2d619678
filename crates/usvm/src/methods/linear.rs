//! The linear methods on uncertain data: LSVM-GSU (`gsu`), LSVM (`hinge`), LSVM-iso (`iso`),
//! LSVM-sampling (`sampling`) and Power SVM (`power`), all fitted by [`crate::svm::LinearSvmParams`].

use serde::{Deserialize, Serialize};

use super::{Fit, FitOptions, LinearSolver, Regularization, positive};
use crate::data::Dataset;
use crate::error::{Result, invalid};
use crate::model::Model;
use crate::report::Route;
use crate::svm::{LinearMethod, LinearSvmParams};

/// The fields every linear method has.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Linear {
    /// `λ` (default 0.01) or `C`.
    pub regularization: Regularization,
    /// Fit an intercept `b`.
    pub fit_intercept: bool,
    /// The solver.
    pub solver: LinearSolver,
}

impl Default for Linear {
    fn default() -> Self {
        Linear { regularization: Regularization::Lambda(1e-2), fit_intercept: true, solver: LinearSolver::default() }
    }
}

impl Linear {
    /// Fits `method` (its `max_rounds` for Power SVM) on `data`, which [`crate::fit()`] has validated.
    pub(crate) fn fit_as(
        &self,
        method: LinearMethod,
        max_rounds: usize,
        data: &Dataset,
        opts: &FitOptions,
    ) -> Result<Fit> {
        let params = LinearSvmParams {
            method,
            lambda: self.regularization.lambda(data.n_samples())?,
            fit_intercept: self.fit_intercept,
            solver: self.solver.solver(opts.seed),
            max_rounds,
        };
        let start = match opts.start {
            Some(Model::Linear(m)) => Some(m),
            _ => None,
        };
        let fit = params.fit_validated(data, start, opts.monitor())?;
        Ok(Fit::new(Model::Linear(fit.model), fit.reports))
    }

    /// Whether the fit of `method` checks the values of `data`'s dense features itself
    /// ([`LinearSvmParams::checks_values`]).
    pub(crate) fn checks_values(&self, method: LinearMethod, data: &Dataset) -> bool {
        LinearSvmParams::checks_values(&method, matches!(self.solver, LinearSolver::Exact(_)), data)
    }

    pub(crate) fn validate(&self, n_samples: usize) -> Result<()> {
        self.regularization.lambda(n_samples)?;
        match self.solver {
            LinearSolver::Exact(s) => {
                positive("tol", s.tol)?;
                if !(s.gap_tol > 0.0 && s.gap_tol < 1.0) {
                    return Err(invalid("gap_tol", s.gap_tol, "must be in (0, 1)"));
                }
                if s.max_iter == 0 {
                    return Err(invalid("max_iter", 0, "must be at least 1"));
                }
                if let Some(r @ (Route::Cocoa | Route::Smoothing)) = s.route {
                    return Err(invalid("route", r, "must be dual, primal or qp (a route of the plain hinge's own)"));
                }
                super::non_negative("sigma_floor", s.sigma_floor)
            }
            LinearSolver::Sgd(s) => {
                if s.iterations == 0 || s.batch == 0 {
                    return Err(invalid(
                        "iterations/batch",
                        format!("{}/{}", s.iterations, s.batch),
                        "must be at least 1",
                    ));
                }
                Ok(())
            }
        }
    }
}

/// LSVM-GSU: the expected hinge loss under each example's Gaussian.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Gsu {
    /// `λ` (default 0.01) or `C`.
    pub regularization: Regularization,
    /// Fit an intercept `b`.
    pub fit_intercept: bool,
    /// The solver.
    pub solver: LinearSolver,
    /// Learn in per-example linear subspaces keeping this fraction of the variance, in `(0, 1]`.
    pub subspace_variance: Option<f64>,
}

impl Default for Gsu {
    fn default() -> Self {
        let l = Linear::default();
        Gsu {
            regularization: l.regularization,
            fit_intercept: l.fit_intercept,
            solver: l.solver,
            subspace_variance: None,
        }
    }
}

impl Gsu {
    fn linear(&self) -> Linear {
        Linear { regularization: self.regularization, fit_intercept: self.fit_intercept, solver: self.solver }
    }

    pub(crate) fn validate(&self, n_samples: usize) -> Result<()> {
        if let Some(p) = self.subspace_variance
            && !(p > 0.0 && p <= 1.0)
        {
            return Err(invalid("subspace_variance", p, "must be in (0, 1]"));
        }
        self.linear().validate(n_samples)
    }

    fn method(&self) -> LinearMethod {
        match self.subspace_variance {
            Some(p) => LinearMethod::GsuSubspace { variance_fraction: p },
            None => LinearMethod::Gsu,
        }
    }

    pub(crate) fn fit(&self, data: &Dataset, opts: &FitOptions) -> Result<Fit> {
        self.linear().fit_as(self.method(), 0, data, opts)
    }

    /// Whether the fit checks the values of `data`'s dense features itself ([`LinearSvmParams::checks_values`]).
    pub(crate) fn checks_values(&self, data: &Dataset) -> bool {
        self.linear().checks_values(self.method(), data)
    }
}

/// LSVM-sampling: the hinge loss on samples drawn from each Gaussian (seeded by [`FitOptions::seed`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Sampling {
    /// `λ` (default 0.01) or `C`.
    pub regularization: Regularization,
    /// Fit an intercept `b`.
    pub fit_intercept: bool,
    /// The solver.
    pub solver: LinearSolver,
    /// Samples drawn per example.
    pub samples: usize,
}

impl Default for Sampling {
    fn default() -> Self {
        let l = Linear::default();
        Sampling { regularization: l.regularization, fit_intercept: l.fit_intercept, solver: l.solver, samples: 10 }
    }
}

impl Sampling {
    fn linear(&self) -> Linear {
        Linear { regularization: self.regularization, fit_intercept: self.fit_intercept, solver: self.solver }
    }

    pub(crate) fn validate(&self, n_samples: usize) -> Result<()> {
        if self.samples == 0 {
            return Err(invalid("samples", 0, "must be at least 1"));
        }
        self.linear().validate(n_samples)
    }

    pub(crate) fn fit(&self, data: &Dataset, opts: &FitOptions) -> Result<Fit> {
        self.linear().fit_as(LinearMethod::Sampling { samples: self.samples, seed: opts.seed }, 0, data, opts)
    }
}

/// Power SVM: the hinge at the best point of a ball of radius `radius_scale · √(tr Σ_i / n)`,
/// by alternating rounds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Power {
    /// `λ` (default 0.01) or `C`.
    pub regularization: Regularization,
    /// Fit an intercept `b`.
    pub fit_intercept: bool,
    /// The solver of each round.
    pub solver: LinearSolver,
    /// The radius scale `R ≥ 0`.
    pub radius_scale: f64,
    /// Maximum alternating rounds.
    pub max_rounds: usize,
}

impl Default for Power {
    fn default() -> Self {
        let l = Linear::default();
        Power {
            regularization: l.regularization,
            fit_intercept: l.fit_intercept,
            solver: l.solver,
            radius_scale: 1.0,
            max_rounds: LinearSvmParams::default().max_rounds,
        }
    }
}

impl Power {
    fn linear(&self) -> Linear {
        Linear { regularization: self.regularization, fit_intercept: self.fit_intercept, solver: self.solver }
    }

    pub(crate) fn validate(&self, n_samples: usize) -> Result<()> {
        super::non_negative("radius_scale", self.radius_scale)?;
        if self.max_rounds == 0 {
            return Err(invalid("max_rounds", 0, "must be at least 1"));
        }
        self.linear().validate(n_samples)
    }

    pub(crate) fn fit(&self, data: &Dataset, opts: &FitOptions) -> Result<Fit> {
        let method = LinearMethod::Power { radius_scale: self.radius_scale };
        self.linear().fit_as(method, self.max_rounds, data, opts)
    }
}
