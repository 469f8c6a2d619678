//! The expected hinge loss: closed form against Monte Carlo and 50-digit reference values, derivatives
//! against finite differences, bounds, and finiteness over extreme inputs.

#![allow(clippy::excessive_precision)]

use crate::common;

use std::f64::consts::PI;
use usvm::loss::special::{g, norm_cdf};
use usvm::loss::{BallHinge, ExpectedHinge, Hinge, MarginLoss, SquaredHinge};

/// `L(d, σ)` to 20 digits, computed with mpmath at 50 digits (`d Φ(d/σ) + σ φ(d/σ)`).
const REFERENCE: [(f64, f64, f64); 15] = [
    (1.0, 1.0, 1.0833154705876862984),
    (0.0, 1.0, 0.39894228040143267794),
    (-1.0, 1.0, 0.083315470587686298383),
    (-3.9, 1.0, 0.000011079729724122018032),
    (-4.1, 1.0, 4.5658788356912430046e-6),
    (-5.0, 1.0, 5.3461655338328149539e-8),
    (-10.0, 1.0, 7.4745602545893280366e-25),
    (-30.0, 1.0, 1.6319567340914011894e-199),
    (-37.0, 1.0, 1.5451991905122024593e-301),
    (3.0, 0.5, 3.0000000000781784898),
    (40.0, 1.0, 40.0),
    (0.5, 1e-3, 0.5),
    (-1e3, 1e300, 3.9894228040143269889e+299),
    (1e-300, 1e-300, 1.0833154705876863255e-300),
    (-2e-300, 1e-300, 8.4907026168296377628e-303),
];

#[test]
fn matches_high_precision_reference() {
    for (d, s, want) in REFERENCE {
        let got = ExpectedHinge.value(d, s);
        let err = common::rel_diff(got, want);
        assert!(err < 1e-13, "L({d}, {s}) = {got:e}, reference {want:e}, relative error {err:e}");
    }
    // Far tails underflow to zero rather than to NaN.
    assert_eq!(ExpectedHinge.value(-100.0, 1.0), 0.0);
}

#[test]
fn tail_function_is_continuous_across_the_switch() {
    // g is evaluated by two formulas on either side of t = -4.
    let below = g(-4.0 - 1e-12);
    let above = g(-4.0 + 1e-12);
    assert!(common::rel_diff(below, above) < 1e-10, "{below:e} vs {above:e}");
}

#[test]
fn agrees_with_monte_carlo() {
    // E[max(0, D)], D ~ N(d, σ²), by 10⁶ samples: within 4 standard errors.
    let mut rng = common::rng(7);
    for &(d, s) in &[(1.0, 1.0), (0.0, 0.3), (-1.0, 0.5), (0.5, 2.0), (-2.0, 1.0), (2.0, 0.1)] {
        let n = 1_000_000;
        let (mut sum, mut sum2) = (0.0, 0.0);
        for _ in 0..n {
            let v = f64::max(0.0, d + s * common::normal(&mut rng));
            sum += v;
            sum2 += v * v;
        }
        let mean = sum / n as f64;
        let se = ((sum2 / n as f64 - mean * mean) / n as f64).sqrt();
        let exact = ExpectedHinge.value(d, s);
        assert!((mean - exact).abs() <= 4.0 * se, "d={d} σ={s}: MC {mean} ± {se}, closed form {exact}");
    }
}

#[test]
fn finite_for_extreme_inputs() {
    let ratios = [-1e6, -1e3, -40.0, -5.0, -1.0, 0.0, 1.0, 5.0, 40.0, 1e3, 1e6];
    for &sigma in &[0.0, 1e-300, 1e-10, 1.0, 1e10, 1e300] {
        for &r in &ratios {
            let d = if sigma == 0.0 { r } else { r * sigma };
            let dv = ExpectedHinge.derivatives(d, sigma);
            for (name, v) in
                [("value", dv.value), ("d", dv.d), ("s", dv.s), ("dd", dv.dd), ("ds", dv.ds), ("ss", dv.ss)]
            {
                assert!(v.is_finite(), "{name} not finite at d={d:e} σ={sigma:e}: {v}");
            }
            assert!(dv.value >= d.max(0.0), "below the hinge at d={d:e} σ={sigma:e}");
            let upper = d.max(0.0) + sigma / (2.0 * PI).sqrt();
            assert!(dv.value <= upper * (1.0 + 1e-15), "above hinge + σ/√(2π) at d={d:e} σ={sigma:e}");
        }
    }
    // d/σ = ±∞ in floating point (subnormal σ): the curvature terms are 0, not 0·∞ = NaN.
    for d in [1e10, -1e10] {
        let dv = ExpectedHinge.derivatives(d, 5e-324);
        assert_eq!((dv.dd, dv.ds, dv.ss), (0.0, 0.0, 0.0), "d={d:e}");
        assert_eq!(dv.value, d.max(0.0));
    }
}

