//! The method flags of `train` and `cv`, parsed into the core's [`MethodParams`] in one place.
//!
//! Each flag names a field of the registry by its serde name (`--radius-scale` is `radius_scale`), so that
//! the flags, `--params FILE.json` and `cv --grid NAME=...` are one object: [`MethodArgs::params`] starts
//! from the method's defaults (or the file), then sets each flag given on the command line with
//! [`MethodParams::set`], which rejects a flag that is not a field of the chosen method.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use serde_json::{Value, json};
use usvm::params::{METHODS, MethodParams};

use crate::input::CovType;

/// Defaults of every method, from the registry (shown after `train --help` and `cv --help`).
pub fn defaults_help() -> String {
    let mut out = String::from("Methods and their defaults (flag names are field names with - for _):\n");
    for (name, about) in METHODS {
        let p = MethodParams::default_for(name).expect("every method has defaults");
        let fields: Vec<String> = p.fields().iter().map(|(k, v)| format!("{k}={v}")).collect();
        out.push_str(&format!("  {name}: {about}\n      {}\n", fields.join(" ")));
    }
    out.push_str("Optional fields default to null (a data-dependent choice, e.g. γ = 1/n_features).");
    out
}

fn method_name(s: &str) -> Result<String, String> {
    if METHODS.iter().any(|(n, _)| *n == s) {
        Ok(s.to_string())
    } else {
        Err(format!("one of {}", METHODS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")))
    }
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum SolverKind {
    /// Newton with an exact line search and smoothing continuation (L-BFGS for sqhinge-gsu)
    Exact,
    /// Mini-batch SGD (thesis Algorithm 1)
    Sgd,
    /// Newton-CG (sqhinge-gsu with the expected loss)
    Newton,
}

/// The exact solver's route for the plain hinge (Σ = 0).
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteKind {
    /// Chosen from the data; a route that stalls hands over to another (default)
    Auto,
    /// Dual coordinate descent alone (LIBLINEAR -s 3 steps) with exact finishes
    Dual,
    /// Newton on the smoothed hinge alone, with exact finishes (unaffected by feature scaling)
    Primal,
    /// The primal QP over every example by an interior-point method, certified at its first iterate that meets the gap, else made exact (10-30 factorisations of an (n+1)-square matrix, whatever λ and the scaling)
    Qp,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelKind {
    /// xᵀz
    Linear,
    /// exp(-γ‖x - z‖²)
    Rbf,
    /// (γ xᵀz + coef0)^degree
    Polynomial,
    /// Kernel values given in the input, LIBSVM's layout `label 0:i 1:K(i,1) 2:K(i,2) ...` (--data only)
    Precomputed,
}

/// The method and its hyper-parameters, shared by `train` and `cv`.
#[derive(Args, Debug, Clone, Default)]
pub struct MethodArgs {
    /// Method to fit (required unless --params names one)
    #[arg(long, value_parser = method_name, help_heading = "Method")]
    pub method: Option<String>,
    /// The method's parameters as a JSON object {"method": ..., field: value, ...}; flags override it
    #[arg(long, value_name = "FILE.json", help_heading = "Method")]
    pub params: Option<PathBuf>,
    /// Random seed of every randomised part (SGD, sampling, landmarks, basis) and of the CV folds
    #[arg(long, value_name = "N", default_value_t = 0, help_heading = "Method")]
    pub seed: u64,
    /// Covariance form used for training: auto = as read, none drops Σ, iso = (tr Σ/n) I, diag keeps the diagonal, lowrank, full densifies
    #[arg(long = "cov-type", value_enum, default_value_t = CovType::Auto, help_heading = "Method")]
    pub cov_type: CovType,
    /// Per-example weights c_i, one per line, in example order (labels-file order for svm-gsu) (default: all 1)
    #[arg(long, value_name = "FILE", help_heading = "Method")]
    pub weights: Option<PathBuf>,

    /// Regularisation λ in λ/2‖w‖² (default: λ = 0.01 for the λ-form methods, C = 1 for svm, besvm, svmplus, rsvmplus, l2svmplus, rsvm-rhhq, tsvc)
    #[arg(
        long,
        allow_negative_numbers = true,
        value_name = "L",
        conflicts_with = "C",
        help_heading = "Shared by several methods"
    )]
    pub lambda: Option<f64>,
    /// Cost C = 1/(λℓ), ℓ the number of training examples (alternative to --lambda)
    #[arg(
        allow_negative_numbers = true,
        long = "C",
        id = "C",
        value_name = "C",
        help_heading = "Shared by several methods"
    )]
    pub c: Option<f64>,
    /// Fit without an intercept b
    #[arg(long = "no-intercept", help_heading = "Shared by several methods")]
    pub no_intercept: bool,
    /// Solver: exact (default) or sgd; sqhinge-gsu also newton
    #[arg(long, value_enum, help_heading = "Shared by several methods")]
    pub solver: Option<SolverKind>,
    /// Stopping tolerance (relative gradient for Newton/L-BFGS, KKT violation for SMO, relative decrease for TSVC rounds)
    #[arg(long, allow_negative_numbers = true, value_name = "E", help_heading = "Shared by several methods")]
    pub tol: Option<f64>,
    /// Maximum iterations (Newton, L-BFGS, SMO — for kernel TSVC, of each SVM step; besvm also k-medoids; the plain hinge also counts dual coordinate descent's passes over the data)
    #[arg(long = "max-iter", value_name = "N", help_heading = "Shared by several methods")]
    pub max_iter: Option<usize>,
    /// exact: final floor ε on every margin std σ = √(wᵀΣw + ε²); each loss is within ε/√(2π) of the exact one
    #[arg(
        allow_negative_numbers = true,
        long = "sigma-floor",
        value_name = "EPS",
        help_heading = "Shared by several methods"
    )]
    pub sigma_floor: Option<f64>,
    /// exact: stop at this relative duality gap (J − D)/J, a certified bound (plain hinge, Σ = 0; with covariances, the exact finish at the loss' apex stops there) (default 1e-10)
    #[arg(long = "gap-tol", value_name = "E", help_heading = "Shared by several methods")]
    pub gap_tol: Option<f64>,
    /// exact, plain hinge (Σ = 0): the route (default auto; the report's "routes" lists those taken)
    #[arg(long, value_enum, help_heading = "Shared by several methods")]
    pub route: Option<RouteKind>,
    /// sgd: number of iterations T
    #[arg(long, value_name = "T", help_heading = "Shared by several methods")]
    pub iterations: Option<usize>,
    /// sgd: mini-batch size K
    #[arg(long, value_name = "K", help_heading = "Shared by several methods")]
    pub batch: Option<usize>,
    /// Kernel of svm, ksvm-igsu, svmplus, rsvmplus, l2svmplus, rsvm-rhhq (default rbf) and tsvc (default linear)
    #[arg(long, value_enum, help_heading = "Shared by several methods")]
    pub kernel: Option<KernelKind>,
    /// γ of the rbf and polynomial kernels (default: 1/n_features as LIBSVM; svmplus/rsvmplus rbf: 1/mean squared distance)
    #[arg(long, value_name = "G", allow_negative_numbers = true, help_heading = "Shared by several methods")]
    pub gamma: Option<f64>,
    /// Degree of the polynomial kernel (default 3)
    #[arg(long, value_name = "D", help_heading = "Shared by several methods")]
    pub degree: Option<u32>,
    /// coef0 of the polynomial kernel (default 0)
    #[arg(long, value_name = "C0", allow_negative_numbers = true, help_heading = "Shared by several methods")]
    pub coef0: Option<f64>,
    /// power / tsvc alternating: maximum rounds (default 100); rsvm-rhhq: half-quadratic rounds (default 50)
    #[arg(long = "max-rounds", value_name = "N", help_heading = "Shared by several methods")]
    pub max_rounds: Option<usize>,

    /// Learn in per-example subspaces keeping this fraction of the variance, in (0, 1] (default: off)
    #[arg(allow_negative_numbers = true, long = "subspace-variance", value_name = "P", help_heading = "Method gsu")]
    pub subspace_variance: Option<f64>,
    /// Samples drawn per example (default 10)
    #[arg(long, value_name = "N", help_heading = "Method sampling")]
    pub samples: Option<usize>,
    /// Radius scale R: radius R·√(tr Σ / n) (default 1)
    #[arg(allow_negative_numbers = true, long = "radius-scale", value_name = "R", help_heading = "Method power")]
    pub radius_scale: Option<f64>,
    /// Kernel cache size in MB per binary problem, LIBSVM's -m (default 200)
    #[arg(allow_negative_numbers = true, long = "cache-mb", value_name = "MB", help_heading = "Method svm")]
    pub cache_mb: Option<f64>,
    /// Turn the shrinking heuristics off (LIBSVM's -h 0)
    #[arg(long = "no-shrinking", help_heading = "Method svm")]
    pub no_shrinking: bool,
    /// Kernel values in single precision (f32 cache entries, as LIBSVM; default) or double (the problem to the last digit)
    #[arg(long, value_name = "P", value_parser = ["single", "double"], help_heading = "Method svm")]
    pub precision: Option<String>,
    /// More than two classes: one-vs-one (LIBSVM's scheme; default) or one-vs-rest
    #[arg(long, value_name = "M", value_parser = ["ovo", "ovr"], help_heading = "Method svm")]
    pub multiclass: Option<String>,
    /// How the kernel enters: exact (default), nystroem, fourier (rbf only)
    #[arg(long, value_name = "A", value_parser = ["exact", "nystroem", "fourier"], help_heading = "Method ksvm-igsu")]
    pub approximation: Option<String>,
    /// nystroem/fourier: number of landmarks / frequencies (default 500)
    #[arg(long, value_name = "M", help_heading = "Method ksvm-igsu")]
    pub components: Option<usize>,
    /// The squared-hinge loss: thesis (eq. 5.11, non-convex) or expected (default, convex)
    #[arg(long, value_name = "L", value_parser = ["thesis", "expected"], help_heading = "Method sqhinge-gsu")]
    pub loss: Option<String>,
    /// Similarity measure(s), repeatable or comma-separated: linear, rbf[:GAMMA] (default γ = 1/(d·Var x)), rigid[:H], deformable[:H[:HL]] (default rbf)
    #[arg(long, value_name = "S", value_delimiter = ',', help_heading = "Method besvm")]
    pub similarity: Vec<String>,
    /// Default global shift range H (cells) of rigid and deformable (default 1)
    #[arg(long, value_name = "H", help_heading = "Method besvm")]
    pub shift: Option<usize>,
    /// Default local shift range HL (cells) of deformable (default 1)
    #[arg(long = "local-shift", value_name = "HL", help_heading = "Method besvm")]
    pub local_shift: Option<usize>,
    /// Grid shape of each input, HxWxC cells × channels, row-major, channels innermost (HxW: one channel)
    #[arg(long = "shape", value_name = "HxWxC", help_heading = "Method besvm")]
    pub shape: Option<String>,
    /// Number of basis vectors: N, a fraction F in (0, 1], or P% of the training set (default: all)
    #[arg(long = "basis-size", value_name = "N|F|P%", help_heading = "Method besvm")]
    pub basis_size: Option<String>,
    /// Basis selection: random (default), index, kmedoids, nystroem
    #[arg(long = "basis-selection", value_name = "S", value_parser = ["random", "index", "kmedoids", "nystroem"], help_heading = "Method besvm")]
    pub basis_selection: Option<String>,
    /// Privileged features x*, one row per training example, in the main input's format
    #[arg(long, value_name = "FILE", help_heading = "Methods svmplus, rsvmplus, l2svmplus")]
    pub privileged: Option<PathBuf>,
    /// ρ > 0, the weight of ‖w*‖² (default 1; svmplus: ρ → 0 gives the plain SVM)
    #[arg(
        long,
        allow_negative_numbers = true,
        value_name = "R",
        help_heading = "Methods svmplus, rsvmplus, l2svmplus"
    )]
    pub rho: Option<f64>,
    /// γ* of the Gaussian kernel k* on x* (default: 1/D*, D* the mean squared distance)
    #[arg(
        long = "gamma-star",
        value_name = "G",
        allow_negative_numbers = true,
        help_heading = "Methods svmplus, rsvmplus, l2svmplus"
    )]
    pub gamma_star: Option<f64>,
    /// λ ≥ 0, the weight of the robust gradient regulariser (default 0.1)
    #[arg(allow_negative_numbers = true, long = "robust-lambda", value_name = "L", help_heading = "Method rsvmplus")]
    pub robust_lambda: Option<f64>,
    /// σ' > 0, the box α ≤ σ'C (default 1)
    #[arg(allow_negative_numbers = true, long = "sigma-prime", value_name = "S", help_heading = "Method rsvmplus")]
    pub sigma_prime: Option<f64>,
    /// η > 0, the scale of the rescaled hinge β[1 − exp(−η·hinge)] (default 1; η → 0: the hinge SVM)
    #[arg(allow_negative_numbers = true, long, value_name = "E", help_heading = "Method rsvm-rhhq")]
    pub eta: Option<f64>,
    /// Each half-quadratic round's SVM: bound on the SMO's KKT violation (default 1e-6; --tol is the rounds' relative decrease)
    #[arg(allow_negative_numbers = true, long = "svm-tol", value_name = "E", help_heading = "Method rsvm-rhhq")]
    pub svm_tol: Option<f64>,
    /// Start of the half-quadratic rounds: svm (the C-SVM, default), zero (f = 0) or best (both, the lower objective kept)
    #[arg(long = "hq-start", value_name = "START", value_parser = ["svm", "zero", "best"], help_heading = "Method rsvm-rhhq")]
    pub hq_start: Option<String>,
    /// One uncertainty bound δ ≥ 0 for every example (default 0)
    #[arg(
        long,
        value_name = "D",
        conflicts_with = "delta_file",
        allow_negative_numbers = true,
        help_heading = "Method tsvc"
    )]
    pub delta: Option<f64>,
    /// Per-example bounds δ_i, one per line, in example order
    #[arg(long = "delta-file", value_name = "FILE", help_heading = "Method tsvc")]
    pub delta_file: Option<PathBuf>,
    /// Solution method: alternating (default; any kernel) or socp (linear kernel, certified by the dual)
    #[arg(long, value_name = "F", value_parser = ["alternating", "socp"], help_heading = "Method tsvc")]
    pub form: Option<String>,
    /// socp: solve eq. 8 for this fixed bound ‖w‖ ≤ G instead of eq. 7 for C
    #[arg(allow_negative_numbers = true, long = "norm-bound", value_name = "G", help_heading = "Method tsvc")]
    pub norm_bound: Option<f64>,
}

