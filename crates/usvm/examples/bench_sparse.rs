//! Sparse high-dimensional benchmark (issue #17). Generates a seeded synthetic LIBSVM-like problem in memory
//! — `ℓ` rows, `n` features, `k` non-zeros per row at skewed random columns, values and per-feature
//! variances on the same pattern rounded to three decimals (so that the files written by `--write` read
//! back to the same numbers) — and times one objective pass of each kind against the number of stored
//! entries, then the exact solver for `hinge` and `gsu` (sparse diagonal Σ) at each λ.
//!
//! Run: `cargo run --release -p usvm --example bench_sparse -- [--rows 5000] [--features 2000000]
//! [--nnz 30] [--lambda 1e-2,1e-4] [--methods hinge,gsu] [--seed 7] [--write DIR] [--no-fit] [--write-only]`.
//! `--write DIR` also writes `DIR/train.libsvm` and `DIR/train.var` for timing the CLI:
//! `/usr/bin/time -v target/release/usvm train --method gsu --data DIR/train.libsvm --var DIR/train.var
//! --lambda 1e-4 --model /tmp/m.json --report /tmp/r.json`.

use std::io::{BufWriter, Write};
use std::time::Instant;

use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal, StandardUniform};
use rand_xoshiro::Xoshiro256PlusPlus;
use usvm::features::ColumnSet;
use usvm::loss::ExpectedHinge;
use usvm::objective::{Objective, Problem};
use usvm::{Covariances, CsrMatrix, Dataset, Features, LinearMethod, LinearSvmParams};

struct Options {
    rows: usize,
    features: usize,
    nnz: usize,
    lambdas: Vec<f64>,
    methods: Vec<String>,
    seed: u64,
    write: Option<std::path::PathBuf>,
    fit: bool,
    passes: bool,
}

fn options() -> Options {
    let mut o = Options {
        rows: 5000,
        features: 2_000_000,
        nnz: 30,
        lambdas: vec![1e-2, 1e-4],
        methods: vec!["hinge".into(), "gsu".into()],
        seed: 7,
        write: None,
        fit: true,
        passes: true,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut k = 0;
    let value = |k: usize| args.get(k + 1).unwrap_or_else(|| panic!("{} needs a value", args[k])).clone();
    while k < args.len() {
        match args[k].as_str() {
            "--rows" => o.rows = value(k).parse().expect("--rows N"),
            "--features" => o.features = value(k).parse().expect("--features N"),
            "--nnz" => o.nnz = value(k).parse().expect("--nnz K"),
            "--lambda" => o.lambdas = value(k).split(',').map(|v| v.parse().expect("--lambda L,L")).collect(),
            "--methods" => o.methods = value(k).split(',').map(String::from).collect(),
            "--seed" => o.seed = value(k).parse().expect("--seed N"),
            "--write" => o.write = Some(value(k).into()),
            "--no-fit" => {
                o.fit = false;
                k += 1;
                continue;
            }
            "--write-only" => {
                (o.fit, o.passes) = (false, false);
                k += 1;
                continue;
            }
            other => panic!("unknown option {other}"),
        }
        k += 2;
    }
    o
}

/// `round(v · 1000) / 1000`, so that the three-decimal text form reads back to the same number.
fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// `ℓ × n` CSR means with `k` distinct columns per row (column `⌊n u³⌋`: a few frequent features and a long
/// tail), values `N(0, 1)`; labels `sign(x_iᵀw* + 0.3 z)` for a hidden `w* ~ N(0, I)`; variances
/// `U[0.05, 0.5)` on the same pattern. Everything is rounded to three decimals.
fn generate(l: usize, n: usize, k: usize, seed: u64) -> Dataset<'static> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let normal = |rng: &mut Xoshiro256PlusPlus| -> f64 { StandardNormal.sample(rng) };
    let w_star: Vec<f64> = (0..n).map(|_| normal(&mut rng)).collect();
    let (mut indptr, mut indices, mut values, mut variances) = (vec![0], Vec::new(), Vec::new(), Vec::new());
    let mut labels = Vec::with_capacity(l);
    let mut cols = Vec::with_capacity(k);
    for _ in 0..l {
        cols.clear();
        while cols.len() < k.min(n) {
            let u: f64 = StandardUniform.sample(&mut rng);
            cols.push(((n as f64 * u * u * u) as usize).min(n - 1));
            cols.sort_unstable();
            cols.dedup();
        }
        let mut score = 0.0;
        for &j in &cols {
            let v = round3(normal(&mut rng));
            score += v * w_star[j];
            indices.push(j as u32);
            values.push(v);
            let u: f64 = StandardUniform.sample(&mut rng);
            variances.push(round3(0.05 + 0.45 * u));
        }
        indptr.push(indices.len());
        labels.push(if score + 0.3 * normal(&mut rng) > 0.0 { 1 } else { -1 });
    }
    let x = CsrMatrix::new(n, indptr.clone(), indices.clone(), values);
    let var = CsrMatrix::new(n, indptr, indices, variances);
    Dataset {
        features: Features::Sparse(x),
        labels: labels.into(),
        weights: None,
        covariances: Covariances::sparse_diagonal(var),
        privileged: None,
    }
}

fn write_files(data: &Dataset, dir: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut out = BufWriter::new(std::fs::File::create(dir.join("train.libsvm"))?);
    usvm::io::write_libsvm(data, &mut out)?;
    out.flush()?;
    let mut out = BufWriter::new(std::fs::File::create(dir.join("train.var"))?);
    usvm::io::write_libsvm_variances(data, &mut out)?;
    out.flush()
}

