//! `usvm uncertainty ...`: build Gaussian inputs (means + covariances) from raw measurements and write
//! them in a format `usvm train`/`cv`/`predict` read (DESIGN 2.9). Each subcommand reads, calls one
//! `usvm::gaussians` helper, and writes every output file atomically only once all of them have
//! been rendered without error.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, Subcommand, ValueEnum};
use ndarray::{Array2, Array3, ArrayView2};
use usvm::gaussians::{
    BlockParams, CovarianceForm, StandardErrorRule, TranslationParams, WelchParams, Window, block_pool,
    gaussians_from_repeats, standard_errors_to_variances, translation_covariances_in, welch_frequencies, welch_pool,
};
use usvm::io::{
    read_csv, read_repeated_csv, write_csv, write_csv_variances, write_libsvm, write_libsvm_variances,
    write_svmgsu_covariances, write_svmgsu_labels, write_svmgsu_means,
};
use usvm::{Covariances, Dataset};

use crate::commit::write_all_atomically;
use crate::input::{io_error, open};

#[derive(Args, Debug)]
#[command(about = "Build uncertain inputs (means + covariances) from raw measurements (DESIGN 2.9)")]
#[command(
    long_about = "Build uncertain inputs (means + covariances) from raw measurements and write them in a format \
that `usvm train`, `usvm cv` and `usvm predict` read: svm-gsu (--out-means/--out-labels/--out-cov, every \
covariance form), LIBSVM (--out-data/--out-var, diagonal forms) or CSV (--out-csv/--out-var-csv, diagonal forms)."
)]
pub struct UncertaintyArgs {
    #[command(subcommand)]
    command: UncertaintyCommand,
}

#[derive(Subcommand, Debug)]
enum UncertaintyCommand {
    /// Gaussians from repeated observations: mean and unbiased covariance of each group of rows (thesis eq. 4.12)
    #[command(long_about = "Gaussians from repeated observations. Every row of --input (a CSV with a header) is one \
observation; rows with the same --group-col value are observations of the same example. Each example's mean is \
the average of its rows and its covariance the unbiased sample covariance Σ = Σ_t (x_t - x)(x_t - x)ᵀ / (N - 1) \
(thesis eq. 4.12), stored as --cov-type full, diag (its diagonal), iso ((tr Σ / n) I) or lowrank (the centred \
observations / √(N-1), exact, rank ≤ N - 1). Every group needs at least two observations and one label.")]
    Repeated(RepeatedArgs),
    /// Image translation uncertainty by first-order Taylor expansion: Σ = J Σ_t Jᵀ (thesis appendix C)
    #[command(long_about = "Image translation uncertainty by first-order Taylor expansion (thesis appendix C). Each \
row of --images (a CSV with a header; label column last or --label-col) is a row-major --height × --width image. \
An image translated by t ~ N(0, diag(σ², σ²)) is approximately Gaussian with mean the image and covariance \
Σ = J Σ_t Jᵀ, J the n×2 matrix of horizontal/vertical central differences (zero outside the border). \
σ = --pixels / 3 (99.7% of the shifts within ±pixels), or --sigma. The covariance has rank 2: --cov-type \
lowrank (default; svm-gsu output, written as its upper triangle), full, diag or iso.")]
    Translation(TranslationArgs),
    /// Variances from reported standard errors (the WDBC rule of DESIGN 8)
    #[command(long_about = "Variances from reported standard errors. --csv holds mean columns and their standard \
errors; --mean-cols and --se-cols pair them in order. The standard-error columns are dropped; every other column \
is a feature. A paired mean column gets, with s = fraction · range · se / max se (--fraction 0.8): the variance \
s (--rule paper, default: the WDBC protocol as the thesis states it, \"the maximum variance is set to 80% of the \
range\"), s² (--rule range-squared: s read as a standard deviation, unit-consistent; the old --rule range) or se² \
(--rule squared). Range and maximum are over all rows; the library's WDBC protocol computes them on the training \
split only and then divides by the feature's variance, as the features are standardised. Unpaired features get --base-variance.")]
    SeToVar(SeToVarArgs),
    /// Welch periodogram pooling: per-frequency mean and variance of segment periodograms of each series
    #[command(long_about = "Welch periodogram pooling (thesis 3.5.4). Each row of --input (a CSV with a header; \
