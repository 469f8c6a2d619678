//! `usvm train --method sqhinge-gsu`: both losses, both solvers, one-vs-rest on the three-class fixture,
//! the model file read back by `usvm predict`, and bad input (one line, exit status, no model file).

use crate::common;

use common::*;

#[test]
fn trains_both_losses_and_solvers_one_vs_rest() {
    let dir = temp_dir("train");
    let (means, var) = (data("multi.svm"), data("multi.var.svm"));
    let mut objectives = Vec::new();
    for (loss, solver) in [("thesis", "exact"), ("expected", "exact"), ("expected", "sgd"), ("thesis", "sgd")] {
        let model = dir.join(format!("{loss}-{solver}.json"));
        let report = dir.join(format!("{loss}-{solver}.report.json"));
        let (m, r) = (model.display().to_string(), report.display().to_string());
        let args = [
            "train",
            "--method",
            "sqhinge-gsu",
            "--loss",
            loss,
            "--solver",
            solver,
            "--data",
            &means,
            "--var",
            &var,
            "--lambda",
            "0.01",
            "--model",
            &m,
            "--report",
            &r,
        ];
        // The SGD flags are fields of the sgd solver only.
        // (SGD's budget ends before its gradient rule is met: accepted, with a warning.)
        let sgd = if solver == "sgd" {
            &["--iterations", "3000", "--batch", "8", "--accept-unconverged"][..]
        } else {
            &[][..]
        };
        let out = usvm(&[&args[..], sgd].concat());
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let report = read_json(&report);
        assert_eq!(report["method"], "sqhinge-gsu");
        assert_eq!(report["per_class"].as_array().unwrap().len(), 3);
        if solver == "exact" {
            assert_eq!(report["converged"], true);
        }
        objectives.push(report["objective"].as_f64().unwrap());
        let file = read_json(&model);
        assert_eq!(file["method"], "sqhinge-gsu");
        assert_eq!(file["params"]["loss"], loss);
        assert_eq!(file["classes"].as_array().unwrap().len(), 3);
        let (scores, metrics) = (dir.join("scores.txt"), dir.join("metrics.json"));
        let (s, mt) = (scores.display().to_string(), metrics.display().to_string());
        let out = usvm(&["predict", "--model", &m, "--data", &means, "--output", &s, "--metrics", &mt]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(read_json(&metrics)["accuracy"].as_f64().unwrap() > 0.8);
    }
    // The two losses are different objectives; SGD lands near L-BFGS on the convex one.
    assert!((objectives[0] - objectives[1]).abs() > 1e-3);
    assert!(objectives[2] >= objectives[1] * (1.0 - 1e-9) && objectives[2] <= 1.05 * objectives[1], "{objectives:?}");
}

#[test]
fn bad_input_is_one_line_and_writes_no_model() {
    let dir = temp_dir("bad");
    let model = dir.join("model.json");
    let m = model.display().to_string();
    let means = data("multi.svm");
    for (args, code, expect) in [
        (vec!["--loss", "quadratic"], 2, "--loss"),
        (vec!["--lambda=-1"], 1, "lambda"),
        (vec!["--tol", "0"], 1, "tol"),
        (vec!["--solver", "sgd", "--batch", "0"], 1, "batch"),
        (vec!["--subspace-variance", "0.5"], 1, "--subspace-variance"),
    ] {
        let mut all = vec!["train", "--method", "sqhinge-gsu", "--data", &means, "--model", &m];
        all.extend(args.iter().copied());
        let out = usvm(&all);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        // A usage error (2) is clap's whole message; any other error one line.
        if code == 1 {
            assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        }
        assert!(stderr.contains(expect), "{args:?}: {stderr}");
        assert!(!model.exists());
    }
}
