//! `--method sqhinge-gsu`: the uncertainty-aware squared-hinge classification layer of thesis chapter 5
//! (one-vs-rest, L-BFGS or mini-batch SGD), with its own `--loss` flag.

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use usvm::solver::lbfgs::LbfgsSettings;
use usvm::solver::pegasos::SgdSettings;
use usvm::svm::{SquaredHingeGsuLoss, SquaredHingeGsuParams, SquaredHingeGsuSolver};
use usvm::{Dataset, Model};

use crate::fit::Fitted;
use crate::train::{HyperArgs, SolverKind};

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum LossKind {
    /// Φ(μ/σ)·μ², thesis eq. (5.11) (non-convex)
    Thesis,
    /// E[max(0, D)²] = (μ²+σ²)Φ(μ/σ) + μσφ(μ/σ), D ~ N(μ, σ²) (convex)
    Expected,
}

/// The flags of `sqhinge-gsu`.
#[derive(Args, Debug, Clone)]
pub struct SqhingeArgs {
    /// sqhinge-gsu: the squared-hinge loss under each example's Gaussian
    #[arg(long, value_enum, default_value_t = LossKind::Expected)]
    pub loss: LossKind,
}

/// The library parameters: `--solver exact` is L-BFGS (`--tol`, `--max-iter`), `sgd` the averaged
/// mini-batch SGD (`--iterations`, `--batch`, `--seed`).
pub fn params(hyper: &HyperArgs, n_samples: usize) -> Result<SquaredHingeGsuParams> {
    if hyper.subspace_variance.is_some() {
        bail!("--subspace-variance applies to --method gsu only");
    }
    let lambda = match (hyper.lambda, hyper.c) {
        (Some(l), _) => l,
        (None, Some(c)) => {
            if !(c > 0.0 && c.is_finite()) {
                bail!("invalid value '{c}' for '--C': must be positive and finite");
            }
            1.0 / (c * n_samples as f64)
        }
        (None, None) => SquaredHingeGsuParams::default().lambda,
    };
    let loss = match hyper.sqhinge.loss {
        LossKind::Thesis => SquaredHingeGsuLoss::Thesis,
        LossKind::Expected => SquaredHingeGsuLoss::Expected,
    };
    let solver = match hyper.solver {
        SolverKind::Exact => SquaredHingeGsuSolver::Lbfgs(LbfgsSettings {
            tol: hyper.tol,
            max_iter: hyper.max_iter,
            ..LbfgsSettings::default()
        }),
        SolverKind::Sgd => SquaredHingeGsuSolver::Sgd(SgdSettings {
            iterations: hyper.iterations,
            batch: hyper.batch,
            seed: hyper.seed,
        }),
    };
    Ok(SquaredHingeGsuParams { loss, lambda, fit_intercept: !hyper.no_intercept, solver })
}

pub fn fit(hyper: &HyperArgs, data: &Dataset) -> Result<Fitted> {
    let params = params(hyper, data.n_samples())?;
    let fit = params.fit(data).context("training failed")?;
    Ok(Fitted {
        model: Model::Linear(fit.model),
        reports: fit.reports,
        hyperparameters: serde_json::to_value(&params)?,
    })
}
