//! `cargo bench -p usvm`: one gradient pass and one exact fit of LSVM-GSU on 20,000 × 100 (diagonal Σ).

use criterion::{Criterion, criterion_group, criterion_main};
use usvm::LinearSvmParams;
use usvm::loss::ExpectedHinge;
use usvm::objective::{Objective, Problem};

mod synthetic;

fn bench(c: &mut Criterion) {
    let d = synthetic::diagonal_problem(20_000, 100);
    let y: Vec<f64> = d.labels.iter().map(|&c| if c == 1 { 1.0 } else { -1.0 }).collect();
    let problem = Problem { features: &d.features, y: &y, weights: None, covariances: d.covariances.as_dyn() };
    let objective = Objective::new(problem, ExpectedHinge, 1e-4);
    let theta: Vec<f64> = (0..=100).map(|j| 0.01 * (j as f64).sin()).collect();
    let mut g = vec![0.0; 101];
    c.bench_function("gradient pass 20000x100 diag", |b| b.iter(|| objective.value_grad(&theta, &mut g).0));
    let mut group = c.benchmark_group("fit");
    group.sample_size(10);
    group.bench_function("exact LSVM-GSU 20000x100 diag", |b| {
        b.iter(|| LinearSvmParams { lambda: 1e-4, ..Default::default() }.fit(&d).unwrap())
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
