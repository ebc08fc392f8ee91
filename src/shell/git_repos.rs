//! The repositories a `git` command may take its configuration and hooks from, found as git
//! finds them: a `.git` directory, or a `.git` file naming one, in the directory git starts in
//! or above, or that directory itself when it holds a repository (a bare one). A directory
//! made to look like a bare repository (`HEAD`, `objects/`, `refs/`, `config`) needs no `.git`
//! name, so the floor's protection of `.git` does not cover it: a Write can plant one whose
//! `core.fsmonitor` runs on `git -C dir status`, whose `gpg.program` runs on
//! `git commit-tree -S`, whose hooks run on `git branch`. The workspace's own `.git` is the
//! profile's to protect, and repositories outside where the agent can write are the user's;
//! every other one is judged by its content, as the check after a sandboxed run judges new
//! ones (`exec::gitscan`): only the plain keys git writes itself, no hook, no work tree outside
//! the workspace.

use super::classify::Judge;
use super::project;
use super::walk::Cwd;
use super::{Class, ShellContext, paths};
use crate::gitconfig;
use std::path::{Path, PathBuf};

/// Raise when git, started in `dirs`, may use a repository planted where the agent writes.
pub(crate) fn judge(j: &mut Judge, ctx: &ShellContext, dirs: &Cwd) {
    let Some(dirs) = dirs else {
        return project::unknown_dir(j, "git");
    };
    // The common case costs one `stat`: git starts at the workspace root, whose repository it
    // stops at. A directory that does not exist is not one git runs in, unless another
    // command on the line makes it (see `cross_rules`).
    let at_root = dirs.iter().all(|d| *d == ctx.workspace.root);
    if at_root && ctx.workspace.root.join(".git").symlink_metadata().is_ok() {
        return submodules(j, ctx);
    }
    if dirs.iter().all(|d| d.symlink_metadata().is_err()) {
        j.t.project_files = true;
        return;
    }
    let ws = paths::canon_root(&ctx.workspace.root);
    for dir in project::reach(dirs, ctx) {
        let dot_git = dir.join(".git");
        let meta = dot_git.symlink_metadata();
        if dir == ws && meta.is_ok() {
            // The workspace's own repository: git stops there, and the profile protects it.
            // Its populated submodules are repositories git recurses into.
            submodules(j, ctx);
            continue;
        }
        j.t.project_files = true;
        let why = git_dirs_at(&dir, &dot_git, meta.ok()).and_then(|gs| {
            let root =
                || paths::canonical_prefix(&ctx.workspace.root.join(".git"), &ctx.workspace.root);
            gs.iter()
                .find_map(|g| planted(g, &root(), ctx, true).map(Err))
                .unwrap_or(Ok(()))
        });
        if let Err(why) = why {
            j.raise(
                Class::Opaque,
                format!("[shell.project-config.git] git may use the repository at {why}"),
            );
            return;
        }
    }
}

/// The workspace repository's submodules that `.gitmodules` names and that hold a `.git` of
/// their own: `git status` and `git diff` recurse into each populated one and run what its
/// configuration says (`core.fsmonitor`). One `stat` when there is no `.gitmodules`; a
/// submodule whose git directory lies in the workspace's `.git/modules` (as `git submodule`
/// makes it) is the profile's to protect.
fn submodules(j: &mut Judge, ctx: &ShellContext) {
    let root = &ctx.workspace.root;
    let Some(Ok(text)) = project::read(&root.join(".gitmodules")) else {
        return;
    };
    let Some(entries) = gitconfig::entries(&text) else {
        return j.raise(
            Class::Opaque,
            "[shell.project-config.git] the workspace's `.gitmodules` is not understood: git may recurse into repositories it names",
        );
    };
    let own = paths::canonical_prefix(&root.join(".git"), root);
    for e in entries
        .iter()
        .filter(|e| e.section == "submodule" && e.key == "path")
    {
        let dir = paths::resolve(&e.value, root);
        let dot_git = dir.join(".git");
        let Ok(gs) = git_dirs_at(&dir, &dot_git, dot_git.symlink_metadata().ok()) else {
            continue;
        };
        if let Some(why) = gs.iter().find_map(|g| planted(g, &own, ctx, true)) {
            return j.raise(
                Class::Opaque,
                format!("[shell.project-config.git] git recurses into the submodule at {why}"),
            );
        }
    }
}

/// The git directories git would take in `dir`: its `.git` (or the one a `.git` file names)
/// and `dir` itself when it holds a `HEAD`.
fn git_dirs_at(
    dir: &Path,
    dot_git: &Path,
    meta: Option<std::fs::Metadata>,
) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    match meta {
        Some(m) if m.is_file() => {
            let target = project::read(dot_git)
                .and_then(Result::ok)
                .and_then(|t| {
                    t.trim()
                        .strip_prefix("gitdir:")
                        .map(|g| g.trim().to_string())
                })
                .ok_or_else(|| format!("`{}`, a `.git` file not understood", dot_git.display()))?;
            out.push(paths::resolve(&target, dir));
        }
        Some(_) => out.push(paths::canonical_prefix(dot_git, dir)),
        None => {}
    }
    if dir.join("HEAD").symlink_metadata().is_ok() {
        out.push(dir.to_path_buf());
    }
    Ok(out)
}

/// Why the git directory `g` may run a program, when it lies where the agent writes and is not
/// the workspace's own: its configuration (and a `commondir`'s, once) holds more than git's
/// plain keys or a work tree outside the workspace, or it has a hook.
fn planted(g: &Path, root: &Path, ctx: &ShellContext, follow: bool) -> Option<String> {
    if g.starts_with(root) || !paths::inside(g, ctx) {
        return None;
    }
    let at = |what: &str| format!("`{}`, whose {what}", g.display());
    for name in ["config", "config.worktree"] {
        let text = match project::read(&g.join(name)) {
            None => continue,
            Some(Ok(t)) => t,
            Some(Err(e)) => return Some(at(&format!("`{name}` cannot be read ({e})"))),
        };
        if let Some(why) = config(&text, g, ctx) {
            return Some(at(&format!("`{name}` {why}")));
        }
    }
    if let Some(hook) = hooks(&g.join("hooks")) {
        return Some(at(&format!("hook `{hook}` git runs")));
    }
    let common = project::read(&g.join("commondir")).and_then(Result::ok)?;
    let common = paths::resolve(common.trim(), g);
    follow.then(|| planted(&common, root, ctx, false)).flatten()
}

/// What in a git config can make git run a program or reach outside the workspace.
fn config(text: &str, g: &Path, ctx: &ShellContext) -> Option<&'static str> {
    let Some(entries) = gitconfig::entries(text) else {
        return Some("is not understood");
    };
    for e in &entries {
        if !gitconfig::is_plain(e) {
            return Some("sets keys that make git run programs");
        }
        if (e.section.as_str(), e.key.as_str()) == ("core", "worktree")
            && !paths::inside(&paths::resolve(&e.value, g), ctx)
        {
            return Some("puts the work tree outside the workspace");
        }
    }
    None
}

/// A hook in `dir` that git would run: anything but git's own `.sample` files.
fn hooks(dir: &Path) -> Option<String> {
    let entries = std::fs::read_dir(dir).ok()?;
    entries
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| !n.ends_with(".sample"))
}
