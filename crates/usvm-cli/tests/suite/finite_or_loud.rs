//! Finite or loud: `predict` never writes a non-finite score with exit 0; a model file that cannot give finite,
//! meaningful scores is refused when read; and every message says what is wrong and what to do.

use crate::common;

use serde_json::json;

use common::*;

/// Trains `method` on the CSV fixture into `dir/name` and returns the model's JSON.
fn trained(dir: &std::path::Path, method: &str, name: &str) -> (std::path::PathBuf, serde_json::Value) {
    let model = dir.join(name);
    ok(&usvm(&["train", "--method", method, "--csv", &data("train.csv"), "--model", s(&model)]));
    let json = read_json(&model);
    (model, json)
}

fn predict(model: &std::path::Path, csv: &str, scores: &std::path::Path) -> std::process::Output {
    usvm(&["predict", "--model", s(model), "--csv", csv, "--output", s(scores)])
}

#[test]
fn overflowing_scores_are_an_error_naming_the_example() {
    let d = temp_dir("overflow");
    let (model, mut json) = trained(&d, "hinge", "m.json");
    let scores = d.join("scores.txt");
    // Coefficients of 1e308 times features of 2: the score overflows.
    json["coef"] = json!([1e308, 1e308, 1e308]);
    std::fs::write(&model, json.to_string()).unwrap();
    let csv = d.join("big.csv");
    std::fs::write(&csv, "f1,f2,f3,label\n0.5,0,0,1\n2,2,2,1\n").unwrap();
    fails_with(&predict(&model, s(&csv), &scores), "big.csv: example 2: its score is inf");
    assert!(!scores.exists());
    // A huge value in the data with a sane model.
    let (model, _) = trained(&d, "hinge", "sane.json");
    std::fs::write(&csv, "f1,f2,f3,label\n1.797e308,1.797e308,0,1\n").unwrap();
    fails_with(&predict(&model, s(&csv), &scores), "example 1: its score is");
    assert!(!scores.exists());
}

#[test]
fn model_files_that_cannot_score_are_refused() {
    let d = temp_dir("bad-models");
    let scores = d.join("scores.txt");
    let test = data("test.csv");
    let (model, json) = trained(&d, "hinge", "m.json");
    let refused = |edit: &dyn Fn(&mut serde_json::Value), needle: &str| {
        let mut bad = json.clone();
        edit(&mut bad);
        std::fs::write(&model, bad.to_string()).unwrap();
        fails_with(&predict(&model, &test, &scores), needle);
        assert!(!scores.exists());
    };
    refused(&|m| m["classes"] = json!([1, 1]), "classes is [1, 1]: class 1 is listed twice");
    refused(&|m| m["classes"] = json!([1]), "classes is [1]: a model separates at least 2 classes");
    refused(
        &|m| m["coef"] = json!([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]),
        "2 classes need one coef row (a list of numbers)",
    );
    refused(&|m| m["coef"] = json!("abc"), "coef must be a list of numbers (two classes) or a list of such lists");
    refused(&|m| m["coef"] = json!([1.0, "x", 3.0]), "coef[1] is \"x\", not a number");
    refused(&|m| m["intercept"] = json!("b"), "intercept must be a number for two classes");
    refused(&|m| m["n_features"] = json!(7), "coef row 0 has 3 entries, n_features is 7");
    // A stated width is not allocated: 2^32 features with three listed columns reads in a few MB.
    let mut wide = json.clone();
    wide["n_features"] = json!(1u64 << 32);
    wide["columns"] = json!([0, 1, 2]);
    wide["version"] = json!(3);
    std::fs::write(&model, wide.to_string()).unwrap();
    ok(&predict(&model, &test, &scores));
    // A key given twice is refused, not the last one taken.
    let text = json.to_string().replacen("{", "{\"method\": \"gsu\", ", 1);
    std::fs::write(&model, text).unwrap();
    fails_with(&predict(&model, &test, &scores), "duplicate key \"method\"; give each key once");

    // BE-SVM: a subnormal normalisation scale would make every mapped feature infinite.
    let (besvm, mut json) = trained(&d, "besvm", "b.json");
    json["basis_expansion"]["normalisation"][0]["scale"] = json!(1e-320);
    std::fs::write(&besvm, json.to_string()).unwrap();
    fails_with(&predict(&besvm, &test, &scores), "a positive, normal scale (found 1e-320");
}

