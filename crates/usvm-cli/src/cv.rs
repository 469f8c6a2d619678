//! `usvm cv`: stratified k-fold cross-validation over a grid of hyper-parameters (DESIGN 6).

use std::path::PathBuf;

use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, Subcommand};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use serde_json::Value;
use usvm::MethodParams;

use crate::commit::write_atomically;
use crate::input::InputArgs;
use crate::method_args::MethodArgs;
use crate::progress::progress_bar;
use crate::train::{FoldFits, load, resolve};

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct CvArgs {
    #[command(subcommand)]
    pub command: Option<CvCommand>,
    #[command(flatten)]
    pub method: MethodArgs,
    #[command(flatten)]
    pub input: InputArgs,
    /// Number of stratified folds (at least 2)
    #[arg(long, value_name = "K", default_value_t = 5, value_parser = clap::value_parser!(u64).range(2..))]
    pub folds: u64,
    /// Grid axis NAME=v1,v2,... or NAME=2^a..2^b (powers of two, integer exponents, step 1); NAME is any field
    /// of the method by its name in the parameters (lambda, C, gamma, samples, radius_scale, ...; a flag name
    /// such as radius-scale also works; solver.tol where a name is ambiguous). Values are JSON numbers, or
    /// words for a choice (kernel=linear,rbf). Repeat for a cartesian product (default: no grid, the single
    /// point given by the other flags)
    #[arg(long, value_name = "NAME=VALUES")]
    pub grid: Vec<String>,
    /// Also write the results as JSON to FILE (written atomically; default: none)
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Go on when a fit's solver stops without meeting its stopping rule, counting such fits in a warning on
    /// stderr (default: exit 1 at the first such fit)
    #[arg(long = "accept-unconverged")]
    pub accept_unconverged: bool,
    /// The default since fits that stop short fail unless --accept-unconverged (kept for scripts)
    #[arg(long, hide = true, conflicts_with = "accept_unconverged")]
    pub strict: bool,
    /// Split the (grid point, fold) fits over N tasks of a batch scheduler and run one of them (with
    /// --task-index); the task writes its part to --json FILE, and `usvm cv merge` joins the N parts into
    /// the same table and report as one run
    #[arg(long, value_name = "N", requires_all = ["task_index", "json"], value_parser = clap::value_parser!(u64).range(1..))]
    pub tasks: Option<u64>,
    /// Which task to run, 0 ≤ I < N
    #[arg(long, value_name = "I", requires = "tasks")]
    pub task_index: Option<u64>,
}

#[derive(Subcommand, Debug)]
pub enum CvCommand {
    /// Join the parts written by `usvm cv --tasks N --task-index I --json PART` (all N of them) into the table
    /// and report of the whole cross-validation
    Merge(MergeArgs),
}

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The parts, in any order
    #[arg(required = true, value_name = "PART")]
    pub parts: Vec<PathBuf>,
    /// Also write the report as JSON to FILE (written atomically; default: none)
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

/// One grid axis: a field name and its values.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub name: String,
    pub values: Vec<Value>,
}

/// A value as JSON: an integer where it is one (counts), else a float; a word stays a string.
fn json_value(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9e15 { Value::from(x as i64) } else { Value::from(x) }
}

/// Parses `NAME=v1,v2,...` or `NAME=2^a..2^b`.
pub fn parse_axis(text: &str) -> Result<Axis> {
    let bad = |why: &str| anyhow!("--grid '{text}': {why}");
    let (name, spec) = text.split_once('=').ok_or_else(|| bad("expected NAME=VALUES"))?;
    let name = name.trim().replace('-', "_");
    let name = if name == "c" { "C".to_string() } else { name };
    let values = if let Some((lo, hi)) = spec.split_once("..") {
        let exponent = |s: &str| -> Result<i32> {
            let e = s.trim().strip_prefix("2^").ok_or_else(|| bad(&format!("'{s}': ranges are 2^a..2^b")))?;
            e.parse().map_err(|_| bad(&format!("'{s}': the exponent must be an integer")))
        };
        let (a, b) = (exponent(lo)?, exponent(hi)?);
        if a > b {
            return Err(bad("empty range: the first exponent is larger than the second"));
        }
        (a..=b).map(|e| json_value(2f64.powi(e))).collect()
    } else {
        spec.split(',')
            .map(|v| {
                let v = v.trim();
                match v.parse::<f64>() {
                    Ok(x) if !x.is_finite() => Err(bad(&format!("'{v}' is not finite"))),
                    Ok(_) => serde_json::from_str::<Value>(v).or_else(|_| Ok(json_value(v.parse::<f64>()?))),
                    Err(_) if v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') && !v.is_empty() => {
                        Ok(Value::String(v.to_string()))
                    }
                    Err(_) => Err(bad(&format!("'{v}' is neither a number nor a word"))),
                }
            })
            .collect::<Result<Vec<Value>>>()?
    };
    if values.is_empty() {
        return Err(bad("no values"));
    }
    Ok(Axis { name, values })
}

