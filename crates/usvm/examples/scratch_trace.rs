use std::io::BufReader;
use std::time::Instant;
use usvm::progress::{Monitor, Observer, Progress};
use usvm::solver::dual_cd::{self, DualCdSettings, DualLoss};

struct P(Instant);
impl Observer for P {
    fn observe(&self, e: Progress<'_>) {
        if let Progress::Iteration(i) = e {
            eprintln!(
                "{:8.4}s it {:4} J {:.12} r {:.3e}",
                self.0.elapsed().as_secs_f64(),
                i.iteration,
                i.objective,
                i.residual
            );
        }
    }
}
fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let path = &a[0];
    let lambda: f64 = a[1].parse().unwrap();
    let tol: f64 = a[2].parse().unwrap();
    let file = std::fs::File::open(path).unwrap();
    let mut data = usvm::io::read_libsvm(BufReader::new(file), path, None).unwrap();
    if std::env::var("DENSE").is_ok() {
        data.features = usvm::Features::dense(data.features.to_dense());
    }
    let y: Vec<f64> = data.labels.iter().map(|&l| if l == 1 { 1.0 } else { -1.0 }).collect();
    let s = DualCdSettings { tol, ..Default::default() };
    let p = P(Instant::now());
    let rep: usize = std::env::var("REP").map(|v| v.parse().unwrap()).unwrap_or(0);
    for _ in 0..rep {
        dual_cd::solve(&data.features, &y, None, lambda, DualLoss::Hinge, std::env::var("NOB").is_err(), &s);
    }
    let t = Instant::now();
    let r = dual_cd::solve_monitored(
        &data.features,
        &y,
        None,
        lambda,
        DualLoss::Hinge,
        std::env::var("NOB").is_err(),
        &s,
        None,
        Monitor::new(Some(&p)),
    );
    eprintln!(
        "{:.4}s J {:.12} gap {:.2e} epochs {} passes {} bias {}",
        t.elapsed().as_secs_f64(),
        r.primal,
        r.relative_gap(),
        r.epochs,
        r.passes,
        r.bias_updates
    );
}
