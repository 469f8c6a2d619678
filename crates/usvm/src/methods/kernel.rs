//! The kernel methods: the kernel SVM (`svm`, C-SVC by SMO), KSVM-iGSU (`ksvm-igsu`, thesis ch. 4) and
//! the rescaled-hinge robust SVM (`rsvm-rhhq`, paper 004's baseline).

use serde::{Deserialize, Serialize};

use super::{Fit, FitOptions, KernelChoice, LinearSolver, Regularization, SvmKernel, positive};
use crate::data::Dataset;
use crate::error::{Result, invalid};
use crate::kernel::cache::Precision;
use crate::model::{Model, Multiclass};
use crate::progress::Monitor;
use crate::report::FitReport;
use crate::svm::{Approximation, HqStart, KernelIgsuParams, KernelSvmParams, RescaledHingeParams};

/// `γ`'s default for the kernel methods: `1/n_features`, as LIBSVM.
pub(crate) fn default_gamma(data: &Dataset) -> f64 {
    1.0 / data.n_features().max(1) as f64
}

/// The kernel SVM (C-SVC by SMO, LIBSVM's design) with per-example costs `C·c_i`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Svm {
    /// `C` (default 1) or `λ`.
    pub regularization: Regularization,
    /// The kernel (`γ` default `1/n_features`), or precomputed kernel values.
    pub kernel: SvmKernel,
    /// Stop when the maximal KKT violation is at most this (LIBSVM's `-e`, default 0.001 as LIBSVM and `SVC`).
    pub tol: f64,
    /// Kernel cache in megabytes per binary problem (LIBSVM's `-m`).
    pub cache_mb: f64,
    /// Shrinking heuristics (LIBSVM's `-h`).
    pub shrinking: bool,
    /// Maximum SMO iterations per binary problem; 0: `max(10⁷, 100ℓ)`.
    pub max_iter: usize,
    /// Kernel values in `"single"` precision (`f32` cache entries, as LIBSVM; the default) or `"double"`.
    pub precision: Precision,
    /// More than two classes: `"ovo"` (one-vs-one, LIBSVM's and scikit-learn's scheme; the default) or
    /// `"ovr"` (one-vs-rest).
    pub multiclass: Multiclass,
}

impl Default for Svm {
    fn default() -> Self {
        Svm {
            regularization: Regularization::C(1.0),
            kernel: SvmKernel::default(),
            tol: 1e-3,
            cache_mb: 200.0,
            shrinking: true,
            max_iter: 0,
            precision: Precision::Single,
            multiclass: Multiclass::OneVsOne,
        }
    }
}

impl Svm {
    pub(crate) fn validate(&self, n_samples: usize) -> Result<()> {
        self.regularization.c(n_samples)?;
        positive("tol", self.tol)?;
        positive("cache_mb", self.cache_mb)?;
        self.kernel.resolve(1.0).map(|_| ())
    }

    pub(crate) fn fit(&self, data: &Dataset, opts: &FitOptions) -> Result<Fit> {
        let params = KernelSvmParams {
            kernel: self.kernel.resolve(default_gamma(data))?,
            c: self.regularization.c(data.n_samples())?,
            tol: self.tol,
            cache_mb: self.cache_mb,
            max_iter: self.max_iter,
            shrinking: self.shrinking,
            precision: self.precision,
            multiclass: self.multiclass,
        };
        fit_svm(&params, data, opts.monitor())
    }
}

/// The C-SVM of `params` on `data` as the registry's `svm` method fits it: the model, one report per
/// binary problem, the support vectors' training indices.
pub(crate) fn fit_svm(params: &KernelSvmParams, data: &Dataset, monitor: Monitor<'_>) -> Result<Fit> {
    let fit = params.fit_monitored(data, monitor)?;
    let reports = fit
        .reports
        .iter()
        .map(|r| FitReport {
            objective: r.objective,
            n_iter: r.n_iter,
            termination: r.termination,
            gradient_norm: r.max_violation,
            initial_gradient_norm: None,
            sigma_floor: None,
            objective_trace: Vec::new(),
            duality_gap: None,
            rounds: 0,
            norm_bound: None,
            fallback: None,
            routes: Vec::new(),
            degenerate: false,
        })
        .collect();
    Ok(Fit { model: Model::Kernel(fit.model), reports, support: Some(fit.support) })
}

/// How KSVM-iGSU's kernel enters; the landmarks and frequencies are drawn with [`FitOptions::seed`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "name", rename_all = "snake_case")]
pub enum KernelApproximation {
    /// The exact Gram matrix (pivoted Cholesky factor; cached Gram for SGD).
    Exact,
    /// Nyström features on `components` landmarks (any kernel).
    Nystroem {
        /// Number of landmarks.
        #[serde(default = "default_components")]
        components: usize,
    },
    /// Random Fourier features, `components` frequencies (RBF only).
    Fourier {
        /// Number of frequencies.
        #[serde(default = "default_components")]
        components: usize,
    },
}

fn default_components() -> usize {
    500
}

