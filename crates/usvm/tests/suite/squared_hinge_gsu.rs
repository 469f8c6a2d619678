//! The chapter-5 squared-hinge losses (thesis eq. 5.11 and the exact expected squared hinge), their
//! objective, the L-BFGS solver and the one-vs-rest estimator: high-precision reference values, Monte
//! Carlo, finite differences (losses and objective, extreme `t`, tiny and huge `σ`), the `σ → 0` limit,
//! L-BFGS against Newton, SGD, monotone traces for the non-convex loss, and bad input.

#![allow(clippy::excessive_precision)]

use crate::common;

use ndarray::Array2;
use usvm::loss::special::{norm_cdf, norm_pdf};
use usvm::loss::{ExpectedSquaredHinge, MarginLoss, SquaredHinge, ThesisSquaredHinge};
use usvm::objective::{Objective, Problem};
use usvm::solver::exact::{self, ExactSettings};
use usvm::solver::lbfgs::{LbfgsSettings, minimize_fn};
use usvm::solver::pegasos::SgdSettings;
use usvm::svm::{SquaredHingeGsuLoss, SquaredHingeGsuParams, SquaredHingeGsuSolver};
use usvm::{Covariances, Dataset, Error};

/// `(μ, σ, E[max(0, D)²], Φ(μ/σ) μ²)` to 20 digits by mpmath at 50 digits.
const REFERENCE: [(f64, f64, f64, f64); 20] = [
    (1.0, 1.0, 1.924660216656229247, 8.4134474606854294859e-1),
    (0.0, 1.0, 5.0e-1, 0.0),
    (-1.0, 1.0, 7.5339783343770753032e-2, 1.5865525393145705141e-1),
    (-3.9, 1.0, 4.8853980935268654485e-6, 7.3154539250773756285e-4),
    (-4.1, 1.0, 1.9374036862126758105e-6, 3.4725269119991115205e-4),
    (-6.0, 1.0, 4.8445767455118283954e-11, 3.5517155221357133065e-8),
    (-10.0, 1.0, 1.452927695711980294e-25, 7.619853024160526066e-22),
    (-30.0, 1.0, 1.0843724873983491482e-200, 4.4160425344333683536e-195),
    (3.0, 0.5, 9.2499999999878885581, 8.9999999911207111947),
    (0.5, 0.001, 2.50001e-1, 2.5e-1),
    (-1000.0, 1e+100, 5.000000000000000159e+199, 5.0e+5),
    (1e-150, 1e-150, 1.9246602166562292712e-300, 8.4134474606854295918e-301),
    (-5e-150, 1e-150, 1.9343295187553178726e-308, 7.1662892969798525356e-306),
    (-2.0, 0.5, 7.7255202587431355445e-7, 1.2668496733247968502e-4),
    (-2.4, 1.0, 1.6684701426468831136e-3, 4.7217806925673713562e-2),
    (-2.6, 1.0, 8.5509905647489666795e-4, 3.1509631040338745694e-2),
    (-3.0, 1.0, 2.0343508048692373971e-4, 1.214908228467085074e-2),
    (-3.5, 1.0, 2.7945864560546502032e-5, 2.8497062181851816953e-3),
    (-2.5, 1.0, 1.1993223779556365552e-3, 3.8810408286100844794e-2),
    (-1.5, 1.0, 2.2847010624951123093e-2, 1.5031620285493064851e-1),
];

