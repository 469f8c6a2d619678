//! Squared-hinge losses under a Gaussian margin `D ~ N(μ, σ²)` (DESIGN 2.4, thesis chapter 5), where
//! `μ = 1 - y(wᵀμ_x + b)` and `σ² = wᵀΣ_x w`. Both are `σ² F(t)` for a function `F` of `t = μ/σ`, so with
//! `F'`, `F''` their derivatives in `(μ, σ)` are
//!
//! `L_μ = σF'`, `L_σ = σ(2F - tF')`, `L_μμ = F''`, `L_μσ = F' - tF''`, `L_σσ = 2F - 2tF' + t²F''`,
//!
//! and at `σ = 0` both are the squared hinge `max(0, μ)²` (their continuous limit; derivatives
//! `2 max(0, μ)`, generalised Hessian `2·1{μ > 0}` as LIBLINEAR's L2-loss SVM, zero in `σ`).
//!
//! - [`ThesisSquaredHinge`], thesis eq. (5.11): `L = P(D > 0) μ² = Φ(t) μ²`, `F = t²Φ(t)`,
//!   `F' = 2tΦ + t²φ`, `F'' = 2Φ + 4tφ - t³φ`. It is not convex (`L_μμ < 0` for some `μ < 0`) and
//!   decreases in `σ` where `μ > 0`.
//! - [`ExpectedSquaredHinge`], the exact `E[max(0, D)²] = (μ² + σ²)Φ(t) + μσφ(t)`:
//!   `F = h(t) = (t² + 1)Φ(t) + tφ(t)`, `F' = 2g(t)` (`g = tΦ + φ`), `F'' = 2Φ(t)`, so
//!   `L_μ = 2σg(t) = 2E[max(0, D)]`, `L_σ = 2σΦ(t)` and the Hessian is `2[[Φ, φ], [φ, Φ - tφ]]`. It is
//!   convex in `(μ, σ)` (an expectation of the convex `max(0, μ + σz)²`) and nondecreasing in `σ ≥ 0`, so
//!   the objective is convex in `(w, b)`. It is ≥ `max(0, μ)²` (Jensen) and ≥ the thesis loss where
//!   `μ ≥ 0` (`h(t) ≥ t²Φ(t)` since `Φ + tφ ≥ 0` for `t ≥ 0`).
//!
//! Tails: for `t ≤ -2.5` the closed form of `h` cancels; there `h(-u) = φ(u) T₂ / ((u + T₂)(u + T₁))` with
//! the Mills-ratio continued fraction `T_k = k/(u + T_{k+1})` (so `Φ(-u) = φ(u)/(u + T₁)`), evaluated in
//! log space together with `ln σ²` (thesis loss: `ln μ²`) so that huge `σ` with a tiny `h` neither
//! overflows nor underflows early. Terms `t^k φ(t)` are taken as zero where `φ(t)` underflows (also for
//! infinite `t = μ/σ` when `σ` is subnormal).
//!
//! ```
//! use usvm::loss::{ExpectedSquaredHinge, MarginLoss, SquaredHinge, ThesisSquaredHinge};
//! // σ = 0: both are the squared hinge.
//! assert_eq!(ExpectedSquaredHinge.value(0.5, 0.0), SquaredHinge.value(0.5, 0.0));
//! assert_eq!(ThesisSquaredHinge.value(-0.5, 0.0), 0.0);
//! // E[max(0, D)²] for D ~ N(0, 1) is ½.
//! assert!((ExpectedSquaredHinge.value(0.0, 1.0) - 0.5).abs() < 1e-15);
//! // The thesis loss weights μ² by P(D > 0): ¼ · Φ(1).
//! assert!((ThesisSquaredHinge.value(0.5, 0.5) - 0.25 * 0.841_344_746_068_542_9).abs() < 1e-15);
//! ```

use super::special::{norm_cdf, norm_pdf, sigma_g};
use super::{LossDerivatives, MarginLoss};

/// `ln √(2π)`.
const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;
/// At and below `t = -TAIL` values come from the continued fraction, in log space. Above it the closed
/// form of `h` cancels by at most a factor ~40 (~1e-14 relative).
const TAIL: f64 = 2.5;

/// `(T₁, T₂)` of the Mills-ratio continued fraction `T_k = k/(u + T_{k+1})` for `u ≥ TAIL`
/// (the truncation error falls roughly like `exp(-2u√depth)`: 150 terms reach round-off at `u = 2.5`).
#[inline]
fn mills_fractions(u: f64) -> (f64, f64) {
    let depth = (8.0 + 850.0 / (u * u)).min(150.0) as usize;
    let mut tail = 0.0;
    for k in (2..=depth).rev() {
        tail = k as f64 / (u + tail);
    }
    (1.0 / (u + tail), tail)
}

/// `ln φ(u)`.
#[inline]
fn ln_pdf(u: f64) -> f64 {
    -0.5 * u * u - LN_SQRT_2PI
}

