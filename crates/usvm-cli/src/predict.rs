//! `usvm predict`: score examples with a usvm JSON model or an svm-gsu linear model file (DESIGN 6).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow, bail};
use clap::Args;
use usvm::calibration::predict_proba_per_output;
use usvm::metrics::{Confusion, Metrics, mean_average_precision};
use usvm::model::Platt;
use usvm::{Model, ModelFile};

use crate::commit::write_all_atomically;
use crate::input::{InputArgs, io_error};

#[derive(Args, Debug)]
pub struct PredictArgs {
    /// Model: a usvm JSON model file, or an svm-gsu linear model file ("SVM-GSU Model_File") (required)
    #[arg(long, value_name = "FILE")]
    pub model: PathBuf,
    #[command(flatten)]
    pub input: InputArgs,
    /// Write the scores to FILE (required; written atomically): a header line, then per example `prediction` and `score` (binary),
    /// `score_<class>` per class (one-vs-rest) or `score_<a>_vs_<b>` per pair (one-vs-one, > 0 for a), then `probability`
    /// (binary) or `probability_<class>` per class with --probability, then `p_positive_uncertain` = Φ(f/√(wᵀΣw)) when
    /// the input has covariances (binary only)
    #[arg(long, value_name = "FILE")]
    pub output: PathBuf,
    /// Also write metrics (JSON) to FILE: {"n","accuracy","precision","recall","f1","average_precision"};
    /// binary: positive = classes[1], predicted positive when score > 0; one-vs-rest: accuracy, mean
    /// average precision, and precision/recall/F1 macro-averaged over the model's classes present in the
    /// labels or predictions (default: none; needs labels)
    #[arg(long, value_name = "FILE")]
    pub metrics: Option<PathBuf>,
    /// Add probabilities from the model's Platt scaling (train with --probability): a `probability` column
    /// (binary), or one per class (one-vs-one: the pairs' coupled, Wu, Lin & Weng; one-vs-rest: normalised)
    /// (default: off)
    #[arg(long)]
    pub probability: bool,
}

/// Reads a model file: JSON if it starts with '{', otherwise an svm-gsu linear model file; with the Platt
/// sigmoids of its outputs when it has them.
pub fn read_model(path: &Path) -> Result<(Model, Option<Vec<Platt>>)> {
    crate::commit::settle(path)?;
    let text = std::fs::read_to_string(path).map_err(|e| io_error(path, e))?;
    let source = path.display().to_string();
    if text.trim_start_matches('\u{feff}').trim_start().starts_with('{') {
        let file = ModelFile::from_json(&text).map_err(|e| anyhow!("{source}: {e}"))?;
        let model = file.to_model().map_err(|e| anyhow!("{source}: {e}"))?;
        let platt = file.platt.map(|p| vec![p]).or(file.platt_per_output);
        if let Some(p) = platt.as_ref().filter(|p| p.len() != model.n_outputs()) {
            bail!("{source}: {} Platt sigmoids for {} outputs", p.len(), model.n_outputs());
        }
        Ok((model, platt))
    } else {
        Ok((Model::Linear(usvm::io::read_svmgsu_model(&text, &source)?), None))
    }
}