#[test]
fn sigma_to_zero_is_the_hinge() {
    for &d in &[-2.0, -1e-3, 1e-3, 0.7, 3.0] {
        assert_eq!(ExpectedHinge.value(d, 0.0), Hinge.value(d, 0.0));
        let near = ExpectedHinge.value(d, 1e-12);
        assert!((near - d.max(0.0)).abs() < 1e-12);
    }
    assert_eq!(ExpectedHinge.derivatives(0.0, 0.0).d, 0.5);
}

#[test]
fn derivatives_match_finite_differences() {
    let mut rng = common::rng(11);
    for _ in 0..200 {
        let d = 3.0 * common::normal(&mut rng);
        let s = 0.05 + common::normal(&mut rng).abs();
        let h = 1e-5;
        let at = |d: f64, s: f64| ExpectedHinge.derivatives(d, s);
        let v = at(d, s);
        let fd_d = (ExpectedHinge.value(d + h, s) - ExpectedHinge.value(d - h, s)) / (2.0 * h);
        let fd_s = (ExpectedHinge.value(d, s + h) - ExpectedHinge.value(d, s - h)) / (2.0 * h);
        let fd_dd = (at(d + h, s).d - at(d - h, s).d) / (2.0 * h);
        let fd_ds = (at(d, s + h).d - at(d, s - h).d) / (2.0 * h);
        let fd_sd = (at(d + h, s).s - at(d - h, s).s) / (2.0 * h);
        let fd_ss = (at(d, s + h).s - at(d, s - h).s) / (2.0 * h);
        for (name, exact, fd) in [
            ("d", v.d, fd_d),
            ("s", v.s, fd_s),
            ("dd", v.dd, fd_dd),
            ("ds", v.ds, fd_ds),
            ("sd", v.ds, fd_sd),
            ("ss", v.ss, fd_ss),
        ] {
            assert!((exact - fd).abs() <= 1e-6 * exact.abs().max(1e-2), "∂{name} at ({d}, {s}): {exact} vs {fd}");
        }
        assert_eq!(v.d, norm_cdf(d / s));
    }
}

#[test]
fn logistic_loss_derivatives_match_finite_differences() {
    use usvm::methods::logistic::LogisticLoss;
    for d in [-40.0, -3.0, -0.5, 0.0, 0.7, 1.0, 2.5, 40.0] {
        let h = 1e-5;
        let v = LogisticLoss.derivatives(d, 0.3);
        let fd_d = (LogisticLoss.value(d + h, 0.3) - LogisticLoss.value(d - h, 0.3)) / (2.0 * h);
        let fd_dd = (LogisticLoss.derivatives(d + h, 0.3).d - LogisticLoss.derivatives(d - h, 0.3).d) / (2.0 * h);
        assert!((v.d - fd_d).abs() <= 1e-7 * v.d.abs().max(1e-3), "∂d at {d}: {} vs {fd_d}", v.d);
        assert!((v.dd - fd_dd).abs() <= 1e-6 * v.dd.abs().max(1e-3), "∂dd at {d}: {} vs {fd_dd}", v.dd);
        // σ does not enter; the value is log(1 + e^{d-1}) without overflow.
        assert_eq!((v.s, v.ds, v.ss), (0.0, 0.0, 0.0));
        assert!(v.value.is_finite() && (v.value - (d - 1.0).exp().ln_1p()).abs() <= 1e-12 * v.value.max(1.0));
    }
}

#[test]
fn other_losses() {
    assert_eq!(Hinge.value(0.3, 5.0), 0.3);
    assert_eq!(SquaredHinge.value(0.5, 0.0), 0.25);
    assert_eq!(SquaredHinge.derivatives(0.5, 0.0).d, 1.0);
    assert_eq!(SquaredHinge.derivatives(-0.5, 0.0).dd, 0.0);
    assert_eq!(BallHinge.value(1.0, 0.25), 0.75);
    assert_eq!(BallHinge.derivatives(1.0, 0.25).s, -1.0);
    assert_eq!(BallHinge.value(0.2, 0.25), 0.0);
    assert!(!BallHinge.is_convex() && ExpectedHinge.is_convex());
}
