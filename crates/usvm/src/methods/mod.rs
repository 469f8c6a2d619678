//! The methods of the registry ([`crate::params::MethodParams`]): one module per family, each holding
//! its plain-data parameters (serde, `Default` = the defaults of `usvm train`) and its `fit`, which
//! converts them into the family's solver settings. Shared here: the regularisation, the linear solvers,
//! the kernel choice, the fit options and the fitted result.

pub mod besvm;
pub mod kernel;
pub mod linear;
pub mod logistic;
pub mod lupi;
pub mod sqhinge;
pub mod tsvc;

use serde::{Deserialize, Serialize};

use crate::error::{Result, invalid};
use crate::kernel::Kernel;
use crate::model::Model;
use crate::report::FitReport;
use crate::solver::exact::ExactSettings;
use crate::solver::pegasos::SgdSettings;

use crate::progress::Monitor;
pub use crate::progress::{Observer, Progress};

/// The weight of the regulariser, as `λ` in `λ/2‖w‖² + (1/Σc) Σ c_i L_i` or as the cost `C` in
/// `½‖w‖² + C Σ c_i L_i`; the two are one problem for `C = 1/(λ Σc)` (`Σc = ℓ`, the number of training
/// examples, without weights). [`crate::fit()`] rescales the weights to mean one when `λ` is given, so the
/// solvers see `(1/ℓ) Σ c_i L_i` and `C = 1/(λℓ)` below.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Regularization {
    /// `λ > 0`.
    #[serde(rename = "lambda")]
    Lambda(f64),
    /// `C > 0`.
    C(f64),
}

impl Regularization {
    fn checked(self) -> Result<Self> {
        let (name, v) = match self {
            Regularization::Lambda(v) => ("lambda", v),
            Regularization::C(v) => ("C", v),
        };
        if !(v > 0.0 && v.is_finite()) {
            return Err(invalid(name, v, "must be positive and finite"));
        }
        Ok(self)
    }

    /// `λ` for `n_samples` training examples.
    pub fn lambda(self, n_samples: usize) -> Result<f64> {
        Ok(match self.checked()? {
            Regularization::Lambda(l) => l,
            Regularization::C(c) => 1.0 / (c * n_samples.max(1) as f64),
        })
    }

    /// `C` for `n_samples` training examples.
    pub fn c(self, n_samples: usize) -> Result<f64> {
        Ok(match self.checked()? {
            Regularization::C(c) => c,
            Regularization::Lambda(l) => 1.0 / (l * n_samples.max(1) as f64),
        })
    }
}

/// Mini-batch SGD (thesis Algorithm 1); its seed is [`FitOptions::seed`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SgdParams {
    /// `T`, the number of iterations.
    pub iterations: usize,
    /// `k`, the mini-batch size.
    pub batch: usize,
}

impl Default for SgdParams {
    fn default() -> Self {
        let s = SgdSettings::default();
        SgdParams { iterations: s.iterations, batch: s.batch }
    }
}

impl SgdParams {
    pub(crate) fn settings(self, seed: u64) -> SgdSettings {
        SgdSettings { iterations: self.iterations, batch: self.batch, seed }
    }
}

/// The solver of the linear objective.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "name", rename_all = "snake_case")]
pub enum LinearSolver {
    /// Newton-CG with an exact line search and a vanishing floor on `σ_i` (`solver::exact`).
    Exact(ExactSettings),
    /// Mini-batch SGD.
    Sgd(SgdParams),
}

impl Default for LinearSolver {
    fn default() -> Self {
        LinearSolver::Exact(ExactSettings::default())
    }
}

impl LinearSolver {
    pub(crate) fn solver(self, seed: u64) -> crate::svm::Solver {
        match self {
            LinearSolver::Exact(s) => crate::svm::Solver::Exact(s),
            LinearSolver::Sgd(s) => crate::svm::Solver::Sgd(s.settings(seed)),
        }
    }
}

/// A kernel whose `γ` may be left to the method's data-dependent default (`None`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum KernelChoice {
    /// `xᵀz`.
    Linear,
    /// `exp(-γ‖x - z‖²)`.
    Rbf {
        /// `γ > 0`; `None`: the method's default.
        #[serde(default)]
        gamma: Option<f64>,
    },
    /// `(γ xᵀz + coef0)^degree`.
    Polynomial {
        /// `γ > 0`; `None`: the method's default.
        #[serde(default)]
        gamma: Option<f64>,
        /// The constant `coef0`.
        #[serde(default)]
        coef0: f64,
        /// The degree (at least 1).
        #[serde(default = "default_degree")]
        degree: u32,
    },
}