#[test]
fn losses_match_high_precision_reference() {
    for (mu, s, expected, thesis) in REFERENCE {
        for (name, got, want) in [
            ("expected", ExpectedSquaredHinge.value(mu, s), expected),
            ("thesis", ThesisSquaredHinge.value(mu, s), thesis),
        ] {
            let err = common::rel_diff(got, want);
            assert!(err < 1e-13, "{name}({mu}, {s}) = {got:e}, reference {want:e}, relative error {err:e}");
        }
        assert_eq!(ExpectedSquaredHinge.derivatives(mu, s).value, ExpectedSquaredHinge.value(mu, s));
        assert_eq!(ThesisSquaredHinge.derivatives(mu, s).value, ThesisSquaredHinge.value(mu, s));
    }
    // Continuous across the switch to the continued fraction at t = -2.5.
    for loss in [&ExpectedSquaredHinge as &dyn MarginLoss2, &ThesisSquaredHinge] {
        let (below, above) = (loss.derivs(-2.5 - 1e-12, 1.0).value, loss.derivs(-2.5 + 1e-12, 1.0).value);
        assert!(common::rel_diff(below, above) < 1e-10, "{below:e} vs {above:e}");
    }
}

#[test]
fn expected_squared_hinge_agrees_with_monte_carlo() {
    // E[max(0, D)²] and P(D > 0) μ², D ~ N(μ, σ²), by 10⁶ samples each: within 4 standard errors.
    let mut rng = common::rng(5);
    let n = 1_000_000;
    for &(mu, s) in &[(1.0, 1.0), (0.0, 0.3), (-1.0, 0.5), (0.5, 2.0), (-2.0, 1.0), (2.0, 0.1), (-0.3, 3.0)] {
        let (mut sum, mut sum2, mut pos) = (0.0, 0.0, 0.0);
        for _ in 0..n {
            let d = mu + s * common::normal(&mut rng);
            let v = f64::max(0.0, d).powi(2);
            sum += v;
            sum2 += v * v;
            pos += f64::from(u8::from(d > 0.0));
        }
        let mean = sum / n as f64;
        let se = ((sum2 / n as f64 - mean * mean) / n as f64).sqrt();
        let exact = ExpectedSquaredHinge.value(mu, s);
        assert!((mean - exact).abs() <= 4.0 * se, "μ={mu} σ={s}: MC {mean} ± {se}, closed form {exact}");
        let p = pos / n as f64;
        let se_p = (p * (1.0 - p) / n as f64).sqrt();
        let thesis = ThesisSquaredHinge.value(mu, s);
        assert!((p * mu * mu - thesis).abs() <= 4.0 * se_p * mu * mu + 1e-15, "thesis μ={mu} σ={s}");
        // The mean of max(0, D) is the GSU loss: ∂E/∂μ = 2 E[max(0, D)].
        assert!(
            (ExpectedSquaredHinge.derivatives(mu, s).d - 2.0 * usvm::loss::ExpectedHinge.value(mu, s)).abs() < 1e-14
        );
    }
}

/// Checks `(∂L/∂μ, ∂L/∂σ)` against central differences of the value, and the Hessian against central
/// differences of the first derivatives, at `(μ, σ)`.
fn fd_check<L: MarginLoss>(loss: L, mu: f64, s: f64) {
    let at = |m: f64, s: f64| loss.derivatives(m, s);
    let v = at(mu, s);
    // Steps: a millionth of the scale on which each variable changes the loss.
    let (hm, hs) = (1e-6 * (mu.abs() + s), 1e-6 * s);
    let fd =
        |f: &dyn Fn(f64, f64) -> f64, dm: f64, ds: f64| (f(mu + dm, s + ds) - f(mu - dm, s - ds)) / (2.0 * (dm + ds));
    let value = |m, s| loss.value(m, s);
    let (fd_m, fd_s) = (fd(&value, hm, 0.0), fd(&value, 0.0, hs));
    let (fd_mm, fd_ms) = (fd(&|m, s| at(m, s).d, hm, 0.0), fd(&|m, s| at(m, s).d, 0.0, hs));
    let (fd_sm, fd_ss) = (fd(&|m, s| at(m, s).s, hm, 0.0), fd(&|m, s| at(m, s).s, 0.0, hs));
    // Round-off in the differences of values of size L over steps h (ε L / h), and the truncation error
    // h²/6 · (third derivative ∝ φ(t) · poly(t)), plus a relative 1e-6.
    let scale = mu.abs() + s;
    let t = mu / s;
    let noise1 = 1e-15 * v.value.abs().max(1e-300) / hs.min(hm) + 1e-10 * s * (1.0 + t.abs()).powi(5) * norm_pdf(t);
    let noise2 = 1e-15 * (v.d.abs() + v.s.abs()) / hs.min(hm) + 1e-10 * (1.0 + t.abs()).powi(6) * norm_pdf(t);
    for (name, exact, fd, noise) in [
        ("μ", v.d, fd_m, noise1),
        ("σ", v.s, fd_s, noise1),
        ("μμ", v.dd, fd_mm, noise2),
        ("μσ", v.ds, fd_ms, noise2),
        ("σμ", v.ds, fd_sm, noise2),
        ("σσ", v.ss, fd_ss, noise2),
    ] {
        let tol = 1e-6 * exact.abs().max(fd.abs()) + noise + 1e-300;
        assert!(
            (exact - fd).abs() <= tol,
            "{} ∂{name} at μ={mu:e} σ={s:e} (t={:e}, scale {scale:e}): {exact:e} vs fd {fd:e}",
            loss.name(),
            mu / s
        );
        assert!(exact.is_finite());
    }
}

