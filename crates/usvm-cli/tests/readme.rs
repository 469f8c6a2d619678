//! The README's shell examples run as written. Every fenced block tagged `sh` runs, in the order of the
//! README, as one `bash -euo pipefail` script in a scratch folder that links the repository's `crates/`
//! and `docs/` (so `D=crates/usvm-cli/tests/data` and `docs/figures/...` resolve to the shipped files),
//! with the built `usvm` first on `PATH`; later blocks may read what earlier ones wrote. A block that names
//! `usvm` but is not tagged `sh` (or `text`, for output shown) fails the test, so no example goes untested.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The README's fenced blocks: (info string, first line number, text).
fn blocks(readme: &str) -> Vec<(String, usize, String)> {
    let mut out = Vec::new();
    let mut open: Option<(String, usize, String)> = None;
    for (k, line) in readme.lines().enumerate() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(info)) => open = Some((info.trim().to_string(), k + 1, String::new())),
            (Some(_), Some(_)) => out.push(open.take().expect("an open block")),
            (Some((_, _, text)), None) => {
                text.push_str(line);
                text.push('\n');
            }
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "README.md: a fenced block is never closed");
    out
}

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("the repository")
}

#[test]
fn every_shell_example_in_the_readme_runs() {
    let root = repository();
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let blocks = blocks(&readme);
    for (info, line, text) in &blocks {
        let names_usvm = text.lines().any(|l| l.trim_start().starts_with("usvm "));
        assert!(
            !names_usvm || matches!(info.as_str(), "sh" | "text" | "python"),
            "README.md:{line}: a block with usvm commands must be tagged sh (tested) or text (output shown)"
        );
    }
    let scratch = std::env::temp_dir().join(format!("usvm-readme-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    for folder in ["crates", "docs"] {
        std::os::unix::fs::symlink(root.join(folder), scratch.join(folder)).unwrap();
    }
    let bin = Path::new(env!("CARGO_BIN_EXE_usvm")).parent().unwrap().to_path_buf();
    let path =
        std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())))
            .unwrap();
    let mut ran = 0;
    for (_, line, text) in blocks.iter().filter(|b| b.0 == "sh") {
        let out = Command::new("bash")
            .args(["-euo", "pipefail", "-c", text])
            .current_dir(&scratch)
            .env("PATH", &path)
            .output()
            .expect("run bash");
        assert!(
            out.status.success(),
            "README.md:{line}: the block failed ({}):\n{text}\nstderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        ran += 1;
    }
    assert!(ran >= 8, "only {ran} shell blocks ran");
    let _ = std::fs::remove_dir_all(&scratch);
}
