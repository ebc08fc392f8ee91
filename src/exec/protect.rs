//! Protected paths that the kernel cannot keep: a `deny_write` name that does not exist when
//! the run starts (a new `.envrc`, `.github`, `.claude/`), a symbolic link among the protected
//! paths (replaced, it would point elsewhere), a read-only file with other names (hard links
//! made before the run, outside its mount), and git's own files in the repositories of the
//! workspace (see [`super::gitscan`]). The state is recorded before the run and checked after
//! it; whatever is new or changed is moved to a quarantine outside the workspace, never
//! deleted, and reported.
use super::below::{self, Below};
use super::gitscan;
use super::identity::Seen;
use super::protected_link::ProtectedLink;
use super::quarantine::Quarantine;
use super::walk::{self, Walk};
use crate::capability::{CapabilitySet, CaseFolding, PathEntry, ProtectedChange};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// A protected path found new or changed after a run.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct ProtectedPath {
    /// Where it was, in the workspace.
    pub path: PathBuf,
    /// What the command did: `created`, `replaced`, `changed through another link` (a
    /// read-only file written through a hard link made before the run), `hook`, `config`, ...
    pub change: String,
    /// Why the path is protected: the profile entry, or git's rule.
    pub rule: String,
    /// Where it was moved (or, when it could not leave the workspace, the inert name it was
    /// given there); `None` when both failed (see `error`).
    pub quarantined: Option<PathBuf>,
    /// Why it could not be moved or restored.
    pub error: Option<String>,
}

impl ProtectedPath {
    /// Whether the change still stands in the workspace.
    pub fn undone(&self) -> bool {
        self.quarantined.is_some() && self.error.is_none()
    }
}

/// A moment as the file system stamps change times: `CLOCK_REALTIME_COARSE`, so that a change
/// made after it has a ctime at or after it.
type Stamp = (i64, i64);

/// What a file was before the run: device, inode, change time.
type FileState = (u64, u64, i64, i64);

fn file_state(path: &Path) -> Option<FileState> {
    walk::lstat(path)
        .ok()
        .map(|m| (m.dev(), m.ino(), m.ctime(), m.ctime_nsec()))
}

/// Tells whether a path changed during the run: against its recorded state when it had one
/// (exact), else by a change time at or after the start (a change in the few milliseconds
/// before the start may be taken for one during the run).
pub(super) struct Since {
    start: Stamp,
    before: BTreeMap<PathBuf, FileState>,
    /// The paths recorded that did not exist.
    absent: std::collections::BTreeSet<PathBuf>,
}

impl Since {
    fn take(files: Vec<PathBuf>) -> Self {
        // One path can be named more than once (a hooks directory of two ways): asked once.
        let files: std::collections::BTreeSet<PathBuf> = files.into_iter().collect();
        let mut before = BTreeMap::new();
        let mut absent = std::collections::BTreeSet::new();
        for p in files {
            match file_state(&p) {
                Some(s) => {
                    before.insert(p, s);
                }
                None => {
                    absent.insert(p);
                }
            }
        }
        Self {
            start: now_coarse(),
            before,
            absent,
        }
    }

    /// Whether `path` was recorded absent and is there now: made, or moved there, during
    /// the run, whatever the change times of what was moved.
    pub(super) fn made(&self, path: &Path) -> bool {
        self.absent.contains(path) && walk::lstat(path).is_ok()
    }

    /// Whether `path` was there before the run.
    pub(super) fn existed(&self, path: &Path) -> bool {
        self.before.contains_key(path)
    }

    pub(super) fn changed(&self, path: &Path) -> bool {
        match self.before.get(path) {
            Some(state) => file_state(path).as_ref() != Some(state),
            None => changed_since(path, self.start),
        }
    }

    /// Whether `path` was put in place during the run (made, renamed there, or replaced): it
    /// exists and is not the file recorded there before, or nothing was. What a directory
    /// moved in holds keeps the change times of whatever run wrote it, so they cannot tell.
    /// Only for paths whose state was recorded when they existed ([`gitscan::recorded_files`]).
    pub(super) fn moved_in(&self, path: &Path) -> bool {
        let id = |s: &FileState| (s.0, s.1);
        match (self.before.get(path), file_state(path)) {
            (_, None) => false,
            (Some(before), Some(now)) => id(&now) != id(before),
            (None, Some(_)) => true,
        }
    }
}

