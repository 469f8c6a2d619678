use serde::{Deserialize, Serialize};

use super::{Covariance, check_variances};
use crate::error::Result;
use crate::linalg::dot;

/// `Σ_i = s_i² I` (LSVM-iGSU, LSVM-iso, and the squared radii of Power SVM).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Isotropic {
    /// `s_i²` per example.
    pub variances: Vec<f64>,
}

impl Isotropic {
    pub(super) fn validate(&self) -> Result<()> {
        for (i, v) in self.variances.iter().enumerate() {
            check_variances(i, [v])?;
        }
        Ok(())
    }
}

impl Covariance for Isotropic {
    fn bilinear(&self, i: usize, u: &[f64], v: &[f64]) -> f64 {
        self.variances[i] * dot(u, v)
    }
    fn apply_add(&self, i: usize, alpha: f64, v: &[f64], out: &mut [f64]) {
        crate::linalg::axpy(alpha * self.variances[i], v, out);
    }
    fn apply_combination_add(
        &self,
        i: usize,
        alpha: f64,
        a: f64,
        u: &[f64],
        b: f64,
        v: &[f64],
        out: &mut [f64],
        _: &mut Vec<f64>,
    ) {
        let k = alpha * self.variances[i];
        for ((o, x), z) in out.iter_mut().zip(u).zip(v) {
            *o += k * (a * x + b * z);
        }
    }
    fn trace(&self, i: usize, n_features: usize) -> f64 {
        self.variances[i] * n_features as f64
    }
    fn is_zero(&self) -> bool {
        self.variances.iter().all(|&v| v == 0.0)
    }
}
