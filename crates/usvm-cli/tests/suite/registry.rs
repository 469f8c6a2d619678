//! The method registry seen from the CLI: version-1 model files (tests/golden/v1, written by usvm 0.1.0
//! before the registry) still load and predict their stored scores, training with the same flags gives
//! the same coefficients (1e-12 relative; 5e-11 for the plain-hinge models, see below), `--params FILE.json`
//! equals the flags, version-2 files round-trip bit for bit, and unknown or misplaced parameters are errors
//! that name them.

use crate::common;

use common::*;

use std::path::Path;

use serde_json::Value;

/// (name, train args, predict args) of tests/golden/v1/cases.txt, paths made absolute.
fn cases() -> Vec<(String, Vec<String>, Vec<String>)> {
    let data = tests_dir().join("data");
    let abs = |args: &str| -> Vec<String> {
        args.split_whitespace()
            .map(|a| {
                if a.contains('.') && !a.starts_with("--") && data.join(a).exists() {
                    data.join(a).display().to_string()
                } else {
                    a.into()
                }
            })
            .collect()
    };
    let text = std::fs::read_to_string(tests_dir().join("golden/v1/cases.txt")).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (train, predict) = l.split_once('|').unwrap();
            let (name, train) = train.trim().split_once(' ').unwrap();
            (name.to_string(), abs(train), abs(predict))
        })
        .collect()
}

/// Every number of `got` within `rel · max(|got|, |want|, floor)` of `want` (same shapes).
fn numbers_close(got: &Value, want: &Value, rel: f64, floor: f64, path: &str) {
    match (got, want) {
        (Value::Number(a), Value::Number(b)) => {
            let (a, b) = (a.as_f64().unwrap(), b.as_f64().unwrap());
            assert!(a == b || (a - b).abs() <= rel * a.abs().max(b.abs()).max(floor), "{path}: {a} vs {b}");
        }
        (Value::Array(a), Value::Array(b)) => {
            assert_eq!(a.len(), b.len(), "{path}");
            a.iter()
                .zip(b)
                .enumerate()
                .for_each(|(k, (x, y))| numbers_close(x, y, rel, floor, &format!("{path}[{k}]")));
        }
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                numbers_close(&a[k], v, rel, floor, &format!("{path}.{k}"));
            }
        }
        (a, b) => assert_eq!(a, b, "{path}"),
    }
}

/// `v` with every stored CSR matrix (`{"sparse": {n_cols, indptr, indices, values}}`) as `{"dense": rows}`:
/// the readers keep dense files dense since the golden models were written, so their support vectors and
/// other stored rows may be stored either way.
fn as_dense(v: &Value) -> Value {
    match v {
        Value::Object(o) if o.len() == 1 && o.get("sparse").is_some_and(|m| m.get("indptr").is_some()) => {
            let m = &o["sparse"];
            let index = |x: &Value| x.as_u64().unwrap() as usize;
            let indptr: Vec<usize> = m["indptr"].as_array().unwrap().iter().map(index).collect();
            let rows: Vec<Value> = indptr
                .windows(2)
                .map(|w| {
                    let mut row = vec![serde_json::json!(0.0); index(&m["n_cols"])];
                    (w[0]..w[1]).for_each(|k| row[index(&m["indices"][k])] = m["values"][k].clone());
                    Value::Array(row)
                })
                .collect();
            serde_json::json!({ "dense": rows })
        }
        Value::Object(o) => Value::Object(o.iter().map(|(k, x)| (k.clone(), as_dense(x))).collect()),
        Value::Array(a) => Value::Array(a.iter().map(as_dense).collect()),
        other => other.clone(),
    }
}

#[test]
fn version_1_files_load_and_predict_their_scores() {
    let dir = temp_dir("v1");
    for (name, _, predict) in cases() {
        let model = tests_dir().join(format!("golden/v1/{name}.model.json"));
        assert_eq!(read_json(&model)["version"], 1);
        let out = dir.join(format!("{name}.scores.txt"));
        let args = [
            &["predict".to_string(), "--model".into(), model.display().to_string()][..],
            &predict,
            &["--output".into(), out.display().to_string()],
        ]
        .concat();
        ok(&usvm(&args));
        let want = std::fs::read_to_string(tests_dir().join(format!("golden/v1/{name}.scores.txt"))).unwrap();
        let got = std::fs::read_to_string(&out).unwrap();
        let (g, w) = (score_text(&got), score_text(&want));
        assert_eq!(g.len(), w.len(), "{name}");
        for (a, b) in g.iter().zip(&w) {
            assert!((a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0), "{name}: {a} vs {b}");
        }
    }
}

