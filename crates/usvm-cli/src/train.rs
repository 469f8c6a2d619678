//! `usvm train`: fit a classifier and write the JSON model file (DESIGN 6).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;
use usvm::calibration::fit_platt;
use usvm::model_selection::cross_val_decision_with;
use usvm::solver::exact::ExactSettings;
use usvm::solver::pegasos::SgdSettings;
use usvm::svm::FitReport;
use usvm::{Dataset, LinearMethod, LinearSvmParams, ModelFile, Solver};

use crate::fit::{Fitted, fit, fit_model, method_name};
use crate::input::{CovType, Input, InputArgs, check_two_classes, convert_covariances, read_weights};
use crate::output::write_atomically;

/// The methods (named after the papers).
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// LSVM-GSU: expected hinge loss under each example's Gaussian
    Gsu,
    /// LSVM: hinge loss on the means (covariances ignored)
    Hinge,
    /// LSVM-iso: GSU with isotropic covariances (tr Σ / n) I
    Iso,
    /// LSVM-sampling: hinge loss on samples drawn from each Gaussian
    Sampling,
    /// Power SVM: hinge at the best point of a ball of radius scale·√(tr Σ / n)
    Power,
    /// Kernel SVM (C-SVC by SMO, LIBSVM's design; per-example C·c_i from --weights; one-vs-rest)
    Svm,
    /// KSVM-iGSU / RD-KSVM-iGSU: kernel SVM for isotropic Gaussians σ_i² I (σ_i² = tr Σ_i / n), weights = relevance degrees
    KsvmIgsu,
    /// Thesis ch. 5 squared-hinge layer under Gaussian inputs, one-vs-rest (--loss thesis|expected; exact = L-BFGS)
    SqhingeGsu,
    /// BE-SVM: squared-hinge linear SVM on normalised similarities to a basis (indefinite measures allowed)
    Besvm,
    /// SVM+: kernel SVM learning with privileged features x* (--privileged) through a correcting space
    Svmplus,
    /// R-SVM+: SVM+ with the robust gradient regulariser (--robust-lambda, --sigma-prime)
    Rsvmplus,
    /// TSVC: hinge at the best point of a ball of radius δ_i (--delta/--delta-file; alternating or SOCP; any kernel)
    Tsvc,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum SolverKind {
    /// Newton (CG or Cholesky) with an exact line search and smoothing continuation
    Exact,
    /// Mini-batch SGD (thesis Algorithm 1)
    Sgd,
}

/// The hyper-parameters shared by `train` and `cv`.
#[derive(Args, Debug, Clone)]
pub struct HyperArgs {
    /// Method to fit (required)
    #[arg(long, value_enum)]
    pub method: Method,
    /// Regularisation λ in λ/2‖w‖² (default 0.01 when neither --lambda nor --C is given)
    #[arg(long, value_name = "L", conflicts_with = "C")]
    pub lambda: Option<f64>,
    /// Cost C = 1/(λℓ), ℓ the number of training examples (alternative to --lambda; default: none)
    #[arg(long = "C", id = "C", value_name = "C")]
    pub c: Option<f64>,
    /// Covariance form used for training: auto = as read, none drops Σ, iso = (tr Σ/n) I, diag keeps the diagonal, lowrank, full densifies
    #[arg(long = "cov-type", value_enum, default_value_t = CovType::Auto)]
    pub cov_type: CovType,
    /// gsu only: learn in per-example subspaces keeping this fraction of the variance, in (0, 1] (default: off)
    #[arg(long = "subspace-variance", value_name = "P")]
    pub subspace_variance: Option<f64>,
    /// Solver
    #[arg(long, value_enum, default_value_t = SolverKind::Exact)]
    pub solver: SolverKind,
    /// sgd: number of iterations T
    #[arg(long, value_name = "T", default_value_t = SgdSettings::default().iterations)]
    pub iterations: usize,
    /// sgd: mini-batch size K
    #[arg(long, value_name = "K", default_value_t = SgdSettings::default().batch)]
    pub batch: usize,
    /// Random seed (sgd, sampling, and the cross-validation folds of --probability and cv)
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,
    /// exact: stop when ‖∇J‖ ≤ E·‖∇J(0)‖
    #[arg(long, value_name = "E", default_value_t = ExactSettings::default().tol)]
    pub tol: f64,
    /// exact: maximum Newton iterations
    #[arg(long = "max-iter", value_name = "N", default_value_t = ExactSettings::default().max_iter)]
    pub max_iter: usize,
    /// exact (linear methods): final floor ε on every margin std, σ = √(wᵀΣw + ε²); each loss is within
    /// ε/√(2π) of the exact one (smaller: closer to the exact optimum, more Newton steps)
    #[arg(long = "sigma-floor", value_name = "EPS", default_value_t = ExactSettings::default().sigma_floor)]
    pub sigma_floor: f64,
    /// sampling: samples drawn per example
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub samples: usize,
    /// power: radius scale R (radius R·√(tr Σ / n))
    #[arg(long = "radius-scale", value_name = "R", default_value_t = 1.0)]
    pub radius_scale: f64,
    /// Fit without an intercept b (default: an intercept is fitted)
    #[arg(long = "no-intercept")]
    pub no_intercept: bool,
    #[command(flatten)]
    pub sqhinge: crate::sqhinge::SqhingeArgs,
    /// Per-example weights c_i, one per line, in example order (labels-file order for svm-gsu) (default: all 1)
    #[arg(long, value_name = "FILE")]
    pub weights: Option<PathBuf>,
    #[command(flatten)]
    pub kernel: crate::kernel_args::KernelArgs,
    #[command(flatten)]
    pub svm: crate::svm::SvmArgs,
    #[command(flatten)]
    pub ksvm_igsu: crate::ksvm_igsu::KsvmIgsuArgs,
    #[command(flatten)]
    pub besvm: crate::besvm::BeSvmArgs,
    #[command(flatten)]
    pub svm_plus: crate::svm_plus::SvmPlusArgs,
    #[command(flatten)]
    pub tsvc: crate::tsvc::TsvcArgs,
}

