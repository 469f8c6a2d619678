//! `usvm cv`: stratified k-fold cross-validation over a grid of hyper-parameters (DESIGN 6).

use std::path::PathBuf;

use anyhow::{Result, anyhow, bail};
use clap::Args;
use rayon::prelude::*;
use serde::Serialize;

use crate::fit::{fit_model, method_name};
use crate::input::InputArgs;
use crate::output::{progress_bar, write_atomically};
use crate::train::{HyperArgs, Method};

/// Grid names: train flag names whose values can be varied.
const GRID_NAMES: [&str; 8] =
    ["lambda", "C", "samples", "radius-scale", "subspace-variance", "iterations", "batch", "gamma"];

#[derive(Args, Debug)]
pub struct CvArgs {
    #[command(flatten)]
    pub hyper: HyperArgs,
    #[command(flatten)]
    pub input: InputArgs,
    /// Number of stratified folds (at least 2)
    #[arg(long, value_name = "K", default_value_t = 5, value_parser = clap::value_parser!(u64).range(2..))]
    pub folds: u64,
    /// Grid axis NAME=v1,v2,... or NAME=2^a..2^b (powers of two, integer exponents, step 1); NAME is one
    /// of lambda, C, samples, radius-scale, subspace-variance, iterations, batch, gamma. Repeat for a cartesian
    /// product (default: no grid, the single point given by the other flags)
    #[arg(long, value_name = "NAME=VALUES")]
    pub grid: Vec<String>,
    /// Also write the results as JSON to FILE (written atomically; default: none)
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

/// One grid axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub name: String,
    pub values: Vec<f64>,
}

/// Parses `NAME=v1,v2,...` or `NAME=2^a..2^b`.
pub fn parse_axis(text: &str) -> Result<Axis> {
    let bad = |why: &str| anyhow!("--grid '{text}': {why}");
    let (name, spec) = text.split_once('=').ok_or_else(|| bad("expected NAME=VALUES"))?;
    let name = name.trim();
    if !GRID_NAMES.contains(&name) {
        return Err(bad(&format!("unknown name '{name}' (one of {})", GRID_NAMES.join(", "))));
    }
    let values = if let Some((lo, hi)) = spec.split_once("..") {
        let exponent = |s: &str| -> Result<i32> {
            let e = s.trim().strip_prefix("2^").ok_or_else(|| bad(&format!("'{s}': ranges are 2^a..2^b")))?;
            e.parse().map_err(|_| bad(&format!("'{s}': the exponent must be an integer")))
        };
        let (a, b) = (exponent(lo)?, exponent(hi)?);
        if a > b {
            return Err(bad("empty range: the first exponent is larger than the second"));
        }
        (a..=b).map(|e| 2f64.powi(e)).collect()
    } else {
        spec.split(',')
            .map(|v| {
                let x: f64 = v.trim().parse().map_err(|_| bad(&format!("'{v}' is not a number")))?;
                if !x.is_finite() {
                    return Err(bad(&format!("'{v}' is not finite")));
                }
                Ok(x)
            })
            .collect::<Result<Vec<f64>>>()?
    };
    if values.is_empty() {
        return Err(bad("no values"));
    }
    Ok(Axis { name: name.to_string(), values })
}

/// The cartesian product of the axes (the last axis varies fastest).
pub fn cartesian(axes: &[Axis]) -> Vec<Vec<f64>> {
    axes.iter().fold(vec![Vec::new()], |points, axis| {
        points.iter().flat_map(|p| axis.values.iter().map(move |&v| [p.as_slice(), &[v]].concat())).collect()
    })
}

fn count(name: &str, v: f64) -> Result<usize> {
    if v.fract() != 0.0 || v < 0.0 {
        bail!("--grid {name}: {v} is not a non-negative integer");
    }
    Ok(v as usize)
}

/// `base` with the grid point applied.
fn apply(base: &HyperArgs, axes: &[Axis], point: &[f64]) -> Result<HyperArgs> {
    let mut h = base.clone();
    for (axis, &v) in axes.iter().zip(point) {
        match axis.name.as_str() {
            "lambda" => (h.lambda, h.c) = (Some(v), None),
            "C" => (h.c, h.lambda) = (Some(v), None),
            "samples" => h.samples = count("samples", v)?,
            "radius-scale" => h.radius_scale = v,
            "subspace-variance" => h.subspace_variance = Some(v),
            "iterations" => h.iterations = count("iterations", v)?,
            "batch" => h.batch = count("batch", v)?,
            "gamma" => h.kernel.gamma = Some(v),
            other => bail!("--grid: unknown name '{other}'"),
        }
    }
    Ok(h)
}

#[derive(Serialize, Clone)]
struct PointResult {
    params: serde_json::Map<String, serde_json::Value>,
    accuracy_mean: f64,
    accuracy_std: f64,
}

#[derive(Serialize)]
struct Report {
    folds: u64,
    seed: u64,
    results: Vec<PointResult>,
    best: PointResult,
}

