//! KSVM-iGSU exact route on the synthetic 5,000 × 10 problem of `bench_ksvm_igsu`, by phase: the pivoted
//! Cholesky factor (blocked, and column by column for reference) and the whole fit.
//!
//! Run: `cargo run --release -p usvm --example bench_ksvm_factor [ℓ] [--reference]` (`--reference` also times
//! the column-by-column factor, which is slow).

use std::time::Instant;

use ndarray::Array2;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal, Uniform};
use rand_xoshiro::Xoshiro256PlusPlus;
use usvm::kernel::feature_map::KernelFactor;
use usvm::svm::{FACTOR_TOL, KernelIgsuParams};
use usvm::{Covariances, Dataset, Kernel};

/// The data of `bench_ksvm_igsu`: `‖x_{0,1}‖² > 1.4` labels, isotropic variances U[0.01, 0.2).
fn synthetic(l: usize, n: usize, seed: u64) -> Dataset<'static> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut x = Array2::zeros((l, n));
    let mut labels = Vec::with_capacity(l);
    for i in 0..l {
        for j in 0..n {
            x[[i, j]] = StandardNormal.sample(&mut rng);
        }
        let r2 = x[[i, 0]] * x[[i, 0]] + x[[i, 1]] * x[[i, 1]];
        labels.push(i64::from(r2 > 1.4));
    }
    let u = Uniform::new(0.01, 0.2).unwrap();
    let var = (0..l).map(|_| u.sample(&mut rng)).collect();
    Dataset::dense(x, labels).with_covariances(Covariances::isotropic(var))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let l = args.iter().find_map(|a| a.parse().ok()).unwrap_or(5000);
    let reference = args.iter().any(|a| a == "--reference");
    let (kernel, lambda) = (Kernel::Rbf { gamma: 0.1 }, 1e-3);
    let data = synthetic(l, 10, 42);
    println!("synthetic ℓ = {l}, n = 10, {kernel:?}, λ = {lambda}, {} threads", rayon::current_num_threads());
    let t = Instant::now();
    let f = KernelFactor::new(kernel, &data.features, FACTOR_TOL, l).unwrap();
    println!(
        "  factor (blocked)          {:8.2} s  rank {}  residual {:.2e}",
        t.elapsed().as_secs_f64(),
        f.rank(),
        f.residual
    );
    if reference {
        let t = Instant::now();
        let g = KernelFactor::with_dense_switch(kernel, &data.features, FACTOR_TOL, l, false).unwrap();
        println!(
            "  factor (column by column) {:8.2} s  rank {}  residual {:.2e}",
            t.elapsed().as_secs_f64(),
            g.rank(),
            g.residual
        );
    }
    drop(f);
    let t = Instant::now();
    let fit = KernelIgsuParams { kernel, lambda, ..Default::default() }.fit(&data).unwrap();
    let r = &fit.reports[0];
    println!(
        "  whole exact fit           {:8.2} s  J* = {:.10}  n_iter {}  converged {}",
        t.elapsed().as_secs_f64(),
        r.objective,
        r.n_iter,
        r.converged()
    );
}
