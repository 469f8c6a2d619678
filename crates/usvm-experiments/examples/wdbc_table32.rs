//! Reproduces thesis Table 3.2 (WDBC, DESIGN section 8) with the per-split numbers: the protocol of
//! [`usvm_experiments::wdbc`] (the same run as `usvm demo`), printing each split's test accuracy and chosen λ
//! for LSVM, LSVM-iso, Power SVM and LSVM-GSU, then the means beside the paper's column.
//!
//!     cargo run --release -p usvm-experiments --example wdbc_table32 -- [--splits N] [--folds K] [--range-squared]
//!
//! Splits use seeds 0..N (default 10), λ by K-fold (default 10) cross-validation over 2^-12..2^2;
//! `--range-squared` squares the rescaled standard error ([`SeRule::RangeSquared`]) instead of the paper's rule.

use std::time::Instant;

use usvm_experiments::wdbc::{SeRule, WdbcProtocol};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut protocol = WdbcProtocol::default();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--splits" => protocol.splits = args.next().ok_or("--splits needs a value")?.parse()?,
            "--folds" => protocol.folds = args.next().ok_or("--folds needs a value")?.parse()?,
            "--range-squared" => protocol.se_rule = SeRule::RangeSquared,
            _ => {
                let usage = "wdbc_table32 [--splits N] [--folds K] [--range-squared]";
                return Err(format!("unknown argument {a}; usage: {usage}").into());
            }
        }
    }
    let start = Instant::now();
    let results = protocol.run(&|| {})?;
    let seconds = start.elapsed().as_secs_f64();

    println!(
        "WDBC, {} stratified 90/10 splits (seeds 0..{}), λ by {}-fold CV over 2^-12..2^2, standard-error rule {:?}",
        protocol.splits, protocol.splits, protocol.folds, protocol.se_rule
    );
    println!("test accuracy (%) per split [chosen log2 λ]:");
    print!("{:>5}", "split");
    for r in &results {
        print!("  {:>16}", r.method);
    }
    println!();
    for s in 0..protocol.splits as usize {
        print!("{s:>5}");
        for r in &results {
            print!("  {:>9.2} [{:>4}]", 100.0 * r.accuracies[s], r.lambdas[s].log2().round());
        }
        println!();
    }
    println!("\n{:<10}  {:>16}  {:>9}  {:>8}", "method", "ours (%)", "paper (%)", "diff");
    for r in &results {
        println!(
            "{:<10}  {:>16}  {:>9.2}  {:>+8.2}",
            r.method,
            format!("{:.2} ± {:.2}", 100.0 * r.mean(), 100.0 * r.std()),
            100.0 * r.paper_accuracy,
            100.0 * (r.mean() - r.paper_accuracy)
        );
    }
    let gsu = results.iter().find(|r| r.method == "LSVM-GSU").ok_or("no LSVM-GSU row")?;
    for r in results.iter().filter(|r| r.method != "LSVM-GSU") {
        let wins = (0..gsu.accuracies.len()).filter(|&s| gsu.accuracies[s] > r.accuracies[s]).count();
        let losses = (0..gsu.accuracies.len()).filter(|&s| gsu.accuracies[s] < r.accuracies[s]).count();
        println!(
            "LSVM-GSU vs {:<10}: better on {wins}, worse on {losses} of {} splits",
            r.method,
            gsu.accuracies.len()
        );
    }
    println!("(mean ± sample std over splits; {seconds:.1} s)");
    Ok(())
}
