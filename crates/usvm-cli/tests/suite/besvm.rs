//! `usvm train --method besvm` end to end: train, predict through the model file, and bad flags.

use crate::common;

use common::*;

#[test]
fn besvm_trains_predicts_and_rejects_bad_flags() {
    let dir = std::env::temp_dir().join(format!("usvm-besvm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/train.svm");
    let model = dir.join("be.json");
    let scores = dir.join("scores.txt");
    let model_s = model.to_str().unwrap();
    let out = usvm(&[
        "train",
        "--method",
        "besvm",
        "--data",
        data,
        "--similarity",
        "rbf,linear",
        "--basis-size",
        "50%",
        "--basis-selection",
        "kmedoids",
        "--model",
        model_s,
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&model).unwrap();
    assert!(text.contains("\"basis_expansion\"") && text.contains("\"method\": \"besvm\""));
    let out = usvm(&["predict", "--model", model_s, "--data", data, "--output", scores.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(std::fs::read_to_string(&scores).unwrap().lines().count() > 2);
    // Bad flags: one line naming the flag, exit 1, no model written.
    let bad = dir.join("bad.json");
    for (flags, needle) in [
        (vec!["--similarity", "rigid"], "need a shape HxWxC"),
        (vec!["--similarity", "cosine"], "--similarity"),
        (vec!["--basis-size", "0"], "--basis-size"),
        (vec!["--similarity", "rigid", "--shape", "3x3"], "dimension mismatch"),
    ] {
        let mut args = vec!["train", "--method", "besvm", "--data", data, "--model", bad.to_str().unwrap()];
        args.extend(flags);
        let out = usvm(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains(needle) && err.trim().lines().count() == 1, "{err}");
        assert!(!bad.exists());
    }
    std::fs::remove_dir_all(&dir).ok();
}
