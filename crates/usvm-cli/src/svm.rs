//! `--method svm`: the kernel SVM (C-SVC by SMO, LIBSVM's design) with per-example costs `C·c_i` from
//! `--weights`; one-vs-rest for more than two classes.

use anyhow::{Context, Result, bail};
use clap::Args;
use usvm::Dataset;
use usvm::svm::{FitReport, KernelSvmParams};

use crate::fit::Fitted;
use crate::train::HyperArgs;

/// Flags of the kernel SVM (the kernel itself: `KernelArgs`).
#[derive(Args, Debug, Clone)]
pub struct SvmArgs {
    /// svm: kernel cache size in MB, per binary problem (LIBSVM's -m)
    #[arg(long = "cache-mb", value_name = "MB", default_value_t = 200.0)]
    pub cache_mb: f64,
    /// svm: turn the shrinking heuristics off (LIBSVM's -h 0)
    #[arg(long = "no-shrinking")]
    pub no_shrinking: bool,
}

/// The library parameters: `C` from --C, or `1/(λℓ)` from --lambda, else LIBSVM's default 1; the SMO
/// tolerance is --tol (on the maximal KKT violation; LIBSVM's -e); γ defaults to 1/n_features.
pub fn params(hyper: &HyperArgs, n_samples: usize, n_features: usize) -> Result<KernelSvmParams> {
    let c = match (hyper.c, hyper.lambda) {
        (Some(c), _) => c,
        (None, Some(lambda)) => {
            if !(lambda > 0.0 && lambda.is_finite()) {
                bail!("invalid value '{lambda}' for '--lambda': must be positive and finite");
            }
            1.0 / (lambda * n_samples as f64)
        }
        (None, None) => 1.0,
    };
    if !(c > 0.0 && c.is_finite()) {
        bail!("invalid value '{c}' for '--C': must be positive and finite");
    }
    if !(hyper.tol > 0.0 && hyper.tol.is_finite()) {
        bail!("invalid value '{}' for '--tol': must be positive and finite", hyper.tol);
    }
    if !(hyper.svm.cache_mb > 0.0 && hyper.svm.cache_mb.is_finite()) {
        bail!("invalid value '{}' for '--cache-mb': must be positive and finite", hyper.svm.cache_mb);
    }
    Ok(KernelSvmParams {
        kernel: hyper.kernel.kernel(n_features)?,
        c,
        tol: hyper.tol,
        cache_mb: hyper.svm.cache_mb,
        max_iter: 0,
        shrinking: !hyper.svm.no_shrinking,
    })
}

/// Checks the flags without data (γ's default is always valid).
pub fn check(hyper: &HyperArgs, n_samples: usize) -> Result<()> {
    params(hyper, n_samples, 1).map(|_| ())
}

pub fn fit(hyper: &HyperArgs, data: &Dataset) -> Result<Fitted> {
    let params = params(hyper, data.n_samples(), data.n_features())?;
    let fit = params.fit(data).context("training failed")?;
    let reports = fit
        .reports
        .iter()
        .map(|r| FitReport {
            objective: r.objective,
            n_iter: r.n_iter,
            termination: r.termination,
            gradient_norm: r.max_violation,
            initial_gradient_norm: 0.0,
            sigma_floor: 0.0,
            objective_trace: Vec::new(),
            duality_gap: None,
        })
        .collect();
    Ok(Fitted { model: usvm::Model::Kernel(fit.model), reports, hyperparameters: serde_json::to_value(&params)? })
}
