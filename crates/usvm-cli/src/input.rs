//! The three input formats of DESIGN 6, shared by `train`, `predict` and `cv`: exactly one of
//! `--means M --labels L [--cov C]` (svm-gsu), `--data F [--var V]` (LIBSVM) or
//! `--csv F [--var-csv V] [--label-col NAME] [--weight-col NAME]` or
//! `--parquet F [--label-col NAME] [--weight-col NAME] [--var-cols A,B,...]`.
//!
//! Every error names the file (and, for malformed content, the line and the field): missing files read
//! `FILE: No such file or directory`, parse errors `FILE:LINE: field 'TOKEN': MESSAGE`.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow, bail};
use clap::Args;
use usvm::io::{
    ReadOptions, TableColumns, read_csv, read_csv_weighted, read_csv_with_variances, read_libsvm,
    read_libsvm_with_variances, read_parquet, read_svmgsu,
};
use usvm::{Covariances, Dataset};

#[derive(Args, Debug, Clone, Default)]
#[command(group = clap::ArgGroup::new("input").required(true).multiple(false).args(["means", "data", "csv", "parquet"]))]
#[command(group = clap::ArgGroup::new("table").multiple(false).args(["csv", "parquet"]))]
#[group(skip)]
pub struct InputArgs {
    /// svm-gsu means file, lines `<id> j:v ...` (1-based sparse); joined by id with --labels and --cov
    #[arg(long, value_name = "FILE", help_heading = "Input (exactly one of --means, --data, --csv, --parquet)")]
    pub means: Option<PathBuf>,
    /// svm-gsu labels file, lines `<id> <label>` (with --means)
    #[arg(
        long,
        value_name = "FILE",
        requires = "means",
        help_heading = "Input (exactly one of --means, --data, --csv, --parquet)"
    )]
    pub labels: Option<PathBuf>,
    /// svm-gsu covariance file, lines `<id> i,j:v ...`, or low-rank `<id> uK,J:V ... [J,J:V ...]` (factor
    /// column K, feature J: Σ = U Uᵀ + diag) (with --means; default: no covariances)
    #[arg(
        long,
        value_name = "FILE",
        requires = "means",
        help_heading = "Input (exactly one of --means, --data, --csv, --parquet)"
    )]
    pub cov: Option<PathBuf>,
    /// LIBSVM/svmlight file, lines `label j:v ...`
    #[arg(long, value_name = "FILE", help_heading = "Input (exactly one of --means, --data, --csv, --parquet)")]
    pub data: Option<PathBuf>,
    /// LIBSVM-layout file of per-feature variances `label j:v ...`, line for line with --data; low-rank
    /// factor entries `uK,J:V` may follow (Σ = U Uᵀ + diag) (default: no variances)
    #[arg(
        long,
        value_name = "FILE",
        requires = "data",
        help_heading = "Input (exactly one of --means, --data, --csv, --parquet)"
    )]
    pub var: Option<PathBuf>,
    /// CSV file with a header row
    #[arg(long, value_name = "FILE", help_heading = "Input (exactly one of --means, --data, --csv, --parquet)")]
    pub csv: Option<PathBuf>,
    /// CSV of per-feature variances, row for row with --csv: the feature columns, and/or low-rank factor
    /// blocks `u1:NAME,...,u2:NAME,...` (Σ = U Uᵀ + diag) (default: no variances)
    #[arg(
        long = "var-csv",
        value_name = "FILE",
        requires = "csv",
        help_heading = "Input (exactly one of --means, --data, --csv, --parquet)"
    )]
    pub var_csv: Option<PathBuf>,
    /// Parquet file: one row per example, numeric columns; every column but the label, weight and
    /// variance columns is a feature, in the file's order
    #[arg(long, value_name = "FILE", help_heading = "Input (exactly one of --means, --data, --csv, --parquet)")]
    pub parquet: Option<PathBuf>,
    /// Parquet columns of per-feature variances (the diagonal of Σ_i), one per feature column in the same
    /// order, comma-separated (default: no variances)
    #[arg(
        long = "var-cols",
        value_name = "A,B,...",
        value_delimiter = ',',
        requires = "parquet",
        help_heading = "Input (exactly one of --means, --data, --csv, --parquet)"
    )]
    pub var_cols: Option<Vec<String>>,
    /// Name of the CSV or Parquet label column (default: the last column)
    #[arg(
        long = "label-col",
        value_name = "NAME",
        requires = "table",
        help_heading = "Input (exactly one of --means, --data, --csv, --parquet)"
    )]
    pub label_col: Option<String>,
    /// Name of a CSV or Parquet column of per-example weights (relevance degrees, finite and ≥ 0; not a
    /// feature)
    #[arg(
        long = "weight-col",
        value_name = "NAME",
        requires = "table",
        help_heading = "Input (exactly one of --means, --data, --csv, --parquet)"
    )]
    pub weight_col: Option<String>,
    /// Number of features, when a sparse file's (--means, --data) highest index is lower than the
    /// data's (e.g. trailing features all zero in training); a CSV must have exactly N feature columns
    /// (default: the highest index read)
    #[arg(
        long = "n-features",
        value_name = "N",
        value_parser = clap::value_parser!(u64).range(1..),
        help_heading = "Input (exactly one of --means, --data, --csv, --parquet)"
    )]
    pub n_features: Option<u64>,
}

