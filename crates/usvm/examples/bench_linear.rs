//! Linear LSVM-GSU benchmark (issue: core). On a synthetic 50,000 × 100 problem with diagonal
//! covariances it measures: one full gradient pass (GB/s of data read, beside this machine's measured
//! read bandwidth), the exact solver to ‖∇J‖ ≤ 1e-6‖∇J(0)‖, the paper's SGD (T = 1000, k = 100), and
//! the SGD's objective when given the exact solver's time.
//!
//! Run: `cargo run --release -p usvm --example bench_linear` (or `bash bench/run.sh`).

use std::time::Instant;

use ndarray::Array2;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal, Uniform};
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;
use usvm::loss::ExpectedHinge;
use usvm::objective::{Objective, Problem};
use usvm::solver::pegasos::SgdSettings;
use usvm::{Covariances, Dataset, LinearSvmParams, Solver};

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..runs {
        let t = Instant::now();
        let v = f();
        best = best.min(t.elapsed().as_secs_f64());
        out = Some(v);
    }
    (best, out.unwrap())
}

/// Read bandwidth: a parallel sum over 512 MiB of f64, best of 5 (GB/s).
fn memory_bandwidth() -> f64 {
    let v = vec![1.0f64; 64 << 20];
    let (t, s) = best_of(5, || v.par_chunks(1 << 16).map(|c| c.iter().sum::<f64>()).sum::<f64>());
    assert_eq!(s, v.len() as f64);
    (v.len() * 8) as f64 / t / 1e9
}

fn main() {
    let (l, n, lambda) = (50_000, 100, 1e-4);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(42);
    let labels: Vec<i64> = (0..l).map(|i| (i % 2) as i64).collect();
    let x = Array2::from_shape_fn((l, n), |(i, _)| {
        let z: f64 = StandardNormal.sample(&mut rng);
        z + if labels[i] == 1 { 0.15 } else { -0.15 }
    });
    let u = Uniform::new(0.05, 1.0).unwrap();
    let var = Array2::from_shape_fn((l, n), |_| u.sample(&mut rng));
    let data = Dataset::dense(x, labels).with_covariances(Covariances::diagonal(var));
    println!("LSVM-GSU linear benchmark: ℓ = {l}, n = {n}, diagonal Σ, λ = {lambda}, {} threads", rayon::current_num_threads());

    let bw = memory_bandwidth();
    let y: Vec<f64> = data.labels.iter().map(|&c| if c == 1 { 1.0 } else { -1.0 }).collect();
    let problem = Problem { features: &data.features, y: &y, weights: None, covariances: data.covariances.as_dyn() };
    let objective = Objective::new(problem, ExpectedHinge, lambda);
    let theta: Vec<f64> = (0..=n).map(|j| 0.01 * (j as f64).sin()).collect();
    let mut g = vec![0.0; n + 1];
    let (t_grad, _) = best_of(20, || objective.value_grad(&theta, &mut g).0);
    let bytes = (2 * l * n * 8) as f64; // means + variances
    let grad_bw = bytes / t_grad / 1e9;
    println!("memory read bandwidth        {bw:8.2} GB/s");
    println!("gradient pass                {:8.2} ms = {grad_bw:.2} GB/s ({:.2}x of memory bandwidth)", t_grad * 1e3, bw / grad_bw);

    let exact = LinearSvmParams { lambda, ..Default::default() };
    let (t_exact, fit) = best_of(3, || exact.fit(&data).unwrap());
    let r = &fit.reports[0];
    println!(
        "exact solver                 {:8.3} s  objective {:.10}  n_iter {}  ‖∇J‖/‖∇J(0)‖ = {:.2e}  converged {}",
        t_exact,
        r.objective,
        r.n_iter,
        r.gradient_norm / r.initial_gradient_norm,
        r.converged
    );
    let sgd = |iterations| LinearSvmParams { solver: Solver::Sgd(SgdSettings { iterations, batch: 100, seed: 1 }), ..exact.clone() };
    let (t_sgd, fit_sgd) = best_of(3, || sgd(1000).fit(&data).unwrap());
    let o_sgd = fit_sgd.reports[0].objective;
    println!(
        "SGD T=1000 k=100             {:8.3} s  objective {:.10}  relative gap {:.2e}",
        t_sgd,
        o_sgd,
        (o_sgd - r.objective) / r.objective
    );
    // SGD given the exact solver's time (its iterations scaled by the time ratio).
    let t_per_iter = t_sgd / 1000.0;
    let budget = ((t_exact / t_per_iter) as usize).max(1000);
    let (t_same, fit_same) = best_of(1, || sgd(budget).fit(&data).unwrap());
    let o_same = fit_same.reports[0].objective;
    println!(
        "SGD T={budget:<7} k=100          {:8.3} s  objective {:.10}  relative gap {:.2e}",
        t_same,
        o_same,
        (o_same - r.objective) / r.objective
    );
    println!("ratio exact / SGD(T=1000) time: {:.2}", t_exact / t_sgd);
}
