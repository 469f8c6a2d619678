use ndarray::Array2;
use serde::{Deserialize, Serialize};

use crate::data::Features;
use crate::error::Result;

/// A fitted linear classifier: one hyperplane `f_k(x) = w_kᵀx + b_k` per binary problem.
///
/// Two classes: one hyperplane, `f > 0` means `classes[1]`. More: one-vs-rest, one hyperplane per class
/// in `classes` order, prediction by the largest `f_k`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinearModel {
    /// The class labels (sorted).
    pub classes: Vec<i64>,
    /// `K × n`, `K = 1` for two classes.
    pub coef: Array2<f64>,
    /// The intercepts `b_k`.
    pub intercept: Vec<f64>,
}

impl LinearModel {
    /// Fits one hyperplane per binary problem of `data`'s labels — one (`classes[1]` positive) for two
    /// classes, one per class (that class positive) otherwise — by `solve(y)`, which gets the labels `±1`
    /// of every example and returns `θ = (w, b)` (`b` only when `fit_intercept`) and its report.
    pub(crate) fn one_vs_rest(
        data: &crate::data::Dataset,
        fit_intercept: bool,
        mut solve: impl FnMut(&[f64]) -> Result<(Vec<f64>, crate::report::FitReport)>,
    ) -> Result<(LinearModel, Vec<crate::report::FitReport>)> {
        let classes = data.classes();
        let positives: Vec<i64> = if classes.len() == 2 { vec![classes[1]] } else { classes.clone() };
        let n = data.n_features();
        let mut coef = Array2::zeros((positives.len(), n));
        let (mut intercept, mut reports) = (Vec::with_capacity(positives.len()), Vec::with_capacity(positives.len()));
        for (k, &positive) in positives.iter().enumerate() {
            let y: Vec<f64> = data.labels.iter().map(|&c| if c == positive { 1.0 } else { -1.0 }).collect();
            let (theta, report) = solve(&y)?;
            coef.row_mut(k).assign(&ndarray::ArrayView1::from(&theta[..n]));
            intercept.push(if fit_intercept { theta[n] } else { 0.0 });
            reports.push(report);
        }
        Ok((LinearModel { classes, coef, intercept }, reports))
    }

    /// The input dimension `n`.
    pub fn n_features(&self) -> usize {
        self.coef.ncols()
    }

    /// `f_k(x_i)` for every example (rows) and hyperplane (columns). Inputs with fewer features than the
    /// model are read as zero-padded (sparse files may omit trailing features); features beyond the
    /// model's have zero coefficients (LIBLINEAR's rule: they do not change `f`).
    pub fn decision_function(&self, x: &Features) -> Result<Array2<f64>> {
        x.check_layout()?;
        let k = self.coef.nrows();
        let n = x.n_features().min(self.n_features());
        Ok(Array2::from_shape_fn((x.n_samples(), k), |(i, c)| {
            let w = self.coef.row(c);
            x.row_dot_truncated(i, &w.as_slice().expect("standard layout")[..n]) + self.intercept[c]
        }))
    }

    /// The predicted class of every example.
    pub fn predict(&self, x: &Features) -> Result<Vec<i64>> {
        Ok(super::argmax_classes(&self.classes, &self.decision_function(x)?))
    }

    /// `P(f(X) > 0) = Φ(f(x)/√(wᵀΣw))` for a test example `X ~ N(x, Σ)` (binary models; DESIGN 2.8).
    pub fn positive_probability_under_uncertainty(&self, f: f64, w_sigma_w: f64) -> f64 {
        if w_sigma_w > 0.0 {
            crate::loss::special::norm_cdf(f / w_sigma_w.sqrt())
        } else if f > 0.0 {
            1.0
        } else if f < 0.0 {
            0.0
        } else {
            0.5
        }
    }
}