/// A loaded input.
#[derive(Debug)]
pub struct Input {
    pub dataset: Dataset<'static>,
    /// Whether `dataset.labels` are real labels (false only for svm-gsu means without --labels).
    pub labelled: bool,
    /// The file that holds the labels (for messages).
    pub label_source: String,
    /// The file that holds the features (for messages).
    pub feature_source: String,
}

/// Opens `path` for buffered reading; a failure reads `FILE: REASON` (e.g. `No such file or directory`).
pub fn open(path: &Path) -> Result<BufReader<File>> {
    crate::commit::settle(path)?;
    File::open(path).map(|f| BufReader::with_capacity(1 << 16, f)).map_err(|e| io_error(path, e))
}

/// `FILE: REASON` without the `(os error N)` suffix.
pub fn io_error(path: &Path, e: std::io::Error) -> anyhow::Error {
    let text = e.to_string();
    let reason = match text.find(" (os error") {
        Some(k) => &text[..k],
        None => &text,
    };
    anyhow!("{}: {reason}", path.display())
}

fn name(path: &Path) -> String {
    path.display().to_string()
}

impl InputArgs {
    /// Reads `--data` in LIBSVM's precomputed-kernel layout `label 0:i 1:K(i,1) ...` (kernel methods with
    /// `--kernel precomputed`, and prediction with such a model).
    pub fn load_precomputed(&self) -> Result<Input> {
        let Some(data) = self.data.as_ref().filter(|_| self.var.is_none()) else {
            bail!("a precomputed kernel is read from --data (LIBSVM layout `label 0:i 1:K(i,1) ...`) only");
        };
        let source = name(data);
        let dataset = usvm::io::read_libsvm_precomputed(open(data)?, &source)?;
        Ok(Input { dataset, labelled: true, label_source: source.clone(), feature_source: source })
    }

    /// Reads the input. `need_labels`: whether svm-gsu input must come with --labels (train, cv).
    /// The svm-gsu reader's `skipped` messages are printed as warnings on standard error.
    pub fn load(&self, need_labels: bool) -> Result<Input> {
        self.load_as(need_labels, false)
    }

    /// [`Self::load`]; `low_rank`: factor dense svm-gsu covariances line by line as they are read.
    pub fn load_as(&self, need_labels: bool, low_rank: bool) -> Result<Input> {
        let options = ReadOptions { n_features: self.n_features.map(|n| n as usize), low_rank };
        let input = self.read(need_labels, options)?;
        if let Some(n) = options.n_features.filter(|&n| n != input.dataset.n_features()) {
            bail!(
                "{}: --n-features {n}, but the table has {} feature columns",
                input.feature_source,
                input.dataset.n_features()
            );
        }
        Ok(input)
    }