label column last or --label-col) is one time series. It is cut into segments of --segment-len samples \
overlapping by --overlap, each detrended (mean removed), windowed and turned into a one-sided power spectral \
density (scipy.signal.welch conventions, density scaling with --fs). The features are the mean PSD over \
segments at frequencies k·fs/L, k = 0..L/2; their diagonal variances the unbiased variance over segments.")]
    Welch(WelchArgs),
    /// Block pooling of feature maps: per-block, per-channel mean and variance
    #[command(long_about = "Block (mean/variance) pooling of feature maps. Each row of --input (a CSV with a header; \
label column last or --label-col) is an H×W×C map, row-major with the channel fastest (index (r·W + c)·C + ch). \
It is cut into non-overlapping --block-height × --block-width blocks; the features are each block's per-channel \
means (order: block row, block column, channel), their diagonal variances the unbiased variances within the block.")]
    Blocks(BlocksArgs),
}

/// Where to write the result: exactly one format.
#[derive(Args, Debug, Clone)]
#[command(group = clap::ArgGroup::new("output").required(true).multiple(false).args(["out_means", "out_data", "out_csv"]))]
#[group(skip)]
struct OutputArgs {
    /// svm-gsu means file (with --out-labels, --out-cov): every covariance form
    #[arg(long, value_name = "FILE", requires_all = ["out_labels", "out_cov"], help_heading = "Output (exactly one format)")]
    out_means: Option<PathBuf>,
    /// svm-gsu labels file
    #[arg(long, value_name = "FILE", requires = "out_means", help_heading = "Output (exactly one format)")]
    out_labels: Option<PathBuf>,
    /// svm-gsu covariance file (low-rank forms as factor entries `uK,J:V`)
    #[arg(long, value_name = "FILE", requires = "out_means", help_heading = "Output (exactly one format)")]
    out_cov: Option<PathBuf>,
    /// LIBSVM file of labels and means (with --out-var): diagonal and low-rank forms
    #[arg(long, value_name = "FILE", requires = "out_var", help_heading = "Output (exactly one format)")]
    out_data: Option<PathBuf>,
    /// LIBSVM-layout variance file (low-rank: factor entries `uK,J:V` after the variances)
    #[arg(long, value_name = "FILE", requires = "out_data", help_heading = "Output (exactly one format)")]
    out_var: Option<PathBuf>,
    /// CSV of means with the label in the last column (with --out-var-csv): diagonal and low-rank forms
    #[arg(long, value_name = "FILE", requires = "out_var_csv", help_heading = "Output (exactly one format)")]
    out_csv: Option<PathBuf>,
    /// CSV of per-feature variances (low-rank: factor blocks `uK:NAME`)
    #[arg(long, value_name = "FILE", requires = "out_csv", help_heading = "Output (exactly one format)")]
    out_var_csv: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum CovType {
    Full,
    Diag,
    Iso,
    Lowrank,
}

#[derive(Args, Debug)]
struct RepeatedArgs {
    /// CSV of observations with a header row, one observation per row
    #[arg(long, value_name = "FILE")]
    input: PathBuf,
    /// Column holding the example id that groups observations
    #[arg(long, value_name = "NAME")]
    group_col: String,
    /// Column holding the label (constant within a group; default: the last column other than --group-col)
    #[arg(long, value_name = "NAME")]
    label_col: Option<String>,
    /// Covariance form: full, diag, iso (tr Σ / n) or lowrank (centred observations)
    #[arg(long, value_enum, default_value = "diag")]
    cov_type: CovType,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Args, Debug)]
