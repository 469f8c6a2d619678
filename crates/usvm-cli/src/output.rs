//! Output helpers: atomic file writes and progress bars.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Writes `contents` to a temporary file beside `path`, then renames it into place: readers never see a
/// partial file, and a failure leaves nothing behind.
pub fn write_atomically(path: &Path, contents: impl AsRef<[u8]>) -> Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().with_context(|| format!("{}: not a file path", path.display()))?;
    let tmp = dir.join(format!(".{}.tmp{}", name.to_string_lossy(), std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(contents.as_ref())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        anyhow::Error::new(e).context(format!("writing {}", path.display()))
    })
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