#[test]
fn loss_derivatives_match_finite_differences() {
    let mut rng = common::rng(3);
    for _ in 0..300 {
        let s = 10f64.powf(-8.0 + 14.0 * rng_uniform(&mut rng)); // σ from 1e-8 to 1e6
        let t = 6.0 * common::normal(&mut rng);
        fd_check(ExpectedSquaredHinge, t * s, s);
        fd_check(ThesisSquaredHinge, t * s, s);
    }
    for &t in &[-30.0, -12.0, -2.5001, -2.4999, -1.0, 0.0, 0.3, 4.0, 12.0, 30.0] {
        for &s in &[1e-9, 1e-3, 1.0, 1e3, 1e7] {
            fd_check(ExpectedSquaredHinge, t * s, s);
            fd_check(ThesisSquaredHinge, t * s, s);
        }
    }
}

fn rng_uniform(rng: &mut rand_xoshiro::Xoshiro256PlusPlus) -> f64 {
    use rand_distr::{Distribution, Uniform};
    Uniform::new(0.0, 1.0).unwrap().sample(rng)
}

#[test]
fn finite_for_extreme_inputs_and_bounds() {
    let ratios = [-1e6, -1e3, -40.0, -5.0, -1.0, 0.0, 1.0, 5.0, 40.0, 1e3, 1e6];
    for &sigma in &[0.0, 1e-300, 1e-10, 1.0, 1e10, 1e100] {
        for &r in &ratios {
            let mu = if sigma == 0.0 { r } else { r * sigma };
            for dv in [ExpectedSquaredHinge.derivatives(mu, sigma), ThesisSquaredHinge.derivatives(mu, sigma)] {
                for v in [dv.value, dv.d, dv.s, dv.dd, dv.ds, dv.ss] {
                    assert!(v.is_finite(), "not finite at μ={mu:e} σ={sigma:e}: {dv:?}");
                }
            }
            let sq = mu.max(0.0).powi(2);
            let e = ExpectedSquaredHinge.value(mu, sigma);
            assert!(e >= sq * (1.0 - 1e-15), "expected below the squared hinge at μ={mu:e} σ={sigma:e}");
            // E[max(0,D)²] ≤ E[D²] = μ² + σ².
            assert!(e <= (mu * mu + sigma * sigma) * (1.0 + 1e-15));
            let thesis = ThesisSquaredHinge.value(mu, sigma);
            assert!(thesis >= 0.0 && thesis <= mu * mu);
            if mu >= 0.0 {
                assert!(thesis <= e * (1.0 + 1e-15), "thesis above expected at μ={mu:e} σ={sigma:e}");
            }
        }
    }
    // Subnormal σ with a finite μ: t = ±∞ must not produce NaN.
    for mu in [-1e10, 1e10] {
        let dv = ThesisSquaredHinge.derivatives(mu, 5e-324);
        assert!([dv.value, dv.d, dv.s, dv.dd, dv.ds, dv.ss].iter().all(|v| v.is_finite()), "{dv:?}");
        let dv = ExpectedSquaredHinge.derivatives(mu, 5e-324);
        assert!([dv.value, dv.d, dv.s, dv.dd, dv.ds, dv.ss].iter().all(|v| v.is_finite()), "{dv:?}");
    }
}

