//! `--method ksvm-igsu`: KSVM-iGSU / RD-KSVM-iGSU (thesis ch. 4) — the kernel SVM for isotropic Gaussian
//! examples, with relevance degrees from `--weights`, exactly or on Nyström / random Fourier features.

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use usvm::solver::exact::ExactSettings;
use usvm::solver::pegasos::SgdSettings;
use usvm::svm::{Approximation, KernelIgsuParams};
use usvm::{Dataset, Solver};

use crate::fit::Fitted;
use crate::train::{HyperArgs, SolverKind};

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApproximationKind {
    /// The exact Gram matrix (pivoted Cholesky factor; cached Gram for sgd)
    Exact,
    /// Nyström features on --components landmarks (any kernel)
    Nystroem,
    /// Random Fourier features, --components frequencies (rbf only)
    Fourier,
}

/// Flags of `ksvm-igsu`.
#[derive(Args, Debug, Clone)]
pub struct KsvmIgsuArgs {
    /// ksvm-igsu: how the kernel enters (exact for up to a few thousand examples, nystroem/fourier beyond)
    #[arg(long, value_enum, default_value_t = ApproximationKind::Exact)]
    pub approximation: ApproximationKind,
    /// ksvm-igsu nystroem/fourier: number of landmarks / frequencies
    #[arg(long, value_name = "M", default_value_t = 500)]
    pub components: usize,
}

/// The library parameters for `data`.
pub fn params(hyper: &HyperArgs, n_samples: usize, n_features: usize) -> Result<KernelIgsuParams> {
    let lambda = match (hyper.lambda, hyper.c) {
        (Some(l), _) => l,
        (None, Some(c)) => {
            if !(c > 0.0 && c.is_finite()) {
                bail!("invalid value '{c}' for '--C': must be positive and finite");
            }
            1.0 / (c * n_samples as f64)
        }
        (None, None) => KernelIgsuParams::default().lambda,
    };
    if hyper.subspace_variance.is_some() {
        bail!("--subspace-variance applies to --method gsu only");
    }
    let seed = hyper.seed;
    let args = &hyper.ksvm_igsu;
    let approximation = match args.approximation {
        ApproximationKind::Exact => Approximation::Exact,
        ApproximationKind::Nystroem => Approximation::Nystroem { components: args.components, seed },
        ApproximationKind::Fourier => Approximation::Fourier { components: args.components, seed },
    };
    let solver = match hyper.solver {
        SolverKind::Exact => {
            Solver::Exact(ExactSettings { tol: hyper.tol, max_iter: hyper.max_iter, ..ExactSettings::default() })
        }
        SolverKind::Sgd => Solver::Sgd(SgdSettings { iterations: hyper.iterations, batch: hyper.batch, seed }),
    };
    Ok(KernelIgsuParams {
        kernel: hyper.kernel.kernel(n_features)?,
        lambda,
        fit_intercept: !hyper.no_intercept,
        solver,
        approximation,
    })
}

pub fn fit(hyper: &HyperArgs, data: &Dataset) -> Result<Fitted> {
    let params = params(hyper, data.n_samples(), data.n_features())?;
    let fit = params.fit(data).context("training failed")?;
    Ok(Fitted { model: fit.model, reports: fit.reports, hyperparameters: serde_json::to_value(&params)? })
}
