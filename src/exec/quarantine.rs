//! Where protected paths that a run created or changed are moved: one directory per run under
//! `$XDG_STATE_HOME/sbx/quarantine` (default `~/.local/state`), or under
//! `/var/tmp/sbx-quarantine-UID` when that lies inside a tree the sandbox could write. Entries
//! are numbered, flat, with a `MANIFEST` naming where each came from.
//!
//! sbx may run as root and the workspace is the command's: every step goes through file
//! descriptors opened without following links, on the workspace side (each component of the
//! path beneath it) and on the quarantine side (a root the sandbox cannot write, checked by
//! owner and mode, and a directory made fresh), so that a link planted in the way cannot make
//! sbx move or write anything elsewhere.
use nix::fcntl::{OFlag, OpenHow, ResolveFlag, openat, openat2, renameat};
use nix::sys::stat::{Mode, fstat, mkdirat};
use std::ffi::OsStr;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// Where quarantined paths go by default.
pub fn quarantine_root() -> PathBuf {
    let [root, _] = own_roots();
    root
}

/// The places tried, in order: the state directory, then one in `/var/tmp` for when that lies
/// inside a tree the sandbox writes (a home inside the workspace) or cannot be made.
pub(super) fn roots() -> Vec<PathBuf> {
    own_roots().into()
}

fn own_roots() -> [PathBuf; 2] {
    let state = std::env::var_os("XDG_STATE_HOME");
    crate::workspace::quarantine_roots(state.as_deref(), &crate::workspace::home_dir())
}

/// The name a protected path is renamed to, in its own directory, when it cannot be moved
/// out: inert for git, direnv, dotenv and the agents (none of them reads this name).
pub const INERT_PREFIX: &str = "sbx-quarantined-";

pub(super) struct Quarantine {
    workspace: PathBuf,
    writable: Vec<PathBuf>,
    roots: Vec<PathBuf>,
    dir: Option<(PathBuf, OwnedFd)>,
    manifest: Vec<(usize, PathBuf)>,
    count: usize,
    /// What is left of [`COPY_BUDGET`] for this run.
    copy_left: u64,
}

/// What one run may copy into quarantine where the workspace is on another file system (a
/// sparse file, or one with many names, is copied whole at each name): what would pass it is
/// renamed in place to an inert name instead, so that a run cannot fill the home's disk.
const COPY_BUDGET: u64 = 256 << 20;

static RUN_SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn errno(e: nix::errno::Errno) -> io::Error {
    io::Error::from(e)
}

impl Quarantine {
    pub(super) fn new(workspace: &Path, writable: &[PathBuf], roots: Vec<PathBuf>) -> Self {
        Self {
            workspace: workspace.to_path_buf(),
            writable: writable.to_vec(),
            roots,
            dir: None,
            manifest: Vec::new(),
            count: 0,
            copy_left: COPY_BUDGET,
        }
    }

    /// Whether `path`, or where any of its ancestors leads, lies inside a writable tree: the
    /// sandbox could have planted links there.
    fn reachable_by_sandbox(&self, path: &Path) -> bool {
        let inside = |p: &Path| self.writable.iter().any(|w| p.starts_with(w));
        path.ancestors()
            .any(|a| inside(a) || std::fs::canonicalize(a).is_ok_and(|real| inside(&real)))
    }

    /// Open `root` (made 0700 when missing) if the sandbox could not have written it: not
    /// inside a writable tree, owned by sbx's user, writable by nobody else, no link on the way.
    fn open_root(&self, root: &Path) -> io::Result<OwnedFd> {
        use std::os::unix::fs::DirBuilderExt;
        if self.reachable_by_sandbox(root) {
            return Err(io::Error::other(format!(
                "{} lies inside a tree the sandbox writes",
                root.display()
            )));
        }
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(root)?;
        let real = std::fs::canonicalize(root)?;
        let how = OpenHow::new()
            .flags(OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC)
            .resolve(ResolveFlag::RESOLVE_NO_SYMLINKS);
        let fd = openat2(nix::fcntl::AT_FDCWD, &real, how).map_err(errno)?;
        let st = fstat(&fd).map_err(errno)?;
        if st.st_uid != nix::unistd::geteuid().as_raw() || st.st_mode & 0o022 != 0 {
            return Err(io::Error::other(format!(
                "{} is not owned by this user alone",
                real.display()
            )));
        }
        Ok(fd)
    }

