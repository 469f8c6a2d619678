//! Linear TSVC: alternating rounds (Algorithm 1) vs the SOCP (eq. 7 relaxed, Clarabel; when the relaxation
//! does not certify, it also runs the rounds and returns the lower objective) on ℓ × n data.
//!
//! `cargo run --release -p usvm --example bench_tsvc -- [l] [n]` (default 10000 × 50, C = 0.01, seed 42).

use std::time::Instant;

use ndarray::Array2;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal, Uniform};
use rand_xoshiro::Xoshiro256PlusPlus;
use usvm::svm::{Delta, TsvcForm, TsvcParams};
use usvm::{Dataset, Model};

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).map(|a| a.parse().expect("l n")).collect();
    let (l, n) = (args.first().copied().unwrap_or(10_000), args.get(1).copied().unwrap_or(50));
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(42);
    let labels: Vec<i64> = (0..l).map(|i| (i % 2) as i64).collect();
    let x = Array2::from_shape_fn((l, n), |(i, _)| {
        let s = if labels[i] == 1 { 1.0 } else { -1.0 };
        let z: f64 = StandardNormal.sample(&mut rng);
        s * 1.5 / (n as f64).sqrt() + z
    });
    let u = Uniform::new(0.1, 0.8).unwrap();
    let delta: Vec<f64> = (0..l).map(|_| 0.3 * u.sample(&mut rng)).collect();
    let data = Dataset::dense(x, labels);
    println!(
        "linear TSVC benchmark: ℓ = {l}, n = {n}, C = 0.01, δ_i ~ 0.3·U[0.1, 0.8], seed 42, {} threads",
        rayon::current_num_threads()
    );
    let params = TsvcParams { c: 0.01, delta: Delta::PerExample(delta), ..Default::default() };
    let mut coefs = Vec::new();
    for form in [TsvcForm::Alternating, TsvcForm::Socp] {
        let p = TsvcParams { form, ..params.clone() };
        let start = Instant::now();
        let fit = p.fit(&data).unwrap();
        let secs = start.elapsed().as_secs_f64();
        let r = &fit.reports[0];
        let Model::Linear(m) = &fit.model else { unreachable!() };
        coefs.push((m.coef.dense().row(0).to_vec(), m.intercept[0], r.report.objective));
        match form {
            TsvcForm::Alternating => println!(
                "alternating  {secs:>8.3} s  objective {:.10}  rounds {} (SVM solves; trace {:?})  Newton iterations {}  converged {}",
                r.report.objective,
                r.report.rounds,
                r.report.objective_trace.iter().map(|v| format!("{v:.6}")).collect::<Vec<_>>(),
                r.report.n_iter,
                r.report.converged()
            ),
            // Uncertified, the cone form also runs the alternating rounds and returns the lower objective;
            // γ and the duality gap describe the relaxation's solution, when that is the one returned.
            TsvcForm::Socp => println!(
                "socp         {secs:>8.3} s  objective {:.10}  lower bound {:.10}  certified {}  γ = {:?}  duality gap {:?}  {}",
                r.report.objective,
                r.lower_bound.unwrap(),
                r.report.converged(),
                r.report.norm_bound,
                r.duality_gap,
                r.report.fallback.map(|f| f.to_string()).unwrap_or_default()
            ),
        }
    }
    let (a, s) = (&coefs[0], &coefs[1]);
    let diff = a.0.iter().zip(&s.0).map(|(u, v)| (u - v).powi(2)).sum::<f64>().sqrt();
    let norm = s.0.iter().map(|v| v * v).sum::<f64>().sqrt();
    println!(
        "relative objective difference {:.2e}, ‖w_alt - w_socp‖/‖w_socp‖ = {:.2e}, |b_alt - b_socp| = {:.2e}",
        (a.2 - s.2) / s.2,
        diff / norm,
        (a.1 - s.1).abs()
    );
}
