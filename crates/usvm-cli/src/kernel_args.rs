//! Kernel flags shared by the kernel methods (`svm`, `ksvm-igsu`): `--kernel`, `--gamma`, `--degree`,
//! `--coef0`.

use anyhow::{Result, bail};
use clap::{Args, ValueEnum};
use usvm::Kernel;

use crate::train::Method;

/// Whether `method` reads the kernel flags.
pub fn uses_kernel(method: Method) -> bool {
    matches!(method, Method::Svm | Method::KsvmIgsu | Method::Svmplus | Method::Rsvmplus | Method::Tsvc)
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

/// The kernel of the kernel methods.
#[derive(Args, Debug, Clone)]
pub struct KernelArgs {
    /// Kernel (kernel methods only)
    #[arg(long, value_enum, default_value_t = KernelKind::Rbf)]
    pub kernel: KernelKind,
    /// γ of the rbf and polynomial kernels (default: 1/n_features, as LIBSVM)
    #[arg(long, value_name = "G", allow_negative_numbers = true)]
    pub gamma: Option<f64>,
    /// Degree of the polynomial kernel
    #[arg(long, value_name = "D", default_value_t = 3)]
    pub degree: u32,
    /// coef0 of the polynomial kernel
    #[arg(long, value_name = "C0", default_value_t = 0.0, allow_negative_numbers = true)]
    pub coef0: f64,
}

impl KernelArgs {
    /// The kernel for data with `n_features` features, validated.
    pub fn kernel(&self, n_features: usize) -> Result<Kernel> {
        let gamma = match self.gamma {
            Some(g) => g,
            None => 1.0 / n_features.max(1) as f64,
        };
        let kernel = match self.kernel {
            KernelKind::Linear => Kernel::Linear,
            KernelKind::Rbf => Kernel::Rbf { gamma },
            KernelKind::Polynomial => Kernel::Polynomial { gamma, coef0: self.coef0, degree: self.degree },
            KernelKind::Precomputed => Kernel::Precomputed,
        };
        if let Err(e) = kernel.validate() {
            let flag = match e {
                usvm::Error::InvalidParameter { name, .. } => name,
                _ => "kernel",
            };
            bail!("invalid value for '--{flag}': {e}");
        }
        Ok(kernel)
    }

    pub fn precomputed(&self) -> bool {
        self.kernel == KernelKind::Precomputed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(kernel: KernelKind, gamma: Option<f64>, degree: u32) -> KernelArgs {
        KernelArgs { kernel, gamma, degree, coef0: 1.0 }
    }

    #[test]
    fn kernels_and_the_default_gamma() {
        assert_eq!(args(KernelKind::Rbf, None, 3).kernel(4).unwrap(), Kernel::Rbf { gamma: 0.25 });
        assert_eq!(
            args(KernelKind::Polynomial, Some(2.0), 2).kernel(4).unwrap(),
            Kernel::Polynomial { gamma: 2.0, coef0: 1.0, degree: 2 }
        );
        assert_eq!(args(KernelKind::Linear, Some(-1.0), 3).kernel(4).unwrap(), Kernel::Linear);
        let e = args(KernelKind::Rbf, Some(-1.0), 3).kernel(4).unwrap_err().to_string();
        assert!(e.contains("--gamma"), "{e}");
        let e = args(KernelKind::Polynomial, None, 0).kernel(4).unwrap_err().to_string();
        assert!(e.contains("--degree"), "{e}");
    }
}
