//! Image translation uncertainty by first-order Taylor expansion (thesis appendix C).
//!
//! An image `f(0) ∈ R^n` (`n = H·W` pixels, row-major) translated by `t = (h, v)` (pixels, horizontal
//! and vertical) is, to first order, `f(t) ≈ f(0) + J t` with `J = [∂f/∂h, ∂f/∂v]` the `n × 2` matrix of
//! image derivatives (eq. C.2). For `t ~ N(0, Σ_t)`, `Σ_t = diag(σ_h², σ_v²)`, the translated image is
//! Gaussian with mean `f(0)` and covariance (eq. C.4)
//!
//! ```text
//! Σ = J Σ_t Jᵀ = U Uᵀ,   U = [σ_h ∂f/∂x, σ_v ∂f/∂y]   (rank ≤ 2)
//! ```
//!
//! stored as the `n × 2` factor `U` ([`Covariances::LowRank`]). Derivatives are central differences
//! `(f[r, c+1] - f[r, c-1]) / 2` with the image taken as zero outside its border (the fill a
//! translation brings in). The sign of each column is irrelevant to `Σ`. The thesis' default
//! `σ_h = σ_v = p_t / 3` puts 99.7% of the translations within `±p_t` pixels
//! ([`TranslationParams::from_max_shift`]).
//!
//! The expansion is exact in the limit of small shifts for any sub-pixel interpolant whose slope at the
//! pixel centres is the central difference (e.g. the local quadratic through each pixel and its
//! neighbours). Bilinear interpolation is not one: its one-sided slopes differ from the central difference
//! by half the second difference `Δ`, which adds `σ²(1/4 - 1/(2π)) Δ Δᵀ` to the covariance of bilinearly
//! shifted images at every shift size (see the tests).
//!
//! [`warp_bilinear`] rotates and translates an image (used to pollute data in experiments).

use ndarray::{Array2, Array3, ArrayView2, Axis};

use super::CovarianceForm;
use crate::covariance::Covariances;
use crate::error::{Error, Result, invalid};

/// Image geometry and translation standard deviations (pixels).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TranslationParams {
    /// Image height (pixels).
    pub height: usize,
    /// Image width (pixels).
    pub width: usize,
    /// Standard deviation of the horizontal shift.
    pub sigma_h: f64,
    /// Standard deviation of the vertical shift.
    pub sigma_v: f64,
}

impl TranslationParams {
    /// `σ_h = σ_v = p_t / 3`: translations within `[-p_t, p_t]²` with probability ≈ 99.7% (thesis 3.5.2).
    pub fn from_max_shift(height: usize, width: usize, p_t: f64) -> Self {
        TranslationParams { height, width, sigma_h: p_t / 3.0, sigma_v: p_t / 3.0 }
    }

    fn validate(&self) -> Result<()> {
        if self.height == 0 || self.width == 0 {
            return Err(invalid(
                "image size",
                format!("{}x{}", self.height, self.width),
                "height and width must be positive",
            ));
        }
        for (name, s) in [("sigma_h", self.sigma_h), ("sigma_v", self.sigma_v)] {
            if !(s >= 0.0 && s.is_finite()) {
                return Err(invalid(name, s, "must be finite and non-negative"));
            }
        }
        Ok(())
    }
}

fn check_image(image: &[f64], height: usize, width: usize, index: usize) -> Result<()> {
    match height.checked_mul(width) {
        Some(pixels) if pixels == image.len() => {}
        pixels => {
            return Err(Error::DimensionMismatch {
                what: "image pixels (height × width)",
                expected: pixels.unwrap_or(usize::MAX),
                found: image.len(),
            });
        }
    }
    if let Some(&v) = image.iter().find(|v| !v.is_finite()) {
        return Err(Error::NonFinite { what: "image", index, value: v });
    }
    Ok(())
}

/// Horizontal and vertical central differences of a row-major `height × width` image (zero outside).
pub fn image_gradients(image: &[f64], height: usize, width: usize) -> Result<(Vec<f64>, Vec<f64>)> {
    check_image(image, height, width, 0)?;
    let px = |r: isize, c: isize| {
        if r < 0 || c < 0 || r >= height as isize || c >= width as isize {
            0.0
        } else {
            image[r as usize * width + c as usize]
        }
    };
    let mut gx = vec![0.0; image.len()];
    let mut gy = vec![0.0; image.len()];
    for r in 0..height as isize {
        for c in 0..width as isize {
            let k = r as usize * width + c as usize;
            gx[k] = 0.5 * (px(r, c + 1) - px(r, c - 1));
            gy[k] = 0.5 * (px(r + 1, c) - px(r - 1, c));
        }
    }
    Ok((gx, gy))
}

