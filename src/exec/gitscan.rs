//! Git's own files that run code later, in the repositories of a workspace: hooks, config,
//! `commondir`, submodules' and linked worktrees' git directories, and `.git` files or links.
//! A repository made during the run (`git init`, `git clone`, `git submodule add`) is ordinary
//! work, so it is judged by content, not by being new: what changed during the run is taken
//! away only when it can make git run a program (a hook that is not a `.sample`, a config key
//! outside the plain ones git itself writes, a `commondir` or `.git` file pointing elsewhere).
use super::protect::Since;
use super::walk::{self, Walk};
use std::path::{Path, PathBuf};

/// What counts as changed in one git directory: what changed during the run, or everything,
/// in a git directory (or hooks directory) moved or linked into place during it.
#[derive(Clone, Copy)]
struct Changes<'a> {
    since: &'a Since,
    all: bool,
    /// The workspace, where a repository's `core.hooksPath` is looked for.
    workspace: Option<&'a Path>,
}

impl<'a> Changes<'a> {
    fn of(since: &'a Since, all: bool) -> Self {
        Self {
            since,
            all,
            workspace: None,
        }
    }
    fn in_workspace(self, workspace: &'a Path) -> Self {
        Self {
            workspace: Some(workspace),
            ..self
        }
    }
    fn changed(&self, path: &Path) -> bool {
        (self.all && walk::lstat(path).is_ok()) || self.since.changed(path)
    }
    /// The same, and everything below `dir` when it was moved in.
    fn below(&self, dir: &Path) -> Self {
        Self {
            all: self.all || self.since.moved_in(dir),
            ..*self
        }
    }
}

/// One finding of the scan.
pub(super) struct Finding {
    pub path: PathBuf,
    pub change: &'static str,
    pub rule: &'static str,
}

/// How deep below `.git/modules` git directories are looked for (below the workspace, the
/// [`Walk`] goes two levels down).
const MODULE_DEPTH: usize = 8;

/// The workspace repository's own files the scan looks at, recorded before the run so that
/// changes to them are judged exactly.
pub(super) fn root_files(workspace: &Path) -> Vec<PathBuf> {
    let git = workspace.join(".git");
    if walk::lstat(&git).is_err() {
        return vec![git];
    }
    let mut files: Vec<PathBuf> = [
        "",
        "config",
        "config.worktree",
        "commondir",
        "hooks",
        "index",
    ]
    .iter()
    .map(|n| {
        if n.is_empty() {
            git.clone()
        } else {
            git.join(n)
        }
    })
    .collect();
    if let Ok(rd) = walk::read_dir(&git.join("hooks")) {
        files.extend(rd.filter_map(Result::ok).map(|e| e.path()));
    }
    files
}

/// Every `.git` entry at the workspace root and up to two directories below it.
pub(super) fn scan(workspace: &Path, walk: &Walk, since: &Since) -> Vec<Finding> {
    let mut out = Vec::new();
    check_index_gitlinks(workspace, since, &mut out);
    for dot_git in walk.dot_gits(workspace) {
        check_dot_git(&dot_git, workspace, since, &mut out);
    }
    out
}

/// The nested repositories' `.git` entries, git directories (those `.git` files name, of
/// submodules and worktrees too) and hooks directories as they are before the run, so that
/// one moved into place during it is told from one that was there ([`Since::moved_in`]).
pub(super) fn nested_files(workspace: &Path, walk: &Walk) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dot_git in walk.dot_gits(workspace) {
        let Ok(meta) = walk::lstat(&dot_git) else {
            continue;
        };
        let dir = if meta.is_dir() {
            Some(dot_git.clone())
        } else if meta.is_file() {
            gitdir_inside(&dot_git, workspace)
        } else {
            None
        };
        if let Some(named) = meta
            .is_dir()
            .then(|| hooks_path(&dot_git, workspace))
            .flatten()
        {
            out.push(named.clone());
            if let Ok(rd) = walk::read_dir(&named) {
                out.extend(rd.filter_map(Result::ok).map(|e| e.path()));
            }
        }
        out.push(dot_git);
        if let Some(d) = dir {
            git_dir_files(&d, 0, &mut out);
        }
    }
    out
}

/// A git directory, its hooks directory, and those of its submodules and worktrees.
fn git_dir_files(git: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    out.push(git.to_path_buf());
    out.push(git.join("hooks"));
    if depth >= MODULE_DEPTH {
        return;
    }
    for sub in ["modules", "worktrees"] {
        for d in subdirs(&git.join(sub)) {
            nested_git_files(&d, depth + 1, out);
        }
    }
}

