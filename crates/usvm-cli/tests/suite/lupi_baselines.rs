//! End-to-end tests of paper 004's baselines `--method l2svmplus` and `--method rsvm-rhhq` on the shipped
//! LUPI example (tests/data/lupi*.svm): train + predict (the monotone half-quadratic trace is checked in
//! crates/usvm/tests/lupi_baselines.rs), and bad input (no --privileged, non-positive ρ/C/η) as a one-line
//! error with exit status 1 and no model.

use crate::common;

use common::*;

#[test]
fn both_baselines_train_and_predict_on_the_lupi_example() {
    let dir = temp_dir("lupi-baselines");
    let (train, star, test) = (data("lupi.svm"), data("lupi.star.svm"), data("lupi.test.svm"));
    for (method, extra) in [
        ("l2svmplus", vec!["--privileged", star.as_str(), "--C", "1", "--rho", "1"]),
        ("rsvm-rhhq", vec!["--C", "1", "--gamma", "0.5", "--eta", "2"]),
    ] {
        let (model, report, out, metrics) = (
            dir.join(format!("{method}.json")),
            dir.join(format!("{method}.report.json")),
            dir.join(format!("{method}.scores.txt")),
            dir.join(format!("{method}.metrics.json")),
        );
        let mut args =
            vec!["train", "--method", method, "--data", &train, "--model", s(&model), "--report", s(&report)];
        args.extend(&extra);
        ok(&usvm(&args));
        let m = read_json(&model);
        assert_eq!(m["method"], method);
        assert_eq!(m["params"]["method"], method);
        ok(&usvm(&["predict", "--model", s(&model), "--data", &test, "--output", s(&out), "--metrics", s(&metrics)]));
        let acc = read_json(&metrics)["accuracy"].as_f64().unwrap();
        assert!(acc > 0.6, "{method}: test accuracy {acc}");
        let r = read_json(&report);
        assert_eq!(r["method"], method);
        assert_eq!(r["converged"], true, "{method}: {r}");
    }
}

#[test]
fn bad_input_is_a_one_line_error_without_a_model() {
    let dir = temp_dir("lupi-baselines-bad");
    let model = dir.join("m.json");
    let (train, star) = (data("lupi.svm"), data("lupi.star.svm"));
    let run = |extra: &[&str]| {
        let mut args = vec!["train", "--data", train.as_str(), "--model", s(&model)];
        args.extend(extra);
        usvm(&args)
    };
    fails_with(&run(&["--method", "l2svmplus"]), "--privileged");
    fails_with_all(&run(&["--method", "l2svmplus", "--privileged", &star, "--rho", "0"]), &["rho", "positive"]);
    fails_with_all(&run(&["--method", "l2svmplus", "--privileged", &star, "--rho", "-1"]), &["rho", "positive"]);
    fails_with_all(&run(&["--method", "l2svmplus", "--privileged", &star, "--C", "0"]), &["C", "positive"]);
    fails_with_all(&run(&["--method", "rsvm-rhhq", "--eta", "0"]), &["eta", "positive"]);
    fails_with_all(&run(&["--method", "rsvm-rhhq", "--eta", "-2"]), &["eta", "positive"]);
    fails_with_all(&run(&["--method", "rsvm-rhhq", "--C", "-1"]), &["C", "positive"]);
    fails_with(&run(&["--method", "rsvm-rhhq", "--privileged", &star]), "--privileged");
    fails_with(&run(&["--method", "svm", "--eta", "1"]), "--eta");
    // An unknown start is clap's usage error (exit 2, naming the flag and the values it takes).
    let out = run(&["--method", "rsvm-rhhq", "--hq-start", "random"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.code() == Some(2) && err.contains("--hq-start") && err.contains("best"), "{err}");
    fails_with(&run(&["--method", "svm", "--hq-start", "zero"]), "--hq-start");
    assert!(!model.exists(), "no model file after a failure");
}

/// RSVM-RHHQ from `f = 0` at η = 10 stays at a classifier that predicts one class on the training set: a
/// warning naming it (and `"degenerate": true` in the report), or with --strict exit 1 and no model; from
/// the C-SVM start (the default) the fit predicts both classes and says nothing.
#[test]
fn a_degenerate_fit_warns_and_strict_refuses_it() {
    let dir = temp_dir("lupi-hq-start");
    let (model, report) = (dir.join("m.json"), dir.join("r.json"));
    let train = data("lupi.svm");
    let run = |extra: &[&str]| {
        let mut args = vec!["train", "--method", "rsvm-rhhq", "--data", train.as_str(), "--model", s(&model)];
        args.extend(["--report", s(&report), "--C", "1", "--gamma", "0.5", "--eta", "10"]);
        args.extend(extra);
        usvm(&args)
    };
    let out = run(&["--hq-start", "zero"]);
    ok(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("warning: rsvm-rhhq: degenerate: the classifier predicts one class"), "{err}");
    assert_eq!(read_json(&report)["degenerate"], true);
    std::fs::remove_file(&model).unwrap();
    fails_with(&run(&["--hq-start", "zero", "--strict"]), "degenerate");
    assert!(!model.exists(), "no model file after --strict refused a degenerate fit");
    let out = run(&[]);
    ok(&out);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("degenerate"));
    assert!(read_json(&report).get("degenerate").is_none(), "the report names only degenerate fits");
}
