//! End-to-end tests of `usvm train`, `usvm predict` and `usvm cv` on the fixtures in tests/data.
//!
//! Golden outputs live in tests/golden and are compared numerically (relative tolerance 1e-9).
//! Regenerate them with `USVM_BLESS=1 cargo test -p usvm-cli --test suite cli::`.

use crate::common;

use common::*;

use std::path::Path;

use serde_json::Value;

// ---------------------------------------------------------------------------------------------------
// Numeric golden comparison

fn close(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

fn json_close(got: &Value, want: &Value, path: &str, skip: &[&str]) -> Result<(), String> {
    match (got, want) {
        (Value::Number(a), Value::Number(b)) => {
            let (a, b) = (a.as_f64().unwrap(), b.as_f64().unwrap());
            if close(a, b) { Ok(()) } else { Err(format!("{path}: {a} != {b}")) }
        }
        (Value::Array(a), Value::Array(b)) => {
            if a.len() != b.len() {
                return Err(format!("{path}: length {} != {}", a.len(), b.len()));
            }
            a.iter().zip(b).enumerate().try_for_each(|(k, (x, y))| json_close(x, y, &format!("{path}[{k}]"), skip))
        }
        (Value::Object(a), Value::Object(b)) => {
            let keys_a: Vec<_> = a.keys().collect();
            let keys_b: Vec<_> = b.keys().collect();
            if keys_a != keys_b {
                return Err(format!("{path}: keys {keys_a:?} != {keys_b:?}"));
            }
            for (k, x) in a {
                if !skip.contains(&k.as_str()) {
                    json_close(x, &b[k], &format!("{path}.{k}"), skip)?;
                }
            }
            Ok(())
        }
        (a, b) if a == b => Ok(()),
        (a, b) => Err(format!("{path}: {a} != {b}")),
    }
}

fn text_close(got: &str, want: &str) -> Result<(), String> {
    let (g, w): (Vec<&str>, Vec<&str>) = (got.lines().collect(), want.lines().collect());
    if g.len() != w.len() {
        return Err(format!("{} lines != {}", g.len(), w.len()));
    }
    for (n, (a, b)) in g.iter().zip(&w).enumerate() {
        let (ta, tb): (Vec<&str>, Vec<&str>) = (a.split_whitespace().collect(), b.split_whitespace().collect());
        let same = ta.len() == tb.len()
            && ta.iter().zip(&tb).all(|(x, y)| match (x.parse::<f64>(), y.parse::<f64>()) {
                (Ok(u), Ok(v)) => close(u, v),
                _ => x == y,
            });
        if !same {
            return Err(format!("line {}: '{a}' != '{b}'", n + 1));
        }
    }
    Ok(())
}

/// Compares `got` (a file) with tests/golden/`name`; with USVM_BLESS=1 overwrites the golden instead.
/// JSON keys in `skip` are not compared (timings).
fn golden(got: &Path, name: &str, skip: &[&str]) {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(name);
    let text = std::fs::read_to_string(got).expect("output written");
    if std::env::var("USVM_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(&golden, &text).expect("write golden");
        return;
    }
    let want = std::fs::read_to_string(&golden)
        .unwrap_or_else(|e| panic!("{}: {e} (run with USVM_BLESS=1 to create it)", golden.display()));
    let result = if name.ends_with(".json") {
        let (g, w): (Value, Value) = (serde_json::from_str(&text).unwrap(), serde_json::from_str(&want).unwrap());
        json_close(&g, &w, "$", skip)
    } else {
        text_close(&text, &want)
    };
    if let Err(e) = result {
        panic!("{} differs from golden {}: {e}", got.display(), golden.display());
    }
}

// ---------------------------------------------------------------------------------------------------
// End to end

const REPORT_KEYS: [&str; 10] = [
    "converged",
    "duality_gap",
    "gradient_norm",
    "method",
    "n_features",
    "n_iter",
    "n_samples",
    "objective",
    "termination",
    "train_seconds",
];
const METRICS_KEYS: [&str; 6] = ["accuracy", "average_precision", "f1", "n", "precision", "recall"];

fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().expect("object").keys().cloned().collect();
    k.sort();
    k
}

/// train (gsu, with Platt) → predict (with probability and metrics) on one input format.
fn end_to_end(tag: &str, train_input: &[String], test_input: &[String], uncertain: bool) {
    let dir = temp_dir(tag);
    let (model, report, scores, metrics) =
        (dir.join("model.json"), dir.join("report.json"), dir.join("scores.txt"), dir.join("metrics.json"));
    let mut args: Vec<String> =
        ["train", "--method", "gsu", "--lambda", "0.05", "--probability"].map(String::from).to_vec();
    args.extend_from_slice(train_input);
    args.extend(["--model".into(), p(&model), "--report".into(), p(&report)]);
    ok(&usvm(&args));
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(keys(&r), REPORT_KEYS);
    assert_eq!((r["method"].as_str(), r["converged"].as_bool()), (Some("gsu"), Some(true)));
    assert_eq!((r["n_samples"].as_u64(), r["n_features"].as_u64()), (Some(24), Some(3)));
    let m: Value = serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    assert_eq!(m["format"], "usvm-model");
    assert!(m["platt"]["a"].as_f64().unwrap() < 0.0, "Platt slope should be negative: {m}");

    let mut args: Vec<String> = vec!["predict".into(), "--model".into(), p(&model)];
    args.extend_from_slice(test_input);
    args.extend(["--output".into(), p(&scores), "--metrics".into(), p(&metrics), "--probability".into()]);
    ok(&usvm(&args));
    let text = std::fs::read_to_string(&scores).unwrap();
    let header = text.lines().next().unwrap();
    let want =
        if uncertain { "prediction score probability p_positive_uncertain" } else { "prediction score probability" };
    assert_eq!(header, want);
    assert_eq!(text.lines().count(), 11);
    let me: Value = serde_json::from_str(&std::fs::read_to_string(&metrics).unwrap()).unwrap();
    assert_eq!(keys(&me), METRICS_KEYS);
    assert_eq!(me["n"], 10);

    golden(&model, &format!("{tag}.model.json"), &[]);
    golden(&report, &format!("{tag}.report.json"), &["train_seconds", "gradient_norm"]);
    golden(&scores, &format!("{tag}.scores.txt"), &[]);
    golden(&metrics, &format!("{tag}.metrics.json"), &[]);
    let _ = std::fs::remove_dir_all(&dir);
}

