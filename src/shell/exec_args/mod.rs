//! Per-command rules for commands whose arguments execute code or name
//! other commands: shells, interpreters, `eval`, `find -exec`, `xargs`,
//! `awk`, `sed`, `jq` modules, `rg --pre`, `tar --to-command`.

mod awk;
mod find;
mod jq;
mod sed;
mod shells;
mod tar;
pub(crate) use find::global_options as find_global_options;

use super::classify::{self, Cmd, Judge, Stdin};
use super::commands;
use super::walk::{Cwd, Scope, Walker};
use super::words::Word;
use super::{Class, tables};
use awk::awk;
use find::find;
use jq::jq;
use sed::sed;
use shells::shell;
use tar::tar;

pub(crate) use find::is_critical_word;
pub(crate) use shells::{inline_code, stdin_code};

/// Programs whose appended arguments (`xargs NAME`) can only be files they read or print:
/// fed by a literal `echo`, those words are judged as reads.
const XARGS_READERS: &[&str] = &[
    "cat",
    "head",
    "tail",
    "wc",
    "ls",
    "stat",
    "file",
    "du",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "more",
    "diff",
    "cmp",
    "jq",
    "nl",
    "od",
    "hexdump",
];

pub(crate) struct Ctx<'x, 'w, 'c> {
    pub w: &'x mut Walker<'w>,
    pub cmd: &'x Cmd<'c>,
    pub stdin: &'x Stdin,
    pub xargs: bool,
    pub scope: &'x Scope,
}

pub(crate) fn dispatch(
    j: &mut Judge,
    c: Ctx<'_, '_, '_>,
    name: &str,
    args: &[Word],
    new_cwd: &mut Option<Cwd>,
) {
    if tables::DECODERS.contains(&name) {
        j.t.decoder = true;
    }
    if c.xargs {
        let argv: Vec<Word> = std::iter::once(Word::literal(name))
            .chain(args.iter().cloned())
            .collect();
        let mut probe = Judge::new_pub();
        probe.t.decoder = j.t.decoder;
        let inner = Ctx {
            w: &mut *c.w,
            cmd: c.cmd,
            stdin: c.stdin,
            xargs: true,
            scope: c.scope,
        };
        dispatch_named(&mut probe, inner, name, args, new_cwd);
        // The appended arguments are not visible: anything beyond inspection by a program
        // whose operands are only ever files it reads is asked about (`xargs sort F` gets
        // `-o FILE`, `xargs tee` and `xargs touch` write what they are given).
        let inert = matches!(name, "echo" | "printf" | "true" | "false");
        let reader = XARGS_READERS.contains(&name);
        if probe.class != Class::ReadOnly || !(reader || inert) {
            j.raise(probe.class, probe.reason.clone());
            j.raise(
                Class::Opaque,
                format!(
                    "[shell.xargs] `xargs {}` gets arguments that are not visible here",
                    argv.first().map_or("", |w| w.display.as_str())
                ),
            );
        }
        j.t = probe.t;
        j.t.xargs_reader = probe.class == Class::ReadOnly && reader;
        j.reparse = probe.reparse;
        return;
    }
    dispatch_named(j, c, name, args, new_cwd);
}

fn dispatch_named(
    j: &mut Judge,
    c: Ctx<'_, '_, '_>,
    name: &str,
    args: &[Word],
    new_cwd: &mut Option<Cwd>,
) {
    match name {
        n if tables::SHELLS.contains(&n) => shell(j, &c, n, args),
        n if tables::FOREIGN_SHELLS.contains(&n) => j.raise(
            Class::Opaque,
            format!("[shell.foreign] `{n}` uses a syntax this analysis does not parse"),
        ),
        "eval" => {
            let code: Vec<&str> = args.iter().map(|a| a.value.as_str()).collect();
            if args.iter().all(|a| a.exact) {
                j.code(&code.join(" "), "eval");
            } else {
                classify::code_from_substitution(j, c.w, c.cmd, "eval");
            }
            j.raise(Class::Opaque, "[shell.eval] `eval` runs a string as code");
        }
        "source" | "." => {
            let from_subst = args.first().is_some_and(|a| a.subst);
            if from_subst {
                classify::code_from_substitution(j, c.w, c.cmd, name);
            }
            if args.first().is_some_and(|a| a.value == "/dev/stdin") {
                j.t.stdin_code = true;
            }
            j.raise(
                Class::Opaque,
                format!("[shell.source] `{name}` runs a file as code"),
            );
        }
        "trap" => {
            if let Some(code) = args
                .first()
                .filter(|a| a.exact && !a.value.starts_with('-'))
            {
                j.code(&code.value, "trap");
            } else if args.first().is_some_and(|a| !a.exact) {
                j.raise(Class::Opaque, "[shell.trap] trap code is computed");
            }
        }
        "alias" => {
            for a in args {
                if let Some((n, v)) = a.value.split_once('=') {
                    c.w.shadows_output |= crate::shell::words::PREDICTED.contains(&n);
                    j.code(v, "alias");
                }
            }
        }
        "find" => find(j, c, args),
        "awk" | "gawk" | "mawk" | "nawk" | "busybox-awk" => awk(j, &c, args),
        "sed" | "gsed" => sed(j, &c, args),
        "jq" => jq(j, &c, name, args),
        "rg" | "ag" | "ack" | "ack-grep" => searcher_programs(j, name, args),
        "tar" | "gtar" | "bsdtar" => tar(j, &c, args),
        _ => commands::classify_named(j, &c, name, args, new_cwd),
    }
}

/// Options of a searcher that name a program it runs: `rg --pre` (on every file),
/// `rg --hostname-bin` (for hyperlinks), `ack --pager`.
const RUNS_PROGRAM: &[&str] = &["--pre", "--hostname-bin", "--pager"];

fn searcher_programs(j: &mut Judge, name: &str, args: &[Word]) {
    let hit = args.iter().find(|a| {
        let v = a.value.as_str();
        RUNS_PROGRAM
            .iter()
            .any(|o| v == *o || v.strip_prefix(o).is_some_and(|r| r.starts_with('=')))
    });
    if let Some(a) = hit {
        j.raise(
            Class::Opaque,
            format!(
                "[shell.exec-arg.searcher] `{name} {}` runs a program the command names",
                a.display
            ),
        );
    }
}

impl Judge {
    pub(crate) fn new_pub() -> Judge {
        Judge::new()
    }
}
