//! Output files that commit as one.
//!
//! A command's outputs (a model and its report; predictions and metrics; means, labels and covariances) are
//! replaced together or not at all:
//!
//! 1. **Check.** Every destination's folder exists, no destination is a folder, no two are the same file. An
//!    error here touches nothing.
//! 2. **Stage.** Each file is written to `.NAME.tmpPID` beside its destination and synced; an existing
//!    destination is kept aside as `.NAME.oldPID` (a hard link, else a copy).
//! 3. **Journal.** `.usvm-commit.PID.json`, which lists the set, is written and synced in every destination
//!    folder.
//! 4. **Rename** each temporary over its destination; then remove the old versions and the journals.
//!
//! A failure in step 4 first marks the journal "back", then restores the old set. A process killed in step 4
//! leaves its journal: before reading or writing a file, usvm finishes any journal a dead process left beside it
//! ([`settle`]) — forward (the new set is complete on disk) or back — so usvm never reads a mixed set. A process
//! killed before step 4 leaves only temporaries, which the next read or write of the same destination removes;
//! SIGINT, SIGTERM and SIGHUP remove them before the process exits ([`remove_temporaries_on_signal`]).

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, Result, anyhow, bail};
use serde::{Deserialize, Serialize};

/// The files a signal handler removes: this process's temporaries not yet renamed.
static TEMPORARIES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn temporaries() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    TEMPORARIES.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// On SIGINT, SIGTERM or SIGHUP: remove this process's temporaries and exit with status 130. A commit in step 4
/// holds the lock, so it finishes first.
pub fn remove_temporaries_on_signal() {
    let installed = ctrlc::set_handler(|| {
        let mut live = temporaries();
        live.drain(..).for_each(|t| drop(fs::remove_file(t)));
        eprintln!("interrupted: no output written");
        std::process::exit(130);
    });
    if let Err(e) = installed {
        eprintln!("warning: interrupts will not remove temporary files ({e})");
    }
}

/// Writes one file atomically (see [`write_all_atomically`]).
pub fn write_atomically(path: &Path, contents: impl AsRef<[u8]>) -> Result<()> {
    write_all_atomically(&[(path, contents.as_ref())])
}

/// Replaces every destination with its contents, all or none (the module's steps 1–4).
pub fn write_all_atomically(files: &[(&Path, &[u8])]) -> Result<()> {
    let destinations = files.iter().map(|&(path, _)| check_destination(path)).collect::<Result<Vec<_>>>()?;
    for (k, d) in destinations.iter().enumerate() {
        if destinations[..k].contains(d) {
            bail!("{}: named twice as an output; give each output its own file", d.display());
        }
        settle(d)?;
    }
    let pid = std::process::id();
    let mut staged = Staged(Vec::with_capacity(files.len()));
    for (destination, &(_, contents)) in destinations.into_iter().zip(files) {
        let entry = Entry::new(destination, pid);
        temporaries().push(entry.temporary.clone());
        let written = write_synced(&entry.temporary, contents);
        let shown = entry.destination.display().to_string();
        staged.0.push(entry);
        written.with_context(|| format!("writing {shown}"))?;
    }
    for entry in &mut staged.0 {
        entry.keep_old(pid)?;
    }
    fault::at("staged")?;
    commit(std::mem::take(&mut staged.0), pid)
}

/// The canonical path of a destination whose folder exists and which is not itself a folder.
fn check_destination(path: &Path) -> Result<PathBuf> {
    let shown = path.display();
    let Some(name) = path.file_name() else { bail!("{shown}: not a file name; give the output file's path") };
    let folder = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let folder = match fs::canonicalize(folder) {
        Ok(f) if f.is_dir() => f,
        Ok(_) => bail!("{shown}: {} is not a folder", folder.display()),
        Err(_) => bail!("{shown}: the folder {} does not exist; create it first", folder.display()),
    };
    let destination = folder.join(name);
    if destination.is_dir() {
        bail!("{shown}: is a folder; give a file path for this output");
    }
    Ok(destination)
}

fn write_synced(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let mut f = File::create(path)?;
    f.write_all(contents)?;
    f.sync_all()
}

/// One file of a set: its temporary, its destination and (when it existed) the old version kept aside.
#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    temporary: PathBuf,
    destination: PathBuf,
    old: Option<PathBuf>,
}