/// KSVM-iGSU / RD-KSVM-iGSU: the kernel SVM for isotropic Gaussians `σ_i² I` (`σ_i² = tr Σ_i / n`),
/// relevance degrees from the example weights.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KsvmIgsu {
    /// `λ` (default 0.01) or `C`.
    pub regularization: Regularization,
    /// Fit an intercept `b`.
    pub fit_intercept: bool,
    /// The kernel (`γ` default `1/n_features`).
    pub kernel: KernelChoice,
    /// The solver (the exact solver's `sigma_floor` is not used).
    pub solver: LinearSolver,
    /// How the kernel enters.
    pub approximation: KernelApproximation,
}

impl Default for KsvmIgsu {
    fn default() -> Self {
        KsvmIgsu {
            regularization: Regularization::Lambda(1e-2),
            fit_intercept: true,
            kernel: KernelChoice::default(),
            solver: LinearSolver::default(),
            approximation: KernelApproximation::Exact,
        }
    }
}

impl KsvmIgsu {
    pub(crate) fn validate(&self, n_samples: usize) -> Result<()> {
        self.regularization.lambda(n_samples)?;
        if let KernelApproximation::Nystroem { components: 0 } | KernelApproximation::Fourier { components: 0 } =
            self.approximation
        {
            return Err(invalid("components", 0, "must be at least 1"));
        }
        super::linear::Linear { regularization: self.regularization, fit_intercept: true, solver: self.solver }
            .validate(n_samples)?;
        self.kernel.resolve(1.0).map(|_| ())
    }

    pub(crate) fn fit(&self, data: &Dataset, opts: &FitOptions) -> Result<Fit> {
        let seed = opts.seed;
        let params = KernelIgsuParams {
            kernel: self.kernel.resolve(default_gamma(data))?,
            lambda: self.regularization.lambda(data.n_samples())?,
            fit_intercept: self.fit_intercept,
            solver: self.solver.solver(seed),
            approximation: match self.approximation {
                KernelApproximation::Exact => Approximation::Exact,
                KernelApproximation::Nystroem { components } => Approximation::Nystroem { components, seed },
                KernelApproximation::Fourier { components } => Approximation::Fourier { components, seed },
            },
        };
        let fit = params.fit_monitored(data, opts.monitor())?;
        Ok(Fit::new(fit.model, fit.reports))
    }
}

/// RSVM-RHHQ (Xu et al. 2016; paper 004's baseline): the kernel SVM with the rescaled hinge loss
/// `β[1 − exp(−η·hinge)]`, fitted by half-quadratic rounds of weighted SVMs
/// ([`crate::svm::rescaled_hinge`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RsvmRhhq {
    /// `C` (default 1) or `λ`.
    pub regularization: Regularization,
    /// The kernel (`γ` default `1/n_features`).
    pub kernel: KernelChoice,
    /// `η > 0`, the scale of the rescaled hinge (`η → 0`: the hinge SVM).
    pub eta: f64,
    /// Maximum half-quadratic rounds (weighted SVMs).
    pub max_rounds: usize,
    /// Stop when a round lowers the objective by at most `tol·J`.
    pub tol: f64,
    /// Each SVM's bound on the SMO's KKT violation.
    pub svm_tol: f64,
    /// Each SVM's SMO iteration limit; 0: `max(10⁷, 100ℓ)`.
    pub max_iter: usize,
    /// Where the half-quadratic rounds start: `"svm"` (the C-SVM), `"zero"` (`f = 0`) or `"best"`.
    pub start: HqStart,
}

impl Default for RsvmRhhq {
    fn default() -> Self {
        let s = RescaledHingeParams::default();
        RsvmRhhq {
            regularization: Regularization::C(s.c),
            kernel: KernelChoice::default(),
            eta: s.eta,
            max_rounds: s.max_rounds,
            tol: s.tol,
            svm_tol: s.smo.tol,
            max_iter: s.smo.max_iter,
            start: s.start,
        }
    }
}

impl RsvmRhhq {
    fn params(&self, n_samples: usize, default_gamma: f64) -> Result<RescaledHingeParams> {
        positive("eta", self.eta)?;
        positive("tol", self.tol)?;
        positive("svm_tol", self.svm_tol)?;
        if self.max_rounds == 0 {
            return Err(invalid("max_rounds", 0, "must be at least 1"));
        }
        let base = RescaledHingeParams::default();
        Ok(RescaledHingeParams {
            kernel: self.kernel.resolve(default_gamma)?,
            c: self.regularization.c(n_samples)?,
            eta: self.eta,
            max_rounds: self.max_rounds,
            tol: self.tol,
            smo: crate::solver::smo::SmoSettings { tol: self.svm_tol, max_iter: self.max_iter, ..base.smo },
            start: self.start,
        })
    }

    pub(crate) fn validate(&self, n_samples: usize) -> Result<()> {
        self.params(n_samples, 1.0).map(|_| ())
    }

    pub(crate) fn fit(&self, data: &Dataset, opts: &FitOptions) -> Result<Fit> {
        let fit = self.params(data.n_samples(), default_gamma(data))?.fit_monitored(data, opts.monitor())?;
        Ok(Fit::new(Model::Kernel(fit.model), fit.reports))
    }
}
