//! Parse throughput of the three input formats.
//!
//! Writes dense data (200 features, with per-feature variances) of about 100 MB per main file in each
//! format to a temporary directory, times each reader (best of 3, file cache warm) and prints MB/s of
//! the main file and of all files read. Run with
//! `cargo run --release -p usvm-cli --example bench_parse [-- MB [--large]]` (default 100 MB); `--large`
//! adds a dense LIBSVM file of 1,500,000 × 40 (about 820 MB).
//!
//! `bench_parse write-rss DIR` writes the two peak-memory sets instead, for `/usr/bin/time -v usvm train`:
//! `DIR/gsu.{means,labels,cov}` (50,000 × 100 dense means, diagonal covariances) and `DIR/large.svm`
//! (1,500,000 × 40 dense LIBSVM). `bench_parse read-svmgsu DIR` and `bench_parse read-libsvm FILE` only read
//! those files (the reader's own peak memory, under `/usr/bin/time -v`).

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

const FEATURES: usize = 200;
/// Rows of the `--large` LIBSVM file (40 features).
const LARGE_ROWS: usize = 1_500_000;

/// xorshift64*: a tiny deterministic generator (no dependency needed for test data).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn open(p: &Path) -> BufReader<File> {
    BufReader::with_capacity(1 << 16, File::open(p).expect("open"))
}

fn size(p: &Path) -> f64 {
    std::fs::metadata(p).expect("stat").len() as f64 / 1e6
}

/// Writes rows until each format's main file reaches `target_mb`; returns the number of rows of each
/// format (LIBSVM, CSV, svm-gsu).
fn write_all(dir: &Path, target_mb: f64) -> [usize; 3] {
    let w = |name: &str| BufWriter::with_capacity(1 << 20, File::create(dir.join(name)).expect("create"));
    let (mut svm, mut var, mut csv, mut vcsv) = (w("x.svm"), w("x.var.svm"), w("x.csv"), w("x.var.csv"));
    let (mut means, mut labels, mut cov) = (w("x.means"), w("x.labels"), w("x.cov"));
    let header: Vec<String> = (1..=FEATURES).map(|j| format!("f{j}")).collect();
    writeln!(csv, "{},label", header.join(",")).unwrap();
    writeln!(vcsv, "{}", header.join(",")).unwrap();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let target = (target_mb * 1e6) as usize;
    let (mut rows, mut written) = ([0usize; 3], [0usize; 3]);
    while written.iter().any(|&w| w < target) {
        let y = if rng.next() < 0.5 { -1 } else { 1 };
        let x: Vec<f64> = (0..FEATURES).map(|_| 20.0 * rng.next() - 10.0).collect();
        let v: Vec<f64> = (0..FEATURES).map(|_| rng.next()).collect();
        let mut line = format!("{y:+}");
        for (j, xj) in x.iter().enumerate() {
            line.push_str(&format!(" {}:{xj:.6}", j + 1));
        }
        if written[0] < target {
            written[0] += line.len() + 1;
            writeln!(svm, "{line}").unwrap();
            write!(var, "{y:+}").unwrap();
            v.iter().enumerate().for_each(|(j, s)| write!(var, " {}:{s:.6}", j + 1).unwrap());
            writeln!(var).unwrap();
            rows[0] += 1;
        }
        if written[1] < target {
            let xs: Vec<String> = x.iter().map(|a| format!("{a:.6}")).collect();
            let text = format!("{},{y}", xs.join(","));
            written[1] += text.len() + 1;
            writeln!(csv, "{text}").unwrap();
            let vs: Vec<String> = v.iter().map(|a| format!("{a:.6}")).collect();
            writeln!(vcsv, "{}", vs.join(",")).unwrap();
            rows[1] += 1;
        }
        if written[2] < target {
            let k = rows[2];
            let text = format!("id{k}{}", &line[2..]);
            written[2] += text.len() + 1;
            writeln!(means, "{text}").unwrap();
            writeln!(labels, "id{k} {y:+}").unwrap();
            write!(cov, "id{k}").unwrap();
            v.iter().enumerate().for_each(|(j, s)| write!(cov, " {0},{0}:{s:.6}", j + 1).unwrap());
            writeln!(cov).unwrap();
            rows[2] += 1;
        }
    }
    for mut f in [svm, var, csv, vcsv, means, labels, cov] {
        f.flush().unwrap();
    }
    rows
}

