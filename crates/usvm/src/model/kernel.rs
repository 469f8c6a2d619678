use ndarray::{Array2, Axis};
use serde::{Deserialize, Serialize};

use crate::data::Features;
use crate::error::{Error, Result};
use crate::kernel::Kernel;

/// How a kernel model separates more than two classes; in files `"ovo"` or `"ovr"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Multiclass {
    /// One output per class (that class against the others); the largest wins.
    #[default]
    #[serde(rename = "ovr")]
    OneVsRest,
    /// One output per pair of classes `(a, b)`, `a < b` in `classes` order `(0,1), (0,2), …, (1,2), …`
    /// (LIBSVM's order), `f > 0` a vote for `a`, else for `b`; the most votes win, ties to the first class
    /// (LIBSVM's rule).
    #[serde(rename = "ovo")]
    OneVsOne,
}

/// The pairs `(a, b)`, `a < b`, of `k` classes in LIBSVM's order.
pub fn class_pairs(k: usize) -> Vec<(usize, usize)> {
    (0..k).flat_map(|a| (a + 1..k).map(move |b| (a, b))).collect()
}

/// The class index of each row of one-vs-one decision values over the pairs of `k` classes: the most
/// votes (`f > 0` for the pair's first class, else its second), ties to the lowest index.
pub fn vote(k: usize, f: &Array2<f64>) -> Vec<usize> {
    let pairs = class_pairs(k);
    let mut votes = vec![0usize; k];
    f.rows()
        .into_iter()
        .map(|row| {
            votes.iter_mut().for_each(|v| *v = 0);
            for (&(a, b), &v) in pairs.iter().zip(row) {
                votes[if v > 0.0 { a } else { b }] += 1;
            }
            (0..k).fold(0, |best, c| if votes[c] > votes[best] { c } else { best })
        })
        .collect()
}

/// One score per class from one-vs-one values `f` over the pairs of `k` classes (scikit-learn's
/// `decision_function_shape='ovr'`): each class's votes (`f ≥ 0` for the pair's first class) plus its summed
/// confidences `s` (`+f` for the first class, `−f` for the second) mapped to `s / (3(|s| + 1))`, which
/// orders classes with equal votes and never changes the vote count's order.
pub fn ovr_scores(k: usize, f: &Array2<f64>) -> Array2<f64> {
    let pairs = class_pairs(k);
    let mut out = Array2::zeros((f.nrows(), k));
    for (row, mut scores) in f.rows().into_iter().zip(out.rows_mut()) {
        let (mut votes, mut s) = (vec![0.0; k], vec![0.0; k]);
        for (&(a, b), &v) in pairs.iter().zip(row) {
            votes[if v < 0.0 { b } else { a }] += 1.0;
            s[a] += v;
            s[b] -= v;
        }
        for (c, score) in scores.iter_mut().enumerate() {
            *score = votes[c] + s[c] / (3.0 * (s[c].abs() + 1.0));
        }
    }
    out
}

/// A fitted kernel classifier: `f_k(x) = Σ_j coef[k, j] k(x, s_j) + b_k` over the support vectors `s_j`.
///
/// Two classes: one output, `f > 0` means `classes[1]`. More: one output per class (one-vs-rest) or per
/// pair of classes (one-vs-one, see [`Multiclass`]), sharing one set of support vectors (a vector is kept
/// if any output uses it).
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
    /// One-vs-rest or one-vs-one outputs (more than two classes).
    #[serde(default)]
    pub multiclass: Multiclass,
    /// One-vs-one: the number of support vectors of each class, the rows of `support` being grouped by
    /// class in `classes` order (as in LIBSVM's model); empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub n_support: Vec<usize>,
}

impl KernelModel {
    /// The one-vs-rest (or binary) model over the training rows `x` with coefficients `coef` (`K × ℓ`),
    /// keeping only the rows whose coefficient is nonzero in some output.
    pub fn from_training(
        kernel: Kernel,
        classes: Vec<i64>,
        x: &Features,
        coef: Array2<f64>,
        intercept: Vec<f64>,
    ) -> KernelModel {
        let keep: Vec<usize> = (0..coef.ncols()).filter(|&j| coef.column(j).iter().any(|&c| c != 0.0)).collect();
        KernelModel {
            kernel,
            classes,
            support: x.select_rows(&keep),
            coef: coef.select(Axis(1), &keep),
            intercept,
            multiclass: Multiclass::OneVsRest,
            n_support: Vec::new(),
        }
    }

    /// Whether the outputs are one per pair of classes.
    pub fn is_one_vs_one(&self) -> bool {
        self.multiclass == Multiclass::OneVsOne && self.classes.len() > 2
    }

    /// The number of outputs the classes and the multi-class scheme call for.
    pub fn expected_outputs(classes: usize, multiclass: Multiclass) -> usize {
        match (classes, multiclass) {
            (0..=2, _) => 1,
            (k, Multiclass::OneVsRest) => k,
            (k, Multiclass::OneVsOne) => k * (k - 1) / 2,
        }
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
        Ok(self.predict_from(&self.decision_function(x)?))
    }

    /// The classes that decision values `f` (rows of [`Self::decision_function`]) predict: the sign for
    /// two classes, the largest output for one-vs-rest, the votes for one-vs-one.
    pub fn predict_from(&self, f: &Array2<f64>) -> Vec<i64> {
        if self.is_one_vs_one() {
            vote(self.classes.len(), f).into_iter().map(|c| self.classes[c]).collect()
        } else {
            super::argmax_classes(&self.classes, f)
        }
    }
}