#[test]
fn parameter_errors_name_what_the_user_wrote() {
    let d = temp_dir("param-messages");
    let model = d.join("m.json");
    let params = d.join("p.json");
    let train = ["train", "--csv", &data("train.csv"), "--model", s(&model), "--params", s(&params)];
    std::fs::write(&params, r#"{"method": "gsu", "regularization": {"lambda": -1}}"#).unwrap();
    let err = fails(&usvm(&train));
    assert!(err.contains("p.json: invalid lambda = -1: must be positive") && !err.contains("--lambda"), "{err}");
    let err = fails(&usvm(&[&train[..], &["--lambda", "-2"]].concat()));
    assert!(err.contains("invalid value '-2' for '--lambda'"), "{err}");
    std::fs::write(&params, "{\"method\": \"gsu\",\n \"method\": \"hinge\"}").unwrap();
    fails_with(&usvm(&train), "p.json: not valid JSON: duplicate key \"method\"; give each key once at line 2");
    assert!(!model.exists());
    // `--route auto` is the default route, named; `--route qp` is taken alone and certifies.
    ok(&usvm(&["train", "--method", "hinge", "--route", "auto", "--csv", &data("train.csv"), "--model", s(&model)]));
    let report = d.join("r.json");
    let qp = ["--route", "qp", "--report", s(&report)];
    ok(&usvm(&[&["train", "--method", "hinge", "--csv", &data("train.csv"), "--model", s(&model)][..], &qp].concat()));
    let r = read_json(&report);
    assert_eq!(r["routes"], json!(["qp"]), "{r}");
    assert_eq!(r["converged"], json!(true), "{r}");
    // `--segment-len 0` is a flag's error, not the data's.
    let out = d.join("w.csv");
    let welch = ["uncertainty", "welch", "--input", &data("series.csv"), "--segment-len", "0"];
    let err = fails(&usvm(&[&welch[..], &["--out-csv", s(&out), "--out-var-csv", s(&d.join("v.csv"))]].concat()));
    assert_eq!(err.trim(), "error: invalid value '0' for '--segment-len': must be at least 2");
}

#[test]
fn besvm_takes_gamma_as_its_rbf_similarity() {
    let d = temp_dir("besvm-gamma");
    let model = d.join("b.json");
    let train = ["train", "--method", "besvm", "--csv", &data("train.csv"), "--model", s(&model), "--gamma", "0.05"];
    ok(&usvm(&train));
    assert_eq!(read_json(&model)["params"]["similarity"], json!(["rbf:0.05"]));
    let err = fails(&usvm(&[&train[..], &["--similarity", "rigid"]].concat()));
    assert!(err.contains("add rbf:0.05 to --similarity"), "{err}");
    ok(&usvm(&[&train[..], &["--similarity", "linear,rbf"]].concat()));
    assert_eq!(read_json(&model)["params"]["similarity"], json!(["linear", "rbf:0.05"]));
}

#[test]
fn variances_that_widen_libsvm_data_get_a_note() {
    let d = temp_dir("widen");
    let (x, v, model) = (d.join("x.svm"), d.join("v.svm"), d.join("m.json"));
    std::fs::write(&x, "1 1:1 2:0.5\n-1 1:-1 2:0.25\n1 1:2\n-1 2:-1\n").unwrap();
    std::fs::write(&v, "1 1:0.1 u1,4:0.5\n-1 1:0.1\n1 2:0.1\n-1 1:0.1\n").unwrap();
    let train = ["train", "--method", "gsu", "--data", s(&x), "--var", s(&v), "--model", s(&model)];
    let err = ok_stderr(&usvm(&train));
    assert!(err.contains("v.svm: variance entries reach feature 4, beyond the largest index of "), "{err}");
    assert!(err.contains("x.svm (2): the data have 4 features"), "{err}");
    assert_eq!(read_json(&model)["n_features"], json!(4));
    let err = ok_stderr(&usvm(&[&train[..], &["--n-features", "4"]].concat()));
    assert!(!err.contains("note:"), "{err}");
}
