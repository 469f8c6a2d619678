//! In-process fits of one method on a LIBSVM file (issue #17): the file is read once, then fitted `--repeat`
//! times through `usvm::fit` with the given parameters (the previous fit kept alive while the next runs, as
//! in a Python loop), and the best and median fit times printed with the last report. It times the library
//! without a process start or the file read, e.g. on the files `bench/linear_peers.py` writes:
//!
//! `cargo run --release -p usvm --example bench_hinge_file -- /tmp/usvm-peers/dense.svm
//! '{"method": "hinge", "regularization": {"lambda": 0.01}, "solver": {"name": "exact", "gap_tol": 5.2e-7}}'
//! [--repeat 20]`.

use std::io::BufReader;
use std::time::Instant;

use usvm::params::MethodParams;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (path, params) = match &args[..] {
        [path, params, ..] => (path, params),
        _ => panic!("usage: bench_hinge_file FILE PARAMS_JSON [--repeat N]"),
    };
    let repeat: usize =
        args.iter().position(|a| a == "--repeat").map_or(20, |k| args[k + 1].parse().expect("--repeat takes a count"));
    let file = std::fs::File::open(path).expect("the data file opens");
    let data = usvm::io::read_libsvm(BufReader::new(file), path, None).expect("the data file parses");
    let params = MethodParams::from_json(params).expect("valid parameters");
    let options = usvm::FitOptions::default();
    let (mut times, mut last) = (Vec::with_capacity(repeat), None);
    for _ in 0..repeat.max(1) {
        let start = Instant::now();
        let fit = usvm::fit(&params, &data, &options).expect("the fit succeeds");
        times.push(start.elapsed().as_secs_f64());
        last = Some(fit);
    }
    times.sort_by(f64::total_cmp);
    let report = &last.expect("at least one fit").reports[0];
    println!(
        "{path}: {} × {}, {} fits: best {:.4} s, median {:.4} s; objective {:.12}, n_iter {}, gap {:.1e}, {:?}",
        data.n_samples(),
        data.n_features(),
        times.len(),
        times[0],
        times[times.len() / 2],
        report.objective,
        report.n_iter,
        report.duality_gap.unwrap_or(f64::NAN),
        report.termination,
    );
}
