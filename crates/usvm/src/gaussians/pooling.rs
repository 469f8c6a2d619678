//! Mean/variance pooling over windows: the per-feature mean of a set of windows is the example's mean,
//! the per-feature sample variance across windows its diagonal covariance.
//!
//! **Welch periodograms** (thesis 3.5.4). A series `x` of length `N` is cut into `K` segments of length
//! `L`, consecutive segments overlapping by `D` samples (step `L - D`, `K = ⌊(N - L)/(L - D)⌋ + 1`, a
//! trailing remainder is dropped). Each segment is detrended (its mean removed, optional), multiplied by
//! the window `w`, and turned into the one-sided power spectral density
//!
//! ```text
//! P_k(f_m) = c_m |Σ_t w_t x_t e^{-2πi m t / L}|² / (f_s Σ_t w_t²),   f_m = m f_s / L,  m = 0..⌊L/2⌋,
//! ```
//!
//! with `c_m = 2` except `c_0 = 1` and, for even `L`, `c_{L/2} = 1` — the conventions of
//! `scipy.signal.welch` (`detrend='constant'`, `scaling='density'`, periodic windows). The Welch estimate is
//! the mean over segments; the variance is the sample variance over segments with `ddof` (1: unbiased,
//! as eq. 4.12). The DFT is computed directly, `O(L²)` per segment.
//!
//! **Feature-map blocks.** An `H × W × C` map is cut into non-overlapping `b_h × b_w` blocks (`H`, `W`
//! multiples of the block size); for each block and channel, the mean and variance of its `b_h b_w`
//! values. Output order is block-row, block-column, channel (row-major `(H/b_h) × (W/b_w) × C`).

use ndarray::ArrayView3;

use crate::error::{Error, Result, invalid};

/// A window function (periodic form, as `scipy.signal.get_window`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Window {
    /// All ones (boxcar).
    Rectangular,
    /// `0.5 - 0.5 cos(2πt/L)`.
    #[default]
    Hann,
    /// `0.54 - 0.46 cos(2πt/L)`.
    Hamming,
}

impl Window {
    /// The `len` window coefficients.
    pub fn coefficients(self, len: usize) -> Vec<f64> {
        let phase = |t: usize| (2.0 * std::f64::consts::PI * t as f64 / len as f64).cos();
        (0..len)
            .map(|t| match self {
                Window::Rectangular => 1.0,
                Window::Hann => 0.5 - 0.5 * phase(t),
                Window::Hamming => 0.54 - 0.46 * phase(t),
            })
            .collect()
    }
}

/// Welch segmentation settings.
#[derive(Debug, Clone, PartialEq)]
pub struct WelchParams {
    /// Segment length `L ≥ 2`.
    pub segment_len: usize,
    /// Overlap `D < L` between consecutive segments.
    pub overlap: usize,
    /// The window applied to each segment.
    pub window: Window,
    /// Sampling rate `f_s > 0` (frequencies in its units).
    pub sampling_rate: f64,
    /// Remove each segment's mean before windowing.
    pub detrend: bool,
    /// Delta degrees of freedom of the variance across segments (variance divides by `K - ddof`).
    pub ddof: usize,
}

impl Default for WelchParams {
    /// `L = 256`, `D = L/2`, Hann, `f_s = 1`, detrended, unbiased variance (scipy's defaults).
    fn default() -> Self {
        WelchParams { segment_len: 256, overlap: 128, window: Window::Hann, sampling_rate: 1.0, detrend: true, ddof: 1 }
    }
}

/// Per-feature means and variances of the pooled windows.
#[derive(Debug, Clone, PartialEq)]
pub struct Pooled {
    /// Per-feature means over the windows.
    pub means: Vec<f64>,
    /// Per-feature variances over the windows.
    pub variances: Vec<f64>,
    /// Number of windows pooled.
    pub n_windows: usize,
}