struct TranslationArgs {
    /// CSV of images (one per row, row-major pixels) with a header row and a label column
    #[arg(long, value_name = "FILE")]
    images: PathBuf,
    /// Image height in pixels
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    height: u64,
    /// Image width in pixels
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    width: u64,
    /// Largest translation p_t in pixels: σ = p_t / 3 in both directions (thesis 3.5.2)
    #[arg(long, value_name = "P", conflicts_with = "sigma", required_unless_present = "sigma")]
    pixels: Option<f64>,
    /// Standard deviation of the translation in pixels (instead of --pixels)
    #[arg(long, value_name = "S")]
    sigma: Option<f64>,
    /// Name of the CSV label column (default: the last column)
    #[arg(long, value_name = "NAME")]
    label_col: Option<String>,
    /// Covariance form: lowrank (exact, rank 2), full, diag (its diagonal) or iso (tr Σ / n)
    #[arg(long, value_enum, default_value = "lowrank")]
    cov_type: CovType,
    #[command(flatten)]
    output: OutputArgs,
}

/// How `se-to-var` turns a standard error into a variance.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum SeRule {
    /// fraction · range · se / max se is the variance (the thesis' WDBC rule, DESIGN 8)
    Paper,
    /// (fraction · range · se / max se)²: the rescaled value is a standard deviation
    #[value(name = "range-squared", alias = "range")]
    RangeSquared,
    /// se²: the variance of the reported mean
    Squared,
}

#[derive(Args, Debug)]
struct SeToVarArgs {
    /// CSV with a header row, mean columns, standard-error columns and a label column
    #[arg(long, value_name = "FILE")]
    csv: PathBuf,
    /// Comma-separated mean columns, paired in order with --se-cols
    #[arg(long, value_name = "NAMES", value_delimiter = ',', required = true)]
    mean_cols: Vec<String>,
    /// Comma-separated standard-error columns (dropped from the features)
    #[arg(long, value_name = "NAMES", value_delimiter = ',', required = true)]
    se_cols: Vec<String>,
    /// paper: fraction · range · se / max se is the variance (the WDBC protocol, "the maximum variance is
    /// set to 80% of the range"); range-squared (old name: range): that value squared, i.e. read as a
    /// standard deviation; squared: se². Range and maximum are over all rows of the CSV
    #[arg(long, value_enum, default_value = "paper")]
    rule: SeRule,
    /// Fraction of the range the largest standard error maps to (--rule paper or range-squared)
    #[arg(long, default_value_t = 0.8)]
    fraction: f64,
    /// Variance of the features without a standard error
    #[arg(long, value_name = "V", default_value_t = 0.0)]
    base_variance: f64,
    /// Name of the CSV label column (default: the last column)
    #[arg(long, value_name = "NAME")]
    label_col: Option<String>,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum WindowArg {
    Hann,
    Hamming,
    Rectangular,
}

#[derive(Args, Debug)]
struct WelchArgs {
    /// CSV of time series (one per row) with a header row and a label column
    #[arg(long, value_name = "FILE")]
    input: PathBuf,
    /// Segment length L in samples
    #[arg(long, value_name = "L", default_value_t = 256)]
    segment_len: usize,
    /// Overlap between consecutive segments in samples (default: L / 2)
    #[arg(long, value_name = "D")]
    overlap: Option<usize>,
    /// Window applied to each segment
    #[arg(long, value_enum, default_value = "hann")]
    window: WindowArg,
    /// Sampling rate (frequencies and densities in its units)
    #[arg(long, value_name = "HZ", default_value_t = 1.0)]
    fs: f64,
    /// Name of the CSV label column (default: the last column)
    #[arg(long, value_name = "NAME")]
    label_col: Option<String>,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Args, Debug)]
struct BlocksArgs {
    /// CSV of feature maps (one H×W×C map per row, channel fastest) with a header row and a label column
    #[arg(long, value_name = "FILE")]
    input: PathBuf,
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    height: u64,
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    width: u64,
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    channels: u64,
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    block_height: u64,
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    block_width: u64,
    /// Name of the CSV label column (default: the last column)
    #[arg(long, value_name = "NAME")]
    label_col: Option<String>,
    #[command(flatten)]
    output: OutputArgs,
}

pub fn run(args: &UncertaintyArgs) -> Result<()> {
    match &args.command {
        UncertaintyCommand::Repeated(a) => repeated(a),
        UncertaintyCommand::Translation(a) => translation(a),
        UncertaintyCommand::SeToVar(a) => se_to_var(a),
        UncertaintyCommand::Welch(a) => welch(a),
        UncertaintyCommand::Blocks(a) => blocks(a),
    }
}

fn name(path: &Path) -> String {
    path.display().to_string()
}

