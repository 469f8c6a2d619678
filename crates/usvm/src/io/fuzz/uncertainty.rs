//! The inputs of `usvm uncertainty ...`: the first file is the subcommand's CSV, the second a line of
//! whitespace-separated settings in the order of its flags (a missing or malformed setting takes its
//! default). Each target makes the subcommand's library calls and renders every output format.
//!
//! | target | settings |
//! |---|---|
//! | `repeated` | `GROUP_COL FORM [LABEL_COL]` |
//! | `translation` | `HEIGHT WIDTH SIGMA FORM [LABEL_COL]` |
//! | `se_to_var` | `RULE FRACTION BASE_VARIANCE MEAN:SE ...` (0-based feature columns) |
//! | `welch` | `SEGMENT_LEN OVERLAP WINDOW FS DDOF [LABEL_COL]` |
//! | `blocks` | `HEIGHT WIDTH CHANNELS BLOCK_HEIGHT BLOCK_WIDTH DDOF [LABEL_COL]` |
//!
//! `FORM` is `full`, `diag`, `iso` or `lowrank`; `RULE` `paper`, `range-squared` (alias `range`) or `squared`; `WINDOW` `hann`, `hamming`
//! or `rectangular`.

use std::borrow::Cow;

use ndarray::{Array2, Array3, ArrayView2, Axis};

use crate::covariance::Covariances;
use crate::data::Dataset;
use crate::gaussians::{
    BlockParams, CovarianceForm, StandardErrorRule, TranslationParams, WelchParams, Window, block_pool,
    gaussians_from_repeats, standard_errors_to_variances, translation_covariances_in, welch_frequencies, welch_pool,
};
use crate::io::{
    read_csv, read_repeated_csv, write_csv, write_csv_variances, write_libsvm, write_libsvm_variances,
    write_svmgsu_covariances, write_svmgsu_labels, write_svmgsu_means,
};

/// The settings line, token by token.
struct Settings<'a>(Vec<&'a str>);

impl Settings<'_> {
    fn token(&self, k: usize) -> Option<&str> {
        self.0.get(k).copied().filter(|t| *t != "-")
    }

    fn usize(&self, k: usize, default: usize) -> usize {
        self.token(k).and_then(|t| t.parse().ok()).unwrap_or(default)
    }

    fn f64(&self, k: usize, default: f64) -> f64 {
        self.token(k).and_then(|t| t.parse().ok()).unwrap_or(default)
    }

    fn form(&self, k: usize) -> CovarianceForm {
        match self.token(k) {
            Some("full") => CovarianceForm::Full,
            Some("iso") => CovarianceForm::Isotropic,
            Some("lowrank") => CovarianceForm::LowRank,
            _ => CovarianceForm::Diagonal,
        }
    }
}

/// Runs the `usvm uncertainty` subcommand `target` on `csv` with `settings`.
pub(super) fn run(target: &str, csv: &[u8], settings: &str) {
    let s = Settings(settings.split_whitespace().collect());
    let (data, ids, names) = match target {
        "repeated" => {
            let Ok(obs) = read_repeated_csv(csv, "obs", s.token(0).unwrap_or("id"), s.token(2)) else { return };
            let views: Vec<ArrayView2<f64>> = obs.groups.iter().map(|a| a.view()).collect();
            let Ok(g) = gaussians_from_repeats(&views, s.form(1)) else { return };
            let data = Dataset::dense(g.means, obs.labels).with_covariances(g.covariances);
            (data, Some(obs.ids), Some(obs.feature_names))
        }
        "translation" => {
            let Ok(data) = read_csv(csv, "images", s.token(4)) else { return };
            let sigma = s.f64(2, 1.0);
            let params =
                TranslationParams { height: s.usize(0, 1), width: s.usize(1, 1), sigma_h: sigma, sigma_v: sigma };
            let images = data.features.to_dense();
            let Ok(cov) = translation_covariances_in(images.view(), &params, s.form(3)) else { return };
            (Dataset::dense(images, data.labels).with_covariances(cov), None, None)
        }
        "se_to_var" => match se_to_var(csv, &s) {
            Some(data) => (data, None, None),
            None => return,
        },
        "welch" => {
            let Ok(data) = read_csv(csv, "series", s.token(5)) else { return };
            let window = match s.token(2) {
                Some("hamming") => Window::Hamming,
                Some("rectangular") => Window::Rectangular,
                _ => Window::Hann,
            };
            let segment_len = s.usize(0, 4);
            let params = WelchParams {
                segment_len,
                overlap: s.usize(1, segment_len / 2),
                window,
                sampling_rate: s.f64(3, 1.0),
                detrend: true,
                ddof: s.usize(4, 1),
            };
            let x = data.features.to_dense();
            let Ok(pooled) = x.rows().into_iter().map(|row| welch_pool(&row.to_vec(), &params)).collect() else {
                return;
            };
            drop(welch_frequencies(&params));
            (stack(pooled, data.labels), None, None)
        }
        "blocks" => {
            let Ok(data) = read_csv(csv, "maps", s.token(6)) else { return };
            let (h, w, c) = (s.usize(0, 1), s.usize(1, 1), s.usize(2, 1));
            if h.checked_mul(w).and_then(|hw| hw.checked_mul(c)) != Some(data.n_features()) {
                return;
            }
            let params = BlockParams { block_height: s.usize(3, 1), block_width: s.usize(4, 1), ddof: s.usize(5, 1) };
            let x = data.features.to_dense();
            let Ok(pooled) = x
                .rows()
                .into_iter()
                .map(|row| block_pool(Array3::from_shape_vec((h, w, c), row.to_vec()).expect("h·w·c").view(), &params))
                .collect()
            else {
                return;
            };
            (stack(pooled, data.labels), None, None)
        }
        _ => unreachable!("not an uncertainty target: {target}"),
    };
    render(&data, ids.as_deref(), names.as_deref());
}