/// The cartesian product of the axes (the last axis varies fastest).
pub fn cartesian(axes: &[Axis]) -> Vec<Vec<Value>> {
    axes.iter().fold(vec![Vec::new()], |points, axis| {
        points
            .iter()
            .flat_map(|p| axis.values.iter().map(move |v| [p.as_slice(), std::slice::from_ref(v)].concat()))
            .collect()
    })
}

/// `base` with the grid point applied.
fn apply(base: &MethodParams, axes: &[Axis], point: &[Value]) -> Result<MethodParams> {
    let mut p = base.clone();
    for (axis, v) in axes.iter().zip(point) {
        p.set(&axis.name, v).map_err(|e| anyhow!("--grid {}={v}: {e}", axis.name))?;
    }
    Ok(p)
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
    if let Some(CvCommand::Merge(m)) = &args.command {
        return merge(m);
    }
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
    let (mut base, options) = resolve(&args.method)?;
    let input = load(&args.method, &args.input, &mut base)?;
    let data = &input.dataset;
    let folds = args.folds as usize;
    if folds > data.n_samples() {
        bail!("--folds {folds}: more folds than the {} examples of {}", data.n_samples(), input.label_source);
    }
    let points = cartesian(&axes);
    // Validate every grid point before the long run.
    let grid = points.iter().map(|p| apply(&base, &axes, p)).collect::<Result<Vec<_>>>()?;
    for (p, point) in grid.iter().zip(&points) {
        p.validate(data.n_samples()).map_err(|e| args.method.explain(e).context(format!("--grid point {point:?}")))?;
    }

    // This task's (grid point, fold) fits: unit `p·k + f` goes to task `(p·k + f) mod N`.
    let (tasks, index) = (args.tasks.unwrap_or(1) as usize, args.task_index.unwrap_or(0) as usize);
    if index >= tasks {
        bail!("--task-index {index}: must be below --tasks {tasks}");
    }
    let mine = |p: usize| -> Vec<usize> { (0..folds).filter(|f| (p * folds + f) % tasks == index).collect() };
    let bar = progress_bar((0..points.len()).map(|p| mine(p).len() as u64).sum(), "fits");
    let accuracies = grid
        .par_iter()
        .zip(&points)
        .enumerate()
        .map(|(p, (params, point))| {
            let which = mine(p);
            if which.is_empty() {
                return Ok(Vec::new());
            }
            let fits = FoldFits::new(params, &options, !args.accept_unconverged);
            let results =
                usvm::model_selection::cross_validate_folds_with(data, folds, options.seed, &which, |d, rows| {
                    fits.fit(d, rows)
                })?;
            let at: Vec<String> = axes.iter().zip(point).map(|(a, v)| format!("{}={v}", a.name)).collect();
            fits.warn(&format!(
                "cross-validation fits{}",
                if at.is_empty() { String::new() } else { format!(" at {}", at.join(" ")) }
            ));
            bar.inc(which.len() as u64);
            Ok(which.into_iter().zip(results).map(|(f, r)| (p, f, r.accuracy)).collect::<Vec<_>>())
        })
        .collect::<Result<Vec<_>>>();
    bar.finish_and_clear();
    let fits: Vec<(usize, usize, f64)> = accuracies?.into_iter().flatten().collect();
    let setup = Setup {
        method: base.to_json(),
        grid: axes.iter().map(|a| (a.name.clone(), a.values.clone())).collect(),
        folds,
        seed: options.seed,
        source: input.feature_source.to_string(),
        n_samples: data.n_samples(),
        n_features: data.n_features(),
        tasks,
    };
    match (&args.tasks, &args.json) {
        (Some(_), Some(path)) => {
            let n = fits.len();
            let part = Partial { format: PARTIAL.into(), setup, task_index: index, fits };
            write_atomically(path, serde_json::to_string(&part)? + "\n")?;
            eprintln!("usvm cv: task {index} of {tasks}: {n} fits written to {}", path.display());
            Ok(())
        }
        _ => report(&setup, &fits, args.json.as_deref()),
    }
}