fn now_coarse() -> Stamp {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_REALTIME_COARSE)
        .map_or((0, 0), |t| (t.tv_sec(), t.tv_nsec()))
}

/// True when `path` (not followed) changed at or after `start`.
fn changed_since(path: &Path, start: Stamp) -> bool {
    walk::lstat(path).is_ok_and(|m| (m.ctime(), m.ctime_nsec()) >= start)
}

/// The protected state of one workspace, taken right before a run.
pub(super) struct Watch {
    workspace: PathBuf,
    writable: Vec<PathBuf>,
    /// The run's set: its watched patterns outside `.git` are checked here ([`outside_git`]).
    caps: Arc<CapabilitySet>,
    /// Each protected path that existed, with its file: a path that names another file after
    /// the run was replaced (by the command, by a run beside it that moved the old one, or by
    /// a host program, which detaches the path's read-only mount in the sandbox).
    before: BTreeMap<PathBuf, Seen>,
    links: Vec<ProtectedLink>,
    since: Since,
    /// The submodules the workspace repository's index registered before the run.
    gitlinks: Vec<PathBuf>,
    policy: ProtectedChange,
    /// The profile protects git's files (it has `deny_write` paths under `.git`).
    git: bool,
    below: Arc<Below>,
    below_before: below::Found,
    /// Names at the root are compared without case (`case_folding = "accept"`).
    fold: bool,
    /// The modes of the directories that hold protected paths.
    modes: super::modes::Modes,
}

/// The names directly in the workspace, read once per check and only when asked: most
/// protected paths are there, and one listing answers for all of them. Under `fold` a
/// protected name is found under any case, as a file system that folds case finds it.
struct RootNames<'w> {
    workspace: &'w Path,
    /// The workspace as the watched patterns write it (escaped for glob).
    escaped: String,
    names: std::cell::OnceCell<Option<std::collections::HashSet<std::ffi::OsString>>>,
    fold: bool,
}

impl<'w> RootNames<'w> {
    fn new(workspace: &'w Path, fold: bool) -> Self {
        Self {
            workspace,
            escaped: glob::Pattern::escape(&workspace.to_string_lossy()),
            names: std::cell::OnceCell::new(),
            fold,
        }
    }

    fn names(&self) -> Option<&std::collections::HashSet<std::ffi::OsString>> {
        self.names
            .get_or_init(|| {
                walk::read_dir(self.workspace)
                    .ok()
                    .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.file_name())).collect())
            })
            .as_ref()
    }

    /// The entries of the workspace that are `name` (under `fold`, each equal to it without
    /// case, sorted); when the listing failed, asks the file system for `name` itself.
    fn named(&self, name: &str) -> Vec<PathBuf> {
        let path = self.workspace.join(name);
        let found = match self.names() {
            None => return walk::lstat(&path).map(|_| vec![path]).unwrap_or_default(),
            Some(names) if self.fold => {
                let listed = names.iter().map(std::ffi::OsString::as_os_str);
                crate::folded_names::equal_without_case(listed, name.as_ref())
            }
            Some(names) => names
                .get(std::ffi::OsStr::new(name))
                .map(std::ffi::OsString::as_os_str)
                .into_iter()
                .collect(),
        };
        let mut out: Vec<PathBuf> = found.into_iter().map(|n| self.workspace.join(n)).collect();
        out.sort();
        out
    }

    /// The names in the workspace that `pattern` (one component) matches, sorted as
    /// `expand_glob` sorts them; `None` when the listing failed or the pattern is no glob.
    fn matching(&self, pattern: &str) -> Option<Vec<PathBuf>> {
        let pattern = crate::profile::compiled(pattern).ok()?;
        let listed = self.names()?.iter().map(std::ffi::OsString::as_os_str);
        let found: Vec<&std::ffi::OsStr> = if self.fold {
            crate::folded_names::matching_without_case(listed, &pattern)
        } else {
            listed
                .filter(|n| n.to_str().is_some_and(|n| pattern.matches(n)))
                .collect()
        };
        let mut out: Vec<PathBuf> = found.into_iter().map(|n| self.workspace.join(n)).collect();
        out.sort();
        Some(out)
    }
}

