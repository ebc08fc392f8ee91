//! `git`: global options that run code (`-c core.pager=...`), `-C DIR`,
//! and the subcommands sorted into inspection, workspace writes,
//! destructive and network.

use super::classify::Judge;
use super::exec_args::Ctx;
use super::tables::git::{NETWORK, READ, WRITE};
use super::words::Word;
use super::{Class, paths, tables};

pub(crate) fn classify(j: &mut Judge, c: &Ctx<'_, '_, '_>, args: &[Word]) {
    let ctx = c.w.ctx;
    let mut i = 0;
    let mut dir: Option<&Word> = None;
    while let Some(a) = args.get(i) {
        let v = a.value.as_str();
        match v {
            "-c" => {
                if let Some(kv) = args.get(i + 1) {
                    config_pair(j, kv, "git -c");
                }
                i += 2;
            }
            "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--exec-path" => {
                if v == "-C" {
                    dir = args.get(i + 1);
                } else if v != "--namespace" {
                    j.raise(
                        Class::Opaque,
                        format!(
                            "[shell.git.{}] `git {v}` points git elsewhere",
                            v.trim_start_matches('-')
                        ),
                    );
                }
                i += 2;
            }
            _ if v.starts_with("--git-dir=")
                || v.starts_with("--work-tree=")
                || v.starts_with("--exec-path=") =>
            {
                j.raise(
                    Class::Opaque,
                    "[shell.git.dir] git pointed at another repository or program directory",
                );
                i += 1;
            }
            _ if v.starts_with("--config-env") => {
                j.raise(
                    Class::Opaque,
                    "[shell.git.config-env] configuration from the environment",
                );
                i += 1;
            }
            _ if v.starts_with('-') => i += 1,
            _ => break,
        }
    }
    let sub = args.get(i).map(|a| a.value.as_str()).unwrap_or("");
    let rest = args.get(i + 1..).unwrap_or(&[]);
    let has = |f: &[&str]| rest.iter().any(|a| f.contains(&a.value.as_str()));
    let short = |ch: char| {
        rest.iter()
            .any(|a| a.value.starts_with('-') && !a.value.starts_with("--") && a.value.contains(ch))
    };
    let outside_dir = dir.is_some_and(|d| {
        d.unknown || d.subst || {
            let cwd = c
                .cmd
                .cwd
                .as_ref()
                .and_then(|v| v.first())
                .cloned()
                .unwrap_or_else(|| ctx.cwd.clone());
            !paths::inside(&paths::resolve(&d.value, &cwd), ctx)
        }
    });
    let write = |j: &mut Judge, why: &str| {
        if outside_dir {
            j.raise(
                Class::OutsideWrite,
                format!("[shell.git.outside] `git -C` {why} outside the workspace"),
            );
        } else {
            j.raise(
                Class::WorkspaceWrite,
                format!("[shell.git.write] `git {sub}` {why}"),
            );
        }
    };
    match sub {
        "" => {}
        s if READ.contains(&s) => {
            if s == "diff" && has(&["--ext-diff"]) {
                j.raise(Class::Opaque, "[shell.git.ext-diff] external diff program");
            }
            if has(&["--output"]) || rest.iter().any(|a| a.value.starts_with("--output=")) {
                write(j, "writes an output file");
                output_files(j, c, rest);
            }
        }
        "branch" => {
            if has(&["-D", "--delete", "-d"]) && (has(&["-D"]) || has(&["--force", "-f"])) {
                j.raise(
                    Class::Destructive,
                    "[shell.git.destructive] `git branch -D` deletes unmerged work",
                );
            } else if has(&[
                "-d",
                "--delete",
                "-m",
                "-M",
                "-c",
                "-C",
                "--move",
                "--copy",
                "--set-upstream-to",
                "-u",
                "--unset-upstream",
            ]) || rest.iter().any(|a| !a.value.starts_with('-'))
            {
                write(j, "changes branches");
            }
        }
        "tag" => {
            if has(&["-d", "--delete"]) {
                j.raise(Class::Destructive, "[shell.git.destructive] `git tag -d`");
            } else if rest.iter().any(|a| !a.value.starts_with('-'))
                && !has(&["-l", "--list", "--contains", "--points-at"])
            {
                write(j, "creates a tag");
            }
        }
        "remote" => {
            let verb = rest
                .iter()
                .find(|a| !a.value.starts_with('-'))
                .map(|a| a.value.as_str())
                .unwrap_or("");
            match verb {
                "" | "show" | "get-url" => {}
                "update" | "prune" => {
                    j.t.network = true;
                    j.raise(
                        Class::Network,
                        "[shell.network.git] `git remote update` fetches",
                    );
                }
                _ => j.raise(
                    Class::ConfigChange,
                    "[shell.git.config] `git remote` changes remotes",
                ),
            }
        }
        "stash" => {
            let verb = rest
                .iter()
                .find(|a| !a.value.starts_with('-'))
                .map(|a| a.value.as_str())
                .unwrap_or("push");
            match verb {
                "list" | "show" => {}
                "drop" | "clear" => j.raise(
                    Class::Destructive,
                    "[shell.git.destructive] `git stash drop/clear` discards work",
                ),
                _ => write(j, "stashes changes"),
            }
        }
        "reset" => {
            if has(&["--hard", "--merge", "--keep"]) {
                j.raise(
                    Class::Destructive,
                    "[shell.git.destructive] `git reset --hard` discards work",
                );
            } else {
                write(j, "moves HEAD or the index");
            }
        }
        "clean" => {
            if has(&["-n", "--dry-run"]) {
                return;
            }
            j.raise(
                Class::Destructive,
                "[shell.git.destructive] `git clean` deletes untracked files",
            );
        }
        "checkout" => {
            let discards = has(&[
                "--", ".", "-f", "--force", "-p", "--patch", "--ours", "--theirs",
            ]) || rest.iter().filter(|a| !a.value.starts_with('-')).count() > 1;
            if discards {
                j.raise(
                    Class::Destructive,
                    "[shell.git.destructive] `git checkout` of paths discards changes",
                );
            } else {
                write(j, "switches branches");
            }
        }
        "restore" => {
            if has(&["--staged", "-S"]) && !has(&["--worktree", "-W"]) {
                write(j, "unstages changes");
            } else {
                j.raise(
                    Class::Destructive,
                    "[shell.git.destructive] `git restore` discards changes",
                );
            }
        }
        "rm" => j.raise(
            Class::Destructive,
            "[shell.git.destructive] `git rm` deletes files",
        ),
        "gc" | "prune" | "reflog"
            if has(&["--prune=now", "expire", "delete", "--expire=now"]) || sub == "prune" =>
        {
            j.raise(
                Class::Destructive,
                format!("[shell.git.destructive] `git {sub}` drops unreachable objects"),
            );
        }
        "reflog" | "gc" => {}
        "update-ref" | "filter-branch" | "filter-repo" | "replace" => {
            j.raise(
                Class::Destructive,
                format!("[shell.git.destructive] `git {sub}` rewrites refs or history"),
            );
        }
        "worktree" => {
            let verb = rest
                .iter()
                .find(|a| !a.value.starts_with('-'))
                .map(|a| a.value.as_str())
                .unwrap_or("");
            match verb {
                "list" | "" => {}
                "remove" | "prune" => j.raise(
                    Class::Destructive,
                    "[shell.git.destructive] `git worktree remove`",
                ),
                _ => {
                    let path = rest.iter().filter(|a| !a.value.starts_with('-')).nth(1);
                    match path {
                        Some(p) => j.write(p, c.cmd.cwd, ctx, "git worktree"),
                        None => write(j, "changes worktrees"),
                    }
                }
            }
        }
        "config" => config(j, rest),
        "push" => {
            j.t.network = true;
            let force = has(&[
                "--force",
                "-f",
                "--force-with-lease",
                "--mirror",
                "--delete",
                "-d",
                "--prune",
            ]) || short('f')
                || rest.iter().any(|a| {
                    a.value.starts_with('+')
                        || a.value.starts_with("--force-with-lease=")
                        || a.value.starts_with(':')
                });
            if force {
                j.raise(
                    Class::Destructive,
                    "[shell.git.destructive] `git push --force` overwrites remote history",
                );
            }
            j.raise(
                Class::Network,
                "[shell.network.git] `git push` sends to a remote",
            );
        }
        s if NETWORK.contains(&s) => {
            j.t.network = true;
            j.raise(
                Class::Network,
                format!("[shell.network.git] `git {s}` talks to a remote"),
            );
            if s == "clone"
                && let Some(p) = rest.iter().filter(|a| !a.value.starts_with('-')).nth(1)
            {
                j.write(p, c.cmd.cwd, ctx, "git clone into");
            }
        }
        s if WRITE.contains(&s) => {
            if (s == "rebase" && (has(&["-i", "--interactive", "--exec", "-x"])))
                || (s == "commit" && has(&["-e", "--edit"]))
            {
                j.raise(
                    Class::Opaque,
                    format!("[shell.git.exec] `git {s}` runs an editor or commands"),
                );
            }
            if HOOKED.contains(&s) {
                j.raise(
                    Class::ScriptRun,
                    format!("[shell.git.hooks] `git {s}` runs the repository's hooks"),
                );
            }
            if s == "bisect" && has(&["run"]) {
                j.raise(
                    Class::ScriptRun,
                    "[shell.git.exec] `git bisect run` runs a command",
                );
            }
            write(j, "records changes");
        }
        s => j.raise(
            Class::Unknown,
            format!("[shell.unknown] `git {s}` (may be an alias or an extension)"),
        ),
    }
}

