//! Git's own files that run code later, in the repositories of a workspace: hooks, config,
//! `commondir`, submodules' and linked worktrees' git directories, and `.git` files or links.
//! A repository made during the run (`git init`, `git clone`, `git submodule add`) is ordinary
//! work, so it is judged by content, not by being new: what changed during the run is taken
//! away only when it can make git run a program (a hook that is not a `.sample`, a config key
//! outside the plain ones git itself writes, a `commondir` or `.git` file pointing elsewhere).
use super::protect::{Stamp, changed_since};
use std::path::{Path, PathBuf};

/// One finding of the scan.
pub(super) struct Finding {
    pub path: PathBuf,
    pub change: &'static str,
    pub rule: &'static str,
}

/// How deep below the workspace `.git` entries are looked for, and below `.git/modules`.
const REPO_DEPTH: usize = 2;
const MODULE_DEPTH: usize = 4;

/// Directories not searched for nested repositories: they hold packages by the thousand.
const SKIP: &[&str] = &["node_modules", ".git"];

/// Every `.git` entry at the workspace root and up to [`REPO_DEPTH`] directories below it.
pub(super) fn scan(workspace: &Path, start: Stamp) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut dirs = vec![(workspace.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = dirs.pop() {
        check_dot_git(&dir.join(".git"), workspace, start, &mut out);
        if depth >= REPO_DEPTH {
            continue;
        }
        for sub in subdirs(&dir) {
            let skip = sub
                .file_name()
                .is_some_and(|n| SKIP.iter().any(|s| n == *s));
            if !skip {
                dirs.push((sub, depth + 1));
            }
        }
    }
    out
}

/// Real directories (not links) directly inside `dir`.
fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
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

fn check_dot_git(dot_git: &Path, workspace: &Path, start: Stamp, out: &mut Vec<Finding>) {
    let Ok(meta) = dot_git.symlink_metadata() else {
        return;
    };
    let ty = meta.file_type();
    if ty.is_dir() {
        check_git_dir(dot_git, start, 0, out);
        return;
    }
    match gitdir_inside(dot_git, workspace) {
        // A git directory elsewhere in the workspace (a submodule's under `.git/modules`, or
        // one made anywhere): judged like any other.
        Some(dir) if ty.is_file() => check_git_dir(&dir, start, 0, out),
        _ if changed_since(dot_git, start) => out.push(finding(
            dot_git,
            "created",
            "a .git file or link pointing outside the workspace's repositories",
        )),
        _ => {}
    }
}

/// The directory a `.git` file's `gitdir:` names, when it lies inside the workspace.
fn gitdir_inside(dot_git: &Path, workspace: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(dot_git).ok()?;
    let dir = text.trim().strip_prefix("gitdir:").map(str::trim)?;
    let base = dot_git.parent().unwrap_or(workspace);
    std::fs::canonicalize(base.join(dir))
        .ok()
        .filter(|d| d.starts_with(workspace))
}

/// Hooks, config and `commondir` of one git directory, then its submodules and worktrees.
fn check_git_dir(git: &Path, start: Stamp, depth: usize, out: &mut Vec<Finding>) {
    check_hooks(&git.join("hooks"), start, out);
    for name in ["config", "config.worktree"] {
        let cfg = git.join(name);
        if changed_since(&cfg, start) && !config_is_plain(&cfg) {
            out.push(finding(
                &cfg,
                "config",
                "git config with keys that run programs",
            ));
        }
    }
    let commondir = git.join("commondir");
    if changed_since(&commondir, start) && !is_worktree_of(git) {
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
            check_nested(&d, start, depth + 1, out);
        }
    }
}

