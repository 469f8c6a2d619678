//! `usvm train`: fit a classifier and write the JSON model file (DESIGN 6).

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;
use usvm::calibration::fit_platt_per_output;
use usvm::model_selection::cross_val_decisions_with;
use usvm::report::Route;
use usvm::{Dataset, Fit, FitOptions, FitReport, MethodParams, Model, ModelFile, Termination};

use crate::commit::write_all_atomically;
use crate::input::{CovType, Input, InputArgs, check_two_classes, convert_covariances, read_per_example, read_weights};
use crate::method_args::MethodArgs;

/// The registry parameters and the fit options of the method flags.
pub fn resolve(args: &MethodArgs) -> Result<(MethodParams, FitOptions<'static>)> {
    Ok((args.params()?, FitOptions { seed: args.seed, ..FitOptions::default() }))
}

/// Loads the training input for `params`, applies --weights, --privileged, --delta-file and --cov-type, and
/// checks for two classes; `params` takes the per-example bounds of --delta-file.
pub fn load(args: &MethodArgs, input_args: &InputArgs, params: &mut MethodParams) -> Result<Input> {
    if args.weights.is_some() && input_args.weight_col.is_some() {
        bail!("give the weights by --weights or by --weight-col, not both");
    }
    let precomputed =
        matches!(params, MethodParams::Svm(s) if matches!(s.kernel, usvm::methods::SvmKernel::Precomputed(_)));
    let mut input = if precomputed {
        input_args.load_precomputed()?
    } else {
        input_args.load_as(true, args.cov_type == CovType::Lowrank)?
    };
    check_two_classes(&input)?;
    crate::privileged::attach(params, args.privileged.as_deref(), input_args, &mut input)?;
    let n = input.dataset.n_samples();
    if let Some(path) = &args.weights {
        input.dataset.weights = Some(read_weights(path, n)?);
    }
    if let Some(path) = &args.delta_file {
        let bounds = read_per_example(path, n, "bound")?;
        params
            .set("delta", &serde_json::json!(bounds))
            .map_err(|_| anyhow::anyhow!("--delta-file does not apply to --method {}", params.name()))?;
    }
    convert_covariances(&mut input.dataset, args.cov_type)?;
    Ok(input)
}

/// A core error about a parameter, told in terms of its flag (`gamma` → `--gamma`).
pub fn parameter_error(e: usvm::Error) -> anyhow::Error {
    match e {
        usvm::Error::InvalidParameter { name, value, reason } => anyhow::anyhow!("invalid {name} = {value}: {reason}"),
        e => e.into(),
    }
}

/// Fits `params` with `options`, or says which method failed.
pub fn fit(params: &MethodParams, data: &Dataset, options: &FitOptions) -> Result<Fit> {
    usvm::fit(params, data, options)
        .map_err(parameter_error)
        .with_context(|| format!("training {} failed", params.name()))
}

/// The fits of a cross-validation: [`fit`] as a model-valued function for the library's routines, counting
/// the fits whose solver stopped short (with `strict`, the first one is an error).
pub struct FoldFits<'a> {
    pub params: &'a MethodParams,
    pub options: &'a FitOptions<'a>,
    pub strict: bool,
    unconverged: AtomicUsize,
    total: AtomicUsize,
}

impl<'a> FoldFits<'a> {
    pub fn new(params: &'a MethodParams, options: &'a FitOptions<'a>, strict: bool) -> Self {
        FoldFits { params, options, strict, unconverged: AtomicUsize::new(0), total: AtomicUsize::new(0) }
    }

    /// Fits one training set, the examples `rows` of the whole input.
    pub fn fit(&self, data: &Dataset, rows: &[usize]) -> Result<Model> {
        let fit = fit(&self.params.for_examples(rows), data, self.options)?;
        self.total.fetch_add(1, Ordering::Relaxed);
        if let Some(r) = fit.reports.iter().find(|r| !r.converged()) {
            if self.strict {
                bail!(
                    "{} stopped short in a cross-validation fit: {} after {} iterations (--accept-unconverged counts \
                     such fits and goes on)",
                    self.params.name(),
                    r.termination,
                    r.n_iter
                );
            }
            self.unconverged.fetch_add(1, Ordering::Relaxed);
        }
        Ok(fit.model)
    }

