//! Paper 004's Table 1 protocol (`usvm_experiments::lupi::table1`): SVM, RSVM-RHHQ, SVM+, L2-SVM+ and
//! R-SVM+ trained on clean examples, chosen on a noisy validation set and scored on a noisy test set at
//! SNR 4, 6, 8, 10, 15 dB and clean; trials run in parallel.
//!
//! ```text
//! cargo run --release -p usvm-experiments --example lupi_table1 -- [OPTIONS]
//!   --data synthetic|digits-plus|mnist-plus:DIR
//!                           the synthetic LUPI task (default), the 5s and 8s of the 8×8 digits with the
//!                           full image as privileged view (both ship), or MNIST+ in the layout of
//!                           `usvm_experiments::lupi::mnist_plus`
//!   --trials N              trials (default 10, as in paper 004)
//!   --train N               training examples per trial (default 80, as in paper 004)
//!   --noise raw|preprocessed  where the noise goes (default raw: before the L1 normalisation)
//!   --preprocess none|l1    per-example preprocessing (default: l1 for the pixels of MNIST+ and
//!                           digits-plus, none for the synthetic task)
//!   --grid paper|small      hyper-parameter grids (default paper: 1,065 models per trial)
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use rayon::prelude::*;
use usvm_experiments::lupi::LupiTask;
use usvm_experiments::lupi::PAPER_SNRS;
use usvm_experiments::lupi::digits_plus::DigitsPlus;
use usvm_experiments::lupi::mnist_plus::MnistPlus;
use usvm_experiments::lupi::table1::{
    Grid, METHODS, NoiseStage, Preprocess, Protocol, Split, TrialResult, format_table, run_trial,
};
use usvm_experiments::stats::Resampling;

enum Data {
    Synthetic,
    DigitsPlus,
    MnistPlus(PathBuf),
}