/// The `n × 2` factor `U = [σ_h ∂f/∂x, σ_v ∂f/∂y]` of one image's translation covariance `U Uᵀ`.
pub fn translation_factor(image: &[f64], params: &TranslationParams) -> Result<Array2<f64>> {
    params.validate()?;
    let (gx, gy) = image_gradients(image, params.height, params.width)?;
    Ok(Array2::from_shape_fn(
        (image.len(), 2),
        |(j, k)| if k == 0 { params.sigma_h * gx[j] } else { params.sigma_v * gy[j] },
    ))
}

/// The rank-2 translation covariances of `ℓ` images (rows of `images`, each `height × width` row-major).
pub fn translation_covariances(images: ArrayView2<f64>, params: &TranslationParams) -> Result<Covariances> {
    params.validate()?;
    if images.nrows() == 0 {
        return Err(Error::Empty("images"));
    }
    let mut factors = Vec::with_capacity(images.nrows());
    for (i, row) in images.rows().into_iter().enumerate() {
        let image = row.to_vec();
        check_image(&image, params.height, params.width, i)?;
        factors.push(translation_factor(&image, params)?);
    }
    Ok(Covariances::low_rank(factors, None))
}

/// [`translation_covariances`] stored in `form`: the exact factor `U` ([`CovarianceForm::LowRank`]), the
/// dense `U Uᵀ`, its diagonal, or `(tr Σ / n) I`.
pub fn translation_covariances_in(
    images: ArrayView2<f64>,
    params: &TranslationParams,
    form: CovarianceForm,
) -> Result<Covariances> {
    let covariances = translation_covariances(images, params)?;
    let (l, n) = images.dim();
    let factors = match (form, &covariances) {
        (CovarianceForm::LowRank, _) => return Ok(covariances),
        (CovarianceForm::Isotropic, _) => return Ok(covariances.to_isotropic(l, n)),
        (_, Covariances::LowRank(c)) => &c.factors,
        _ => unreachable!("translation covariances are low-rank"),
    };
    Ok(match form {
        CovarianceForm::Diagonal => {
            Covariances::diagonal(Array2::from_shape_fn((l, n), |(i, j)| factors[i].row(j).dot(&factors[i].row(j))))
        }
        _ => {
            crate::memory::reserve("full covariances", crate::covariance::FULL_REMEDY, &[l, n, n])?;
            let mut m = Array3::zeros((l, n, n));
            for (i, u) in factors.iter().enumerate() {
                m.index_axis_mut(Axis(0), i).assign(&u.dot(&u.t()));
            }
            Covariances::full(m)
        }
    })
}