/// Writes `rows × features` dense LIBSVM lines (6 decimals) to `path`.
fn write_libsvm(path: &Path, rows: usize, features: usize) {
    let mut out = BufWriter::with_capacity(1 << 20, File::create(path).expect("create"));
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    for _ in 0..rows {
        let x: Vec<f64> = (0..features).map(|_| 20.0 * rng.next() - 10.0).collect();
        let y = if x[0] + x[1] + rng.next() > 0.5 { 1 } else { -1 };
        write!(out, "{y:+}").unwrap();
        x.iter().enumerate().for_each(|(j, v)| write!(out, " {}:{v:.6}", j + 1).unwrap());
        writeln!(out).unwrap();
    }
    out.flush().unwrap();
}

/// Writes the svm-gsu set `dir/gsu.{means,labels,cov}`: `rows × features` dense means, diagonal variances.
fn write_svmgsu(dir: &Path, rows: usize, features: usize) {
    let w = |name: &str| BufWriter::with_capacity(1 << 20, File::create(dir.join(name)).expect("create"));
    let (mut means, mut labels, mut cov) = (w("gsu.means"), w("gsu.labels"), w("gsu.cov"));
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for k in 0..rows {
        let x: Vec<f64> = (0..features).map(|_| 2.0 * rng.next() - 1.0).collect();
        let y = if x[0] + x[1] + 0.5 * rng.next() > 0.25 { 1 } else { -1 };
        writeln!(labels, "id{k} {y:+}").unwrap();
        write!(means, "id{k}").unwrap();
        x.iter().enumerate().for_each(|(j, v)| write!(means, " {}:{v:.6}", j + 1).unwrap());
        writeln!(means).unwrap();
        write!(cov, "id{k}").unwrap();
        (0..features).for_each(|j| write!(cov, " {0},{0}:{1:.6}", j + 1, 0.1 * rng.next()).unwrap());
        writeln!(cov).unwrap();
    }
    for mut f in [means, labels, cov] {
        f.flush().unwrap();
    }
}

