//! The documentation's shell examples run as written. The pages are the README and the site's guide
//! (`docs/guide/*.md`); every fenced block tagged `sh` runs, in the order of its page, with the page's
//! blocks as one `bash -euo pipefail` script each, in a scratch folder per page that links the
//! repository's `crates/` and `docs/` (so `D=crates/usvm-cli/tests/data` and `docs/figures/...` resolve to
//! the shipped files), with the built `usvm` first on `PATH`; later blocks may read what earlier ones of
//! the same page wrote. A block that names `usvm` but is not tagged `sh` (or `text`/`console`, for output
//! shown and for commands that build for minutes) fails the test, so no example goes untested by mistake.
//! The Python blocks are run by `python/tests/test_docs.py`, the Rust block as a doctest of `usvm`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A page's fenced blocks: (info string, first line number, text).
fn blocks(page: &str) -> Vec<(String, usize, String)> {
    let mut out = Vec::new();
    let mut open: Option<(String, usize, String)> = None;
    for (k, line) in page.lines().enumerate() {
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
    assert!(open.is_none(), "a fenced block is never closed");
    out
}

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("the repository")
}

/// The README and the guide's pages, as paths relative to the repository.
fn pages(root: &Path) -> Vec<PathBuf> {
    let mut guide: Vec<PathBuf> = std::fs::read_dir(root.join("docs/guide"))
        .expect("docs/guide")
        .map(|e| e.expect("a guide page").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| p.strip_prefix(root).expect("inside the repository").to_path_buf())
        .collect();
    guide.sort();
    std::iter::once(PathBuf::from("README.md")).chain(guide).collect()
}

/// Runs a page's `sh` blocks in a scratch folder of their own; returns how many ran.
fn run_page(root: &Path, page: &Path, path_var: &std::ffi::OsStr) -> usize {
    let text = std::fs::read_to_string(root.join(page)).expect("a page");
    let blocks = blocks(&text);
    for (info, line, text) in &blocks {
        let names_usvm = text.lines().any(|l| l.trim_start().starts_with("usvm "));
        assert!(
            !names_usvm || matches!(info.as_str(), "sh" | "text" | "console" | "python"),
            "{}:{line}: a block with usvm commands must be tagged sh (tested) or text/console (shown)",
            page.display()
        );
    }
    let name = page.to_string_lossy().replace('/', "_");
    let scratch = std::env::temp_dir().join(format!("usvm-docs-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    for folder in ["crates", "docs"] {
        std::os::unix::fs::symlink(root.join(folder), scratch.join(folder)).unwrap();
    }
    let mut ran = 0;
    for (_, line, text) in blocks.iter().filter(|b| b.0 == "sh") {
        let out = Command::new("bash")
            .args(["-euo", "pipefail", "-c", text])
            .current_dir(&scratch)
            .env("PATH", path_var)
            .output()
            .expect("run bash");
        assert!(
            out.status.success(),
            "{}:{line}: the block failed ({}):\n{text}\nstderr:\n{}",
            page.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        ran += 1;
    }
    let _ = std::fs::remove_dir_all(&scratch);
    ran
}

#[test]
fn every_shell_example_in_the_documentation_runs() {
    let root = repository();
    let bin = Path::new(env!("CARGO_BIN_EXE_usvm")).parent().unwrap().to_path_buf();
    let path =
        std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())))
            .unwrap();
    let pages = pages(&root);
    assert!(pages.len() >= 8, "the guide's pages are missing: {pages:?}");
    let ran: usize = pages.iter().map(|page| run_page(&root, page, &path)).sum();
    assert!(ran >= 10, "only {ran} shell blocks ran");
}
