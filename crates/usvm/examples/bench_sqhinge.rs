//! L-BFGS vs mini-batch SGD on the chapter-5 squared-hinge layer (both losses): synthetic 10-class data,
//! ℓ = 10,000 × n = 64, means and per-feature variances as from mean + variance pooling over 8×8 windows.
//! Run: `cargo run --release -p usvm --example bench_sqhinge`.

use std::time::Instant;

use ndarray::Array2;
use rand::SeedableRng;
use rand_distr::{Distribution, Normal, Uniform};
use rand_xoshiro::Xoshiro256PlusPlus;
use usvm::solver::lbfgs::LbfgsSettings;
use usvm::solver::pegasos::SgdSettings;
use usvm::svm::{SquaredHingeGsuLoss, SquaredHingeGsuParams, SquaredHingeGsuSolver};
use usvm::{Covariances, Dataset};

fn main() {
    let (l, n, k, window) = (10_000, 64, 10, 64);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(42);
    let normal = Normal::new(0.0, 1.0).unwrap();
    let centres = Array2::from_shape_fn((k, n), |_| 0.03 * normal.sample(&mut rng));
    let labels: Vec<i64> = (0..l).map(|i| (i % k) as i64).collect();
    let scale = Uniform::new(0.5, 2.0).unwrap();
    // Each feature is the mean of `window` noisy activations; its variance is their sample variance / window.
    let mut means = Array2::zeros((l, n));
    let mut vars = Array2::zeros((l, n));
    for i in 0..l {
        for j in 0..n {
            let s = scale.sample(&mut rng);
            let xs: Vec<f64> =
                (0..window).map(|_| centres[[labels[i] as usize, j]] + s * normal.sample(&mut rng)).collect();
            let m = xs.iter().sum::<f64>() / window as f64;
            let v = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (window - 1) as f64;
            means[[i, j]] = m;
            vars[[i, j]] = v / window as f64;
        }
    }
    let data = Dataset::dense(means, labels).with_covariances(Covariances::diagonal(vars));
    let lambda = 1e-4;
    println!("sqhinge-gsu: ℓ = {l}, n = {n}, K = {k} one-vs-rest, diagonal Σ (pooled), λ = {lambda}, 2 threads");
    println!("{:<9} {:<22} {:>9} {:>16} {:>9} {:>10}", "loss", "solver", "seconds", "Σ_j J_j", "gap", "accuracy");
    for loss in [SquaredHingeGsuLoss::Expected, SquaredHingeGsuLoss::Thesis] {
        let mut best = f64::NAN;
        let solvers = [
            ("L-BFGS tol 1e-6", SquaredHingeGsuSolver::Lbfgs(LbfgsSettings::default())),
            ("SGD T=1000 k=100", SquaredHingeGsuSolver::Sgd(SgdSettings { iterations: 1000, batch: 100, seed: 1 })),
            ("SGD T=10000 k=100", SquaredHingeGsuSolver::Sgd(SgdSettings { iterations: 10_000, batch: 100, seed: 1 })),
        ];
        for (name, solver) in solvers {
            let params = SquaredHingeGsuParams { loss, lambda, fit_intercept: true, solver };
            let start = Instant::now();
            let fit = params.fit(&data).unwrap();
            let seconds = start.elapsed().as_secs_f64();
            let objective: f64 = fit.reports.iter().map(|r| r.objective).sum();
            if best.is_nan() {
                best = objective;
            }
            let predicted = fit.model.predict(&data.features).unwrap();
            let accuracy = predicted.iter().zip(data.labels.iter()).filter(|(p, y)| p == y).count() as f64 / l as f64;
            let iters: usize = fit.reports.iter().map(|r| r.n_iter).sum();
            println!(
                "{:<9} {:<22} {:>9.3} {:>16.10} {:>9.2e} {:>10.4}   ({iters} iterations in total)",
                format!("{loss:?}"),
                name,
                seconds,
                objective,
                objective / best - 1.0,
                accuracy
            );
        }
    }
}