impl HyperArgs {
    /// The library parameters for `n_samples` training examples.
    pub fn params(&self, n_samples: usize) -> Result<LinearSvmParams> {
        let lambda = match (self.lambda, self.c) {
            (Some(l), _) => l,
            (None, Some(c)) => {
                if !(c > 0.0 && c.is_finite()) {
                    bail!("invalid value '{c}' for '--C': must be positive and finite");
                }
                1.0 / (c * n_samples as f64)
            }
            (None, None) => LinearSvmParams::default().lambda,
        };
        if self.subspace_variance.is_some() && self.method != Method::Gsu {
            bail!("--subspace-variance applies to --method gsu only");
        }
        let method = match self.method {
            Method::Gsu => match self.subspace_variance {
                Some(p) => LinearMethod::GsuSubspace { variance_fraction: p },
                None => LinearMethod::Gsu,
            },
            Method::Hinge => LinearMethod::Hinge,
            Method::Iso => LinearMethod::Iso,
            Method::Sampling => LinearMethod::Sampling { samples: self.samples, seed: self.seed },
            Method::Power => LinearMethod::Power { radius_scale: self.radius_scale },
            Method::Svm => bail!("--method svm is a kernel method: it has no linear parameters"),
            Method::KsvmIgsu => bail!("ksvm-igsu is a kernel method, not a linear one"),
            Method::SqhingeGsu => bail!("sqhinge-gsu has its own parameters (crate::sqhinge::params)"),
            Method::Besvm => bail!("--method besvm has its own parameters (crate::besvm::params)"),
            Method::Svmplus | Method::Rsvmplus => bail!("svmplus/rsvmplus are kernel methods (crate::svm_plus)"),
            Method::Tsvc => bail!("--method tsvc has its own parameters"),
        };
        let solver = match self.solver {
            SolverKind::Exact => {
                Solver::Exact(ExactSettings { tol: self.tol, max_iter: self.max_iter, sigma_floor: self.sigma_floor })
            }
            SolverKind::Sgd => {
                Solver::Sgd(SgdSettings { iterations: self.iterations, batch: self.batch, seed: self.seed })
            }
        };
        Ok(LinearSvmParams { method, lambda, fit_intercept: !self.no_intercept, solver, ..LinearSvmParams::default() })
    }

    /// Loads the training input, applies --weights and --cov-type, and checks for two classes.
    pub fn load(&self, args: &InputArgs) -> Result<Input> {
        if self.weights.is_some() && args.weight_col.is_some() {
            bail!("give the weights by --weights or by --weight-col, not both");
        }
        let mut input = if self.method == Method::Svm && self.kernel.precomputed() {
            args.load_precomputed()?
        } else {
            args.load_as(true, self.cov_type == CovType::Lowrank)?
        };
        check_two_classes(&input)?;
        crate::svm_plus::attach(self, args, &mut input)?;
        if let Some(path) = &self.weights {
            input.dataset.weights = Some(read_weights(path, input.dataset.n_samples())?);
        }
        convert_covariances(&mut input.dataset, self.cov_type);
        Ok(input)
    }
}

