//! The workspace's directories as the checks after a run look at them, listed once per check:
//! the root and the directories directly in it are read, their subdirectories named. The git
//! scan looks for `.git` entries down to three levels (listing the second level itself); the
//! protected names that programs load from the directory they start in are looked for one
//! level down.
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Directories not searched: they hold packages by the thousand, or are git's own.
pub(super) const SKIP: &[&str] = &["node_modules", ".git"];

/// One listing of the workspace.
pub(super) struct Walk {
    /// Each directory directly in the workspace (not a link, not skipped), with the names
    /// in it.
    pub(super) first: Vec<(PathBuf, Vec<OsString>)>,
    /// The directories directly in those.
    pub(super) second: Vec<PathBuf>,
    /// The symbolic links directly in those.
    pub(super) first_links: Vec<PathBuf>,
    /// Links directly in the workspace that could not be followed.
    pub(super) unfollowed: Vec<PathBuf>,
}

impl Walk {
    pub(super) fn of(workspace: &Path) -> Self {
        let mut first = Vec::new();
        let mut second = Vec::new();
        let mut first_links = Vec::new();
        let root = listed(workspace);
        let mut dirs = root.dirs;
        let (linked, unfollowed) = linked_dirs(workspace, &root.links);
        dirs.extend(linked);
        dirs.sort();
        dirs.dedup();
        for dir in dirs {
            let l = listed(&dir);
            second.extend(l.dirs);
            first_links.extend(l.links);
            first.push((dir, l.names));
        }
        Self {
            first,
            second,
            first_links,
            unfollowed,
        }
    }

    /// The `.git` paths to look at, existing or not: at the root and down to three levels
    /// below it (`a/b/c/.git`). The third level costs one listing of each directory two
    /// levels down that has subdirectories, on each of the two checks of every run; a fourth
    /// would list build trees' directories of thousands of files (`target/debug/deps`), and
    /// is not looked at. A name is kept when it is `.git` under any ASCII case: a file system
    /// that folds case opens `.GIT` as `.git`, as git does.
    ///
    /// With them, the directories at the same levels that git could take for a
    /// git directory of their own: git's discovery looks at `DIR/.git` and then at `DIR`
    /// itself (a `HEAD` beside `objects` and `refs`), so `src/HEAD`, `src/objects`,
    /// `src/refs` and a `src/config` with `core.worktree = ..` make `cd src/app && git
    /// status` use `src`. A directory whose listing holds no `HEAD` is left out; one not
    /// listed (the third level, leaves) is given, to be asked by name. The workspace itself
    /// is given when it has no `.git`.
    pub(super) fn git_entries(&self, workspace: &Path) -> GitEntries {
        let dot_git = |names: &[OsString]| names.iter().any(|n| n.eq_ignore_ascii_case(".git"));
        let head = |names: &[OsString]| names.iter().any(|n| n.eq_ignore_ascii_case("HEAD"));
        let mut out = vec![workspace.join(".git")];
        let mut bare = Vec::new();
        if lstat(&workspace.join(".git")).is_err() {
            bare.push(workspace.to_path_buf());
        }
        for (dir, names) in &self.first {
            // No names: empty, or not listed; asked by name then.
            if names.is_empty() || dot_git(names) {
                out.push(dir.join(".git"));
            }
            if names.is_empty() || head(names) {
                bare.push(dir.clone());
            }
        }
        let counted = SubdirCount::of(workspace);
        for dir in &self.second {
            let listed = (!counted.leaf(dir)).then(|| listed_or_none(dir)).flatten();
            match listed {
                Some(l) => {
                    if dot_git(&l.names) {
                        out.push(dir.join(".git"));
                    }
                    if head(&l.names) {
                        bare.push(dir.clone());
                    }
                    out.extend(l.dirs.iter().map(|d| d.join(".git")));
                    bare.extend(l.dirs.iter().cloned());
                }
                // A leaf, or not listed: asked by name, as git would find it.
                None => {
                    out.push(dir.join(".git"));
                    bare.push(dir.clone());
                }
            }
        }
        GitEntries {
            dot_gits: out,
            bare,
        }
    }
}

/// What [`Walk::git_entries`] gives.
pub(super) struct GitEntries {
    /// The `.git` paths to look at, existing or not.
    pub(super) dot_gits: Vec<PathBuf>,
    /// Directories that may be git directories themselves, existing or not.
    pub(super) bare: Vec<PathBuf>,
}