pub fn run(args: &PredictArgs) -> Result<()> {
    let (model, platt) = read_model(&args.model)?;
    let binary = model.n_outputs() == 1;
    if args.probability && platt.is_none() {
        bail!("{}: --probability needs Platt scaling in the model (train it with --probability)", args.model.display());
    }
    let precomputed = matches!(&model, Model::Kernel(m) if m.kernel == usvm::Kernel::Precomputed);
    let input = if precomputed { args.input.load_precomputed()? } else { args.input.load(false)? };
    if args.metrics.is_some() && !input.labelled {
        bail!("--metrics needs labels: give --labels with --means");
    }
    let data = &input.dataset;
    if args.metrics.is_some() {
        let mut unknown: Vec<i64> = data.labels.iter().copied().filter(|l| !model.classes().contains(l)).collect();
        unknown.sort_unstable();
        unknown.dedup();
        if !unknown.is_empty() {
            bail!(
                "--metrics: {} has labels {unknown:?} that the model never saw (its classes are {:?})",
                input.label_source,
                model.classes()
            );
        }
    }
    if data.n_features() > model.n_features() {
        let (what, refuse) = match &model {
            Model::Linear(_) => ("count as zero coefficients (LIBLINEAR's rule)", false),
            Model::Kernel(m) if m.kernel != usvm::Kernel::Precomputed => {
                ("are zero in the support vectors (LIBSVM's rule)", false)
            }
            _ => ("", true),
        };
        if refuse {
            bail!(
                "{}: the data has {} features but the model {} has {} (feature-map and basis-expansion models \
                 need at most their training width)",
                input.feature_source,
                data.n_features(),
                args.model.display(),
                model.n_features()
            );
        }
        eprintln!(
            "note: {}: features {}..{} are beyond the model's {} and {what}",
            input.feature_source,
            model.n_features() + 1,
            data.n_features(),
            model.n_features()
        );
    }
    let decision = model.decision_function(&data.features)?;
    if let Some(((i, _), v)) = decision.indexed_iter().find(|(_, v)| !v.is_finite()) {
        bail!(
            "{}: example {}: its score is {v}: the model's coefficients times this example's features overflow; \
             rescale the features (and retrain), or check this example's values and the model {}",
            input.feature_source,
            i + 1,
            args.model.display()
        );
    }
    let predicted = model.predict(&data.features)?;

    // Φ(f/√(wᵀΣw)) needs the hyperplane's w: binary linear models only.
    let hyperplane = match &model {
        Model::Linear(m) if binary && !matches!(data.covariances, usvm::Covariances::None) => {
            // w over the data's features: zero past the model's, truncated past the data's.
            Some((m, m.coef.row_over(0, data.n_features())))
        }
        _ => None,
    };
    let uncertain = hyperplane.is_some();
    let mut out = String::with_capacity(32 * data.n_samples() * (1 + decision.ncols()));
    out.push_str("prediction");
    match &model {
        _ if binary => out.push_str(" score"),
        Model::Kernel(m) if m.is_one_vs_one() => {
            // One column per pair of classes: f > 0 is a vote for the first.
            let c = &m.classes;
            for (a, b) in usvm::model::class_pairs(c.len()) {
                write!(out, " score_{}_vs_{}", c[a], c[b]).expect("write to a String");
            }
        }
        _ => model.classes().iter().for_each(|c| write!(out, " score_{c}").expect("write to a String")),
    }
    let probabilities = match platt.as_ref().filter(|_| args.probability) {
        Some(p) => Some(predict_proba_per_output(&model, p, decision.view())?),
        None => None,
    };
    if args.probability && binary {
        out.push_str(" probability");
    } else if args.probability {
        model.classes().iter().for_each(|c| write!(out, " probability_{c}").expect("write to a String"));
    }
    if uncertain {
        out.push_str(" p_positive_uncertain");
    }
    out.push('\n');
    let cov = data.covariances.as_dyn();
    for (i, row) in decision.rows().into_iter().enumerate() {
        write!(out, "{}", predicted[i]).expect("write to a String");
        row.iter().for_each(|&f| write!(out, " {}", Short(f)).expect("write to a String"));
        if let Some(p) = &probabilities {
            let p = p.row(i);
            let shown = if binary { &p.as_slice().expect("a row")[1..] } else { p.as_slice().expect("a row") };
            shown.iter().for_each(|v| write!(out, " {v}").expect("write to a String"));
        }
        if let Some((m, w)) = &hyperplane {
            let variance = cov.quad_form(i, w);
            let p = m.positive_probability_under_uncertainty(row[0], variance);
            if !p.is_finite() {
                bail!(
                    "{}: example {}: P(positive) under its covariance is {p} (score {}, wᵀΣw = {variance}); \
                     rescale the features and covariances (and retrain)",
                    input.feature_source,
                    i + 1,
                    row[0]
                );
            }
            write!(out, " {p}").expect("write to a String");
        }
        out.push('\n');
    }

    let metrics = args.metrics.as_ref().map(|_| {
        if binary {
            let y: Vec<bool> = data.labels.iter().map(|&l| l == model.classes()[1]).collect();
            Metrics::from_scores(&y, &decision.column(0).to_vec())
        } else {
            let per_class = match &model {
                // One score per class from the pairs' values (votes plus bounded confidence, scikit-learn's).
                Model::Kernel(m) if m.is_one_vs_one() => usvm::model::ovr_scores(m.classes.len(), &decision),
                _ => decision.clone(),
            };
            one_vs_rest_metrics(model.classes(), &data.labels, &predicted, per_class.view())
        }
    });
    let metrics_text = metrics.map(|m| serde_json::to_string_pretty(&m)).transpose()?;
    let mut files = vec![(args.output.as_path(), out.as_bytes())];
    let metrics_text = metrics_text.map(|t| t + "\n");
    if let (Some(path), Some(text)) = (&args.metrics, &metrics_text) {
        files.push((path.as_path(), text.as_bytes()));
    }
    write_all_atomically(&files)?;
    Ok(())
}

/// Accuracy, mean average precision, and precision/recall/F1 macro-averaged over the classes that occur
/// in the labels or the predictions.
fn one_vs_rest_metrics(
    classes: &[i64],
    labels: &[i64],
    predicted: &[i64],
    scores: ndarray::ArrayView2<f64>,
) -> Metrics {
    let n = labels.len();
    let correct = labels.iter().zip(predicted).filter(|(y, p)| y == p).count();
    let (mut precision, mut recall, mut f1, mut count) = (0.0, 0.0, 0.0, 0usize);
    for &c in classes {
        let y: Vec<bool> = labels.iter().map(|&l| l == c).collect();
        let p: Vec<bool> = predicted.iter().map(|&l| l == c).collect();
        if !y.contains(&true) && !p.contains(&true) {
            continue;
        }
        let m = Confusion::new(&y, &p);
        precision += m.precision();
        recall += m.recall();
        f1 += m.f1();
        count += 1;
    }
    let mean = |s: f64| if count == 0 { 0.0 } else { s / count as f64 };
    Metrics {
        n,
        accuracy: if n == 0 { 0.0 } else { correct as f64 / n as f64 },
        precision: mean(precision),
        recall: mean(recall),
        f1: mean(f1),
        average_precision: mean_average_precision(labels, classes, scores),
    }
}

/// A number in its shortest round-trip form, in scientific notation outside `[1e-5, 1e16)` (a score of
/// 1e300 prints as `1e300`, not as 301 digits).
struct Short(f64);

impl std::fmt::Display for Short {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let a = self.0.abs();
        if a.is_finite() && a != 0.0 && !(1e-5..1e16).contains(&a) {
            write!(f, "{:e}", self.0)
        } else {
            write!(f, "{}", self.0)
        }
    }
}