#[test]
fn every_method_trains_the_same_model_as_before_the_registry() {
    let dir = temp_dir("same");
    for (name, train, _) in cases() {
        let model = dir.join(format!("{name}.json"));
        ok(&usvm(&[&["train".to_string()][..], &train, &["--model".into(), model.display().to_string()]].concat()));
        let (got, want) = (read_json(&model), read_json(&tests_dir().join(format!("golden/v1/{name}.model.json"))));
        assert_eq!(got["version"], 2, "{name}");
        assert_eq!(got["method"], want["method"], "{name}");
        for key in [
            "classes",
            "coef",
            "intercept",
            "n_features",
            "support_vectors",
            "kernel",
            "feature_map",
            "basis_expansion",
        ] {
            if !want[key].is_null() {
                let (got, want) = (as_dense(&got[key]), as_dense(&want[key]));
                // The SMO methods' kernel values now round differently from when the golden models were
                // written (dense LIBSVM rows; one-vs-rest Gram matrices by blocked products, FMA RBF
                // columns), and SMO stops at another point within its tolerance: 2.6e-7 (svm-ovr) to
                // 2.3e-5 (SVM+) relative, 8e-8 absolute on a coefficient of 3e-4 (svm-ovr).
                let smo = name.starts_with("svm") || name.contains("svmplus");
                // The golden plain-hinge models (and Power SVM's, a hinge per round) kept the active-set
                // solve's ridge: their margin examples at |d| ≈ 1e-13–2e-12, gap 5e-13. The exact finish now
                // refines it away (|d| ≤ 5e-15, gap ≤ 2e-15), which moves coefficients by up to 1.7e-11
                // relative (hinge-ovr).
                let ridge = matches!(name.as_str(), "hinge" | "hinge-ovr" | "power");
                // The Newton methods stop by a gradient rule (tol 1e-6 relative); the equilibrated Newton
                // directions (#35: a ridge relative to each variable's curvature) take another path to it
                // (gsu: 4 Newton steps instead of 5, coefficients 2e-11 relative apart; subspace 4e-9,
                // ksvm-igsu 9.5e-7), within what that rule decides.
                let (rel, floor) = if smo {
                    (1e-4, 1.0)
                } else if ridge {
                    (5e-11, 0.0)
                } else {
                    (1e-5, 0.0)
                };
                numbers_close(&got, &want, rel, floor, &format!("{name}.{key}"));
            }
        }
    }
}

#[test]
fn params_file_equals_the_flags_and_version_2_round_trips() {
    let dir = temp_dir("params");
    for (name, train, _) in cases() {
        let from_flags = dir.join(format!("{name}.flags.json"));
        ok(&usvm(
            &[&["train".to_string()][..], &train, &["--model".into(), from_flags.display().to_string()]].concat(),
        ));
        let written = read_json(&from_flags);
        // The stored params, as a --params file, with the data flags only.
        let params = dir.join(format!("{name}.params.json"));
        std::fs::write(&params, written["params"].to_string()).unwrap();
        let mut data_args = Vec::new();
        let mut it = train.iter();
        while let Some(a) = it.next() {
            if matches!(a.as_str(), "--data" | "--var" | "--privileged" | "--seed") {
                data_args.push(a.clone());
                data_args.push(it.next().unwrap().clone());
            } else if a == "--accept-unconverged" {
                data_args.push(a.clone());
            } else if a.starts_with("--") && !matches!(a.as_str(), "--no-intercept" | "--no-shrinking") {
                it.next();
            }
        }
        let from_file = dir.join(format!("{name}.file.json"));
        let args = [
            &["train".to_string(), "--params".into(), params.display().to_string()][..],
            &data_args,
            &["--model".into(), from_file.display().to_string()],
        ]
        .concat();
        ok(&usvm(&args));
        let a = std::fs::read_to_string(&from_flags).unwrap();
        assert_eq!(a, std::fs::read_to_string(&from_file).unwrap(), "{name}: --params differs from the flags");
        // Version 2 round-trips bit for bit: predict reads it, and re-serialising gives the same text.
        let file: usvm::ModelFile = usvm::ModelFile::from_json(&a).unwrap();
        assert_eq!(file.to_json() + "\n", a, "{name}");
        usvm::MethodParams::from_value(file.params.as_ref().unwrap()).unwrap();
    }
}

