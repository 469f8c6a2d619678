//! Learning using privileged information: SVM+ (`svmplus`) and R-SVM+ (`rsvmplus`), fitted by
//! [`crate::svm::SvmPlusParams`], and L2-SVM+ (`l2svmplus`), fitted by [`crate::svm::L2SvmPlusParams`], on
//! a dataset with privileged features.
//!
//! Without privileged features (`data.privileged` is `None`) the three fit the plain C-SVM with their `C`,
//! kernel `k`, `tol` and `max_iter` (`without_privileged`); the edges say so (Python warns with
//! `usvm.NoPrivilegedInformationWarning`; the CLI asks for `--privileged`).

use serde::{Deserialize, Serialize};

use super::{Fit, FitOptions, KernelChoice, Regularization, non_negative, positive};
use crate::data::Dataset;
use crate::error::Result;
use crate::kernel::Kernel;
use crate::model::Model;
use crate::solver::svmplus_qp::QpSettings;
use crate::svm::svm_plus::default_gaussian;
use crate::svm::{KernelSvmParams, LupiMethod, SvmPlusParams};

/// SVM+ (paper 004 eq. 2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SvmPlus {
    /// `C` (default 1) or `λ`.
    pub regularization: Regularization,
    /// The kernel `k` on `x` (an RBF without `γ`: `γ = 1/D`, D the mean squared distance between rows;
    /// a polynomial without `γ`: `1/n_features`).
    pub kernel: KernelChoice,
    /// `γ*` of the Gaussian `k*` on `x*` (`None`: `1/D*`).
    pub gamma_star: Option<f64>,
    /// `ρ > 0`, the weight of `‖w*‖²`.
    pub rho: f64,
    /// Stop when the KKT violation is at most this.
    pub tol: f64,
    /// Maximum SMO steps.
    pub max_iter: usize,
}

impl Default for SvmPlus {
    fn default() -> Self {
        SvmPlus {
            regularization: Regularization::C(1.0),
            kernel: KernelChoice::default(),
            gamma_star: None,
            rho: 1.0,
            tol: 1e-6,
            max_iter: QpSettings::default().max_iter,
        }
    }
}

impl SvmPlus {
    /// The solver settings of `method` for `n_samples` examples of `n_features` features.
    fn params(&self, method: LupiMethod, n_samples: usize, n_features: usize) -> Result<SvmPlusParams> {
        let c = self.regularization.c(n_samples)?;
        positive("rho", self.rho)?;
        positive("tol", self.tol)?;
        let kernel = match self.kernel {
            KernelChoice::Rbf { gamma: None } => None,
            k => Some(k.resolve(1.0 / n_features.max(1) as f64)?),
        };
        let kernel_star = match self.gamma_star {
            Some(g) => {
                positive("gamma_star", g)?;
                Some(Kernel::Rbf { gamma: g })
            }
            None => None,
        };
        let qp = QpSettings { tol: self.tol, max_iter: self.max_iter };
        Ok(SvmPlusParams { method, c, rho: self.rho, kernel, kernel_star, qp })
    }

    pub(crate) fn validate(&self, n_samples: usize) -> Result<()> {
        self.params(LupiMethod::SvmPlus, n_samples, 1).map(|_| ())
    }

    pub(crate) fn fit_as(&self, method: LupiMethod, data: &Dataset, opts: &FitOptions) -> Result<Fit> {
        if data.privileged.is_none() {
            return without_privileged(self.regularization, self.kernel, self.tol, self.max_iter, data, opts);
        }
        let fit = self.params(method, data.n_samples(), data.n_features())?.fit_monitored(data, opts.monitor())?;
        Ok(Fit::new(Model::Kernel(fit.model), fit.reports))
    }

    pub(crate) fn fit(&self, data: &Dataset, opts: &FitOptions) -> Result<Fit> {
        self.fit_as(LupiMethod::SvmPlus, data, opts)
    }
}

/// R-SVM+ (paper 004 eq. 15): SVM+ with the robust gradient regulariser.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RsvmPlus {
    /// `C` (default 1) or `λ`.
    pub regularization: Regularization,
    /// The kernel `k` on `x` (defaults as SVM+).
    pub kernel: KernelChoice,
    /// `γ*` of the Gaussian `k*` on `x*` (`None`: `1/D*`).
    pub gamma_star: Option<f64>,
    /// `ρ > 0`, the weight of `‖w*‖²`.
    pub rho: f64,
    /// `λ ≥ 0`, the weight of the robust gradient regulariser.
    pub robust_lambda: f64,
    /// `σ' > 0`, the box `α ≤ σ'C`.
    pub sigma_prime: f64,
    /// Stop when the KKT violation is at most this.
    pub tol: f64,
    /// Maximum SMO steps.
    pub max_iter: usize,
}

impl Default for RsvmPlus {
    fn default() -> Self {
        let s = SvmPlus::default();
        RsvmPlus {
            regularization: s.regularization,
            kernel: s.kernel,
            gamma_star: s.gamma_star,
            rho: s.rho,
            robust_lambda: 0.1,
            sigma_prime: 1.0,
            tol: s.tol,
            max_iter: s.max_iter,
        }
    }
}

