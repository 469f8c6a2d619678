//! Low-rank covariances and feature widths end to end (issue #21): the factor file forms of every input
//! format, `--cov-type lowrank` on dense covariance files (rank detection), `--n-features`, and
//! `predict` on data with more features than the model.

use crate::common;

use common::*;

use std::path::Path;

/// The first hyperplane of a model file, `[w; b]`, with `w` over all `n_features` (zeros off its `columns`).
fn coef(model: &Path) -> Vec<f64> {
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(model).unwrap()).unwrap();
    let c = &v["coef"];
    let row = if c[0].is_array() { &c[0] } else { c };
    let stored = row.as_array().unwrap().iter().map(|x| x.as_f64().unwrap());
    let mut w: Vec<f64> = match v["columns"].as_array() {
        Some(columns) => {
            let mut w = vec![0.0; v["n_features"].as_u64().unwrap() as usize];
            columns.iter().zip(stored).for_each(|(j, x)| w[j.as_u64().unwrap() as usize] = x);
            w
        }
        None => stored.collect(),
    };
    w.push(v["intercept"].as_f64().or_else(|| v["intercept"][0].as_f64()).unwrap());
    w
}

/// 28×28 images of two bar orientations, one per row, as CSV with a label column.
fn images_csv(per_class: usize) -> String {
    let mut text = (0..784).map(|k| format!("p{k}")).collect::<Vec<_>>().join(",") + ",label\n";
    for k in 0..2 * per_class {
        let vertical = k % 2 == 0;
        let offset = (k / 2) as f64 * 0.37;
        let row: Vec<String> = (0..784)
            .map(|j| {
                let (r, c) = ((j / 28) as f64, (j % 28) as f64);
                let (a, b) = if vertical { (c, r) } else { (r, c) };
                let v = (-((a - 14.0 - offset).powi(2) / 4.0) - ((b - 14.0).powi(2) / 60.0)).exp();
                format!("{v}")
            })
            .collect();
        text += &format!("{},{}\n", row.join(","), if vertical { 1 } else { -1 });
    }
    text
}

/// `uncertainty translation` at 28×28 writes the rank-2 factor (not the dense matrix), in every format,
/// and `train` reads each to the same model.
#[test]
fn translation_at_28x28_writes_factors_that_train_reads_in_every_format() {
    let d = temp_dir("translation");
    let csv = d.join("img.csv");
    std::fs::write(&csv, images_csv(6)).unwrap();
    let common =
        ["uncertainty", "translation", "--images", s(&csv), "--height", "28", "--width", "28", "--pixels", "5"];
    let (m, l, c) = (d.join("m"), d.join("l"), d.join("c"));
    let (dd, dv) = (d.join("d.svm"), d.join("v.svm"));
    let (cd, cv) = (d.join("d.csv"), d.join("v.csv"));
    ok(&usvm(&[&common[..], &["--out-means", s(&m), "--out-labels", s(&l), "--out-cov", s(&c)]].concat()));
    ok(&usvm(&[&common[..], &["--out-data", s(&dd), "--out-var", s(&dv)]].concat()));
    ok(&usvm(&[&common[..], &["--out-csv", s(&cd), "--out-var-csv", s(&cv)]].concat()));
    let cov = std::fs::read_to_string(&c).unwrap();
    assert!(cov.lines().all(|line| line.split(' ').skip(1).all(|t| t.starts_with('u'))), "factor entries only");
    // 12 images: two factor columns of at most 784 entries each, far below the 307,720 upper-triangle entries.
    assert!(cov.len() < 12 * 2 * 784 * 40, "{} bytes", cov.len());
    let fit = |input: &[&str], name: &str| {
        let model = d.join(name);
        let args =
            [&["train", "--method", "gsu", "--lambda", "0.05", "--tol", "1e-10"][..], input, &["--model", s(&model)]];
        ok(&usvm(&args.concat()));
        coef(&model)
    };
    let a = fit(&["--means", s(&m), "--labels", s(&l), "--cov", s(&c)], "a.json");
    let b = fit(&["--data", s(&dd), "--var", s(&dv)], "b.json");
    let e = fit(&["--csv", s(&cd), "--var-csv", s(&cv)], "c.json");
    for (x, y, z) in a.iter().zip(&b).zip(&e).map(|((x, y), z)| (x, y, z)) {
        assert!((x - y).abs() <= 1e-9 * x.abs().max(1e-3) && (x - z).abs() <= 1e-9 * x.abs().max(1e-3), "{x} {y} {z}");
    }
}

