use ndarray::{Array2, Axis};
use serde::{Deserialize, Serialize};

use crate::data::Features;
use crate::error::{Error, Result};
use crate::kernel::Kernel;

/// A fitted kernel classifier: `f_k(x) = Σ_j coef[k, j] k(x, s_j) + b_k` over the support vectors `s_j`.
///
/// Two classes: one output, `f > 0` means `classes[1]`. More: one-vs-rest, one output per class in
/// `classes` order sharing one set of support vectors (a vector is kept if any output uses it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelModel {
    /// The kernel.
    pub kernel: Kernel,
    /// The class labels.
    pub classes: Vec<i64>,
    /// The support vectors, one row each.
    pub support: Features<'static>,
    /// `K × n_sv` expansion coefficients (for an SVM, `α_j y_j`), `K = 1` for two classes.
    pub coef: Array2<f64>,
    /// The intercepts, one per output.
    pub intercept: Vec<f64>,
}

impl KernelModel {
    /// The model over the training rows `x` with coefficients `coef` (`K × ℓ`), keeping only the rows whose
    /// coefficient is nonzero in some output.
    pub fn from_training(
        kernel: Kernel,
        classes: Vec<i64>,
        x: &Features,
        coef: Array2<f64>,
        intercept: Vec<f64>,
    ) -> KernelModel {
        let keep: Vec<usize> = (0..coef.ncols()).filter(|&j| coef.column(j).iter().any(|&c| c != 0.0)).collect();
        KernelModel { kernel, classes, support: x.select_rows(&keep), coef: coef.select(Axis(1), &keep), intercept }
    }

    /// The input dimension.
    pub fn n_features(&self) -> usize {
        self.support.n_features()
    }

    /// The number of support vectors.
    pub fn n_support(&self) -> usize {
        self.support.n_samples()
    }

    /// `f_k(x_i)` for every example (rows) and output (columns). Inputs with fewer features than the model
    /// are read as zero-padded. With more, the support vectors are zero in the extra features (LIBSVM's
    /// rule): for the linear kernel they do not change `f`; for RBF and polynomial kernels their values
    /// enter through `‖x‖` and `xᵀx_j`. A precomputed kernel needs exactly its training columns.
    pub fn decision_function(&self, x: &Features) -> Result<Array2<f64>> {
        let widened;
        let support = if x.n_features() > self.n_features() {
            if self.kernel == Kernel::Precomputed {
                return Err(Error::DimensionMismatch {
                    what: "precomputed kernel columns at prediction",
                    expected: self.n_features(),
                    found: x.n_features(),
                });
            }
            widened = self.support.widened(x.n_features());
            &widened
        } else {
            &self.support
        };
        let k = self.kernel.cross_gram(x, support)?;
        let mut f = k.dot(&self.coef.t());
        for mut row in f.rows_mut() {
            row.iter_mut().zip(&self.intercept).for_each(|(v, b)| *v += b);
        }
        Ok(f)
    }

    /// The predicted class of every example.
    pub fn predict(&self, x: &Features) -> Result<Vec<i64>> {
        Ok(super::argmax_classes(&self.classes, &self.decision_function(x)?))
    }
}
