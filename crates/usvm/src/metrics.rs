//! Evaluation metrics for binary labels (`true` = positive class) and real scores.
//!
//! With `tp, fp, tn, fn` counted at the threshold `score > 0` (the decision rule of
//! [`crate::LinearModel`]):
//!
//! - accuracy `(tp + tn) / n`, precision `tp / (tp + fp)`, recall `tp / (tp + fn)`,
//!   F1 `2 tp / (2 tp + fp + fn)` (the harmonic mean of precision and recall), all of the positive class;
//! - every ratio with a zero denominator (`0/0`: no examples, no predicted or no actual positives) is
//!   defined as 0, so no metric is ever NaN;
//! - average precision `AP = Σ_k (R_k − R_{k−1}) P_k` over the distinct score values taken as
//!   thresholds in decreasing order (tied scores form one step), exactly scikit-learn's
//!   `average_precision_score`; it is 0 when there are no positives;
//! - precision@k: the fraction of positives among the `k` highest scores (ties at the cut shared in
//!   expectation, see [`precision_at_k`]).
//!
//! ```
//! use usvm::metrics::{Metrics, average_precision};
//! let y = [true, false, true, false];
//! let s = [0.9, 0.8, -0.1, -0.5];
//! assert!((average_precision(&y, &s) - (1.0 + 2.0 / 3.0) / 2.0).abs() < 1e-15);
//! let m = Metrics::from_scores(&y, &s);
//! assert_eq!((m.n, m.accuracy, m.precision, m.recall), (4, 0.5, 0.5, 0.5));
//! ```

use ndarray::ArrayView2;
use serde::{Deserialize, Serialize};

/// The METRICS.json record of DESIGN 6.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// Number of examples scored.
    pub n: usize,
    /// Fraction of correct predictions.
    pub accuracy: f64,
    /// `tp / (tp + fp)` (0 when nothing is predicted positive).
    pub precision: f64,
    /// `tp / (tp + fn)` (0 without positives).
    pub recall: f64,
    /// The harmonic mean of precision and recall (0 when both are 0).
    pub f1: f64,
    /// The area under the precision-recall step curve (ties grouped).
    pub average_precision: f64,
}

impl Metrics {
    /// All metrics for labels `y` (`true` = positive) and scores `f`, predicting positive for `f > 0`.
    pub fn from_scores(y: &[bool], scores: &[f64]) -> Self {
        let c = Confusion::from_scores(y, scores);
        Metrics {
            n: y.len(),
            accuracy: c.accuracy(),
            precision: c.precision(),
            recall: c.recall(),
            f1: c.f1(),
            average_precision: average_precision(y, scores),
        }
    }
}

/// Counts of a binary confusion matrix.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Confusion {
    /// True positives.
    pub tp: usize,
    /// False positives.
    pub fp: usize,
    /// True negatives.
    pub tn: usize,
    /// False negatives.
    pub fn_: usize,
}

impl Confusion {
    /// Counts from true and predicted labels (`true` = positive).
    pub fn new(y_true: &[bool], y_pred: &[bool]) -> Self {
        assert_eq!(y_true.len(), y_pred.len(), "one prediction per label");
        let mut c = Confusion::default();
        for (&t, &p) in y_true.iter().zip(y_pred) {
            match (t, p) {
                (true, true) => c.tp += 1,
                (false, true) => c.fp += 1,
                (false, false) => c.tn += 1,
                (true, false) => c.fn_ += 1,
            }
        }
        c
    }

    /// Counts with the prediction `score > 0`.
    pub fn from_scores(y: &[bool], scores: &[f64]) -> Self {
        assert_eq!(y.len(), scores.len(), "one score per label");
        let pred: Vec<bool> = scores.iter().map(|&s| s > 0.0).collect();
        Confusion::new(y, &pred)
    }

    /// `(tp + tn) / n` (0 for no examples).
    pub fn accuracy(&self) -> f64 {
        ratio(self.tp + self.tn, self.tp + self.tn + self.fp + self.fn_)
    }
    /// `tp / (tp + fp)`, 0 when nothing is predicted positive.
    pub fn precision(&self) -> f64 {
        ratio(self.tp, self.tp + self.fp)
    }
    /// `tp / (tp + fn)`, 0 without positives.
    pub fn recall(&self) -> f64 {
        ratio(self.tp, self.tp + self.fn_)
    }
    /// `2pr / (p + r)`, 0 when both are 0.
    pub fn f1(&self) -> f64 {
        ratio(2 * self.tp, 2 * self.tp + self.fp + self.fn_)
    }
}

