//! The standard normal CDF `Φ`, density `φ` and the function `g(t) = tΦ(t) + φ(t)` (so that the
//! expected hinge loss is `σ g(d/σ)`), evaluated without cancellation for every finite input.

use std::f64::consts::FRAC_1_SQRT_2;

/// `1/√(2π)`.
pub const INV_SQRT_2PI: f64 = 0.398_942_280_401_432_7;
/// `ln √(2π)`.
const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;

/// `Φ(t) = ½ erfc(-t/√2)`; accurate to a few ulps relatively in both tails (never `1 + erf`).
#[inline]
pub fn norm_cdf(t: f64) -> f64 {
    0.5 * libm::erfc(-t * FRAC_1_SQRT_2)
}

/// `φ(t) = exp(-t²/2)/√(2π)`.
#[inline]
pub fn norm_pdf(t: f64) -> f64 {
    INV_SQRT_2PI * (-0.5 * t * t).exp()
}

/// Below `-TAIL`, `g` comes from the continued fraction of the Mills ratio instead of `tΦ(t) + φ(t)`.
const TAIL: f64 = 4.0;

/// `K(u) = 1/(u + 2/(u + 3/(u + …)))` for `u ≥ TAIL`, so that the Mills ratio is `R(u) = 1/(u + K(u))`
/// and `1 - uR(u) = K/(u + K)`. Evaluated backwards from a depth that converges to round-off
/// (60 terms at u = 4, fewer as u grows: the fraction's error falls roughly like exp(-2u√depth)).
#[inline]
fn mills_tail(u: f64) -> f64 {
    let depth = (8.0 + 850.0 / (u * u)).min(60.0) as usize;
    let mut tail = 0.0;
    for k in (2..=depth).rev() {
        tail = k as f64 / (u + tail);
    }
    1.0 / (u + tail)
}

/// `ln g(t)` for `t ≤ -TAIL`: `g(-u) = φ(u) K/(u + K)`.
#[inline]
fn ln_g_lower_tail(t: f64) -> f64 {
    let u = -t;
    let k = mills_tail(u);
    -0.5 * u * u - LN_SQRT_2PI + (k / (u + k)).ln()
}

/// `g(t) = tΦ(t) + φ(t) = E[max(0, t + Z)]`, `Z ~ N(0,1)`; positive, never NaN for finite `t`.
#[inline]
pub fn g(t: f64) -> f64 {
    if t > -TAIL { t * norm_cdf(t) + norm_pdf(t) } else { ln_g_lower_tail(t).exp() }
}

/// `σ g(d/σ)` for `σ > 0`, computed in log space in the lower tail so that huge `σ` with a tiny `g` neither
/// overflows nor underflows prematurely.
#[inline]
pub fn sigma_g(d: f64, sigma: f64) -> f64 {
    let t = d / sigma;
    sigma_g_with(d, sigma, t, || (norm_cdf(t), norm_pdf(t)))
}

/// [`sigma_g`] at `t = d/σ`, with `(Φ(t), φ(t))` supplied by the caller (computed only where they are used).
#[inline]
pub fn sigma_g_with(d: f64, sigma: f64, t: f64, cdf_pdf: impl FnOnce() -> (f64, f64)) -> f64 {
    if t > -TAIL {
        let (cdf, pdf) = cdf_pdf();
        // For t slightly above -TAIL the two terms cancel by at most a factor ~300: still ~1e-13 relative.
        (d * cdf + sigma * pdf).max(0.0)
    } else {
        // exp underflows below -745: skip the continued fraction when even its largest value would.
        let bound = sigma.ln() - 0.5 * t * t - LN_SQRT_2PI;
        if bound < -746.0 { 0.0 } else { (sigma.ln() + ln_g_lower_tail(t)).exp() }
    }
}