/// `usvm uncertainty se-to-var` on feature columns: paired means get the rule's variances, the
/// standard-error columns are dropped, the other features get the base variance.
fn se_to_var(csv: &[u8], s: &Settings) -> Option<Dataset<'static>> {
    let data = read_csv(csv, "se", None).ok()?;
    let rule = match s.token(0) {
        Some("squared") => StandardErrorRule::Squared,
        Some("range" | "range-squared") => StandardErrorRule::RangeScaledSquared { fraction: s.f64(1, 0.8) },
        _ => StandardErrorRule::RangeScaled { fraction: s.f64(1, 0.8) },
    };
    let pairs: Vec<(usize, usize)> = (3..s.0.len())
        .filter_map(|k| s.token(k)?.split_once(':').and_then(|(m, e)| Some((m.parse().ok()?, e.parse().ok()?))))
        .collect();
    let n = data.n_features();
    let (mean_idx, se_idx): (Vec<usize>, Vec<usize>) = pairs.into_iter().unzip();
    if mean_idx.iter().chain(&se_idx).any(|&c| c >= n) || se_idx.iter().any(|c| mean_idx.contains(c)) {
        return None;
    }
    let x = data.features.to_dense();
    let (m, se) = (x.select(Axis(1), &mean_idx), x.select(Axis(1), &se_idx));
    let var = standard_errors_to_variances(m.view(), se.view(), None, rule).ok()?;
    let keep: Vec<usize> = (0..n).filter(|c| !se_idx.contains(c)).collect();
    let mut v = Array2::from_elem((x.nrows(), keep.len()), s.f64(2, 0.0));
    for (k, &c) in keep.iter().enumerate() {
        if let Some(p) = mean_idx.iter().position(|&mc| mc == c) {
            v.column_mut(k).assign(&var.column(p));
        }
    }
    let features = x.select(Axis(1), &keep);
    Some(Dataset::dense(features, data.labels).with_covariances(Covariances::diagonal(v)))
}

/// One row of means and diagonal variances per pooled example.
fn stack(pooled: Vec<crate::gaussians::Pooled>, labels: Cow<'static, [i64]>) -> Dataset<'static> {
    let nf = pooled[0].means.len();
    let means = Array2::from_shape_fn((pooled.len(), nf), |(i, j)| pooled[i].means[j]);
    let vars = Array2::from_shape_fn((pooled.len(), nf), |(i, j)| pooled[i].variances[j]);
    Dataset::dense(means, labels).with_covariances(Covariances::diagonal(vars))
}

/// Every output format of `usvm uncertainty` (those a covariance form has no file for are refused).
fn render(data: &Dataset, ids: Option<&[String]>, names: Option<&[String]>) {
    let mut sink = Vec::new();
    drop(write_svmgsu_means(data, ids, &mut sink));
    drop(write_svmgsu_labels(data, ids, &mut sink));
    drop(write_svmgsu_covariances(data, ids, &mut sink));
    drop(write_libsvm(data, &mut sink));
    drop(write_libsvm_variances(data, &mut sink));
    drop(write_csv(data, names, "label", &mut sink));
    drop(write_csv_variances(data, names, &mut sink));
}