/// The kernel SVM's kernel: a [`KernelChoice`], or kernel values given as the input rows (LIBSVM's
/// precomputed layout) — a choice only the SVM has, since the other kernel methods need the features.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SvmKernel {
    /// `{"type": "precomputed"}`.
    Precomputed(Precomputed),
    /// A kernel of the features.
    Features(KernelChoice),
}

/// The tag of [`SvmKernel::Precomputed`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Precomputed {
    /// Kernel values given as the input rows.
    Precomputed,
}

impl Default for SvmKernel {
    fn default() -> Self {
        SvmKernel::Features(KernelChoice::default())
    }
}

impl SvmKernel {
    /// The kernel, `γ` defaulting to `default_gamma`; validated.
    pub fn resolve(self, default_gamma: f64) -> Result<Kernel> {
        match self {
            SvmKernel::Precomputed(_) => Ok(Kernel::Precomputed),
            SvmKernel::Features(k) => k.resolve(default_gamma),
        }
    }
}

fn default_degree() -> u32 {
    3
}

impl Default for KernelChoice {
    fn default() -> Self {
        KernelChoice::Rbf { gamma: None }
    }
}

impl KernelChoice {
    /// The kernel, `γ` defaulting to `default_gamma`; validated.
    pub fn resolve(self, default_gamma: f64) -> Result<Kernel> {
        let kernel = match self {
            KernelChoice::Linear => Kernel::Linear,
            KernelChoice::Rbf { gamma } => Kernel::Rbf { gamma: gamma.unwrap_or(default_gamma) },
            KernelChoice::Polynomial { gamma, coef0, degree } => {
                Kernel::Polynomial { gamma: gamma.unwrap_or(default_gamma), coef0, degree }
            }
        };
        kernel.validate()?;
        Ok(kernel)
    }

    /// The given `γ`, if any.
    pub fn gamma(self) -> Option<f64> {
        match self {
            KernelChoice::Rbf { gamma } | KernelChoice::Polynomial { gamma, .. } => gamma,
            KernelChoice::Linear => None,
        }
    }
}

/// How to run a fit: threads, the seed of every randomised part, and an observer.
#[derive(Clone, Copy, Default)]
pub struct FitOptions<'a> {
    /// Worker threads (`None`: rayon's global pool, one per core).
    pub threads: Option<usize>,
    /// The seed of every randomised part (SGD, sampling, landmarks, basis selection): same seed, same bits.
    pub seed: u64,
    /// Progress events, if anyone listens.
    pub observer: Option<&'a dyn Observer>,
    /// A warm start: a model of the same classes and features (e.g. the solution for a nearby `λ` on a
    /// regularisation path). `gsu`, `iso`, `sampling`, `sqhinge-gsu` and `logistic` start their exact
    /// (Newton, L-BFGS) solvers from its hyperplanes, `power` its rounds, `besvm` its Newton solver when the
    /// map it fits is the start's; the dual and stochastic solvers, other methods, and a model that does not
    /// match ignore it. The optimum and the stopping rule are those of a cold start.
    pub start: Option<&'a Model>,
}

impl std::fmt::Debug for FitOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FitOptions")
            .field("threads", &self.threads)
            .field("seed", &self.seed)
            .field("observer", &self.observer.is_some())
            .field("start", &self.start.is_some())
            .finish()
    }
}

impl FitOptions<'_> {
    pub(crate) fn emit(&self, event: Progress<'_>) {
        if let Some(o) = self.observer {
            o.observe(event);
        }
    }

    /// The solvers' handle on [`Self::observer`].
    pub(crate) fn monitor(&self) -> Monitor<'_> {
        Monitor::new(self.observer)
    }
}

/// A fitted model and one report per binary problem (one, or one per class for one-vs-rest).
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    /// The fitted classifier.
    pub model: Model,
    /// One report per binary problem.
    pub reports: Vec<FitReport>,
    /// The training indices of the kernel model's support vectors, in the model's order, where the method
    /// selects them from the training rows (the SVM); `None` otherwise.
    pub support: Option<Vec<usize>>,
}

impl Fit {
    /// A fit without support indices.
    pub(crate) fn new(model: Model, reports: Vec<FitReport>) -> Self {
        Fit { model, reports, support: None }
    }

    /// `Converged` if every binary problem converged, else the first failure.
    pub fn termination(&self) -> crate::report::Termination {
        crate::report::overall(&self.reports)
    }
}

/// `Err` unless `v > 0` and finite.
pub(crate) fn positive(name: &'static str, v: f64) -> Result<()> {
    if v > 0.0 && v.is_finite() { Ok(()) } else { Err(invalid(name, v, "must be positive and finite")) }
}

/// `Err` unless `v ≥ 0` and finite.
pub(crate) fn non_negative(name: &'static str, v: f64) -> Result<()> {
    if v >= 0.0 && v.is_finite() { Ok(()) } else { Err(invalid(name, v, "must be finite and non-negative")) }
}