/// Paths matching `pattern` (a glob with the workspace escaped) now, links not followed: a
/// literal name is looked up as such, so that a dangling link is found too.
fn matches(pattern: &Path, workspace: &Path, root: &RootNames) -> Vec<PathBuf> {
    let text = pattern.to_string_lossy();
    let ws = root.escaped.as_str();
    if let Some(rest) = text.strip_prefix(ws)
        && !rest.contains(['*', '?', '['])
    {
        let name = rest.trim_start_matches('/');
        if !name.contains('/') {
            return root.named(name);
        }
        let mut literal = workspace.as_os_str().to_os_string();
        literal.push(rest);
        let literal = PathBuf::from(literal);
        return if walk::lstat(&literal).is_ok() {
            vec![literal]
        } else {
            Vec::new()
        };
    }
    // A glob of one name in the workspace (`.env*`) is answered by the same listing.
    if let Some(rest) = text.strip_prefix(ws)
        && let Some(name) = rest.strip_prefix('/').filter(|n| !n.contains('/'))
        && let Some(found) = root.matching(name)
    {
        return found;
    }
    crate::profile::expand_glob(&text).unwrap_or_default()
}

/// The entries of `all` outside any `.git` directory; `escaped` is the workspace as the
/// patterns write it.
fn outside_git<'a>(all: &'a [PathEntry], escaped: &'a str) -> impl Iterator<Item = &'a PathEntry> {
    all.iter().filter(move |e| !in_git_dir(&e.path, escaped))
}

/// Entries inside a `.git` directory are git's: [`gitscan`] judges them by content. A watched
/// pattern writes the workspace escaped for glob (`escaped`): a workspace named `w[1]` is
/// `w[[]1]` there, so the pattern is taken apart as text, not as a path under the workspace.
fn in_git_dir(pattern: &Path, escaped: &str) -> bool {
    let text = pattern.to_string_lossy();
    text.strip_prefix(escaped)
        .filter(|rest| rest.starts_with('/'))
        .is_some_and(|rest| {
            Path::new(rest)
                .components()
                .any(|c| c == Component::Normal(".git".as_ref()))
        })
}

impl Watch {
    /// The record before a run. `walk` is the listing planning made of the workspace, if it
    /// made one; else the workspace is listed here when the checks need it.
    pub(super) fn take(
        workspace: &Path,
        writable: &[PathBuf],
        caps: &Arc<CapabilitySet>,
        walk: Option<Walk>,
    ) -> Self {
        let (policy, folding) = (caps.fs.protected_change, caps.fs.case_folding);
        let _scope = walk::Scope::enter(workspace);
        let all = &caps.fs.watch;
        let fold = folding == CaseFolding::Accept;
        let root = RootNames::new(workspace, fold);
        let escaped = root.escaped.as_str();
        let git = all.iter().any(|e| in_git_dir(&e.path, escaped));
        let in_git = all.iter().filter(|e| in_git_dir(&e.path, escaped));
        let mut before = BTreeMap::new();
        // Inside `.git` only the links are followed here (a hook installed as a link, whose
        // way and target lie in the workspace); gitscan judges the rest by content.
        let mut links: Vec<ProtectedLink> = in_git
            .flat_map(|e| {
                let rule = e.origin.to_string();
                matches(&e.path, workspace, &root)
                    .into_iter()
                    .filter_map(move |m| ProtectedLink::read(&m, workspace, rule.clone()))
            })
            .collect();
        let hooks = PathEntry {
            path: PathBuf::from(format!(
                "{}/.git/hooks",
                glob::Pattern::escape(&workspace.to_string_lossy())
            )),
            required: false,
            origin: crate::capability::Origin::builtin("git hooks"),
        };
        let hooks = git.then_some(&hooks);
        for e in outside_git(all, escaped).chain(hooks) {
            for m in matches(&e.path, workspace, &root) {
                links.extend(ProtectedLink::read(&m, workspace, e.origin.to_string()));
                let seen = Seen::of(&m);
                if seen.file.is_some() {
                    before.insert(m, seen);
                }
            }
        }
        let below = Below::shared(caps, workspace);
        let walk = walk.or_else(|| (git || !below.is_empty()).then(|| Walk::of(workspace)));
        let walk = walk.as_ref();
        let record = match walk.filter(|_| git) {
            Some(walk) => gitscan::recorded_files(workspace, walk),
            None => gitscan::Record {
                files: Vec::new(),
                gitlinks: Vec::new(),
            },
        };
        let below_before = walk.map(|w| below.found(w)).unwrap_or_default();
        let held = before
            .keys()
            .chain(below_before.keys())
            .map(PathBuf::as_path);
        let protects = git || outside_git(all, escaped).next().is_some();
        let modes = super::modes::Modes::take(workspace, protects, git, held);
        Self {
            workspace: workspace.to_path_buf(),
            writable: writable.to_vec(),
            before,
            links,
            since: Since::take(record.files),
            gitlinks: record.gitlinks,
            policy,
            git,
            below_before,
            below,
            caps: Arc::clone(caps),
            fold,
            modes,
        }
    }