#[test]
fn sigma_to_zero_is_the_squared_hinge() {
    for &mu in &[-2.0, -1e-3, 0.0, 1e-3, 0.7, 3.0] {
        let sq = SquaredHinge.derivatives(mu, 0.0);
        for loss in [&ExpectedSquaredHinge as &dyn MarginLoss2, &ThesisSquaredHinge] {
            assert_eq!(loss.derivs(mu, 0.0), sq);
            let near = loss.derivs(mu, 1e-12);
            assert!((near.value - sq.value).abs() < 1e-11, "{mu}: {near:?}");
            assert!((near.d - sq.d).abs() < 1e-11 || mu == 0.0, "{mu}: {near:?}");
        }
    }
    // The convex one: convexity in (μ, σ) (PSD Hessian) and monotone in σ; the thesis one: neither.
    let mut rng = common::rng(8);
    for _ in 0..1000 {
        let (mu, s) = (3.0 * common::normal(&mut rng), 0.01 + common::normal(&mut rng).abs());
        let h = ExpectedSquaredHinge.derivatives(mu, s);
        assert!(h.s >= 0.0 && h.dd >= 0.0 && h.ss >= -1e-15);
        assert!(h.dd * h.ss - h.ds * h.ds >= -1e-12 * h.dd.max(1.0), "not PSD at ({mu}, {s}): {h:?}");
    }
    assert!(ExpectedSquaredHinge.is_convex() && !ThesisSquaredHinge.is_convex());
    assert!(ThesisSquaredHinge.derivatives(-1.0, 1.0).dd < 0.0, "the thesis loss is concave there");
    assert!(ThesisSquaredHinge.derivatives(1.0, 1.0).s < 0.0, "and decreasing in σ where μ > 0");
    let t: f64 = 0.7;
    assert_eq!(ThesisSquaredHinge.derivatives(t, 1.0).d, t * (2.0 * norm_cdf(t) + t * norm_pdf(t)));
}

/// Object-safe access to the two losses in one array.
trait MarginLoss2 {
    fn derivs(&self, d: f64, s: f64) -> usvm::loss::LossDerivatives;
}
impl<L: MarginLoss> MarginLoss2 for L {
    fn derivs(&self, d: f64, s: f64) -> usvm::loss::LossDerivatives {
        self.derivatives(d, s)
    }
}

