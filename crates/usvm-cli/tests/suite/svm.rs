//! End-to-end tests of `--method svm` (kernel SVM): train + predict round trips (RBF, one-vs-rest,
//! weights, precomputed kernel), cv over γ, and bad kernel parameters.

use crate::common;

use common::*;

use std::path::Path;

/// The rows of a `usvm predict` output: (prediction, scores).
fn labelled_scores(path: &Path) -> Vec<(i64, Vec<f64>)> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .skip(1)
        .map(|l| {
            let mut t = l.split_whitespace();
            let label = t.next().unwrap().parse().unwrap();
            (label, t.map(|v| v.parse().unwrap()).collect())
        })
        .collect()
}

#[test]
fn train_predict_round_trip_one_vs_rest_and_binary() {
    let dir = temp_dir("round-trip");
    let (model, report, out, metrics) =
        (dir.join("m.json"), dir.join("r.json"), dir.join("s.txt"), dir.join("metrics.json"));
    let (model_s, report_s) = (p(&model), p(&report));
    let train = |file: &str, extra: &[&str]| {
        let mut args = vec!["train", "--method", "svm", "--data", file, "--model", &model_s, "--report", &report_s];
        args.extend_from_slice(extra);
        usvm(&args)
    };
    ok(&train(&data("multi.svm"), &["--gamma", "0.5", "--C", "10", "--tol", "1e-8", "--cache-mb", "1"]));
    let m = read_json(&model);
    assert_eq!(m["method"], "svm");
    assert_eq!(m["kernel"], serde_json::json!({"type": "rbf", "gamma": 0.5}));
    assert_eq!(m["classes"].as_array().unwrap().len(), 3);
    // A LIBSVM file that gives every value is read dense, and so are its support vectors.
    assert!(m["support_vectors"]["dense"].is_array());
    let r = read_json(&report);
    assert_eq!(r["converged"], true);
    assert_eq!(r["per_class"].as_array().unwrap().len(), 3);
    assert!(r["objective"].as_f64().unwrap() < 0.0, "the dual objective is negative: {r}");
    ok(&usvm(&[
        "predict",
        "--model",
        &p(&model),
        "--data",
        &data("multi.svm"),
        "--output",
        &p(&out),
        "--metrics",
        &p(&metrics),
    ]));
    let rows = labelled_scores(&out);
    assert_eq!(rows.len(), 24);
    assert!(rows.iter().all(|(_, s)| s.len() == 3));
    assert!(read_json(&metrics)["accuracy"].as_f64().unwrap() > 0.9);
    // One-vs-one by default: one score per pair, the most votes win (ties to the first class).
    assert_eq!((m["multiclass"].as_str(), m["version"].as_u64()), (Some("ovo"), Some(4)));
    let header = std::fs::read_to_string(&out).unwrap().lines().next().unwrap().to_string();
    assert_eq!(header, "prediction score_1_vs_2 score_1_vs_3 score_2_vs_3");
    for (label, s) in &rows {
        let mut votes = [0; 3];
        for (&v, (a, b)) in s.iter().zip([(0, 1), (0, 2), (1, 2)]) {
            votes[if v > 0.0 { a } else { b }] += 1;
        }
        let best = (0..3).fold(0, |b, c| if votes[c] > votes[b] { c } else { b });
        assert_eq!(*label, [1, 2, 3][best]);
    }
    // One-vs-rest on request; probabilities (Platt per machine, coupled for pairs) sum to one per example.
    for scheme in ["ovr", "ovo"] {
        ok(&train(&data("multi.svm"), &["--gamma", "0.5", "--C", "10", "--multiclass", scheme, "--probability"]));
        let m = read_json(&model);
        assert_eq!(m["platt_per_output"].as_array().unwrap().len(), 3, "{scheme}");
        assert_eq!(m["multiclass"].as_str(), (scheme == "ovo").then_some("ovo"));
        ok(&usvm(&[
            "predict",
            "--model",
            &p(&model),
            "--data",
            &data("multi.svm"),
            "--output",
            &p(&out),
            "--probability",
        ]));
        let text = std::fs::read_to_string(&out).unwrap();
        assert!(text.lines().next().unwrap().ends_with("probability_1 probability_2 probability_3"), "{text}");
        for (_, s) in labelled_scores(&out) {
            let total: f64 = s[3..].iter().sum();
            assert!((total - 1.0).abs() < 1e-12 && s[3..].iter().all(|&p| (0.0..=1.0).contains(&p)), "{s:?}");
        }
    }

    // Binary with weights and the default γ = 1/n_features; the polynomial kernel.
    let weights = dir.join("w.txt");
    std::fs::write(&weights, "1\n0.5\n1\n1\n0.2\n1\n1\n1\n1\n0.7\n").unwrap();
    ok(&train(&data("test.svm"), &["--weights", &p(&weights)]));
    let m = read_json(&model);
    assert_eq!(m["kernel"]["gamma"].as_f64().unwrap(), 1.0 / 3.0);
    assert_eq!(m["params"]["regularization"]["C"].as_f64().unwrap(), 1.0);
    ok(&train(&data("test.svm"), &["--kernel", "polynomial", "--degree", "2", "--coef0", "1", "--lambda", "0.1"]));
    let m = read_json(&model);
    assert_eq!(m["kernel"], serde_json::json!({"type": "polynomial", "gamma": 1.0 / 3.0, "coef0": 1.0, "degree": 2}));
    assert_eq!(m["params"]["regularization"]["lambda"].as_f64().unwrap(), 0.1);
    ok(&usvm(&["predict", "--model", &p(&model), "--data", &data("test.svm"), "--output", &p(&out)]));
    assert!(labelled_scores(&out).iter().all(|(label, s)| s.len() == 1 && (*label == 1) == (s[0] > 0.0)));
}

