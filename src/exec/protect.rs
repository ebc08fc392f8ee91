//! Protected paths that the kernel cannot keep: a `deny_write` name that does not exist when
//! the run starts (a new `.envrc`, `.github`, `.claude/`), a symbolic link among the protected
//! paths (replaced, it would point elsewhere), and git's own files in the repositories of the
//! workspace (see [`super::gitscan`]). The state is recorded before the run and checked after
//! it; whatever is new or changed is moved to a quarantine outside the workspace, never
//! deleted, and reported.
use super::gitscan;
use crate::capability::{PathEntry, ProtectedChange};
use serde::Serialize;
use std::collections::BTreeSet;
use std::io;
use std::path::{Component, Path, PathBuf};

/// A protected path found new or changed after a run.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct ProtectedPath {
    /// Where it was, in the workspace.
    pub path: PathBuf,
    /// What the command did: `created`, `replaced`, `hook`, `config`, ...
    pub change: String,
    /// Why the path is protected: the profile entry, or git's rule.
    pub rule: String,
    /// Where it was moved; `None` when moving failed (see `error`).
    pub quarantined: Option<PathBuf>,
    /// Why it could not be moved or restored.
    pub error: Option<String>,
}

/// A moment as the file system stamps change times: `CLOCK_REALTIME_COARSE`, so that a change
/// made after it has a ctime at or after it.
pub(super) type Stamp = (i64, i64);

fn now_coarse() -> Stamp {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_REALTIME_COARSE)
        .map_or((0, 0), |t| (t.tv_sec(), t.tv_nsec()))
}

/// True when `path` (not followed) changed at or after `start`.
pub(super) fn changed_since(path: &Path, start: Stamp) -> bool {
    use std::os::unix::fs::MetadataExt;
    path.symlink_metadata()
        .is_ok_and(|m| (m.ctime(), m.ctime_nsec()) >= start)
}

/// The protected state of one workspace, taken right before a run.
pub(super) struct Watch {
    workspace: PathBuf,
    entries: Vec<PathEntry>,
    before: BTreeSet<PathBuf>,
    links: Vec<(PathBuf, PathBuf, String)>,
    start: Stamp,
    policy: ProtectedChange,
    /// The profile protects git's files (it has `deny_write` paths under `.git`).
    git: bool,
}

/// Paths matching `pattern` now, symbolic links not followed.
fn matches(pattern: &Path) -> Vec<PathBuf> {
    let s = pattern.to_string_lossy();
    if !s.contains(['*', '?', '[']) {
        return if pattern.symlink_metadata().is_ok() {
            vec![pattern.to_path_buf()]
        } else {
            Vec::new()
        };
    }
    glob::glob(&s)
        .map(|paths| paths.filter_map(Result::ok).collect())
        .unwrap_or_default()
}

/// Entries inside a `.git` directory are git's: [`gitscan`] judges them by content.
fn in_git_dir(path: &Path, workspace: &Path) -> bool {
    path.strip_prefix(workspace).is_ok_and(|rel| {
        rel.components()
            .any(|c| c == Component::Normal(".git".as_ref()))
    })
}

impl Watch {
    pub(super) fn take(workspace: &Path, entries: &[PathEntry], policy: ProtectedChange) -> Self {
        let git = entries.iter().any(|e| in_git_dir(&e.path, workspace));
        let entries: Vec<PathEntry> = entries
            .iter()
            .filter(|e| !in_git_dir(&e.path, workspace))
            .cloned()
            .collect();
        let mut before = BTreeSet::new();
        let mut links = Vec::new();
        let hooks = PathEntry {
            path: workspace.join(".git/hooks"),
            required: false,
            origin: crate::capability::Origin::builtin("git hooks"),
        };
        let hooks = git.then_some(&hooks);
        for e in entries.iter().chain(hooks) {
            for m in matches(&e.path) {
                if let Ok(target) = std::fs::read_link(&m) {
                    links.push((m.clone(), target, e.origin.to_string()));
                }
                before.insert(m);
            }
        }
        Self {
            workspace: workspace.to_path_buf(),
            entries,
            before,
            links,
            start: now_coarse(),
            policy,
            git,
        }
    }

    /// Whether a change found by [`Watch::settle`] fails the run.
    pub(super) fn fails_run(&self, found: &[ProtectedPath]) -> bool {
        self.policy == ProtectedChange::Fail && !found.is_empty()
    }