fn best_of_3(f: impl Fn() -> usize) -> (f64, usize) {
    (0..3)
        .map(|_| {
            let t = Instant::now();
            let n = f();
            (t.elapsed().as_secs_f64(), n)
        })
        .fold((f64::INFINITY, 0), |a, b| if b.0 < a.0 { b } else { a })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("write-rss") {
        let dir = PathBuf::from(args.get(1).expect("write-rss DIR"));
        std::fs::create_dir_all(&dir).unwrap();
        write_svmgsu(&dir, 50_000, 100);
        write_libsvm(&dir.join("large.svm"), 1_500_000, 40);
        return;
    }
    match (args.first().map(String::as_str), args.get(1)) {
        (Some("read-svmgsu"), Some(dir)) => {
            let f = |name: &str| Path::new(dir).join(name);
            let mut cov = open(&f("gsu.cov"));
            let d = usvm::io::read_svmgsu(
                (open(&f("gsu.means")), "gsu.means"),
                (open(&f("gsu.labels")), "gsu.labels"),
                Some((&mut cov, "gsu.cov")),
                Default::default(),
            )
            .unwrap();
            println!("{} × {} ({})", d.dataset.n_samples(), d.dataset.n_features(), d.dataset.covariances.kind());
            return;
        }
        (Some("read-libsvm"), Some(file)) => {
            let d = usvm::io::read_libsvm(open(Path::new(file)), file, None).unwrap();
            println!("{} × {}", d.n_samples(), d.n_features());
            return;
        }
        _ => {}
    }
    let large = args.iter().any(|a| a == "--large");
    let target: f64 = args.iter().find(|a| *a != "--large").map(|a| a.parse().expect("MB")).unwrap_or(100.0);
    let dir: PathBuf = std::env::temp_dir().join(format!("usvm-bench-parse-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let t = Instant::now();
    let rows = write_all(&dir, target);
    if large {
        write_libsvm(&dir.join("large.svm"), LARGE_ROWS, 40);
    }
    println!(
        "wrote {} (LIBSVM), {} (CSV), {} (svm-gsu) examples × {FEATURES} features to {} in {:.1} s",
        rows[0],
        rows[1],
        rows[2],
        dir.display(),
        t.elapsed().as_secs_f64()
    );
    let f = |name: &str| dir.join(name);
    let s = |name: &str| f(name).display().to_string();
    type Case<'a> = (&'a str, Vec<&'a str>, Box<dyn Fn() -> usize + 'a>);
    let mut cases: Vec<Case> = vec![
        (
            "LIBSVM",
            vec!["x.svm"],
            Box::new(|| usvm::io::read_libsvm(open(&f("x.svm")), &s("x.svm"), None).unwrap().n_samples()),
        ),
        (
            "LIBSVM + variances",
            vec!["x.svm", "x.var.svm"],
            Box::new(|| {
                usvm::io::read_libsvm_with_variances(
                    open(&f("x.svm")),
                    &s("x.svm"),
                    open(&f("x.var.svm")),
                    &s("x.var.svm"),
                    None,
                )
                .unwrap()
                .dataset
                .n_samples()
            }),
        ),
        (
            "CSV",
            vec!["x.csv"],
            Box::new(|| usvm::io::read_csv(open(&f("x.csv")), &s("x.csv"), None).unwrap().n_samples()),
        ),
        (
            "CSV + variances",
            vec!["x.csv", "x.var.csv"],
            Box::new(|| {
                usvm::io::read_csv_with_variances(
                    open(&f("x.csv")),
                    &s("x.csv"),
                    open(&f("x.var.csv")),
                    &s("x.var.csv"),
                    None,
                )
                .unwrap()
                .n_samples()
            }),
        ),
        (
            "svm-gsu means + labels",
            vec!["x.means", "x.labels"],
            Box::new(|| {
                usvm::io::read_svmgsu(
                    (open(&f("x.means")), &s("x.means")),
                    (open(&f("x.labels")), &s("x.labels")),
                    None,
                    Default::default(),
                )
                .unwrap()
                .dataset
                .n_samples()
            }),
        ),
        (
            "svm-gsu means + labels + cov",
            vec!["x.means", "x.labels", "x.cov"],
            Box::new(|| {
                let mut cov = open(&f("x.cov"));
                usvm::io::read_svmgsu(
                    (open(&f("x.means")), &s("x.means")),
                    (open(&f("x.labels")), &s("x.labels")),
                    Some((&mut cov, &s("x.cov"))),
                    Default::default(),
                )
                .unwrap()
                .dataset
                .n_samples()
            }),
        ),
    ];
    if large {
        cases.push((
            "LIBSVM 1.5M × 40",
            vec!["large.svm"],
            Box::new(|| usvm::io::read_libsvm(open(&f("large.svm")), &s("large.svm"), None).unwrap().n_samples()),
        ));
    }
    println!(
        "{:<30} {:>10} {:>10} {:>9} {:>12} {:>12}",
        "reader", "main MB", "total MB", "best s", "main MB/s", "total MB/s"
    );
    for (name, files, read) in &cases {
        let main = size(&f(files[0]));
        let total: f64 = files.iter().map(|n| size(&f(n))).sum();
        let (secs, n) = best_of_3(read);
        let want = match files[0] {
            "x.svm" => rows[0],
            "x.csv" => rows[1],
            "large.svm" => LARGE_ROWS,
            _ => rows[2],
        };
        assert_eq!(n, want);
        println!("{name:<30} {main:>10.1} {total:>10.1} {secs:>9.3} {:>12.1} {:>12.1}", main / secs, total / secs);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