/// File systems whose directories have one link per subdirectory beside their own two: a
/// link count of 2 says there is none, and the directory need not be listed to find one.
/// (btrfs counts 1 for every directory; its directories are listed.)
const COUNT_SUBDIRS: [nix::sys::statfs::FsType; 4] = [
    nix::sys::statfs::EXT4_SUPER_MAGIC, // ext2, ext3 and ext4 share it
    nix::sys::statfs::XFS_SUPER_MAGIC,
    nix::sys::statfs::TMPFS_MAGIC,
    nix::sys::statfs::F2FS_SUPER_MAGIC,
];

/// Whether the workspace's link counts tell its leaf directories, on its own device.
struct SubdirCount {
    /// The workspace's device, when its file system counts subdirectories.
    dev: Option<u64>,
}

impl SubdirCount {
    fn of(workspace: &Path) -> Self {
        use std::os::unix::fs::MetadataExt;
        let counts = nix::sys::statfs::statfs(workspace)
            .is_ok_and(|s| COUNT_SUBDIRS.contains(&s.filesystem_type()));
        let dev = counts
            .then(|| lstat(workspace).ok().map(|m| m.dev()))
            .flatten();
        Self { dev }
    }

    /// A directory with no subdirectory (a `.git` directory would be one). Another file
    /// system mounted there (another device) may count otherwise: not a leaf.
    fn leaf(&self, dir: &Path) -> bool {
        use std::os::unix::fs::MetadataExt;
        self.dev.is_some_and(|dev| {
            lstat(dir).is_ok_and(|m| m.is_dir() && m.nlink() == 2 && m.dev() == dev)
        })
    }
}

/// The names in a directory, the real directories among them that are not skipped, and its
/// symbolic links.
struct Listed {
    names: Vec<OsString>,
    dirs: Vec<PathBuf>,
    links: Vec<PathBuf>,
}

/// Where the workspace's links lead, for those that lead to a directory inside it (not a
/// skipped one): `cd lnk` with `lnk -> deep/a/b` makes direnv load `deep/a/b/.envrc`, so that
/// directory is looked in as if it were directly in the workspace, by its real path.
/// Links it cannot follow (a path longer than the kernel resolves in one call, a directory on
/// the way it may not search) are returned apart: a loader may still reach them by `$PWD`.
fn linked_dirs(workspace: &Path, links: &[PathBuf]) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let root = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    let mut dirs = Vec::new();
    let mut unfollowed = Vec::new();
    for l in links {
        match std::fs::canonicalize(l) {
            Ok(real) if real.is_dir() && real.starts_with(&root) && real != root => {
                dirs.push(workspace.join(real.strip_prefix(&root).unwrap_or(&real)));
            }
            Ok(_) => {}
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ELOOP)) => {}
            Err(_) => unfollowed.push(l.clone()),
        }
    }
    (dirs, unfollowed)
}

fn listed(dir: &Path) -> Listed {
    listed_or_none(dir).unwrap_or(Listed {
        names: Vec::new(),
        dirs: Vec::new(),
        links: Vec::new(),
    })
}

/// [`listed`], or `None` when the directory cannot be listed.
fn listed_or_none(dir: &Path) -> Option<Listed> {
    let mut out = Listed {
        names: Vec::new(),
        dirs: Vec::new(),
        links: Vec::new(),
    };
    let rd = read_dir(dir).ok()?;
    for e in rd.filter_map(Result::ok) {
        let name = e.file_name();
        let skip = SKIP.iter().any(|s| name == *s);
        match e.file_type() {
            Ok(t) if t.is_dir() && !skip => out.dirs.push(e.path()),
            Ok(t) if t.is_symlink() => out.links.push(e.path()),
            _ => {}
        }
        out.names.push(name);
    }
    Some(out)
}

