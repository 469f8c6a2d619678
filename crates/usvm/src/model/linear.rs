use ndarray::Array2;
use serde::{Deserialize, Serialize};

use super::Coefficients;
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
    /// `K × n`, `K = 1` for two classes; on wide sparse data stored on the used columns only.
    pub coef: Coefficients,
    /// The intercepts `b_k`.
    pub intercept: Vec<f64>,
}

impl LinearModel {
    /// Fits one hyperplane per binary problem of `data`'s labels — one (`classes[1]` positive) for two
    /// classes, one per class (that class positive) otherwise — by `solve(y, start)`, which gets the labels
    /// `±1` of every example and the warm start of that problem (from `start`, if it is a model of the same
    /// classes and features; see [`Self::warm_start`]) and the problem's monitor, and returns
    /// `θ = (w, b)` (`b` only when `fit_intercept`) and its report.
    pub(crate) fn one_vs_rest(
        data: &crate::data::Dataset,
        fit_intercept: bool,
        start: Option<&LinearModel>,
        monitor: crate::progress::Monitor<'_>,
        solve: impl Fn(
            &[f64],
            Option<Vec<f64>>,
            crate::progress::Monitor<'_>,
        ) -> Result<(Vec<f64>, crate::report::FitReport)>
        + Sync,
    ) -> Result<(LinearModel, Vec<crate::report::FitReport>)> {
        let (classes, n) = (data.classes(), data.n_features());
        let start = start.filter(|m| m.classes == classes && m.n_features() == n);
        let s = crate::ovr::one_vs_rest(classes, n, false, monitor, |k, positive, monitor| {
            let theta0 = start.map(|m| m.theta(k, fit_intercept));
            let (mut theta, report) = solve(&crate::ovr::signs(data.labels.iter(), positive), theta0, monitor)?;
            let intercept = if fit_intercept { theta[n] } else { 0.0 };
            theta.truncate(n);
            Ok(crate::ovr::Binary { coef: theta, intercept, report })
        })?;
        Ok((LinearModel { classes: s.classes, coef: s.coef.into(), intercept: s.intercept }, s.reports))
    }

    /// `θ = (w_k, b_k)` of hyperplane `k` (`w_k` alone without an intercept): a solver's variables.
    pub(crate) fn theta(&self, k: usize, fit_intercept: bool) -> Vec<f64> {
        self.with_intercept(self.coef.row_over(k, self.n_features()), k, fit_intercept)
    }

    /// `w` followed by `b_k` when `fit_intercept`.
    fn with_intercept(&self, mut w: Vec<f64>, k: usize, fit_intercept: bool) -> Vec<f64> {
        if fit_intercept {
            w.push(self.intercept[k]);
        }
        w
    }

    /// [`Self::theta`] on the `used` columns of a restricted fit (all columns without one).
    pub(crate) fn theta_on(
        &self,
        k: usize,
        fit_intercept: bool,
        used: Option<&crate::solver::columns::UsedColumns<'_>>,
    ) -> Vec<f64> {
        match used {
            Some(used) if self.coef.has_support(used.columns()) => {
                self.with_intercept(self.coef.stored().row(k).to_vec(), k, fit_intercept)
            }
            Some(used) => used.restrict(&self.theta(k, fit_intercept)),
            None => self.theta(k, fit_intercept),
        }
    }

    /// The hyperplanes of a warm start ([`crate::FitOptions::start`]) if it is a linear model.
    pub(crate) fn warm_start(start: Option<&super::Model>) -> Option<&LinearModel> {
        match start {
            Some(super::Model::Linear(m)) => Some(m),
            _ => None,
        }
    }

    /// The input dimension `n`.
    pub fn n_features(&self) -> usize {
        self.coef.n_features()
    }

    /// `f_k(x_i)` for every example (rows) and hyperplane (columns). Inputs with fewer features than the
    /// model are read as zero-padded (sparse files may omit trailing features); features beyond the
    /// model's have zero coefficients (LIBLINEAR's rule: they do not change `f`).
    pub fn decision_function(&self, x: &Features) -> Result<Array2<f64>> {
        let mut f = self.coef.products(x);
        f.rows_mut().into_iter().for_each(|mut row| row += &ndarray::ArrayView1::from(&self.intercept));
        Ok(f)
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
