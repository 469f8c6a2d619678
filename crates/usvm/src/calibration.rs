//! Platt scaling: `P(y = 1 | f) = 1 / (1 + exp(a f + b))` fitted to decision values `f`.
//!
//! [`fit_platt`] is LIBSVM's `sigmoid_train` (Lin, Lin & Weng 2007, "A note on Platt's probabilistic
//! outputs for support vector machines"): with `N₊` positives and `N₋` negatives the targets are
//! smoothed to `t = (N₊ + 1)/(N₊ + 2)` for positives and `t = 1/(N₋ + 2)` for negatives, and
//!
//! ```text
//! min_{a,b}  Σ_i  t_i (a f_i + b) + log(1 + exp(-(a f_i + b)))
//! ```
//!
//! (the cross-entropy, evaluated without overflow) is minimised by Newton's method with a
//! `σ = 1e-12` ridge on the Hessian and Armijo backtracking (factor ½, sufficient decrease `1e-4`,
//! smallest step `1e-10`), from `a = 0, b = log((N₋ + 1)/(N₊ + 1))`, for at most 100 iterations;
//! it stops when both gradient components are below `1e-5`.
//!
//! The decision values must not be the training scores of the classifier being calibrated (they are
//! biased towards confident values): fit on cross-validated decision values, which is the caller's job.
//!
//! ```
//! use usvm::calibration::{fit_platt, predict_proba};
//! let f = [-2.0, -1.0, -0.5, 0.3, 0.5, 1.0, 2.0, -0.2];
//! let y = [false, false, true, false, true, true, true, false];
//! let fit = fit_platt(&f, &y).unwrap();
//! assert!(fit.converged && fit.platt.a < 0.0);
//! assert!(predict_proba(&fit.platt, 2.0) > predict_proba(&fit.platt, -2.0));
//! ```

use ndarray::{Array2, ArrayView2};

use crate::error::{Error, Result};
use crate::model::{Model, Platt, class_pairs};

const MAX_ITER: usize = 100;
const MIN_STEP: f64 = 1e-10;
const SIGMA: f64 = 1e-12;
const EPS: f64 = 1e-5;

/// A fitted sigmoid and how the Newton iteration ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlattFit {
    /// The fitted `a`, `b`.
    pub platt: Platt,
    /// Newton iterations.
    pub n_iter: usize,
    /// Whether the gradient tolerance was met (not: line search failed or the iteration limit hit).
    pub converged: bool,
}

/// Fits Platt scaling to decision values `scores` with labels `positive` (`true` = positive class).
/// Errors on no examples, different lengths or non-finite scores.
pub fn fit_platt(scores: &[f64], positive: &[bool]) -> Result<PlattFit> {
    check(scores, positive)?;
    let n_pos = positive.iter().filter(|&&p| p).count() as f64;
    let n_neg = positive.len() as f64 - n_pos;
    let hi = (n_pos + 1.0) / (n_pos + 2.0);
    let lo = 1.0 / (n_neg + 2.0);
    let t: Vec<f64> = positive.iter().map(|&p| if p { hi } else { lo }).collect();

    let (mut a, mut b) = (0.0, ((n_neg + 1.0) / (n_pos + 1.0)).ln());
    let mut fval = objective(scores, &t, a, b);
    for iter in 0..MAX_ITER {
        let (g1, g2, h11, h22, h21) = gradient_hessian(scores, &t, a, b);
        if g1.abs() < EPS && g2.abs() < EPS {
            return Ok(done(a, b, iter, true));
        }
        // Newton direction -H⁻¹g
        let det = h11 * h22 - h21 * h21;
        let da = -(h22 * g1 - h21 * g2) / det;
        let db = -(-h21 * g1 + h11 * g2) / det;
        let gd = g1 * da + g2 * db;
        let mut step = 1.0;
        loop {
            if step < MIN_STEP {
                return Ok(done(a, b, iter + 1, false)); // line search failed
            }
            let (na, nb) = (a + step * da, b + step * db);
            let nf = objective(scores, &t, na, nb);
            if nf < fval + 1e-4 * step * gd {
                (a, b, fval) = (na, nb, nf);
                break;
            }
            step /= 2.0;
        }
    }
    Ok(done(a, b, MAX_ITER, false))
}

/// Whether `model`'s outputs are one per pair of classes.
fn pairwise(model: &Model) -> bool {
    matches!(model, Model::Kernel(m) if m.is_one_vs_one())
}