impl OutputArgs {
    /// Renders every file, then writes them (each atomically).
    fn write(&self, data: &Dataset, ids: Option<&[String]>, names: Option<&[String]>) -> Result<()> {
        let mut files: Vec<(&Path, Vec<u8>)> = Vec::new();
        let diagonal_only = |what: &str| {
            anyhow!(
                "{what}: {} covariances have no variance-file form; write them in the svm-gsu format (--out-means, \
                 --out-labels, --out-cov) or choose --cov-type lowrank/diag/iso",
                data.covariances.kind()
            )
        };
        let render = |f: &dyn Fn(&mut Vec<u8>) -> std::io::Result<()>| -> std::io::Result<Vec<u8>> {
            let mut buf = Vec::new();
            f(&mut buf)?;
            Ok(buf)
        };
        if let (Some(m), Some(l), Some(c)) = (&self.out_means, &self.out_labels, &self.out_cov) {
            files.push((m, render(&|b| write_svmgsu_means(data, ids, b))?));
            files.push((l, render(&|b| write_svmgsu_labels(data, ids, b))?));
            files.push((c, render(&|b| write_svmgsu_covariances(data, ids, b))?));
        } else if let (Some(d), Some(v)) = (&self.out_data, &self.out_var) {
            files.push((d, render(&|b| write_libsvm(data, b))?));
            files.push((v, render(&|b| write_libsvm_variances(data, b)).map_err(|_| diagonal_only(&name(v)))?));
        } else if let (Some(d), Some(v)) = (&self.out_csv, &self.out_var_csv) {
            files.push((d, render(&|b| write_csv(data, names, "label", b))?));
            files.push((v, render(&|b| write_csv_variances(data, names, b)).map_err(|_| diagonal_only(&name(v)))?));
        } else {
            bail!(
                "no output: give --out-means/--out-labels/--out-cov, --out-data/--out-var or --out-csv/--out-var-csv"
            );
        }
        let files: Vec<(&Path, &[u8])> = files.iter().map(|(p, b)| (*p, b.as_slice())).collect();
        write_all_atomically(&files)
    }
}

fn form(c: CovType) -> CovarianceForm {
    match c {
        CovType::Full => CovarianceForm::Full,
        CovType::Diag => CovarianceForm::Diagonal,
        CovType::Iso => CovarianceForm::Isotropic,
        CovType::Lowrank => CovarianceForm::LowRank,
    }
}

/// Splits a CSV record on commas (fields in double quotes may hold commas; `""` is a quote), trimming.
fn split_csv(line: &str) -> std::result::Result<Vec<String>, &'static str> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', false) if field.trim().is_empty() => {
                field.clear();
                quoted = true;
            }
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            ('"', true) => quoted = false,
            ('"', false) => return Err("quote inside an unquoted field"),
            (',', false) => fields.push(std::mem::take(&mut field).trim().to_string()),
            (c, _) => field.push(c),
        }
    }
    if quoted {
        return Err("unterminated quoted field");
    }
    fields.push(field.trim().to_string());
    Ok(fields)
}

fn repeated(args: &RepeatedArgs) -> Result<()> {
    let src = name(&args.input);
    let obs = read_repeated_csv(open(&args.input)?, &src, &args.group_col, args.label_col.as_deref())?;
    let views: Vec<ArrayView2<f64>> = obs.groups.iter().map(|a| a.view()).collect();
    let gauss = gaussians_from_repeats(&views, form(args.cov_type)).with_context(|| src.clone())?;
    let data = Dataset::dense(gauss.means, obs.labels).with_covariances(gauss.covariances);
    let ids = obs.ids.iter().all(|s| !s.is_empty() && !s.contains(char::is_whitespace)).then_some(obs.ids);
    args.output.write(&data, ids.as_deref(), Some(&obs.feature_names))
}

/// Reads a CSV with a label column through the library reader (errors name file, line and field).
fn read_table(path: &Path, label_col: Option<&str>) -> Result<Dataset<'static>> {
    Ok(read_csv(open(path)?, &name(path), label_col)?)
}