fn strings(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

#[test]
fn end_to_end_svmgsu() {
    let train =
        strings(&["--means", &data("train.means"), "--labels", &data("train.labels"), "--cov", &data("train.cov")]);
    let test = strings(&["--means", &data("test.means"), "--labels", &data("test.labels"), "--cov", &data("test.cov")]);
    end_to_end("svmgsu", &train, &test, true);
}

#[test]
fn end_to_end_libsvm() {
    let train = strings(&["--data", &data("train.svm"), "--var", &data("train.var.svm")]);
    let test = strings(&["--data", &data("test.svm"), "--var", &data("test.var.svm")]);
    end_to_end("libsvm", &train, &test, true);
}

#[test]
fn end_to_end_csv() {
    let train = strings(&["--csv", &data("train.csv"), "--var-csv", &data("train.var.csv"), "--label-col", "label"]);
    let test = strings(&["--csv", &data("test.csv")]);
    end_to_end("csv", &train, &test, false);
}

#[test]
fn every_method_and_cov_type_trains() {
    let dir = temp_dir("methods");
    let model = dir.join("m.json");
    let input = ["--data", &data("train.svm"), "--var", &data("train.var.svm")];
    let cases: Vec<Vec<&str>> = vec![
        vec!["--method", "hinge", "--C", "10"],
        vec!["--method", "iso"],
        vec!["--method", "sampling", "--samples", "5", "--seed", "3"],
        vec!["--method", "power", "--radius-scale", "0.5"],
        vec!["--method", "gsu", "--subspace-variance", "0.9"],
        // SGD's budget ends before its gradient rule is met here: accepted, with a warning.
        vec!["--method", "gsu", "--solver", "sgd", "--iterations", "200", "--batch", "8", "--accept-unconverged"],
        vec!["--method", "gsu", "--cov-type", "iso"],
        vec!["--method", "gsu", "--cov-type", "diag", "--no-intercept"],
        vec!["--method", "gsu", "--cov-type", "lowrank", "--tol", "1e-8", "--max-iter", "50"],
        vec!["--method", "gsu", "--cov-type", "full"],
        vec!["--method", "gsu", "--cov-type", "none"],
    ];
    for case in cases {
        let mut args = vec!["train"];
        args.extend(&case);
        args.extend(input);
        args.extend(["--model", model.to_str().unwrap()]);
        ok(&usvm(&args));
        let m: Value = serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
        let method = case[1];
        assert_eq!(m["method"], method, "{case:?}");
        if case.contains(&"--no-intercept") {
            assert_eq!(m["intercept"], 0.0);
        }
        if let Some(k) = case.iter().position(|&a| a == "--C") {
            // The model file stores the C given (C = 1/(λℓ) is applied at fit time).
            let c: f64 = case[k + 1].parse().unwrap();
            assert_eq!(m["params"]["regularization"]["C"].as_f64().unwrap(), c);
        }
        std::fs::remove_file(&model).unwrap();
    }
    // GSU with diag vs full covariances from the same diagonal variances: the same model.
    let fit = |cov: &str| -> Value {
        let args = [
            "train",
            "--method",
            "gsu",
            "--cov-type",
            cov,
            input[0],
            input[1],
            input[2],
            input[3],
            "--model",
            model.to_str().unwrap(),
        ];
        ok(&usvm(&args));
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap()
    };
    let (a, b) = (fit("diag"), fit("full"));
    json_close(&a["coef"], &b["coef"], "coef", &[]).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn weights_file_changes_the_fit_and_is_checked() {
    let dir = temp_dir("weights");
    let weights = dir.join("w.txt");
    let text: String = (0..24).map(|i| format!("{}\n", if i % 3 == 0 { 5.0 } else { 1.0 })).collect();
    std::fs::write(&weights, text).unwrap();
    let (m1, m2) = (dir.join("a.json"), dir.join("b.json"));
    // GSU with variances: every example's loss is smooth and positive, so every weight moves the optimum
    // (a hinge SVM on separable data would ignore weights that do not bind).
    let var = data("train.var.svm");
    ok(&usvm(&["train", "--method", "gsu", "--data", &data("train.svm"), "--var", &var, "--model", &p(&m1)]));
    ok(&usvm(&[
        "train",
        "--method",
        "gsu",
        "--data",
        &data("train.svm"),
        "--var",
        &var,
        "--weights",
        &p(&weights),
        "--model",
        &p(&m2),
    ]));
    assert_ne!(std::fs::read_to_string(&m1).unwrap(), std::fs::read_to_string(&m2).unwrap());
    std::fs::write(&weights, "1\n2\n").unwrap();
    let m3 = dir.join("c.json");
    let out = usvm(&[
        "train",
        "--method",
        "hinge",
        "--data",
        &data("train.svm"),
        "--weights",
        &p(&weights),
        "--model",
        &p(&m3),
    ]);
    assert!(!out.status.success() && !m3.exists());
    assert!(String::from_utf8_lossy(&out.stderr).contains("2 weights for 24 examples"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn one_vs_rest_train_predict() {
    let dir = temp_dir("ovr");
    let (model, report, scores, metrics) =
        (dir.join("model.json"), dir.join("report.json"), dir.join("scores.txt"), dir.join("metrics.json"));
    ok(&usvm(&[
        "train",
        "--method",
        "gsu",
        "--data",
        &data("multi.svm"),
        "--var",
        &data("multi.var.svm"),
        "--model",
        &p(&model),
        "--report",
        &p(&report),
    ]));
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let per_class = r["per_class"].as_array().expect("per_class for one-vs-rest");
    assert_eq!(per_class.len(), 3);
    let sum: f64 = per_class.iter().map(|c| c["n_iter"].as_f64().unwrap()).sum();
    assert_eq!(r["n_iter"].as_f64().unwrap(), sum);
    ok(&usvm(&[
        "predict",
        "--model",
        &p(&model),
        "--csv",
        &data("multi.csv"),
        "--output",
        &p(&scores),
        "--metrics",
        &p(&metrics),
    ]));
    let text = std::fs::read_to_string(&scores).unwrap();
    assert_eq!(text.lines().next().unwrap(), "prediction score_1 score_2 score_3");
    // The prediction is the argmax of the scores.
    for line in text.lines().skip(1) {
        let t: Vec<f64> = line.split_whitespace().map(|x| x.parse().unwrap()).collect();
        let best = (1..4).max_by(|&a, &b| t[a].total_cmp(&t[b])).unwrap();
        assert_eq!(t[0], best as f64, "{line}");
    }
    let me: Value = serde_json::from_str(&std::fs::read_to_string(&metrics).unwrap()).unwrap();
    assert_eq!(keys(&me), METRICS_KEYS);
    golden(&scores, "ovr.scores.txt", &[]);
    golden(&metrics, "ovr.metrics.json", &[]);
    // Platt on more classes: one sigmoid per class, normalised probabilities.
    let (x_model, x_scores) = (dir.join("x.json"), dir.join("x.txt"));
    ok(&usvm(&["train", "--method", "gsu", "--data", &data("multi.svm"), "--probability", "--model", &p(&x_model)]));
    assert_eq!(read_json(&x_model)["platt_per_output"].as_array().unwrap().len(), 3);
    let predict = ["predict", "--model", &p(&x_model), "--data", &data("multi.svm"), "--probability", "--output"];
    ok(&usvm(&[&predict[..], &[&p(&x_scores)]].concat()));
    let text = std::fs::read_to_string(&x_scores).unwrap();
    for line in text.lines().skip(1) {
        let t: Vec<f64> = line.split_whitespace().map(|x| x.parse().unwrap()).collect();
        assert!((t[4..].iter().sum::<f64>() - 1.0).abs() < 1e-12, "{line}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The svm-gsu toy model `w = (2.5, -1, 0.125)`, `b = 0.75` on toy.svm: by hand, the scores are 2.75, -1.5,
/// 0.59375, 1.25 for labels +1, -1, +1, -1: tp = 2, fp = 1, tn = 1, fn = 0, so accuracy 3/4, precision 2/3,
/// recall 1, F1 = 2·2/(2·2 + 1) = 0.8; ranked (+, -, +, -), AP = ½·1 + ½·⅔ = ⅚.
#[test]
fn svmgsu_model_file_and_hand_computed_metrics() {
    let dir = temp_dir("toy");
    let (scores, metrics) = (dir.join("s.txt"), dir.join("m.json"));
    let toy = |f: &str| Path::new(env!("CARGO_MANIFEST_DIR")).join("../usvm/tests/data").join(f).display().to_string();
    ok(&usvm(&[
        "predict",
        "--model",
        &toy("toy.model"),
        "--data",
        &toy("toy.svm"),
        "--var",
        &toy("toy.var.svm"),
        "--output",
        &p(&scores),
        "--metrics",
        &p(&metrics),
    ]));
    let text = std::fs::read_to_string(&scores).unwrap();
    let rows: Vec<Vec<f64>> =
        text.lines().skip(1).map(|l| l.split_whitespace().map(|x| x.parse().unwrap()).collect()).collect();
    assert_eq!(text.lines().next().unwrap(), "prediction score p_positive_uncertain");
    let want = [(1.0, 2.75), (-1.0, -1.5), (1.0, 0.59375), (1.0, 1.25)];
    for (row, (pred, score)) in rows.iter().zip(want) {
        assert_eq!((row[0], row[1]), (pred, score));
    }
    // Example 3 has no variance: P = 1 for f > 0. Example 4: wᵀΣw = 0.05·(6.25 + 1 + 1/64), P = Φ(1.25/0.6027) ≈ 0.98096.
    assert_eq!(rows[2][2], 1.0);
    assert!((rows[3][2] - 0.980_96).abs() < 1e-4, "{}", rows[3][2]);
    let m: Value = serde_json::from_str(&std::fs::read_to_string(&metrics).unwrap()).unwrap();
    assert_eq!(m["n"], 4);
    for (k, v) in
        [("accuracy", 0.75), ("precision", 2.0 / 3.0), ("recall", 1.0), ("f1", 0.8), ("average_precision", 5.0 / 6.0)]
    {
        assert!((m[k].as_f64().unwrap() - v).abs() < 1e-15, "{k}: {} != {v}", m[k]);
    }
    // Platt scaling is not in an svm-gsu model: --probability is an error.
    let out = usvm(&[
        "predict",
        "--model",
        &toy("toy.model"),
        "--data",
        &toy("toy.svm"),
        "--output",
        &p(&dir.join("x.txt")),
        "--probability",
    ]);
    assert!(!out.status.success() && !dir.join("x.txt").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn predict_svmgsu_without_labels() {
    let dir = temp_dir("nolabels");
    let (model, scores) = (dir.join("m.json"), dir.join("s.txt"));
    ok(&usvm(&[
        "train",
        "--method",
        "hinge",
        "--means",
        &data("train.means"),
        "--labels",
        &data("train.labels"),
        "--model",
        &p(&model),
    ]));
    ok(&usvm(&["predict", "--model", &p(&model), "--means", &data("test.means"), "--output", &p(&scores)]));
    // In means-file order, the same scores as with labels (labels-file order) once sorted.
    let with = dir.join("s2.txt");
    ok(&usvm(&[
        "predict",
        "--model",
        &p(&model),
        "--means",
        &data("test.means"),
        "--labels",
        &data("test.labels"),
        "--output",
        &p(&with),
    ]));
    let sorted = |path: &Path| {
        let mut v: Vec<String> = std::fs::read_to_string(path).unwrap().lines().map(String::from).collect();
        v.sort();
        v
    };
    assert_eq!(sorted(&scores), sorted(&with));
    let out = usvm(&[
        "predict",
        "--model",
        &p(&model),
        "--means",
        &data("test.means"),
        "--output",
        &p(&dir.join("x.txt")),
        "--metrics",
        &p(&dir.join("x.json")),
    ]);
    assert!(!out.status.success() && !dir.join("x.txt").exists() && !dir.join("x.json").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cv_grid() {
    let dir = temp_dir("cv");
    let json = dir.join("cv.json");
    let run = || {
        let out = usvm(&[
            "cv",
            "--method",
            "power",
            "--data",
            &data("train.svm"),
            "--var",
            &data("train.var.svm"),
            "--folds",
            "3",
            "--seed",
            "2",
            "--grid",
            "lambda=2^-4..2^-2",
            "--grid",
            "radius-scale=1,2",
            "--json",
            &p(&json),
        ]);
        ok(&out);
        out
    };
    let first = run();
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!((v["folds"].as_u64(), v["seed"].as_u64()), (Some(3), Some(2)));
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 6);
    assert_eq!(results[0]["params"], serde_json::json!({"lambda": 0.0625, "radius_scale": 1}));
    let best = results.iter().map(|r| r["accuracy_mean"].as_f64().unwrap()).fold(f64::MIN, f64::max);
    assert_eq!(v["best"]["accuracy_mean"].as_f64().unwrap(), best);
    for r in results {
        let (m, s) = (r["accuracy_mean"].as_f64().unwrap(), r["accuracy_std"].as_f64().unwrap());
        assert!((0.0..=1.0).contains(&m) && s >= 0.0);
    }
    let stdout = String::from_utf8_lossy(&first.stdout);
    assert_eq!(stdout.matches('*').count(), 2, "{stdout}"); // the mark and the legend
    assert_eq!(String::from_utf8_lossy(&run().stdout), stdout, "same seed, same table");
    // Bad grids are usage errors reported on one line.
    // (degree: not a field of sampling; radius_scale: a field of power, not of sampling.)
    for grid in ["degree=1", "lambda=1e-3..1", "samples=1.5", "radius_scale=1"] {
        let out = usvm(&["cv", "--method", "sampling", "--data", &data("train.svm"), "--grid", grid]);
        assert_eq!(out.status.code(), Some(1), "{grid}");
        assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1, "{grid}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cv_split_over_tasks_and_merged_is_one_run() {
    let dir = temp_dir("cv-tasks");
    let args_seed = |seed: &str, extra: &[&str]| {
        let (train, var) = (data("train.svm"), data("train.var.svm"));
        let fixed = ["cv", "--method", "gsu", "--data", &train, "--var", &var, "--folds", "3", "--seed", seed];
        let grid = ["--grid", "lambda=2^-4..2^-1"];
        fixed.iter().chain(&grid).chain(extra).map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let args = |extra: &[&str]| args_seed("4", extra);
    let whole = dir.join("whole.json");
    let one = ok(&usvm(&args(&["--json", &p(&whole)])));
    let parts: Vec<String> = (0..3).map(|i| p(&dir.join(format!("part{i}.json")))).collect();
    for (i, part) in parts.iter().enumerate() {
        ok_stderr(&usvm(&args(&["--tasks", "3", "--task-index", &i.to_string(), "--json", part])));
    }
    let merged = dir.join("merged.json");
    let out = ok(&usvm(&["cv", "merge", &parts[2], &parts[0], &parts[1], "--json", &p(&merged)]));
    assert_eq!(out, one, "the merged table is the single run's");
    assert_eq!(std::fs::read_to_string(&merged).unwrap(), std::fs::read_to_string(&whole).unwrap());
    // A missing part, a part given twice, a part of another setup, a task index out of range.
    fails_with(&usvm(&["cv", "merge", &parts[0], &parts[1]]), "missing the parts of task(s) [2] of 3");
    fails_with(&usvm(&["cv", "merge", &parts[0], &parts[0], &parts[1]]), "task 0 is also");
    let other = p(&dir.join("other.json"));
    ok_stderr(&usvm(&args_seed("5", &["--tasks", "3", "--task-index", "1", "--json", &other])));
    fails_with(&usvm(&["cv", "merge", &parts[0], &other, &parts[2]]), "a part of another cross-validation");
    fails_with(
        &usvm(&args(&["--tasks", "3", "--task-index", "3", "--json", &p(&dir.join("x.json"))])),
        "--task-index 3",
    );
    fails_with(&usvm(&["cv", "merge", &data("train.svm")]), "not a part written by `usvm cv --tasks`");
    // Sizes in a part are checked before anything is allocated from them.
    let text = std::fs::read_to_string(&parts[0]).unwrap();
    let forged = p(&dir.join("forged.json"));
    std::fs::write(
        &forged,
        text.replace("\"folds\":3", "\"folds\":4611686018427387904").replace("\"tasks\":3", "\"tasks\":1"),
    )
    .unwrap();
    fails_with(
        &usvm(&["cv", "merge", &forged]),
        "forged.json: a damaged part (rerun its task): 4611686018427387904 folds",
    );
    std::fs::write(&forged, text.replace("\"tasks\":3", "\"tasks\":9223372036854775807")).unwrap();
    fails_with(&usvm(&["cv", "merge", &forged]), "task 0 of 9223372036854775807 holds");
    // Every number of a part is checked: accuracies in [0, 1], exactly its task's fits, each once.
    let part: serde_json::Value = serde_json::from_str(&text).unwrap();
    let forge = |edit: &dyn Fn(&mut Vec<serde_json::Value>)| {
        let mut part = part.clone();
        edit(part["fits"].as_array_mut().unwrap());
        std::fs::write(&forged, part.to_string()).unwrap();
        let mut merged = vec!["cv", "merge", &forged];
        merged.extend(parts[1..].iter().map(String::as_str));
        usvm(&merged)
    };
    for bad in [2.0, -3.0] {
        fails_with(&forge(&|fits| fits[0][2] = serde_json::json!(bad)), "outside [0, 1]");
    }
    fails_with(&forge(&|fits| drop(fits.pop())), "fits, expected");
    fails_with(&forge(&|fits| fits[1] = fits[0].clone()), "is given twice");
    fails_with(&forge(&|fits| fits[0][1] = serde_json::json!(1)), "is not a fit of task 0 of 3");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn help_states_defaults() {
    for (sub, defaults) in [
        (
            "train",
            &[
                "solver.max_iter=1000",
                "max_rounds=100",
                "samples=10",
                "regularization.lambda=0.01",
                "regularization.C=1.0",
                "[default: auto]",
                "solver.name=\"exact\"",
            ][..],
        ),
        ("predict", &["default: none", "default: off"][..]),
        ("cv", &["[default: 5]", "regularization.lambda=0.01", "default: no grid"][..]),
    ] {
        let out = usvm(&[sub, "--help"]);
        ok(&out);
        let text = String::from_utf8_lossy(&out.stdout);
        for d in defaults {
            assert!(text.contains(d), "usvm {sub} --help lacks '{d}'");
        }
    }
}

// ---------------------------------------------------------------------------------------------------
// Bad input: non-zero exit, exactly one line on stderr naming the problem, and no output file.

struct BadCase {
    name: &'static str,
    /// Files to create in the input directory: (file name, contents).
    files: Vec<(&'static str, String)>,
    /// Arguments; `IN/x` is replaced by the input directory's file x, `OUT/x` by the output directory's.
    args: Vec<String>,
    /// Substrings the error line must contain.
    expect: Vec<String>,
}

fn bad(name: &'static str, files: &[(&'static str, &str)], args: &str, expect: &[&str]) -> BadCase {
    BadCase {
        name,
        files: files.iter().map(|(f, c)| (*f, c.to_string())).collect(),
        args: args.split_whitespace().map(String::from).collect(),
        expect: expect.iter().map(|s| s.to_string()).collect(),
    }
}

#[test]
fn bad_input_matrix() {
    let train = std::fs::read_to_string(data("train.svm")).unwrap();
    let four_features = "+1 1:1 4:2\n-1 2:1\n";
    let cases = vec![
        bad(
            "missing file",
            &[],
            "train --method gsu --data IN/nope.svm --model OUT/m.json",
            &["nope.svm: No such file or directory"],
        ),
        bad(
            "missing var file",
            &[("a.svm", &train)],
            "train --method gsu --data IN/a.svm --var IN/nope.var --model OUT/m.json",
            &["nope.var: No such file or directory"],
        ),
        bad(
            "malformed line",
            &[("a.svm", "+1 1:0.5\n-1 2:abc\n")],
            "train --method gsu --data IN/a.svm --model OUT/m.json",
            &["a.svm:2: field '2:abc'", "not a number"],
        ),
        bad(
            "nan",
            &[("a.svm", "+1 1:nan\n-1 1:1\n")],
            "train --method gsu --data IN/a.svm --model OUT/m.json",
            &["a.svm:1: field '1:nan'", "non-finite"],
        ),
        bad(
            "inf in csv",
            &[("a.csv", "x,y,label\n1,2,1\n3,inf,-1\n")],
            "train --method gsu --csv IN/a.csv --model OUT/m.json",
            &["a.csv:3:", "inf", "non-finite"],
        ),
        bad(
            "negative variance",
            &[("a.svm", "+1 1:1\n-1 1:-1\n"), ("a.var", "+1 1:0.1\n-1 1:-0.5\n")],
            "train --method gsu --data IN/a.svm --var IN/a.var --model OUT/m.json",
            &["a.var:2:", "1:-0.5", "negative variance"],
        ),
        bad(
            "negative svm-gsu variance",
            &[("a.means", "a 1:1\nb 1:-1\n"), ("a.labels", "a 1\nb -1\n"), ("a.cov", "a 1,1:0.1\nb 1,1:-2\n")],
            "train --method gsu --means IN/a.means --labels IN/a.labels --cov IN/a.cov --model OUT/m.json",
            &["a.cov:2:", "1,1:-2", "negative"],
        ),
        bad(
            "non-numeric label",
            &[("a.svm", "+1 1:1\nabc 1:2\n")],
            "train --method gsu --data IN/a.svm --model OUT/m.json",
            &["a.svm:2: field 'abc'", "label"],
        ),
        bad(
            "non-numeric csv label",
            &[("a.csv", "x,label\n1,1\n2,yes\n")],
            "train --method gsu --csv IN/a.csv --model OUT/m.json",
            &["a.csv:3:", "'yes'"],
        ),
        bad(
            "duplicate ids",
            &[("a.means", "a 1:1\nb 1:-1\na 1:2\n"), ("a.labels", "a 1\nb -1\n")],
            "train --method gsu --means IN/a.means --labels IN/a.labels --model OUT/m.json",
            &["a.means:3:", "'a'"],
        ),
        bad(
            "duplicate label ids",
            &[("a.means", "a 1:1\nb 1:-1\n"), ("a.labels", "a 1\nb -1\nb 1\n")],
            "train --method gsu --means IN/a.means --labels IN/a.labels --model OUT/m.json",
            &["a.labels:3:", "'b'"],
        ),
        bad(
            "empty file",
            &[("a.svm", "")],
            "train --method gsu --data IN/a.svm --model OUT/m.json",
            &["a.svm:0:", "empty input"],
        ),
        bad("empty csv", &[("a.csv", "")], "train --method gsu --csv IN/a.csv --model OUT/m.json", &["a.csv", "empty"]),
        bad(
            "single class",
            &[("a.svm", "+1 1:1\n+1 1:2\n")],
            "train --method gsu --data IN/a.svm --model OUT/m.json",
            &["a.svm", "single class"],
        ),
        bad(
            "single class cv",
            &[("a.svm", "+1 1:1\n+1 1:2\n")],
            "cv --method gsu --data IN/a.svm --folds 2",
            &["a.svm", "single class"],
        ),
        bad(
            "negative weight",
            &[("a.svm", "+1 1:1\n-1 1:2\n"), ("w.txt", "1\n-1\n")],
            "train --method gsu --data IN/a.svm --weights IN/w.txt --model OUT/m.json",
            &["w.txt:2: field '-1'", "negative"],
        ),
        bad(
            "bad hyper-parameter",
            &[("a.svm", &train)],
            "train --method gsu --lambda 0 --data IN/a.svm --model OUT/m.json --report OUT/r.json",
            &["lambda"],
        ),
        bad(
            "n-features below the data's",
            &[("b.svm", four_features)],
            "train --method hinge --data IN/b.svm --n-features 3 --model OUT/m.json",
            &["b.svm:1: field '4:2'", "exceeds the number of features (3)"],
        ),
        bad(
            "malformed predict input",
            &[("a.svm", &train), ("b.svm", "+1 1:1\n-1 1:x\n")],
            "predict --model IN/model.json --data IN/b.svm --output OUT/s.txt --metrics OUT/m.json",
            &["b.svm:2: field '1:x'"],
        ),
        bad(
            "missing model",
            &[("a.svm", &train)],
            "predict --model IN/none.json --data IN/a.svm --output OUT/s.txt",
            &["none.json: No such file or directory"],
        ),
        bad(
            "corrupt json model",
            &[("a.svm", &train), ("bad.json", "{\"format\": 1}")],
            "predict --model IN/bad.json --data IN/a.svm --output OUT/s.txt",
            &["bad.json"],
        ),
        bad(
            "corrupt svm-gsu model",
            &[("a.svm", &train), ("bad.model", "SVM-GSU Model_File\nw 1 x\nb 0\n")],
            "predict --model IN/bad.model --data IN/a.svm --output OUT/s.txt",
            &["bad.model:2:", "x"],
        ),
    ];
    for case in cases {
        let (input, output) = (temp_dir("bad-in"), temp_dir("bad-out"));
        for (f, c) in &case.files {
            std::fs::write(input.join(f), c).unwrap();
        }
        if case.args[0] == "predict" {
            ok(&usvm(&[
                "train",
                "--method",
                "hinge",
                "--data",
                &data("train.svm"),
                "--model",
                &p(&input.join("model.json")),
            ]));
        }
        let args: Vec<String> = case
            .args
            .iter()
            .map(|a| {
                a.replace("IN/", &format!("{}/", input.display())).replace("OUT/", &format!("{}/", output.display()))
            })
            .collect();
        let out = usvm(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{}: status {:?}, stderr {stderr}", case.name, out.status);
        assert_eq!(stderr.lines().count(), 1, "{}: stderr is not one line: {stderr}", case.name);
        for e in &case.expect {
            assert!(stderr.contains(e.as_str()), "{}: '{}' not in: {stderr}", case.name, e);
        }
        let left: Vec<_> = std::fs::read_dir(&output).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert!(left.is_empty(), "{}: files left behind: {left:?}", case.name);
        let _ = std::fs::remove_dir_all(&input);
        let _ = std::fs::remove_dir_all(&output);
    }
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &["train", "--method", "gsu"][..],
        &["train", "--method", "gsu", "--data", "a", "--csv", "b", "--model", "m"],
        &["train", "--method", "gsu", "--data", "a", "--lambda", "1", "--C", "1", "--model", "m"],
    ] {
        let out = usvm(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        // clap's whole message: what is wrong, the usage line and where to read more.
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("error: ") && err.contains("Usage: usvm train") && err.contains("--help"), "{err}");
    }
    // A missing required argument is named.
    let err = fails(&usvm(&["train", "--method", "gsu", "--data", "a"]));
    assert!(err.contains("the following required arguments were not provided:\n  --model <FILE>"), "{err}");
}

#[test]
fn negative_numbers_are_values_and_huge_scores_print_short() {
    let dir = temp_dir("negative-and-huge");
    let model = dir.join("m.json");
    let train = ["train", "--method", "gsu", "--data", &data("train.svm"), "--model", s(&model)];
    // `--lambda -1` is a value that the method refuses, not an unknown flag.
    fails_with(&usvm(&[&train[..], &["--lambda", "-1"]].concat()), "invalid value '-1' for '--lambda'");
    fails_with(&usvm(&[&train[..], &["--C", "-2"]].concat()), "'--C'");
    assert!(!model.exists());
    ok(&usvm(&train));
    // Coefficients scaled by 1e300: finite scores in the shortest round-trip form, not 300 digits.
    let mut m = read_json(&model);
    for c in m["coef"].as_array_mut().unwrap() {
        *c = serde_json::json!(c.as_f64().unwrap() * 1e300);
    }
    let big = dir.join("big.json");
    std::fs::write(&big, m.to_string()).unwrap();
    let out = dir.join("scores.txt");
    ok(&usvm(&["predict", "--model", s(&big), "--data", &data("train.svm"), "--output", s(&out)]));
    let text = std::fs::read_to_string(&out).unwrap();
    let line = text.lines().nth(1).unwrap();
    assert!(line.len() < 40 && line.split_whitespace().nth(1).unwrap().contains('e'), "{line}");
    assert!(score_text(&text).iter().all(|f| f.is_finite() && f.abs() > 1e250));
}

#[test]
fn metrics_refuse_labels_the_model_never_saw() {
    let dir = temp_dir("unknown-labels");
    let model = dir.join("m.json");
    ok(&usvm(&["train", "--method", "hinge", "--data", &data("train.svm"), "--model", s(&model)]));
    let text = std::fs::read_to_string(data("train.svm")).unwrap();
    let relabelled: String = text
        .lines()
        .enumerate()
        .map(|(i, l)| if i % 3 == 0 { format!("3{}\n", &l[l.find(' ').unwrap()..]) } else { format!("{l}\n") })
        .collect();
    let test = dir.join("test.svm");
    std::fs::write(&test, relabelled).unwrap();
    let (scores, metrics) = (dir.join("s.txt"), dir.join("metrics.json"));
    let out =
        usvm(&["predict", "--model", s(&model), "--data", s(&test), "--output", s(&scores), "--metrics", s(&metrics)]);
    fails_with_all(&out, &["--metrics", "test.svm", "[3]", "[-1, 1]"]);
    assert!(!scores.exists() && !metrics.exists());
    // Without --metrics the examples are scored as usual.
    ok(&usvm(&["predict", "--model", s(&model), "--data", s(&test), "--output", s(&scores)]));
}

#[test]
fn a_failed_output_leaves_no_new_file() {
    let dir = temp_dir("all-or-nothing");
    let missing = dir.join("no-such-folder");
    let (model, scores) = (dir.join("m.json"), dir.join("s.txt"));
    // train: the report cannot be written, so neither is the model.
    let train = ["train", "--method", "gsu", "--data", &data("train.svm"), "--model", s(&model)];
    fails(&usvm(&[&train[..], &["--report", s(&missing.join("r.json"))]].concat()));
    assert!(!model.exists());
    ok(&usvm(&train));
    let before = std::fs::read_to_string(&model).unwrap();
    // A failed rerun leaves the old model as it was.
    fails(&usvm(&[&train[..], &["--lambda", "0.5", "--report", s(&missing.join("r.json"))]].concat()));
    assert_eq!(std::fs::read_to_string(&model).unwrap(), before);
    // predict: the metrics cannot be written, so neither are the scores.
    let predict = ["predict", "--model", s(&model), "--data", &data("train.svm"), "--output", s(&scores)];
    fails(&usvm(&[&predict[..], &["--metrics", s(&missing.join("m.json"))]].concat()));
    assert!(!scores.exists());
    // uncertainty repeated: the covariances cannot be written, so neither are the means and labels.
    let obs = dir.join("obs.csv");
    std::fs::write(&obs, "id,a,b,y\nu,1,2,1\nu,2,2,1\nv,0,0,-1\nv,1,1,-1\n").unwrap();
    let (m, l) = (dir.join("means"), dir.join("labels"));
    let args = ["uncertainty", "repeated", "--input", s(&obs), "--group-col", "id", "--out-means", s(&m)];
    fails(&usvm(&[&args[..], &["--out-labels", s(&l), "--out-cov", s(&missing.join("c"))]].concat()));
    assert!(!m.exists() && !l.exists());
    let leftovers: Vec<_> = std::fs::read_dir(&dir).unwrap().filter_map(|e| e.ok()).map(|e| e.file_name()).collect();
    assert!(leftovers.iter().all(|n| !n.to_string_lossy().contains(".tmp")), "{leftovers:?}");
}

#[test]
fn huge_indices_and_dimensions_are_clear_errors_not_allocations() {
    let dir = temp_dir("huge-indices");
    let model = dir.join("m.json");
    let write = |name: &str, text: &str| {
        let f = dir.join(name);
        std::fs::write(&f, text).unwrap();
        f
    };
    // One stray index would have made the fit allocate terabytes.
    for (index, method) in [("1000000000000", "gsu"), ("1000000000", "hinge"), ("4294967296", "svm")] {
        let f = write("big.svm", &format!("+1 {index}:1\n-1 1:1\n"));
        let out = usvm(&["train", "--method", method, "--data", s(&f), "--model", s(&model)]);
        fails_with_all(&out, &["big.svm:1", &format!("'{index}:1'"), "--n-features"]);
    }
    let labels = write("x.labels", "a 1\nb -1\n");
    let train_svmgsu = |means: &str, cov: &str| {
        let (means, cov) = (write("x.means", means), write("x.cov", cov));
        let args = ["train", "--method", "gsu", "--means", s(&means), "--labels", s(&labels), "--cov", s(&cov)];
        usvm(&[&args[..], &["--model", s(&model)]].concat())
    };
    let out = train_svmgsu("a 1:1 4294967296:2\nb 1:-1\n", "a 1,1:0.5\nb 1,1:0.5\n");
    fails_with_all(&out, &["x.means:1", "4294967296"]);
    let out = train_svmgsu("a 1:1\nb 1:-1\n", "a 4294967296,4294967296:0.5\nb 1,1:0.5\n");
    fails_with_all(&out, &["x.cov:1", "4294967296"]);
    assert!(!model.exists());
    // A model file that states a dimension its coefficients do not have.
    ok(&usvm(&["train", "--method", "hinge", "--data", &data("train.svm"), "--model", s(&model)]));
    let mut m = read_json(&model);
    m["n_features"] = serde_json::json!(4294967296u64);
    let lying = write("lying.json", &m.to_string());
    let out = usvm(&["predict", "--model", s(&lying), "--data", &data("train.svm"), "--output", s(&dir.join("s"))]);
    fails_with_all(&out, &["lying.json", "n_features is 4294967296"]);
}

#[test]
fn outputs_are_byte_identical_at_one_and_two_threads() {
    let dir = temp_dir("threads");
    let run = |threads: &str, args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_usvm"))
            .args(args)
            .env("RAYON_NUM_THREADS", threads)
            .output()
            .expect("run usvm");
        ok(&out);
    };
    let input = ["--data", &data("train.svm"), "--var", &data("train.var.svm")];
    let cases: [&[&str]; 4] = [
        &["--method", "gsu"],
        &["--method", "gsu", "--solver", "sgd", "--seed", "3"],
        &["--method", "svm", "--kernel", "rbf"],
        &["--method", "sampling", "--seed", "5"],
    ];
    for (k, case) in cases.iter().enumerate() {
        let texts: Vec<String> = ["1", "2"]
            .iter()
            .map(|t| {
                let model = dir.join(format!("m{k}-{t}.json"));
                run(t, &[&["train", "--model", s(&model)][..], &input[..], case].concat());
                std::fs::read_to_string(&model).unwrap()
            })
            .collect();
        assert_eq!(texts[0], texts[1], "{case:?}");
    }
    let cv: Vec<String> = ["1", "2"]
        .iter()
        .map(|t| {
            let json = dir.join(format!("cv-{t}.json"));
            let args = ["cv", "--method", "gsu", "--folds", "3", "--grid", "lambda=0.01,0.1", "--json", s(&json)];
            run(t, &[&args[..], &input[..]].concat());
            std::fs::read_to_string(&json).unwrap()
        })
        .collect();
    assert_eq!(cv[0], cv[1]);
}

#[test]
fn train_says_what_it_did_in_one_line_unless_quiet() {
    let dir = temp_dir("summary");
    let model = dir.join("m.json");
    let train = ["train", "--method", "hinge", "--data", &data("train.svm"), "--model", s(&model)];
    let line = ok_stderr(&usvm(&train));
    assert!(line.starts_with("trained hinge on 24 × 3 (2 classes): objective "), "{line}");
    assert!(line.contains(" iterations, converged, ") && line.trim_end().ends_with("m.json"), "{line}");
    assert_eq!(line.lines().count(), 1);
    assert!(ok_stderr(&usvm(&[&train[..], &["--quiet"]].concat())).is_empty());
}
