//! `tsvc`: total support vector classification (Bi & Zhang), the hinge at the worst point of a ball of
//! radius `δ_i` around each example, fitted by [`crate::svm::TsvcParams`].

use serde::{Deserialize, Serialize};

use super::{Fit, FitOptions, KernelChoice, Regularization, non_negative};
use crate::data::Dataset;
use crate::error::{Result, invalid};
use crate::svm::{Delta, TsvcForm, TsvcParams};

/// How TSVC is solved.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "name", rename_all = "snake_case")]
pub enum TsvcSolution {
    /// Algorithm 1: an SVM on the shifted points, then the optimal shifts (any kernel).
    Alternating {
        /// Maximum rounds after the first SVM.
        #[serde(default = "default_max_rounds")]
        max_rounds: usize,
        /// Stop when a round lowers the objective by at most `tol·J`.
        #[serde(default = "default_tol")]
        tol: f64,
        /// With a kernel: each SVM step's SMO iteration limit; 0: `max(10⁷, 100ℓ)`.
        #[serde(default)]
        max_iter: usize,
    },
    /// The second-order cone programme (eq. 8) by Clarabel, certified by the dual (linear kernel); for `C`,
    /// when the relaxation does not certify, the alternating rounds (default settings) run too and the
    /// lower objective is returned.
    Socp {
        /// Solve eq. 8 for this fixed bound `‖w‖ ≤ G` instead of eq. 7 for `C`.
        #[serde(default)]
        norm_bound: Option<f64>,
    },
}

fn default_max_rounds() -> usize {
    TsvcParams::default().max_rounds
}

fn default_tol() -> f64 {
    TsvcParams::default().tol
}

/// TSVC.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Tsvc {
    /// `C` (default 1) or `λ`.
    pub regularization: Regularization,
    /// The kernel (`γ` default `1/n_features`).
    pub kernel: KernelChoice,
    /// The bounds `δ_i ≥ 0`: one number for every example, or one per example.
    pub delta: Delta,
    /// Fit an intercept `b`.
    pub fit_intercept: bool,
    /// How to solve.
    pub form: TsvcSolution,
}

impl Default for Tsvc {
    fn default() -> Self {
        Tsvc {
            regularization: Regularization::C(1.0),
            kernel: KernelChoice::Linear,
            delta: Delta::Uniform(0.0),
            fit_intercept: true,
            form: TsvcSolution::Alternating { max_rounds: default_max_rounds(), tol: default_tol(), max_iter: 0 },
        }
    }
}

impl Tsvc {
    fn params(&self, n_samples: usize, n_features: usize) -> Result<TsvcParams> {
        if let Delta::Uniform(d) = self.delta {
            non_negative("delta", d)?;
        }
        let kernel = self.kernel.resolve(1.0 / n_features.max(1) as f64)?;
        let base = TsvcParams {
            c: self.regularization.c(n_samples)?,
            delta: self.delta.clone(),
            kernel,
            fit_intercept: self.fit_intercept,
            ..TsvcParams::default()
        };
        Ok(match self.form {
            TsvcSolution::Alternating { max_rounds, tol, max_iter } => {
                non_negative("tol", tol)?;
                TsvcParams { form: TsvcForm::Alternating, max_rounds, tol, svm_max_iter: max_iter, ..base }
            }
            TsvcSolution::Socp { norm_bound } => {
                if kernel != crate::Kernel::Linear {
                    return Err(invalid("kernel", kernel.name(), "the cone form (socp) needs the linear kernel"));
                }
                if let Some(g) = norm_bound {
                    non_negative("norm_bound", g)?;
                }
                TsvcParams { form: TsvcForm::Socp, norm_bound, ..base }
            }
        })
    }

    pub(crate) fn validate(&self, n_samples: usize) -> Result<()> {
        self.params(n_samples, 1).map(|_| ())
    }

    pub(crate) fn fit(&self, data: &Dataset, opts: &FitOptions) -> Result<Fit> {
        let fit = self.params(data.n_samples(), data.n_features())?.fit_monitored(data, opts.monitor())?;
        Ok(Fit::new(fit.model, fit.reports.into_iter().map(|r| r.report).collect()))
    }
}
