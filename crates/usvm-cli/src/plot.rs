//! `usvm plot boundary|pr|angle`: figures as PNG or SVG (the format is the `--output` extension), drawn by
//! the `usvm-plot` crate and written atomically (a failed plot leaves no file).
//!
//! - `boundary`: a 2-feature input (any input format; covariances drawn as k-σ ellipses) and the lines of
//!   binary linear models (`--model`, repeatable), as in thesis Fig. 3.3;
//! - `pr`: precision-recall curves from `usvm predict` score files (`--scores`, repeatable), with the true
//!   labels from the input;
//! - `angle`: the angle-vs-N curves written by the `toy_sampling` example (thesis Fig. 3.4).

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow, bail};
use clap::{Args, Subcommand};
use usvm::Model;
use usvm::io::ParseError;
use usvm_experiments::toy_sampling::{PAPER_ANGLE_DEG, PAPER_POINTS};
use usvm_plot::{AnglePlot, AnglePoint, AngleSeries, BoundaryPlot, Format, Line, PrCurve, PrPlot};

use crate::commit::write_atomically;
use crate::input::{InputArgs, open};
use crate::predict::read_model;

#[derive(Args, Debug)]
pub struct PlotArgs {
    #[command(subcommand)]
    pub kind: PlotKind,
}

#[derive(Subcommand, Debug)]
pub enum PlotKind {
    /// 2-D decision boundaries of linear models over the training Gaussians (thesis Fig. 3.3)
    Boundary(BoundaryArgs),
    /// Precision-recall curves from `usvm predict` score files
    Pr(PrArgs),
    /// Angle to the LSVM-GSU hyperplane against the samples per Gaussian (thesis Fig. 3.4; log N axis)
    Angle(AngleArgs),
}

/// Output options shared by every plot.
#[derive(Args, Debug)]
pub struct Canvas {
    /// Write the figure to FILE, PNG or SVG by its extension (required; written atomically)
    #[arg(long, value_name = "FILE")]
    pub output: PathBuf,
    /// Image width in pixels (64..=16384)
    #[arg(long, value_name = "PX", default_value_t = 800)]
    pub width: u32,
    /// Image height in pixels (64..=16384)
    #[arg(long, value_name = "PX", default_value_t = 600)]
    pub height: u32,
    /// Title above the plot (default: none)
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,
}

#[derive(Args, Debug)]
pub struct BoundaryArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// A binary linear model with 2 features whose line w·x + b = 0 is drawn (repeatable; default: none)
    #[arg(long, value_name = "FILE")]
    pub model: Vec<PathBuf>,
    /// Legend name of each --model, in order (default: the model file's name without extension)
    #[arg(long, value_name = "NAME")]
    pub label: Vec<String>,
    /// Draw each Gaussian's ellipse at this Mahalanobis radius (0: none)
    #[arg(long, value_name = "K", default_value_t = 2.0)]
    pub sigmas: f64,
    #[command(flatten)]
    pub canvas: Canvas,
}

#[derive(Args, Debug)]
pub struct PrArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// A score file written by `usvm predict` for the same examples, in order (repeatable, at least one)
    #[arg(long, value_name = "FILE", required = true)]
    pub scores: Vec<PathBuf>,
    /// Legend name of each --scores file, in order (default: the file's name without extension)
    #[arg(long, value_name = "NAME")]
    pub label: Vec<String>,
    /// The positive class (default: the largest label, which binary models score positive)
    #[arg(long, value_name = "LABEL", allow_hyphen_values = true)]
    pub positive: Option<i64>,
    #[command(flatten)]
    pub canvas: Canvas,
}

#[derive(Args, Debug)]
pub struct AngleArgs {
    /// CSV with header `dim,samples,angle_mean[,angle_min,angle_max,...]` (the `toy_sampling` example's
    /// output); one curve per `dim`
    #[arg(long, value_name = "FILE")]
    pub angles: PathBuf,
    /// Also mark the thesis' reported points (1.7° at N = 10³ in 2-D and N = 5·10⁴ in 3-D)
    #[arg(long)]
    pub paper: bool,
    #[command(flatten)]
    pub canvas: Canvas,
}

pub fn run(args: &PlotArgs) -> Result<()> {
    match &args.kind {
        PlotKind::Boundary(a) => boundary(a),
        PlotKind::Pr(a) => pr(a),
        PlotKind::Angle(a) => angle(a),
    }
}

