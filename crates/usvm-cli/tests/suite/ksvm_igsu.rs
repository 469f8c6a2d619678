//! `usvm train --method ksvm-igsu`: exact, Nyström and Fourier models that `usvm predict` reads back,
//! relevance degrees through --weights, cross-validation over gamma, and bad input.

use crate::common;

use common::*;

use std::path::Path;

#[test]
fn train_and_predict_every_approximation() {
    let dir = temp_dir("approx");
    // The fixture's test split is noise (every method scores 0.5 on it): check the training fit instead.
    let (train, var) = (data("train.csv"), data("train.var.csv"));
    for (approximation, solver, extra) in [
        ("exact", "exact", vec![]),
        ("exact", "sgd", vec!["--iterations", "3000", "--batch", "8", "--accept-unconverged"]),
        ("nystroem", "exact", vec!["--components", "12"]),
        ("fourier", "exact", vec!["--components", "200"]),
    ] {
        let model = dir.join(format!("{approximation}-{solver}.json"));
        let report = dir.join(format!("{approximation}-{solver}.report.json"));
        let mut args = vec![
            "train",
            "--method",
            "ksvm-igsu",
            "--csv",
            &train,
            "--var-csv",
            &var,
            "--kernel",
            "rbf",
            "--gamma",
            "0.5",
            "--lambda",
            "0.01",
            "--approximation",
            approximation,
            "--solver",
            solver,
            "--seed",
            "3",
        ];
        args.extend(&extra);
        let (m, r) = (model.display().to_string(), report.display().to_string());
        args.extend(["--model", &m, "--report", &r]);
        ok(&usvm(&args));
        let rep = read_json(&report);
        assert_eq!(rep["method"], "ksvm-igsu");
        assert!(rep["objective"].as_f64().unwrap() > 0.0);
        let file = read_json(&model);
        assert_eq!(file["kernel"]["type"], "rbf");
        assert_eq!(file["feature_map"].is_object(), approximation == "fourier", "{approximation}");
        let scores = dir.join("scores.txt");
        let metrics = dir.join("metrics.json");
        ok(&usvm(&[
            "predict",
            "--model",
            &m,
            "--csv",
            &train,
            "--output",
            &scores.display().to_string(),
            "--metrics",
            &metrics.display().to_string(),
        ]));
        let accuracy = read_json(&metrics)["accuracy"].as_f64().unwrap();
        assert!(accuracy >= 0.9, "{approximation}/{solver}: accuracy {accuracy}");
    }
}

#[test]
fn weights_change_the_model_and_cv_grids_gamma() {
    let dir = temp_dir("weights");
    let train = data("train.csv");
    let weights = dir.join("w.txt");
    std::fs::write(&weights, (0..24).map(|i| if i % 2 == 0 { "1\n" } else { "0.2\n" }).collect::<String>()).unwrap();
    let fit = |extra: &[&str], name: &str| {
        let m = dir.join(name).display().to_string();
        let mut args = vec!["train", "--method", "ksvm-igsu", "--csv", &train, "--C", "10", "--model", &m];
        args.extend(extra);
        ok(&usvm(&args));
        read_json(Path::new(&m))["coef"].clone()
    };
    let w = weights.display().to_string();
    assert_ne!(fit(&[], "plain.json"), fit(&["--weights", &w], "weighted.json"));
    let out = usvm(&[
        "cv",
        "--method",
        "ksvm-igsu",
        "--csv",
        &train,
        "--folds",
        "3",
        "--grid",
        "gamma=0.1,1",
        "--grid",
        "lambda=0.01,0.1",
    ]);
    ok(&out);
}

#[test]
fn bad_input_fails_with_one_line() {
    let train = data("train.csv");
    let model = std::env::temp_dir().join(format!("usvm-ksvm-igsu-{}-never.json", std::process::id()));
    let m = model.display().to_string();
    for (args, needle) in [
        (vec!["--gamma", "0"], "gamma"),
        (vec!["--kernel", "linear", "--approximation", "fourier"], "RBF"),
        (vec!["--approximation", "nystroem", "--components", "0"], "components"),
        (vec!["--lambda", "0"], "lambda"),
        (vec!["--subspace-variance", "0.5"], "subspace-variance"),
    ] {
        let mut all = vec!["train", "--method", "ksvm-igsu", "--csv", &train, "--model", &m];
        all.extend(args.iter());
        let out = usvm(&all);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!model.exists());
    }
}