    /// This run's directory, made on first use.
    fn dir(&mut self) -> io::Result<&OwnedFd> {
        if self.dir.is_none() {
            let mut last = io::Error::other("no quarantine directory");
            for root in self.roots.clone() {
                match self
                    .open_root(&root)
                    .and_then(|fd| make_run_dir(&root, &fd))
                {
                    Ok(d) => {
                        self.dir = Some(d);
                        break;
                    }
                    Err(e) => last = e,
                }
            }
            if self.dir.is_none() {
                return Err(last);
            }
        }
        match &self.dir {
            Some((_, fd)) => Ok(fd),
            None => Err(io::Error::other("no quarantine directory")),
        }
    }

    /// The directory holding `path`, opened component by component beneath the workspace
    /// without following links, and the name in it.
    fn parent_of<'p>(&self, path: &'p Path) -> io::Result<(OwnedFd, &'p OsStr)> {
        let rel = path
            .strip_prefix(&self.workspace)
            .map_err(|_| io::Error::other("not inside the workspace"))?;
        let name = rel
            .file_name()
            .ok_or_else(|| io::Error::other("no file name"))?;
        let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let mut fd =
            openat(nix::fcntl::AT_FDCWD, &self.workspace, flags, Mode::empty()).map_err(errno)?;
        for c in rel.parent().into_iter().flat_map(Path::components) {
            let Component::Normal(part) = c else {
                return Err(io::Error::other("not a plain path"));
            };
            fd = openat(&fd, part, flags, Mode::empty()).map_err(errno)?;
        }
        Ok((fd, name))
    }

    /// `path` with the links on its way followed, when one is there and it leads to a place
    /// inside the workspace: a protected path made through a link (`~/.config` replaced by a
    /// link to another directory of a workspace that holds the home) is taken where it lies;
    /// the move itself never follows a link. `None` when no link is on the way, or the place
    /// is outside.
    fn without_links(&self, path: &Path) -> Option<PathBuf> {
        let rel = path.strip_prefix(&self.workspace).ok()?;
        let linked = rel
            .parent()?
            .ancestors()
            .filter(|a| !a.as_os_str().is_empty())
            .any(|a| super::walk::lstat(&self.workspace.join(a)).is_ok_and(|m| m.is_symlink()));
        if !linked {
            return None;
        }
        let dir = std::fs::canonicalize(path.parent()?).ok()?;
        let real = dir.join(path.file_name()?);
        (real.starts_with(&self.workspace) && real != self.workspace).then_some(real)
    }

    /// Move `path` out of the workspace; where that fails, rename it in place to an inert
    /// name. Returns where it went.
    pub(super) fn take(&mut self, path: &Path) -> io::Result<PathBuf> {
        let real = self.without_links(path);
        let path = real.as_deref().unwrap_or(path);
        match self.take_once(path, false) {
            // A command can take its own write permission off the directory that holds what
            // it made (`chmod 555 sub`): the owner gets it back, as the checks give read.
            Err(e)
                if e.kind() == io::ErrorKind::PermissionDenied
                    && super::walk::repair(path, 0o700) =>
            {
                self.take_once(path, true)
            }
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => self.take_once(path, true),
            r => r,
        }
    }

    /// Move `path` out; when that fails, and `fallback` or the failure is not a refused
    /// permission, rename it in place.
    fn take_once(&mut self, path: &Path, fallback: bool) -> io::Result<PathBuf> {
        let (from, name) = self.parent_of(path)?;
        self.count += 1;
        let n = self.count;
        let moved = self.move_out(&from, name, n);
        match moved {
            Ok(dest) => {
                let rel = path.strip_prefix(&self.workspace).unwrap_or(path);
                self.manifest.push((n, rel.to_path_buf()));
                Ok(dest)
            }
            Err(e) if !fallback && e.kind() == io::ErrorKind::PermissionDenied => Err(e),
            Err(e) => {
                let inert = format!("{INERT_PREFIX}{}-{n}", std::process::id());
                renameat(&from, name, &from, inert.as_str())
                    .map(|()| path.with_file_name(&inert))
                    .map_err(|e2| {
                        io::Error::other(format!("{e}; renaming it in place: {}", errno(e2)))
                    })
            }
        }
    }

    fn move_out(&mut self, from: &OwnedFd, name: &OsStr, n: usize) -> io::Result<PathBuf> {
        let short: String = String::from_utf8_lossy(name.as_bytes())
            .chars()
            .take(64)
            .collect();
        let dest_name = format!("{n:04}-{}", short.replace('/', "_"));
        let to = self.dir()?;
        let to_raw = to.as_raw_fd();
        match renameat(from, name, to, dest_name.as_str()) {
            Ok(()) => {}
            Err(nix::errno::Errno::EXDEV) => {
                // Through the opened directories, not the paths again.
                let src = PathBuf::from(format!("/proc/self/fd/{}", from.as_raw_fd())).join(name);
                let dst = PathBuf::from(format!("/proc/self/fd/{to_raw}")).join(&dest_name);
                self.copy_within_budget(&src, &dst)?;
                remove_tree(&src)?;
            }
            Err(e) => return Err(errno(e)),
        }
        let dir = self
            .dir
            .as_ref()
            .map(|(p, _)| p.clone())
            .unwrap_or_default();
        Ok(dir.join(dest_name))
    }

    /// Copy `from` to `to` when its files fit in what is left of the run's budget; nothing is
    /// left at `to` when it does not, or the copy fails.
    fn copy_within_budget(&mut self, from: &Path, to: &Path) -> io::Result<()> {
        let need = tree_bytes(from)?;
        if need > self.copy_left {
            return Err(io::Error::other(format!(
                "{need} bytes to copy across file systems, more than the {} left of this run's \
                 {COPY_BUDGET}-byte quarantine budget",
                self.copy_left
            )));
        }
        self.copy_left -= need;
        copy_tree(from, to).inspect_err(|_| {
            let _ = remove_tree(to);
        })
    }

    /// Write the `MANIFEST`: number, tab, path relative to the workspace, one per line (control
    /// characters and backslashes in a path written `\xNN`).
    pub(super) fn finish(&self) {
        let Some((_, fd)) = &self.dir else { return };
        let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW;
        let Ok(f) = openat(
            fd,
            "MANIFEST",
            flags | OFlag::O_CLOEXEC,
            Mode::from_bits_truncate(0o600),
        ) else {
            return;
        };
        let mut f = std::fs::File::from(f);
        let line = |p: &Path| super::notices::printable(p.as_os_str());
        let mut text = format!("workspace\t{}\n", line(&self.workspace));
        for (n, rel) in &self.manifest {
            text.push_str(&format!("{n:04}\t{}\n", line(rel)));
        }
        let _ = f.write_all(text.as_bytes());
    }
}