/// One Platt sigmoid per output of `model`, fitted to out-of-fold decision values `f` (`n × outputs`) of
/// examples labelled `labels`, as LIBSVM's `-b 1`: two classes, `classes[1]` positive; one-vs-one, each
/// pair's examples with its first class positive; one-vs-rest, each class against the others.
pub fn fit_platt_per_output(model: &Model, f: ArrayView2<'_, f64>, labels: &[i64]) -> Result<Vec<Platt>> {
    let classes = model.classes();
    let fit = |rows: Vec<usize>, col: usize, positive: i64| -> Result<Platt> {
        let scores: Vec<f64> = rows.iter().map(|&i| f[[i, col]]).collect();
        let truth: Vec<bool> = rows.iter().map(|&i| labels[i] == positive).collect();
        Ok(fit_platt(&scores, &truth)?.platt)
    };
    let all = || (0..labels.len()).collect::<Vec<_>>();
    if classes.len() == 2 {
        return Ok(vec![fit(all(), 0, classes[1])?]);
    }
    if pairwise(model) {
        return class_pairs(classes.len())
            .into_iter()
            .enumerate()
            .map(|(p, (a, b))| {
                let rows = (0..labels.len()).filter(|&i| labels[i] == classes[a] || labels[i] == classes[b]).collect();
                fit(rows, p, classes[a])
            })
            .collect();
    }
    (0..classes.len()).map(|k| fit(all(), k, classes[k])).collect()
}

/// Class probabilities (`n × classes`) from decision values `f` of `model` and its per-output sigmoids:
/// two classes, `(1 − p, p)`; one-vs-one, the pairs' probabilities coupled ([`pairwise_coupling`]);
/// one-vs-rest, the sigmoids normalised to sum to one.
pub fn predict_proba_per_output(model: &Model, platt: &[Platt], f: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
    let k = model.classes().len();
    if platt.len() != f.ncols() {
        return Err(Error::DimensionMismatch { what: "Platt sigmoids", expected: f.ncols(), found: platt.len() });
    }
    let mut out = Array2::zeros((f.nrows(), k));
    for (row, mut p) in f.rows().into_iter().zip(out.rows_mut()) {
        let s: Vec<f64> = row.iter().zip(platt).map(|(&v, sig)| predict_proba(sig, v)).collect();
        if k == 2 {
            (p[0], p[1]) = (1.0 - s[0], s[0]);
        } else if pairwise(model) {
            p.assign(&ndarray::ArrayView1::from(&pairwise_coupling(k, &s)?));
        } else {
            let total: f64 = s.iter().sum();
            p.iter_mut().zip(&s).for_each(|(p, v)| *p = if total > 0.0 { v / total } else { 1.0 / k as f64 });
        }
    }
    Ok(out)
}

/// Pairwise probabilities below this or above one minus this are clipped (LIBSVM's `min_prob`).
pub const MIN_PAIR_PROBABILITY: f64 = 1e-7;

/// Class probabilities from pairwise ones (Wu, Lin & Weng 2004, "Probability estimates for multi-class
/// classification by pairwise coupling", method 2, as LIBSVM's `multiclass_probability`):
///
/// ```text
///     min_p  ½ Σ_i Σ_{j≠i} (r_ji p_i − r_ij p_j)²   s.t.  Σ_i p_i = 1
/// ```
///
/// with `r_ab` the probability of class `a` in its pair with `b` (`r_ba = 1 − r_ab`), given for the pairs
/// `(a, b)`, `a < b`, in [`class_pairs`] order and clipped to `[1e-7, 1 − 1e-7]`. The objective is
/// `pᵀQp` with `Q_tt = Σ_{j≠t} r_jt²`, `Q_tj = −r_jt r_tj`; the minimiser solves the bordered system
/// `[Q 1; 1ᵀ 0] (p, b) = (0, 1)` (nonsingular even when the `r` are consistent and `Q` singular), solved
/// here directly (LIBSVM iterates to a tolerance of `0.005/k`), and is non-negative (the paper's
/// Theorem 2).
pub fn pairwise_coupling(k: usize, pairs: &[f64]) -> Result<Vec<f64>> {
    let expected = k * k.saturating_sub(1) / 2;
    if k < 2 || pairs.len() != expected {
        return Err(Error::DimensionMismatch { what: "pairwise probabilities", expected, found: pairs.len() });
    }
    if let Some((index, &value)) = pairs.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(Error::NonFinite { what: "pairwise probabilities", index, value });
    }
    let mut r = vec![0.0; k * k];
    for (&(a, b), &v) in class_pairs(k).iter().zip(pairs) {
        let v = v.clamp(MIN_PAIR_PROBABILITY, 1.0 - MIN_PAIR_PROBABILITY);
        r[a * k + b] = v;
        r[b * k + a] = 1.0 - v;
    }
    let q = |t: usize, j: usize| {
        if t == j {
            (0..k).filter(|&i| i != t).map(|i| r[i * k + t] * r[i * k + t]).sum()
        } else {
            -r[j * k + t] * r[t * k + j]
        }
    };
    let bordered = |i: usize, j: usize| match (i < k, j < k) {
        (true, true) => q(i, j),
        (false, false) => 0.0,
        _ => 1.0,
    };
    let x = crate::linalg::Lu::full(k + 1, bordered).solve(|i| if i < k { 0.0 } else { 1.0 });
    // Round-off can leave tiny negative values where the true probability is ~0.
    let p: Vec<f64> = x[..k].iter().map(|&v| v.max(0.0)).collect();
    let total: f64 = p.iter().sum();
    Ok(p.iter().map(|v| v / total).collect())
}

