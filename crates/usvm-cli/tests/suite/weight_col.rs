//! `--weight-col NAME`: relevance degrees from a CSV column (issue #5), for every method, like `--weights`.

use crate::common;

use common::*;

/// train.csv with a weight column `w` inserted after `f1` (rows `skip` dropped), and the weights.
fn weighted_csv(weight: impl Fn(usize) -> String, skip: &[usize]) -> (String, Vec<String>) {
    let text = std::fs::read_to_string(data("train.csv")).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap().replacen(',', ",w,", 1);
    let mut out = vec![header];
    let mut weights = Vec::new();
    for (i, line) in lines.enumerate().filter(|(i, _)| !skip.contains(i)) {
        out.push(line.replacen(',', &format!(",{},", weight(i)), 1));
        weights.push(weight(i));
    }
    (out.join("\n") + "\n", weights)
}

#[test]
fn weight_column_equals_a_weights_file_for_every_method() {
    let dir = temp_dir("methods");
    let (csv, weights) = weighted_csv(|i| format!("{}", 1 + i % 3), &[]);
    let (wcsv, wfile) = (dir.join("w.csv"), dir.join("w.txt"));
    std::fs::write(&wcsv, csv).unwrap();
    std::fs::write(&wfile, weights.join("\n")).unwrap();
    let var = data("train.var.csv");
    let (wcsv_s, wfile_s, train) = (p(&wcsv), p(&wfile), data("train.csv"));
    for method in ["gsu", "iso", "hinge", "svm", "ksvm-igsu", "sqhinge-gsu"] {
        let (a, b) = (dir.join(format!("{method}-col.json")), dir.join(format!("{method}-file.json")));
        let common = ["train", "--method", method, "--lambda", "0.05", "--var-csv", &var];
        let mut col = common.to_vec();
        col.extend(["--csv", &wcsv_s, "--weight-col", "w", "--label-col", "label"]);
        let (ap, bp) = (p(&a), p(&b));
        col.extend(["--model", &ap]);
        ok(&usvm(&col));
        let mut file = common.to_vec();
        file.extend(["--csv", &train, "--weights", &wfile_s, "--model", &bp]);
        ok(&usvm(&file));
        assert_eq!(std::fs::read_to_string(&a).unwrap(), std::fs::read_to_string(&b).unwrap(), "{method}");
    }
    // predict skips the column too.
    let (s1, s2) = (dir.join("s1.txt"), dir.join("s2.txt"));
    let model = p(&dir.join("gsu-col.json"));
    ok(&usvm(&["predict", "--model", &model, "--csv", &p(&wcsv), "--weight-col", "w", "--output", &p(&s1)]));
    ok(&usvm(&["predict", "--model", &model, "--csv", &data("train.csv"), "--output", &p(&s2)]));
    assert_eq!(std::fs::read_to_string(&s1).unwrap(), std::fs::read_to_string(&s2).unwrap());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn zero_weights_drop_the_rows() {
    let dir = temp_dir("zeros");
    let zeros = [0, 5, 10];
    let (with_zeros, _) = weighted_csv(|i| if zeros.contains(&i) { "0".into() } else { "1".into() }, &[]);
    let (dropped, _) = weighted_csv(|_| "1".into(), &zeros);
    let (a, b) = (dir.join("a.csv"), dir.join("b.csv"));
    std::fs::write(&a, with_zeros).unwrap();
    std::fs::write(&b, dropped).unwrap();
    // Given λ, the losses are averaged with the weights, over Σc = 21: the same λ for both files.
    for method in ["gsu", "ksvm-igsu"] {
        let mut out = Vec::new();
        for (csv, lambda) in [(&a, "0.07"), (&b, "0.07")] {
            let name = csv.file_stem().unwrap().to_string_lossy();
            let model = dir.join(format!("{method}-{name}.json"));
            let s = dir.join(format!("{method}-{name}.txt"));
            ok(&usvm(&[
                "train",
                "--method",
                method,
                "--lambda",
                lambda,
                "--csv",
                &p(csv),
                "--weight-col",
                "w",
                "--model",
                &p(&model),
            ]));
            ok(&usvm(&["predict", "--model", &p(&model), "--csv", &data("train.csv"), "--output", &p(&s)]));
            out.push(scores(&s));
        }
        for (u, v) in out[0].iter().zip(&out[1]) {
            assert!((u - v).abs() < 1e-6 * (1.0 + v.abs()), "{method}: {u} vs {v}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_weight_columns_are_one_line_errors() {
    let dir = temp_dir("bad");
    let model = dir.join("m.json");
    for (bad, field, message) in
        [("-1", "-1", "negative weight"), ("abc", "abc", "not a number"), ("inf", "inf", "non-finite")]
    {
        let (csv, _) = weighted_csv(|i| if i == 3 { bad.into() } else { "1".into() }, &[]);
        let path = dir.join("w.csv");
        std::fs::write(&path, csv).unwrap();
        let out = usvm(&["train", "--method", "gsu", "--csv", &p(&path), "--weight-col", "w", "--model", &p(&model)]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && !model.exists());
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(&format!("{}:5: field '{field}'", p(&path))) && err.contains(message), "{err}");
    }
    let path = dir.join("w.csv");
    let out = usvm(&["train", "--method", "gsu", "--csv", &p(&path), "--weight-col", "weight", "--model", &p(&model)]);
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("no such column"));
    let out = usvm(&["train", "--method", "gsu", "--csv", &p(&path), "--weight-col", "label", "--model", &p(&model)]);
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("is the label column"));
    let w = dir.join("w.txt");
    std::fs::write(&w, "1\n".repeat(24)).unwrap();
    let out = usvm(&[
        "train",
        "--method",
        "gsu",
        "--csv",
        &p(&path),
        "--weight-col",
        "w",
        "--weights",
        &p(&w),
        "--model",
        &p(&model),
    ]);
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("not both"));
    let _ = std::fs::remove_dir_all(&dir);
}
