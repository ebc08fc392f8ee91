//! What a repository's own files say about its branches, read as git reads them: loose refs
//! and `packed-refs` in the common git directory, `HEAD` in the work tree's, and the
//! configuration keys that decide whether a new branch records an upstream
//! (`branch.autoSetupMerge`, `checkout.guess`, `worktree.guessRemote`). A repository whose refs
//! cannot be read this way (the reftable format, an unreadable `packed-refs`) answers "not
//! known", and its callers take the answer that writes.

use super::project;
use super::words::Word;
use std::path::{Path, PathBuf};

/// One repository as git finds it from a directory.
pub(crate) struct Repo {
    /// The work tree's git directory (`HEAD` and `index` live here).
    git_dir: PathBuf,
    /// The work tree; `None` for a bare repository.
    work_tree: Option<PathBuf>,
    /// The common git directory (refs, `packed-refs`, `config`).
    common: PathBuf,
    /// The text of `packed-refs`; `None` when there is none.
    packed: Option<String>,
    /// The refs cannot be read from files (reftable, an unreadable `packed-refs`).
    opaque: bool,
}

impl Repo {
    /// The repository git finds from `dir`: the first `.git` up (a directory, or a file that
    /// names one), or a directory holding `HEAD` and `objects` (a bare repository). `None`
    /// outside any repository; `Some(Err(()))` when a `.git` file is not understood.
    pub(crate) fn find(dir: &Path) -> Option<Result<Repo, ()>> {
        let (git_dir, work_tree) = dir.ancestors().find_map(|a| {
            let dot = a.join(".git");
            let tree = Some(a.to_path_buf());
            match dot.symlink_metadata() {
                Ok(m) if m.is_file() => Some((linked(&dot, a), tree)),
                Ok(_) => Some((Ok(dot), tree)),
                Err(_) if a.join("HEAD").is_file() && a.join("objects").is_dir() => {
                    Some((Ok(a.to_path_buf()), None))
                }
                Err(_) => None,
            }
        })?;
        Some(git_dir.map(|g| Repo::at(g, work_tree)))
    }

    /// The work tree, and the index file that lists what is tracked in it.
    pub(crate) fn index(&self) -> Option<(&Path, PathBuf)> {
        let tree = self.work_tree.as_deref()?;
        Some((tree, self.git_dir.join("index")))
    }

    fn at(git_dir: PathBuf, work_tree: Option<PathBuf>) -> Repo {
        let common = match project::read(&git_dir.join("commondir")) {
            Some(Ok(t)) => super::paths::resolve(t.trim(), &git_dir),
            _ => git_dir.clone(),
        };
        let (packed, unreadable) = match packed_refs(&common.join("packed-refs")) {
            None => (None, false),
            Some(Ok(t)) => (Some(t), false),
            Some(Err(_)) => (None, true),
        };
        let opaque = unreadable || common.join("reftable").symlink_metadata().is_ok();
        Repo {
            git_dir,
            work_tree,
            common,
            packed,
            opaque,
        }
    }

    /// The repository's own configuration file.
    pub(crate) fn config(&self) -> PathBuf {
        self.common.join("config")
    }

    /// Whether the ref `full` (`refs/heads/x`) exists; `None` when refs cannot be read.
    pub(crate) fn has(&self, full: &str) -> Option<bool> {
        if self.opaque {
            return None;
        }
        let loose = self.common.join(full).is_file();
        Some(loose || self.packed_refs().any(|r| r == full))
    }

    /// The full ref a name given to git stands for, by git's rules for a short name
    /// (`x`, `refs/x`, `refs/tags/x`, `refs/heads/x`, `refs/remotes/x`,
    /// `refs/remotes/x/HEAD`, the first that exists). `Ok(None)` when none does; `Err(())`
    /// when refs cannot be read.
    pub(crate) fn resolve(&self, name: &str) -> Result<Option<String>, ()> {
        let candidates = [
            name.to_string(),
            format!("refs/{name}"),
            format!("refs/tags/{name}"),
            format!("refs/heads/{name}"),
            format!("refs/remotes/{name}"),
            format!("refs/remotes/{name}/HEAD"),
        ];
        for full in candidates {
            let found = if full.starts_with("refs/") {
                self.has(&full).ok_or(())?
            } else {
                false
            };
            if found {
                return Ok(Some(full));
            }
        }
        Ok(None)
    }

    /// Whether some remote has a branch `name` (`refs/remotes/R/name`), which `git checkout
    /// name` turns into a new tracking branch; `None` when refs cannot be read.
    pub(crate) fn remote_has(&self, name: &str) -> Option<bool> {
        if self.opaque {
            return None;
        }
        let tail = format!("/{name}");
        let remote_branch = |r: &str| {
            r.strip_prefix("refs/remotes/")
                .and_then(|rest| rest.strip_suffix(&tail))
                .is_some_and(|remote| !remote.is_empty())
        };
        if self.packed_refs().any(remote_branch) {
            return Some(true);
        }
        let remotes = std::fs::read_dir(self.common.join("refs/remotes"));
        let loose = remotes.into_iter().flatten().flatten().any(|e| {
            let p = e.path().join(name);
            p.is_file()
        });
        Some(loose)
    }