thread_local! {
    /// The workspace whose check runs on this thread, while a [`Scope`] holds it.
    static CHECKED: std::cell::RefCell<Option<PathBuf>> = const { std::cell::RefCell::new(None) };
    /// Each mode [`repair`] changed in this scope, with the mode it had.
    static REPAIRED: std::cell::RefCell<Vec<(PathBuf, u32)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// While held, [`lstat`], [`stat`] and [`read_dir`] on this thread may give a directory of
/// the workspace back its owner's read and search permission (see [`repair`]).
pub(super) struct Scope(());

impl Scope {
    pub(super) fn enter(workspace: &Path) -> Self {
        CHECKED.with(|c| *c.borrow_mut() = Some(workspace.to_path_buf()));
        Self(())
    }
}

impl Drop for Scope {
    /// The modes the checks changed go back to what the command left: sbx changes nothing
    /// in the workspace but what it moves to quarantine.
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        CHECKED.with(|c| *c.borrow_mut() = None);
        let changed = REPAIRED.with(|r| std::mem::take(&mut *r.borrow_mut()));
        for (path, mode) in changed.into_iter().rev() {
            let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode));
        }
    }
}

/// `symlink_metadata`, through directories the command made unsearchable.
pub(super) fn lstat(path: &Path) -> std::io::Result<std::fs::Metadata> {
    retried(path, || std::fs::symlink_metadata(path))
}

/// `metadata` (links followed), through directories the command made unsearchable.
pub(super) fn stat(path: &Path) -> std::io::Result<std::fs::Metadata> {
    retried(path, || std::fs::metadata(path))
}

/// A file's bytes, also of one the command made unreadable, when there are at most `limit`
/// of them: the command chooses the size of what the checks read (a sparse index of 1 GiB
/// costs nothing to make), so a longer file is an error (`FileTooLarge`) after reading
/// `limit + 1` bytes at most, and the caller treats it as dangerous.
pub(super) fn read(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    retried(path, || {
        let file = crate::regular_file::open(path)?;
        // Sized from the file, so that a whole file takes one read and the end another.
        let size = file.metadata().map_or(0, |m| m.len()).min(limit);
        let mut out = Vec::with_capacity(usize::try_from(size).unwrap_or(0).saturating_add(1));
        file.take(limit.saturating_add(1)).read_to_end(&mut out)?;
        if out.len() as u64 > limit {
            return Err(std::io::ErrorKind::FileTooLarge.into());
        }
        Ok(out)
    })
}

/// The most the checks read of a small file of git's: a config, a `.git` file, `commondir`.
pub(super) const TEXT_LIMIT: u64 = 64 * 1024;

/// `read_dir`, also of a directory the command made unlistable.
pub(super) fn read_dir(dir: &Path) -> std::io::Result<std::fs::ReadDir> {
    retried(dir, || std::fs::read_dir(dir))
}

fn retried<T>(path: &Path, op: impl Fn() -> std::io::Result<T>) -> std::io::Result<T> {
    match op() {
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied && repair(path, 0o500) => op(),
        r => r,
    }
}

/// A command can take its own read or search permission off a directory of the workspace
/// (`chmod 311 sub`): programs still find `sub/.envrc` by name, but a listing no longer shows
/// it, and with search gone nothing beneath can be looked at (a file made unreadable, such as
/// `.git/index`, hides what it lists). The checks after the run give the owner `bits` back on
/// each directory from the workspace down to `path` that lacks them, and read on `path` itself
/// when it is a file; only on what sbx's user owns, and never through a link (a component that
/// is no real directory ends the walk), and say whether they changed anything. The [`Scope`] puts each mode back when it ends.
pub(super) fn repair(path: &Path, bits: u32) -> bool {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let Some(root) = CHECKED.with(|c| c.borrow().clone()) else {
        return false;
    };
    let Ok(rel) = path.strip_prefix(&root) else {
        return false;
    };
    let me = nix::unistd::geteuid().as_raw();
    let mut changed = false;
    let mut at = root.clone();
    let parts: Vec<_> = rel.components().collect();
    for i in 0..=parts.len() {
        if i > 0 {
            let std::path::Component::Normal(p) = parts[i - 1] else {
                break;
            };
            at.push(p);
        }
        let Ok(m) = std::fs::symlink_metadata(&at) else {
            break;
        };
        let want = if m.is_dir() {
            bits
        } else if m.is_file() && i == parts.len() {
            0o400
        } else {
            break;
        };
        let mode = m.mode() & 0o7777;
        if m.uid() == me && mode & want != want {
            let perm = std::fs::Permissions::from_mode(mode | want);
            if std::fs::set_permissions(&at, perm).is_ok() {
                REPAIRED.with(|r| r.borrow_mut().push((at.clone(), mode)));
                changed = true;
            }
        }
        if !m.is_dir() {
            break;
        }
    }
    changed
}