    /// A note on standard error if any fit stopped short.
    pub fn warn(&self, what: &str) {
        let n = self.unconverged.load(Ordering::Relaxed);
        if n > 0 {
            let total = self.total.load(Ordering::Relaxed);
            eprintln!(
                "warning: {}: the solver did not converge in {n} of {total} {what} (--accept-unconverged)",
                self.params.name()
            );
        }
    }
}

#[derive(Args, Debug)]
pub struct TrainArgs {
    #[command(flatten)]
    pub method: MethodArgs,
    #[command(flatten)]
    pub input: InputArgs,
    /// Write the model (JSON) to FILE (required; written atomically)
    #[arg(long, value_name = "FILE")]
    pub model: PathBuf,
    /// Also write a training report (JSON) to FILE (default: none)
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Fit Platt scaling on 5-fold cross-validated decision values, one sigmoid per output (LIBSVM's -b 1;
    /// default: off)
    #[arg(long)]
    pub probability: bool,
    /// Write the model even when a solver stops without meeting its stopping rule (the iteration or round
    /// limit, a stall, a relaxation that does not certify), with a warning on stderr and the report's
    /// termination (default: exit 1 and no file written)
    #[arg(long = "accept-unconverged")]
    pub accept_unconverged: bool,
    /// Also fail (exit 1, no file written) on a degenerate fit: a classifier that predicts one class for
    /// every training example although both are present (default: a warning on stderr)
    #[arg(long)]
    pub strict: bool,
    /// Print nothing on success (default: one summary line on standard error)
    #[arg(long, short)]
    pub quiet: bool,
}

/// REPORT.json (DESIGN 6); `per_class` is an extension present for one-vs-rest models.
#[derive(Serialize)]
struct Report {
    method: String,
    objective: f64,
    n_iter: usize,
    converged: bool,
    termination: Termination,
    gradient_norm: f64,
    /// The largest relative duality gap `(J - D)/J` of the binary problems, when every one has a certificate.
    #[serde(skip_serializing_if = "Option::is_none")]
    duality_gap: Option<f64>,
    /// The plain hinge's solver routes, in order (of the binary problem; per class for one-vs-rest).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    routes: Vec<Route>,
    /// Some binary problem's classifier predicts one class on its whole training set.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    degenerate: bool,
    train_seconds: f64,
    n_samples: usize,
    n_features: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    per_class: Option<Vec<ClassReport>>,
}

#[derive(Serialize)]
struct ClassReport {
    class: i64,
    objective: f64,
    n_iter: usize,
    converged: bool,
    termination: Termination,
    gradient_norm: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    duality_gap: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    routes: Vec<Route>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    degenerate: bool,
}

/// A spinner with elapsed time on standard error, drawn only on a terminal (never when `quiet`) once the
/// run has lasted a second.
pub fn spinner(message: &str, quiet: bool) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
    bar.set_style(ProgressStyle::with_template("{spinner} {msg} ({elapsed})").expect("valid template"));
    bar.set_message(message.to_string());
    if !quiet && std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        let shown = bar.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(1));
            if !shown.is_finished() {
                shown.set_draw_target(ProgressDrawTarget::stderr());
                shown.enable_steady_tick(Duration::from_millis(100));
            }
        });
    }
    bar
}

pub fn run(args: &TrainArgs) -> Result<()> {
    let (params, options) = resolve(&args.method)?;
    let bar = spinner(&format!("{}: reading", params.name()), args.quiet);
    let done = train(args, params, options, &bar);
    bar.finish_and_clear();
    let summary = done?;
    if !args.quiet {
        eprintln!("{summary}");
    }
    Ok(())
}