    fn read(&self, need_labels: bool, options: ReadOptions) -> Result<Input> {
        let n_features = options.n_features;
        if let Some(means) = &self.means {
            let (labels_text, label_source, labelled) = match &self.labels {
                Some(path) => (None, name(path), true),
                None if need_labels => bail!("--means needs --labels"),
                None => (Some(unlabelled(means)?), name(means), false),
            };
            let means_reader = open(means)?;
            let mut cov_reader = self.cov.as_deref().map(open).transpose()?;
            let cov_name = self.cov.as_deref().map(name).unwrap_or_default();
            let cov = cov_reader.as_mut().map(|r| (r as &mut dyn BufRead, cov_name.as_str()));
            let read = match (&labels_text, &self.labels) {
                (Some(text), _) => {
                    read_svmgsu((means_reader, &name(means)), (text.as_bytes(), &label_source), cov, options)
                }
                (None, Some(path)) => {
                    read_svmgsu((means_reader, &name(means)), (open(path)?, &label_source), cov, options)
                }
                (None, None) => unreachable!(),
            }?;
            for message in &read.skipped {
                eprintln!("warning: {message}");
            }
            for message in &read.notes {
                eprintln!("note: {message} (--n-features)");
            }
            return Ok(Input { dataset: read.dataset, labelled, label_source, feature_source: name(means) });
        }
        if let Some(data) = &self.data {
            let source = name(data);
            let dataset = match &self.var {
                None => read_libsvm(open(data)?, &source, n_features)?,
                Some(var) => {
                    let read = read_libsvm_with_variances(open(data)?, &source, open(var)?, &name(var), n_features)?;
                    read.notes.iter().for_each(|message| eprintln!("note: {message} (--n-features)"));
                    read.dataset
                }
            };
            return Ok(Input { dataset, labelled: true, label_source: source.clone(), feature_source: source });
        }
        if let Some(csv) = &self.csv {
            let source = name(csv);
            let label_col = self.label_col.as_deref();
            let dataset = match (&self.var_csv, self.weight_col.as_deref()) {
                (None, None) => read_csv(open(csv)?, &source, label_col)?,
                (Some(var), None) => read_csv_with_variances(open(csv)?, &source, open(var)?, &name(var), label_col)?,
                (var, Some(weight_col)) => {
                    let var_name = var.as_deref().map(name).unwrap_or_default();
                    let var = match var {
                        Some(v) => Some((open(v)?, var_name.as_str())),
                        None => None,
                    };
                    read_csv_weighted(open(csv)?, &source, var, label_col, weight_col)?
                }
            };
            return Ok(Input { dataset, labelled: true, label_source: source.clone(), feature_source: source });
        }
        if let Some(path) = &self.parquet {
            let source = name(path);
            let columns = TableColumns {
                label: self.label_col.clone(),
                weight: self.weight_col.clone(),
                variances: self.var_cols.clone(),
            };
            let file = open(path)?.into_inner();
            let dataset = read_parquet(file, &source, &columns)?;
            return Ok(Input { dataset, labelled: true, label_source: source.clone(), feature_source: source });
        }
        bail!("no input: give one of --means, --data, --csv, --parquet")
    }
}

/// A labels text `<id> 0` for every id of a means file, line for line (so the reader's line numbers are
/// the means file's), for predicting without labels.
fn unlabelled(means: &Path) -> Result<String> {
    let mut out = String::new();
    let mut line = String::new();
    let mut reader = open(means)?;
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => return Err(io_error(means, e)),
        }
        if let Some(id) = line.trim_start_matches('\u{feff}').split_ascii_whitespace().next() {
            out.push_str(id);
            out.push_str(" 0");
        }
        out.push('\n');
    }
    Ok(out)
}

/// Reads per-example weights `c_i` (see [`read_per_example`]).
pub fn read_weights(path: &Path, n_samples: usize) -> Result<Vec<f64>> {
    read_per_example(path, n_samples, "weight")
}

/// Reads one finite, non-negative `what` (a weight, a bound) per line (blank lines skipped); there must be
/// exactly one per example. Errors name the file, the line and the field.
pub fn read_per_example(path: &Path, n_samples: usize, what: &str) -> Result<Vec<f64>> {
    let source = name(path);
    let mut values = Vec::new();
    let mut reader = open(path)?;
    let mut line = String::new();
    let mut number = 0;
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) => break,
            Ok(_) => number += 1,
            Err(e) => bail!("{source}:{}: field '': cannot read: {e}", number + 1),
        }
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        let v: f64 = text.parse().map_err(|_| anyhow!("{source}:{number}: field '{text}': not a number"))?;
        if !v.is_finite() {
            bail!("{source}:{number}: field '{text}': non-finite value");
        }
        if v < 0.0 {
            bail!("{source}:{number}: field '{text}': negative {what}");
        }
        if values.len() == n_samples {
            // Stop reading (and allocating) at the first value too many.
            bail!("{source}:{number}: more {what}s than the {n_samples} examples: give one {what} per example");
        }
        values.push(v);
    }
    if values.is_empty() {
        bail!("{source}:0: field '': empty input: no data lines");
    }
    if values.len() != n_samples {
        bail!("{source}: {} {what}s for {n_samples} examples: give one {what} per example", values.len());
    }
    Ok(values)
}

