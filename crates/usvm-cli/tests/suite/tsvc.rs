//! `usvm train --method tsvc`: the two linear forms agree, kernels and per-example bounds work, bad
//! bounds are reported with file, line and field and write no model; an uncertified cone form warns,
//! returns the better solution, and fails under `--strict`.

use crate::common;

use common::*;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

fn train(dir: &Path, name: &str, extra: &[&str]) -> (Output, PathBuf) {
    let model = dir.join(format!("{name}.json"));
    let report = dir.join(format!("{name}.report.json"));
    let mut args = vec!["train", "--method", "tsvc", "--csv"];
    let csv = data("train.csv");
    args.push(&csv);
    let (m, r) = (model.display().to_string(), report.display().to_string());
    args.extend(["--model", &m, "--report", &r]);
    args.extend(extra);
    (usvm(&args), model)
}

#[test]
fn linear_forms_agree_and_kernels_train() {
    let dir = temp_dir("forms");
    let lin = ["--kernel", "linear", "--delta", "0.2", "--C", "1"];
    let (out, alt) = train(&dir, "alt", &lin);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (out, socp) = train(&dir, "socp", &[&lin[..], &["--form", "socp"]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (a, s) = (read_json(&alt), read_json(&socp));
    assert_eq!(a["method"], "tsvc");
    let close = |x: &Value, y: &Value| (x.as_f64().unwrap() - y.as_f64().unwrap()).abs() < 1e-4;
    let ca = a["coef"].as_array().unwrap();
    let cs = s["coef"].as_array().unwrap();
    assert!(ca.iter().zip(cs).all(|(x, y)| close(x, y)), "{ca:?} vs {cs:?}");
    let (ra, rs) = (read_json(&dir.join("alt.report.json")), read_json(&dir.join("socp.report.json")));
    assert!(ra["converged"].as_bool().unwrap() && rs["converged"].as_bool().unwrap());
    let (ja, js) = (ra["objective"].as_f64().unwrap(), rs["objective"].as_f64().unwrap());
    assert!((ja - js).abs() <= 1e-6 * ja, "{ja} vs {js}");
    // Per-example bounds and a kernel.
    let n = std::fs::read_to_string(data("train.csv")).unwrap().lines().count() - 1;
    let file = dir.join("delta.txt");
    std::fs::write(&file, (0..n).map(|i| format!("{}\n", 0.05 * (i % 5) as f64)).collect::<String>()).unwrap();
    let f = file.display().to_string();
    let (out, rbf) = train(&dir, "rbf", &["--kernel", "rbf", "--gamma", "0.5", "--delta-file", &f]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let m = read_json(&rbf);
    assert_eq!(m["kernel"]["type"], "rbf");
    let scores = dir.join("scores.txt");
    let out = usvm(&[
        "predict",
        "--model",
        &rbf.display().to_string(),
        "--csv",
        &data("test.csv"),
        "--output",
        &scores.display().to_string(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn bad_bounds_and_forms_exit_with_one_line_and_no_model() {
    let dir = temp_dir("bad");
    let file = dir.join("delta.txt");
    std::fs::write(&file, "0.1\n-0.2\n").unwrap();
    let f = file.display().to_string();
    for (extra, needle) in [
        (vec!["--kernel", "linear", "--delta-file", f.as_str()], "delta.txt:2: field '-0.2'"),
        (vec!["--kernel", "linear", "--delta", "-1"], "--delta"),
        (vec!["--kernel", "rbf", "--form", "socp"], "socp) needs the linear kernel"),
        (vec!["--kernel", "linear", "--norm-bound", "1"], "--norm-bound does not apply to --method tsvc"),
    ] {
        let (out, model) = train(&dir, "m", &extra);
        assert_eq!(out.status.code(), Some(1), "{extra:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{extra:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(!model.exists());
    }
}

#[test]
fn per_example_bounds_follow_the_folds_of_cross_validation() {
    let dir = temp_dir("cv-delta");
    let n = std::fs::read_to_string(data("train.csv")).unwrap().lines().count() - 1;
    let file = dir.join("delta.txt");
    let cv = |deltas: &dyn Fn(usize) -> f64| {
        std::fs::write(&file, (0..n).map(|i| format!("{}\n", deltas(i))).collect::<String>()).unwrap();
        let json = dir.join("cv.json");
        let args = ["cv", "--method", "tsvc", "--kernel", "linear", "--csv", &data("train.csv"), "--folds", "3"];
        ok(&usvm(&[&args[..], &["--delta-file", s(&file), "--json", s(&json)]].concat()));
        read_json(&json)["results"][0]["accuracy_mean"].as_f64().unwrap()
    };
    // The same bound for every example, once per example, equals the uniform --delta.
    let json = dir.join("uniform.json");
    let args = ["cv", "--method", "tsvc", "--kernel", "linear", "--csv", &data("train.csv"), "--folds", "3"];
    ok(&usvm(&[&args[..], &["--delta", "0.3", "--json", s(&json)]].concat()));
    let uniform = read_json(&json)["results"][0]["accuracy_mean"].as_f64().unwrap();
    assert_eq!(cv(&|_| 0.3), uniform);
    // Varying bounds run (each fold gets its own rows' bounds).
    assert!(cv(&|i| 0.1 * (i % 4) as f64) > 0.5);
}

#[test]
fn socp_on_the_non_separable_synthetic_set_fails_unless_accepted_then_takes_the_better_solution() {
    use usvm::svm::{Delta, TsvcForm, TsvcParams};
    use usvm_experiments::tsvc_synthetic::{NoiseScale, Target, trial};
    // The first trial of the paper's synthetic set (linear target, δ_i = σ_i, C = 1) where the cone form's
    // relaxation does not certify and the alternating rounds do better than its search over γ.
    let socp = |d: &usvm_experiments::tsvc_synthetic::Trial| {
        let params =
            TsvcParams { delta: Delta::PerExample(d.delta.clone()), form: TsvcForm::Socp, ..Default::default() };
        params.fit(&d.train).unwrap().reports[0].report.clone()
    };
    let data = (0..50)
        .map(|t| trial(Target::Linear, 50, 10, NoiseScale::StandardDeviation, 5000 + t))
        .find(|d| socp(d).fallback.is_some_and(|f| f.taken == usvm::Candidate::Alternating))
        .expect("a trial where the relaxation does not certify");
    let dir = temp_dir("socp-fallback");
    let x = match &data.train.features {
        usvm::Features::Dense(x) => x.to_array(),
        usvm::Features::Sparse(_) => unreachable!("the synthetic set is dense"),
    };
    let rows: String =
        x.rows().into_iter().zip(data.train.labels.iter()).map(|(r, y)| format!("{},{},{y}\n", r[0], r[1])).collect();
    let (csv, deltas) = (dir.join("train.csv"), dir.join("delta.txt"));
    std::fs::write(&csv, format!("x1,x2,label\n{rows}")).unwrap();
    std::fs::write(&deltas, data.delta.iter().map(|d| format!("{d}\n")).collect::<String>()).unwrap();
    let run = |name: &str, extra: &[&str]| {
        let (model, report) = (dir.join(format!("{name}.json")), dir.join(format!("{name}.report.json")));
        let args = ["train", "--method", "tsvc", "--kernel", "linear", "--C", "1", "--csv", s(&csv)];
        let files = ["--delta-file", s(&deltas), "--model", s(&model), "--report", s(&report)];
        (usvm(&[&args[..], &files, extra].concat()), model, report)
    };
    let (out, _, alt_report) = run("alt", &[]);
    let summary = ok_stderr(&out);
    assert!(summary.starts_with("trained tsvc on 50 × 2 (2 classes): objective ") && summary.lines().count() == 1);
    assert!(summary.contains(", converged, ") && !summary.contains("warning"), "{summary}");
    let (out, model, _) = run("socp", &["--form", "socp"]);
    let err = fails(&out);
    assert_eq!(out.status.code(), Some(1));
    assert!(err.contains("error: tsvc: the solver solved a relaxation that did not certify"), "{err}");
    assert!(!model.exists());
    let (out, _, socp_report) = run("socp", &["--form", "socp", "--accept-unconverged"]);
    let warning = ok_stderr(&out);
    for needle in ["warning: tsvc", "did not certify", "the alternating solution was taken"] {
        assert!(warning.contains(needle), "{warning:?} does not contain {needle:?}");
    }
    let (ra, rs) = (read_json(&alt_report), read_json(&socp_report));
    assert_eq!(rs["termination"], "not_certified");
    assert!(rs["objective"].as_f64().unwrap() <= ra["objective"].as_f64().unwrap());
}