impl RsvmPlus {
    fn svm_plus(&self) -> SvmPlus {
        SvmPlus {
            regularization: self.regularization,
            kernel: self.kernel,
            gamma_star: self.gamma_star,
            rho: self.rho,
            tol: self.tol,
            max_iter: self.max_iter,
        }
    }

    fn method(&self) -> Result<LupiMethod> {
        non_negative("robust_lambda", self.robust_lambda)?;
        positive("sigma_prime", self.sigma_prime)?;
        Ok(LupiMethod::Robust { lambda: self.robust_lambda, sigma_prime: self.sigma_prime })
    }

    pub(crate) fn validate(&self, n_samples: usize) -> Result<()> {
        self.method()?;
        self.svm_plus().validate(n_samples)
    }

    pub(crate) fn fit(&self, data: &Dataset, opts: &FitOptions) -> Result<Fit> {
        self.svm_plus().fit_as(self.method()?, data, opts)
    }
}

/// L2-SVM+ (Li et al. 2016; paper 004's baseline): squared loss on the correcting function, a margin
/// variable and the bias in the kernels, so that the dual has one equality and `α ≥ 0`
/// ([`crate::svm::l2_svm_plus`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct L2SvmPlus {
    /// `C` (default 1) or `λ`: the weight of `½ Σ C_i ξ_i²`.
    pub regularization: Regularization,
    /// The kernel `k` on `x` (defaults as SVM+).
    pub kernel: KernelChoice,
    /// `γ*` of the Gaussian `k*` on `x*` (`None`: `1/D*`).
    pub gamma_star: Option<f64>,
    /// `ρ > 0`, the weight of `‖w*‖²`.
    pub rho: f64,
    /// Stop when the SMO's KKT violation is at most this.
    pub tol: f64,
    /// Maximum SMO iterations per binary problem; 0: `max(10⁷, 100ℓ)`.
    pub max_iter: usize,
}

impl Default for L2SvmPlus {
    fn default() -> Self {
        let s = crate::svm::L2SvmPlusParams::default();
        L2SvmPlus {
            regularization: Regularization::C(s.c),
            kernel: KernelChoice::default(),
            gamma_star: None,
            rho: s.rho,
            tol: s.tol,
            max_iter: s.max_iter,
        }
    }
}

impl L2SvmPlus {
    fn params(&self, n_samples: usize, n_features: usize) -> Result<crate::svm::L2SvmPlusParams> {
        let c = self.regularization.c(n_samples)?;
        positive("rho", self.rho)?;
        positive("tol", self.tol)?;
        let kernel = match self.kernel {
            KernelChoice::Rbf { gamma: None } => None,
            k => Some(k.resolve(1.0 / n_features.max(1) as f64)?),
        };
        let kernel_star = match self.gamma_star {
            Some(g) => {
                positive("gamma_star", g)?;
                Some(Kernel::Rbf { gamma: g })
            }
            None => None,
        };
        Ok(crate::svm::L2SvmPlusParams {
            c,
            rho: self.rho,
            kernel,
            kernel_star,
            tol: self.tol,
            max_iter: self.max_iter,
        })
    }

    pub(crate) fn validate(&self, n_samples: usize) -> Result<()> {
        self.params(n_samples, 1).map(|_| ())
    }

    pub(crate) fn fit(&self, data: &Dataset, opts: &FitOptions) -> Result<Fit> {
        if data.privileged.is_none() {
            return without_privileged(self.regularization, self.kernel, self.tol, self.max_iter, data, opts);
        }
        let fit = self.params(data.n_samples(), data.n_features())?.fit_monitored(data, opts.monitor())?;
        Ok(Fit::new(Model::Kernel(fit.model), fit.reports))
    }
}

/// The no-privileged-information mode of SVM+, R-SVM+ and L2-SVM+, on a dataset without privileged
/// features: the plain C-SVM `min ½‖w‖² + Σ C c_i ξ_i` with the method's `C`, kernel `k` (an RBF's `γ`
/// defaulting to `1/D`, as with `x*`), `tol` and `max_iter`, fitted exactly as the registry's `svm` method
/// with those fields (its SMO, shrinking, cache and precision defaults; one-vs-rest for more classes, as
/// these methods), support indices included. `ρ`, `γ*`, the
/// robust `λ` and `σ'` do not enter: this is SVM+'s `ρ → 0` limit (DESIGN 2.6), the machine that the
/// privileged features would correct, and it lets generic tools (scikit-learn's checks, pipelines that do
/// not route `x*`) fit these methods on `x` alone.
pub(crate) fn without_privileged(
    regularization: Regularization,
    kernel: KernelChoice,
    tol: f64,
    max_iter: usize,
    data: &Dataset,
    opts: &FitOptions,
) -> Result<Fit> {
    let kernel = match kernel {
        KernelChoice::Rbf { gamma: None } => default_gaussian(&data.features),
        k => k.resolve(super::kernel::default_gamma(data))?,
    };
    let svm = super::kernel::Svm::default();
    let params = KernelSvmParams {
        kernel,
        c: regularization.c(data.n_samples())?,
        tol,
        cache_mb: svm.cache_mb,
        max_iter,
        shrinking: svm.shrinking,
        precision: svm.precision,
        // One-vs-rest, as the privileged-information methods themselves.
        multiclass: crate::model::Multiclass::OneVsRest,
    };
    super::kernel::fit_svm(&params, data, opts.monitor())
}