impl Entry {
    fn new(destination: PathBuf, pid: u32) -> Self {
        Entry { temporary: beside(&destination, "tmp", pid), destination, old: None }
    }

    /// Keeps the current destination aside (a hard link, else a copy), so a failed commit can restore it.
    fn keep_old(&mut self, pid: u32) -> Result<()> {
        if !self.destination.exists() {
            return Ok(());
        }
        let old = beside(&self.destination, "old", pid);
        temporaries().push(old.clone());
        drop(fs::remove_file(&old));
        if fs::hard_link(&self.destination, &old).is_err() {
            fs::copy(&self.destination, &old)
                .with_context(|| format!("keeping the old {} aside", self.destination.display()))?;
        }
        self.old = Some(old);
        Ok(())
    }
}

/// `.NAME.KINDPID` beside `destination` (KIND: `tmp` for the new version, `old` for the one kept aside).
fn beside(destination: &Path, kind: &str, pid: u32) -> PathBuf {
    let name = destination.file_name().expect("checked destination").to_string_lossy();
    destination.with_file_name(format!(".{name}.{kind}{pid}"))
}

/// Staged files, removed if the set is dropped before its commit (an error in step 2).
struct Staged(Vec<Entry>);

impl Drop for Staged {
    fn drop(&mut self) {
        let mut live = temporaries();
        for e in &self.0 {
            for t in std::iter::once(&e.temporary).chain(&e.old) {
                drop(fs::remove_file(t));
                live.retain(|l| l != t);
            }
        }
    }
}

/// Steps 3 and 4: journal, rename, clean up; a failure rolls back. Holds the signal handler off throughout.
fn commit(entries: Vec<Entry>, pid: u32) -> Result<()> {
    let mut live = temporaries();
    let mut folders: Vec<PathBuf> = Vec::new();
    for e in &entries {
        let folder = e.destination.parent().expect("checked destination").to_path_buf();
        if !folders.contains(&folder) {
            folders.push(folder);
        }
    }
    let copies = folders.iter().map(|f| f.join(journal_name(pid))).collect();
    let mut journal = Journal { forward: true, copies, entries };
    let renamed = journal.write().and_then(|()| {
        for (k, e) in journal.entries.iter().enumerate() {
            fault::at(&format!("rename {k}"))?;
            fs::rename(&e.temporary, &e.destination).with_context(|| format!("writing {}", e.destination.display()))?;
        }
        fault::at("renamed")
    });
    let result = match renamed {
        Ok(()) => journal.finish(),
        Err(e) => {
            journal.forward = false;
            let marked = journal.write();
            match marked.and(journal.finish()) {
                Ok(()) => Err(e.context("no output was changed")),
                Err(r) => Err(e.context(format!("and restoring the old outputs failed too: {r:#}"))),
            }
        }
    };
    live.retain(|t| !journal.entries.iter().any(|e| &e.temporary == t || e.old.as_ref() == Some(t)));
    result
}

fn journal_name(pid: u32) -> String {
    format!(".usvm-commit.{pid}.json")
}

/// The record of a set being renamed into place: `forward` finishes it, otherwise the old set comes back.
#[derive(Debug, Serialize, Deserialize)]
struct Journal {
    forward: bool,
    /// Every copy of this journal (one per destination folder).
    copies: Vec<PathBuf>,
    entries: Vec<Entry>,
}

impl Journal {
    /// Writes every copy atomically (a synced `.part`, then a rename).
    fn write(&self) -> Result<()> {
        let text = serde_json::to_vec(self)?;
        for copy in &self.copies {
            let part = copy.with_extension("part");
            write_synced(&part, &text).and_then(|()| fs::rename(&part, copy)).map_err(|e| {
                drop(fs::remove_file(&part));
                anyhow!("writing the commit journal {}: {e}", copy.display())
            })?;
        }
        Ok(())
    }

    /// Whether this is the journal that process `pid` wrote at `path`: one of its copies, naming only that
    /// process's temporaries and old versions (a journal names files to rename and remove: one that does not
    /// match is not acted on).
    fn is_of(&self, pid: u32, path: &Path) -> bool {
        let own = |e: &Entry| {
            e.destination.file_name().is_some()
                && e.temporary == beside(&e.destination, "tmp", pid)
                && e.old.as_ref().is_none_or(|o| *o == beside(&e.destination, "old", pid))
        };
        let here = fs::canonicalize(path).ok();
        self.copies.iter().any(|c| fs::canonicalize(c).ok() == here) && self.entries.iter().all(own)
    }