impl MethodArgs {
    /// The flags given, as (flag, field, value): variant choices first, so that their fields exist when set.
    fn given(&self) -> Result<Vec<(&'static str, &'static str, Value)>> {
        fn name<V: ValueEnum>(v: &V) -> Value {
            Value::String(v.to_possible_value().expect("no skipped variants").get_name().to_string())
        }
        let mut out: Vec<(&'static str, &'static str, Option<Value>)> = vec![
            ("--solver", "solver", self.solver.map(|s| name(&s))),
            ("--kernel", "kernel", self.kernel.map(|k| name(&k))),
            ("--approximation", "approximation", self.approximation.clone().map(Value::String)),
            ("--form", "form", self.form.clone().map(Value::String)),
            ("--lambda", "lambda", self.lambda.map(|v| json!(v))),
            ("--C", "C", self.c.map(|v| json!(v))),
            ("--no-intercept", "fit_intercept", self.no_intercept.then_some(json!(false))),
            ("--tol", "tol", self.tol.map(|v| json!(v))),
            ("--max-iter", "max_iter", self.max_iter.map(|v| json!(v))),
            ("--sigma-floor", "sigma_floor", self.sigma_floor.map(|v| json!(v))),
            ("--gap-tol", "gap_tol", self.gap_tol.map(|v| json!(v))),
            ("--route", "route", self.route.map(|r| if r == RouteKind::Auto { Value::Null } else { name(&r) })),
            ("--iterations", "iterations", self.iterations.map(|v| json!(v))),
            ("--batch", "batch", self.batch.map(|v| json!(v))),
            ("--gamma", "gamma", self.gamma.map(|v| json!(v))),
            ("--degree", "degree", self.degree.map(|v| json!(v))),
            ("--coef0", "coef0", self.coef0.map(|v| json!(v))),
            ("--max-rounds", "max_rounds", self.max_rounds.map(|v| json!(v))),
            ("--subspace-variance", "subspace_variance", self.subspace_variance.map(|v| json!(v))),
            ("--samples", "samples", self.samples.map(|v| json!(v))),
            ("--radius-scale", "radius_scale", self.radius_scale.map(|v| json!(v))),
            ("--cache-mb", "cache_mb", self.cache_mb.map(|v| json!(v))),
            ("--no-shrinking", "shrinking", self.no_shrinking.then_some(json!(false))),
            ("--precision", "precision", self.precision.clone().map(Value::String)),
            ("--multiclass", "multiclass", self.multiclass.clone().map(Value::String)),
            ("--components", "components", self.components.map(|v| json!(v))),
            ("--loss", "loss", self.loss.clone().map(Value::String)),
            ("--similarity", "similarity", (!self.similarity.is_empty()).then(|| json!(self.similarity))),
            ("--shift", "shift", self.shift.map(|v| json!(v))),
            ("--local-shift", "local_shift", self.local_shift.map(|v| json!(v))),
            ("--shape", "shape", self.shape.clone().map(Value::String)),
            ("--basis-size", "basis_size", self.basis_size.clone().map(Value::String)),
            ("--basis-selection", "basis_selection", self.basis_selection.clone().map(Value::String)),
            ("--rho", "rho", self.rho.map(|v| json!(v))),
            ("--gamma-star", "gamma_star", self.gamma_star.map(|v| json!(v))),
            ("--robust-lambda", "robust_lambda", self.robust_lambda.map(|v| json!(v))),
            ("--sigma-prime", "sigma_prime", self.sigma_prime.map(|v| json!(v))),
            ("--eta", "eta", self.eta.map(|v| json!(v))),
            ("--svm-tol", "svm_tol", self.svm_tol.map(|v| json!(v))),
            ("--hq-start", "start", self.hq_start.clone().map(Value::String)),
            ("--delta", "delta", self.delta.map(|v| json!(v))),
            ("--norm-bound", "norm_bound", self.norm_bound.map(|v| json!(v))),
        ];
        out.retain(|(_, _, v)| v.is_some());
        out.into_iter()
            .map(|(flag, field, v)| match v.expect("retained") {
                // serde_json writes NaN and ±∞ as null (the automatic route is the registry's null).
                Value::Null if flag != "--route" => bail!("invalid value for '{flag}': must be finite"),
                v => Ok((flag, field, v)),
            })
            .collect()
    }