fn done(a: f64, b: f64, n_iter: usize, converged: bool) -> PlattFit {
    PlattFit { platt: Platt { a, b }, n_iter, converged }
}

fn check(scores: &[f64], positive: &[bool]) -> Result<()> {
    if scores.is_empty() {
        return Err(Error::Empty("no decision values to calibrate on"));
    }
    if positive.len() != scores.len() {
        return Err(Error::DimensionMismatch {
            what: "calibration labels",
            expected: scores.len(),
            found: positive.len(),
        });
    }
    if let Some((index, &value)) = scores.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(Error::NonFinite { what: "decision values", index, value });
    }
    Ok(())
}

/// `Σ t z + log(1 + e^{-z})` with `z = a f + b`, written as `(t − 1) z + log(1 + e^{z})` for `z < 0`
/// so that the exponential never overflows.
fn objective(f: &[f64], t: &[f64], a: f64, b: f64) -> f64 {
    f.iter()
        .zip(t)
        .map(|(&f, &t)| {
            let z = a * f + b;
            if z >= 0.0 { t * z + (-z).exp().ln_1p() } else { (t - 1.0) * z + z.exp().ln_1p() }
        })
        .sum()
}

/// Gradient `(g_a, g_b)` and Hessian `(h_aa, h_bb, h_ab)` of [`objective`], the Hessian's diagonal
/// lifted by σ.
fn gradient_hessian(f: &[f64], t: &[f64], a: f64, b: f64) -> (f64, f64, f64, f64, f64) {
    let (mut g1, mut g2, mut h11, mut h22, mut h21) = (0.0, 0.0, SIGMA, SIGMA, 0.0);
    for (&f, &t) in f.iter().zip(t) {
        let z = a * f + b;
        // p = P(y = 1) = 1/(1 + e^z), q = 1 − p, both without overflow
        let (p, q) = if z >= 0.0 {
            let e = (-z).exp();
            (e / (1.0 + e), 1.0 / (1.0 + e))
        } else {
            let e = z.exp();
            (1.0 / (1.0 + e), e / (1.0 + e))
        };
        let d2 = p * q;
        h11 += f * f * d2;
        h22 += d2;
        h21 += f * d2;
        let d1 = t - p;
        g1 += f * d1;
        g2 += d1;
    }
    (g1, g2, h11, h22, h21)
}