/// `a / b`, with `0/0 = 0`.
fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

/// The fraction of equal labels (0 for no examples).
pub fn accuracy(y_true: &[bool], y_pred: &[bool]) -> f64 {
    Confusion::new(y_true, y_pred).accuracy()
}

/// Precision of the positive class (0 when nothing is predicted positive).
pub fn precision(y_true: &[bool], y_pred: &[bool]) -> f64 {
    Confusion::new(y_true, y_pred).precision()
}

/// Recall of the positive class (0 when there are no positives).
pub fn recall(y_true: &[bool], y_pred: &[bool]) -> f64 {
    Confusion::new(y_true, y_pred).recall()
}

/// F1 of the positive class (0 when there are neither actual nor predicted positives).
pub fn f1(y_true: &[bool], y_pred: &[bool]) -> f64 {
    Confusion::new(y_true, y_pred).f1()
}

/// Indices sorted by decreasing score (a total order, so NaN scores cannot panic the sort).
fn by_decreasing_score(scores: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
    order
}

/// Groups of tied scores along `order`: `(start, end)` ranges into `order`.
fn tie_groups<'a>(order: &'a [usize], scores: &'a [f64]) -> impl Iterator<Item = (usize, usize)> + 'a {
    let mut start = 0;
    std::iter::from_fn(move || {
        if start == order.len() {
            return None;
        }
        let s = scores[order[start]];
        let end = start + order[start..].iter().take_while(|&&i| scores[i] == s).count().max(1);
        let group = (start, end);
        start = end;
        Some(group)
    })
}

/// Average precision, as scikit-learn's `average_precision_score`: with thresholds at the distinct
/// scores in decreasing order, `Σ_k (R_k − R_{k−1}) P_k` where `P_k, R_k` are the precision and recall
/// of predicting positive for `score ≥ threshold_k` (`R_0 = 0`). Returns 0 without positives.
pub fn average_precision(y: &[bool], scores: &[f64]) -> f64 {
    assert_eq!(y.len(), scores.len(), "one score per label");
    let positives = y.iter().filter(|&&t| t).count();
    if positives == 0 {
        return 0.0;
    }
    let order = by_decreasing_score(scores);
    let (mut tp, mut ap) = (0usize, 0.0);
    for (start, end) in tie_groups(&order, scores) {
        let new_tp = order[start..end].iter().filter(|&&i| y[i]).count();
        tp += new_tp;
        // ΔR · P = (new_tp / positives) · (tp / end)
        ap += new_tp as f64 / positives as f64 * (tp as f64 / end as f64);
    }
    ap
}

/// Precision among the `k` highest scores (`k` is capped at `n`; 0 for `k = 0` or no examples).
/// When the cut falls inside a group of tied scores, the group's positives count in proportion to the
/// places left (the expectation over random tie-breaking), so the result does not depend on order.
pub fn precision_at_k(y: &[bool], scores: &[f64], k: usize) -> f64 {
    assert_eq!(y.len(), scores.len(), "one score per label");
    let k = k.min(y.len());
    if k == 0 {
        return 0.0;
    }
    let order = by_decreasing_score(scores);
    let mut hits = 0.0;
    for (start, end) in tie_groups(&order, scores) {
        if start >= k {
            break;
        }
        let pos = order[start..end].iter().filter(|&&i| y[i]).count() as f64;
        let taken = (end.min(k) - start) as f64;
        hits += pos * taken / (end - start) as f64;
    }
    hits / k as f64
}

