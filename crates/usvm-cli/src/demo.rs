//! `usvm demo`: the WDBC protocol (DESIGN section 8, thesis Table 3.2) on the embedded breast-cancer data.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use clap::{Args, ValueEnum};
use serde::Serialize;
use usvm_experiments::stats::Resampling;
use usvm_experiments::wdbc::{Comparison, MethodResult, Partitions, SeRule, WdbcProtocol, compare, load};

use crate::commit::write_atomically;
use crate::progress::progress_bar;

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Number of random stratified 90/10 train/test splits (seeds 0..N)
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    splits: u64,
    /// Score R repetitions of stratified --outer-folds-fold cross-validation instead of random splits (the
    /// comparison then uses the corrected repeated k-fold test)
    #[arg(long, value_name = "R", conflicts_with = "splits", value_parser = clap::value_parser!(u64).range(1..))]
    cv_repeats: Option<u64>,
    /// Folds of each repetition of --cv-repeats
    #[arg(long, value_name = "K", default_value_t = 10, requires = "cv_repeats", value_parser = clap::value_parser!(u64).range(2..))]
    outer_folds: u64,
    /// Number of stratified cross-validation folds used to choose λ on each training split
    #[arg(long, value_name = "K", default_value_t = 10, value_parser = clap::value_parser!(u64).range(2..))]
    folds: u64,
    /// How a mean feature's standard error se becomes its variance, with s = 0.8 · range · se / max se
    /// (range and maximum over the training split), then divided by the feature's variance
    #[arg(long, value_enum, default_value = "paper")]
    se_rule: SeRuleArg,
    /// Also write the table, with every split's accuracy and chosen λ, as JSON to FILE (written atomically)
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
enum SeRuleArg {
    /// σ² = s, as the thesis states it ("the maximum variance is set to 80% of the range"; DESIGN 8)
    Paper,
    /// σ² = s²: s read as a standard deviation (unit-consistent, a different model)
    RangeSquared,
}

#[derive(Serialize)]
struct Report {
    dataset: &'static str,
    /// `"random_splits"` or `"repeated_k_fold"`.
    design: &'static str,
    /// Partitions: splits, or repetitions × outer folds.
    partitions: usize,
    /// Random splits: the training and test rows of each.
    #[serde(skip_serializing_if = "Option::is_none")]
    n_train: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    n_test: Option<usize>,
    /// Repeated k-fold: k.
    #[serde(skip_serializing_if = "Option::is_none")]
    outer_folds: Option<usize>,
    /// Folds of the inner cross-validation that chooses λ.
    folds: u64,
    se_rule: SeRuleArg,
    results: Vec<Row>,
    /// The test behind `comparisons`.
    test: &'static str,
    comparisons: Vec<ComparisonRow>,
}

#[derive(Serialize)]
struct ComparisonRow {
    method: &'static str,
    baseline: &'static str,
    mean_difference: f64,
    std_difference: f64,
    t: f64,
    df: f64,
    p_value: f64,
    holm_p_value: f64,
    better: usize,
    worse: usize,
}

#[derive(Serialize)]
struct Row {
    method: &'static str,
    test_accuracy_mean: f64,
    test_accuracy_std: f64,
    paper_accuracy: f64,
    /// Split `s` (seed `s`): its test accuracy and chosen λ.
    test_accuracies: Vec<f64>,
    lambdas: Vec<f64>,
}

