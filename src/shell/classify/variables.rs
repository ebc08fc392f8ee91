//! Arguments built from a variable whose value is not known before running (`cat $X`,
//! `cat ${X:-~/.netrc}`, `cat ${a[0]}`, a `read` variable): the path they name cannot be
//! compared with the profile's plan or the secrets, so the command asks, and no wildcard rule
//! lifts it. Variables assigned a literal earlier on the line are substituted instead (see
//! `walk::vars`).

use super::{Cmd, Judge};
use crate::shell::commands::outputs::values;
use crate::shell::walk::{Seg, Walker};
use crate::shell::words::Word;
use crate::shell::{Class, ShellContext, tree_links};

/// Commands whose arguments are text, not paths, or that only set or test variables.
const TEXT_ONLY: &[&str] = &[
    "echo", "printf", "test", "[", "true", "false", ":", "read", "export", "local", "declare",
    "typeset", "readonly", "unset", "shift", "exit", "return", "let", "sleep",
];

pub(super) fn variables(j: &mut Judge, cmd: &Cmd<'_>, leader: usize) {
    let Some(lead) = cmd.argv.get(leader) else {
        return;
    };
    let name = lead.value.rsplit('/').next().unwrap_or("");
    if TEXT_ONLY.contains(&name) {
        return;
    }
    let mut message = false;
    for a in cmd.argv.iter().skip(leader + 1) {
        if a.var_unknown && !message {
            j.raise(
                Class::Opaque,
                format!(
                    "[shell.var.unknown] `{}` depends on a variable whose value is not known before running",
                    a.display
                ),
            );
            return;
        }
        message = name == "git" && matches!(a.value.as_str(), "-m" | "--message");
    }
}

/// Commands that take no path from their arguments, or only a directory they move to.
const NO_PATHS: &[&str] = &[
    "cd", "pushd", "kill", "seq", "expr", "basename", "dirname", "wait",
];

/// An argument built from a command substitution (`cat $(cat list)`, `sort $(<list)`) names
/// paths only known when it runs, so a path-taking command asks, as for an unknown variable.
/// Exceptions, whose output the analysis already judged: substitutions that only list paths
/// under checked directories (`wc -l $(git ls-files)`, `cat $(find src -name '*.md')`), and
/// `git` revisions from `git` itself (`git diff $(git merge-base HEAD main)`).
pub(super) fn substituted(
    j: &mut Judge,
    cmd: &Cmd<'_>,
    leader: usize,
    nested: &[Seg],
    ctx: &ShellContext,
) {
    let Some(lead) = cmd.argv.get(leader) else {
        return;
    };
    let name = lead.value.rsplit('/').next().unwrap_or("");
    if TEXT_ONLY.contains(&name) || NO_PATHS.contains(&name) {
        return;
    }
    let args = cmd.argv.get(leader + 1..).unwrap_or(&[]);
    // Only a substitution that is a whole word lists paths: text after it (`$(find .)/n`)
    // names what lies below each.
    let whole = args.iter().filter(|a| a.subst_output).all(|a| {
        let raw = a.raw.trim_matches('"');
        raw.starts_with("$(") && raw.ends_with(')') && raw.matches("$(").count() == 1
    });
    if whole && !nested.is_empty() && nested.iter().all(|s| s.t.lists_paths) {
        listed_links(j, cmd, (lead, args), nested, ctx);
        return;
    }
    let git_revs = name == "git"
        && !nested.is_empty()
        && nested.iter().all(|s| s.seg.text.starts_with("git "))
        && !args.iter().any(|a| a.value == "--no-index");
    if git_revs {
        return;
    }
    let mut message = false;
    for a in args {
        if a.subst_output && !message {
            j.raise(
                Class::Opaque,
                format!(
                    "[shell.subst.path] `{}` takes paths from a command substitution, known only when it runs",
                    a.display
                ),
            );
            return;
        }
        message = name == "git" && matches!(a.value.as_str(), "-m" | "--message");
    }
}

/// A listing the command takes its paths from may name links that lead out of the trees it
/// was judged for (`cat $(find .)` beside `key -> ~/.ssh/id_rsa`): the command reaches each
/// as it reaches its operands.
fn listed_links(
    j: &mut Judge,
    cmd: &Cmd<'_>,
    (lead, args): (&Word, &[Word]),
    nested: &[Seg],
    ctx: &ShellContext,
) {
    let reach = super::operands_reach(&lead.value, args);
    for s in nested {
        match tree_links::listed(&s.t.lists_links, &s.seg.trees, cmd.cwd) {
            Ok(links) => {
                for l in links {
                    j.read_operand(&Word::literal(&l.to_string_lossy()), cmd.cwd, ctx, reach);
                }
            }
            Err(e) => j.raise(
                Class::Opaque,
                tree_links::unknown(&e, &format!("`{}`", lead.display)),
            ),
        }
    }
}

/// Options that name a file holding the paths to read (`sort --files0-from=F`, `tar -T F`):
/// F is read, and the paths in it are known only when the command runs.
fn path_list_options(name: &str) -> (&'static [&'static str], &'static [&'static str]) {
    match name {
        "sort" | "wc" | "du" => (&["--files0-from"], &[]),
        "tar" | "bsdtar" => (&["-T", "--files-from"], &["-T"]),
        "rsync" | "cpio" => (&["--files-from"], &[]),
        "file" => (&["-f", "--files-from"], &["-f"]),
        _ => (&[], &[]),
    }
}

/// Options that make a program read the names of the files it reads from its standard input
/// (`zip -@`, `cpio -o`): those are known only when it runs.
fn names_from_stdin(name: &str, args: &[Word]) -> bool {
    let (short, long) = match name {
        "zip" => ('@', "--names-stdin"),
        "cpio" => ('o', "--create"),
        _ => return false,
    };
    crate::shell::commands::short_flag(args, short) || crate::shell::commands::has(args, &[long])
}

pub(super) fn path_lists(j: &mut Judge, w: &Walker<'_>, cmd: &Cmd<'_>, leader: usize) {
    let Some(lead) = cmd.argv.get(leader) else {
        return;
    };
    let name = lead.value.rsplit('/').next().unwrap_or("");
    let args = cmd.argv.get(leader + 1..).unwrap_or(&[]);
    if names_from_stdin(name, args) {
        j.raise(
            Class::Opaque,
            format!("[shell.paths.from-stdin] `{name}` reads the paths its input lists, known only when it runs"),
        );
    }
    let (opts, attached) = path_list_options(name);
    if opts.is_empty() {
        return;
    }
    for f in values(args, opts, attached) {
        j.raise(
            Class::Opaque,
            format!(
                "[shell.paths.from-file] `{name}` reads the paths listed in `{}`, known only when it runs",
                f.display
            ),
        );
        j.read(&f, cmd.cwd, w.ctx);
    }
}