/// A dense covariance file of known rank is factored to that rank with `--cov-type lowrank`, and trains
/// to the same model as the dense form.
#[test]
fn dense_covariance_file_is_factored_to_its_rank() {
    let d = temp_dir("rank");
    let n = 30;
    let (mut means, mut labels, mut cov) = (String::new(), String::new(), String::new());
    for i in 0..12 {
        let y = if i % 2 == 0 { 1 } else { -1 };
        labels += &format!("e{i} {y}\n");
        means += &format!("e{i}");
        for j in 0..n {
            means += &format!(" {}:{}", j + 1, y as f64 * ((i + j) % 7) as f64 * 0.1 + (j % 3) as f64 * 0.05);
        }
        means += "\n";
        // Σ = u uᵀ + v vᵀ: rank 2.
        let u: Vec<f64> = (0..n).map(|j| ((i * 3 + j) % 5) as f64 * 0.1 - 0.2).collect();
        let v: Vec<f64> = (0..n).map(|j| ((i + 2 * j) % 4) as f64 * 0.07).collect();
        cov += &format!("e{i}");
        for a in 0..n {
            for b in a..n {
                cov += &format!(" {},{}:{}", a + 1, b + 1, u[a] * u[b] + v[a] * v[b]);
            }
        }
        cov += "\n";
    }
    let (m, l, c) = (d.join("m"), d.join("l"), d.join("c"));
    std::fs::write(&m, means).unwrap();
    std::fs::write(&l, labels).unwrap();
    std::fs::write(&c, cov).unwrap();
    let base = ["train", "--method", "gsu", "--means", s(&m), "--labels", s(&l), "--cov", s(&c), "--lambda", "0.1"];
    let (full, low) = (d.join("full.json"), d.join("low.json"));
    ok(&usvm(&[&base[..], &["--tol", "1e-10", "--model", s(&full)]].concat()));
    let note =
        ok_stderr(&usvm(&[&base[..], &["--tol", "1e-10", "--cov-type", "lowrank", "--model", s(&low)]].concat()));
    assert!(note.contains("low-rank covariances of rank 2 per example"), "{note}");
    for (a, b) in coef(&full).iter().zip(coef(&low)) {
        assert!((a - b).abs() <= 1e-7 * a.abs().max(1e-3), "{a} {b}");
    }
}

#[test]
fn bad_factors_are_named() {
    let d = temp_dir("bad");
    let (data, var) = (d.join("d.svm"), d.join("v.svm"));
    std::fs::write(&data, "1 1:1 2:1\n-1 1:-1\n").unwrap();
    let model = d.join("m.json");
    let train = |v: &str, extra: &[&str]| {
        std::fs::write(&var, v).unwrap();
        usvm(
            &[&["train", "--method", "gsu", "--data", s(&data), "--var", s(&var), "--model", s(&model)][..], extra]
                .concat(),
        )
    };
    fails_with_all(&train("1 u1,1:nan\n-1\n", &[]), &["v.svm:1: field 'u1,1:nan'", "non-finite"]);
    fails_with_all(&train("1 u3,1:1\n-1\n", &[]), &["v.svm:1:", "rank ≤ n"]);
    fails_with_all(&train("1 u1,3:1\n-1\n", &["--n-features", "2"]), &["v.svm:1: field 'u1,3:1'", "exceeds"]);
    fails_with_all(&train("1 u1,1:1 u1,1:2\n-1\n", &[]), &["v.svm:1: field 'u1,1:2'", "repeated"]);
    // A CSV factor block with a missing feature column (a factor with the wrong number of rows).
    let (c, v) = (d.join("d.csv"), d.join("v.csv"));
    std::fs::write(&c, "a,b,y\n1,1,1\n-1,0,-1\n").unwrap();
    std::fs::write(&v, "u1:a\n1\n0\n").unwrap();
    let out = usvm(&["train", "--method", "gsu", "--csv", s(&c), "--var-csv", s(&v), "--model", s(&model)]);
    fails_with_all(&out, &["v.csv:1:", "missing column 'u1:b'"]);
    assert!(!model.exists());
}