/// Reads, fits and writes, telling `bar` the phase; returns the one-line summary.
fn train(args: &TrainArgs, mut params: MethodParams, options: FitOptions<'_>, bar: &ProgressBar) -> Result<String> {
    let input = load(&args.method, &args.input, &mut params)?;
    let data: &Dataset = &input.dataset;
    params.validate(data.n_samples()).map_err(|e| args.method.explain(e))?;
    let observer = BarObserver { bar: bar.clone(), method: params.name() };
    let (quiet, options) = (options, FitOptions { observer: Some(&observer), ..options });
    let start = Instant::now();
    let fitted = fit(&params, data, &options).and_then(|fitted| {
        let train_seconds = start.elapsed().as_secs_f64();
        if !args.probability {
            return Ok((fitted, None, train_seconds));
        }
        bar.set_message("fitting Platt scaling on 5-fold cross-validated decision values");
        let folds = FoldFits::new(&params, &quiet, !args.accept_unconverged);
        let values =
            cross_val_decisions_with(data, 5, options.seed, |d, rows| folds.fit(d, rows)).context("--probability")?;
        folds.warn("Platt cross-validation fits");
        let platt = fit_platt_per_output(&fitted.model, values.view(), &data.labels).context("--probability")?;
        Ok((fitted, Some(platt), train_seconds))
    });
    let (Fit { model, reports, .. }, platt, train_seconds) = fitted?;
    bar.set_message(format!("{}: writing", params.name()));
    if !args.accept_unconverged
        && let Some(stopped) = unconverged(&params, &reports).next()
    {
        bail!("{stopped}; no model written (--accept-unconverged writes it anyway, with this warning)");
    }
    bar.suspend(|| unconverged(&params, &reports).for_each(|w| eprintln!("warning: {w}")));
    if args.strict
        && let Some(note) = degenerate(&params, &reports).next()
    {
        bail!("{note}; no model written (--strict)");
    }
    bar.suspend(|| degenerate(&params, &reports).for_each(|w| eprintln!("warning: {w}")));

    let mut file = ModelFile::from_model(&model, params.name(), params.to_json());
    file.seed = Some(options.seed);
    match platt {
        Some(mut p) if p.len() == 1 => file.platt = p.pop(),
        p => file.platt_per_output = p,
    }
    let report =
        args.report.as_ref().map(|_| make_report(params.name(), model.classes(), &reports, train_seconds, data));
    let report_text = report.map(|r| serde_json::to_string_pretty(&r)).transpose()?;
    let model_text = file.to_json() + "\n";
    let mut files = vec![(args.model.as_path(), model_text.as_bytes())];
    let report_text = report_text.map(|t| t + "\n");
    if let (Some(path), Some(text)) = (&args.report, &report_text) {
        files.push((path.as_path(), text.as_bytes()));
    }
    write_all_atomically(&files)?;
    Ok(summary(params.name(), data, &reports, train_seconds, &args.model))
}

/// `trained gsu on 300 × 30 (2 classes): objective 0.1234, 12 iterations, converged, 0.05 s -> model.json`
/// (objective and iterations summed over one-vs-rest problems).
fn summary(method: &str, data: &Dataset, reports: &[FitReport], seconds: f64, model: &std::path::Path) -> String {
    let objective: f64 = reports.iter().map(|r| r.objective).sum();
    let n_iter: usize = reports.iter().map(|r| r.n_iter).sum();
    let state = match usvm::report::overall(reports) {
        usvm::Termination::Converged => "converged",
        usvm::Termination::MaxIterations => "not converged (iteration limit)",
        usvm::Termination::Stalled => "not converged (stalled)",
        usvm::Termination::NotCertified => "not certified",
    };
    format!(
        "trained {method} on {} × {} ({} classes): objective {objective:.6e}, {n_iter} iterations, {state}, {seconds:.2} s -> {}",
        data.n_samples(),
        data.n_features(),
        data.classes().len(),
        model.display()
    )
}

/// Shows the fit's phases and iterations in the spinner's message (nothing is formatted while the bar is
/// hidden: off a terminal, or in the run's first second).
struct BarObserver {
    bar: ProgressBar,
    method: &'static str,
}

impl usvm::progress::Observer for BarObserver {
    fn observe(&self, event: usvm::progress::Progress<'_>) {
        if self.bar.is_hidden() {
            return;
        }
        match event {
            usvm::progress::Progress::Phase(phase) => self.bar.set_message(format!("{}: {phase}", self.method)),
            usvm::progress::Progress::Iteration(i) => self.bar.set_message(iteration_message(self.method, &i)),
            usvm::progress::Progress::Done(_) => {}
        }
    }
}

/// `gsu: fitting [problem 2/3] · iteration 12 · objective 1.234568e-1 · ‖∇J‖ 3.2e-5` (the problem only for
/// one-vs-rest; numbers shown 1-based).
fn iteration_message(method: &str, i: &usvm::progress::Iteration) -> String {
    let (k, of) = i.problem;
    let problem = if of > 1 { format!(" [problem {}/{of}]", k + 1) } else { String::new() };
    format!(
        "{method}: fitting{problem} · iteration {} · objective {:.6e} · {} {:.1e}",
        i.iteration, i.objective, i.quantity, i.residual
    )
}