/// Checks the output's format before any work is done.
fn format(canvas: &Canvas) -> Result<Format> {
    Ok(Format::from_path(&canvas.output)?)
}

fn write(canvas: &Canvas, render: impl FnOnce(Format, u32, u32) -> usvm_plot::Result<Vec<u8>>) -> Result<()> {
    let bytes = render(format(canvas)?, canvas.width, canvas.height)?;
    write_atomically(&canvas.output, bytes)
}

/// The `i`-th name from `labels`, or the file's stem.
fn name_of(labels: &[String], i: usize, path: &Path) -> String {
    labels.get(i).cloned().unwrap_or_else(|| {
        path.file_stem().map_or_else(|| path.display().to_string(), |s| s.to_string_lossy().into_owned())
    })
}

fn check_labels(labels: &[String], files: usize, what: &str) -> Result<()> {
    if labels.len() > files {
        bail!("{} --label names for {files} {what} file(s)", labels.len());
    }
    Ok(())
}

fn boundary(args: &BoundaryArgs) -> Result<()> {
    format(&args.canvas)?;
    check_labels(&args.label, args.model.len(), "--model")?;
    let input = args.input.load(false)?;
    let gaussians =
        BoundaryPlot::gaussians_from_dataset(&input.dataset).map_err(|e| anyhow!("{}: {e}", input.feature_source))?;
    let mut lines = Vec::with_capacity(args.model.len());
    for (i, path) in args.model.iter().enumerate() {
        let (model, _) = read_model(path)?;
        let m = match &model {
            Model::Linear(m) if m.coef.n_outputs() == 1 && m.n_features() == 2 => m,
            _ => bail!(
                "{}: a boundary plot needs a binary linear model with 2 features (this one: {} output(s), {} feature(s){})",
                path.display(),
                model.n_outputs(),
                model.n_features(),
                if matches!(model, Model::Linear(_)) { "" } else { ", kernel" }
            ),
        };
        let coef = m.coef.dense();
        lines.push(Line { label: name_of(&args.label, i, path), w: [coef[[0, 0]], coef[[0, 1]]], b: m.intercept[0] });
    }
    let plot =
        BoundaryPlot { gaussians, lines, sigmas: args.sigmas, title: args.canvas.title.clone(), ..Default::default() };
    write(&args.canvas, |f, w, h| plot.render(f, w, h))
}

fn pr(args: &PrArgs) -> Result<()> {
    format(&args.canvas)?;
    check_labels(&args.label, args.scores.len(), "--scores")?;
    let input = args.input.load(false)?;
    if !input.labelled {
        bail!("plot pr needs labels: give --labels with --means");
    }
    let labels = &input.dataset.labels;
    let positive = match args.positive {
        Some(p) => p,
        None => *labels.iter().max().ok_or_else(|| anyhow!("{}: no examples", input.label_source))?,
    };
    if !labels.contains(&positive) {
        bail!("{}: no example has the positive class {positive}", input.label_source);
    }
    let y: Vec<bool> = labels.iter().map(|&l| l == positive).collect();
    let mut curves = Vec::with_capacity(args.scores.len());
    for (i, path) in args.scores.iter().enumerate() {
        let scores = read_scores(path, positive)?;
        if scores.len() != y.len() {
            bail!(
                "{}: {} score rows, but {} has {} examples",
                path.display(),
                scores.len(),
                input.label_source,
                y.len()
            );
        }
        curves.push(PrCurve { label: name_of(&args.label, i, path), y: y.clone(), scores });
    }
    let plot = PrPlot { curves, title: args.canvas.title.clone() };
    write(&args.canvas, |f, w, h| plot.render(f, w, h))
}

