//! Outputs commit as one: a bad destination touches nothing, a failure or a kill at any step of a
//! multi-file write leaves the complete old set or the complete new set, and no temporary survives a signal,
//! a failure, or (after the next read or write) a kill.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;

/// `uncertainty translation` of 4 images of 4 × 4 pixels, shifted by `pixels`, into means, labels and
/// covariances in `d`, with the given environment.
fn translation(d: &Path, pixels: &str, env: &[(&str, &str)]) -> Output {
    let img = d.join("img.csv");
    if !img.exists() {
        let header: Vec<String> = (0..16).map(|k| format!("p{k}")).collect();
        let rows: Vec<String> = (0..4)
            .map(|i| {
                format!(
                    "{},{}",
                    (0..16).map(|k| ((k * 7 + i * 3) % 17).to_string()).collect::<Vec<_>>().join(","),
                    i % 2
                )
            })
            .collect();
        std::fs::write(&img, format!("{},y\n{}\n", header.join(","), rows.join("\n"))).unwrap();
    }
    let (m, l, c) = outputs(d);
    let args = ["uncertainty", "translation", "--images", s(&img), "--height", "4", "--width", "4", "--pixels", pixels];
    let out = ["--out-means", s(&m), "--out-labels", s(&l), "--out-cov", s(&c)];
    let mut command = Command::new(env!("CARGO_BIN_EXE_usvm"));
    command.args(args).args(out).envs(env.iter().copied());
    command.output().expect("run usvm")
}

fn outputs(d: &Path) -> (PathBuf, PathBuf, PathBuf) {
    (d.join("means"), d.join("labels"), d.join("cov"))
}

/// `usvm train --method gsu` on the three files of `d` (reading them settles any interrupted write first).
fn train_on_outputs(d: &Path, model: &Path) -> Output {
    let (m, l, c) = outputs(d);
    usvm(&["train", "--method", "gsu", "--means", s(&m), "--labels", s(&l), "--cov", s(&c), "--model", s(model)])
}

/// The three files' contents (None where a file is missing).
fn set(d: &Path) -> [Option<Vec<u8>>; 3] {
    let (m, l, c) = outputs(d);
    [m, l, c].map(|p| std::fs::read(p).ok())
}

/// The hidden files (temporaries, old versions, journals) in `d`.
fn leftovers(d: &Path) -> Vec<String> {
    let names = std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned());
    names.filter(|n| n.starts_with('.')).collect()
}

const POINTS: [&str; 5] = ["staged", "rename 0", "rename 1", "rename 2", "renamed"];

#[test]
fn a_failure_at_any_step_leaves_the_old_set_and_no_temporary() {
    for point in POINTS {
        let d = temp_dir("fail");
        ok(&translation(&d, "1", &[]));
        let old = set(&d);
        let err = fails(&translation(&d, "2", &[("USVM_FAULT", &format!("fail@{point}"))]));
        assert!(err.contains("injected failure"), "{point}: {err}");
        assert_eq!(set(&d), old, "{point}: the old set must stay");
        assert_eq!(leftovers(&d), Vec::<String>::new(), "{point}");
        // With no old set, a failure leaves no file at all.
        let fresh = temp_dir("fail-fresh");
        fails(&translation(&fresh, "2", &[("USVM_FAULT", &format!("fail@{point}"))]));
        assert_eq!(set(&fresh), [None, None, None], "{point}");
        assert!(std::fs::read_dir(&*fresh).unwrap().all(|e| e.unwrap().file_name() == "img.csv"), "{point}");
    }
}

#[test]
fn a_kill_at_any_step_leaves_a_whole_set_for_the_next_reader() {
    let reference = temp_dir("kill-reference");
    ok(&translation(&reference, "2", &[]));
    let new = set(&reference);
    for point in POINTS {
        let d = temp_dir("kill");
        ok(&translation(&d, "1", &[]));
        let old = set(&d);
        assert_ne!(old, new);
        let out = translation(&d, "2", &[("USVM_FAULT", &format!("kill@{point}"))]);
        assert!(!out.status.success(), "{point}: the process was to abort");
        // The next usvm command to read the files finishes (or drops) the interrupted write first.
        let model = d.join("model.json");
        ok(&train_on_outputs(&d, &model));
        let now = set(&d);
        let expected = if point == "staged" { &old } else { &new };
        assert!(&now == expected, "{point}: a mixed or wrong set after the kill");
        assert_eq!(leftovers(&d), Vec::<String>::new(), "{point}");
    }
}