/// The image rotated by `angle` radians (counter-clockwise as displayed, rows growing downwards) about its
/// centre and then shifted `dh` pixels right and `dv` pixels down, by bilinear interpolation with zero
/// outside the border.
pub fn warp_bilinear(image: &[f64], height: usize, width: usize, angle: f64, dh: f64, dv: f64) -> Result<Vec<f64>> {
    check_image(image, height, width, 0)?;
    for (name, v) in [("angle", angle), ("dh", dh), ("dv", dv)] {
        if !v.is_finite() {
            return Err(invalid(name, v, "must be finite"));
        }
    }
    let px = |r: isize, c: isize| {
        if r < 0 || c < 0 || r >= height as isize || c >= width as isize {
            0.0
        } else {
            image[r as usize * width + c as usize]
        }
    };
    let (cy, cx) = ((height as f64 - 1.0) / 2.0, (width as f64 - 1.0) / 2.0);
    let (s, co) = angle.sin_cos();
    let mut out = vec![0.0; image.len()];
    for r in 0..height {
        for c in 0..width {
            // Undo the shift, then the rotation (x right, y up on screen = -row).
            let (x, y) = (c as f64 - dh - cx, -(r as f64 - dv - cy));
            let (xs, ys) = (co * x + s * y, -s * x + co * y);
            let (sr, sc) = (cy - ys, cx + xs);
            let (r0, c0) = (sr.floor(), sc.floor());
            let (a, b) = (sr - r0, sc - c0);
            let (r0, c0) = (r0 as isize, c0 as isize);
            out[r * width + c] = (1.0 - a) * ((1.0 - b) * px(r0, c0) + b * px(r0, c0 + 1))
                + a * ((1.0 - b) * px(r0 + 1, c0) + b * px(r0 + 1, c0 + 1));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_distr::{Distribution, StandardNormal};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// The first "0" of the 8×8 digits data set.
    const DIGIT: [f64; 64] = [
        0., 0., 5., 13., 9., 1., 0., 0., 0., 0., 13., 15., 10., 15., 5., 0., 0., 3., 15., 2., 0., 11., 8., 0., 0., 4.,
        12., 0., 0., 8., 8., 0., 0., 5., 8., 0., 0., 9., 8., 0., 0., 4., 11., 0., 1., 12., 7., 0., 0., 2., 14., 5.,
        10., 12., 0., 0., 0., 0., 6., 13., 10., 0., 0., 0.,
    ];
    const H: usize = 8;

    fn px(img: &[f64], r: isize, c: isize) -> f64 {
        if r < 0 || c < 0 || r >= H as isize || c >= H as isize { 0.0 } else { img[r as usize * H + c as usize] }
    }

    /// Shift right by `h`, down by `v` with the local quadratic through each pixel's 3×3 neighbourhood
    /// (Lagrange weights at nodes -1, 0, 1: its slope at the centre is the central difference).
    fn shift_quadratic(img: &[f64], h: f64, v: f64) -> Vec<f64> {
        let lag = |s: f64| [s * (s - 1.0) / 2.0, 1.0 - s * s, s * (s + 1.0) / 2.0];
        let (wr, wc) = (lag(-v), lag(-h));
        let mut out = vec![0.0; H * H];
        for r in 0..H as isize {
            for c in 0..H as isize {
                let mut s = 0.0;
                for (a, wa) in wr.iter().enumerate() {
                    for (b, wb) in wc.iter().enumerate() {
                        s += wa * wb * px(img, r + a as isize - 1, c + b as isize - 1);
                    }
                }
                out[r as usize * H + c as usize] = s;
            }
        }
        out
    }

    /// Standard-normal pairs `(z, -z)` rescaled so that their sample covariance is exactly `I` (population
    /// normalisation): the sample `Σ_t` equals the nominal one and odd moments vanish.
    fn whitened_antithetic(pairs: usize, seed: u64) -> Vec<[f64; 2]> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let half: Vec<[f64; 2]> =
            (0..pairs).map(|_| [StandardNormal.sample(&mut rng), StandardNormal.sample(&mut rng)]).collect();
        let n = half.len() as f64;
        let (mut a, mut b, mut c) = (0.0, 0.0, 0.0);
        for z in &half {
            a += z[0] * z[0] / n;
            b += z[0] * z[1] / n;
            c += z[1] * z[1] / n;
        }
        // Inverse Cholesky factor of [[a, b], [b, c]].
        let l11 = a.sqrt();
        let l21 = b / l11;
        let l22 = (c - l21 * l21).sqrt();
        half.iter()
            .map(|z| {
                let y0 = z[0] / l11;
                [y0, (z[1] - l21 * y0) / l22]
            })
            .flat_map(|z| [z, [-z[0], -z[1]]])
            .collect()
    }

    /// Population covariance of the shifted images.
    fn empirical(shifts: &[[f64; 2]], shift: impl Fn(f64, f64) -> Vec<f64>) -> Array2<f64> {
        let imgs: Vec<Vec<f64>> = shifts.iter().map(|t| shift(t[0], t[1])).collect();
        let n = imgs[0].len();
        let m: Vec<f64> = (0..n).map(|j| imgs.iter().map(|x| x[j]).sum::<f64>() / imgs.len() as f64).collect();
        let mut s = Array2::zeros((n, n));
        for x in &imgs {
            for a in 0..n {
                for b in 0..n {
                    s[[a, b]] += (x[a] - m[a]) * (x[b] - m[b]);
                }
            }
        }
        s / imgs.len() as f64
    }

    fn rel_frobenius(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
        (a - b).mapv(|x| x * x).sum().sqrt() / b.mapv(|x| x * x).sum().sqrt()
    }

    fn taylor(params: &TranslationParams) -> Array2<f64> {
        let u = translation_factor(&DIGIT, params).unwrap();
        u.dot(&u.t())
    }

    #[test]
    fn taylor_matches_translated_images_for_small_shifts() {
        let z = whitened_antithetic(2000, 7);
        let mut errors = Vec::new();
        for s in [0.4, 0.2, 0.1, 0.05, 0.025] {
            // Unequal horizontal and vertical spreads.
            let p = TranslationParams { height: H, width: H, sigma_h: s, sigma_v: 0.6 * s };
            let shifts: Vec<[f64; 2]> = z.iter().map(|t| [p.sigma_h * t[0], p.sigma_v * t[1]]).collect();
            let emp = empirical(&shifts, |h, v| shift_quadratic(&DIGIT, h, v));
            errors.push(rel_frobenius(&emp, &taylor(&p)));
        }
        eprintln!("relative Frobenius error, sigma = 0.4 .. 0.025: {errors:?}");
        // Second-order remainder: the relative error falls like σ² (a factor ~4 per halving).
        for k in 1..errors.len() {
            assert!(errors[k] < errors[k - 1] / 3.0, "{errors:?}");
        }
        assert!(errors[errors.len() - 1] < 2e-3, "{errors:?}");
    }

    #[test]
    fn bilinear_shifts_add_the_kink_term() {
        // Horizontal shifts only, bilinear: g = f - h D_b (h > 0), f - h D_f (h < 0), one-sided differences.
        let z = whitened_antithetic(2000, 11);
        let m_abs = z.iter().map(|t| t[0].abs()).sum::<f64>() / z.len() as f64;
        let bw = |k: usize| {
            px(&DIGIT, (k / H) as isize, (k % H) as isize) - px(&DIGIT, (k / H) as isize, (k % H) as isize - 1)
        };
        let fw = |k: usize| {
            px(&DIGIT, (k / H) as isize, (k % H) as isize + 1) - px(&DIGIT, (k / H) as isize, (k % H) as isize)
        };
        let mut errors = Vec::new();
        for s in [0.2, 0.1, 0.05] {
            let p = TranslationParams { height: H, width: H, sigma_h: s, sigma_v: 0.0 };
            let shifts: Vec<[f64; 2]> = z.iter().map(|t| [s * t[0], 0.0]).collect();
            let emp = empirical(&shifts, |h, v| warp_bilinear(&DIGIT, H, H, 0.0, h, v).unwrap());
            let tay = taylor(&p);
            // Closed form (shifts beyond one pixel have probability < 1e-6 at σ ≤ 0.2):
            // E[h² 1{h>0}] = σ²/2, E[h 1{h>0}] = σ E|z| / 2.
            let closed = Array2::from_shape_fn((64, 64), |(a, b)| {
                s * s / 2.0 * (bw(a) * bw(b) + fw(a) * fw(b))
                    - (s * m_abs / 2.0).powi(2) * (bw(a) - fw(a)) * (bw(b) - fw(b))
            });
            assert!(rel_frobenius(&emp, &closed) < 1e-9, "σ = {s}: {}", rel_frobenius(&emp, &closed));
            errors.push(rel_frobenius(&emp, &tay));
        }
        eprintln!("bilinear: relative Frobenius error of the Taylor covariance, sigma = 0.2, 0.1, 0.05: {errors:?}");
        // The error does not vanish with the shift: it is the kink term, the same at every σ.
        assert!(errors.iter().all(|e| (e - errors[0]).abs() < 1e-9 && *e > 0.05), "{errors:?}");
    }

    #[test]
    fn factor_is_scaled_central_differences_and_rank_two() {
        let p = TranslationParams::from_max_shift(H, H, 1.5);
        assert_eq!(p.sigma_h, 0.5);
        let u = translation_factor(&DIGIT, &p).unwrap();
        // Pixel (1, 2): horizontal (15 - 0)/2, vertical (15 - 5)/2... (row 2 col 2 is 15, row 0 col 2 is 5).
        assert_eq!(u[[10, 0]], 0.5 * 0.5 * (DIGIT[11] - DIGIT[9]));
        assert_eq!(u[[10, 1]], 0.5 * 0.5 * (DIGIT[18] - DIGIT[2]));
        // Border pixel (0, 0): the outside is zero.
        assert_eq!(u[[0, 0]], 0.5 * 0.5 * DIGIT[1]);
        let images = ndarray::Array2::from_shape_vec((2, 64), [DIGIT, DIGIT].concat()).unwrap();
        let cov = translation_covariances(images.view(), &p).unwrap();
        cov.validate(2, 64).unwrap();
        let w: Vec<f64> = (0..64).map(|k| (k as f64).sin()).collect();
        let direct = u.t().dot(&ndarray::Array1::from(w.clone())).mapv(|x| x * x).sum();
        assert!((cov.as_dyn().quad_form(1, &w) - direct).abs() < 1e-9 * direct);
    }

    #[test]
    fn warp_moves_pixels() {
        let mut img = vec![0.0; 64];
        img[3 * 8 + 3] = 1.0;
        let shifted = warp_bilinear(&img, 8, 8, 0.0, 2.0, 1.0).unwrap();
        assert_eq!(shifted[4 * 8 + 5], 1.0);
        assert!((shifted.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        // A quarter turn counter-clockwise about the centre (3.5, 3.5) maps (row 0, col 7) to (row 0, col 0).
        let mut corner = vec![0.0; 64];
        corner[7] = 1.0;
        let turned = warp_bilinear(&corner, 8, 8, std::f64::consts::FRAC_PI_2, 0.0, 0.0).unwrap();
        assert!((turned[0] - 1.0).abs() < 1e-12, "{turned:?}");
    }

    #[test]
    fn bad_images_are_typed_errors() {
        let p = TranslationParams::from_max_shift(8, 8, 1.0);
        let short = ndarray::Array2::zeros((2, 63));
        assert!(matches!(
            translation_covariances(short.view(), &p),
            Err(Error::DimensionMismatch { expected: 64, found: 63, .. })
        ));
        let mut nan = ndarray::Array2::zeros((3, 64));
        nan[[2, 5]] = f64::NAN;
        assert!(matches!(translation_covariances(nan.view(), &p), Err(Error::NonFinite { index: 2, .. })));
        let empty = ndarray::Array2::zeros((0, 64));
        assert_eq!(translation_covariances(empty.view(), &p), Err(Error::Empty("images")));
        let bad = TranslationParams { sigma_v: -1.0, ..p };
        assert!(matches!(translation_factor(&DIGIT, &bad), Err(Error::InvalidParameter { name: "sigma_v", .. })));
        let zero = TranslationParams { height: 0, ..p };
        assert!(translation_factor(&DIGIT, &zero).is_err());
        assert!(warp_bilinear(&DIGIT, 8, 8, f64::NAN, 0.0, 0.0).is_err());
        // (2^63 + 1)² wraps to 1 in 64 bits: the size check must not take it for one pixel.
        let wraps = TranslationParams { height: (1 << 63) + 1, width: (1 << 63) + 1, ..p };
        assert!(matches!(translation_factor(&[1.0], &wraps), Err(Error::DimensionMismatch { found: 1, .. })));
    }

    #[test]
    fn every_storage_form_is_the_same_covariance() {
        let p = TranslationParams::from_max_shift(8, 8, 1.5);
        let images = ndarray::Array2::from_shape_fn((2, 64), |(i, j)| DIGIT[j] * (i + 1) as f64);
        let u = match translation_covariances_in(images.view(), &p, CovarianceForm::LowRank).unwrap() {
            Covariances::LowRank(c) => c.factors,
            other => panic!("{}", other.kind()),
        };
        let Covariances::Full(full) = translation_covariances_in(images.view(), &p, CovarianceForm::Full).unwrap()
        else {
            panic!("full")
        };
        let Covariances::Diagonal(diag) =
            translation_covariances_in(images.view(), &p, CovarianceForm::Diagonal).unwrap()
        else {
            panic!("diagonal")
        };
        let Covariances::Isotropic(iso) =
            translation_covariances_in(images.view(), &p, CovarianceForm::Isotropic).unwrap()
        else {
            panic!("isotropic")
        };
        for (i, u) in u.iter().enumerate() {
            let sigma = u.dot(&u.t());
            let m = full.matrices.index_axis(ndarray::Axis(0), i);
            assert!((&m - &sigma).iter().all(|d| d.abs() < 1e-12));
            assert!(diag.variances.row(i).iter().zip(sigma.diag()).all(|(a, b)| (a - b).abs() < 1e-12));
            assert!((iso.variances[i] - sigma.diag().sum() / 64.0).abs() < 1e-12);
        }
    }
}