fn norm(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// ∇J and (for the convex loss) ∇²J v at θ against central differences, relative 1e-6.
fn objective_check<L: MarginLoss>(objective: &Objective<'_, L>, theta: &[f64], v: &[f64], hessian: bool) {
    let dim = objective.dim();
    let mut g = vec![0.0; dim];
    let (value, curvature) = objective.value_grad(theta, &mut g);
    assert!((value - objective.value(theta)).abs() <= 1e-14 * value.abs().max(1.0));
    let h = 1e-6 * norm(theta).max(1e-3);
    let fd: Vec<f64> = (0..dim)
        .map(|j| {
            let (mut p, mut m) = (theta.to_vec(), theta.to_vec());
            p[j] += h;
            m[j] -= h;
            (objective.value(&p) - objective.value(&m)) / (2.0 * h)
        })
        .collect();
    let err: Vec<f64> = g.iter().zip(&fd).map(|(a, b)| a - b).collect();
    assert!(norm(&err) <= 1e-6 * norm(&g).max(1e-2), "gradient {g:?} vs finite differences {fd:?}");
    if hessian {
        let mut hv = vec![0.0; dim];
        objective.hess_vec(theta, &curvature, v, &mut hv);
        let shifted = |sign: f64| {
            let t: Vec<f64> = theta.iter().zip(v).map(|(a, b)| a + sign * h * b).collect();
            objective.gradient(&t)
        };
        let (gp, gm) = (shifted(1.0), shifted(-1.0));
        let fd_hv: Vec<f64> = gp.iter().zip(&gm).map(|(a, b)| (a - b) / (2.0 * h)).collect();
        let err: Vec<f64> = hv.iter().zip(&fd_hv).map(|(a, b)| a - b).collect();
        assert!(norm(&err) <= 1e-6 * norm(&hv).max(1e-2), "Hv {hv:?} vs finite differences {fd_hv:?}");
    }
}

fn point(seed: u64, dim: usize, scale: f64) -> Vec<f64> {
    let mut r = common::rng(seed);
    (0..dim).map(|_| scale * common::normal(&mut r)).collect()
}

#[test]
fn objective_gradients_match_finite_differences() {
    // Every covariance form except none and sparse diagonal (σ_i = 0 makes the squared hinge's kink
    // reachable); covariances of size 1e-10 (σ tiny, extreme t), 0.5 and 1e6 (σ huge); θ small and large.
    let forms = ["iso", "diag", "lowrank", "full"];
    let mut case = 0u64;
    for form in forms {
        for cov_scale in [1e-10, 0.5, 1e6] {
            for theta_scale in [0.1, 3.0] {
                case += 1;
                let (l, n) = (9, 5);
                let mut r = common::rng(100 + case);
                let (x, labels) = common::blobs(&mut r, l, n, 2.0);
                let cov = common::random_covariances(&mut r, form, l, n, cov_scale);
                let data = Dataset::dense(x, labels).with_covariances(cov);
                let y = common::labels_pm1(&data);
                let weights: Vec<f64> = (0..l).map(|i| 0.2 + 0.1 * i as f64).collect();
                let problem = Problem {
                    features: &data.features,
                    y: &y,
                    weights: case.is_multiple_of(2).then_some(weights.as_slice()),
                    covariances: data.covariances.as_dyn(),
                };
                let theta = point(case, n + 1, theta_scale);
                let v = point(case + 1000, n + 1, 1.0);
                if cov_scale < 1e-6 {
                    // σ ~ 1e-5: away from the squared hinge's kink only.
                    let probe = Objective::new(problem, SquaredHinge, 0.1);
                    if (0..l).any(|i| probe.margin(&theta, i).0.abs() < 1e-3) {
                        continue;
                    }
                }
                for fit_intercept in [true, false] {
                    let e = Objective { fit_intercept, ..Objective::new(problem, ExpectedSquaredHinge, 0.1) };
                    let dim = e.dim();
                    objective_check(&e, &theta[..dim], &v[..dim], true);
                    let t = Objective { fit_intercept, ..Objective::new(problem, ThesisSquaredHinge, 0.1) };
                    objective_check(&t, &theta[..dim], &v[..dim], true);
                }
            }
        }
    }
}

fn three_class_data(seed: u64, l: usize, n: usize, var: f64) -> Dataset<'static> {
    let mut r = common::rng(seed);
    let labels: Vec<i64> = (0..l).map(|i| (i % 3) as i64).collect();
    let centres = Array2::from_shape_fn((3, n), |_| 1.5 * common::normal(&mut r));
    let x = Array2::from_shape_fn((l, n), |(i, j)| centres[[labels[i] as usize, j]] + common::normal(&mut r));
    let v = Array2::from_shape_fn((l, n), |_| var * (0.2 + rng_uniform(&mut r)));
    Dataset::dense(x, labels).with_covariances(Covariances::diagonal(v))
}

fn lbfgs(tol: f64) -> SquaredHingeGsuSolver {
    SquaredHingeGsuSolver::Lbfgs(LbfgsSettings { tol, ..Default::default() })
}