/// The frequencies `m f_s / L`, `m = 0..=⌊L/2⌋`, of [`welch_pool`]'s output.
pub fn welch_frequencies(params: &WelchParams) -> Vec<f64> {
    let l = params.segment_len;
    (0..=l / 2).map(|m| m as f64 * params.sampling_rate / l as f64).collect()
}

impl WelchParams {
    /// Checks the settings alone (before any signal): `L ≥ 2`, overlap below `L`, a positive sampling rate.
    pub fn validate(&self) -> Result<()> {
        let (l, d) = (self.segment_len, self.overlap);
        if l < 2 {
            return Err(invalid("segment_len", l, "must be at least 2"));
        }
        if d >= l {
            return Err(invalid("overlap", d, "must be smaller than the segment length"));
        }
        if !(self.sampling_rate > 0.0 && self.sampling_rate.is_finite()) {
            return Err(invalid("sampling_rate", self.sampling_rate, "must be positive and finite"));
        }
        Ok(())
    }
}

/// Mean and variance over Welch segments of the one-sided PSD of `signal`. Errors: invalid settings,
/// non-finite samples, fewer than `ddof + 1` segments.
pub fn welch_pool(signal: &[f64], params: &WelchParams) -> Result<Pooled> {
    params.validate()?;
    let (l, d) = (params.segment_len, params.overlap);
    if let Some((i, &v)) = signal.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(Error::NonFinite { what: "signal", index: i, value: v });
    }
    let step = l - d;
    let k = if signal.len() < l { 0 } else { (signal.len() - l) / step + 1 };
    if k <= params.ddof {
        return Err(invalid(
            "signal length",
            format!("{} samples give {k} segment(s) of {l}", signal.len()),
            "too short: the variance needs more segments than ddof",
        ));
    }
    let w = params.window.coefficients(l);
    let norm = params.sampling_rate * w.iter().map(|x| x * x).sum::<f64>();
    let (cos, sin): (Vec<f64>, Vec<f64>) =
        (0..l).map(|t| (2.0 * std::f64::consts::PI * t as f64 / l as f64).sin_cos()).map(|(s, c)| (c, s)).unzip();
    let n_freq = l / 2 + 1;
    let mut sum = vec![0.0; n_freq];
    let mut periodograms = Vec::with_capacity(k);
    let mut seg = vec![0.0; l];
    for s in 0..k {
        let x = &signal[s * step..s * step + l];
        let mean = if params.detrend { x.iter().sum::<f64>() / l as f64 } else { 0.0 };
        for t in 0..l {
            seg[t] = (x[t] - mean) * w[t];
        }
        let p: Vec<f64> = (0..n_freq)
            .map(|m| {
                let (mut re, mut im) = (0.0, 0.0);
                for (t, &v) in seg.iter().enumerate() {
                    let idx = (m * t) % l;
                    re += v * cos[idx];
                    im -= v * sin[idx];
                }
                let c = if m == 0 || (l % 2 == 0 && m == l / 2) { 1.0 } else { 2.0 };
                c * (re * re + im * im) / norm
            })
            .collect();
        sum.iter_mut().zip(&p).for_each(|(a, b)| *a += b);
        periodograms.push(p);
    }
    Ok(mean_variance(sum, &periodograms, k, params.ddof))
}

fn mean_variance(sum: Vec<f64>, windows: &[Vec<f64>], k: usize, ddof: usize) -> Pooled {
    let means: Vec<f64> = sum.into_iter().map(|s| s / k as f64).collect();
    let mut variances = vec![0.0; means.len()];
    for p in windows {
        for ((v, x), m) in variances.iter_mut().zip(p).zip(&means) {
            *v += (x - m) * (x - m);
        }
    }
    variances.iter_mut().for_each(|v| *v /= (k - ddof) as f64);
    Pooled { means, variances, n_windows: k }
}

/// Block settings for [`block_pool`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockParams {
    /// Block height `b_h` (rows of the grid).
    pub block_height: usize,
    /// Block width `b_w` (columns of the grid).
    pub block_width: usize,
    /// Delta degrees of freedom of the variance within a block (divides by `b_h b_w - ddof`).
    pub ddof: usize,
}