    /// An invalid parameter named as the user gave it: the flag if it was given on the command line, else the
    /// field of `--params` (or of the defaults).
    pub fn explain(&self, e: usvm::Error) -> anyhow::Error {
        let usvm::Error::InvalidParameter { name, value, reason } = e else { return e.into() };
        let given = self.given().unwrap_or_default();
        let flags: Vec<&str> =
            given.iter().filter(|(_, field, _)| name.split('/').any(|n| n == *field)).map(|(flag, ..)| *flag).collect();
        match &self.params {
            _ if !flags.is_empty() => anyhow::anyhow!("invalid value '{value}' for '{}': {reason}", flags.join("/")),
            Some(path) => anyhow::anyhow!("{}: invalid {name} = {value}: {reason}", path.display()),
            None => anyhow::anyhow!("invalid {name} = {value}: {reason}"),
        }
    }

    /// The registry parameters: `--params` (if any), `--method`, then every flag given.
    pub fn params(&self) -> Result<MethodParams> {
        let mut json = match &self.params {
            Some(path) => {
                crate::commit::settle(path)?;
                let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
                usvm::json::parse_json(&text).with_context(|| format!("{}: not valid JSON", path.display()))?
            }
            None => json!({}),
        };
        if !json.is_object() {
            bail!(
                "{}: the parameters must be a JSON object",
                self.params.as_ref().map_or(String::new(), |p| p.display().to_string())
            );
        }
        if let Some(m) = &self.method {
            if let Some(other) = json.get("method").and_then(Value::as_str)
                && other != m
            {
                bail!("--method {m} and the method {other:?} of --params disagree");
            }
            json["method"] = Value::String(m.clone());
        }
        if json.get("method").is_none() {
            bail!("give --method (or --params FILE.json with a \"method\")");
        }
        let source = self.params.as_ref().map_or("--method".to_string(), |p| p.display().to_string());
        let mut params = MethodParams::from_value(&json).with_context(|| source.clone())?;
        let besvm = params.name() == "besvm";
        for (flag, field, value) in self.given()? {
            if besvm && flag == "--gamma" {
                continue;
            }
            params.set(field, &value).map_err(|e| match e {
                usvm::Error::Params(msg) if msg.contains("has no field") => {
                    anyhow::anyhow!("{flag} does not apply to --method {} (with these choices)", params.name())
                }
                e => anyhow::anyhow!("invalid value for '{flag}': {e}"),
            })?;
        }
        match self.gamma {
            Some(gamma) if besvm => rbf_gamma(params, gamma),
            _ => Ok(params),
        }
    }
}

/// BE-SVM's `--gamma G`: the γ of its rbf similarity (`--similarity rbf:G`, the default similarity).
fn rbf_gamma(params: MethodParams, gamma: f64) -> Result<MethodParams> {
    let mut json = params.to_json();
    let measures: Vec<String> = serde_json::from_value(json["similarity"].clone())?;
    let rbf = |m: &str| m == "rbf" || m.starts_with("rbf:");
    if !measures.iter().any(|m| rbf(m)) {
        bail!(
            "--gamma sets the γ of the rbf similarity, but the similarities are {measures:?}: add rbf:{gamma} to \
             --similarity instead"
        );
    }
    let with_gamma = |m: String| if rbf(&m) { format!("rbf:{gamma}") } else { m };
    json["similarity"] = json!(measures.into_iter().map(with_gamma).collect::<Vec<_>>());
    Ok(MethodParams::from_value(&json)?)
}