fn translation(args: &TranslationArgs) -> Result<()> {
    let src = name(&args.images);
    let data = read_table(&args.images, args.label_col.as_deref())?;
    let (h, w) = (args.height as usize, args.width as usize);
    let pixels = (h as u128) * (w as u128);
    if pixels != data.n_features() as u128 {
        bail!(
            "{src}:1: field '': {} pixel columns, but --height {h} × --width {w} = {pixels} pixels",
            data.n_features()
        );
    }
    let sigma = match (args.pixels, args.sigma) {
        (Some(p), _) => p / 3.0,
        (None, Some(s)) => s,
        (None, None) => bail!("give --pixels or --sigma"),
    };
    let params = TranslationParams { height: h, width: w, sigma_h: sigma, sigma_v: sigma };
    let images = data.features.to_dense();
    let covariances =
        translation_covariances_in(images.view(), &params, form(args.cov_type)).with_context(|| src.clone())?;
    let n = images.ncols();
    let data = Dataset::dense(images, data.labels).with_covariances(covariances);
    let names: Vec<String> = (0..n).map(|k| format!("p{}_{}", k / w, k % w)).collect();
    args.output.write(&data, None, Some(&names))
}

/// The header of a CSV file, split into column names.
fn header(path: &Path) -> Result<Vec<String>> {
    let src = name(path);
    let mut reader = open(path)?;
    let mut line = String::new();
    let mut number = 0;
    loop {
        line.clear();
        if reader.read_line(&mut line).map_err(|e| io_error(path, e))? == 0 {
            bail!("{src}:0: field '': empty input: no header row");
        }
        number += 1;
        let text = line.trim_end_matches(['\n', '\r']).trim_start_matches('\u{feff}');
        if !text.trim().is_empty() {
            return split_csv(text).map_err(|m| anyhow!("{src}:{number}: field '{}': {m}", text.trim()));
        }
    }
}

fn se_to_var(args: &SeToVarArgs) -> Result<()> {
    let src = name(&args.csv);
    let data = read_table(&args.csv, args.label_col.as_deref())?;
    let columns = header(&args.csv)?;
    let label = match &args.label_col {
        Some(col) => col.clone(),
        None => columns.last().cloned().unwrap_or_default(),
    };
    // Feature index of every non-label column, in order.
    let names: Vec<String> = columns.iter().filter(|c| **c != label).cloned().collect();
    if args.mean_cols.len() != args.se_cols.len() {
        bail!("--mean-cols lists {} columns but --se-cols lists {}", args.mean_cols.len(), args.se_cols.len());
    }
    if !(args.base_variance >= 0.0 && args.base_variance.is_finite()) {
        bail!("--base-variance {}: must be finite and non-negative", args.base_variance);
    }
    let find = |col: &String| {
        names.iter().position(|c| c == col).ok_or_else(|| anyhow!("{src}:1: field '{col}': no such feature column"))
    };
    let means_idx: Vec<usize> = args.mean_cols.iter().map(find).collect::<Result<_>>()?;
    let se_idx: Vec<usize> = args.se_cols.iter().map(find).collect::<Result<_>>()?;
    if let Some(c) = se_idx.iter().find(|c| means_idx.contains(c)) {
        bail!("{src}:1: field '{}': listed both as a mean and as a standard-error column", names[*c]);
    }
    let x = data.features.to_dense();
    let rule = match args.rule {
        SeRule::Paper => StandardErrorRule::RangeScaled { fraction: args.fraction },
        SeRule::RangeSquared => StandardErrorRule::RangeScaledSquared { fraction: args.fraction },
        SeRule::Squared => StandardErrorRule::Squared,
    };
    let m = x.select(ndarray::Axis(1), &means_idx);
    let se = x.select(ndarray::Axis(1), &se_idx);
    if let Some((i, j)) = se.indexed_iter().find(|(_, v)| **v < 0.0).map(|(ij, _)| ij) {
        bail!("{src}: field '{}': negative standard error {} in data row {}", names[se_idx[j]], se[[i, j]], i + 1);
    }
    let var = standard_errors_to_variances(m.view(), se.view(), None, rule).with_context(|| src.clone())?;
    let keep: Vec<usize> = (0..names.len()).filter(|c| !se_idx.contains(c)).collect();
    let mut v = Array2::from_elem((x.nrows(), keep.len()), args.base_variance);
    for (k, &c) in keep.iter().enumerate() {
        if let Some(p) = means_idx.iter().position(|&mc| mc == c) {
            v.column_mut(k).assign(&var.column(p));
        }
    }
    let kept_names: Vec<String> = keep.iter().map(|&c| names[c].clone()).collect();
    let out = Dataset::dense(x.select(ndarray::Axis(1), &keep).as_standard_layout().into_owned(), data.labels)
        .with_covariances(Covariances::diagonal(v));
    args.output.write(&out, None, Some(&kept_names))
}

