//! The plain hinge SVM (Σ = 0) as fitted now — dual coordinate descent, or for `n ≪ ℓ` and large `C` the
//! certified primal route (Newton on the smoothed hinge, then dual CD from its multipliers) — against the
//! exact route before either existed (issue #17).
//!
//! Problems: a dense synthetic 50,000 × 100 (means ±0.15 per feature plus N(0, 1) noise) and a sparse
//! synthetic 5,000 × 2,000,000 with 30 non-zeros per row (unit rows of uniform values on random columns,
//! labels from a random hyperplane with 10% flipped), λ ∈ {1e-2, 1e-4, 1e-5}. For each point it prints the
//! time of `LinearSvmParams { method: Hinge }.fit` (the route it picks, with its exact finishes), its
//! objective and relative duality gap, and the time and objective of the previous route: Newton with a
//! smoothing continuation to a floor of 1e-3, the active-set polish, and the continuation to the end when
//! the polish does not settle (`--no-newton` skips it; on the sparse problem it runs only with
//! `--newton-sparse`: its gradients allocate an n-vector per chunk of rows).
//!
//! Run: `cargo run --release -p usvm --example bench_dual_cd [-- --dense-only | --sparse-only] [--no-newton]
//! [--newton-sparse] [--lambdas 1e-2,1e-4]`.

use std::time::Instant;

use ndarray::Array2;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, StandardNormal};
use rand_xoshiro::Xoshiro256PlusPlus;
use usvm::covariance::NoCovariance;
use usvm::loss::ExpectedHinge;
use usvm::objective::{Objective, Problem};
use usvm::solver::exact::{self, ExactSettings};
use usvm::solver::hinge_polish;
use usvm::{CsrMatrix, Dataset, Features, LinearMethod, LinearSvmParams};

fn dense_problem(l: usize, n: usize) -> Dataset<'static> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(42);
    let labels: Vec<i64> = (0..l).map(|i| (i % 2) as i64).collect();
    let x = Array2::from_shape_fn((l, n), |(i, _)| {
        let z: f64 = StandardNormal.sample(&mut rng);
        z + if labels[i] == 1 { 0.15 } else { -0.15 }
    });
    Dataset::dense(x, labels)
}

fn sparse_problem(l: usize, n: usize, nnz: usize) -> Dataset<'static> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    let truth: Vec<f64> = (0..n).map(|_| StandardNormal.sample(&mut rng)).collect();
    let mut rows = Vec::with_capacity(l);
    let mut labels = Vec::with_capacity(l);
    for _ in 0..l {
        let mut cols: Vec<usize> = (0..nnz).map(|_| rng.random_range(0..n)).collect();
        cols.sort_unstable();
        cols.dedup();
        let vals: Vec<f64> = cols.iter().map(|_| rng.random_range(0.1..1.0)).collect();
        let norm = vals.iter().map(|v| v * v).sum::<f64>().sqrt();
        let row: Vec<(usize, f64)> = cols.into_iter().zip(vals.into_iter().map(|v| v / norm)).collect();
        let score: f64 = row.iter().map(|&(j, v)| truth[j] * v).sum();
        let flip = rng.random_range(0.0..1.0) < 0.1;
        labels.push(i64::from((score > 0.0) != flip));
        rows.push(row);
    }
    Dataset {
        features: Features::Sparse(CsrMatrix::from_rows(n, &rows).expect("columns in range")),
        labels: labels.into(),
        weights: None,
        covariances: usvm::Covariances::None,
        privileged: None,
    }
}

/// The exact route as it was before dual CD: Newton with a smoothing continuation to a floor of 1e-3,
/// the active-set polish, and the continuation to the end if the polish does not settle. Returns `J`.
fn newton_route(data: &Dataset, lambda: f64) -> f64 {
    let classes = data.classes();
    let y: Vec<f64> = data.labels.iter().map(|&c| if c == classes[1] { 1.0 } else { -1.0 }).collect();
    let problem = Problem { features: &data.features, y: &y, weights: None, covariances: &NoCovariance };
    let objective = Objective::new(problem, ExpectedHinge, lambda);
    let settings = ExactSettings::default();
    let coarse = ExactSettings { tol: 1e-4, sigma_floor: 1e-3, ..settings };
    let (theta, report) = exact::solve(&objective, vec![0.0; objective.dim()], &coarse, Default::default());
    if let Some(p) = hinge_polish::polish(&data.features, &y, None, lambda, true, &theta, 3e-3)
        && objective.value(&p.theta) <= report.objective * (1.0 + 1e-12)
    {
        return objective.value(&p.theta);
    }
    exact::solve(&objective, theta, &settings, Default::default()).1.objective
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let has = |flag: &str| args.iter().any(|a| a == flag);
    // `--lambdas 1e-2,1e-4`: the points to run (default all three).
    let lambdas: Vec<f64> = args
        .iter()
        .position(|a| a == "--lambdas")
        .and_then(|k| args.get(k + 1))
        .map_or_else(|| vec![1e-2, 1e-4, 1e-5], |v| v.split(',').map(|s| s.parse().expect("a number")).collect());
    let mut problems = Vec::new();
    if !has("--sparse-only") {
        problems.push(("dense 50,000 × 100", dense_problem(50_000, 100)));
    }
    if !has("--dense-only") {
        problems.push(("sparse 5,000 × 2,000,000, 30 nnz/row", sparse_problem(5_000, 2_000_000, 30)));
    }
    println!(
        "{:<38} {:>7} {:>9} {:>16} {:>9} {:>7} {:>10} {:>16} {:>8}",
        "problem", "lambda", "fit s", "objective", "rel gap", "epochs", "newton s", "newton obj", "ratio"
    );
    for (name, data) in &problems {
        for &lambda in &lambdas {
            let params = LinearSvmParams { method: LinearMethod::Hinge, lambda, ..Default::default() };
            let start = Instant::now();
            let fit = params.fit(data).expect("valid problem");
            let t = start.elapsed().as_secs_f64();
            let r = &fit.reports[0];
            // The previous route's Newton-CG allocates an n-vector per chunk of rows for every gradient and
            // Hessian-vector product: with 2,000,000 features it is not run (`--newton-sparse` forces it).
            let sparse = matches!(data.features, Features::Sparse(_));
            let (tn, on) = if has("--no-newton") || (sparse && !has("--newton-sparse")) {
                (f64::NAN, f64::NAN)
            } else {
                let start = Instant::now();
                let o = newton_route(data, lambda);
                (start.elapsed().as_secs_f64(), o)
            };
            println!(
                "{name:<38} {lambda:>7.0e} {t:>9.3} {:>16.12} {:>9.1e} {:>7} {tn:>10.3} {on:>16.12} {:>8.2}",
                r.objective,
                r.duality_gap.unwrap_or(f64::NAN),
                r.n_iter,
                tn / t
            );
        }
    }
}
