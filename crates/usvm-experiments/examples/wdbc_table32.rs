//! Reproduces thesis Table 3.2 (WDBC, DESIGN section 8) with the per-split numbers: the protocol of
//! [`usvm_experiments::wdbc`] (the same run as `usvm demo`), printing each split's test accuracy and chosen λ
//! for LSVM, LSVM-iso, Power SVM and LSVM-GSU, then the means beside the paper's column.
//!
//!     cargo run --release -p usvm-experiments --example wdbc_table32 -- [--splits N] [--folds K] [--range-squared]
//!
//! Splits use seeds 0..N (default 10), λ by K-fold (default 10) cross-validation over 2^-12..2^2;
//! `--range-squared` squares the rescaled standard error ([`SeRule::RangeSquared`]) instead of the paper's rule.

use std::time::Instant;

use usvm_experiments::wdbc::{Partitions, SeRule, WdbcProtocol, compare, load};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut protocol = WdbcProtocol::default();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--splits" => {
                let n = args.next().ok_or("--splits needs a value")?.parse()?;
                protocol.partitions = Partitions::RandomSplits { n, test_fraction: 0.1 };
            }
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

    let n = protocol.partitions.len();
    println!(
        "WDBC, {n} stratified 90/10 splits (seeds 0..{n}), λ by {}-fold CV over 2^-12..2^2, standard-error rule {:?}",
        protocol.folds, protocol.se_rule
    );
    println!("test accuracy (%) per split [chosen log2 λ]:");
    print!("{:>5}", "split");
    for r in &results {
        print!("  {:>16}", r.method);
    }
    println!();
    for s in 0..n {
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
    let (_, labels) = load();
    let design = protocol.partitions.resampling(&labels);
    println!("differences (points), {}, Holm over the table:", design.test_name());
    for c in compare(&results, design).unwrap_or_default() {
        println!(
            "{:>10} − {:<10}: {:+.2} ± {:.2}, better on {}, worse on {} of {n}; p = {:.3}, Holm p = {:.3}",
            c.method,
            c.baseline,
            100.0 * c.test.mean,
            100.0 * c.test.std,
            c.better,
            c.worse,
            c.test.p_value,
            c.holm_p_value
        );
    }
    println!("(mean ± sample std over splits; {seconds:.1} s)");
    Ok(())
}