    /// Whether a change found by [`Watch::settle`] fails the run: always when one could not
    /// be undone, and any when the profile says so.
    pub(super) fn fails_run(&self, found: &[ProtectedPath]) -> bool {
        found.iter().any(|f| !f.undone())
            || (self.policy == ProtectedChange::Fail && !found.is_empty())
    }

    /// Find what the run created or changed, move it to quarantine, put replaced symbolic
    /// links back.
    pub(super) fn settle(&self) -> Vec<ProtectedPath> {
        let _scope = walk::Scope::enter(&self.workspace);
        let mut found: Vec<(PathBuf, &'static str, String)> = Vec::new();
        found.extend(self.links.iter().flat_map(|l| l.changes(&self.workspace)));
        let root = RootNames::new(&self.workspace, self.fold);
        for e in outside_git(&self.caps.fs.watch, &root.escaped) {
            for m in matches(&e.path, &self.workspace, &root) {
                let change = match self.before.get(&m) {
                    None => Some("created"),
                    Some(was) => was.change(&Seen::of(&m)),
                };
                if let Some(change) = change {
                    found.push((m, change, e.origin.to_string()));
                }
            }
        }
        let walk = (self.git || !self.below.is_empty()).then(|| Walk::of(&self.workspace));
        if let Some(walk) = &walk {
            found.extend(below::changes(&self.below_before, self.below.found(walk)));
        }
        let git = match walk.filter(|_| self.git) {
            Some(walk) => gitscan::scan(&self.workspace, &walk, &self.since, &self.gitlinks),
            None => Vec::new(),
        };
        let mut restores = BTreeMap::new();
        for f in git {
            if let Some(text) = f.restore {
                restores.insert(f.path.clone(), text);
            }
            found.push((f.path, f.change, f.rule.to_string()));
        }
        // Outer paths first: moving one carries what lies beneath it.
        found.sort_by(|a, b| a.0.cmp(&b.0));
        found.dedup_by(|b, a| b.0.starts_with(&a.0));
        let mut q = Quarantine::new(&self.workspace, &self.writable, super::quarantine::roots());
        let mut out: Vec<ProtectedPath> = found
            .into_iter()
            .map(|(path, change, rule)| {
                let moved = if path.symlink_metadata().is_ok() {
                    q.take(&path).map(Some)
                } else {
                    Ok(None)
                };
                let restored = match restores.get(&path) {
                    Some(text) if moved.is_ok() => restore_file(&self.workspace, &path, text),
                    _ => self.restore_link(&path),
                };
                let (quarantined, error) = match (moved, restored) {
                    (Ok(to), Ok(())) => (to, None),
                    (Ok(to), Err(e)) => (to, Some(format!("restoring what was there: {e}"))),
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
            .collect();
        q.finish();
        out.extend(self.modes.settle());
        out
    }

    fn restore_link(&self, path: &Path) -> io::Result<()> {
        match self.links.iter().find_map(|l| l.original_link(path)) {
            Some(text) => std::os::unix::fs::symlink(text, path),
            None => Ok(()),
        }
    }
}

/// Writes `text` as a new file at `path`, after the run (its tree is gone): refused when a
/// directory on the way from `workspace` is a symbolic link, or anything is at `path`.
fn restore_file(workspace: &Path, path: &Path, text: &str) -> io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut way = path
        .ancestors()
        .skip(1)
        .take_while(|a| a.starts_with(workspace));
    if way.any(|a| walk::lstat(a).is_ok_and(|m| m.file_type().is_symlink())) {
        return Err(io::Error::other("a symbolic link on the way"));
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?
        .write_all(text.as_bytes())
}
