//! Runs the built `usvm demo` on a small configuration and checks its JSON report.

use std::process::Command;

#[test]
fn demo_writes_a_sane_json_report() {
    let path = std::env::temp_dir().join(format!("usvm-demo-test-{}.json", std::process::id()));
    let output = Command::new(env!("CARGO_BIN_EXE_usvm"))
        .args(["demo", "--splits", "2", "--folds", "3", "--json"])
        .arg(&path)
        .output()
        .expect("run usvm");
    assert!(output.status.success(), "usvm demo failed: {}", String::from_utf8_lossy(&output.stderr));
    let text = std::fs::read_to_string(&path).expect("JSON report written");
    let _ = std::fs::remove_file(&path);
    let report: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    assert_eq!(report["dataset"], "wdbc");
    assert_eq!(report["splits"], 2);
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
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("LSVM-GSU") && stdout.contains("97.14"), "table missing: {stdout}");
}
