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

/// `Φ⁻¹(p)`, the standard normal quantile (`∓∞` at `p = 0, 1`; NaN outside `[0, 1]`): Acklam's rational
/// approximation (relative error below 1.2e-9), refined by one Halley step on `Φ(t) - p` (Φ from `erfc`,
/// accurate in both tails), which brings it to round-off.
pub fn norm_quantile(p: f64) -> f64 {
    if !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p == 0.0 || p == 1.0 {
        return if p == 0.0 { f64::NEG_INFINITY } else { f64::INFINITY };
    }
    const A: [f64; 6] = [
        -3.969683028665376e1,
        2.209460984245205e2,
        -2.759285104469687e2,
        1.38357751867269e2,
        -3.066479806614716e1,
        2.506628277459239,
    ];
    const B: [f64; 5] =
        [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
    const C: [f64; 6] = [
        -7.784894002430293e-3,
        -3.223964580411365e-1,
        -2.400758277161838,
        -2.549732539343734,
        4.374664141464968,
        2.938163982698783,
    ];
    const D: [f64; 4] = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    let t = if p < 0.02425 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.02425 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    };
    // Halley: e = Φ(t) - p (from the nearer tail), u = e/φ(t), t ← t - u/(1 + t u/2).
    let e = if t < 0.0 { norm_cdf(t) - p } else { (1.0 - p) - norm_cdf(-t) };
    let u = e / norm_pdf(t);
    t - u / (1.0 + 0.5 * t * u)
}

/// `ψ(p) = φ(Φ⁻¹(p))`, the slope in `σ` of the expected hinge's dual form `L(d, σ) = max_{p∈[0,1]} p d + ψ(p) σ`
/// (0 at `p = 0, 1`).
pub fn dual_slope(p: f64) -> f64 {
    norm_pdf(norm_quantile(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quantile_inverts_the_cdf_to_round_off_in_both_tails() {
        for p in [1e-300, 1e-100, 1e-20, 1e-5, 0.0242, 0.0243, 0.3, 0.5, 0.7, 0.9757, 0.9758, 1.0 - 1e-10] {
            let t = norm_quantile(p);
            // Compare in the nearer tail, where both sides are accurate; a rounding of t moves Φ(t) by a
            // relative |t|²ε in the tail (d ln Φ/dt ≈ |t|).
            let (a, b) = if p < 0.5 { (norm_cdf(t), p) } else { (norm_cdf(-t), 1.0 - p) };
            assert!((a - b).abs() <= 4e-15 * (1.0 + t * t) * b, "p = {p}: Φ(Φ⁻¹(p)) = {a:e} vs {b:e}");
        }
        assert_eq!(norm_quantile(0.5), 0.0);
        assert_eq!(norm_quantile(0.0), f64::NEG_INFINITY);
        assert_eq!(norm_quantile(1.0), f64::INFINITY);
        assert!(norm_quantile(-0.1).is_nan() && norm_quantile(1.1).is_nan() && norm_quantile(f64::NAN).is_nan());
    }

    #[test]
    fn the_dual_slope_is_the_density_at_the_quantile() {
        assert_eq!(dual_slope(0.0), 0.0);
        assert_eq!(dual_slope(1.0), 0.0);
        assert!((dual_slope(0.5) - INV_SQRT_2PI).abs() < 1e-16);
        for t in [-30.0, -5.0, -1.0, 0.3, 4.0] {
            let p = norm_cdf(t);
            assert!((dual_slope(p) - norm_pdf(t)).abs() <= 1e-12 * norm_pdf(t), "t = {t}");
        }
    }
}
