//! Git's own files that run code later, in the repositories of a workspace: hooks, config,
//! `commondir`, submodules' and linked worktrees' git directories, `.git` files or links, and
//! what a repository's config names elsewhere in the workspace (the `core.hooksPath`
//! directories and the files it includes). A repository made during the run (`git init`,
//! `git clone`, `git submodule add`) is ordinary work, so it is judged by content, not by
//! being new: what changed during the run is taken away only when it can make git run a
//! program (a hook that is not a `.sample`, a config key outside the plain ones git itself
//! writes, a `commondir` or `.git` file pointing elsewhere).
use super::gitdirs::{self, GitDir, Root};
use super::protect::Since;
use super::walk::{self, Walk};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// What counts as changed in one git directory: what changed during the run, or everything,
/// in a git directory (or hooks directory) moved or linked into place during it.
#[derive(Clone, Copy)]
struct Changes<'a> {
    since: &'a Since,
    all: bool,
}

impl<'a> Changes<'a> {
    /// For `g`: everything when the `.git` file or link that names it is new, and below a
    /// directory on its way that was moved in.
    fn of(g: &GitDir, since: &'a Since) -> Self {
        let all = g.named_by.as_deref().is_some_and(|n| since.changed(n));
        let start = Self { since, all };
        g.way.iter().fold(start, |c, d| c.below(d))
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
    /// What to write back at `path` once what the run left there is in quarantine.
    pub restore: Option<&'static str>,
}

fn finding(path: &Path, change: &'static str, rule: &'static str) -> Finding {
    Finding {
        path: path.to_path_buf(),
        change,
        rule,
        restore: None,
    }
}

/// The `commondir` that `git worktree add` writes in `.git/worktrees/NAME`: the repository
/// two levels up. Any other text, or this one through a link, can name a repository
/// elsewhere, whose hooks and config git would then use for the worktree.
const WORKTREE_COMMONDIR: &str = "../..";

/// The files of a git directory, beside its hooks, that the check looks at.
const OWN_FILES: [&str; 3] = ["config", "config.worktree", "commondir"];

const CONFIG_RULE: &str = "git config with keys that run programs";
const HOOKS_RULE: &str = "git hooks";
const SPECIAL_RULE: &str = "a FIFO or device where git opens a file (a later git would hang)";
const REMOTES_RULE: &str =
    "a git remote file (remotes/, branches/), whose push runs the target's hooks";

/// The directories of a git directory whose files define remotes the config does not name:
/// `git push NAME` to one that leads to a repository in the workspace runs that repository's
/// receive hooks. Git itself no longer writes them (`git init` makes `branches/` empty).
const REMOTE_DIRS: [&str; 2] = ["remotes", "branches"];
const HOOKS_PATH_LINK_RULE: &str = "a link on the way to git's core.hooksPath";

/// What the scan looks at, as it is before the run: the git directories of the workspace,
/// their `.git` entries, hooks directories and own files, what their config names (hooks
/// directories with their entries, included files), and the workspace repository's index. A
/// change to one is then judged exactly, and one moved into place during the run is told
/// from one that was there ([`Since::moved_in`]).
pub(super) fn recorded_files(workspace: &Path, walk: &Walk) -> Record {
    let root = Root::of(workspace);
    let entries = walk.git_entries(workspace);
    let mut gitlinks = index_gitlinks(workspace).unwrap_or_default();
    let dot_gits = [entries.dot_gits, gitlinks.clone()].concat();
    let (found, nested) = find_with_nested_gitlinks(&root, workspace, dot_gits, &entries.bare);
    gitlinks.extend(nested);
    let mut out = found.strays;
    out.push(workspace.join(".git/index"));
    for g in &found.dirs {
        out.extend(g.named_by.iter().cloned());
        out.extend(g.way.iter().cloned());
        if g.inside {
            let hooks = HooksDir::at(&g.dir.join("hooks"), &g.dir, &root);
            hooks.record(&mut out);
            out.extend(OWN_FILES.iter().map(|n| g.dir.join(n)));
            for dir in REMOTE_DIRS.map(|d| g.dir.join(d)) {
                if let Ok(rd) = walk::read_dir(&dir) {
                    out.extend(rd.filter_map(Result::ok).map(|e| e.path()));
                }
                out.push(dir);
            }
            for (state, todo) in TODOS {
                out.push(g.dir.join(state));
                out.push(g.dir.join(state).join(todo));
            }
        }
        let named = Named::of(g, workspace);
        out.extend(named.included);
        for dir in &named.hooks {
            HooksDir::at(dir, workspace, &root).record(&mut out);
        }
    }
    Record {
        files: out,
        gitlinks,
    }
}

/// What [`recorded_files`] gives.
pub(super) struct Record {
    /// The paths whose state is recorded.
    pub files: Vec<PathBuf>,
    /// The `.git` entries of the submodules the index registered before the run: checked
    /// after it whatever the index then says.
    pub gitlinks: Vec<PathBuf>,
}

/// Every git directory of the workspace, after the run.
/// `gitlinks` are the submodules the index registered before the run ([`Record`]).
pub(super) fn scan(
    workspace: &Path,
    walk: &Walk,
    since: &Since,
    gitlinks: &[PathBuf],
) -> Vec<Finding> {
    let mut out = Vec::new();
    let entries = walk.git_entries(workspace);
    let mut dot_gits = entries.dot_gits;
    dot_gits.extend_from_slice(gitlinks);
    match index_gitlinks(workspace) {
        Some(now) => dot_gits.extend(now),
        // Changed during the run into one that cannot be read: what it registers is not
        // known, and git may still load it.
        None => {
            let index = workspace.join(".git/index");
            if since.changed(&index) {
                out.push(finding(&index, "changed", "a git index sbx cannot read"));
            }
        }
    }
    let root = Root::of(workspace);
    let (found, _) = find_with_nested_gitlinks(&root, workspace, dot_gits, &entries.bare);
    for stray in found.strays.iter().filter(|s| since.changed(s)) {
        out.push(finding(
            stray,
            "created",
            "a .git file or link pointing outside the workspace's repositories",
        ));
    }
    for g in &found.dirs {
        // One named by a `.git` file made in the run: that file goes, and what its git
        // directory elsewhere names no longer applies.
        if !g.inside && g.named_by.as_deref().is_some_and(|n| since.changed(n)) {
            continue;
        }
        let changes = Changes::of(g, since);
        let before = out.len();
        check_git_dir(g, changes, workspace, &root, &mut out);
        // A directory made a git directory during the run, with something that runs
        // programs: its `HEAD` goes too, so that git's discovery passes it by again and
        // finds the repository around it.
        if g.discovered && changes.all && out.len() > before {
            out.push(finding(
                &g.dir.join("HEAD"),
                "created",
                "a directory made a git directory that git finds from below",
            ));
        }
    }
    out
}

/// What a repository's config names inside the workspace: the files it includes (through
/// `include` and `includeIf`, from its config and `config.worktree`), and the directories
/// its `core.hooksPath` values name.
struct Named {
    included: Vec<PathBuf>,
    hooks: Vec<PathBuf>,
}

impl Named {
    fn of(g: &GitDir, workspace: &Path) -> Self {
        let start = [g.common.join("config"), g.dir.join("config.worktree")];
        // `~/` is the home, outside the workspace: not followed (see docs/sandbox.md).
        let chain = crate::gitconfig::chain(&start, None, gitdirs::read_text);
        let inside = |p: PathBuf| {
            let p = crate::profile::normalize(&p);
            (p.starts_with(workspace) && p != workspace).then_some(p)
        };
        let hooks = chain
            .hooks_paths
            .iter()
            .filter(|h| !h.starts_with('~'))
            .filter_map(|h| match &g.worktree {
                _ if Path::new(h).is_absolute() => Some(PathBuf::from(h)),
                Some(tree) => Some(tree.join(h)),
                None => None,
            })
            .filter_map(inside)
            .collect();
        let mut included: Vec<PathBuf> = chain.included.into_iter().filter_map(inside).collect();
        included.dedup();
        Self { included, hooks }
    }
}

/// Hooks, config and `commondir` of one git directory, and what its config names.
fn check_git_dir(g: &GitDir, changes: Changes<'_>, ws: &Path, root: &Root, out: &mut Vec<Finding>) {
    // The configs are read first: the kernel keeps a FUSE file's attributes per name for a
    // while, and reading the file refreshes them. On a FUSE file system that folds case, a
    // config written through another name (`.GIT/CONFIG`) would otherwise keep, under the
    // name looked at here, the change time it had before the run.
    let named = Named::of(g, ws);
    if g.inside {
        let hooks = HooksDir::at(&g.dir.join("hooks"), &g.dir, root);
        hooks.check(changes, HOOKS_RULE, out);
        for name in &OWN_FILES[..2] {
            let cfg = g.dir.join(name);
            if changes.changed(&cfg) && !config_is_plain(&cfg, &g.dir, ws) {
                out.push(finding(&cfg, "config", CONFIG_RULE));
            }
        }
        for dir in REMOTE_DIRS {
            check_remote_dir(&g.dir.join(dir), changes, out);
        }
        check_special_files(&g.dir, changes, out);
        for (state, todo) in TODOS {
            let state = g.dir.join(state);
            if changes.below(&state).changed(&state.join(todo)) && todo_runs(&state.join(todo)) {
                out.push(finding(&state, "created", TODO_RULE));
            }
        }
        let commondir = g.dir.join("commondir");
        if changes.changed(&commondir) && !is_worktree_of(&g.dir) {
            let existed = changes.since.existed(&commondir);
            out.push(Finding {
                restore: (existed && linked_worktree_repo(&g.dir).is_some()).then_some("../..\n"),
                ..finding(
                    &commondir,
                    if existed { "changed" } else { "created" },
                    "git commondir (takes hooks and config from elsewhere)",
                )
            });
        }
    }
    // An included file is the project's (a `.gitconfig` it ships, say): judged by content,
    // as the config that includes it, when it changed or was made during the run. Not for
    // being below a git directory new in the run: one included from a repository's config
    // is that repository's, and a worktree added to it does not make it new.
    let since = changes.since;
    for file in &named.included {
        if (since.changed(file) || since.made(file)) && !config_is_plain(file, &g.dir, ws) {
            out.push(finding(file, "config", CONFIG_RULE));
        }
    }
    for dir in &named.hooks {
        HooksDir::at(dir, ws, root).check(changes, HOOKS_PATH_LINK_RULE, out);
    }
}

/// A hooks directory git uses (`.git/hooks`, a `core.hooksPath` directory) and its way:
/// the symbolic links on it below a directory known to be real, and the directory it leads
/// to inside the workspace. A link the user made is followed, so that what git reaches
/// through it is what is checked; one made during the run is itself taken away.
struct HooksDir {
    links: Vec<PathBuf>,
    real: Option<PathBuf>,
}

impl HooksDir {
    fn at(named: &Path, real_above: &Path, root: &Root) -> Self {
        let links: Vec<PathBuf> = named
            .ancestors()
            .take_while(|a| *a != real_above && a.starts_with(real_above))
            .filter(|a| walk::lstat(a).is_ok_and(|m| m.file_type().is_symlink()))
            .map(Path::to_path_buf)
            .collect();
        let real = if links.is_empty() {
            Some(named.to_path_buf())
        } else {
            root.real_inside(named)
        };
        Self { links, real }
    }