struct Args {
    data: Data,
    trials: u64,
    n_train: usize,
    noise: NoiseStage,
    preprocess: Option<Preprocess>,
    grid: Grid,
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        data: Data::Synthetic,
        trials: 10,
        n_train: 80,
        noise: NoiseStage::Raw,
        preprocess: None,
        grid: Grid::paper(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--help" || flag == "-h" {
            return Err(String::new());
        }
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        let bad = || format!("{flag}: unexpected value '{value}'");
        match flag.as_str() {
            "--data" => {
                a.data = match value.as_str() {
                    "synthetic" => Data::Synthetic,
                    "digits-plus" => Data::DigitsPlus,
                    _ => Data::MnistPlus(PathBuf::from(value.strip_prefix("mnist-plus:").ok_or_else(bad)?)),
                }
            }
            "--trials" => a.trials = value.parse().ok().filter(|&t| t > 0).ok_or_else(bad)?,
            "--train" => a.n_train = value.parse().ok().filter(|&n| n > 1).ok_or_else(bad)?,
            "--noise" => {
                a.noise = match value.as_str() {
                    "raw" => NoiseStage::Raw,
                    "preprocessed" => NoiseStage::Preprocessed,
                    _ => return Err(bad()),
                }
            }
            "--preprocess" => {
                a.preprocess = Some(match value.as_str() {
                    "none" => Preprocess::None,
                    "l1" => Preprocess::L1,
                    _ => return Err(bad()),
                })
            }
            "--grid" => {
                a.grid = match value.as_str() {
                    "paper" => Grid::paper(),
                    "small" => Grid::small(),
                    _ => return Err(bad()),
                }
            }
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    Ok(a)
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            let usage = include_str!("lupi_table1.rs").lines().skip_while(|l| !l.contains("```text")).skip(1);
            let usage: Vec<&str> =
                usage.take_while(|l| !l.contains("```")).map(|l| l.trim_start_matches("//! ")).collect();
            eprintln!(
                "{}usage:\n{}",
                if e.is_empty() { String::new() } else { format!("error: {e}\n") },
                usage.join("\n")
            );
            return ExitCode::from(if e.is_empty() { 0 } else { 2 });
        }
    };
    // How the trials' partitions relate, for the paired tests (`usvm_experiments::stats`).
    let (name, splits, design): (String, Vec<Split>, Resampling) = match &args.data {
        Data::MnistPlus(dir) => match MnistPlus::load(dir) {
            Ok(data) => {
                let name = format!(
                    "MNIST+ from {} ({} training images, {} validation, {} test)",
                    dir.display(),
                    data.train.n_samples(),
                    data.validation.n_samples(),
                    data.test.n_samples()
                );
                // Every trial tests on the same images and trains on a subset of the same pool: the
                // corrected test with the test set's size is conservative here.
                let design = Resampling::RandomSplits { n_train: args.n_train, n_test: data.test.n_samples() };
                (name, (0..args.trials).map(|t| data.split(args.n_train, t)).collect(), design)
            }
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        },
        Data::DigitsPlus => {
            let data = DigitsPlus::load();
            let name = format!(
                "digits-plus: the 5s and 8s of the 8x8 digits ({} images), x = 4x4 pooled raw pixels, x* = the 8x8 image; \
                 the rest split evenly into validation and test",
                data.labels.len()
            );
            let splits: Vec<Split> = (0..args.trials).map(|t| data.split(args.n_train, t)).collect();
            let design = Resampling::RandomSplits { n_train: args.n_train, n_test: splits[0].test.1.len() };
            (name, splits, design)
        }
        Data::Synthetic => {
            let task = LupiTask { n: args.n_train, ..LupiTask::default() };
            (
                format!("synthetic {task:?}, validation 1000, test 2000"),
                (0..args.trials).map(|t| task.split(t)).collect(),
                // Every trial draws new training, validation and test examples.
                Resampling::Independent,
            )
        }
    };
    let default_pre = if matches!(args.data, Data::Synthetic) { Preprocess::None } else { Preprocess::L1 };
    let protocol = Protocol {
        preprocess: args.preprocess.unwrap_or(default_pre),
        noise: args.noise,
        snrs: PAPER_SNRS.iter().map(|&s| Some(s)).chain([None]).collect(),
        grid: args.grid,
    };
    println!("data: {name}");
    println!(
        "protocol: {} trials of {} training examples, preprocess {:?}, noise added to the {} features",
        args.trials,
        args.n_train,
        protocol.preprocess,
        match protocol.noise {
            NoiseStage::Raw => "raw",
            NoiseStage::Preprocessed => "preprocessed",
        }
    );
    let start = std::time::Instant::now();
    let results: Result<Vec<TrialResult>, _> =
        splits.par_iter().enumerate().map(|(t, s)| run_trial(s, &protocol, 100 + t as u64)).collect();
    let results = match results {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    print!("{}", format_table(&protocol, &results, design));
    let total = |f: fn(&TrialResult) -> [usize; 5], k: usize| results.iter().map(|r| f(r)[k]).sum::<usize>();
    let fits: usize = (0..5).map(|k| total(|r| r.fits, k)).sum();
    println!(
        "test accuracy %, mean ± sd over trials; differences paired over trials, mean ± sd, Holm-adjusted p of the {} \
         over the {} differences; {fits} fits, {:.1} s",
        design.test_name(),
        2 * protocol.snrs.len(),
        start.elapsed().as_secs_f64()
    );
    for (k, method) in METHODS.iter().enumerate() {
        let (missed, of) = (total(|r| r.not_converged, k), total(|r| r.fits, k));
        if missed > 0 {
            println!("not converged: {missed} of {of} {method} fits stopped at their iteration limit");
            eprintln!("warning: {missed} of {of} {method} fits stopped at their iteration limit");
        }
        let degenerate = total(|r| r.degenerate, k);
        if degenerate > 0 {
            println!("degenerate: {degenerate} of {of} {method} fits predict one class on their training set");
        }
    }
    ExitCode::SUCCESS
}
