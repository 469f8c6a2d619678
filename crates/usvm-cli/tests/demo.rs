//! Runs the built `usvm demo` on a small configuration and checks its JSON report.

use std::process::{Command, Output};

fn demo(extra: &[&str], tag: &str) -> (Output, serde_json::Value) {
    let path = std::env::temp_dir().join(format!("usvm-demo-test-{tag}-{}.json", std::process::id()));
    let output = Command::new(env!("CARGO_BIN_EXE_usvm"))
        .args(["demo", "--splits", "2", "--folds", "3"])
        .args(extra)
        .arg("--json")
        .arg(&path)
        .output()
        .expect("run usvm");
    assert!(output.status.success(), "usvm demo failed: {}", String::from_utf8_lossy(&output.stderr));
    let text = std::fs::read_to_string(&path).expect("JSON report written");
    let _ = std::fs::remove_file(&path);
    (output, serde_json::from_str(&text).expect("valid JSON"))
}

#[test]
fn demo_writes_a_sane_json_report() {
    let (output, report) = demo(&[], "paper");
    assert_eq!(report["dataset"], "wdbc");
    assert_eq!(report["splits"], 2);
    assert_eq!(report["folds"], 3);
    assert_eq!(report["se_rule"], "paper");
    let results = report["results"].as_array().expect("results array");
    let methods: Vec<&str> = results.iter().map(|r| r["method"].as_str().expect("method name")).collect();
    assert_eq!(methods, ["LSVM", "LSVM-iso", "Power SVM", "LSVM-GSU"]);
    for r in results {
        for key in ["test_accuracy_mean", "paper_accuracy"] {
            let a = r[key].as_f64().unwrap_or_else(|| panic!("{key} missing in {r}"));
            assert!(a > 0.85 && a <= 1.0, "{key} = {a} out of (0.85, 1] in {r}");
        }
        let std = r["test_accuracy_std"].as_f64().expect("test_accuracy_std");
        assert!(std.is_finite() && std >= 0.0, "bad std in {r}");
        // Every split's accuracy (a multiple of 1/57) and chosen λ (on the grid); their mean is the mean.
        let acc: Vec<f64> = r["test_accuracies"].as_array().unwrap().iter().map(|a| a.as_f64().unwrap()).collect();
        let lambdas = r["lambdas"].as_array().unwrap();
        assert_eq!((acc.len(), lambdas.len()), (2, 2), "{r}");
        assert!(acc.iter().all(|a| ((a * 57.0).round() - a * 57.0).abs() < 1e-9), "{acc:?}");
        assert!(lambdas.iter().all(|l| l.as_f64().unwrap().log2().fract() == 0.0), "{lambdas:?}");
        let mean = r["test_accuracy_mean"].as_f64().unwrap();
        assert!((acc.iter().sum::<f64>() / 2.0 - mean).abs() < 1e-12, "{r}");
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("LSVM-GSU") && stdout.contains("97.14"), "table missing: {stdout}");
    assert!(stdout.contains("(paper)") && stdout.contains("paired, LSVM-GSU − LSVM per split"), "{stdout}");
}

#[test]
fn demo_offers_the_squared_standard_error_rule() {
    let (output, report) = demo(&["--se-rule", "range-squared"], "squared");
    assert_eq!(report["se_rule"], "range-squared");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("(range-squared)"), "{stdout}");
    let help = Command::new(env!("CARGO_BIN_EXE_usvm")).args(["demo", "--help"]).output().expect("run usvm");
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("--se-rule") && help.contains("paper") && help.contains("range-squared"), "{help}");
}