/// Mean and variance of every `b_h × b_w` block of every channel of an `H × W × C` feature map.
pub fn block_pool(map: ArrayView3<f64>, params: &BlockParams) -> Result<Pooled> {
    let (h, w, c) = map.dim();
    let (bh, bw) = (params.block_height, params.block_width);
    if h == 0 || w == 0 || c == 0 {
        return Err(Error::Empty("feature map"));
    }
    if bh == 0 || bw == 0 || bh.checked_mul(bw).is_none_or(|cells| cells <= params.ddof) {
        return Err(invalid("block size", format!("{bh}x{bw}"), "must be positive with more cells than ddof"));
    }
    if h % bh != 0 {
        return Err(Error::DimensionMismatch {
            what: "feature map height (a multiple of the block height)",
            expected: h / bh * bh,
            found: h,
        });
    }
    if w % bw != 0 {
        return Err(Error::DimensionMismatch {
            what: "feature map width (a multiple of the block width)",
            expected: w / bw * bw,
            found: w,
        });
    }
    if let Some(&v) = map.iter().find(|v| !v.is_finite()) {
        return Err(Error::NonFinite { what: "feature map", index: 0, value: v });
    }
    let (nh, nw) = (h / bh, w / bw);
    let cells = (bh * bw) as f64;
    let mut means = Vec::with_capacity(nh * nw * c);
    let mut variances = Vec::with_capacity(nh * nw * c);
    for i in 0..nh {
        for j in 0..nw {
            for ch in 0..c {
                let block = map.slice(ndarray::s![i * bh..(i + 1) * bh, j * bw..(j + 1) * bw, ch]);
                let m = block.sum() / cells;
                means.push(m);
                variances.push(block.fold(0.0, |a, x| a + (x - m) * (x - m)) / (cells - params.ddof as f64));
            }
        }
    }
    Ok(Pooled { means, variances, n_windows: bh * bw })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array3;

    #[test]
    fn welch_of_a_sinusoid_peaks_at_its_frequency_and_parseval_holds() {
        let fs = 100.0;
        let x: Vec<f64> = (0..1000).map(|t| (2.0 * std::f64::consts::PI * 12.5 * t as f64 / fs).sin()).collect();
        let p = WelchParams {
            segment_len: 64,
            overlap: 32,
            window: Window::Rectangular,
            sampling_rate: fs,
            detrend: false,
            ddof: 1,
        };
        let pooled = welch_pool(&x, &p).unwrap();
        assert_eq!(pooled.n_windows, (1000 - 64) / 32 + 1);
        let f = welch_frequencies(&p);
        let peak = (0..f.len()).fold(0, |b, m| if pooled.means[m] > pooled.means[b] { m } else { b });
        assert_eq!(f[peak], 12.5);
        // Rectangular window, bin-centred sinusoid: every segment sees the same power, variance ~0.
        assert!(pooled.variances[peak] < 1e-18 * pooled.means[peak].powi(2));
        // Parseval: Σ_m P(f_m) f_s / L = mean square of a segment (= 1/2 for a unit sinusoid).
        let total: f64 = pooled.means.iter().sum::<f64>() * fs / 64.0;
        assert!((total - 0.5).abs() < 1e-12, "{total}");
    }

    #[test]
    fn welch_variance_is_the_sample_variance_of_segment_periodograms() {
        // Segments computed by hand (odd L, Hamming, detrended) against the pooled output.
        let x: Vec<f64> = (0..40).map(|t| ((t * 7919) % 13) as f64 - 6.0 + 0.1 * t as f64).collect();
        let p = WelchParams {
            segment_len: 9,
            overlap: 4,
            window: Window::Hamming,
            sampling_rate: 2.0,
            detrend: true,
            ddof: 1,
        };
        let pooled = welch_pool(&x, &p).unwrap();
        let w = Window::Hamming.coefficients(9);
        let s2: f64 = w.iter().map(|v| v * v).sum();
        let segs: Vec<Vec<f64>> = (0..7)
            .map(|s| {
                let seg = &x[5 * s..5 * s + 9];
                let m = seg.iter().sum::<f64>() / 9.0;
                (0..5)
                    .map(|f| {
                        let z: (f64, f64) = (0..9).fold((0.0, 0.0), |(re, im), t| {
                            let a = -2.0 * std::f64::consts::PI * (f * t) as f64 / 9.0;
                            (re + (seg[t] - m) * w[t] * a.cos(), im + (seg[t] - m) * w[t] * a.sin())
                        });
                        (if f == 0 { 1.0 } else { 2.0 }) * (z.0 * z.0 + z.1 * z.1) / (2.0 * s2)
                    })
                    .collect()
            })
            .collect();
        assert_eq!(pooled.n_windows, 7);
        for f in 0..5 {
            let m = segs.iter().map(|s| s[f]).sum::<f64>() / 7.0;
            let v = segs.iter().map(|s| (s[f] - m).powi(2)).sum::<f64>() / 6.0;
            assert!((pooled.means[f] - m).abs() < 1e-12 * m.max(1.0));
            assert!((pooled.variances[f] - v).abs() < 1e-10 * v.max(1.0));
        }
    }

    #[test]
    fn blocks_match_direct_statistics() {
        let map = Array3::from_shape_fn((4, 6, 2), |(i, j, c)| (i * 6 + j) as f64 * if c == 0 { 1.0 } else { -2.0 });
        let pooled = block_pool(map.view(), &BlockParams { block_height: 2, block_width: 3, ddof: 0 }).unwrap();
        assert_eq!(pooled.means.len(), 2 * 2 * 2);
        // Block (1, 0), channel 1: values -2·{12,13,14,18,19,20}.
        let vals = [12.0, 13.0, 14.0, 18.0, 19.0, 20.0].map(|v: f64| -2.0 * v);
        let m = vals.iter().sum::<f64>() / 6.0;
        let v = vals.iter().map(|x| (x - m).powi(2)).sum::<f64>() / 6.0;
        assert_eq!(pooled.means[2 * 2 + 1], m);
        assert!((pooled.variances[2 * 2 + 1] - v).abs() < 1e-12);
    }

    #[test]
    fn bad_pooling_input() {
        let x = vec![0.0; 90];
        let p = WelchParams { segment_len: 64, overlap: 32, ..Default::default() };
        assert!(welch_pool(&x, &WelchParams { overlap: 64, ..p.clone() }).is_err());
        assert!(welch_pool(&x, &WelchParams { segment_len: 1, overlap: 0, ..p.clone() }).is_err());
        assert!(welch_pool(&x, &WelchParams { sampling_rate: 0.0, ..p.clone() }).is_err());
        // 90 samples, L = 64, step 32: one segment, no unbiased variance.
        assert!(matches!(welch_pool(&x, &p), Err(Error::InvalidParameter { name: "signal length", .. })));
        assert!(welch_pool(&x, &WelchParams { ddof: 0, ..p.clone() }).is_ok());
        let mut y = vec![0.0; 200];
        y[150] = f64::NAN;
        assert!(matches!(welch_pool(&y, &p), Err(Error::NonFinite { index: 150, .. })));
        let map = Array3::<f64>::zeros((5, 4, 1));
        let b = BlockParams { block_height: 2, block_width: 2, ddof: 1 };
        assert!(matches!(block_pool(map.view(), &b), Err(Error::DimensionMismatch { found: 5, .. })));
        assert!(block_pool(Array3::<f64>::zeros((4, 4, 0)).view(), &b).is_err());
        assert!(
            block_pool(
                Array3::<f64>::zeros((4, 4, 1)).view(),
                &BlockParams { block_height: 1, block_width: 1, ddof: 1 }
            )
            .is_err()
        );
        let mut nan = Array3::<f64>::zeros((4, 4, 1));
        nan[[1, 1, 0]] = f64::INFINITY;
        assert!(matches!(block_pool(nan.view(), &b), Err(Error::NonFinite { .. })));
    }
}