/// Checks what the library would reject with a message that does not name a file: a single class.
pub fn check_two_classes(input: &Input) -> Result<()> {
    let classes = input.dataset.classes();
    if classes.len() < 2 {
        bail!(
            "{}: a single class ({}) in the labels: at least two are needed",
            input.label_source,
            classes.first().copied().unwrap_or_default()
        );
    }
    Ok(())
}

/// The covariances of every example as their diagonals (`ℓ × n`), or `None` without covariances.
pub fn diagonal_of(cov: &Covariances, n_samples: usize, n_features: usize) -> Option<ndarray::Array2<f64>> {
    use ndarray::Array2;
    Some(match cov {
        Covariances::None => return None,
        Covariances::Isotropic(c) => Array2::from_shape_fn((n_samples, n_features), |(i, _)| c.variances[i]),
        Covariances::Diagonal(c) => c.variances.clone(),
        Covariances::SparseDiagonal(c) => c.variances.to_dense(),
        Covariances::LowRank(c) => Array2::from_shape_fn((n_samples, n_features), |(i, j)| {
            let f = &c.factors[i];
            let from_factor: f64 = if f.nrows() > j { f.row(j).iter().map(|v| v * v).sum() } else { 0.0 };
            from_factor + c.diagonal.as_ref().map_or(0.0, |d| d[[i, j]])
        }),
        Covariances::Full(c) => Array2::from_shape_fn((n_samples, n_features), |(i, j)| c.matrices[[i, j, j]]),
    })
}

/// `--cov-type`: the storage form the covariances are converted to before training.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CovType {
    /// As read from the input
    #[default]
    Auto,
    /// Drop the covariances (Σ = 0)
    None,
    /// (tr Σ / n) I
    Iso,
    /// Keep the diagonal
    Diag,
    /// Factored U Uᵀ + diag(v)
    Lowrank,
    /// Dense n × n matrices
    Full,
}

/// Converts the covariances of `data` to `kind`. Dense covariances become low-rank through their
/// eigen-decompositions, keeping the eigenvalues above `max(n, 1)·ε·λ_max`; the ranks kept are said on
/// standard error. Fails when the converted form does not fit in memory.
pub fn convert_covariances(data: &mut Dataset, kind: CovType) -> Result<()> {
    convert(data, kind)?;
    if let (CovType::Lowrank, Covariances::LowRank(c)) = (kind, &data.covariances) {
        let ranks = c.ranks();
        let (lo, hi) = (ranks.iter().min().copied().unwrap_or(0), ranks.iter().max().copied().unwrap_or(0));
        let range = if lo == hi { format!("{lo}") } else { format!("{lo} to {hi}") };
        eprintln!(
            "note: low-rank covariances of rank {range} per example ({} features; eigenvalues at most n·ε·λ_max \
             dropped as round-off)",
            data.n_features()
        );
    }
    Ok(())
}

fn convert(data: &mut Dataset, kind: CovType) -> Result<()> {
    let (l, n) = (data.n_samples(), data.n_features());
    let cov = &data.covariances;
    if matches!(cov, Covariances::None) {
        return Ok(());
    }
    data.covariances = match kind {
        CovType::Auto => return Ok(()),
        CovType::None => Covariances::None,
        CovType::Iso => cov.to_isotropic(l, n),
        CovType::Diag => match cov {
            Covariances::Diagonal(_) | Covariances::SparseDiagonal(_) => return Ok(()),
            _ => Covariances::diagonal(diagonal_of(cov, l, n).expect("covariances present")),
        },
        CovType::Lowrank => Covariances::LowRank(cov.to_low_rank(l, n)?),
        CovType::Full => {
            if matches!(cov, Covariances::Full(_)) {
                return Ok(());
            }
            Covariances::Full(cov.to_full(l, n)?)
        }
    };
    Ok(())
}
