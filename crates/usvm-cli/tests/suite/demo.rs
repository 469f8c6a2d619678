//! Runs the built `usvm demo` on small configurations and checks its JSON report and its comparisons.

use std::process::{Command, Output};

fn demo(extra: &[&str], tag: &str) -> (Output, serde_json::Value) {
    let path = std::env::temp_dir().join(format!("usvm-demo-test-{tag}-{}.json", std::process::id()));
    let partitions: &[&str] = if extra.contains(&"--cv-repeats") { &[] } else { &["--splits", "2"] };
    let output = Command::new(env!("CARGO_BIN_EXE_usvm"))
        .arg("demo")
        .args(partitions)
        .args(["--folds", "3"])
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
    assert_eq!((report["design"].as_str(), report["partitions"].as_u64()), (Some("random_splits"), Some(2)));
    assert_eq!((report["n_train"].as_u64(), report["n_test"].as_u64()), (Some(512), Some(57)));
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
    assert!(stdout.contains("(paper)") && stdout.contains("LSVM-GSU − LSVM"), "{stdout}");
    assert!(stdout.contains("corrected resampled t-test (Nadeau & Bengio 2003)"), "{stdout}");
    check_comparisons(&report, "corrected resampled t-test (Nadeau & Bengio 2003)");
}

/// Six pairwise comparisons, each a p-value in [0, 1] that Holm's adjustment does not lower.
fn check_comparisons(report: &serde_json::Value, test: &str) {
    assert_eq!(report["test"], test);
    let comparisons = report["comparisons"].as_array().expect("comparisons");
    assert_eq!(comparisons.len(), 6);
    let last = &comparisons[5];
    assert_eq!((last["method"].as_str(), last["baseline"].as_str()), (Some("LSVM-GSU"), Some("Power SVM")));
    for c in comparisons {
        let (p, holm) = (c["p_value"].as_f64().unwrap(), c["holm_p_value"].as_f64().unwrap());
        assert!((0.0..=1.0).contains(&p) && holm >= p && holm <= 1.0, "{c}");
    }
}

#[test]
fn demo_scores_repeated_cross_validation_with_its_corrected_test() {
    let (output, report) = demo(&["--cv-repeats", "1", "--outer-folds", "3"], "cv");
    assert_eq!((report["design"].as_str(), report["partitions"].as_u64()), (Some("repeated_k_fold"), Some(3)));
    assert_eq!(report["outer_folds"], 3);
    assert!(report["results"].as_array().unwrap().iter().all(|r| r["test_accuracies"].as_array().unwrap().len() == 3));
    check_comparisons(&report, "corrected repeated k-fold cv t-test (Bouckaert & Frank 2004)");
    assert!(String::from_utf8_lossy(&output.stdout).contains("1 × stratified 3-fold CV"));
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
    assert!(help.contains("--cv-repeats") && help.contains("--outer-folds"), "{help}");
    let both = Command::new(env!("CARGO_BIN_EXE_usvm"))
        .args(["demo", "--splits", "2", "--cv-repeats", "1"])
        .output()
        .expect("run usvm");
    assert!(!both.status.success() && String::from_utf8_lossy(&both.stderr).contains("cannot be used with"));
    for bad in [&["--cv-repeats", "0"][..], &["--cv-repeats", "1", "--outer-folds", "1"], &["--outer-folds", "3"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_usvm")).arg("demo").args(bad).output().expect("run usvm");
        assert!(!out.status.success(), "{bad:?} was accepted");
    }
}