#[test]
fn lbfgs_and_newton_reach_the_same_optimum_of_the_expected_loss() {
    let data = three_class_data(1, 150, 6, 0.5);
    let base = SquaredHingeGsuParams { loss: SquaredHingeGsuLoss::Expected, lambda: 0.01, ..Default::default() };
    let a = SquaredHingeGsuParams { solver: lbfgs(1e-8), ..base.clone() }.fit(&data).unwrap();
    let newton = SquaredHingeGsuSolver::Newton(ExactSettings { tol: 1e-9, ..Default::default() });
    let b = SquaredHingeGsuParams { solver: newton, ..base }.fit(&data).unwrap();
    assert_eq!(a.reports.len(), 3);
    for (ra, rb) in a.reports.iter().zip(&b.reports) {
        assert!(ra.converged() && rb.converged(), "{} {}", ra.gradient_norm, rb.gradient_norm);
        assert!(common::rel_diff(ra.objective, rb.objective) < 1e-10, "{} vs {}", ra.objective, rb.objective);
        assert!(ra.objective_trace.windows(2).all(|w| w[1] < w[0]));
    }
    let diff = (&*a.model.coef.dense() - &*b.model.coef.dense()).iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let size = a.model.coef.dense().iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(diff < 1e-5 * size, "coefficients differ by {diff} (size {size})");
    let intercepts: f64 = a.model.intercept.iter().zip(&b.model.intercept).map(|(x, y)| (x - y).abs()).sum();
    assert!(intercepts < 1e-5);
    // The fit classifies the training data well.
    let predicted = a.model.predict(&data.features).unwrap();
    let accuracy = predicted.iter().zip(data.labels.iter()).filter(|(p, y)| p == y).count() as f64 / 150.0;
    assert!(accuracy > 0.8, "accuracy {accuracy}");
}

#[test]
fn zero_and_vanishing_covariances_give_the_squared_hinge_svm() {
    // Independent: Newton on the plain squared-hinge objective (the σ-free loss) vs L-BFGS on both
    // chapter-5 losses with Σ = 0 and with Σ = 1e-20 I.
    let mut r = common::rng(4);
    let (x, labels) = common::blobs(&mut r, 80, 4, 1.0);
    let data = Dataset::dense(x, labels);
    let y = common::labels_pm1(&data);
    let problem = Problem { features: &data.features, y: &y, weights: None, covariances: data.covariances.as_dyn() };
    let plain = Objective::new(problem, SquaredHinge, 0.05);
    let (_, reference) =
        exact::solve(&plain, vec![0.0; 5], &ExactSettings { tol: 1e-10, ..Default::default() }, Default::default());
    let tiny = data.clone().with_covariances(Covariances::isotropic(vec![1e-20; 80]));
    for loss in [SquaredHingeGsuLoss::Expected, SquaredHingeGsuLoss::Thesis] {
        for d in [&data, &tiny] {
            let fit =
                SquaredHingeGsuParams { loss, lambda: 0.05, solver: lbfgs(1e-8), ..Default::default() }.fit(d).unwrap();
            let got = fit.reports[0].objective;
            assert!(common::rel_diff(got, reference.objective) < 1e-9, "{loss:?}: {got} vs {}", reference.objective);
        }
    }
}

#[test]
fn thesis_loss_gives_a_monotone_trace_and_a_stationary_point() {
    let data = three_class_data(2, 120, 5, 1.0);
    let fit = SquaredHingeGsuParams {
        loss: SquaredHingeGsuLoss::Thesis,
        lambda: 0.01,
        solver: lbfgs(1e-7),
        ..Default::default()
    }
    .fit(&data)
    .unwrap();
    for r in &fit.reports {
        assert!(r.objective_trace.len() > 2);
        assert!(r.objective_trace.windows(2).all(|w| w[1] < w[0]));
        assert_eq!(*r.objective_trace.last().unwrap(), r.objective);
        assert!(
            r.converged() && r.gradient_norm <= 1e-7 * r.initial_gradient_norm.unwrap(),
            "‖g‖ = {}",
            r.gradient_norm
        );
    }
    // Its objective differs from the expected loss's (the losses differ where σ > 0).
    let expected = SquaredHingeGsuParams { lambda: 0.01, ..Default::default() }.fit(&data).unwrap();
    assert!((expected.reports[0].objective - fit.reports[0].objective).abs() > 1e-3);
}