/// Mean average precision of one-vs-rest scores: column `c` of `scores` (`n × K`) scores class
/// `classes[c]` against the rest. Classes without any example in `labels` are left out of the mean
/// (their AP is undefined); 0 if no class has an example.
pub fn mean_average_precision(labels: &[i64], classes: &[i64], scores: ArrayView2<f64>) -> f64 {
    assert_eq!(scores.nrows(), labels.len(), "one score row per label");
    assert_eq!(scores.ncols(), classes.len(), "one score column per class");
    let (mut sum, mut count) = (0.0, 0usize);
    for (c, &class) in classes.iter().enumerate() {
        let y: Vec<bool> = labels.iter().map(|&l| l == class).collect();
        if y.contains(&true) {
            let s: Vec<f64> = scores.column(c).to_vec();
            sum += average_precision(&y, &s);
            count += 1;
        }
    }
    if count == 0 { 0.0 } else { sum / count as f64 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_abs_diff_eq;
    use ndarray::array;

    #[test]
    fn confusion_metrics_by_hand() {
        // tp = 2 (0, 1), fn = 1 (2), fp = 1 (3), tn = 2 (4, 5)
        let y = [true, true, true, false, false, false];
        let s = [1.0, 0.5, -0.5, 2.0, -1.0, 0.0];
        let c = Confusion::from_scores(&y, &s);
        assert_eq!(c, Confusion { tp: 2, fp: 1, tn: 2, fn_: 1 });
        let m = Metrics::from_scores(&y, &s);
        assert_eq!(m.n, 6);
        assert_abs_diff_eq!(m.accuracy, 4.0 / 6.0);
        assert_abs_diff_eq!(m.precision, 2.0 / 3.0);
        assert_abs_diff_eq!(m.recall, 2.0 / 3.0);
        assert_abs_diff_eq!(m.f1, 2.0 / 3.0);
        // order 3(-), 0(+), 1(+), 5(-), 2(+), 4(-): AP = (1/2 + 2/3 + 3/5) / 3
        assert_abs_diff_eq!(m.average_precision, (0.5 + 2.0 / 3.0 + 0.6) / 3.0, epsilon = 1e-15);
    }

    #[test]
    fn precision_and_recall_differ() {
        // tp = 1, fp = 2, fn = 0: precision 1/3, recall 1, f1 = 2/4
        let y = [true, false, false, false];
        let p = [true, true, true, false];
        assert_abs_diff_eq!(precision(&y, &p), 1.0 / 3.0);
        assert_eq!(recall(&y, &p), 1.0);
        assert_eq!(f1(&y, &p), 0.5);
        assert_eq!(accuracy(&y, &p), 0.5);
    }

    #[test]
    fn zero_denominators_are_zero_not_nan() {
        let none: [bool; 0] = [];
        let m = Metrics::from_scores(&none, &[]);
        assert_eq!((m.n, m.accuracy, m.precision, m.recall, m.f1, m.average_precision), (0, 0.0, 0.0, 0.0, 0.0, 0.0));
        // no positives at all, none predicted: accuracy 1, everything else 0
        let y = [false, false];
        let m = Metrics::from_scores(&y, &[-1.0, -2.0]);
        assert_eq!((m.accuracy, m.precision, m.recall, m.f1, m.average_precision), (1.0, 0.0, 0.0, 0.0, 0.0));
        // positives predicted but none real
        let m = Metrics::from_scores(&y, &[1.0, -2.0]);
        assert_eq!((m.accuracy, m.precision, m.recall, m.f1), (0.5, 0.0, 0.0, 0.0));
        assert_eq!(precision_at_k(&y, &[1.0, 2.0], 0), 0.0);
    }

    #[test]
    fn average_precision_matches_scikit_learn() {
        // sklearn.metrics.average_precision_score([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]) = 0.8333...
        let y = [false, false, true, true];
        assert_abs_diff_eq!(average_precision(&y, &[0.1, 0.4, 0.35, 0.8]), 5.0 / 6.0, epsilon = 1e-15);
        // perfect and worst rankings
        assert_eq!(average_precision(&y, &[0.0, 0.1, 0.8, 0.9]), 1.0);
        assert_abs_diff_eq!(average_precision(&y, &[0.9, 0.8, 0.1, 0.0]), (1.0 / 3.0 + 0.5) / 2.0);
    }

    #[test]
    fn average_precision_ties_form_one_threshold() {
        // All scores tied: one threshold, P = 2/4, R = 1 -> AP = 0.5 (sklearn gives 0.5).
        let y = [true, false, true, false];
        assert_eq!(average_precision(&y, &[0.3; 4]), 0.5);
        // Scores [0.9, 0.5, 0.5, 0.1] with labels [-, +, -, +]:
        // thresholds 0.9: tp 0 (ΔR 0); 0.5: tp 1 of 3 (ΔR 1/2, P 1/3); 0.1: tp 2 of 4 (ΔR 1/2, P 1/2)
        let y = [false, true, false, true];
        let s = [0.9, 0.5, 0.5, 0.1];
        assert_abs_diff_eq!(average_precision(&y, &s), 0.5 / 3.0 + 0.25, epsilon = 1e-15);
        // The result does not depend on the order of tied examples.
        let y2 = [false, false, true, true];
        let s2 = [0.9, 0.5, 0.5, 0.1];
        assert_eq!(average_precision(&y2, &s2), average_precision(&y, &s));
    }

    #[test]
    fn matches_scikit_learn_on_heavy_ties() {
        // Values from scikit-learn 1.9.1: average_precision_score, precision/recall/f1_score(y, s > 0).
        let y = [
            true, true, true, true, true, true, true, false, false, false, false, true, true, false, false, true,
            false, true, false, false,
        ];
        let s = [
            0.0, 0.0, 0.0, -0.5, -0.0, 0.5, -0.5, -0.0, -1.0, -0.5, -1.0, -0.0, -0.5, 0.0, 0.0, -0.0, -1.5, -0.5, -0.0,
            0.0,
        ];
        assert_abs_diff_eq!(average_precision(&y, &s), 0.6443850267379679, epsilon = 1e-15);
        let m = Metrics::from_scores(&y, &s);
        assert_eq!(m.precision, 1.0);
        assert_abs_diff_eq!(m.recall, 0.09090909090909091, epsilon = 1e-16);
        assert_abs_diff_eq!(m.f1, 0.16666666666666666, epsilon = 1e-16);
    }

    #[test]
    fn average_precision_without_positives_is_zero() {
        assert_eq!(average_precision(&[false, false, false], &[0.1, 0.2, 0.3]), 0.0);
        assert_eq!(average_precision(&[], &[]), 0.0);
    }

    #[test]
    fn precision_at_k_by_hand() {
        let y = [true, false, true, false, true];
        let s = [0.9, 0.8, 0.7, 0.6, 0.5];
        assert_eq!(precision_at_k(&y, &s, 1), 1.0);
        assert_eq!(precision_at_k(&y, &s, 2), 0.5);
        assert_abs_diff_eq!(precision_at_k(&y, &s, 3), 2.0 / 3.0);
        assert_abs_diff_eq!(precision_at_k(&y, &s, 10), 3.0 / 5.0);
        // cut inside a tie group of 2 (one positive): top-2 = 0.9 (+) and half a positive.
        let s = [0.9, 0.7, 0.7, 0.1, 0.0];
        assert_eq!(precision_at_k(&y, &s, 2), 0.75);
        assert_eq!(precision_at_k(&y, &s, 3), 2.0 / 3.0);
    }

    #[test]
    fn mean_average_precision_over_classes() {
        let labels = [0, 1, 2, 1];
        let classes = [0, 1, 2, 3];
        let scores = array![[0.9, 0.1, 0.0, 0.5], [0.2, 0.8, 0.1, 0.5], [0.3, 0.6, 0.7, 0.5], [0.1, 0.4, 0.2, 0.5],];
        // class 0: AP 1; class 2: AP 1; class 1: ranking 1(+), 2(-), 3(+), 0(-) -> (1 + 2/3) / 2;
        // class 3 has no example and is left out.
        let want = (1.0 + 1.0 + (1.0 + 2.0 / 3.0) / 2.0) / 3.0;
        assert_abs_diff_eq!(mean_average_precision(&labels, &classes, scores.view()), want, epsilon = 1e-15);
    }

    #[test]
    fn metrics_json_keys() {
        let m = Metrics::from_scores(&[true, false], &[1.0, -1.0]);
        let v: serde_json::Value = serde_json::to_value(m).unwrap();
        let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["accuracy", "average_precision", "f1", "n", "precision", "recall"]);
        assert_eq!(v["n"], 2);
        assert_eq!(v["f1"], 1.0);
    }
}