pub fn run(args: &DemoArgs) -> Result<()> {
    let se_rule = match args.se_rule {
        SeRuleArg::Paper => SeRule::Paper,
        SeRuleArg::RangeSquared => SeRule::RangeSquared,
    };
    let partitions = match args.cv_repeats {
        Some(repeats) => Partitions::RepeatedKFold { repeats, folds: args.outer_folds as usize },
        None => Partitions::RandomSplits { n: args.splits, test_fraction: 0.1 },
    };
    let protocol = WdbcProtocol { partitions, folds: args.folds as usize, se_rule, ..Default::default() };
    let bar = progress_bar(protocol.n_fits() as u64, "fits");
    let start = Instant::now();
    let results = protocol.run(&|| bar.inc(1))?;
    bar.finish_and_clear();
    let design = partitions.resampling(&load().1);
    let comparisons = compare(&results, design).unwrap_or_default();
    print_table(&protocol, &results, &comparisons, design, start.elapsed().as_secs_f64());
    if let Some(path) = &args.json {
        let rows = results
            .iter()
            .map(|r| Row {
                method: r.method,
                test_accuracy_mean: r.mean(),
                test_accuracy_std: r.std(),
                paper_accuracy: r.paper_accuracy,
                test_accuracies: r.accuracies.clone(),
                lambdas: r.lambdas.clone(),
            })
            .collect();
        let comparisons = comparisons
            .iter()
            .map(|c| ComparisonRow {
                method: c.method,
                baseline: c.baseline,
                mean_difference: c.test.mean,
                std_difference: c.test.std,
                t: c.test.t,
                df: c.test.df,
                p_value: c.test.p_value,
                holm_p_value: c.holm_p_value,
                better: c.better,
                worse: c.worse,
            })
            .collect();
        let report = Report {
            dataset: "wdbc",
            design: match partitions {
                Partitions::RandomSplits { .. } => "random_splits",
                Partitions::RepeatedKFold { .. } => "repeated_k_fold",
            },
            partitions: partitions.len(),
            n_train: match design {
                Resampling::RandomSplits { n_train, .. } => Some(n_train),
                _ => None,
            },
            n_test: match design {
                Resampling::RandomSplits { n_test, .. } => Some(n_test),
                _ => None,
            },
            outer_folds: match partitions {
                Partitions::RepeatedKFold { folds, .. } => Some(folds),
                Partitions::RandomSplits { .. } => None,
            },
            folds: args.folds,
            se_rule: args.se_rule,
            results: rows,
            test: design.test_name(),
            comparisons,
        };
        write_atomically(path, serde_json::to_string_pretty(&report)? + "\n")?;
    }
    Ok(())
}

fn print_table(
    protocol: &WdbcProtocol,
    results: &[MethodResult],
    comparisons: &[Comparison],
    design: Resampling,
    seconds: f64,
) {
    let rule = match protocol.se_rule {
        SeRule::Paper => "σ² = 0.8·range·se/max se (paper)",
        SeRule::RangeSquared => "σ² = (0.8·range·se/max se)² (range-squared)",
    };
    let partitions = match protocol.partitions {
        Partitions::RandomSplits { n, .. } => format!("{n} stratified 90/10 splits"),
        Partitions::RepeatedKFold { repeats, folds } => format!("{repeats} × stratified {folds}-fold CV"),
    };
    println!("WDBC (569 examples, 30 features): {partitions}, λ by {}-fold CV over 2^-12..2^2, {rule}", protocol.folds);
    println!("{:<10}  {:>16}  {:>9}  {:>14}  {:>7}", "method", "test acc. (%)", "paper (%)", "median λ", "time");
    for r in results {
        let acc = format!("{:.2} ± {:.2}", 100.0 * r.mean(), 100.0 * r.std());
        let mut lambdas = r.lambdas.clone();
        lambdas.sort_by(f64::total_cmp);
        println!(
            "{:<10}  {:>16}  {:>9.2}  {:>14.3e}  {:>6.1}s",
            r.method,
            acc,
            100.0 * r.paper_accuracy,
            lambdas[lambdas.len() / 2],
            r.seconds
        );
    }
    println!("(mean ± sample std over partitions; {seconds:.1} s)");
    if comparisons.is_empty() {
        return;
    }
    println!(
        "differences per partition, points (mean ± std), {}; Holm-adjusted over {} comparisons:",
        design.test_name(),
        comparisons.len()
    );
    for c in comparisons {
        println!(
            "  {:<22} {:>14}  better/worse {:>3}/{:<3}  t = {:>6.2}  p = {:.3}  Holm p = {:.3}",
            format!("{} − {}", c.method, c.baseline),
            format!("{:+.2} ± {:.2}", 100.0 * c.test.mean, 100.0 * c.test.std),
            c.better,
            c.worse,
            c.test.t,
            c.test.p_value,
            c.holm_p_value
        );
    }
    let significant = comparisons.iter().filter(|c| c.holm_p_value <= 0.05).count();
    println!(
        "{significant} of {} differences significant at 5% after Holm's adjustment{}",
        comparisons.len(),
        if significant == 0 { ": none is established" } else { "" }
    );
}
