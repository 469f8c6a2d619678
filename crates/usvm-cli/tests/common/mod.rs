//! The shared harness of the CLI's integration tests: run the `usvm` binary, find the fixtures, make
//! scratch directories, and check outcomes.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

/// Runs the `usvm` binary built for these tests.
pub fn usvm<S: AsRef<OsStr>>(args: &[S]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_usvm")).args(args).output().expect("run usvm")
}

/// The path of a fixture in tests/data.
pub fn data(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name).display().to_string()
}

/// The tests folder (fixtures in data/, golden files in golden/).
pub fn tests_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests")
}

/// A fresh, empty, uniquely named scratch directory under Cargo's target/tmp; removed when dropped unless
/// the test is panicking (so a failure leaves its files to look at).
pub fn temp_dir(name: &str) -> Scratch {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "usvm-cli-test-{}-{}-{name}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temp dir");
    Scratch(dir)
}

/// A scratch directory that removes itself when dropped (see [`temp_dir`]).
pub struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// Asserts success; returns standard output.
pub fn ok(out: &Output) -> String {
    assert!(out.status.success(), "usvm failed ({:?}): {}", out.status, String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Asserts success; returns standard error (the notes a successful run prints).
pub fn ok_stderr(out: &Output) -> String {
    ok(out);
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts failure (any nonzero status); returns standard error.
pub fn fails(out: &Output) -> String {
    assert!(!out.status.success(), "usvm should have failed: {}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts exit status 1 with one line on standard error containing every needle.
pub fn fails_with_all(out: &Output, needles: &[&str]) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "not one line: {err}");
    for n in needles {
        assert!(err.contains(n), "{err:?} does not contain {n:?}");
    }
}

/// Asserts exit status 1 with one line on standard error containing `needle`.
pub fn fails_with(out: &Output, needle: &str) {
    fails_with_all(out, &[needle]);
}

/// A path as an owned string.
pub fn p(path: &Path) -> String {
    path.display().to_string()
}

/// A path as a string slice.
pub fn s(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

/// A JSON file.
pub fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("read")).expect("json")
}

/// The score column (the second) of a `usvm predict` output file.
pub fn scores(path: &Path) -> Vec<f64> {
    score_text(&std::fs::read_to_string(path).expect("read"))
}

/// The score column (the second) of `usvm predict` output text.
pub fn score_text(text: &str) -> Vec<f64> {
    text.lines().skip(1).map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap()).collect()
}