#[derive(Args, Debug)]
pub struct TrainArgs {
    #[command(flatten)]
    pub hyper: HyperArgs,
    #[command(flatten)]
    pub input: InputArgs,
    /// Write the model (JSON) to FILE (required; written atomically)
    #[arg(long, value_name = "FILE")]
    pub model: PathBuf,
    /// Also write a training report (JSON) to FILE (default: none)
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Fit Platt scaling on 5-fold cross-validated decision values (binary only; default: off)
    #[arg(long)]
    pub probability: bool,
}

/// REPORT.json (DESIGN 6); `per_class` is an extension present for one-vs-rest models.
#[derive(Serialize)]
struct Report {
    method: String,
    objective: f64,
    n_iter: usize,
    converged: bool,
    gradient_norm: f64,
    train_seconds: f64,
    n_samples: usize,
    n_features: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    per_class: Option<Vec<ClassReport>>,
}

#[derive(Serialize)]
struct ClassReport {
    class: i64,
    objective: f64,
    n_iter: usize,
    converged: bool,
    gradient_norm: f64,
}

/// A spinner with elapsed time on standard error, drawn only on a terminal once the run has lasted a second.
pub fn spinner(message: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
    bar.set_style(ProgressStyle::with_template("{spinner} {msg} ({elapsed})").expect("valid template"));
    bar.set_message(message.to_string());
    if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        let shown = bar.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(1));
            if !shown.is_finished() {
                shown.set_draw_target(ProgressDrawTarget::stderr());
                shown.enable_steady_tick(Duration::from_millis(100));
            }
        });
    }
    bar
}

pub fn run(args: &TrainArgs) -> Result<()> {
    let input = args.hyper.load(&args.input)?;
    let data: &Dataset = &input.dataset;
    crate::fit::check(&args.hyper, data.n_samples())?;
    if args.probability && data.classes().len() != 2 {
        bail!("--probability needs two classes, found {} in {}", data.classes().len(), input.label_source);
    }
    let bar = spinner("training");
    let start = Instant::now();
    let fitted = fit(&args.hyper, data).and_then(|fitted| {
        let train_seconds = start.elapsed().as_secs_f64();
        if !args.probability {
            return Ok((fitted, None, train_seconds));
        }
        bar.set_message("fitting Platt scaling on 5-fold cross-validated decision values");
        let values =
            cross_val_decision_with(data, 5, args.hyper.seed, fit_model(&args.hyper)).context("--probability")?;
        let classes = data.classes();
        let positive: Vec<bool> = data.labels.iter().map(|&y| y == classes[1]).collect();
        let platt = fit_platt(&values, &positive).context("--probability")?.platt;
        Ok((fitted, Some(platt), train_seconds))
    });
    bar.finish_and_clear();
    let (Fitted { model, reports, hyperparameters }, platt, train_seconds) = fitted?;

    let method = method_name(args.hyper.method);
    let mut file = ModelFile::from_model(&model, &method, hyperparameters);
    file.platt = platt;
    let report = args.report.as_ref().map(|_| make_report(&method, model.classes(), &reports, train_seconds, data));
    let report_text = report.map(|r| serde_json::to_string_pretty(&r)).transpose()?;
    write_atomically(&args.model, file.to_json() + "\n")?;
    if let (Some(path), Some(text)) = (&args.report, report_text) {
        write_atomically(path, text + "\n")?;
    }
    Ok(())
}

fn make_report(method: &str, classes: &[i64], reports: &[FitReport], seconds: f64, data: &Dataset) -> Report {
    let per_class = (reports.len() > 1).then(|| {
        reports
            .iter()
            .zip(classes)
            .map(|(r, &class)| ClassReport {
                class,
                objective: r.objective,
                n_iter: r.n_iter,
                converged: r.converged(),
                gradient_norm: r.gradient_norm,
            })
            .collect()
    });
    Report {
        method: method.to_string(),
        objective: reports.iter().map(|r| r.objective).sum(),
        n_iter: reports.iter().map(|r| r.n_iter).sum(),
        converged: reports.iter().all(|r| r.converged()),
        gradient_norm: reports.iter().map(|r| r.gradient_norm).fold(0.0, f64::max),
        train_seconds: seconds,
        n_samples: data.n_samples(),
        n_features: data.n_features(),
        per_class,
    }
}