    /// Completes the set in the journal's direction; idempotent, so a kill here is finished by the next
    /// [`settle`]. The journals go last.
    fn finish(&self) -> Result<()> {
        for e in &self.entries {
            let done = if self.forward {
                rename_if_present(&e.temporary, &e.destination)
            } else {
                // Back: the new version goes; the old one returns, or the file goes if there was none.
                remove_if_present(&e.temporary).and_then(|()| match &e.old {
                    Some(old) => rename_if_present(old, &e.destination),
                    None => remove_if_present(&e.destination),
                })
            };
            done.with_context(|| format!("finishing the interrupted write of {}", e.destination.display()))?;
        }
        for e in &self.entries {
            e.old.iter().try_for_each(|o| remove_if_present(o))?;
        }
        self.copies.iter().try_for_each(|c| remove_if_present(c))?;
        Ok(())
    }
}

fn rename_if_present(from: &Path, to: &Path) -> Result<()> {
    match fs::rename(from, to) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        other => Ok(other?),
    }
}

fn remove_if_present(path: &Path) -> Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        other => Ok(other?),
    }
}

/// Before `path` is read or written: finishes every commit a dead process left in its folder, then removes what
/// dead processes left for `path` (temporaries, old versions) and half-written journals.
pub fn settle(path: &Path) -> Result<()> {
    let Some(name) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else { return Ok(()) };
    let folder = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let Ok(listing) = fs::read_dir(folder) else { return Ok(()) };
    // `PREFIX PID SUFFIX` files of dead processes, from one listing of the folder.
    let files: Vec<(String, PathBuf)> =
        listing.flatten().map(|e| (e.file_name().to_string_lossy().into_owned(), e.path())).collect();
    let left_by_dead = |prefix: &str, suffix: &str| -> Vec<(u32, PathBuf)> {
        let pid = |file: &str| file.strip_prefix(prefix)?.strip_suffix(suffix)?.parse::<u32>().ok();
        files.iter().filter_map(|(file, path)| Some((pid(file).filter(|&p| !alive(p))?, path.clone()))).collect()
    };
    for (pid, journal) in left_by_dead(".usvm-commit.", ".json") {
        let shown = journal.display();
        let text = fs::read(&journal).with_context(|| format!("reading the commit journal {shown}"))?;
        let parsed = serde_json::from_slice::<Journal>(&text).ok().filter(|j| j.is_of(pid, &journal));
        let Some(parsed) = parsed else {
            bail!("{shown}: an unreadable commit journal; remove it and check the files it names")
        };
        parsed.finish().with_context(|| format!("{shown}: a write interrupted by a killed process"))?;
    }
    let stale = [(format!(".{name}.tmp"), ""), (format!(".{name}.old"), ""), (".usvm-commit.".into(), ".part")];
    for (prefix, suffix) in stale {
        left_by_dead(&prefix, suffix).iter().try_for_each(|(_, p)| remove_if_present(p))?;
    }
    Ok(())
}

/// Whether process `pid` is running (this one counts as running).
fn alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
        // kill(pid, 0) sends nothing: 0 or EPERM means the process exists.
        // SAFETY: signal 0 only checks that the process exists.
        let found = unsafe { libc::kill(pid, 0) } == 0;
        found || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    }
    #[cfg(not(unix))]
    {
        false
    }
}

/// Injected faults, in debug builds only: `USVM_FAULT=MODE@POINT`, MODE `fail` (an error), `kill` (abort, as a
/// SIGKILL would) or `pause` (sleep 60 s, for a signal to arrive), POINT `staged`, `rename K` (before the
/// K-th rename, from 0) or `renamed`.
mod fault {
    #[cfg(debug_assertions)]
    pub fn at(point: &str) -> anyhow::Result<()> {
        let Ok(spec) = std::env::var("USVM_FAULT") else { return Ok(()) };
        match spec.split_once('@') {
            Some(("fail", p)) if p == point => anyhow::bail!("injected failure at {point}"),
            Some(("kill", p)) if p == point => std::process::abort(),
            Some(("pause", p)) if p == point => std::thread::sleep(std::time::Duration::from_secs(60)),
            _ => {}
        }
        Ok(())
    }

    #[cfg(not(debug_assertions))]
    pub fn at(_point: &str) -> anyhow::Result<()> {
        Ok(())
    }
}