    /// The links, the directory and its entries, for the record before the run.
    fn record(self, out: &mut Vec<PathBuf>) {
        out.extend(self.links);
        if let Some(real) = self.real {
            if let Ok(rd) = walk::read_dir(&real) {
                out.extend(rd.filter_map(Result::ok).map(|e| e.path()));
            }
            out.push(real);
        }
    }

    fn check(&self, changes: Changes<'_>, link_rule: &'static str, out: &mut Vec<Finding>) {
        let made: Vec<&PathBuf> = self.links.iter().filter(|l| changes.changed(l)).collect();
        if !made.is_empty() {
            // Where a link made in the run leads may be the user's own files; the link goes.
            out.extend(made.into_iter().map(|l| finding(l, "created", link_rule)));
            return;
        }
        if let Some(real) = &self.real {
            check_hooks(real, changes.below(real), out);
        }
    }
}

/// A linked worktree's git directory (`.git/worktrees/NAME`) whose `commondir` is the one git
/// writes, leading back to the repository that holds it with no link on the way. A
/// `commondir` held read-only would keep `git worktree remove` from removing the directory
/// (a mount point cannot be unlinked), so a changed one is judged here instead.
fn is_worktree_of(git: &Path) -> bool {
    let Some(repo) = linked_worktree_repo(git) else {
        return false;
    };
    let text = gitdirs::read_text(&git.join("commondir"));
    if text.as_deref().map(str::trim) != Some(WORKTREE_COMMONDIR) {
        return false;
    }
    let (Ok(to), Ok(repo)) = (
        std::fs::canonicalize(git.join(WORKTREE_COMMONDIR)),
        std::fs::canonicalize(repo),
    ) else {
        return false;
    };
    to == repo
}

/// The git directory holding `git` when `git` is `REPO/worktrees/NAME` and neither
/// `worktrees` nor `NAME` is a symbolic link.
fn linked_worktree_repo(git: &Path) -> Option<&Path> {
    let worktrees = git
        .parent()
        .filter(|p| p.file_name().is_some_and(|n| n == "worktrees"))?;
    let real = |p: &Path| walk::lstat(p).is_ok_and(|m| m.is_dir());
    (real(git) && real(worktrees)).then_some(worktrees.parent()?)
}

/// The entries of `dir`, a directory git reads whole; `None` when there are none to read, and
/// `dir` itself a finding of `rule` when it is no directory (a file, a link elsewhere) and
/// changed during the run.
fn entries_or_self(
    dir: &Path,
    changes: Changes<'_>,
    rule: &'static str,
    out: &mut Vec<Finding>,
) -> Option<std::fs::ReadDir> {
    let meta = walk::lstat(dir).ok()?;
    if !meta.is_dir() {
        if changes.changed(dir) {
            out.push(finding(dir, "created", rule));
        }
        return None;
    }
    walk::read_dir(dir).ok()
}

fn check_hooks(hooks: &Path, changes: Changes<'_>, out: &mut Vec<Finding>) {
    let Some(rd) = entries_or_self(hooks, changes, HOOKS_RULE, out) else {
        return;
    };
    for e in rd.filter_map(Result::ok) {
        let p = e.path();
        let sample = p.extension().is_some_and(|x| x == "sample")
            && e.file_type().is_ok_and(|t| t.is_file());
        if !sample && changes.changed(&p) {
            out.push(finding(&p, "hook", HOOKS_RULE));
        } else if let Some(target) = changed_link_target(&p, e.file_type().ok(), changes) {
            out.push(finding(&target, "a hook's link target", HOOKS_RULE));
        }
    }
}

/// Files every git command opens in a git directory: a FIFO or device made at one during the
/// run would make a later `git status` outside the sandbox block on it.
const OPENED_FILES: [&str; 11] = [
    "HEAD",
    "index",
    "packed-refs",
    "config",
    "commondir",
    "gitdir",
    "shallow",
    "info/exclude",
    "info/attributes",
    "info/grafts",
    "objects/info/alternates",
];

/// Of [`OPENED_FILES`] and the ref `HEAD` names, those made during the run as something git
/// cannot read and return from (a FIFO, a socket, a device).
fn check_special_files(git: &Path, changes: Changes<'_>, out: &mut Vec<Finding>) {
    use std::os::unix::fs::FileTypeExt;
    let head = walk::read(&git.join("HEAD"), walk::TEXT_LIMIT).ok();
    let head_ref = head
        .and_then(|h| {
            Some(
                String::from_utf8_lossy(h.strip_prefix(b"ref: ")?)
                    .trim()
                    .to_string(),
            )
        })
        .filter(|r| r.starts_with("refs/") && !r.split('/').any(|c| c == ".."));
    let named = OPENED_FILES.iter().map(|n| git.join(n));
    for p in named.chain(head_ref.map(|r| git.join(r))) {
        let special = walk::lstat(&p).is_ok_and(|m| {
            let t = m.file_type();
            t.is_fifo() || t.is_socket() || t.is_char_device() || t.is_block_device()
        });
        if special && changes.changed(&p) {
            out.push(finding(&p, "created", SPECIAL_RULE));
        }
    }
}

/// A git directory's `remotes/` or `branches/`: what changed in it during the run, or the
/// directory itself when it is no directory (a link elsewhere, a file) and changed.
fn check_remote_dir(dir: &Path, changes: Changes<'_>, out: &mut Vec<Finding>) {
    let Some(rd) = entries_or_self(dir, changes, REMOTES_RULE, out) else {
        return;
    };
    let changes = changes.below(dir);
    for p in rd.filter_map(Result::ok).map(|e| e.path()) {
        if changes.changed(&p) {
            out.push(finding(&p, "remote", REMOTES_RULE));
        }
    }
}

/// Where a hook that is a symbolic link leads, when that file was changed or made during the
/// run (`pre-commit -> ../../scripts/pre-commit` in a nested repository, whose target no
/// mount holds): git runs it at the next commit as it runs the hook.
fn changed_link_target(
    hook: &Path,
    kind: Option<std::fs::FileType>,
    changes: Changes<'_>,
) -> Option<PathBuf> {
    if !kind.is_some_and(|t| t.is_symlink()) {
        return None;
    }
    let target = std::fs::canonicalize(hook).ok()?;
    changes.changed(&target).then_some(target)
}

/// Whether a git config file of the git directory `git` holds only plain keys, and a
/// `core.worktree` only when it is that git directory's own working tree
/// ([`own_worktree`]). Anything not understood is not plain.
fn config_is_plain(path: &Path, git: &Path, ws: &Path) -> bool {
    let Ok(bytes) = walk::read(path, walk::TEXT_LIMIT) else {
        return false;
    };
    let Some(entries) = std::str::from_utf8(&bytes)
        .ok()
        .and_then(crate::gitconfig::entries)
    else {
        return false;
    };
    entries.iter().all(|e| {
        crate::gitconfig::is_plain(e)
            && ((e.section.as_str(), e.key.as_str()) != ("core", "worktree")
                || own_worktree(git, &e.value, ws))
            && !pushes_to_hooks(git, e, ws)
    })
}

/// Whether an entry is a remote's URL naming a repository of the workspace that holds hooks:
/// a config changed to push there runs them at the next `git push` (the repository itself is
/// checked from then on, see [`local_remotes`], but hooks it held before are not news).
fn pushes_to_hooks(git: &Path, e: &crate::gitconfig::Entry, ws: &Path) -> bool {
    if e.section != "remote" || !matches!(e.key.as_str(), "url" | "pushurl") {
        return false;
    }
    let from = git.parent().unwrap_or(git);
    let Some(target) = local_url(from, &e.value).and_then(|p| std::fs::canonicalize(p).ok()) else {
        return false;
    };
    if !target.starts_with(ws) {
        return false;
    }
    [target.join("hooks"), target.join(".git/hooks")]
        .iter()
        .any(|h| {
            walk::read_dir(h).is_ok_and(|rd| {
                rd.filter_map(Result::ok)
                    .any(|e| e.path().extension().is_none_or(|x| x != "sample"))
            })
        })
}

/// Whether a `core.worktree` value leads to the working tree of the git directory `git`: a
/// directory of the workspace, in no `.git`, whose `.git` is `git` or names it. git resolves
/// a relative value from the git directory. Any other makes the next `git checkout -- .`
/// there write where it leads: the workspace repository's `.git/hooks`, the home (`~`).
fn own_worktree(git: &Path, value: &str, ws: &Path) -> bool {
    if value.is_empty() || value.starts_with('~') {
        return false;
    }
    let tree = crate::profile::normalize(&git.join(value));
    let in_no_git = tree.strip_prefix(ws).is_ok_and(|rel| {
        rel.components()
            .all(|c| !c.as_os_str().eq_ignore_ascii_case(".git"))
    });
    if !in_no_git || tree.starts_with(git) {
        return false;
    }
    let dot_git = tree.join(".git");
    let named = match walk::lstat(&dot_git) {
        Ok(m) if m.is_file() => gitdirs::read_text(&dot_git)
            .and_then(|t| Some(tree.join(t.trim().strip_prefix("gitdir:")?.trim())))
            .map(|d| crate::profile::normalize(&d)),
        Ok(m) if m.is_dir() => Some(dot_git),
        _ => None,
    };
    let real = |p: &Path| std::fs::canonicalize(p).ok();
    named.is_some_and(|n| real(&n).is_some_and(|n| Some(n) == real(git)))
}

/// The state git keeps of a sequence in progress, with the todo list `git rebase
/// --continue` (or `git cherry-pick --continue`) takes up.
const TODOS: [(&str, &str); 2] = [("rebase-merge", "git-rebase-todo"), ("sequencer", "todo")];

const TODO_RULE: &str = "a git rebase todo that runs programs";

/// Whether a todo list holds a line that runs a program (`exec` or `x`), or cannot be read
/// within its limit.
fn todo_runs(todo: &Path) -> bool {
    let Ok(bytes) = walk::read(todo, 4 << 20) else {
        return walk::lstat(todo).is_ok();
    };
    String::from_utf8_lossy(&bytes).lines().any(|l| {
        l.split_whitespace()
            .next()
            .is_some_and(|w| w.eq_ignore_ascii_case("exec") || w.eq_ignore_ascii_case("x"))
    })
}

/// The most the checks read of the workspace repository's index (and of a shared index it
/// names): an index this large holds some 600,000 entries.
const INDEX_LIMIT: u64 = 64 << 20;

/// The `.git` entries of the submodules registered in the workspace repository's index and
/// in the shared index it names: git recurses into them from the top (`git status`),
/// wherever they lie. Empty when there is no index; `None` when one cannot be read (over
/// [`INDEX_LIMIT`], not understood, a shared index missing).
fn index_gitlinks(workspace: &Path) -> Option<Vec<PathBuf>> {
    index_gitlinks_at(workspace, &workspace.join(".git"))
}

/// Git directories of the workspace with the submodules their repositories' indexes register,
/// level by level: `git status` at the root goes into each registered submodule and into what
/// that one's index registers in turn, reading each one's config (a repository under
/// `node_modules` that a nested repository registers). `dot_gits` are the entries found so
/// far; the ones the nested indexes add are given back beside what [`gitdirs::find`] finds.
fn find_with_nested_gitlinks(
    root: &Root,
    workspace: &Path,
    mut dot_gits: Vec<PathBuf>,
    bare: &[PathBuf],
) -> (gitdirs::Found, Vec<PathBuf>) {
    let mut added = Vec::new();
    let mut bare = bare.to_vec();
    let mut read: BTreeSet<PathBuf> = BTreeSet::new();
    for _ in 0..NESTED_INDEX_LEVELS {
        let found = gitdirs::find(root, &dot_gits, &bare);
        let (mut new, mut new_bare) = (Vec::new(), Vec::new());
        for g in found.dirs.iter().filter(|g| g.inside) {
            if !read.insert(g.dir.clone()) {
                continue;
            }
            for target in local_remotes(g, workspace) {
                if gitdirs::is_discovered_git_dir(&target) {
                    new_bare.push(target);
                } else {
                    new.push(target.join(".git"));
                }
            }
            let Some(tree) = g.worktree.as_ref().filter(|t| t.starts_with(workspace)) else {
                continue;
            };
            if tree != workspace {
                new.extend(index_gitlinks_at(tree, &g.dir).unwrap_or_default());
            }
        }
        new.retain(|l| l.starts_with(workspace) && !dot_gits.contains(l));
        new_bare.retain(|b| !bare.contains(b));
        if new.is_empty() && new_bare.is_empty() {
            return (found, added);
        }
        new.sort();
        new.dedup();
        added.extend(new.iter().cloned());
        dot_gits.extend(new);
        bare.extend(new_bare);
    }
    (gitdirs::find(root, &dot_gits, &bare), added)
}

/// The repositories of the workspace that `g`'s remotes name by a path on this machine
/// (`../store.git`, `file:///ws/x.git`): a `git push` there runs their `pre-receive` and
/// `update` hooks, so they are checked like the workspace's own.
fn local_remotes(g: &GitDir, workspace: &Path) -> Vec<PathBuf> {
    let Some(text) = gitdirs::read_text(&g.common.join("config")) else {
        return Vec::new();
    };
    let from = g.worktree.clone().unwrap_or_else(|| g.dir.clone());
    crate::gitconfig::entries(&text)
        .unwrap_or_default()
        .iter()
        .filter(|e| e.section == "remote" && matches!(e.key.as_str(), "url" | "pushurl"))
        .filter_map(|e| local_url(&from, &e.value))
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .filter(|p| p.starts_with(workspace) && p != workspace && !p.starts_with(&g.dir))
        .collect()
}

/// A remote URL that is a path on this machine, taken from `from` (where git runs).
fn local_url(from: &Path, url: &str) -> Option<PathBuf> {
    let path = url.strip_prefix("file://").unwrap_or(url);
    let scp_like = path
        .split('/')
        .next()
        .is_some_and(|first| first.contains(':'));
    if path.is_empty() || path.contains("://") || scp_like || path.starts_with('~') {
        return None;
    }
    Some(crate::profile::normalize(&from.join(path)))
}

/// How many levels of nested indexes are read: git recurses without a limit, but a chain of
/// submodules deeper than this is no project's.
const NESTED_INDEX_LEVELS: usize = 8;

/// The `.git` entries of the submodules the index of the repository with working tree
/// `worktree` and git directory `git` registers.
fn index_gitlinks_at(worktree: &Path, git: &Path) -> Option<Vec<PathBuf>> {
    let workspace = worktree;
    let sha256 = gitdirs::read_text(&git.join("config"))
        .and_then(|t| crate::gitconfig::entries(&t))
        .is_some_and(|es| {
            es.iter().any(|e| {
                e.section == "extensions" && e.key == "objectformat" && e.value == "sha256"
            })
        });
    let hash_len = if sha256 { 32 } else { 20 };
    let read = |p: &Path| match walk::read(p, INDEX_LIMIT) {
        Ok(bytes) => super::gitindex::index_gitlinks(&bytes, hash_len),
        Err(_) => None,
    };
    let index = git.join("index");
    if walk::lstat(&index).is_err() {
        return Some(Vec::new());
    }
    let mut found = read(&index)?;
    if let Some(hex) = found.shared.take() {
        found
            .links
            .extend(read(&git.join(format!("sharedindex.{hex}")))?.links);
    }
    let mut links: Vec<PathBuf> = found
        .links
        .into_iter()
        .filter(|rel| {
            rel.components()
                .all(|c| matches!(c, std::path::Component::Normal(_)))
        })
        .map(|rel| workspace.join(rel).join(".git"))
        .collect();
    links.sort();
    links.dedup();
    Some(links)
}