/// As [`check_nested`] walks: a git directory, or the directories of a name with slashes.
fn nested_git_files(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if is_git_dir(dir) {
        git_dir_files(dir, depth, out);
    } else if depth < MODULE_DEPTH {
        out.push(dir.to_path_buf());
        for d in subdirs(dir) {
            nested_git_files(&d, depth + 1, out);
        }
    }
}

/// A directory under `modules` is a git directory when it has a HEAD, config or hooks.
fn is_git_dir(dir: &Path) -> bool {
    ["HEAD", "config", "hooks"]
        .iter()
        .any(|n| walk::lstat(&dir.join(n)).is_ok())
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

fn finding(path: &Path, change: &'static str, rule: &'static str) -> Finding {
    Finding {
        path: path.to_path_buf(),
        change,
        rule,
    }
}

fn check_dot_git(dot_git: &Path, workspace: &Path, since: &Since, out: &mut Vec<Finding>) {
    let Ok(meta) = walk::lstat(dot_git) else {
        return;
    };
    let ty = meta.file_type();
    if ty.is_dir() {
        let changes = Changes::of(since, false).in_workspace(workspace);
        check_git_dir(dot_git, changes.below(dot_git), 0, out);
        return;
    }
    match gitdir_inside(dot_git, workspace) {
        // A git directory elsewhere in the workspace (a submodule's under `.git/modules`, or
        // one made anywhere): judged like any other, and whole when the `.git` file that
        // names it is new.
        Some(dir) if ty.is_file() => {
            let changes = Changes::of(since, since.changed(dot_git)).below(&dir);
            check_git_dir(&dir, changes, 0, out);
        }
        _ if since.changed(dot_git) => out.push(finding(
            dot_git,
            "created",
            "a .git file or link pointing outside the workspace's repositories",
        )),
        _ => {}
    }
}

/// The directory a `.git` file's `gitdir:` names, when it lies inside the workspace.
fn gitdir_inside(dot_git: &Path, workspace: &Path) -> Option<PathBuf> {
    let text = read_text(dot_git).ok()?;
    let dir = text.trim().strip_prefix("gitdir:").map(str::trim)?;
    let base = dot_git.parent().unwrap_or(workspace);
    std::fs::canonicalize(base.join(dir))
        .ok()
        .filter(|d| d.starts_with(workspace))
}

/// The directory a repository's `core.hooksPath` names, where git runs its hooks instead of
/// `hooks` (husky and other hook managers set it), when `git` is a working tree's `.git`
/// directory and the path lies inside `workspace`. A nested
/// repository's is neither read-only nor recorded otherwise: the workspace repository's own
/// is held by the plan.
fn hooks_path(git: &Path, workspace: &Path) -> Option<PathBuf> {
    if git.file_name()? != ".git" {
        return None;
    }
    let text = read_text(git.join("config")).ok()?;
    let (named, _) = crate::gitconfig::hooks_and_includes(&text);
    let named = named?;
    if named.starts_with('~') {
        return None;
    }
    let dir = crate::profile::normalize(&git.parent()?.join(named));
    (dir.starts_with(workspace) && dir != workspace).then_some(dir)
}

/// The symbolic links on the way from `workspace` (excluded) to `dir` (included).
fn links_on_the_way(dir: &Path, workspace: &Path) -> Vec<PathBuf> {
    dir.ancestors()
        .take_while(|a| *a != workspace && a.starts_with(workspace))
        .filter(|a| walk::lstat(a).is_ok_and(|m| m.file_type().is_symlink()))
        .map(Path::to_path_buf)
        .collect()
}

/// Hooks, config and `commondir` of one git directory, then its submodules and worktrees.
fn check_git_dir(git: &Path, changes: Changes<'_>, depth: usize, out: &mut Vec<Finding>) {
    let hooks = git.join("hooks");
    check_hooks(&hooks, changes.below(&hooks), out);
    if let Some(ws) = changes.workspace
        && let Some(named) = hooks_path(git, ws)
    {
        // A link made during the run on the way leads git to hooks the check cannot look at
        // here (`rm -r .husky/_ && ln -s x .husky/_`): the link goes; one the user made stays,
        // and what it leads to is not checked.
        let links = links_on_the_way(&named, ws);
        for link in links.iter().filter(|l| changes.changed(l)) {
            out.push(finding(
                link,
                "created",
                "a link on the way to git's core.hooksPath",
            ));
        }
        if links.is_empty() {
            check_hooks(&named, changes.below(&named), out);
        }
    }
    for name in ["config", "config.worktree"] {
        let cfg = git.join(name);
        if changes.changed(&cfg) && !config_is_plain(&cfg) {
            out.push(finding(
                &cfg,
                "config",
                "git config with keys that run programs",
            ));
        }
    }
    let commondir = git.join("commondir");
    if changes.changed(&commondir) && !is_worktree_of(git) {
        out.push(finding(
            &commondir,
            "created",
            "git commondir (takes hooks and config from elsewhere)",
        ));
    }
    if depth >= MODULE_DEPTH {
        return;
    }
    for sub in ["modules", "worktrees"] {
        for d in subdirs(&git.join(sub)) {
            check_nested(&d, changes.below(&d), depth + 1, out);
        }
    }
}

/// A directory under `modules` is a git directory when it has a HEAD, config or hooks (of any
/// kind); else (a submodule named with slashes) its subdirectories are looked at.
fn check_nested(dir: &Path, changes: Changes<'_>, depth: usize, out: &mut Vec<Finding>) {
    if is_git_dir(dir) {
        check_git_dir(dir, changes, depth, out);
    } else if depth < MODULE_DEPTH {
        for d in subdirs(dir) {
            check_nested(&d, changes.below(&d), depth + 1, out);
        }
    }
}

/// A linked worktree's git directory (`.git/worktrees/NAME`) whose `commondir` leads back to
/// the repository that holds it.
fn is_worktree_of(git: &Path) -> bool {
    let Some(repo) = git
        .parent()
        .filter(|p| p.file_name().is_some_and(|n| n == "worktrees"))
        .and_then(Path::parent)
    else {
        return false;
    };
    let Ok(text) = read_text(git.join("commondir")) else {
        return false;
    };
    let (Ok(to), Ok(repo)) = (
        std::fs::canonicalize(git.join(text.trim())),
        std::fs::canonicalize(repo),
    ) else {
        return false;
    };
    to == repo
}

fn check_hooks(hooks: &Path, changes: Changes<'_>, out: &mut Vec<Finding>) {
    let Ok(meta) = walk::lstat(hooks) else {
        return;
    };
    if !meta.is_dir() {
        if changes.changed(hooks) {
            out.push(finding(hooks, "created", "git hooks"));
        }
        return;
    }
    let Ok(rd) = walk::read_dir(hooks) else {
        return;
    };
    for e in rd.filter_map(Result::ok) {
        let p = e.path();
        let sample = p.extension().is_some_and(|x| x == "sample")
            && e.file_type().is_ok_and(|t| t.is_file());
        if !sample && changes.changed(&p) {
            out.push(finding(&p, "hook", "git hooks"));
        }
    }
}

/// Whether a git config file holds only plain keys. Anything not understood is not plain.
fn config_is_plain(path: &Path) -> bool {
    match read_file(path) {
        Ok(bytes) if bytes.len() <= 64 * 1024 => {
            std::str::from_utf8(&bytes).is_ok_and(crate::gitconfig::text_is_plain)
        }
        _ => false,
    }
}

/// The paths of the submodule entries (gitlinks, mode 160000) in a git index, versions 2 to
/// 4; `None` when the file is not an index this understands.
fn index_gitlinks(index: &[u8], hash_len: usize) -> Option<Vec<PathBuf>> {
    use std::os::unix::ffi::OsStrExt;
    let be32 = |at: usize| -> Option<u32> {
        Some(u32::from_be_bytes(index.get(at..at + 4)?.try_into().ok()?))
    };
    if index.get(..4)? != b"DIRC" {
        return None;
    }
    let version = be32(4)?;
    let count = be32(8)?;
    let mut pos = 12usize;
    let mut prev: Vec<u8> = Vec::new();
    let mut out = Vec::new();
    for _ in 0..count {
        let start = pos;
        let mode = be32(pos + 24)?;
        pos += 40 + hash_len;
        let flags = u16::from_be_bytes(index.get(pos..pos + 2)?.try_into().ok()?);
        pos += 2;
        if version >= 3 && flags & 0x4000 != 0 {
            pos += 2;
        }
        let path = if version == 4 {
            let (strip, used) = varint(index.get(pos..)?)?;
            pos += used;
            let keep = prev.len().checked_sub(strip)?;
            let end = pos + index.get(pos..)?.iter().position(|b| *b == 0)?;
            let mut p = prev[..keep].to_vec();
            p.extend_from_slice(&index[pos..end]);
            pos = end + 1;
            p
        } else {
            let end = pos + index.get(pos..)?.iter().position(|b| *b == 0)?;
            let p = index[pos..end].to_vec();
            pos = start + ((end - start + 8) & !7);
            p
        };
        if mode & 0o170000 == 0o160000 {
            out.push(PathBuf::from(std::ffi::OsStr::from_bytes(&path)));
        }
        prev = path;
    }
    Some(out)
}

/// git's offset encoding of the index's version 4 path prefixes.
fn varint(b: &[u8]) -> Option<(usize, usize)> {
    let mut i = 0;
    let mut c = *b.first()?;
    let mut val = usize::from(c & 0x7f);
    while c & 0x80 != 0 {
        i += 1;
        c = *b.get(i)?;
        val = ((val + 1) << 7) | usize::from(c & 0x7f);
    }
    Some((val, i + 1))
}

/// Submodules registered in the workspace repository's index during the run: git recurses
/// into them from the top (`git status`), wherever they lie.
fn check_index_gitlinks(workspace: &Path, since: &Since, out: &mut Vec<Finding>) {
    let git = workspace.join(".git");
    let index = git.join("index");
    if !since.changed(&index) {
        return;
    }
    let sha256 = read_text(git.join("config"))
        .ok()
        .and_then(|t| crate::gitconfig::entries(&t))
        .is_some_and(|es| {
            es.iter().any(|e| {
                e.section == "extensions" && e.key == "objectformat" && e.value == "sha256"
            })
        });
    let Ok(bytes) = read_file(&index) else {
        return;
    };
    let Some(links) = index_gitlinks(&bytes, if sha256 { 32 } else { 20 }) else {
        out.push(finding(&index, "changed", "a git index sbx cannot read"));
        return;
    };
    for rel in links {
        if rel
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
        {
            check_dot_git(&workspace.join(rel).join(".git"), workspace, since, out);
        }
    }
}

/// A file's bytes, only when it is a regular file: a FIFO the command left as `.git` or
/// `.git/config` would block the check after the run for ever.
fn read_file(path: impl AsRef<Path>) -> std::io::Result<Vec<u8>> {
    walk::read(path.as_ref())
}

fn read_text(path: impl AsRef<Path>) -> std::io::Result<String> {
    String::from_utf8(read_file(path)?).map_err(std::io::Error::other)
}

#[cfg(test)]
mod tests {
    use super::{index_gitlinks, varint};

    #[test]
    fn index_gitlinks_are_found_in_versions_2_and_4() {
        fn entry(mode: u32, path: &[u8]) -> Vec<u8> {
            let mut e = vec![0u8; 24];
            e.extend_from_slice(&mode.to_be_bytes());
            e.extend_from_slice(&[0u8; 12]);
            e.extend_from_slice(&[0u8; 20]);
            e.extend_from_slice(&(path.len() as u16).to_be_bytes());
            e
        }
        let mut v2 = b"DIRC".to_vec();
        v2.extend_from_slice(&2u32.to_be_bytes());
        v2.extend_from_slice(&2u32.to_be_bytes());
        for (mode, path) in [(0o100644, b"a.txt".as_slice()), (0o160000, b"deep/sub")] {
            let start = v2.len();
            v2.extend(entry(mode, path));
            v2.extend_from_slice(path);
            let len = v2.len() - start;
            v2.resize(start + ((len + 8) & !7), 0);
        }
        assert_eq!(
            index_gitlinks(&v2, 20).unwrap_or_default(),
            [std::path::PathBuf::from("deep/sub")]
        );
        let mut v4 = b"DIRC".to_vec();
        v4.extend_from_slice(&4u32.to_be_bytes());
        v4.extend_from_slice(&2u32.to_be_bytes());
        v4.extend(entry(0o160000, b"node_modules/x"));
        v4.push(0); // strip nothing
        v4.extend_from_slice(b"node_modules/x");
        v4.push(0);
        v4.extend(entry(0o160000, b"node_modules/y"));
        v4.push(1); // strip "x", keep "node_modules/"
        v4.extend_from_slice(b"y");
        v4.push(0);
        assert_eq!(
            index_gitlinks(&v4, 20).unwrap_or_default(),
            ["node_modules/x", "node_modules/y"].map(std::path::PathBuf::from)
        );
        assert_eq!(varint(&[0x80, 0x00]), Some((128, 2)));
        assert!(index_gitlinks(b"NOPE", 20).is_none());
    }
}
