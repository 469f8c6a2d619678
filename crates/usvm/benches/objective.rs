//! `cargo bench -p usvm`: one gradient pass and one exact fit of LSVM-GSU on 20,000 × 100 (diagonal Σ).

use criterion::{Criterion, criterion_group, criterion_main};
use ndarray::Array2;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal, Uniform};
use rand_xoshiro::Xoshiro256PlusPlus;
use usvm::loss::ExpectedHinge;
use usvm::objective::{Objective, Problem};
use usvm::{Covariances, Dataset, LinearSvmParams};

fn data(l: usize, n: usize) -> Dataset {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(42);
    let labels: Vec<i64> = (0..l).map(|i| (i % 2) as i64).collect();
    let x = Array2::from_shape_fn((l, n), |(i, _)| {
        let z: f64 = StandardNormal.sample(&mut rng);
        z + if labels[i] == 1 { 0.15 } else { -0.15 }
    });
    let u = Uniform::new(0.05, 1.0).unwrap();
    let var = Array2::from_shape_fn((l, n), |_| u.sample(&mut rng));
    Dataset::dense(x, labels).with_covariances(Covariances::diagonal(var))
}

fn bench(c: &mut Criterion) {
    let d = data(20_000, 100);
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
