//! The kernel flags shared by the kernel methods (`--kernel`, `--gamma`, `--degree`, `--coef0`).

use anyhow::{Result, bail};
use clap::{Args, ValueEnum};
use usvm::Kernel;

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelKind {
    /// k(x, z) = xᵀz
    Linear,
    /// k(x, z) = exp(-γ‖x - z‖²)
    Rbf,
    /// k(x, z) = (γ xᵀz + c₀)^d
    Polynomial,
}

/// Kernel hyper-parameters of the kernel methods.
#[derive(Args, Debug, Clone)]
pub struct KernelArgs {
    /// Kernel (kernel methods only)
    #[arg(long, value_enum, default_value_t = KernelKind::Rbf)]
    pub kernel: KernelKind,
    /// rbf, polynomial: γ (default 1/n_features)
    #[arg(long, value_name = "G")]
    pub gamma: Option<f64>,
    /// polynomial: degree d
    #[arg(long, value_name = "D", default_value_t = 3)]
    pub degree: u32,
    /// polynomial: c₀
    #[arg(long, value_name = "C0", default_value_t = 0.0, allow_negative_numbers = true)]
    pub coef0: f64,
}

impl KernelArgs {
    /// The kernel for inputs of `n_features` features, validated.
    pub fn kernel(&self, n_features: usize) -> Result<Kernel> {
        let gamma = self.gamma.unwrap_or(1.0 / n_features.max(1) as f64);
        let kernel = match self.kernel {
            KernelKind::Linear => Kernel::Linear,
            KernelKind::Rbf => Kernel::Rbf { gamma },
            KernelKind::Polynomial => Kernel::Polynomial { gamma, coef0: self.coef0, degree: self.degree },
        };
        if let Err(e) = kernel.validate() {
            bail!("invalid kernel: {e}");
        }
        Ok(kernel)
    }
}
