//! The configuration file a git command changes, by its scope: `--global` writes the home's
//! `~/.gitconfig` (or `~/.config/git/config` when only that one exists), `--system` writes
//! `/etc/gitconfig`, and the default (`--local`, `--worktree`), `git remote add`/`set-url` and
//! `git branch --set-upstream-to` write the repository's own `config`. Each is recorded as a
//! write, so the floor and the plan judge it as they judge `echo x >> ~/.gitconfig`: a home or
//! a `.git/config` the profile keeps read-only is refused, not asked about.

use super::classify::Judge;
use super::exec_args::Ctx;
use super::walk::Cwd;
use super::words::Word;
use std::path::{Path, PathBuf};

/// Where a change of `git config` lands, by the scope its options name.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    Global,
    System,
    Local,
    Worktree,
}

impl Scope {
    /// The scope `git config` options choose; the repository's unless told otherwise.
    pub(crate) fn of(rest: &[Word]) -> Scope {
        let has = |o: &str| rest.iter().any(|a| a.value == o);
        if has("--global") {
            Scope::Global
        } else if has("--system") {
            Scope::System
        } else if has("--worktree") {
            Scope::Worktree
        } else {
            Scope::Local
        }
    }
}

/// Record the write of the file a change in `scope` lands in, for git started in `dirs`.
pub(crate) fn write(j: &mut Judge, c: &Ctx<'_, '_, '_>, dirs: &Cwd, scope: Scope) {
    write_as(j, c, dirs, scope, "");
}

/// [`write`], saying what the command writes there (`why`, empty when it is a setting).
pub(crate) fn write_as(j: &mut Judge, c: &Ctx<'_, '_, '_>, dirs: &Cwd, scope: Scope, why: &str) {
    let ctx = c.w.ctx;
    let what = if why.is_empty() {
        "git configuration".to_string()
    } else {
        format!("git configuration ({why})")
    };
    let files = match scope {
        Scope::Global => vec![global_file(&ctx.workspace.home)],
        Scope::System => vec![PathBuf::from("/etc/gitconfig")],
        Scope::Local | Scope::Worktree => {
            let name = if scope == Scope::Local {
                "config"
            } else {
                "config.worktree"
            };
            let Some(dirs) = dirs else {
                let mut w = Word::literal("$GIT_DIR/config");
                w.unknown = true;
                w.exact = false;
                return j.write(&w, dirs, ctx, &what);
            };
            let made = c.w.made_repos.borrow();
            let found: Vec<PathBuf> = dirs
                .iter()
                .filter_map(|d| nearest_git_dir(&made, d))
                .map(|g| g.join(name))
                .collect();
            // A repository this line makes is new: what its configuration holds is judged
            // after a sandboxed run, and the keys that run programs are findings here.
            let (fresh, files): (Vec<PathBuf>, Vec<PathBuf>) = found.into_iter().partition(|f| {
                // Where the file really is: a link on the way may lead out of the workspace.
                let real = crate::shell::paths::resolve(&f.to_string_lossy(), Path::new("/"));
                made.iter()
                    .any(|m| f.parent() == Some(m.join(".git").as_path()))
                    && crate::shell::paths::inside(&real, ctx)
            });
            for f in fresh {
                j.fresh_repo_write(&f, &what);
            }
            files
        }
    };
    for f in files {
        let w = Word::literal(&f.to_string_lossy());
        j.write(&w, c.cmd.cwd, ctx, &what);
    }
}

/// The git directory git finds from `dir` once the line's `git init`s have run: the nearer of
/// the one there now ([`git_dir`]) and one made around `dir` by an earlier `git init`.
fn nearest_git_dir(made: &[PathBuf], dir: &Path) -> Option<PathBuf> {
    let made = made
        .iter()
        .filter(|m| dir.starts_with(m))
        .max_by_key(|m| m.components().count())
        .map(|m| m.join(".git"));
    match (made, git_dir(dir)) {
        (Some(m), Some(g)) if g.components().count() > m.components().count() => Some(g),
        (Some(m), _) => Some(m),
        (None, g) => g,
    }
}

/// `~/.gitconfig`, unless only the XDG file exists (git then writes that one).
fn global_file(home: &Path) -> PathBuf {
    let classic = home.join(".gitconfig");
    let xdg = home.join(".config/git/config");
    if classic.symlink_metadata().is_err() && xdg.symlink_metadata().is_ok() {
        xdg
    } else {
        classic
    }
}

/// The git directory git finds from `dir`: the first `.git` up (a directory, or a file that
/// points elsewhere, judged by its own name), or a directory holding `HEAD` (a bare
/// repository). `None` outside any repository, where git refuses to change local settings.
pub(crate) fn git_dir(dir: &Path) -> Option<PathBuf> {
    dir.ancestors().find_map(|a| {
        let dot = a.join(".git");
        if dot.symlink_metadata().is_ok() {
            Some(dot)
        } else if a.join("HEAD").is_file() && a.join("objects").is_dir() {
            Some(a.to_path_buf())
        } else {
            None
        }
    })
}