/// A directory under `modules` is a git directory when it has a HEAD; else (a submodule
/// named with slashes) its subdirectories are looked at.
fn check_nested(dir: &Path, start: Stamp, depth: usize, out: &mut Vec<Finding>) {
    if dir.join("HEAD").is_file() {
        check_git_dir(dir, start, depth, out);
    } else if depth < MODULE_DEPTH {
        for d in subdirs(dir) {
            check_nested(&d, start, depth + 1, out);
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
    let Ok(text) = std::fs::read_to_string(git.join("commondir")) else {
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

fn check_hooks(hooks: &Path, start: Stamp, out: &mut Vec<Finding>) {
    let Ok(meta) = hooks.symlink_metadata() else {
        return;
    };
    if !meta.is_dir() {
        if changed_since(hooks, start) {
            out.push(finding(hooks, "created", "git hooks"));
        }
        return;
    }
    let Ok(rd) = std::fs::read_dir(hooks) else {
        return;
    };
    for e in rd.filter_map(Result::ok) {
        let p = e.path();
        let sample = p.extension().is_some_and(|x| x == "sample")
            && e.file_type().is_ok_and(|t| t.is_file());
        if !sample && changed_since(&p, start) {
            out.push(finding(&p, "hook", "git hooks"));
        }
    }
}

/// Keys (`section.key`, any subsection) that git, `git init`, `git clone`, `git remote`,
/// `git submodule` and `git worktree` write and that run nothing.
const PLAIN_KEYS: &[&str] = &[
    "core.repositoryformatversion",
    "core.filemode",
    "core.bare",
    "core.logallrefupdates",
    "core.ignorecase",
    "core.precomposeunicode",
    "core.symlinks",
    "core.worktree",
    "core.autocrlf",
    "core.safecrlf",
    "core.eol",
    "core.sparsecheckout",
    "core.sparsecheckoutcone",
    "core.quotepath",
    "core.checkstat",
    "core.trustctime",
    "core.untrackedcache",
    "core.compression",
    "core.abbrev",
    "extensions.objectformat",
    "extensions.refstorage",
    "extensions.worktreeconfig",
    "extensions.partialclone",
    "extensions.preciousobjects",
    "remote.url",
    "remote.pushurl",
    "remote.fetch",
    "remote.push",
    "remote.tagopt",
    "remote.prune",
    "remote.mirror",
    "remote.promisor",
    "remote.partialclonefilter",
    "branch.remote",
    "branch.merge",
    "branch.rebase",
    "branch.pushremote",
    "branch.description",
    "user.name",
    "user.email",
    "submodule.url",
    "submodule.active",
    "submodule.branch",
    "init.defaultbranch",
    "gc.auto",
    "pull.rebase",
    "pull.ff",
    "fetch.prune",
    "lfs.repositoryformatversion",
    "index.version",
];

/// `submodule.NAME.update` runs a command when it starts with `!`; these values do not.
const PLAIN_UPDATE: &[&str] = &["checkout", "rebase", "merge", "none"];

/// Whether a git config file holds only plain keys. Anything not understood is not plain.
pub(super) fn config_is_plain(path: &Path) -> bool {
    match std::fs::read(path) {
        Ok(bytes) if bytes.len() <= 64 * 1024 => {
            std::str::from_utf8(&bytes).is_ok_and(config_text_is_plain)
        }
        _ => false,
    }
}

fn config_text_is_plain(text: &str) -> bool {
    let mut section = String::new();
    for line in text.lines() {
        let t = line.trim();
        if t.is_empty() || t.starts_with(['#', ';']) {
            continue;
        }
        if t.ends_with('\\') {
            return false;
        }
        if let Some(head) = t.strip_prefix('[') {
            let Some(name) = head.split(']').next() else {
                return false;
            };
            let name = name.trim();
            let end = name.find([' ', '.', '"']).unwrap_or(name.len());
            section = name[..end].to_ascii_lowercase();
            if head
                .split_once(']')
                .is_some_and(|(_, rest)| !rest.trim().is_empty())
            {
                return false;
            }
            continue;
        }
        let (key, value) = t.split_once('=').unwrap_or((t, ""));
        let key = format!("{section}.{}", key.trim().to_ascii_lowercase());
        let value = value.trim().trim_matches('"');
        let plain = if key == "submodule.update" {
            PLAIN_UPDATE.contains(&value)
        } else {
            PLAIN_KEYS.contains(&key.as_str())
        };
        if !plain {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::config_text_is_plain;

    #[test]
    fn what_git_writes_is_plain_and_what_runs_programs_is_not() {
        let init = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n";
        let clone = "[remote \"origin\"]\n\turl = https://example.org/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n[submodule \"lib\"]\n\tactive = true\n\turl = ../lib\n";
        assert!(config_text_is_plain(init));
        assert!(config_text_is_plain(&format!("{init}{clone}")));
        for bad in [
            "[core]\n\tfsmonitor = ./x\n",
            "[core]\n\thooksPath = /tmp/h\n",
            "[core]\n\tsshCommand = sh -c x\n",
            "[alias]\n\tst = !sh x\n",
            "[include]\n\tpath = ../other\n",
            "[includeIf \"gitdir:/\"]\n\tpath = x\n",
            "[filter \"lfs\"]\n\tclean = x\n",
            "[submodule \"lib\"]\n\tupdate = !sh x\n",
            "[core] fsmonitor = x\n",
            "[core]\n\tpager = a\\\n",
            "[diff \"x\"]\n\ttextconv = x\n",
        ] {
            assert!(!config_text_is_plain(bad), "{bad}");
        }
        assert!(config_text_is_plain(
            "[submodule \"lib\"]\n\tupdate = rebase\n"
        ));
    }
}
