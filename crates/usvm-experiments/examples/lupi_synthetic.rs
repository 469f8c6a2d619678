//! The synthetic LUPI task (`usvm_experiments::lupi`) with the noisy-test protocol of paper 004: SVM,
//! SVM+ and R-SVM+ trained on clean examples, hyper-parameters chosen on a validation set, validation and
//! test examples corrupted by white Gaussian noise at SNR 4, 6, 8, 10, 15 dB (and clean).
//!
//! Each trial's models (5 C × (SVM, 5 ρ × (SVM+, 5 (λ, σ') of R-SVM+))) are fitted once; trials run in
//! parallel.
//!
//! `cargo run --release -p usvm-experiments --example lupi_synthetic [TRIALS] [N_TRAIN]` (default 10 trials, 80
//! training examples)

use rayon::prelude::*;
use usvm::svm::{LupiMethod, SvmPlusParams};
use usvm::{Dataset, Features, KernelModel};
use usvm_experiments::lupi::{LupiTask, PAPER_SNRS, add_white_noise};

fn accuracy(m: &KernelModel, x: &Features, labels: &[i64]) -> f64 {
    let p = m.predict(x).unwrap();
    p.iter().zip(labels).filter(|(a, b)| a == b).count() as f64 / labels.len() as f64
}

/// One trial: every model of the grid fitted once on the clean training set, then, per noise level, the
/// test accuracy (%) of each method's model with the best validation accuracy.
fn trial(task: &LupiTask, t: u64, snrs: &[Option<f64>]) -> Vec<[f64; 3]> {
    let grid_c = [0.01, 0.1, 1.0, 10.0, 100.0];
    let grid_rho = [0.01, 0.1, 1.0, 10.0, 100.0];
    let grid_robust = [(1e-3, 5.0), (1e-2, 5.0), (1e-1, 5.0), (1e-2, 50.0), (1e-1, 50.0)];
    let train = task.generate(1000 + t).dataset;
    let mut models: [Vec<KernelModel>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    for c in grid_c {
        let base = SvmPlusParams { c, ..Default::default() };
        models[0].push(base.fit_svm(&train).unwrap().model);
        for rho in grid_rho {
            models[1].push(SvmPlusParams { rho, ..base.clone() }.fit(&train).unwrap().model);
            for (lambda, sigma_prime) in grid_robust {
                let p = SvmPlusParams { rho, method: LupiMethod::Robust { lambda, sigma_prime }, ..base.clone() };
                models[2].push(p.fit(&train).unwrap().model);
            }
        }
    }
    let noisy = |d: Dataset, snr: Option<f64>, seed: u64| -> (Features, Vec<i64>) {
        let x = d.features.to_dense();
        let x = match snr {
            Some(s) => add_white_noise(x.view(), s, seed),
            None => x,
        };
        (Features::Dense(x), d.labels)
    };
    snrs.iter()
        .map(|&snr| {
            let val = noisy(LupiTask { n: 1000, ..*task }.generate(2000 + t).dataset, snr, 4000 + t);
            let test = noisy(LupiTask { n: 2000, ..*task }.generate(3000 + t).dataset, snr, 5000 + t);
            let mut out = [0.0; 3];
            for (k, ms) in models.iter().enumerate() {
                // The first model with the best validation accuracy.
                let mut best = (f64::NEG_INFINITY, 0.0);
                for m in ms {
                    let v = accuracy(m, &val.0, &val.1);
                    if v > best.0 {
                        best = (v, accuracy(m, &test.0, &test.1));
                    }
                }
                out[k] = 100.0 * best.1;
            }
            out
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let trials: u64 = args.get(1).map_or(10, |s| s.parse().expect("TRIALS"));
    let n_train: usize = args.get(2).map_or(80, |s| s.parse().expect("N_TRAIN"));
    let task = LupiTask { n: n_train, ..LupiTask::default() };
    println!("task: {task:?}, {trials} trials, validation 1000, test 2000");
    let snrs: Vec<Option<f64>> = PAPER_SNRS.iter().map(|&s| Some(s)).chain([None]).collect();
    let start = std::time::Instant::now();
    let per_trial: Vec<Vec<[f64; 3]>> = (0..trials).into_par_iter().map(|t| trial(&task, t, &snrs)).collect();
    println!(
        "{:>8} {:>14} {:>14} {:>14} {:>16} {:>16}",
        "SNR dB", "SVM", "SVM+", "R-SVM+", "SVM+ - SVM", "R-SVM+ - SVM+"
    );
    let mean_sd = |v: &[f64]| {
        let m = v.iter().sum::<f64>() / v.len() as f64;
        (m, (v.iter().map(|a| (a - m).powi(2)).sum::<f64>() / (v.len() as f64 - 1.0).max(1.0)).sqrt())
    };
    for (s, snr) in snrs.iter().enumerate() {
        let stat = |k: usize| {
            let (m, sd) = mean_sd(&per_trial.iter().map(|r| r[s][k]).collect::<Vec<_>>());
            format!("{m:6.2} ± {sd:4.2}")
        };
        // Paired over trials: mean difference ± its standard error.
        let diff = |k: usize, j: usize| {
            let (m, sd) = mean_sd(&per_trial.iter().map(|r| r[s][k] - r[s][j]).collect::<Vec<_>>());
            format!("{m:+6.2} ± {:4.2}", sd / (per_trial.len() as f64).sqrt())
        };
        let label = snr.map_or("clean".to_string(), |s| format!("{s}"));
        println!("{label:>8} {:>14} {:>14} {:>14} {:>16} {:>16}", stat(0), stat(1), stat(2), diff(1, 0), diff(2, 1));
    }
    println!(
        "test accuracy %, mean ± sd over trials; differences paired over trials, mean ± standard error; {:.1} s",
        start.elapsed().as_secs_f64()
    );
}
