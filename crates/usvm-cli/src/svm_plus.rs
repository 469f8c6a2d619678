//! `--method svmplus` / `--method rsvmplus`: SVM+ and R-SVM+ (learning using privileged information,
//! DESIGN 2.6). The privileged features `x*` come from `--privileged FILE`, in the main input's format
//! (LIBSVM lines `label j:v ...` with --data, a CSV with a header and the label column with --csv, an
//! svm-gsu means file `<id> j:v ...` with --means); its labels are ignored. Rows are joined to the
//! training rows line for line (LIBSVM, CSV) or by id (svm-gsu). The fitted model is a kernel model over
//! `x` only, so `usvm predict` needs no privileged file.

use anyhow::{Context, Result, bail};
use clap::Args;
use std::path::PathBuf;
use usvm::io::{read_csv, read_libsvm, read_svmgsu};
use usvm::svm::{FitReport, LupiMethod, SvmPlusParams};
use usvm::{Dataset, Kernel};

use crate::fit::Fitted;
use crate::input::{Input, InputArgs, open};
use crate::kernel_args::KernelKind;
use crate::train::{HyperArgs, Method};

/// Flags of SVM+ / R-SVM+ (the kernel k on x: `KernelArgs`, whose rbf γ defaults here to 1/D, D the mean
/// squared distance between training rows).
#[derive(Args, Debug, Clone)]
pub struct SvmPlusArgs {
    /// svmplus/rsvmplus: privileged features x*, one row per training example, in the main input's format
    #[arg(long, value_name = "FILE")]
    pub privileged: Option<PathBuf>,
    /// svmplus/rsvmplus: ρ > 0, the weight of ‖w*‖² (ρ → 0 gives the plain SVM)
    #[arg(long, value_name = "R", default_value_t = 1.0)]
    pub rho: f64,
    /// rsvmplus: λ ≥ 0, the weight of the robust gradient regulariser
    #[arg(long = "robust-lambda", value_name = "L", default_value_t = 0.1)]
    pub robust_lambda: f64,
    /// rsvmplus: σ' > 0, the box α ≤ σ'C
    #[arg(long = "sigma-prime", value_name = "S", default_value_t = 1.0)]
    pub sigma_prime: f64,
    /// svmplus/rsvmplus: γ* of the Gaussian kernel k* on x* (default: 1/D*, D* the mean squared distance)
    #[arg(long = "gamma-star", value_name = "G", allow_negative_numbers = true)]
    pub gamma_star: Option<f64>,
}

fn positive(flag: &str, v: f64) -> Result<()> {
    if !(v > 0.0 && v.is_finite()) {
        bail!("invalid value '{v}' for '--{flag}': must be positive and finite");
    }
    Ok(())
}

/// The library parameters: `C` from --C (or `1/(λℓ)` from --lambda, else 1); the SMO tolerance is --tol.
pub fn params(hyper: &HyperArgs, n_samples: usize, n_features: usize) -> Result<SvmPlusParams> {
    let a = &hyper.svm_plus;
    let c = match (hyper.c, hyper.lambda) {
        (Some(c), _) => c,
        (None, Some(lambda)) => {
            positive("lambda", lambda)?;
            1.0 / (lambda * n_samples as f64)
        }
        (None, None) => 1.0,
    };
    positive("C", c)?;
    positive("rho", a.rho)?;
    positive("tol", hyper.tol)?;
    let method = match hyper.method {
        Method::Rsvmplus => {
            if !(a.robust_lambda >= 0.0 && a.robust_lambda.is_finite()) {
                bail!("invalid value '{}' for '--robust-lambda': must be non-negative and finite", a.robust_lambda);
            }
            positive("sigma-prime", a.sigma_prime)?;
            LupiMethod::Robust { lambda: a.robust_lambda, sigma_prime: a.sigma_prime }
        }
        _ => LupiMethod::SvmPlus,
    };
    let kernel = match hyper.kernel.kernel {
        KernelKind::Precomputed => bail!("--kernel precomputed is not supported by svmplus/rsvmplus"),
        KernelKind::Rbf if hyper.kernel.gamma.is_none() => None,
        _ => Some(hyper.kernel.kernel(n_features)?),
    };
    let kernel_star = match a.gamma_star {
        Some(g) => {
            positive("gamma-star", g)?;
            Some(Kernel::Rbf { gamma: g })
        }
        None => None,
    };
    let mut params = SvmPlusParams { method, c, rho: a.rho, kernel, kernel_star, ..SvmPlusParams::default() };
    params.qp.tol = hyper.tol;
    Ok(params)
}

/// Checks the flags without data.
pub fn check(hyper: &HyperArgs, n_samples: usize) -> Result<()> {
    params(hyper, n_samples, 1).map(|_| ())
}

/// Reads `--privileged` in the main input's format and attaches it to `input.dataset` (svmplus and
/// rsvmplus only; other methods ignore the flag).
pub fn attach(hyper: &HyperArgs, args: &InputArgs, input: &mut Input) -> Result<()> {
    if !matches!(hyper.method, Method::Svmplus | Method::Rsvmplus) {
        return Ok(());
    }
    let Some(path) = &hyper.svm_plus.privileged else {
        bail!(
            "--method {} needs --privileged FILE (the privileged features x*)",
            crate::fit::method_name(hyper.method)
        );
    };
    let source = path.display().to_string();
    let n = input.dataset.n_samples();
    let privileged = if let Some(means) = &args.means {
        // Joined by id: the privileged means read against the training labels come out in the same order.
        let labels = args.labels.as_ref().with_context(|| format!("{} needs --labels", means.display()))?;
        let read = read_svmgsu(
            (open(path)?, &source),
            (open(labels)?, &labels.display().to_string()),
            None,
            Default::default(),
        )?;
        if read.dataset.n_samples() != n || !read.skipped.is_empty() {
            bail!(
                "{source}: privileged ids do not match the training ids ({} of {n} joined)",
                read.dataset.n_samples()
            );
        }
        read.dataset.features
    } else if args.csv.is_some() {
        read_csv(open(path)?, &source, args.label_col.as_deref())?.features
    } else {
        read_libsvm(open(path)?, &source, None)?.features
    };
    if privileged.n_samples() != n {
        bail!("{source}: {} privileged rows for {n} training examples", privileged.n_samples());
    }
    input.dataset.privileged = Some(privileged);
    Ok(())
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
            gradient_norm: r.gradient_norm,
            initial_gradient_norm: r.initial_gradient_norm,
            sigma_floor: 0.0,
            objective_trace: Vec::new(),
            duality_gap: None,
        })
        .collect();
    let hyperparameters = serde_json::json!({
        "params": params,
        "kernel": fit.model.kernel,
        "kernel_star": fit.kernel_star,
    });
    Ok(Fitted { model: usvm::Model::Kernel(fit.model), reports, hyperparameters })
}