    /// The branch `HEAD` is on (`main` for `ref: refs/heads/main`); `None` when detached or
    /// unreadable.
    pub(crate) fn head_branch(&self) -> Option<String> {
        let head = project::read(&self.git_dir.join("HEAD"))?.ok()?;
        head.trim()
            .strip_prefix("ref:")
            .and_then(|r| r.trim().strip_prefix("refs/heads/"))
            .map(str::to_string)
    }

    /// The names `packed-refs` lists.
    fn packed_refs(&self) -> impl Iterator<Item = &str> {
        self.packed
            .as_deref()
            .unwrap_or("")
            .lines()
            .filter(|l| !l.starts_with(['#', '^']))
            .filter_map(|l| l.split_once(' ').map(|(_, r)| r.trim_end()))
    }
}

/// Larger `packed-refs` files are not read: the refs are then not known.
const MAX_PACKED_BYTES: u64 = 64 << 20;

/// The text of `packed-refs` (one line a ref: a repository with many tags has megabytes of
/// them), read as [`project::read`] reads a project file, with a larger bound.
fn packed_refs(file: &Path) -> Option<Result<String, std::io::Error>> {
    use std::io::Read;
    let f = match crate::regular_file::open(file) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => return Some(Err(e)),
        Ok(f) => f,
    };
    let mut text = String::new();
    Some(
        match f.take(MAX_PACKED_BYTES + 1).read_to_string(&mut text) {
            Ok(n) if n as u64 > MAX_PACKED_BYTES => Err(std::io::Error::other("too large")),
            Ok(_) => Ok(text),
            Err(e) => Err(e),
        },
    )
}

/// The git directory a `.git` file names (`gitdir: PATH`, relative to the file's directory).
fn linked(dot_git: &Path, dir: &Path) -> Result<PathBuf, ()> {
    let text = project::read(dot_git).ok_or(())?.map_err(|_| ())?;
    let target = text.trim().strip_prefix("gitdir:").ok_or(())?.trim();
    Ok(super::paths::resolve(target, dir))
}

/// `branch.autoSetupMerge`: when a new branch records its start point as its upstream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AutoSetup {
    /// Never, unless `--track`.
    Off,
    /// When the start point is a remote-tracking branch (git's default).
    Remote,
    /// Also when it is a local branch.
    Always,
    /// Copy the start point's own upstream, if it has one.
    Inherit,
    /// A remote-tracking start point of the new branch's own name.
    Simple,
}

/// The settings of one repository that decide whether a new branch records an upstream, from
/// the system's, the user's, the repository's files and `git -c`, the later winning. Included
/// files are not followed.
pub(crate) struct Settings {
    pub(crate) auto: AutoSetup,
    /// `checkout.guess`: `git checkout NAME` makes a branch from a remote's `NAME`.
    pub(crate) guess: bool,
    /// `worktree.guessRemote`.
    pub(crate) guess_remote: bool,
    /// Branches with `branch.NAME.merge` set (what `inherit` copies).
    tracked: Vec<String>,
}

impl Settings {
    pub(crate) fn read(repo: Option<&Repo>, home: &Path, cli: &[&Word]) -> Settings {
        let mut s = Settings {
            auto: AutoSetup::Remote,
            guess: true,
            guess_remote: false,
            tracked: Vec::new(),
        };
        let mut files = vec![
            PathBuf::from("/etc/gitconfig"),
            home.join(".config/git/config"),
            home.join(".gitconfig"),
        ];
        files.extend(repo.map(Repo::config));
        for f in files {
            let Some(Ok(text)) = project::read(&f) else {
                continue;
            };
            for e in crate::gitconfig::entries(&text).unwrap_or_default() {
                let key = format!("{}.{}", e.section, e.key);
                s.set(&key, e.subsection.as_deref(), &e.value);
            }
        }
        for kv in cli {
            let (key, value) = kv.value.split_once('=').unwrap_or((&kv.value, "true"));
            let key = key.to_ascii_lowercase();
            let (section, rest) = key.split_once('.').unwrap_or((&key, ""));
            match rest.rsplit_once('.') {
                Some((sub, k)) => s.set(&format!("{section}.{k}"), Some(sub), value),
                None => s.set(&key, None, value),
            }
        }
        s
    }

    fn set(&mut self, key: &str, sub: Option<&str>, value: &str) {
        match (key, sub) {
            ("branch.autosetupmerge", None) => self.auto = auto_setup(value),
            ("checkout.guess", None) => self.guess = boolean(value).unwrap_or(self.guess),
            ("worktree.guessremote", None) => {
                self.guess_remote = boolean(value).unwrap_or(self.guess_remote);
            }
            ("branch.merge", Some(b)) => self.tracked.push(b.to_string()),
            _ => {}
        }
    }

    /// Whether `branch` has an upstream of its own.
    pub(crate) fn tracks(&self, branch: &str) -> bool {
        self.tracked.iter().any(|b| b == branch)
    }
}

fn auto_setup(value: &str) -> AutoSetup {
    match value.to_ascii_lowercase().as_str() {
        "always" => AutoSetup::Always,
        "inherit" => AutoSetup::Inherit,
        "simple" => AutoSetup::Simple,
        v => match boolean(v) {
            Some(false) => AutoSetup::Off,
            // git rejects another value; the default is the answer that records one.
            Some(true) | None => AutoSetup::Remote,
        },
    }
}

/// A git boolean.
fn boolean(value: &str) -> Option<bool> {
    match value.to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" | "" => Some(true),
        "false" | "no" | "off" | "0" => Some(false),
        _ => None,
    }
}
