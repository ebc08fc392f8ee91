//! `git` subcommand options that name a program git runs: a pager for `git grep -O`, the
//! remote's `--upload-pack`, `git archive --exec`, `git bisect run`, `git submodule foreach`,
//! `git difftool -x`, `git filter-branch` filters. Each is a finding, so a wildcard rule such
//! as `Bash(git *)` or `Bash(git fetch *)` does not lift it.

use super::Class;
use super::classify::Judge;
use super::words::Word;

/// Options of `sub` that take a program: (option, whether a short option carries the program
/// attached, as in `-Oless`).
fn program_options(sub: &str) -> &'static [(&'static str, bool)] {
    match sub {
        "grep" => &[("-O", true), ("--open-files-in-pager", false)],
        "archive" => &[("--exec", false)],
        "fetch" | "pull" | "ls-remote" => &[("--upload-pack", false)],
        "clone" => &[("--upload-pack", false), ("-u", true)],
        "push" | "send-pack" => &[("--receive-pack", false), ("--exec", false)],
        "difftool" => &[("-x", true), ("--extcmd", false)],
        _ => &[],
    }
}

/// Subcommands whose verb or whole purpose runs commands the line names.
fn runs_commands(sub: &str, rest: &[Word]) -> bool {
    let verb = rest.iter().find(|a| !a.value.starts_with('-'));
    match sub {
        "filter-branch" => true,
        "bisect" | "submodule" => verb.is_some_and(|v| {
            matches!(
                (sub, v.value.as_str()),
                ("bisect", "run") | ("submodule", "foreach")
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
    if runs_commands(sub, rest) {
        j.raise(
            Class::Opaque,
            format!("[shell.exec-arg.git] `git {sub}` runs commands given on the command line"),
        );
    }
}
