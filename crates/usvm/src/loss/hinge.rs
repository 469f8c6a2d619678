use super::{LossDerivatives, MarginLoss};

/// The hinge loss `max(0, d)`; ignores `σ` (LSVM). Subgradient `1{d > 0}`, zero Hessian.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Hinge;

impl MarginLoss for Hinge {
    fn name(&self) -> &'static str {
        "hinge"
    }
    fn value(&self, d: f64, _: f64) -> f64 {
        d.max(0.0)
    }
    fn derivatives(&self, d: f64, _: f64) -> LossDerivatives {
        LossDerivatives { value: d.max(0.0), d: if d > 0.0 { 1.0 } else { 0.0 }, ..Default::default() }
    }
}

/// The squared hinge `max(0, d)²`; ignores `σ`. Gradient `2 max(0, d)`, generalised Hessian `2·1{d > 0}`
/// (LIBLINEAR's L2-loss SVM).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SquaredHinge;

impl MarginLoss for SquaredHinge {
    fn name(&self) -> &'static str {
        "squared_hinge"
    }
    fn value(&self, d: f64, _: f64) -> f64 {
        let m = d.max(0.0);
        m * m
    }
    fn derivatives(&self, d: f64, _: f64) -> LossDerivatives {
        let m = d.max(0.0);
        LossDerivatives { value: m * m, d: 2.0 * m, dd: if d > 0.0 { 2.0 } else { 0.0 }, ..Default::default() }
    }
}

/// The loss of a ball of radius `r` around the example (Power SVM, TSVC eq. 7):
/// `max(0, d - σ)` with `σ = r‖w‖` (an isotropic "covariance" `r² I`), the hinge at the best point of the
/// ball (Bi & Zhang, Lemma 1). Not convex in `w`: solved by alternating optimisation or SGD.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BallHinge;

impl MarginLoss for BallHinge {
    fn name(&self) -> &'static str {
        "ball_hinge"
    }
    fn value(&self, d: f64, sigma: f64) -> f64 {
        (d - sigma).max(0.0)
    }
    fn derivatives(&self, d: f64, sigma: f64) -> LossDerivatives {
        let active = d - sigma > 0.0;
        LossDerivatives {
            value: (d - sigma).max(0.0),
            d: if active { 1.0 } else { 0.0 },
            s: if active { -1.0 } else { 0.0 },
            ..Default::default()
        }
    }
    fn is_convex(&self) -> bool {
        false
    }
}