/// `P(y = 1 | f) = 1/(1 + exp(a f + b))`, exact to rounding for any `a f + b` (no overflow, no NaN for
/// finite inputs).
pub fn predict_proba(platt: &Platt, f: f64) -> f64 {
    let z = platt.a * f + platt.b;
    if z >= 0.0 {
        let e = (-z).exp();
        e / (1.0 + e)
    } else {
        1.0 / (1.0 + z.exp())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_distr::{Distribution, Normal};
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn recovers_a_known_sigmoid() {
        let (a_true, b_true) = (-1.5, 0.3);
        let truth = Platt { a: a_true, b: b_true };
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(20070101);
        let normal = Normal::new(0.0, 2.0).unwrap();
        let n = 200_000;
        let f: Vec<f64> = (0..n).map(|_| normal.sample(&mut rng)).collect();
        let y: Vec<bool> = f.iter().map(|&f| rng.random::<f64>() < predict_proba(&truth, f)).collect();
        let fit = fit_platt(&f, &y).unwrap();
        assert!(fit.converged, "{fit:?}");
        // The standard errors (inverse Fisher information) are about 0.0067 for both.
        assert!((fit.platt.a - a_true).abs() < 0.03, "{fit:?}");
        assert!((fit.platt.b - b_true).abs() < 0.03, "{fit:?}");
    }

    #[test]
    fn stationary_point_of_the_smoothed_likelihood() {
        let f = [-3.0, -1.0, -0.5, 0.3, 0.5, 1.0, 2.0, -0.2, 0.1, 4.0];
        let y = [false, false, true, false, true, true, true, false, false, true];
        let fit = fit_platt(&f, &y).unwrap();
        assert!(fit.converged);
        let (hi, lo) = (6.0 / 7.0, 1.0 / 7.0);
        let t: Vec<f64> = y.iter().map(|&p| if p { hi } else { lo }).collect();
        let (g1, g2, ..) = gradient_hessian(&f, &t, fit.platt.a, fit.platt.b);
        assert!(g1.abs() < EPS && g2.abs() < EPS);
        // scikit-learn 1.9.1 `calibration._sigmoid_calibration` (same targets, L-BFGS) on these data
        assert!((fit.platt.a - -0.6784654664).abs() < 1e-5, "{fit:?}");
        assert!((fit.platt.b - 0.1906517765).abs() < 1e-5, "{fit:?}");
        // a local perturbation never decreases the (convex) objective
        let f0 = objective(&f, &t, fit.platt.a, fit.platt.b);
        for (da, db) in [(1e-3, 0.0), (-1e-3, 0.0), (0.0, 1e-3), (0.0, -1e-3)] {
            assert!(objective(&f, &t, fit.platt.a + da, fit.platt.b + db) >= f0);
        }
    }

    #[test]
    fn separable_data_stays_finite() {
        // Without target smoothing the MLE would be a → -∞.
        let f = [-2.0, -1.0, 1.0, 2.0];
        let y = [false, false, true, true];
        let fit = fit_platt(&f, &y).unwrap();
        assert!(fit.platt.a.is_finite() && fit.platt.b.is_finite() && fit.platt.a < 0.0);
        assert!(predict_proba(&fit.platt, 2.0) > 0.5 && predict_proba(&fit.platt, -2.0) < 0.5);
        // one class only: the smoothed targets still give a finite fit
        let fit = fit_platt(&[0.5, 1.0], &[true, true]).unwrap();
        assert!(fit.platt.a.is_finite() && fit.platt.b.is_finite());
    }

    #[test]
    fn predict_proba_is_stable() {
        let p = Platt { a: -1.0, b: 0.0 };
        assert_eq!(predict_proba(&p, 0.0), 0.5);
        assert_eq!(predict_proba(&p, 1e308), 1.0);
        assert_eq!(predict_proba(&p, -1e308), 0.0);
        let tiny = predict_proba(&p, -700.0); // e^{-700}/(1 + e^{-700})
        assert!((tiny / (-700.0f64).exp() - 1.0).abs() < 1e-14);
        let near_one = predict_proba(&Platt { a: 1.0, b: 0.0 }, -40.0);
        assert_eq!(near_one, 1.0 / (1.0 + (-40.0f64).exp()));
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(matches!(fit_platt(&[], &[]), Err(Error::Empty(_))));
        assert!(matches!(fit_platt(&[1.0, 2.0], &[true]), Err(Error::DimensionMismatch { found: 1, .. })));
        assert!(matches!(fit_platt(&[1.0, f64::NAN], &[true, false]), Err(Error::NonFinite { index: 1, .. })));
    }

    /// Consistent pairwise probabilities `r_ab = p_a / (p_a + p_b)` give back `p` (to round-off); random
    /// ones give a point where the bordered system's conditions hold and no feasible direction descends.
    #[test]
    fn pairwise_coupling_recovers_consistent_probabilities_and_minimises() {
        use crate::model::class_pairs;
        let p = [0.5, 0.05, 0.3, 0.15];
        let pairs: Vec<f64> = class_pairs(4).into_iter().map(|(a, b)| p[a] / (p[a] + p[b])).collect();
        let got = pairwise_coupling(4, &pairs).unwrap();
        assert!(got.iter().zip(&p).all(|(g, w)| (g - w).abs() < 1e-14), "{got:?}");
        let pairs = [0.9, 0.2, 0.6, 0.35, 0.75, 0.4];
        let got = pairwise_coupling(4, &pairs).unwrap();
        assert!((got.iter().sum::<f64>() - 1.0).abs() < 1e-15 && got.iter().all(|&v| v >= 0.0));
        let objective = |p: &[f64]| {
            let mut r = [[0.0; 4]; 4];
            for ((a, b), &v) in class_pairs(4).into_iter().zip(&pairs) {
                (r[a][b], r[b][a]) = (v, 1.0 - v);
            }
            let mut total = 0.0;
            for i in 0..4 {
                for j in (0..4).filter(|&j| j != i) {
                    total += (r[j][i] * p[i] - r[i][j] * p[j]).powi(2);
                }
            }
            total / 2.0
        };
        let best = objective(&got);
        for (i, j) in [(0, 1), (2, 3), (1, 3), (0, 2)] {
            for h in [1e-4, -1e-4] {
                let mut q = got.clone();
                q[i] += h;
                q[j] -= h;
                assert!(objective(&q) >= best, "moving mass between {i} and {j} by {h} descends");
            }
        }
        assert!(pairwise_coupling(3, &[0.5, 0.5]).is_err());
        assert!(pairwise_coupling(3, &[0.5, f64::NAN, 0.5]).is_err());
    }
}