#[test]
fn precomputed_kernel_gives_the_same_scores_as_the_kernel() {
    let dir = temp_dir("precomputed");
    // RBF Gram rows of tests/data/test.svm in LIBSVM's precomputed layout.
    let text = std::fs::read_to_string(data("test.svm")).unwrap();
    let rows: Vec<(String, Vec<f64>)> = text
        .lines()
        .map(|l| {
            let mut t = l.split_whitespace();
            let label = t.next().unwrap().to_string();
            (label, t.map(|kv| kv.split_once(':').unwrap().1.parse().unwrap()).collect())
        })
        .collect();
    let gamma = 0.7;
    let k = |a: &[f64], b: &[f64]| (-gamma * a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum::<f64>()).exp();
    let mut pre = String::new();
    for (i, (label, x)) in rows.iter().enumerate() {
        pre.push_str(&format!("{label} 0:{}", i + 1));
        for (j, (_, z)) in rows.iter().enumerate() {
            pre.push_str(&format!(" {}:{:?}", j + 1, k(x, z)));
        }
        pre.push('\n');
    }
    let pre_file = dir.join("k.txt");
    std::fs::write(&pre_file, pre).unwrap();
    let (m1, m2, s1, s2) = (dir.join("m1.json"), dir.join("m2.json"), dir.join("s1.txt"), dir.join("s2.txt"));
    let common = ["--method", "svm", "--C", "3", "--tol", "1e-10", "--precision", "double"];
    ok(&usvm(
        &[&["train"], &common[..], &["--data", &data("test.svm"), "--gamma", "0.7", "--model", &p(&m1)]].concat(),
    ));
    ok(&usvm(
        &[&["train"], &common[..], &["--data", &p(&pre_file), "--kernel", "precomputed", "--model", &p(&m2)]].concat(),
    ));
    assert_eq!(read_json(&m2)["kernel"], serde_json::json!({"type": "precomputed"}));
    ok(&usvm(&["predict", "--model", &p(&m1), "--data", &data("test.svm"), "--output", &p(&s1)]));
    ok(&usvm(&["predict", "--model", &p(&m2), "--data", &p(&pre_file), "--output", &p(&s2)]));
    let (a, b) = (labelled_scores(&s1), labelled_scores(&s2));
    assert_eq!(a.len(), b.len());
    for ((la, sa), (lb, sb)) in a.iter().zip(&b) {
        assert_eq!(la, lb);
        assert!((sa[0] - sb[0]).abs() < 1e-9, "{sa:?} vs {sb:?}");
    }
    // A precomputed file without serial numbers is an error naming file, line and field.
    let bad = dir.join("bad.txt");
    std::fs::write(&bad, "1 0:1 1:1\n-1 1:0.5 2:1\n").unwrap();
    let out =
        usvm(&[&["train"], &common[..], &["--data", &p(&bad), "--kernel", "precomputed", "--model", &p(&m2)]].concat());
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.txt:2: field '1:0.5'"), "{err}");
}

#[test]
fn bad_kernel_parameters_exit_1_and_write_nothing() {
    let dir = temp_dir("bad");
    let model = dir.join("m.json");
    for (flags, needle) in [
        (&["--gamma", "-1"][..], "--gamma"),
        (&["--gamma", "nan"][..], "--gamma"),
        (&["--kernel", "polynomial", "--degree", "0"][..], "--degree"),
        (&["--kernel", "polynomial", "--coef0", "inf"][..], "--coef0"),
        (&["--C", "0"][..], "--C"),
        (&["--lambda=-1"][..], "--lambda"),
        (&["--cache-mb", "0"][..], "--cache-mb"),
    ] {
        let (d, m) = (data("test.svm"), p(&model));
        let mut args = vec!["train", "--method", "svm", "--data", &d, "--model", &m];
        args.extend_from_slice(flags);
        let out = usvm(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{flags:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{flags:?}: {err}");
        assert!(!model.exists());
    }
    let out = usvm(&["train", "--method", "svm", "--data", &data("test.svm"), "--model", &p(&model), "--kernel", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!model.exists());
}

#[test]
fn cv_over_gamma() {
    let dir = temp_dir("cv");
    let json = dir.join("cv.json");
    let out = usvm(&[
        "cv",
        "--method",
        "svm",
        "--data",
        &data("multi.svm"),
        "--folds",
        "3",
        "--grid",
        "gamma=2^-2..2^0",
        "--grid",
        "C=1,10",
        "--json",
        &p(&json),
    ]);
    ok(&out);
    let r = read_json(&json);
    assert_eq!(r["results"].as_array().unwrap().len(), 6);
    assert!(r["best"]["accuracy_mean"].as_f64().unwrap() > 0.5);
}
