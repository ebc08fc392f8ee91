//! `git` subcommand options that name a program git runs: a pager for `git grep -O`, the
//! remote's `--upload-pack`, `git archive --exec`, `git bisect run`, `git submodule foreach`,
//! `git difftool -x`, `git filter-branch` filters, `git clone -c` settings, and URLs of the
//! `ext::` transport, which runs a shell command. Each is a finding, so a wildcard rule such as
//! `Bash(git *)` or `Bash(git fetch *)` does not lift it.

use super::classify::Judge;
use super::words::Word;
use super::{Class, tables};

/// Options of `sub` that take a program: (option, whether a short option carries the program
/// attached, as in `-Oless`).
fn program_options(sub: &str) -> &'static [(&'static str, bool)] {
    match sub {
        "grep" => &[("-O", true), ("--open-files-in-pager", false)],
        "archive" => &[("--exec", false)],
        "fetch" | "pull" | "ls-remote" => &[("--upload-pack", false)],
        "clone" => &[("--upload-pack", false), ("-u", true)],
        "push" | "send-pack" => &[("--receive-pack", false), ("--exec", false)],
        "difftool" => &[
            ("-x", true),
            ("--extcmd", false),
            ("-t", true),
            ("--tool", false),
        ],
        "mergetool" => &[("-t", true), ("--tool", false)],
        "rebase" => &[("-x", true), ("--exec", false)],
        "send-email" => &[
            ("--smtp-server", false),
            ("--sendmail-cmd", false),
            ("--to-cmd", false),
            ("--cc-cmd", false),
            ("--header-cmd", false),
        ],
        _ => &[],
    }
}

/// Subcommands whose verb or whole purpose runs commands the line names.
fn runs_commands(sub: &str, rest: &[Word]) -> bool {
    let verb = rest.iter().find(|a| !a.value.starts_with('-'));
    match sub {
        "filter-branch" => true,
        "bisect" | "submodule" | "hook" => verb.is_some_and(|v| {
            matches!(
                (sub, v.value.as_str()),
                ("bisect", "run") | ("submodule", "foreach") | ("hook", "run")
            )
        }),
        _ => false,
    }
}

/// Raise when `git SUB REST` runs a program that its own arguments name.
pub(crate) fn program_args(j: &mut Judge, sub: &str, rest: &[Word]) {
    let opts = program_options(sub);
    let hit = rest.iter().find(|a| {
        let v = a.value.as_str();
        opts.iter().any(|(o, attached)| {
            v == *o
                || v.strip_prefix(o).is_some_and(|r| {
                    r.starts_with('=') || (*attached && !r.is_empty() && !o.starts_with("--"))
                })
        })
    });
    if let Some(a) = hit {
        j.raise(
            Class::Opaque,
            format!(
                "[shell.exec-arg.git] `git {sub} {}` runs a program the command names",
                a.display
            ),
        );
    }
    if sub == "clone" {
        clone_config(j, rest);
    }
    if runs_commands(sub, rest) {
        j.raise(
            Class::Opaque,
            format!("[shell.exec-arg.git] `git {sub}` runs commands given on the command line"),
        );
    }
}

/// `git clone -c KEY=VALUE` (`--config`) writes the setting into the new repository before it
/// checks out, so a key whose value git runs (`core.fsmonitor`, `protocol.ext.allow`, ...), or
/// one only known when it runs, runs it at once.
fn clone_config(j: &mut Judge, rest: &[Word]) {
    for (i, a) in rest.iter().enumerate() {
        let v = a.value.as_str();
        let attached = v
            .strip_prefix("--config=")
            .or_else(|| v.strip_prefix("-c").filter(|r| !r.is_empty()));
        let (word, pair) = match (v, attached, rest.get(i + 1)) {
            ("-c" | "--config", _, Some(next)) => (next, next.value.as_str()),
            (_, Some(p), _) => (a, p),
            _ => continue,
        };
        let key = pair.split('=').next().unwrap_or("");
        if !word.exact || tables::git_exec_key(key) {
            j.raise(
                Class::Opaque,
                format!("[shell.exec-arg.git] `git clone -c {key}` makes git run a program"),
            );
        }
    }
}

/// Any argument of git that names a URL of the `ext::` transport (`git clone 'ext::sh -c ..'`,
/// `git archive --remote=ext::..`, `git -c remote.o.url=ext::.. fetch o`): git runs the rest of
/// the URL as a command once the transport is allowed (`GIT_ALLOW_PROTOCOL`,
/// `protocol.ext.allow`, the repository's configuration), which the line may not show.
pub(crate) fn transports(j: &mut Judge, args: &[Word]) {
    let ext = |a: &&Word| {
        let v = a.value.to_ascii_lowercase();
        v.starts_with("ext::") || v.contains("=ext::")
    };
    if let Some(a) = args.iter().find(ext) {
        j.raise(
            Class::Opaque,
            format!(
                "[shell.exec-arg.git] `{}` names git's `ext::` transport, which runs a command",
                a.display
            ),
        );
    }
}