#[test]
fn sgd_approaches_the_optimum_and_is_reproducible() {
    let data = three_class_data(3, 300, 5, 0.3);
    let base = SquaredHingeGsuParams { lambda: 0.05, ..Default::default() };
    let exact = base.fit(&data).unwrap();
    let sgd = |seed| {
        let solver = SquaredHingeGsuSolver::Sgd(SgdSettings { iterations: 20_000, batch: 20, seed });
        SquaredHingeGsuParams { solver, ..base.clone() }.fit(&data).unwrap()
    };
    let (a, b) = (sgd(7), sgd(7));
    assert_eq!(a, b, "same seed, same bits");
    for (rs, re) in a.reports.iter().zip(&exact.reports) {
        assert!(rs.objective >= re.objective * (1.0 - 1e-12));
        assert!(rs.objective <= 1.05 * re.objective, "SGD {} vs optimum {}", rs.objective, re.objective);
    }
    assert_ne!(sgd(8).model, a.model);
}

#[test]
fn lbfgs_solver_on_test_functions() {
    // A convex quadratic ½xᵀAx - bᵀx (A = diag(1..20)): the minimiser A⁻¹b.
    let n = 20;
    let quad = |x: &[f64], g: &mut [f64]| {
        let mut f = 0.0;
        for i in 0..x.len() {
            let a = (i + 1) as f64;
            g[i] = a * x[i] - 1.0;
            f += 0.5 * a * x[i] * x[i] - x[i];
        }
        f
    };
    let r =
        minimize_fn(quad, vec![0.0; n], &LbfgsSettings { tol: 1e-7, ..Default::default() }, 1.0, Default::default());
    assert!(r.converged() && r.n_iter < 60, "{} iterations, ‖g‖ = {}", r.n_iter, r.gradient_norm);
    for (i, xi) in r.x.iter().enumerate() {
        assert!((xi - 1.0 / (i + 1) as f64).abs() < 1e-7);
    }
    // Beyond what f resolves (|Δf| ~ ‖g‖²/20 < 1e-16 |f| once ‖g‖ < 1e-7): the approximate Wolfe stage.
    let r =
        minimize_fn(quad, vec![0.0; n], &LbfgsSettings { tol: 1e-13, ..Default::default() }, 1.0, Default::default());
    assert!(r.converged() && r.n_iter < 100, "{} iterations, ‖g‖ = {}", r.n_iter, r.gradient_norm);
    assert!(r.x.iter().enumerate().all(|(i, xi)| (xi - 1.0 / (i + 1) as f64).abs() < 1e-13));
    assert!(r.trace.windows(2).all(|w| w[1] <= w[0] + 1e-12 * w[0].abs()));
    // Tolerance zero: converged only on an exactly zero gradient.
    let r = minimize_fn(
        quad,
        vec![0.0; n],
        &LbfgsSettings { tol: 0.0, max_iter: 200, ..Default::default() },
        1.0,
        Default::default(),
    );
    assert!(r.gradient_norm < 1e-13 && r.converged() == (r.gradient_norm == 0.0));
    // A non-convex function with many local minima: the trace still decreases strictly.
    let wavy = |x: &[f64], g: &mut [f64]| {
        let mut f = 0.0;
        for i in 0..x.len() {
            f += x[i] * x[i] / 10.0 + (3.0 * x[i]).sin();
            g[i] = x[i] / 5.0 + 3.0 * (3.0 * x[i]).cos();
        }
        f
    };
    let r = minimize_fn(
        wavy,
        point(1, 8, 3.0),
        &LbfgsSettings { tol: 1e-7, ..Default::default() },
        1.0,
        Default::default(),
    );
    assert!(r.converged() && r.trace.windows(2).all(|w| w[1] < w[0]), "{:?}", r.trace);
    // Out of iterations: reported, not an error.
    let rosen = |x: &[f64], g: &mut [f64]| {
        let (a, b) = (1.0 - x[0], x[1] - x[0] * x[0]);
        g[0] = -2.0 * a - 400.0 * x[0] * b;
        g[1] = 200.0 * b;
        a * a + 100.0 * b * b
    };
    let r = minimize_fn(
        rosen,
        vec![-1.2, 1.0],
        &LbfgsSettings { max_iter: 3, ..Default::default() },
        1.0,
        Default::default(),
    );
    assert!(!r.converged() && r.n_iter == 3 && r.trace.len() == 4);
}

