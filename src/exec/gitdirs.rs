//! The git directories of a workspace, found from the `.git` entries the walk gives: a working
//! tree's `.git` directory, the git directory a `.git` file (`gitdir: ...`) or link names (a
//! submodule's, a linked worktree's, a `--separate-git-dir` repository's), the submodules and
//! linked worktrees under each one's `modules` and `worktrees`, and the common directory a
//! linked worktree takes its hooks and config from. With each, what git takes from
//! elsewhere: the working tree that a relative `core.hooksPath` starts at, and the config
//! files that name hooks directories and includes. The record before the run and the check
//! after it ([`super::gitscan`]) take the same list, so that both look at the same paths.
use super::walk;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// How deep below `modules` and `worktrees` git directories are looked for.
const MODULE_DEPTH: usize = 8;

/// One git directory, as one `.git` entry reaches it.
pub(super) struct GitDir {
    /// Its path, without links.
    pub dir: PathBuf,
    /// Whether it lies inside the workspace. One outside (a linked worktree's, whose
    /// repository is elsewhere) is not looked into, but its config may still name a hooks
    /// directory inside the working tree.
    pub inside: bool,
    /// Where its config and hooks come from: the `commondir` of a linked worktree's git
    /// directory, else `dir` itself.
    pub common: PathBuf,
    /// The root of its working tree, where git runs hooks and starts a relative
    /// `core.hooksPath` from, when known.
    pub worktree: Option<PathBuf>,
    /// The directories from the one a `.git` entry is (or names) down to `dir`: one moved
    /// into place during the run makes everything below it count as new.
    pub way: Vec<PathBuf>,
    /// The `.git` file or link that names it (or the git directory above it).
    pub named_by: Option<PathBuf>,
    /// Whether it was found as a directory git's discovery takes for a git directory of its
    /// own, not through a `.git` entry ([`is_discovered_git_dir`]).
    pub discovered: bool,
}

/// What [`find`] found.
pub(super) struct Found {
    pub dirs: Vec<GitDir>,
    /// `.git` files and links that name no git directory inside the workspace.
    pub strays: Vec<PathBuf>,
}

/// The workspace, spelled as given and without links (asked only when a path to compare
/// with it was resolved: most workspaces have no `.git` file or link to follow).
pub(super) struct Root {
    given: PathBuf,
    real: std::cell::OnceCell<PathBuf>,
}

impl Root {
    pub(super) fn of(workspace: &Path) -> Self {
        Self {
            given: workspace.to_path_buf(),
            real: std::cell::OnceCell::new(),
        }
    }

    /// A real path inside the workspace, spelled from the workspace as given.
    fn inside(&self, real: &Path) -> Option<PathBuf> {
        let root = self.real.get_or_init(|| {
            std::fs::canonicalize(&self.given).unwrap_or_else(|_| self.given.clone())
        });
        let rel = real.strip_prefix(root).ok()?;
        Some(self.given.join(rel))
    }

    /// A real path as the finder gives it: spelled from the workspace when it lies inside,
    /// else as it is, so that [`Root::holds`] tells the two apart.
    fn place(&self, real: PathBuf) -> PathBuf {
        self.inside(&real).unwrap_or(real)
    }

    /// Whether a path [`Root::place`] gave lies inside the workspace.
    fn holds(&self, placed: &Path) -> bool {
        placed.starts_with(&self.given)
    }

    /// Where a path leads, links followed, when that is inside the workspace: the path the
    /// quarantine can move, which follows no link.
    pub(super) fn real_inside(&self, path: &Path) -> Option<PathBuf> {
        self.inside(&std::fs::canonicalize(path).ok()?)
    }
}

/// The git directories that `dot_gits` are or name, those of `bare` that are git directories
/// of their own ([`is_discovered_git_dir`]), and everything beneath them.
pub(super) fn find(root: &Root, dot_gits: &[PathBuf], bare: &[PathBuf]) -> Found {
    let mut f = Finder {
        root,
        looked_into: BTreeSet::new(),
        found: Found {
            dirs: Vec::new(),
            strays: Vec::new(),
        },
    };
    for dot_git in dot_gits {
        f.entry(dot_git);
    }
    for dir in bare.iter().filter(|d| is_discovered_git_dir(d)) {
        let g = GitDir {
            dir: dir.clone(),
            inside: true,
            common: f.common_of(dir).unwrap_or_else(|| dir.clone()),
            worktree: core_worktree(dir),
            way: vec![dir.clone()],
            named_by: None,
            discovered: true,
        };
        f.add(g, 0);
    }
    f.found
}

/// A directory git's discovery takes for a git directory when it walks up through it: a
/// `HEAD` beside `objects` and `refs`, or beside a `commondir` that lends them (git also
/// checks what `HEAD` holds; any `HEAD` counts here). Its `core.worktree` gives it a working
/// tree.
pub(super) fn is_discovered_git_dir(dir: &Path) -> bool {
    let has = |n: &str| walk::lstat(&dir.join(n)).is_ok();
    has("HEAD") && ((has("objects") && has("refs")) || has("commondir"))
}

struct Finder<'r> {
    root: &'r Root,
    /// Git directories whose `modules` and `worktrees` were looked at: reached again (by
    /// another `.git` file, as a common directory), one is judged again for that way.
    looked_into: BTreeSet<PathBuf>,
    found: Found,
}

