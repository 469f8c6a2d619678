use super::special::{dual_slope, norm_cdf, norm_pdf, sigma_g, sigma_g_with};
use super::{LossDerivatives, MarginLoss};

/// The expected hinge loss under a Gaussian (the GSU loss, DESIGN 2.1):
///
/// `L(d, σ) = E[max(0, D)]`, `D ~ N(d, σ²)`, `= d Φ(d/σ) + σ φ(d/σ)`; `L(d, 0) = max(0, d)`.
///
/// With `t = d/σ`: `∂L/∂d = Φ(t)`, `∂L/∂σ = φ(t)`, and the Hessian `(φ(t)/σ) [1, -t]ᵀ[1, -t]` is rank
/// one and PSD. At `σ = 0` the derivatives are the hinge's subgradient (`Φ(±∞)`, and `½` at `d = 0`),
/// `∂L/∂σ = φ(0)` at `d = 0` (the right derivative) and `0` elsewhere, and the Hessian is taken as zero.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ExpectedHinge;

impl MarginLoss for ExpectedHinge {
    fn name(&self) -> &'static str {
        "expected_hinge"
    }

    #[inline]
    fn value(&self, d: f64, sigma: f64) -> f64 {
        if sigma > 0.0 { sigma_g(d, sigma) } else { d.max(0.0) }
    }

    #[inline]
    fn derivatives(&self, d: f64, sigma: f64) -> LossDerivatives {
        if !(sigma > 0.0) {
            let (dl, sl) = if d > 0.0 {
                (1.0, 0.0)
            } else if d < 0.0 {
                (0.0, 0.0)
            } else {
                (0.5, super::special::INV_SQRT_2PI)
            };
            return LossDerivatives { value: d.max(0.0), d: dl, s: sl, ..Default::default() };
        }
        let t = d / sigma;
        let (cdf, pdf) = (norm_cdf(t), norm_pdf(t));
        let c = pdf / sigma;
        let value = sigma_g_with(d, sigma, t, || (cdf, pdf));
        // φ(t) = 0 past |t| ≈ 38.6 (or t = ±∞ for a subnormal σ): the curvature terms vanish, and c·t would be 0·∞.
        let (ds, ss) = if c == 0.0 { (0.0, 0.0) } else { (-c * t, c * t * t) };
        LossDerivatives { value, d: cdf, s: pdf, dd: c, ds, ss }
    }

    /// `L(d, σ) = max_{p ∈ [0, 1]} p d + φ(Φ⁻¹(p)) σ`: the maximiser is `p = Φ(d/σ)`.
    fn dual_form(&self) -> Option<fn(f64) -> f64> {
        Some(dual_slope)
    }
}