#[test]
fn unknown_methods_and_fields_are_named() {
    let dir = temp_dir("bad");
    let data = tests_dir().join("data/train.svm").display().to_string();
    let model = dir.join("m.json").display().to_string();
    let params = dir.join("p.json");
    let train = |p: &str| {
        std::fs::write(&params, p).unwrap();
        usvm(&["train", "--params", &params.display().to_string(), "--data", &data, "--model", &model])
    };
    assert!(fails(&train(r#"{"method": "gsv"}"#)).contains("\"gsv\""));
    assert!(fails(&train(r#"{"method": "gsu", "radius_scale": 2}"#)).contains("radius_scale"));
    assert!(fails(&train(r#"{"method": "svm", "kernel": {"type": "rbf", "gama": 1}}"#)).contains("kernel.gama"));
    let e = fails(&usvm(&["train", "--method", "gsu", "--radius-scale", "2", "--data", &data, "--model", &model]));
    assert!(e.contains("--radius-scale") && e.contains("gsu"), "{e}");
    let e = fails(&usvm(&[
        "train", "--method", "svm", "--kernel", "linear", "--gamma", "2", "--data", &data, "--model", &model,
    ]));
    assert!(e.contains("--gamma"), "{e}");
    assert!(!Path::new(&model).exists(), "no model file after a failure");
}

#[test]
fn help_has_a_heading_per_method_and_every_default() {
    let help = ok(&usvm(&["train", "--help"]));
    for (name, _) in usvm::params::METHODS {
        assert!(help.contains(&format!("  {name}: ")), "no defaults line for {name}");
    }
    for heading in [
        "Method gsu:",
        "Method sampling:",
        "Method power:",
        "Method svm:",
        "Method ksvm-igsu:",
        "Method sqhinge-gsu:",
        "Method besvm:",
        "Method rsvmplus:",
        "Method tsvc:",
    ] {
        assert!(help.contains(heading), "no heading {heading}");
    }
    assert!(help.contains("regularization.C=1.0") && help.contains("regularization.lambda=0.01"));
}

#[test]
fn a_solver_that_stops_short_fails_unless_accepted() {
    let dir = temp_dir("strict");
    let model = dir.join("m.json");
    let input = ["--data", &data("train.svm"), "--var", &data("train.var.svm")];
    let limited = ["--method", "gsu", "--max-iter", "1", "--tol", "1e-12"];
    let train = |extra: &[&str]| {
        let mut args = vec!["train", "--model", s(&model)];
        args.extend(input.iter().chain(&limited).chain(extra));
        usvm(&args)
    };
    // Default: exit 1 naming the method and the reason, nothing written (--strict, the old flag, is the same).
    for strict in [&[][..], &["--strict"]] {
        let err = fails(&train(strict));
        assert!(
            err.starts_with(
                "error: gsu: the solver stopped at the iteration limit before converging after 1 iterations"
            ),
            "{err}"
        );
        assert!(err.contains("no model written (--accept-unconverged writes it anyway"), "{err}");
        assert!(err.contains("; raise --max-iter"), "what to change: {err}");
        assert!(!model.exists());
    }
    // --accept-unconverged: a warning naming the method and the reason, and the model.
    let err = ok_stderr(&train(&["--accept-unconverged"]));
    assert!(err.contains("warning: gsu") && err.contains("iteration limit"), "{err}");
    assert!(model.exists());
    // cv fails on the first fit that stopped short; --accept-unconverged counts them.
    let mut cv = vec!["cv", "--folds", "3", "--grid", "lambda=0.01,0.1"];
    cv.extend(input.iter().chain(&limited));
    let err = fails(&usvm(&cv));
    assert!(err.contains("gsu stopped short in a cross-validation fit: stopped at the iteration limit"), "{err}");
    cv.push("--accept-unconverged");
    let err = ok_stderr(&usvm(&cv));
    assert!(err.contains("did not converge in 3 of 3 cross-validation fits at lambda=0.01"), "{err}");
}
