//! End-to-end tests of `--method svmplus` / `rsvmplus`: train + predict round trips (LIBSVM, CSV, svm-gsu
//! joined by id), a missing --privileged, and mismatched privileged rows (no model file written).

use crate::common;

use common::*;

use std::path::{Path, PathBuf};

use serde_json::Value;

/// A small LUPI problem: x = 0.6 y + noise (2 features), x* = y + small noise (1 feature).
fn problem(n: usize) -> Vec<(i64, [f64; 2], f64)> {
    let mut state = 12345u64;
    let mut u = move || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    (0..n)
        .map(|i| {
            let y = if i % 2 == 0 { 1 } else { -1 };
            let yf = y as f64;
            (y, [0.6 * yf + 1.5 * u(), 1.5 * u()], yf + 0.2 * u())
        })
        .collect()
}

fn write_libsvm(dir: &Path, rows: &[(i64, [f64; 2], f64)]) -> (PathBuf, PathBuf) {
    let (x, xs) = (dir.join("x.svm"), dir.join("xstar.svm"));
    let mut a = String::new();
    let mut b = String::new();
    for (y, v, s) in rows {
        a.push_str(&format!("{y} 1:{} 2:{}\n", v[0], v[1]));
        b.push_str(&format!("{y} 1:{s}\n"));
    }
    std::fs::write(&x, a).unwrap();
    std::fs::write(&xs, b).unwrap();
    (x, xs)
}

#[test]
fn train_predict_round_trip_libsvm_csv_and_svmgsu() {
    let dir = temp_dir("round-trip");
    let rows = problem(60);
    let (x, xs) = write_libsvm(&dir, &rows);
    let (model, report, out, metrics) =
        (dir.join("m.json"), dir.join("r.json"), dir.join("s.txt"), dir.join("metrics.json"));
    for method in ["svmplus", "rsvmplus"] {
        ok(&usvm(&[
            "train",
            "--method",
            method,
            "--data",
            &p(&x),
            "--privileged",
            &p(&xs),
            "--C",
            "10",
            "--rho",
            "0.5",
            // Solved tightly: dense (CSV) and sparse (LIBSVM) rows round the kernel differently, so the
            // models agree to the solver's tolerance, not beyond.
            "--tol",
            "1e-11",
            "--model",
            &p(&model),
            "--report",
            &p(&report),
        ]));
        let m = read_json(&model);
        assert_eq!(m["method"], method);
        assert_eq!(m["kernel"]["type"], "rbf");
        assert_eq!(read_json(&report)["converged"], true);
        ok(&usvm(&[
            "predict",
            "--model",
            &p(&model),
            "--data",
            &p(&x),
            "--output",
            &p(&out),
            "--metrics",
            &p(&metrics),
        ]));
        let acc = read_json(&metrics)["accuracy"].as_f64().unwrap();
        assert!(acc > 0.6, "{method}: training accuracy {acc}");
        assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 61);
    }
    let libsvm_model = read_json(&model);

    // CSV: the same data, the same model (rsvmplus was last).
    let (c, cs) = (dir.join("x.csv"), dir.join("xstar.csv"));
    let mut a = String::from("a,b,label\n");
    let mut b = String::from("s,label\n");
    for (y, v, s) in &rows {
        a.push_str(&format!("{},{},{y}\n", v[0], v[1]));
        b.push_str(&format!("{s},{y}\n"));
    }
    std::fs::write(&c, a).unwrap();
    std::fs::write(&cs, b).unwrap();
    let model_csv = dir.join("m_csv.json");
    ok(&usvm(&[
        "train",
        "--method",
        "rsvmplus",
        "--csv",
        &p(&c),
        "--privileged",
        &p(&cs),
        "--C",
        "10",
        "--rho",
        "0.5",
        "--tol",
        "1e-11",
        "--model",
        &p(&model_csv),
    ]));
    let m_csv = read_json(&model_csv);
    let intercept = |m: &Value| m["intercept"].as_f64().or_else(|| m["intercept"][0].as_f64()).unwrap();
    let (b1, b2) = (intercept(&libsvm_model), intercept(&m_csv));
    assert!((b1 - b2).abs() < 1e-9, "CSV and LIBSVM inputs give the same model: {b2} vs {b1}");

    // svm-gsu: the privileged means listed in reverse order are joined by id.
    let (means, labels, pmeans) = (dir.join("means.txt"), dir.join("labels.txt"), dir.join("pmeans.txt"));
    let (mut a, mut l, mut b) = (String::new(), String::new(), String::new());
    for (i, (y, v, _)) in rows.iter().enumerate() {
        a.push_str(&format!("id{i} 1:{} 2:{}\n", v[0], v[1]));
        l.push_str(&format!("id{i} {y}\n"));
    }
    for (i, (_, _, s)) in rows.iter().enumerate().rev() {
        b.push_str(&format!("id{i} 1:{s}\n"));
    }
    std::fs::write(&means, a).unwrap();
    std::fs::write(&labels, l).unwrap();
    std::fs::write(&pmeans, b).unwrap();
    let model_gsu = dir.join("m_gsu.json");
    ok(&usvm(&[
        "train",
        "--method",
        "rsvmplus",
        "--means",
        &p(&means),
        "--labels",
        &p(&labels),
        "--privileged",
        &p(&pmeans),
        "--C",
        "10",
        "--rho",
        "0.5",
        "--tol",
        "1e-11",
        "--model",
        &p(&model_gsu),
    ]));
    let b3 = intercept(&read_json(&model_gsu));
    assert!((b1 - b3).abs() < 1e-9, "joined by id: intercept {b3} vs {b1}");
}

#[test]
fn missing_or_mismatched_privileged_file_is_a_one_line_error_without_a_model() {
    let dir = temp_dir("errors");
    let rows = problem(20);
    let (x, xs) = write_libsvm(&dir, &rows);
    let model = dir.join("m.json");
    let out = usvm(&["train", "--method", "svmplus", "--data", &p(&x), "--model", &p(&model)]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--privileged"), "{err}");
    assert!(!model.exists());

    let short = dir.join("short.svm");
    std::fs::write(&short, "1 1:0.5\n-1 1:-0.5\n").unwrap();
    let out =
        usvm(&["train", "--method", "svmplus", "--data", &p(&x), "--privileged", &p(&short), "--model", &p(&model)]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("short.svm") && err.contains("2 privileged rows for 20"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(!model.exists());

    let out = usvm(&[
        "train",
        "--method",
        "rsvmplus",
        "--data",
        &p(&x),
        "--privileged",
        &p(&xs),
        "--sigma-prime",
        "0",
        "--model",
        &p(&model),
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--sigma-prime"));
    assert!(!model.exists());
}