#[test]
fn bad_input_is_a_typed_error() {
    let data = three_class_data(4, 30, 3, 0.5);
    let ok = SquaredHingeGsuParams::default();
    let invalid = |p: SquaredHingeGsuParams, name: &str| match p.fit(&data) {
        Err(Error::InvalidParameter { name: got, .. }) => assert_eq!(got, name),
        other => panic!("expected an invalid {name}, got {other:?}"),
    };
    for lambda in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        invalid(SquaredHingeGsuParams { lambda, ..ok.clone() }, "lambda");
    }
    invalid(SquaredHingeGsuParams { solver: lbfgs(0.0), ..ok.clone() }, "tol");
    invalid(SquaredHingeGsuParams { solver: lbfgs(f64::NAN), ..ok.clone() }, "tol");
    let no_memory = SquaredHingeGsuSolver::Lbfgs(LbfgsSettings { memory: 0, ..Default::default() });
    invalid(SquaredHingeGsuParams { solver: no_memory, ..ok.clone() }, "memory");
    let newton = SquaredHingeGsuSolver::Newton(ExactSettings::default());
    invalid(SquaredHingeGsuParams { loss: SquaredHingeGsuLoss::Thesis, solver: newton, ..ok.clone() }, "solver");
    let sgd = |iterations, batch| SquaredHingeGsuSolver::Sgd(SgdSettings { iterations, batch, seed: 0 });
    invalid(SquaredHingeGsuParams { solver: sgd(0, 10), ..ok.clone() }, "iterations");
    invalid(SquaredHingeGsuParams { solver: sgd(10, 0), ..ok.clone() }, "batch");

    let mut nan = data.clone();
    if let usvm::Features::Dense(a) = &mut nan.features {
        a.view_mut()[[3, 1]] = f64::NAN;
    }
    assert!(matches!(ok.fit(&nan), Err(Error::NonFinite { .. })));
    let single = Dataset { labels: vec![2; 30].into(), ..data.clone() };
    assert!(matches!(ok.fit(&single), Err(Error::SingleClass { label: 2 })));
    let short = Dataset { labels: vec![0, 1].into(), ..data.clone() };
    assert!(matches!(ok.fit(&short), Err(Error::DimensionMismatch { .. })));
    let empty = Dataset::dense(Array2::zeros((0, 3)), vec![]);
    assert!(matches!(ok.fit(&empty), Err(Error::Empty(_))));
    let negative = data.clone().with_covariances(Covariances::diagonal(Array2::from_elem((30, 3), -0.1)));
    assert!(matches!(ok.fit(&negative), Err(Error::NegativeVariance { .. })));
    let wrong = data.clone().with_covariances(Covariances::diagonal(Array2::from_elem((30, 2), 0.1)));
    assert!(matches!(ok.fit(&wrong), Err(Error::DimensionMismatch { .. })));
    let weights = data.clone().with_weights(vec![-1.0; 30]);
    assert!(matches!(ok.fit(&weights), Err(Error::InvalidWeight { .. })));
}
