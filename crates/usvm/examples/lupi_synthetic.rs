//! The synthetic LUPI task (`usvm::experiments::lupi`) with the noisy-test protocol of paper 004: SVM,
//! SVM+ and R-SVM+ trained on clean examples, hyper-parameters chosen on a validation set, validation and
//! test examples corrupted by white Gaussian noise at SNR 4, 6, 8, 10, 15 dB (and clean).
//!
//! `cargo run --release -p usvm --example lupi_synthetic [TRIALS] [N_TRAIN]`

use usvm::experiments::lupi::{LupiTask, PAPER_SNRS, add_white_noise};
use usvm::svm::{LupiMethod, SvmPlusParams};
use usvm::{Dataset, Features, KernelModel};

fn accuracy(m: &KernelModel, x: &Features, labels: &[i64]) -> f64 {
    let p = m.predict(x).unwrap();
    p.iter().zip(labels).filter(|(a, b)| a == b).count() as f64 / labels.len() as f64
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let trials: u64 = args.get(1).map_or(10, |s| s.parse().expect("TRIALS"));
    let n_train: usize = args.get(2).map_or(80, |s| s.parse().expect("N_TRAIN"));
    let task = LupiTask { n: n_train, ..LupiTask::default() };
    println!("task: {task:?}, {trials} trials, validation 1000, test 2000");
    let grid_c = [0.01, 0.1, 1.0, 10.0, 100.0];
    let grid_rho = [0.01, 0.1, 1.0, 10.0, 100.0];
    let grid_robust = [(1e-3, 5.0), (1e-2, 5.0), (1e-1, 5.0), (1e-2, 50.0), (1e-1, 50.0)];
    let snrs: Vec<Option<f64>> = PAPER_SNRS.iter().map(|&s| Some(s)).chain([None]).collect();
    println!("{:>8} {:>14} {:>14} {:>14}", "SNR dB", "SVM", "SVM+", "R-SVM+");
    for snr in snrs {
        let mut acc = [Vec::new(), Vec::new(), Vec::new()];
        for t in 0..trials {
            let train = task.generate(1000 + t).dataset;
            let noisy = |d: Dataset, seed: u64| -> (Features, Vec<i64>) {
                let x = d.features.to_dense();
                let x = match snr {
                    Some(s) => add_white_noise(x.view(), s, seed),
                    None => x,
                };
                (Features::Dense(x), d.labels)
            };
            let val = noisy(LupiTask { n: 1000, ..task }.generate(2000 + t).dataset, 4000 + t);
            let test = noisy(LupiTask { n: 2000, ..task }.generate(3000 + t).dataset, 5000 + t);
            let mut best = [(f64::NEG_INFINITY, 0.0); 3];
            let mut consider = |k: usize, m: &KernelModel| {
                let v = accuracy(m, &val.0, &val.1);
                if v > best[k].0 {
                    best[k] = (v, accuracy(m, &test.0, &test.1));
                }
            };
            for c in grid_c {
                let base = SvmPlusParams { c, ..Default::default() };
                consider(0, &base.fit_svm(&train).unwrap().model);
                for rho in grid_rho {
                    consider(1, &SvmPlusParams { rho, ..base.clone() }.fit(&train).unwrap().model);
                    for (lambda, sigma_prime) in grid_robust {
                        let p =
                            SvmPlusParams { rho, method: LupiMethod::Robust { lambda, sigma_prime }, ..base.clone() };
                        consider(2, &p.fit(&train).unwrap().model);
                    }
                }
            }
            for k in 0..3 {
                acc[k].push(100.0 * best[k].1);
            }
        }
        let stat = |v: &Vec<f64>| {
            let m = v.iter().sum::<f64>() / v.len() as f64;
            let sd = (v.iter().map(|a| (a - m).powi(2)).sum::<f64>() / (v.len() as f64 - 1.0).max(1.0)).sqrt();
            format!("{m:6.2} ± {sd:4.2}")
        };
        let label = snr.map_or("clean".to_string(), |s| format!("{s}"));
        println!("{label:>8} {:>14} {:>14} {:>14}", stat(&acc[0]), stat(&acc[1]), stat(&acc[2]));
    }
}
