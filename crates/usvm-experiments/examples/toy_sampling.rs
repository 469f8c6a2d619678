//! Reproduces the toy sampling experiment of thesis 3.3 / 3.5.1 (Fig. 3.3 and 3.4, DESIGN section 8): the
//! angle between the LSVM-GSU hyperplane and LSVM trained on N samples per Gaussian, N = 10..10⁵, on 2-D and
//! 3-D toy sets ([`usvm_experiments::toy_sampling`]), with the paper's reading beside ours.
//!
//!     cargo run --release -p usvm-experiments --example toy_sampling -- [--quick] [--repeats R] [--lambda L] [--out DIR]
//!
//! `--out DIR` writes `DIR/toy_sampling.csv` (input of `usvm plot angle`) and the 2-D toy set as svm-gsu files
//! `DIR/toy2d.means`, `DIR/toy2d.labels`, `DIR/toy2d.cov` (input of `usvm train` / `usvm plot boundary`).
//! `--quick` stops at N = 10⁴. Fixed seeds: the same output on every run.

use std::fmt::Write as _;
use std::time::Instant;

use usvm::Dataset;
use usvm_experiments::toy_sampling::{PAPER_ANGLE_DEG, PAPER_POINTS, SamplingExperiment, SamplingOutcome, ToySet};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut quick = false;
    let mut repeats = 5;
    let mut out: Option<std::path::PathBuf> = None;
    let mut lambda = SamplingExperiment::default().lambda;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--quick" => quick = true,
            "--repeats" => repeats = args.next().ok_or("--repeats needs a value")?.parse()?,
            "--lambda" => lambda = args.next().ok_or("--lambda needs a value")?.parse()?,
            "--out" => out = Some(args.next().ok_or("--out needs a directory")?.into()),
            _ => {
                return Err(format!(
                    "unknown argument {a}; usage: toy_sampling [--quick] [--repeats R] [--lambda L] [--out DIR]"
                )
                .into());
            }
        }
    }
    let mut samples = vec![10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000];
    if quick {
        samples.retain(|&n| n <= 10_000);
    }
    let mut csv = String::from("dim,samples,angle_mean,angle_min,angle_max,repeats\n");
    for dim in [2, 3] {
        let experiment =
            SamplingExperiment { set: ToySet { dim, ..Default::default() }, samples: samples.clone(), repeats, lambda };
        let start = Instant::now();
        let outcome = experiment.run(&|| {})?;
        report(&experiment, &outcome, start.elapsed().as_secs_f64());
        for a in &outcome.angles {
            writeln!(csv, "{dim},{},{},{},{},{repeats}", a.samples, a.mean(), a.min(), a.max())?;
        }
        if let (2, Some(dir)) = (dim, &out) {
            write_svmgsu(&outcome.data, &dir.join("toy2d"))?;
        }
    }
    if let Some(dir) = &out {
        std::fs::write(dir.join("toy_sampling.csv"), csv)?;
        println!("wrote {}/toy_sampling.csv and {}/toy2d.{{means,labels,cov}}", dir.display(), dir.display());
    }
    Ok(())
}

fn report(e: &SamplingExperiment, o: &SamplingOutcome, seconds: f64) {
    let dim = e.set.dim;
    println!(
        "{dim}-D toy set: {} Gaussians per class (seed {}), λ = {}; LSVM on the means is {:.2}° from LSVM-GSU",
        e.set.per_class, e.set.seed, e.lambda, o.hinge_angle
    );
    println!("{:>8}  {:>10}  {:>17}", "N", "θ mean (°)", "min .. max (°)");
    for a in &o.angles {
        println!("{:>8}  {:>10.3}  {:>7.3} .. {:<7.3}", a.samples, a.mean(), a.min(), a.max());
    }
    let paper_n = PAPER_POINTS.iter().find(|p| p.0 == dim).map_or(0, |p| p.1);
    match crossing(o, PAPER_ANGLE_DEG) {
        Some(n) => println!(
            "θ = {PAPER_ANGLE_DEG}° reached at N ≈ {n:.0} (log-linear interpolation of the means); paper: N = {paper_n}"
        ),
        None => println!("θ stays above {PAPER_ANGLE_DEG}° up to N = {:?}; paper: N = {paper_n}", e.samples.last()),
    }
    println!("({} sampling fits, {} seeds each, {seconds:.1} s)\n", e.n_fits(), e.repeats);
}

/// The first N at which the mean angle falls to `level`, interpolating linearly in log N.
fn crossing(o: &SamplingOutcome, level: f64) -> Option<f64> {
    let points: Vec<(f64, f64)> = o.angles.iter().map(|a| ((a.samples as f64).ln(), a.mean())).collect();
    if points.first()?.1 <= level {
        return Some(points[0].0.exp());
    }
    points.windows(2).find(|w| w[1].1 <= level).map(|w| {
        let t = (w[0].1 - level) / (w[0].1 - w[1].1);
        (w[0].0 + t * (w[1].0 - w[0].0)).exp()
    })
}

/// The dataset as svm-gsu files `PREFIX.means` (`<id> j:v`), `PREFIX.labels` (`<id> ±1`) and `PREFIX.cov`
/// (`<id> i,j:v`, full matrices).
fn write_svmgsu(data: &Dataset, prefix: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
    let (mut means, mut labels, mut cov) = (String::new(), String::new(), String::new());
    let c = data.covariances.as_dyn();
    let n = data.n_features();
    let unit = |j: usize| (0..n).map(|k| f64::from(u8::from(k == j))).collect::<Vec<_>>();
    for i in 0..data.n_samples() {
        write!(means, "g{i}")?;
        for (j, v) in data.features.row_dense(i).iter().enumerate() {
            write!(means, " {}:{v}", j + 1)?;
        }
        writeln!(labels, "g{i} {}", if data.labels[i] == 1 { "+1" } else { "-1" })?;
        write!(cov, "g{i}")?;
        for r in 0..n {
            for s in 0..n {
                write!(cov, " {},{}:{}", r + 1, s + 1, c.bilinear(i, &unit(r), &unit(s)))?;
            }
        }
        means.push('\n');
        cov.push('\n');
    }
    for (ext, text) in [("means", means), ("labels", labels), ("cov", cov)] {
        std::fs::write(prefix.with_extension(ext), text)?;
    }
    Ok(())
}