/// The `format` of a task's part.
const PARTIAL: &str = "usvm-cv-part";

/// What every task of one cross-validation shares: a part of another setup cannot be merged with it.
#[derive(Serialize, Deserialize, PartialEq, Debug)]
struct Setup {
    method: Value,
    grid: Vec<(String, Vec<Value>)>,
    folds: usize,
    seed: u64,
    source: String,
    n_samples: usize,
    n_features: usize,
    tasks: usize,
}

/// One task's part: its `(grid point, fold, accuracy)` fits.
#[derive(Serialize, Deserialize)]
struct Partial {
    format: String,
    setup: Setup,
    task_index: usize,
    fits: Vec<(usize, usize, f64)>,
}

/// `usvm cv merge`: the parts of all the tasks of one setup, each once, into the whole report.
pub fn merge(args: &MergeArgs) -> Result<()> {
    let mut parts: Vec<Partial> = Vec::new();
    for path in &args.parts {
        crate::commit::settle(path)?;
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let part: Partial = usvm::json::parse_json(&text)
            .ok()
            .and_then(|v| serde_json::from_value(v).ok())
            .filter(|p: &Partial| p.format == PARTIAL)
            .ok_or_else(|| anyhow!("{}: not a part written by `usvm cv --tasks`", path.display()))?;
        if let Some(first) = parts.first()
            && first.setup != part.setup
        {
            bail!(
                "{}: a part of another cross-validation (data, method, grid, folds, seed or tasks differ from {})",
                path.display(),
                args.parts[0].display()
            );
        }
        check_part(&part).with_context(|| format!("{}: a damaged part (rerun its task)", path.display()))?;
        if let Some(k) = parts.iter().position(|p| p.task_index == part.task_index) {
            bail!("{}: task {} is also {}", path.display(), part.task_index, args.parts[k].display());
        }
        parts.push(part);
    }
    let setup = &parts[0].setup;
    // (At most ten listed: the count comes from the files.)
    let missing: Vec<usize> = (0..setup.tasks).filter(|t| !parts.iter().any(|p| p.task_index == *t)).take(10).collect();
    if !missing.is_empty() {
        bail!("missing the parts of task(s) {missing:?} of {}", setup.tasks);
    }
    let fits: Vec<(usize, usize, f64)> = parts.iter().flat_map(|p| p.fits.iter().copied()).collect();
    report(setup, &fits, args.json.as_deref())
}

/// Checks a part's numbers: its task is one of the setup's, it holds exactly that task's `(grid point, fold)`
/// fits (unit `p·k + f` of task `(p·k + f) mod N`), each once, and every accuracy is in [0, 1].
fn check_part(part: &Partial) -> Result<()> {
    let (s, index) = (&part.setup, part.task_index);
    if s.folds < 2 || s.folds > s.n_samples || s.tasks == 0 || index >= s.tasks {
        bail!("{} folds of {} examples, task {index} of {}", s.folds, s.n_samples, s.tasks);
    }
    let points = s.grid.iter().try_fold(1usize, |n, (_, values)| n.checked_mul(values.len()));
    let Some(units) = points.and_then(|p| p.checked_mul(s.folds)) else { bail!("a grid too large to hold") };
    let expected = if index < units { (units - index - 1) / s.tasks + 1 } else { 0 };
    if part.fits.len() != expected {
        bail!("task {index} of {} holds {} fits, expected {expected}", s.tasks, part.fits.len());
    }
    let mut seen: Vec<usize> = Vec::with_capacity(expected);
    for &(p, f, accuracy) in &part.fits {
        if !(0.0..=1.0).contains(&accuracy) {
            bail!("the accuracy of grid point {p}, fold {f} is {accuracy}, outside [0, 1]");
        }
        let unit = p.checked_mul(s.folds).and_then(|u| u.checked_add(f)).filter(|_| f < s.folds);
        match unit.filter(|&u| u < units && u % s.tasks == index) {
            Some(u) => seen.push(u),
            None => bail!("grid point {p}, fold {f} is not a fit of task {index} of {}", s.tasks),
        }
    }
    seen.sort_unstable();
    if let Some(w) = seen.windows(2).find(|w| w[0] == w[1]) {
        bail!("grid point {}, fold {} is given twice", w[0] / s.folds, w[0] % s.folds);
    }
    Ok(())
}