/// `predict` on data wider than the model: trailing zero features change nothing; non-zero ones count as
/// zero coefficients for linear models (a note says so) and are zero in the support vectors of kernel
/// models; feature-map models refuse. `train --n-features` widens the model instead.
#[test]
fn predict_with_more_features_than_the_model() {
    let d = temp_dir("wide");
    let (train, narrow, zeros, wide) = (d.join("t.svm"), d.join("n.svm"), d.join("z.svm"), d.join("w.svm"));
    std::fs::write(&train, "1 1:1 2:0.5\n-1 1:-1 2:0.2\n1 1:0.7 2:-0.3\n-1 1:-0.4 2:-1\n").unwrap();
    std::fs::write(&narrow, "1 1:0.3 2:0.1\n-1 1:-0.2 2:0.4\n").unwrap();
    std::fs::write(&zeros, "1 1:0.3 2:0.1 5:0\n-1 1:-0.2 2:0.4 5:0\n").unwrap();
    std::fs::write(&wide, "1 1:0.3 2:0.1 4:7\n-1 1:-0.2 2:0.4 5:-3\n").unwrap();
    for (method, extra) in [("hinge", &[][..]), ("svm", &["--kernel", "linear"][..]), ("svm", &["--kernel", "rbf"][..])]
    {
        let model = d.join("m.json");
        ok(&usvm(&[&["train", "--method", method, "--data", s(&train), "--model", s(&model)][..], extra].concat()));
        let score = |input: &Path, out: &str| {
            let out = d.join(out);
            let note = ok_stderr(&usvm(&["predict", "--model", s(&model), "--data", s(input), "--output", s(&out)]));
            (scores(&out), note)
        };
        let (base, quiet) = score(&narrow, "a.txt");
        assert!(quiet.is_empty(), "{quiet}");
        assert_eq!(score(&zeros, "b.txt").0, base, "{method} {extra:?}");
        let (with_extra, note) = score(&wide, "c.txt");
        assert!(note.contains("features 3..5 are beyond the model's 2"), "{note}");
        if extra.contains(&"rbf") {
            // LIBSVM's rule: the support vectors are zero there, so ‖x - x_j‖² grows by the extra x².
            assert!(with_extra.iter().zip(&base).all(|(a, b)| a != b), "{with_extra:?}");
        } else {
            assert_eq!(with_extra, base, "{method} {extra:?}");
        }
    }
    let fourier = d.join("f.json");
    ok(&usvm(&[
        "train",
        "--method",
        "ksvm-igsu",
        "--approximation",
        "fourier",
        "--components",
        "20",
        "--data",
        s(&train),
        "--model",
        s(&fourier),
    ]));
    let out = d.join("f.txt");
    fails_with_all(
        &usvm(&["predict", "--model", s(&fourier), "--data", s(&wide), "--output", s(&out)]),
        &["w.svm", "has 2"],
    );
    assert!(!out.exists());
    // --n-features widens training to the data's dimension.
    let model = d.join("n5.json");
    ok(&usvm(&["train", "--method", "hinge", "--data", s(&train), "--n-features", "5", "--model", s(&model)]));
    let w = coef(&model);
    assert_eq!(w.len(), 6);
    assert_eq!(&w[2..5], &[0.0, 0.0, 0.0]);
    // The three unused columns are not stored (version 3, `columns`).
    let file: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    assert_eq!((&file["version"], &file["columns"]), (&serde_json::json!(3), &serde_json::json!([0, 1])));
}