impl Finder<'_> {
    fn entry(&mut self, dot_git: &Path) {
        let Ok(meta) = walk::lstat(dot_git) else {
            return;
        };
        let worktree = dot_git.parent().map(Path::to_path_buf);
        let (dir, named_by) = if meta.is_dir() {
            (Some(dot_git.to_path_buf()), None)
        } else {
            (self.named(dot_git, &meta), Some(dot_git.to_path_buf()))
        };
        let inside = dir.as_deref().is_some_and(|d| self.root.holds(d));
        if !inside {
            self.found.strays.push(dot_git.to_path_buf());
        }
        let Some(dir) = dir else {
            return;
        };
        let g = GitDir {
            common: self.common_of(&dir).unwrap_or_else(|| dir.clone()),
            way: vec![dir.clone()],
            dir,
            inside,
            worktree,
            named_by,
            discovered: false,
        };
        self.add(g, 0);
    }

    /// The git directory a `.git` file's `gitdir:` or a `.git` link names ([`Root::place`]).
    fn named(&self, dot_git: &Path, meta: &std::fs::Metadata) -> Option<PathBuf> {
        let target = if meta.is_file() {
            let text = read_text(dot_git)?;
            let dir = text.trim().strip_prefix("gitdir:")?.trim().to_string();
            dot_git.parent()?.join(dir)
        } else {
            dot_git.to_path_buf()
        };
        let real = std::fs::canonicalize(target).ok()?;
        let is_dir = walk::stat(&real).is_ok_and(|m| m.is_dir());
        is_dir.then(|| self.root.place(real))
    }

    /// The other directory a git directory's `commondir` names ([`Root::place`]).
    fn common_of(&self, dir: &Path) -> Option<PathBuf> {
        let text = read_text(&dir.join("commondir"))?;
        let real = std::fs::canonicalize(dir.join(text.trim())).ok()?;
        let common = self.root.place(real);
        (common != dir).then_some(common)
    }

    /// Records `g` and, the first time its directory is reached, what lies beneath it and
    /// its common directory.
    fn add(&mut self, g: GitDir, depth: usize) {
        let first = g.inside && self.looked_into.insert(g.dir.clone());
        let (dir, way, named_by) = (g.dir.clone(), g.way.clone(), g.named_by.clone());
        let common = (g.common != g.dir && self.root.holds(&g.common)).then(|| g.common.clone());
        self.found.dirs.push(g);
        if !first || depth >= MODULE_DEPTH {
            return;
        }
        for sub in ["modules", "worktrees"] {
            for d in subdirs(&dir.join(sub)) {
                let way = [way.clone(), vec![d.clone()]].concat();
                self.nested(&d, way, named_by.clone(), depth + 1);
            }
        }
        if let Some(common) = common {
            let worktree = main_worktree(&common);
            let g = GitDir {
                dir: common.clone(),
                inside: true,
                common: common.clone(),
                worktree,
                way: vec![common],
                named_by: None,
                discovered: false,
            };
            self.add(g, depth + 1);
        }
    }

    /// A directory under `modules` or `worktrees`: a git directory when it has a HEAD,
    /// config or hooks (of any kind); else (a submodule named with slashes) its
    /// subdirectories are looked at.
    fn nested(&mut self, dir: &Path, way: Vec<PathBuf>, named_by: Option<PathBuf>, depth: usize) {
        if is_git_dir(dir) {
            let g = GitDir {
                dir: dir.to_path_buf(),
                inside: true,
                common: self.common_of(dir).unwrap_or_else(|| dir.to_path_buf()),
                worktree: worktree_of(dir),
                way,
                named_by,
                discovered: false,
            };
            self.add(g, depth);
        } else if depth < MODULE_DEPTH {
            for d in subdirs(dir) {
                let way = [way.clone(), vec![d.clone()]].concat();
                self.nested(&d, way, named_by.clone(), depth + 1);
            }
        }
    }
}

fn is_git_dir(dir: &Path) -> bool {
    ["HEAD", "config", "hooks"]
        .iter()
        .any(|n| walk::lstat(&dir.join(n)).is_ok())
}

/// The working tree of a git directory under `modules` or `worktrees`: a linked worktree's
/// `gitdir` file names its `.git` file; a submodule's config names it in `core.worktree`.
fn worktree_of(dir: &Path) -> Option<PathBuf> {
    if let Some(text) = read_text(&dir.join("gitdir")) {
        let dot_git = crate::profile::normalize(&dir.join(text.trim()));
        return dot_git.parent().map(Path::to_path_buf);
    }
    core_worktree(dir)
}

/// The working tree of a repository's own git directory: the one its `.git` lies in.
fn main_worktree(common: &Path) -> Option<PathBuf> {
    if common.file_name().is_some_and(|n| n == ".git") {
        return common.parent().map(Path::to_path_buf);
    }
    core_worktree(common)
}

fn core_worktree(dir: &Path) -> Option<PathBuf> {
    let text = read_text(&dir.join("config"))?;
    let tree = crate::gitconfig::last_value(&text, "core", "worktree")?;
    Some(crate::profile::normalize(&dir.join(tree)))
}

/// Real directories (not links) directly inside `dir`.
fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = walk::read_dir(dir) else {
        return Vec::new();
    };
    rd.filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect()
}

/// A file's text, only when it is a regular file (a FIFO the command left as `.git` or
/// `.git/config` would block the check after the run for ever) of at most
/// [`walk::TEXT_LIMIT`] bytes. `None` otherwise: a `.git` file or `commondir` that cannot be
/// read names nothing, and is itself judged dangerous when it changed.
pub(super) fn read_text(path: &Path) -> Option<String> {
    String::from_utf8(walk::read(path, walk::TEXT_LIMIT).ok()?).ok()
}
