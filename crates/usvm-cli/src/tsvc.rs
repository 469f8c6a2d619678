//! `--method tsvc`: total support vector classification (Bi & Zhang) with bounds `δ_i` from `--delta`
//! (one value) or `--delta-file` (one per example), solved by alternating rounds or, for the linear kernel,
//! as a second-order cone programme; the kernel comes from the shared kernel flags.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, ValueEnum};
use usvm::Dataset;
use usvm::svm::{Delta, TsvcForm, TsvcParams};

use crate::fit::Fitted;
use crate::input::{io_error, open};
use crate::train::HyperArgs;

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormKind {
    /// Algorithm 1: an SVM on the shifted points, then the optimal shifts (any kernel)
    Alternating,
    /// The second-order cone programme (eq. 8) by Clarabel, with the dual (eq. 9) gap (linear kernel)
    Socp,
}

/// Flags of TSVC.
#[derive(Args, Debug, Clone)]
pub struct TsvcArgs {
    /// tsvc: one uncertainty bound δ ≥ 0 for every example (default 0 unless --delta-file)
    #[arg(long, value_name = "D", conflicts_with = "delta_file", allow_negative_numbers = true)]
    pub delta: Option<f64>,
    /// tsvc: per-example bounds δ_i, one per line, in example order
    #[arg(long = "delta-file", value_name = "FILE")]
    pub delta_file: Option<PathBuf>,
    /// tsvc: solution method
    #[arg(long, value_enum, default_value_t = FormKind::Alternating)]
    pub form: FormKind,
    /// tsvc --form socp: solve eq. 8 for this fixed bound ‖w‖ ≤ G instead of eq. 7 for C (default: off)
    #[arg(long = "norm-bound", value_name = "G")]
    pub norm_bound: Option<f64>,
    /// tsvc --form alternating: maximum rounds after the first SVM
    #[arg(long = "max-rounds", value_name = "N", default_value_t = TsvcParams::default().max_rounds)]
    pub max_rounds: usize,
}

/// Reads one bound per line (blank lines skipped); errors name the file, line and field.
pub fn read_deltas(path: &Path, n_samples: usize) -> Result<Vec<f64>> {
    use std::io::BufRead;
    let source = path.display().to_string();
    let mut out = Vec::new();
    for (k, line) in open(path)?.lines().enumerate() {
        let line = line.map_err(|e| io_error(path, e))?;
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        let v: f64 = text.parse().map_err(|_| anyhow!("{source}:{}: field '{text}': not a number", k + 1))?;
        if !(v.is_finite() && v >= 0.0) {
            bail!("{source}:{}: field '{text}': a bound must be finite and non-negative", k + 1);
        }
        out.push(v);
    }
    if out.len() != n_samples {
        bail!("{source}: {} bounds for {n_samples} examples: give one bound per example", out.len());
    }
    Ok(out)
}

/// The library parameters: `C` from --C, or `1/(λℓ)` from --lambda, else 1; --tol is the rounds'
/// relative stopping tolerance.
pub fn params(hyper: &HyperArgs, n_samples: usize, n_features: usize, delta: Delta) -> Result<TsvcParams> {
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
    let args = &hyper.tsvc;
    if let Some(d) = args.delta
        && !(d >= 0.0 && d.is_finite())
    {
        bail!("invalid value '{d}' for '--delta': must be finite and non-negative");
    }
    if let Some(g) = args.norm_bound {
        if args.form != FormKind::Socp {
            bail!("--norm-bound applies to --form socp only");
        }
        if !(g >= 0.0 && g.is_finite()) {
            bail!("invalid value '{g}' for '--norm-bound': must be finite and non-negative");
        }
    }
    let kernel = hyper.kernel.kernel(n_features)?;
    if kernel == usvm::Kernel::Precomputed {
        bail!("--method tsvc moves the inputs: --kernel precomputed is not possible");
    }
    let form = match args.form {
        FormKind::Alternating => TsvcForm::Alternating,
        FormKind::Socp => {
            if kernel != usvm::Kernel::Linear {
                bail!("--form socp needs --kernel linear");
            }
            TsvcForm::Socp
        }
    };
    if !(hyper.tol >= 0.0 && hyper.tol.is_finite()) {
        bail!("invalid value '{}' for '--tol': must be finite and non-negative", hyper.tol);
    }
    Ok(TsvcParams {
        c,
        delta,
        form,
        kernel,
        fit_intercept: !hyper.no_intercept,
        max_rounds: args.max_rounds,
        tol: hyper.tol,
        norm_bound: args.norm_bound,
    })
}

/// Checks the flags without data.
pub fn check(hyper: &HyperArgs, n_samples: usize) -> Result<()> {
    params(hyper, n_samples, 1, Delta::Uniform(hyper.tsvc.delta.unwrap_or(0.0))).map(|_| ())
}

pub fn fit(hyper: &HyperArgs, data: &Dataset) -> Result<Fitted> {
    let delta = match &hyper.tsvc.delta_file {
        Some(path) => Delta::PerExample(read_deltas(path, data.n_samples())?),
        None => Delta::Uniform(hyper.tsvc.delta.unwrap_or(0.0)),
    };
    let params = params(hyper, data.n_samples(), data.n_features(), delta)?;
    let fit = params.fit(data).context("training failed")?;
    let reports = fit.reports.into_iter().map(|r| r.report).collect();
    Ok(Fitted { model: fit.model, reports, hyperparameters: serde_json::to_value(&params)? })
}
