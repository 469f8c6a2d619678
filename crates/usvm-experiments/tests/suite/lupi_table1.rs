//! The MNIST+ layout of `lupi::mnist_plus` read back from files written in it (from the digits stand-in),
//! and its errors.

use std::fs;
use std::path::{Path, PathBuf};

use ndarray::Array2;
use usvm_experiments::lupi::digits_plus::DigitsPlus;
use usvm_experiments::lupi::mnist_plus::MnistPlus;
use usvm_experiments::lupi::table1::{Grid, NoiseStage, Preprocess, Protocol, run_trial};

fn write(path: &Path, prefix: &str, x: &Array2<f64>, labels: &[i64]) {
    let mut s = String::from("label");
    (0..x.ncols()).for_each(|j| s += &format!(",{prefix}{j}"));
    for (row, y) in x.rows().into_iter().zip(labels) {
        s += &format!("\n{y}");
        row.iter().for_each(|v| s += &format!(",{v}"));
    }
    fs::write(path, s + "\n").unwrap();
}

/// A directory in the MNIST+ layout: 100 training images, the rest split into validation and test.
fn layout(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("usvm-mnist-plus-{name}-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let d = DigitsPlus::load();
    let rows = |r: std::ops::Range<usize>| d.pooled.slice(ndarray::s![r.clone(), ..]).to_owned();
    let n = d.labels.len();
    write(&dir.join("train.csv"), "p", &rows(0..100), &d.labels[..100]);
    write(&dir.join("train_privileged.csv"), "f", &d.full.slice(ndarray::s![0..100, ..]).to_owned(), &d.labels[..100]);
    write(&dir.join("validation.csv"), "p", &rows(100..230), &d.labels[100..230]);
    write(&dir.join("test.csv"), "p", &rows(230..n), &d.labels[230..n]);
    dir
}

#[test]
fn the_mnist_plus_layout_loads_and_runs_a_trial() {
    let dir = layout("ok");
    let data = MnistPlus::load(&dir).unwrap();
    assert_eq!((data.train.n_samples(), data.validation.n_samples(), data.test.n_samples()), (100, 130, 126));
    assert_eq!(data.train.privileged.as_ref().unwrap().n_features(), 64);
    let split = data.split(80, 0);
    assert_eq!(split.train.n_samples(), 80);
    assert_ne!(data.split(80, 1).train.labels, split.train.labels, "each trial draws its own training set");
    let protocol = Protocol {
        preprocess: Preprocess::L1,
        noise: NoiseStage::Raw,
        snrs: vec![Some(10.0), None],
        grid: Grid::small(),
    };
    let r = run_trial(&split, &protocol, 0).unwrap();
    // Clean test accuracy of every method on 5 vs 8 from 4x4 pixels: well above chance.
    assert!(r.accuracy[1].iter().all(|&a| a > 80.0), "{:?}", r.accuracy);
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn bad_mnist_plus_directories_name_the_file() {
    let err = |dir: &Path| MnistPlus::load(dir).unwrap_err();
    let dir = layout("bad");
    let privileged = dir.join("train_privileged.csv");
    let good = fs::read_to_string(&privileged).unwrap();
    // Labels out of train.csv's order.
    let mut lines: Vec<String> = good.lines().map(str::to_string).collect();
    let flipped = if lines[1].starts_with("5,") { "8" } else { "5" };
    lines[1].replace_range(..1, flipped);
    fs::write(&privileged, lines.join("\n")).unwrap();
    let e = err(&dir);
    assert!(e.contains("train_privileged.csv") && e.contains("same order"), "{e}");
    fs::write(&privileged, &good).unwrap();
    // A validation file with another number of pixel columns.
    let validation = dir.join("validation.csv");
    let v = fs::read_to_string(&validation).unwrap();
    let narrow: Vec<String> = v.lines().map(|l| l.rsplit_once(',').unwrap().0.to_string()).collect();
    fs::write(&validation, narrow.join("\n")).unwrap();
    let e = err(&dir);
    assert!(e.contains("validation.csv") && e.contains("15 pixel columns"), "{e}");
    fs::write(&validation, v).unwrap();
    // A third class.
    let train = dir.join("train.csv");
    let t = fs::read_to_string(&train).unwrap();
    fs::write(&train, t.replacen("\n5,", "\n3,", 1)).unwrap();
    fs::write(&privileged, good.replacen("\n5,", "\n3,", 1)).unwrap();
    let e = err(&dir);
    assert!(e.contains("train.csv") && e.contains("3 classes"), "{e}");
    // A missing file, and a malformed field: the reader's file:line error.
    fs::remove_file(dir.join("test.csv")).unwrap();
    assert!(err(&dir).contains("test.csv"), "{}", err(&dir));
    fs::write(dir.join("test.csv"), "label,p0\n5,abc\n").unwrap();
    let e = err(&dir);
    assert!(e.contains("test.csv:2"), "{e}");
    fs::remove_dir_all(dir).unwrap();
}
