//! `usvm demo`: the WDBC protocol (DESIGN section 8, thesis Table 3.2) on the embedded breast-cancer data.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use clap::Args;
use serde::Serialize;
use usvm_experiments::wdbc::{MethodResult, WdbcProtocol};

use crate::output::{progress_bar, write_atomically};

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Number of random stratified 90/10 train/test splits (seeds 0..N)
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    splits: u64,
    /// Number of stratified cross-validation folds used to choose λ on each training split
    #[arg(long, value_name = "K", default_value_t = 10, value_parser = clap::value_parser!(u64).range(2..))]
    folds: u64,
    /// Also write the table as JSON to FILE (written atomically)
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

#[derive(Serialize)]
struct Report {
    dataset: &'static str,
    splits: u64,
    results: Vec<Row>,
}

#[derive(Serialize)]
struct Row {
    method: &'static str,
    test_accuracy_mean: f64,
    test_accuracy_std: f64,
    paper_accuracy: f64,
}

pub fn run(args: &DemoArgs) -> Result<()> {
    let protocol = WdbcProtocol { splits: args.splits, folds: args.folds as usize, ..Default::default() };
    let bar = progress_bar(protocol.n_fits() as u64, "fits");
    let start = Instant::now();
    let results = protocol.run(&|| bar.inc(1))?;
    bar.finish_and_clear();
    print_table(&protocol, &results, start.elapsed().as_secs_f64());
    if let Some(path) = &args.json {
        let rows = results
            .iter()
            .map(|r| Row {
                method: r.method,
                test_accuracy_mean: r.mean(),
                test_accuracy_std: r.std(),
                paper_accuracy: r.paper_accuracy,
            })
            .collect();
        let report = Report { dataset: "wdbc", splits: args.splits, results: rows };
        write_atomically(path, serde_json::to_string_pretty(&report)? + "\n")?;
    }
    Ok(())
}

fn print_table(protocol: &WdbcProtocol, results: &[MethodResult], seconds: f64) {
    println!(
        "WDBC (569 examples, 30 features): {} stratified 90/10 splits, λ by {}-fold CV over 2^-12..2^2",
        protocol.splits, protocol.folds
    );
    println!("{:<10}  {:>16}  {:>9}  {:>14}", "method", "test acc. (%)", "paper (%)", "median λ");
    for r in results {
        let acc = format!("{:.2} ± {:.2}", 100.0 * r.mean(), 100.0 * r.std());
        let mut lambdas = r.lambdas.clone();
        lambdas.sort_by(f64::total_cmp);
        println!(
            "{:<10}  {:>16}  {:>9.2}  {:>14.3e}",
            r.method,
            acc,
            100.0 * r.paper_accuracy,
            lambdas[lambdas.len() / 2]
        );
    }
    println!("(mean ± sample std over splits; {seconds:.1} s)");
}