/// A note on standard error for every binary problem whose solver did not converge (with the solution
/// taken where the method compared two, as TSVC's cone form does, and the plain hinge's solver routes).
fn unconverged<'a>(params: &'a MethodParams, reports: &'a [FitReport]) -> impl Iterator<Item = String> + 'a {
    reports.iter().enumerate().filter(|(_, r)| !r.converged()).map(move |(k, r)| {
        let which = if reports.len() > 1 { format!(" (binary problem {k})") } else { String::new() };
        let taken = r.fallback.map(|f| format!("; {f}")).unwrap_or_default();
        let routes = if r.routes.is_empty() {
            String::new()
        } else {
            let names: Vec<String> = r.routes.iter().map(Route::to_string).collect();
            format!(" (routes: {})", names.join(" → "))
        };
        // Where a duality gap certifies the fit, how far it got; and at the iteration limit, what to change.
        let gap = r.duality_gap.map(|g| format!(", relative duality gap {g:.1e}")).unwrap_or_default();
        let hint = match (r.termination, r.duality_gap) {
            (Termination::MaxIterations, Some(_)) => "; raise --max-iter, or loosen --gap-tol",
            (Termination::MaxIterations, None) => "; raise --max-iter",
            _ => "",
        };
        format!(
            "{}{which}: the solver {} after {} iterations{routes}{taken}{gap}{hint}",
            params.name(),
            r.termination,
            r.n_iter
        )
    })
}

/// A note for every binary problem whose classifier predicts one class on its whole training set.
fn degenerate<'a>(params: &'a MethodParams, reports: &'a [FitReport]) -> impl Iterator<Item = String> + 'a {
    reports.iter().enumerate().filter(|(_, r)| r.degenerate).map(move |(k, _)| {
        let which = if reports.len() > 1 { format!(" (binary problem {k})") } else { String::new() };
        format!(
            "{}{which}: degenerate: the classifier predicts one class for every training example although both \
             are present (try another start, a larger C or a smaller η)",
            params.name()
        )
    })
}

fn make_report(method: &str, classes: &[i64], reports: &[FitReport], seconds: f64, data: &Dataset) -> Report {
    let per_class = (reports.len() > 1).then(|| {
        reports
            .iter()
            .zip(classes)
            .map(|(r, &class)| ClassReport {
                class,
                objective: r.objective,
                n_iter: r.n_iter,
                converged: r.converged(),
                termination: r.termination,
                gradient_norm: r.gradient_norm,
                duality_gap: r.duality_gap,
                routes: r.routes.clone(),
                degenerate: r.degenerate,
            })
            .collect()
    });
    Report {
        method: method.to_string(),
        objective: reports.iter().map(|r| r.objective).sum(),
        n_iter: reports.iter().map(|r| r.n_iter).sum(),
        converged: reports.iter().all(|r| r.converged()),
        termination: usvm::report::overall(reports),
        gradient_norm: reports.iter().map(|r| r.gradient_norm).fold(0.0, f64::max),
        duality_gap: reports.iter().map(|r| r.duality_gap).try_fold(0.0, |m, g| g.map(|g| f64::max(m, g))),
        routes: if reports.len() == 1 { reports[0].routes.clone() } else { Vec::new() },
        degenerate: reports.iter().any(|r| r.degenerate),
        train_seconds: seconds,
        n_samples: data.n_samples(),
        n_features: data.n_features(),
        per_class,
    }
}

#[cfg(test)]
mod tests {
    use usvm::progress::{Iteration, Quantity};

    use super::iteration_message;

    #[test]
    fn the_bar_states_the_problem_iteration_objective_and_residual() {
        let i = Iteration {
            problem: (0, 1),
            iteration: 12,
            objective: 0.123456789,
            residual: 3.2e-5,
            quantity: Quantity::GradientNorm,
        };
        assert_eq!(iteration_message("gsu", &i), "gsu: fitting · iteration 12 · objective 1.234568e-1 · ‖∇J‖ 3.2e-5");
        let i = Iteration { problem: (1, 3), quantity: Quantity::KktViolation, ..i };
        assert_eq!(
            iteration_message("svm", &i),
            "svm: fitting [problem 2/3] · iteration 12 · objective 1.234568e-1 · KKT violation 3.2e-5"
        );
    }
}