fn welch(args: &WelchArgs) -> Result<()> {
    let src = name(&args.input);
    let data = read_table(&args.input, args.label_col.as_deref())?;
    let params = WelchParams {
        segment_len: args.segment_len,
        overlap: args.overlap.unwrap_or(args.segment_len / 2),
        window: match args.window {
            WindowArg::Hann => Window::Hann,
            WindowArg::Hamming => Window::Hamming,
            WindowArg::Rectangular => Window::Rectangular,
        },
        sampling_rate: args.fs,
        detrend: true,
        ddof: 1,
    };
    params.validate().map_err(|e| match e {
        usvm::Error::InvalidParameter { name, value, reason } => {
            let flag = match name {
                "segment_len" => "--segment-len",
                "overlap" => "--overlap",
                _ => "--fs",
            };
            anyhow!("invalid value '{value}' for '{flag}': {reason}")
        }
        e => e.into(),
    })?;
    let x = data.features.to_dense();
    // Pooled first: the segment length is checked against the series before anything is sized by it.
    let mut rows = Vec::with_capacity(x.nrows());
    for (i, row) in x.rows().into_iter().enumerate() {
        rows.push(welch_pool(&row.to_vec(), &params).with_context(|| format!("{src}: data row {}", i + 1))?);
    }
    let nf = rows[0].means.len();
    let means = Array2::from_shape_fn((rows.len(), nf), |(i, j)| rows[i].means[j]);
    let vars = Array2::from_shape_fn((rows.len(), nf), |(i, j)| rows[i].variances[j]);
    let names: Vec<String> = welch_frequencies(&params).iter().map(|f| format!("psd_{f}")).collect();
    let out = Dataset::dense(means, data.labels).with_covariances(Covariances::diagonal(vars));
    args.output.write(&out, None, Some(&names))
}

fn blocks(args: &BlocksArgs) -> Result<()> {
    let src = name(&args.input);
    let data = read_table(&args.input, args.label_col.as_deref())?;
    let (h, w, c) = (args.height as usize, args.width as usize, args.channels as usize);
    let values = [h, w, c].iter().try_fold(1u128, |a, &d| a.checked_mul(d as u128));
    if values != Some(data.n_features() as u128) {
        let values = values.map_or_else(|| format!("{h} × {w} × {c}"), |v| v.to_string());
        bail!("{src}:1: field '': {} value columns, but --height × --width × --channels = {values}", data.n_features());
    }
    let params =
        BlockParams { block_height: args.block_height as usize, block_width: args.block_width as usize, ddof: 1 };
    let x = data.features.to_dense();
    let mut rows = Vec::with_capacity(x.nrows());
    for (i, row) in x.rows().into_iter().enumerate() {
        let map = Array3::from_shape_vec((h, w, c), row.to_vec()).expect("h·w·c values");
        rows.push(block_pool(map.view(), &params).with_context(|| format!("{src}: data row {}", i + 1))?);
    }
    let nf = rows[0].means.len();
    let means = Array2::from_shape_fn((rows.len(), nf), |(i, j)| rows[i].means[j]);
    let vars = Array2::from_shape_fn((rows.len(), nf), |(i, j)| rows[i].variances[j]);
    let (nh, nw) = (h / params.block_height, w / params.block_width);
    let names: Vec<String> =
        (0..nh * nw * c).map(|k| format!("b{}_{}_c{}", k / (nw * c), (k / c) % nw, k % c)).collect();
    let out = Dataset::dense(means, data.labels).with_covariances(Covariances::diagonal(vars));
    args.output.write(&out, None, Some(&names))
}
