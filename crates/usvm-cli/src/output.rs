//! Output helpers: atomic file writes and progress bars.

use std::io::Write;
use std::path::Path;

use anyhow::Result;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Writes `contents` to a temporary file beside `path`, then renames it into place: readers never see a
/// partial file, and a failure leaves nothing behind.
pub fn write_atomically(path: &Path, contents: impl AsRef<[u8]>) -> Result<()> {
    write_all_atomically(&[(path, contents.as_ref())])
}

/// Writes every file to a temporary beside it and, only once all are written, renames them into place: a
/// failure (a missing folder, a full disk) leaves no new file and every old one untouched.
pub fn write_all_atomically(files: &[(&Path, &[u8])]) -> Result<()> {
    let mut temps = Vec::with_capacity(files.len());
    let cleanup = |temps: &[std::path::PathBuf]| temps.iter().for_each(|t| drop(std::fs::remove_file(t)));
    for &(path, contents) in files {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let Some(name) = path.file_name() else {
            cleanup(&temps);
            anyhow::bail!("{}: not a file path", path.display());
        };
        let tmp = dir.join(format!(".{}.tmp{}", name.to_string_lossy(), std::process::id()));
        let write = || -> std::io::Result<()> {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(contents)?;
            f.sync_all()
        };
        let written = write();
        temps.push(tmp);
        if let Err(e) = written {
            cleanup(&temps);
            return Err(anyhow::Error::new(e).context(format!("writing {}", path.display())));
        }
    }
    for (k, (&(path, _), tmp)) in files.iter().zip(&temps).enumerate() {
        if let Err(e) = std::fs::rename(tmp, path) {
            cleanup(&temps[k..]);
            return Err(anyhow::Error::new(e).context(format!("writing {}", path.display())));
        }
    }
    Ok(())
}

/// A progress bar on standard error, drawn only on a terminal and only once the run has lasted a second.
pub fn progress_bar(total: u64, unit: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
    let style =
        ProgressStyle::with_template(&format!("{{elapsed_precise}} [{{bar:40}}] {{pos}}/{{len}} {unit} (eta {{eta}})"))
            .expect("valid template")
            .progress_chars("=> ");
    bar.set_style(style);
    if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        let shown = bar.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_secs(1));
            if !shown.is_finished() {
                shown.set_draw_target(ProgressDrawTarget::stderr());
            }
        });
    }
    bar
}