#[test]
fn a_temporary_left_by_a_dead_process_goes_with_the_next_write() {
    let d = temp_dir("stale");
    let mut child = Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let (m, _, _) = outputs(&d);
    let stale = d.join(format!(".means.tmp{dead}"));
    std::fs::write(&stale, "half a file").unwrap();
    ok(&translation(&d, "1", &[]));
    assert!(m.exists());
    assert_eq!(leftovers(&d), Vec::<String>::new());
}

#[test]
fn sigint_and_sigterm_remove_the_temporaries_and_exit_nonzero() {
    for signal in ["-INT", "-TERM"] {
        let d = temp_dir("signal");
        translation(&d, "1", &[]); // writes img.csv (and a first set)
        let old = set(&d);
        let (m, l, c) = outputs(&d);
        let img = d.join("img.csv");
        let child = Command::new(env!("CARGO_BIN_EXE_usvm"))
            .args(["uncertainty", "translation", "--images", s(&img), "--height", "4", "--width", "4"])
            .args(["--pixels", "2", "--out-means", s(&m), "--out-labels", s(&l), "--out-cov", s(&c)])
            .env("USVM_FAULT", "pause@staged")
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let start = std::time::Instant::now();
        while leftovers(&d).len() < 6 {
            assert!(start.elapsed().as_secs() < 60, "the temporaries never appeared");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let sent = Command::new("kill").args([signal, &child.id().to_string()]).status().unwrap();
        assert!(sent.success());
        let out = child.wait_with_output().unwrap();
        assert!(!out.status.success(), "{signal}: exit status {:?}", out.status);
        assert!(String::from_utf8_lossy(&out.stderr).contains("interrupted"), "{signal}");
        assert_eq!(leftovers(&d), Vec::<String>::new(), "{signal}");
        assert_eq!(set(&d), old, "{signal}");
    }
}

#[test]
fn a_folder_or_missing_folder_as_an_output_touches_nothing() {
    let d = temp_dir("destinations");
    let folder = d.join("a_folder");
    std::fs::create_dir(&folder).unwrap();
    let model = d.join("m.json");
    std::fs::write(&model, "old model").unwrap();
    let train = ["train", "--method", "hinge", "--csv", &data("train.csv"), "--model", s(&model)];
    for bad in [&folder, &d.join("missing/r.json")] {
        let err = fails(&usvm(&[&train[..], &["--report", s(bad)]].concat()));
        assert!(err.contains("folder"), "{err}");
        assert_eq!(std::fs::read_to_string(&model).unwrap(), "old model");
    }
    let err = fails(&usvm(&[&train[..], &["--report", s(&model)]].concat()));
    assert!(err.contains("named twice"), "{err}");

    ok(&usvm(&["train", "--method", "hinge", "--csv", &data("train.csv"), "--model", s(&model)]));
    let scores = d.join("p.txt");
    let predict = ["predict", "--model", s(&model), "--csv", &data("test.csv"), "--output", s(&scores)];
    fails(&usvm(&[&predict[..], &["--metrics", s(&folder)]].concat()));
    assert!(!scores.exists());

    let (m, l, _) = outputs(&d);
    let img = d.join("img.csv");
    translation(&d, "1", &[]);
    std::fs::remove_file(&m).unwrap();
    std::fs::remove_file(&l).unwrap();
    let args = ["uncertainty", "translation", "--images", s(&img), "--height", "4", "--width", "4", "--pixels", "1"];
    fails(&usvm(&[&args[..], &["--out-means", s(&m), "--out-labels", s(&l), "--out-cov", s(&folder)]].concat()));
    assert!(!m.exists() && !l.exists());
    assert_eq!(leftovers(&d), Vec::<String>::new());
}

#[test]
fn a_journal_that_names_other_files_is_not_acted_on() {
    let d = temp_dir("forged-journal");
    ok(&translation(&d, "1", &[]));
    let old = set(&d);
    let mut child = Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    // A journal "rolling back" a destination it has no temporary or old version for would delete it.
    let keep = d.join("keep.txt");
    std::fs::write(&keep, "precious").unwrap();
    let journal = d.join(format!(".usvm-commit.{dead}.json"));
    let entry = serde_json::json!({"temporary": d.join("elsewhere"), "destination": keep, "old": null});
    let text = serde_json::json!({"forward": false, "copies": [journal], "entries": [entry]}).to_string();
    std::fs::write(&journal, text).unwrap();
    let model = d.join("model.json");
    let err = fails(&train_on_outputs(&d, &model));
    assert!(err.contains("an unreadable commit journal; remove it"), "{err}");
    assert_eq!(std::fs::read_to_string(&keep).unwrap(), "precious");
    assert_eq!(set(&d), old);
}