/// A new directory for one run under the opened root.
fn make_run_dir(root: &Path, root_fd: &OwnedFd) -> io::Result<(PathBuf, OwnedFd)> {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let seq = RUN_SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = format!("{secs}-{}-{seq}", std::process::id());
    mkdirat(root_fd, name.as_str(), Mode::from_bits_truncate(0o700)).map_err(errno)?;
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let fd = openat(root_fd, name.as_str(), flags, Mode::empty()).map_err(errno)?;
    Ok((root.join(name), fd))
}

/// The bytes a copy of the tree writes: every file's length, at every name (no link
/// followed).
fn tree_bytes(p: &Path) -> io::Result<u64> {
    let meta = p.symlink_metadata()?;
    if !meta.is_dir() {
        return Ok(if meta.is_file() { meta.len() } else { 0 });
    }
    let mut total = 0u64;
    for entry in std::fs::read_dir(p)? {
        total = total.saturating_add(tree_bytes(&entry?.path())?);
    }
    Ok(total)
}

/// Copy a tree without following symbolic links (a move across file systems).
fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    let meta = from.symlink_metadata()?;
    if meta.file_type().is_symlink() {
        std::os::unix::fs::symlink(std::fs::read_link(from)?, to)
    } else if meta.is_dir() {
        std::fs::DirBuilder::new().mode(0o700).create(to)?;
        for entry in std::fs::read_dir(from)? {
            let entry = entry?;
            copy_tree(&entry.path(), &to.join(entry.file_name()))?;
        }
        Ok(())
    } else if meta.is_file() {
        std::fs::copy(from, to).map(|_| ())
    } else if std::os::unix::fs::FileTypeExt::is_fifo(&meta.file_type()) {
        // Nothing in it to keep, but the name is listed: a FIFO stands there.
        nix::unistd::mkfifo(to, Mode::from_bits_truncate(0o600)).map_err(errno)
    } else {
        // Sockets and devices: nothing to keep.
        Ok(())
    }
}

