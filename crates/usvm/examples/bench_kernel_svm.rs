//! Kernel SVM (SMO) training time on a synthetic problem: ℓ examples in 10 dimensions, two classes
//! separated by a noisy sphere, RBF γ = 0.1, C = 1, tolerance 1e-3, 200 MB cache (the synthetic problem
//! of bench/kernel_svm.py, which also times LIBSVM and scikit-learn's SVC on it).
//!
//! `cargo run --release -p usvm --example bench_kernel_svm [-- ℓ] [--refit]` (default ℓ = 20000). With
//! `--refit` the model first predicts its training set (a large Gram block by faer's products) and then
//! is fitted again on the same threads: the second fit's time shows whether the products' CPU state
//! leaks into the solver (see `usvm::linalg`).
//!
//! `… --example bench_kernel_svm -- --csv FILE GAMMA C [double]`: the same fit on a headerless CSV whose last
//! column is the label (e.g. the 12,000 images of bench/kernel_images.py), for profiling.

use std::time::Instant;

use ndarray::Array2;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};
use rand_xoshiro::Xoshiro256PlusPlus;
use usvm::kernel::cache::Precision;
use usvm::svm::KernelSvmParams;
use usvm::{Dataset, Kernel};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a == "--csv") {
        return csv(&args[1..]);
    }
    let refit = args.iter().any(|a| a == "--refit");
    let l: usize = args.iter().find(|a| *a != "--refit").map_or(20_000, |s| s.parse().expect("ℓ must be an integer"));
    let d = 10;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(0);
    let x: Array2<f64> = Array2::from_shape_fn((l, d), |_| StandardNormal.sample(&mut rng));
    let labels: Vec<i64> = x
        .rows()
        .into_iter()
        .map(|r| {
            let noise: f64 = StandardNormal.sample(&mut rng);
            i64::from(r.dot(&r).sqrt() + 0.4 * noise > (d as f64).sqrt())
        })
        .collect();
    let data = Dataset::dense(x, labels);
    let params = KernelSvmParams {
        kernel: Kernel::Rbf { gamma: 0.1 },
        c: 1.0,
        tol: 1e-3,
        cache_mb: 200.0,
        ..Default::default()
    };
    if refit {
        let start = Instant::now();
        let fit = params.fit(&data).expect("valid problem");
        let fit_seconds = start.elapsed().as_secs_f64();
        let start = Instant::now();
        fit.model.predict(&data.features).expect("valid model");
        println!(
            "first fit {fit_seconds:.3} s, prediction on the training set {:.3} s; fitting again:",
            start.elapsed().as_secs_f64()
        );
    }
    let start = Instant::now();
    let fit = params.fit(&data).expect("valid problem");
    let seconds = start.elapsed().as_secs_f64();
    let r = &fit.reports[0];
    let correct =
        fit.model.predict(&data.features).unwrap().iter().zip(data.labels.iter()).filter(|(a, b)| a == b).count();
    println!(
        "kernel SVM ℓ = {l}, d = {d}, RBF γ = 0.1, C = 1, tol 1e-3, {} threads: {seconds:.3} s, {} iterations, \
         objective {:.6}, {} SV ({} at C), training accuracy {:.2}%",
        rayon::current_num_threads(),
        r.n_iter,
        r.objective,
        r.n_support,
        r.n_bounded,
        100.0 * correct as f64 / l as f64
    );
}

/// The fit on a headerless CSV (last column the label) with `γ`, `C` and the precision given.
fn csv(args: &[String]) {
    let text = std::fs::read_to_string(&args[0]).expect("a readable CSV");
    let rows: Vec<Vec<f64>> =
        text.lines().map(|l| l.split(',').map(|v| v.trim().parse().expect("a number")).collect()).collect();
    let d = rows[0].len() - 1;
    let x = Array2::from_shape_fn((rows.len(), d), |(i, j)| rows[i][j]);
    let labels: Vec<i64> = rows.iter().map(|r| r[d] as i64).collect();
    let precision = if args.get(3).is_some_and(|p| p == "double") { Precision::Double } else { Precision::Single };
    let params = KernelSvmParams {
        kernel: Kernel::Rbf { gamma: args[1].parse().expect("γ") },
        c: args[2].parse().expect("C"),
        tol: 1e-3,
        cache_mb: 200.0,
        precision,
        ..Default::default()
    };
    let start = Instant::now();
    let fit = params.fit(&Dataset::dense(x, labels)).expect("valid problem");
    let r = &fit.reports[0];
    println!(
        "{} × {d}, {precision:?}: {:.3} s, {} iterations, objective {:.10}, {} SV",
        rows.len(),
        start.elapsed().as_secs_f64(),
        r.n_iter,
        r.objective,
        r.n_support
    );
}