/// Times value_grad, hess_vec, line and value for the hinge (Σ = 0) and GSU (sparse diagonal Σ).
fn passes(label: &str, data: &Dataset, y: &[f64], nnz: usize) {
    let n = data.n_features();
    let theta: Vec<f64> = (0..=n).map(|j| 0.01 * ((j % 1000) as f64).sin()).collect();
    let v: Vec<f64> = (0..=n).map(|j| ((j % 977) as f64).cos()).collect();
    for (name, cov) in [("hinge", &Covariances::None), ("gsu", &data.covariances)] {
        let problem = Problem { features: &data.features, y, weights: None, covariances: cov.as_dyn() };
        // A floor of 1 puts every example in the curvature set: the worst case of a Hessian-vector product.
        let objective = Objective { sigma_floor: 1.0, ..Objective::new(problem, ExpectedHinge, 1e-4) };
        let mut g = vec![0.0; n + 1];
        let mut curvature = None;
        let t_grad = best_of(5, || curvature = Some(objective.value_grad(&theta, &mut g).1));
        let curvature = curvature.expect("ran");
        let mut hv = vec![0.0; n + 1];
        let t_hv = best_of(5, || objective.hess_vec(&theta, &curvature, &v, &mut hv));
        let t_line = best_of(5, || {
            objective.line(&theta, &v).eval(0.5);
        });
        let t_value = best_of(5, || {
            objective.value(&theta);
        });
        let per = |t: f64| t * 1e9 / nnz as f64;
        println!(
            "{name:<5} passes, {label}: value_grad {:8.3} ms ({:6.1} ns/entry)  hess_vec {:8.3} ms ({:6.1} ns/entry, \
             {} active)  line {:8.3} ms  value {:8.3} ms",
            t_grad * 1e3,
            per(t_grad),
            t_hv * 1e3,
            per(t_hv),
            curvature.n_active(),
            t_line * 1e3,
            t_value * 1e3
        );
    }
}

/// The same data on the columns some row or variance stores, renumbered in order.
fn used_columns(data: &Dataset<'static>) -> Dataset<'static> {
    let (Features::Sparse(x), Covariances::SparseDiagonal(c)) = (&data.features, &data.covariances) else {
        unreachable!("generated sparse")
    };
    let mut used = ColumnSet::new(x.n_cols);
    x.mark_columns(&mut used);
    c.variances.mark_columns(&mut used);
    used.freeze();
    let remap = |m: &CsrMatrix| m.restrict_columns(&used).into_owned();
    Dataset {
        features: Features::Sparse(remap(x)),
        covariances: Covariances::sparse_diagonal(remap(&c.variances)),
        ..data.clone()
    }
}

#[path = "shared/timing.rs"]
mod timing;
use timing::best_of;

fn main() {
    let o = options();
    let t = Instant::now();
    let data = generate(o.rows, o.features, o.nnz, o.seed);
    let nnz = match &data.features {
        Features::Sparse(m) => m.values.len(),
        Features::Dense(_) => unreachable!(),
    };
    println!(
        "sparse benchmark: ℓ = {}, n = {}, {} stored entries ({} per row), seed {}, {} threads; generated in {:.2} s",
        o.rows,
        o.features,
        nnz,
        o.nnz,
        o.seed,
        rayon::current_num_threads(),
        t.elapsed().as_secs_f64()
    );
    if let Some(dir) = &o.write {
        write_files(&data, dir).expect("write the LIBSVM files");
        println!("wrote {0}/train.libsvm and {0}/train.var", dir.display());
    }
    if !o.passes {
        return;
    }

    // One pass of each kind at a fixed point, with and without the covariances: on all n columns, and on
    // the used columns only (what the exact solver works on when at most half of the columns are used).
    let y: Vec<f64> = data.labels.iter().map(|&c| c as f64).collect();
    let n = o.features;
    let mut g = vec![0.0; n + 1];
    let w: Vec<f64> = (0..=n).map(|j| 0.01 * ((j % 1000) as f64).sin()).collect();
    let t_sweep = best_of(5, || {
        g.iter_mut().for_each(|v| *v = 0.0);
        g.iter_mut().for_each(|v| *v *= 0.5);
        g.iter_mut().zip(&w).for_each(|(v, x)| *v += 1e-4 * x);
    });
    println!("reference: three sweeps over an (n + 1)-vector (zero, scale, axpy) {:8.3} ms", t_sweep * 1e3);
    passes("all columns", &data, &y, nnz);
    let used = used_columns(&data);
    println!("used columns: {} of {} ({:.1}%)", used.n_features(), n, 100.0 * used.n_features() as f64 / n as f64);
    passes("used columns", &used, &y, nnz);
    if !o.fit {
        return;
    }
    for method in &o.methods {
        let method_enum = match method.as_str() {
            "hinge" => LinearMethod::Hinge,
            "gsu" => LinearMethod::Gsu,
            other => panic!("unknown method {other} (hinge, gsu)"),
        };
        for &lambda in &o.lambdas {
            let params = LinearSvmParams { method: method_enum.clone(), lambda, ..Default::default() };
            let t = Instant::now();
            let fit = params.fit(&data).expect("valid problem");
            let seconds = t.elapsed().as_secs_f64();
            let r = &fit.reports[0];
            let nonzero = fit.model.coef.dense().iter().filter(|&&c| c != 0.0).count();
            println!(
                "fit {method:<5} λ = {lambda:<6e} {seconds:8.3} s  objective {:.12}  n_iter {:3}  ‖∇J‖/‖∇J(0)‖ = {:.2e}  \
                 converged {}  floor {:.0e}  non-zero coef {nonzero}",
                r.objective,
                r.n_iter,
                r.gradient_norm / r.initial_gradient_norm.unwrap_or(1.0),
                r.converged(),
                r.sigma_floor.unwrap_or(0.0)
            );
        }
    }
}