/// Mean and sample standard deviation (0 for fewer than two values).
fn mean_std(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = if x.len() < 2 { 0.0 } else { x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0) };
    (mean, var.sqrt())
}

pub fn run(args: &CvArgs) -> Result<()> {
    let axes = args.grid.iter().map(|g| parse_axis(g)).collect::<Result<Vec<_>>>()?;
    for (k, a) in axes.iter().enumerate() {
        if axes[..k].iter().any(|b| b.name == a.name) {
            bail!("--grid {}: given twice", a.name);
        }
    }
    let names: Vec<&str> = axes.iter().map(|a| a.name.as_str()).collect();
    if names.contains(&"lambda") && names.contains(&"C") {
        bail!("--grid lambda and --grid C are mutually exclusive");
    }
    if names.contains(&"subspace-variance") && args.hyper.method != Method::Gsu {
        bail!("--grid subspace-variance applies to --method gsu only");
    }
    if names.contains(&"gamma") && !crate::kernel_args::uses_kernel(args.hyper.method) {
        bail!("--grid gamma applies to kernel methods only");
    }
    let input = args.hyper.load(&args.input)?;
    let data = &input.dataset;
    let folds = args.folds as usize;
    if folds > data.n_samples() {
        bail!("--folds {folds}: more folds than the {} examples of {}", data.n_samples(), input.label_source);
    }
    let points = cartesian(&axes);
    // Validate every grid point before the long run.
    let hypers = points.iter().map(|p| apply(&args.hyper, &axes, p)).collect::<Result<Vec<_>>>()?;
    hypers.iter().try_for_each(|h| crate::fit::check(h, data.n_samples()))?;

    let bar = progress_bar((points.len() * folds) as u64, "fits");
    let accuracies = hypers
        .par_iter()
        .map(|h| {
            let results = usvm::model_selection::cross_validate_with(data, folds, args.hyper.seed, fit_model(h))?;
            bar.inc(folds as u64);
            Ok(results.iter().map(|r| r.accuracy).collect::<Vec<f64>>())
        })
        .collect::<Result<Vec<_>>>();
    bar.finish_and_clear();
    let accuracies = accuracies?;

    let results: Vec<PointResult> = points
        .iter()
        .zip(&accuracies)
        .map(|(point, acc)| {
            let (accuracy_mean, accuracy_std) = mean_std(acc);
            let params = axes.iter().zip(point).map(|(a, &v)| (a.name.clone(), serde_json::json!(v))).collect();
            PointResult { params, accuracy_mean, accuracy_std }
        })
        .collect();
    let best =
        (0..results.len()).fold(0, |b, k| if results[k].accuracy_mean > results[b].accuracy_mean { k } else { b });

    println!(
        "{}-fold stratified cross-validation (seed {}) of {} on {} ({} examples, {} features)",
        folds,
        args.hyper.seed,
        method_name(args.hyper.method),
        input.feature_source,
        data.n_samples(),
        data.n_features()
    );
    let header: Vec<String> = names.iter().map(|n| format!("{n:>14}")).collect();
    println!("{}  {:>18}", header.join("  "), "accuracy (%)");
    for (k, (point, r)) in points.iter().zip(&results).enumerate() {
        let cells: Vec<String> = point.iter().map(|v| format!("{v:>14}")).collect();
        let acc = format!("{:.2} ± {:.2}", 100.0 * r.accuracy_mean, 100.0 * r.accuracy_std);
        let mark = if k == best { "  *" } else { "" };
        println!("{}  {acc:>18}{mark}", cells.join("  "));
    }
    println!("(mean ± sample std over folds; * best)");

    if let Some(path) = &args.json {
        let report = Report { folds: args.folds, seed: args.hyper.seed, best: results[best].clone(), results };
        write_atomically(path, serde_json::to_string_pretty(&report)? + "\n")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes() {
        assert_eq!(parse_axis("lambda=2^-2..2^1").unwrap().values, vec![0.25, 0.5, 1.0, 2.0]);
        assert_eq!(parse_axis("C=0.1, 1,10").unwrap().values, vec![0.1, 1.0, 10.0]);
        assert!(parse_axis("gamma=1").is_ok());
        assert!(parse_axis("degree=1").is_err());
        assert!(parse_axis("lambda=2^1..2^0").is_err());
        assert!(parse_axis("lambda=1e-3..1").is_err());
        assert!(parse_axis("lambda=x").is_err());
        let a = Axis { name: "a".into(), values: vec![1.0, 2.0] };
        let b = Axis { name: "b".into(), values: vec![3.0, 4.0, 5.0] };
        let p = cartesian(&[a, b]);
        assert_eq!(p.len(), 6);
        assert_eq!(p[0], vec![1.0, 3.0]);
        assert_eq!(p[5], vec![2.0, 5.0]);
        assert_eq!(cartesian(&[]), vec![Vec::<f64>::new()]);
    }
}