    /// Find what the run created or changed, move it to quarantine, put replaced symbolic
    /// links back.
    pub(super) fn settle(&self) -> Vec<ProtectedPath> {
        let mut found: Vec<(PathBuf, &'static str, String)> = Vec::new();
        for (link, target, rule) in &self.links {
            if std::fs::read_link(link).ok().as_ref() != Some(target) {
                found.push((link.clone(), "replaced", rule.clone()));
            }
        }
        for e in &self.entries {
            for m in matches(&e.path) {
                if !self.before.contains(&m) {
                    found.push((m, "created", e.origin.to_string()));
                }
            }
        }
        let git = if self.git {
            gitscan::scan(&self.workspace, self.start)
        } else {
            Vec::new()
        };
        for f in git {
            found.push((f.path, f.change, f.rule.to_string()));
        }
        // Outer paths first: moving one carries what lies beneath it.
        found.sort_by(|a, b| a.0.cmp(&b.0));
        found.dedup_by(|b, a| b.0.starts_with(&a.0));
        let mut q = Quarantine::new(&self.workspace);
        found
            .into_iter()
            .map(|(path, change, rule)| {
                let moved = if path.symlink_metadata().is_ok() {
                    q.take(&path).map(Some)
                } else {
                    Ok(None)
                };
                let restored = self.restore_link(&path);
                let (quarantined, error) = match (moved, restored) {
                    (Ok(to), Ok(())) => (to, None),
                    (Ok(to), Err(e)) => (to, Some(format!("restoring the link: {e}"))),
                    (Err(e), _) => (None, Some(e.to_string())),
                };
                ProtectedPath {
                    path,
                    change: change.to_string(),
                    rule,
                    quarantined,
                    error,
                }
            })
            .collect()
    }

    fn restore_link(&self, path: &Path) -> io::Result<()> {
        match self.links.iter().find(|(l, _, _)| l == path) {
            Some((link, target, _)) => std::os::unix::fs::symlink(target, link),
            None => Ok(()),
        }
    }
}

/// One run's quarantine directory, made on first use: under `$XDG_STATE_HOME/sbx/quarantine`
/// (default `~/.local/state`), outside the workspace.
struct Quarantine {
    workspace: PathBuf,
    dir: Option<PathBuf>,
}

static RUN_SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Where quarantined paths go.
pub fn quarantine_root() -> PathBuf {
    let state = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| super::home_dir().join(".local/state"));
    state.join("sbx/quarantine")
}

impl Quarantine {
    fn new(workspace: &Path) -> Self {
        Self {
            workspace: workspace.to_path_buf(),
            dir: None,
        }
    }

    fn dir(&mut self) -> io::Result<PathBuf> {
        if let Some(d) = &self.dir {
            return Ok(d.clone());
        }
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let seq = RUN_SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let d = quarantine_root().join(format!("{secs}-{}-{seq}", std::process::id()));
        make_private_dir(&d)?;
        self.dir = Some(d.clone());
        Ok(d)
    }

    /// Move `path` into the quarantine, keeping its place relative to the workspace. Its
    /// parent is opened beneath the workspace without following links, so that a link swapped
    /// into the way cannot make sbx move something outside the workspace.
    fn take(&mut self, path: &Path) -> io::Result<PathBuf> {
        use nix::fcntl::{OFlag, OpenHow, ResolveFlag, openat2, renameat};
        use std::os::fd::AsRawFd;
        let rel = path
            .strip_prefix(&self.workspace)
            .map_err(|_| io::Error::other("not inside the workspace"))?;
        let name = rel
            .file_name()
            .ok_or_else(|| io::Error::other("no file name"))?;
        let parent = rel
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let ws = std::fs::File::open(&self.workspace)?;
        let how = OpenHow::new()
            .flags(OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC)
            .resolve(ResolveFlag::RESOLVE_BENEATH | ResolveFlag::RESOLVE_NO_SYMLINKS);
        let from = openat2(&ws, parent, how).map_err(io::Error::from)?;
        let dest = self.dir()?.join(rel);
        let dest_dir = dest.parent().unwrap_or(&dest).to_path_buf();
        make_private_dir(&dest_dir)?;
        let to = std::fs::File::open(&dest_dir)?;
        match renameat(&from, name, &to, name) {
            Ok(()) => Ok(dest),
            Err(nix::errno::Errno::EXDEV) => {
                // Through the opened parent, not the path again.
                let src = PathBuf::from(format!("/proc/self/fd/{}", from.as_raw_fd())).join(name);
                copy_tree(&src, &dest)?;
                remove_tree(&src)?;
                Ok(dest)
            }
            Err(e) => Err(e.into()),
        }
    }
}

fn make_private_dir(d: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(d)
}

/// Copy a tree without following symbolic links (a move across file systems).
fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    let meta = from.symlink_metadata()?;
    if meta.file_type().is_symlink() {
        std::os::unix::fs::symlink(std::fs::read_link(from)?, to)
    } else if meta.is_dir() {
        make_private_dir(to)?;
        for entry in std::fs::read_dir(from)? {
            let entry = entry?;
            copy_tree(&entry.path(), &to.join(entry.file_name()))?;
        }
        Ok(())
    } else {
        std::fs::copy(from, to).map(|_| ())
    }
}

fn remove_tree(p: &Path) -> io::Result<()> {
    if p.symlink_metadata()?.is_dir() {
        std::fs::remove_dir_all(p)
    } else {
        std::fs::remove_file(p)
    }
}