/// Prints the table of every grid point's mean accuracy (and writes the JSON report) from all its fits.
fn report(setup: &Setup, fits: &[(usize, usize, f64)], json: Option<&std::path::Path>) -> Result<()> {
    // The sizes come from files (`cv merge`): the table must hold exactly the fits given, before it is
    // allocated.
    let cells = setup.grid.iter().try_fold(setup.folds, |n, (_, values)| n.checked_mul(values.len()));
    if cells != Some(fits.len()) {
        let cells = cells.map_or("too many".to_string(), |c| c.to_string());
        bail!("{} fits given for {cells} (grid points × {} folds)", fits.len(), setup.folds);
    }
    let points = cartesian(
        &setup
            .grid
            .iter()
            .map(|(name, values)| Axis { name: name.clone(), values: values.clone() })
            .collect::<Vec<_>>(),
    );
    let mut accuracies = vec![vec![f64::NAN; setup.folds]; points.len()];
    for &(p, f, a) in fits {
        if p >= points.len() || f >= setup.folds || !accuracies[p][f].is_nan() {
            bail!("fit ({p}, {f}) is out of the grid or given twice");
        }
        accuracies[p][f] = a;
    }
    if accuracies.iter().flatten().any(|a| a.is_nan()) {
        bail!("some (grid point, fold) fits are missing");
    }
    let names: Vec<&str> = setup.grid.iter().map(|(n, _)| n.as_str()).collect();
    let results: Vec<PointResult> = points
        .iter()
        .zip(&accuracies)
        .map(|(point, acc)| {
            let (accuracy_mean, accuracy_std) = mean_std(acc);
            let params = names.iter().zip(point).map(|(n, v)| (n.to_string(), v.clone())).collect();
            PointResult { params, accuracy_mean, accuracy_std }
        })
        .collect();
    let best =
        (0..results.len()).fold(0, |b, k| if results[k].accuracy_mean > results[b].accuracy_mean { k } else { b });
    let method = setup.method.get("method").and_then(Value::as_str).unwrap_or("?");
    println!(
        "{}-fold stratified cross-validation (seed {}) of {method} on {} ({} examples, {} features)",
        setup.folds, setup.seed, setup.source, setup.n_samples, setup.n_features
    );
    let header: Vec<String> = names.iter().map(|n| format!("{n:>14}")).collect();
    println!("{}  {:>18}", header.join("  "), "accuracy (%)");
    for (k, (point, r)) in points.iter().zip(&results).enumerate() {
        let cells: Vec<String> = point.iter().map(|v| format!("{:>14}", v.to_string().trim_matches('"'))).collect();
        let acc = format!("{:.2} ± {:.2}", 100.0 * r.accuracy_mean, 100.0 * r.accuracy_std);
        let mark = if k == best { "  *" } else { "" };
        println!("{}  {acc:>18}{mark}", cells.join("  "));
    }
    println!("(mean ± sample std over folds; * best)");
    if let Some(path) = json {
        let report = Report { folds: setup.folds as u64, seed: setup.seed, best: results[best].clone(), results };
        write_atomically(path, serde_json::to_string_pretty(&report)? + "\n")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes() {
        use serde_json::json;
        assert_eq!(parse_axis("lambda=2^-2..2^1").unwrap().values, vec![json!(0.25), json!(0.5), json!(1), json!(2)]);
        assert_eq!(parse_axis("C=0.1, 1,10").unwrap().values, vec![json!(0.1), json!(1), json!(10)]);
        assert_eq!(parse_axis("radius-scale=0.5").unwrap().name, "radius_scale");
        assert_eq!(parse_axis("kernel=linear,rbf").unwrap().values, vec![json!("linear"), json!("rbf")]);
        assert!(parse_axis("lambda=2^1..2^0").is_err());
        assert!(parse_axis("lambda=1e-3..1").is_err());
        assert!(parse_axis("lambda=x y").is_err());
        let a = Axis { name: "a".into(), values: vec![json!(1), json!(2)] };
        let b = Axis { name: "b".into(), values: vec![json!(3), json!(4), json!(5)] };
        let p = cartesian(&[a, b]);
        assert_eq!(p.len(), 6);
        assert_eq!(p[0], vec![json!(1), json!(3)]);
        assert_eq!(p[5], vec![json!(2), json!(5)]);
        assert_eq!(cartesian(&[]), vec![Vec::<Value>::new()]);
    }
}