fn remove_tree(p: &Path) -> io::Result<()> {
    if p.symlink_metadata()?.is_dir() {
        std::fs::remove_dir_all(p)
    } else {
        std::fs::remove_file(p)
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "test set-up fails loudly")]
    use super::*;

    #[test]
    fn a_path_that_cannot_leave_the_workspace_gets_an_inert_name_in_place() {
        let ws = tempfile::tempdir().unwrap();
        let ws = std::fs::canonicalize(ws.path()).unwrap();
        std::fs::write(ws.join(".envrc"), "x").unwrap();
        // The only root offered lies inside the workspace: refused.
        let mut q = Quarantine::new(&ws, std::slice::from_ref(&ws), vec![ws.join("q")]);
        let went = q.take(&ws.join(".envrc")).unwrap();
        assert!(!ws.join(".envrc").exists());
        assert!(went.starts_with(&ws), "{}", went.display());
        assert!(
            went.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(INERT_PREFIX)
        );
        assert!(!ws.join("q").exists());
        // Paired: a root outside the writable trees takes it.
        let out = tempfile::tempdir().unwrap();
        std::fs::write(ws.join(".envrc"), "y").unwrap();
        let mut q = Quarantine::new(&ws, std::slice::from_ref(&ws), vec![out.path().join("q")]);
        let went = q.take(&ws.join(".envrc")).unwrap();
        assert!(went.starts_with(out.path()), "{}", went.display());
        assert_eq!(std::fs::read_to_string(went).unwrap(), "y");
    }

    /// A copy across file systems counts every file's length at every name, sparse or not:
    /// past the run's budget nothing is copied (the caller renames it in place instead).
    #[test]
    fn a_copy_across_file_systems_stays_within_the_runs_budget() {
        let t = tempfile::tempdir().unwrap();
        let mut q = Quarantine::new(t.path(), &[], Vec::new());
        let sparse = t.path().join("sparse");
        std::fs::File::create(&sparse)
            .unwrap()
            .set_len(3 << 30)
            .unwrap();
        assert!(q.copy_within_budget(&sparse, &t.path().join("c1")).is_err());
        assert!(!t.path().join("c1").exists());
        let tree = t.path().join("tree");
        std::fs::create_dir(&tree).unwrap();
        std::fs::write(tree.join("a"), vec![7u8; 6000]).unwrap();
        std::fs::hard_link(tree.join("a"), tree.join("b")).unwrap();
        q.copy_left = 10_000;
        assert!(q.copy_within_budget(&tree, &t.path().join("c2")).is_err());
        assert!(!t.path().join("c2").exists());
        // Paired: what fits is copied, and counted.
        std::fs::remove_file(tree.join("b")).unwrap();
        q.copy_within_budget(&tree, &t.path().join("c3")).unwrap();
        assert_eq!(std::fs::read(t.path().join("c3/a")).unwrap().len(), 6000);
        assert_eq!(q.copy_left, 4000);
    }

    #[test]
    fn a_fifo_copied_across_file_systems_is_a_fifo_at_its_new_name() {
        use std::os::unix::fs::FileTypeExt;
        let t = tempfile::tempdir().unwrap();
        let fifo = t.path().join(".envrc");
        nix::unistd::mkfifo(&fifo, Mode::from_bits_truncate(0o600)).unwrap();
        copy_tree(&fifo, &t.path().join("moved")).unwrap();
        let m = t.path().join("moved").symlink_metadata().unwrap();
        assert!(m.file_type().is_fifo());
    }
}