/// Subcommands that run hooks (`pre-commit`, `commit-msg`, `post-merge`, `pre-rebase`,
/// `applypatch-msg`, ...): files in the work tree when `core.hooksPath` or a hook manager
/// points there, so an earlier edit may have written them.
const HOOKED: &[&str] = &["commit", "merge", "rebase", "am", "cherry-pick", "revert"];

fn config_pair(j: &mut Judge, kv: &Word, via: &str) {
    let key = kv.value.split('=').next().unwrap_or("");
    if !kv.exact || tables::git_exec_key(key) {
        j.raise(
            Class::Opaque,
            format!("[shell.git.exec-config] `{via} {key}` makes git run a program"),
        );
    }
}

fn config(j: &mut Judge, rest: &[Word]) {
    let read_flags = [
        "--get",
        "--get-all",
        "--get-regexp",
        "-l",
        "--list",
        "--show-origin",
        "--show-scope",
        "get",
        "list",
    ];
    if rest.iter().any(|a| read_flags.contains(&a.value.as_str())) {
        return;
    }
    let ops: Vec<&Word> = rest.iter().filter(|a| !a.value.starts_with('-')).collect();
    match ops.as_slice() {
        [] | [_] => {}
        [first, ..] => {
            let key = if first.value == "set" {
                ops.get(1).map(|w| w.value.as_str()).unwrap_or("")
            } else {
                first.value.as_str()
            };
            if tables::git_exec_key(key) {
                j.raise(Class::Malicious, format!("[shell.malicious.git-exec-config] `git config {key}` makes git run a program on later commands"));
            } else {
                j.raise(
                    Class::ConfigChange,
                    format!("[shell.git.config] `git config {key}` changes git settings"),
                );
            }
        }
    }
}

/// The files `--output FILE` and `--output=FILE` name, judged by where they land.
fn output_files(j: &mut Judge, c: &Ctx<'_, '_, '_>, rest: &[Word]) {
    for (i, a) in rest.iter().enumerate() {
        let file = match a.value.strip_prefix("--output=") {
            Some(v) => {
                let mut w = a.clone();
                w.value = v.to_string();
                w.display = a.display.trim_start_matches("--output=").to_string();
                Some(w)
            }
            None if a.value == "--output" => rest.get(i + 1).cloned(),
            None => None,
        };
        if let Some(f) = file {
            j.write(&f, c.cmd.cwd, c.w.ctx, "git output file");
        }
    }
}