/// The decision values of a `usvm predict` score file: column `score` (binary models) or
/// `score_<positive>` (one-vs-rest).
pub fn read_scores(path: &Path, positive: i64) -> Result<Vec<f64>> {
    let source = path.display().to_string();
    let err = |line: usize, field: &str, message: String| {
        anyhow::Error::new(ParseError { source: source.clone(), line, field: field.to_string(), message })
    };
    let mut lines = open(path)?.lines().enumerate();
    let header = match lines.next() {
        Some((_, line)) => line.map_err(|e| crate::input::io_error(path, e))?,
        None => return Err(err(0, "", "empty file: expected a `usvm predict` header line".into())),
    };
    let names: Vec<&str> = header.split_whitespace().collect();
    let wanted = format!("score_{positive}");
    let column = names.iter().position(|&n| n == "score").or_else(|| names.iter().position(|&n| n == wanted));
    let Some(column) = column else {
        let first = names.first().copied().unwrap_or("");
        return Err(err(1, first, format!("not a `usvm predict` header: no column `score` or `{wanted}`")));
    };
    let mut scores = Vec::new();
    for (k, line) in lines {
        let line = line.map_err(|e| crate::input::io_error(path, e))?;
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() != names.len() {
            let last = fields.last().copied().unwrap_or("");
            return Err(err(
                k + 1,
                last,
                format!("expected {} fields as in the header, found {}", names.len(), fields.len()),
            ));
        }
        let token = fields[column];
        let value: f64 =
            token.parse().map_err(|_| err(k + 1, token, format!("column `{}`: not a number", names[column])))?;
        if !value.is_finite() {
            return Err(err(k + 1, token, format!("column `{}`: non-finite value", names[column])));
        }
        scores.push(value);
    }
    if scores.is_empty() {
        return Err(err(0, "", "no score rows after the header".into()));
    }
    Ok(scores)
}

fn angle(args: &AngleArgs) -> Result<()> {
    format(&args.canvas)?;
    let series = read_angles(&args.angles)?;
    let references = if args.paper {
        PAPER_POINTS
            .iter()
            .map(|&(d, n)| (format!("thesis {d}-D: {PAPER_ANGLE_DEG}°"), n as f64, PAPER_ANGLE_DEG))
            .collect()
    } else {
        Vec::new()
    };
    let plot = AnglePlot { series, references, title: args.canvas.title.clone(), ..Default::default() };
    write(&args.canvas, |f, w, h| plot.render(f, w, h))
}

/// One curve per `dim` from a CSV with columns `dim`, `samples`, `angle_mean` and optionally
/// `angle_min`, `angle_max` (in any order, other columns ignored).
fn read_angles(path: &Path) -> Result<Vec<AngleSeries>> {
    let source = path.display().to_string();
    let err = |line: usize, field: &str, message: String| {
        anyhow::Error::new(ParseError { source: source.clone(), line, field: field.to_string(), message })
    };
    let mut lines = open(path)?.lines().enumerate();
    let header = match lines.next() {
        Some((_, line)) => line.map_err(|e| crate::input::io_error(path, e))?,
        None => return Err(err(0, "", "empty file: expected a header line".into())),
    };
    let names: Vec<&str> = header.split(',').map(str::trim).collect();
    let col = |name: &str| names.iter().position(|&n| n == name);
    let need = |name: &str| col(name).ok_or_else(|| err(1, name, "missing column".into()));
    let (dim, samples, mean) = (need("dim")?, need("samples")?, need("angle_mean")?);
    let (low, high) = (col("angle_min"), col("angle_max"));
    let mut by_dim: BTreeMap<String, Vec<AnglePoint>> = BTreeMap::new();
    for (k, line) in lines {
        let line = line.map_err(|e| crate::input::io_error(path, e))?;
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() != names.len() {
            let last = fields.last().copied().unwrap_or("");
            return Err(err(
                k + 1,
                last,
                format!("expected {} fields as in the header, found {}", names.len(), fields.len()),
            ));
        }
        let num = |c: usize| -> Result<f64> {
            let token = fields[c];
            match token.parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(v),
                _ => Err(err(k + 1, token, format!("column `{}`: not a finite number", names[c]))),
            }
        };
        let n = num(samples)?;
        if n <= 0.0 {
            return Err(err(k + 1, fields[samples], "column `samples`: must be positive (log axis)".into()));
        }
        let point =
            AnglePoint { n, angle: num(mean)?, low: low.map(num).transpose()?, high: high.map(num).transpose()? };
        by_dim.entry(fields[dim].to_string()).or_default().push(point);
    }
    if by_dim.is_empty() {
        return Err(err(0, "", "no data rows after the header".into()));
    }
    Ok(by_dim.into_iter().map(|(d, points)| AngleSeries { label: format!("{d}-D"), points }).collect())
}
