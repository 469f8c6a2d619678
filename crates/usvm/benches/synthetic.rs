//! The synthetic benchmark problem shared by the criterion bench and `examples/bench_linear.rs`:
//! two classes with means ±0.15 per feature plus N(0, 1) noise, diagonal variances U[0.05, 1), seed 42.

use ndarray::Array2;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal, Uniform};
use rand_xoshiro::Xoshiro256PlusPlus;
use usvm::{Covariances, Dataset};

pub fn diagonal_problem(l: usize, n: usize) -> Dataset<'static> {
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