/// `φ(t) · p` where `p` is a polynomial in `t` already evaluated, `0` where `φ(t)` underflows (so that an
/// infinite `t` gives 0, not NaN).
#[inline]
fn pdf_times(pdf: f64, p: impl FnOnce() -> f64) -> f64 {
    if pdf > 0.0 { pdf * p() } else { 0.0 }
}

/// The squared hinge `max(0, μ)²` and its derivatives: the `σ = 0` limit of both losses.
#[inline]
fn squared_hinge(mu: f64) -> LossDerivatives {
    let m = mu.max(0.0);
    LossDerivatives { value: m * m, d: 2.0 * m, dd: if mu > 0.0 { 2.0 } else { 0.0 }, ..Default::default() }
}

/// The thesis chapter-5 loss (eq. 5.11): `L(μ, σ) = Φ(μ/σ) μ²`, the squared margin violation weighted by
/// the probability `P(D > 0)` that the example is misclassified; `max(0, μ)²` at `σ = 0`. Non-convex.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ThesisSquaredHinge;

impl ThesisSquaredHinge {
    /// `Φ(t) μ²`, through `ln` in the lower tail.
    #[inline]
    fn value_at(mu: f64, t: f64, cdf: f64) -> f64 {
        if t > -TAIL {
            (cdf * mu) * mu
        } else {
            let u = -t;
            let (t1, _) = mills_fractions(u);
            (2.0 * mu.abs().ln() + ln_pdf(u) - (u + t1).ln()).exp()
        }
    }
}

impl MarginLoss for ThesisSquaredHinge {
    fn name(&self) -> &'static str {
        "thesis_squared_hinge"
    }

    #[inline]
    fn value(&self, d: f64, sigma: f64) -> f64 {
        if !(sigma > 0.0) {
            return squared_hinge(d).value;
        }
        let t = d / sigma;
        Self::value_at(d, t, norm_cdf(t))
    }

    #[inline]
    fn derivatives(&self, d: f64, sigma: f64) -> LossDerivatives {
        if !(sigma > 0.0) {
            return squared_hinge(d);
        }
        let t = d / sigma;
        let (cdf, pdf) = (norm_cdf(t), norm_pdf(t));
        let t2 = t * t;
        LossDerivatives {
            value: Self::value_at(d, t, cdf),
            // μ(2Φ + tφ)
            d: d * (2.0 * cdf + pdf_times(pdf, || t)),
            // -σ t³ φ
            s: -sigma * pdf_times(pdf, || t2 * t),
            // 2Φ + (4t - t³)φ
            dd: 2.0 * cdf + pdf_times(pdf, || t * (4.0 - t2)),
            // (t⁴ - 3t²)φ
            ds: pdf_times(pdf, || t2 * (t2 - 3.0)),
            // (2t³ - t⁵)φ
            ss: pdf_times(pdf, || t2 * t * (2.0 - t2)),
        }
    }

    fn is_convex(&self) -> bool {
        false
    }
}

/// The exact expected squared hinge `E[max(0, D)²] = (μ² + σ²)Φ(t) + μσφ(t)`, `D ~ N(μ, σ²)`, `t = μ/σ`;
/// `max(0, μ)²` at `σ = 0`. Convex in `(μ, σ)` and nondecreasing in `σ`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ExpectedSquaredHinge;

impl ExpectedSquaredHinge {
    #[inline]
    fn value_at(mu: f64, sigma: f64, t: f64, cdf: f64, pdf: f64) -> f64 {
        if t > -TAIL {
            ((mu * mu + sigma * sigma) * cdf + pdf_times(pdf, || mu * sigma)).max(0.0)
        } else {
            let u = -t;
            let (t1, t2) = mills_fractions(u);
            (2.0 * sigma.ln() + ln_pdf(u) + (t2 / ((u + t2) * (u + t1))).ln()).exp()
        }
    }
}

impl MarginLoss for ExpectedSquaredHinge {
    fn name(&self) -> &'static str {
        "expected_squared_hinge"
    }

    #[inline]
    fn value(&self, d: f64, sigma: f64) -> f64 {
        if !(sigma > 0.0) {
            return squared_hinge(d).value;
        }
        let t = d / sigma;
        Self::value_at(d, sigma, t, norm_cdf(t), norm_pdf(t))
    }

    #[inline]
    fn derivatives(&self, d: f64, sigma: f64) -> LossDerivatives {
        if !(sigma > 0.0) {
            return squared_hinge(d);
        }
        let t = d / sigma;
        let (cdf, pdf) = (norm_cdf(t), norm_pdf(t));
        LossDerivatives {
            value: Self::value_at(d, sigma, t, cdf, pdf),
            d: 2.0 * sigma_g(d, sigma),
            s: 2.0 * sigma * cdf,
            dd: 2.0 * cdf,
            ds: 2.0 * pdf,
            ss: 2.0 * (cdf - pdf_times(pdf, || t)),
        }
    }
}
