//! Linear LSVM-GSU benchmark (issue: core). On a synthetic 50,000 × 100 problem with diagonal
//! covariances it measures: one full gradient pass (GB/s of data read, beside this machine's measured
//! read bandwidth), the exact solver to ‖∇J‖ ≤ 1e-6‖∇J(0)‖, the paper's SGD (T = 1000, k = 100), and
//! the SGD's objective when given the exact solver's time.
//!
//! Run: `cargo run --release -p usvm --example bench_linear` (or `bash bench/run.sh`).

use std::time::Instant;

use rayon::prelude::*;
use usvm::loss::ExpectedHinge;
use usvm::objective::{Objective, Problem};
use usvm::solver::pegasos::SgdSettings;
use usvm::{LinearSvmParams, Solver};

#[path = "../benches/synthetic.rs"]
mod synthetic;

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
    let data = synthetic::diagonal_problem(l, n);
    println!(
        "LSVM-GSU linear benchmark: ℓ = {l}, n = {n}, diagonal Σ, λ = {lambda}, {} threads",
        rayon::current_num_threads()
    );

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
    println!(
        "gradient pass                {:8.2} ms = {grad_bw:.2} GB/s ({:.2}x of memory bandwidth)",
        t_grad * 1e3,
        bw / grad_bw
    );

    let exact = LinearSvmParams { lambda, ..Default::default() };
    let (t_exact, fit) = best_of(3, || exact.fit(&data).unwrap());
    let r = &fit.reports[0];
    println!(
        "exact solver                 {:8.3} s  objective {:.10}  n_iter {}  ‖∇J‖/‖∇J(0)‖ = {:.2e}  converged {}",
        t_exact,
        r.objective,
        r.n_iter,
        r.gradient_norm / r.initial_gradient_norm.unwrap_or(1.0),
        r.converged()
    );
    let sgd = |iterations| LinearSvmParams {
        solver: Solver::Sgd(SgdSettings { iterations, batch: 100, seed: 1 }),
        ..exact.clone()
    };
    let run_sgd = |iterations: usize| {
        let (t, fit) = best_of(1, || sgd(iterations).fit(&data).unwrap());
        let o = fit.reports[0].objective;
        let label = format!("SGD T={iterations} k=100");
        println!("{label:<29}{t:8.3} s  objective {o:.10}  relative gap {:.2e}", (o - r.objective) / r.objective);
        t
    };
    let t_sgd = run_sgd(1000);
    // The SGD given the exact solver's time (iterations scaled by the time ratio).
    run_sgd(((t_exact / (t_sgd / 1000.0)) as usize).max(1000));
    println!("ratio exact / SGD(T=1000) time: {:.2}", t_exact / t_sgd);
}
