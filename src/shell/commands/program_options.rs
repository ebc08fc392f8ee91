//! Options of build tools and task runners that name a program, a makefile or a directory the
//! tool runs code from: `make -f/--eval/SHELL=/-C`, `npm exec/x/explore`, `npx`,
//! `--script-shell`, `gcc -B/-specs`, `sort --compress-program`. Each is a finding, so a
//! wildcard rule (`Bash(make *)`, `Bash(npm *)`, `Bash(gcc *)`) does not lift it.

use crate::shell::Class;
use crate::shell::classify::Judge;
use crate::shell::exec_args::Ctx;
use crate::shell::paths;
use crate::shell::words::Word;

/// The first argument equal to one of `opts`, or starting with one followed by `=` (or by
/// anything, for options listed in `attached`).
fn find_opt<'a>(args: &'a [Word], opts: &[&str], attached: &[&str]) -> Option<&'a Word> {
    args.iter().find(|a| {
        let v = a.value.as_str();
        opts.iter().any(|o| {
            v == *o
                || v.strip_prefix(o)
                    .is_some_and(|r| r.starts_with('=') || (!r.is_empty() && attached.contains(o)))
        })
    })
}

fn executing(j: &mut Judge, name: &str, a: &Word, what: &str) {
    j.raise(
        Class::Opaque,
        format!("[shell.exec-arg.{name}] `{name} {}` {what}", a.display),
    );
}

/// `make -f FILE`, `--eval`, `SHELL=`, and `-C DIR` outside the workspace: the recipes or the
/// shell that runs them come from the command line, not from the project's makefile.
pub(crate) fn make(j: &mut Judge, c: &Ctx<'_, '_, '_>, name: &str, args: &[Word]) {
    let file = ["-f", "--file", "--makefile", "--eval", "-E"];
    if let Some(a) = find_opt(args, &file, &["-f", "-E"]) {
        executing(j, name, a, "runs recipes the command line names");
    }
    let shell_var = args.iter().find(|a| {
        let key = a.value.split('=').next().unwrap_or("");
        a.value.contains('=') && matches!(key, "SHELL" | ".SHELLFLAGS" | "MAKESHELL" | "MAKEFLAGS")
    });
    if let Some(a) = shell_var {
        executing(j, name, a, "sets the program that runs the recipes");
    }
    for (i, a) in args.iter().enumerate() {
        let dir = match a.value.strip_prefix("-C") {
            Some("") => args.get(i + 1).cloned(),
            Some(rest) => Some(Word {
                value: rest.trim_start_matches('=').to_string(),
                ..a.clone()
            }),
            None => a.value.strip_prefix("--directory=").map(|v| Word {
                value: v.to_string(),
                ..a.clone()
            }),
        };
        if let Some(d) = dir.filter(|d| !within_workspace(d, c)) {
            j.raise(
                Class::Opaque,
                format!(
                    "[shell.exec-arg.{name}] `{name} -C {}` runs the recipes of a directory outside the workspace",
                    d.display
                ),
            );
        }
    }
}

/// A directory word resolves inside the workspace from every candidate directory.
pub(super) fn within_workspace(d: &Word, c: &Ctx<'_, '_, '_>) -> bool {
    if d.unknown || d.subst {
        return false;
    }
    let ctx = c.w.ctx;
    let dirs = c.cmd.cwd.clone().unwrap_or_default();
    !dirs.is_empty()
        && dirs
            .iter()
            .all(|cwd| paths::in_workspace(&paths::resolve(&d.value, cwd), ctx))
}

/// `npm exec`, `npm x`, `npm explore`, `pnpm dlx`, `yarn dlx` run a package's binary or a
/// shell; `--script-shell` replaces the shell scripts run in.
pub(crate) fn js(j: &mut Judge, name: &str, sub: &str, args: &[Word]) {
    if matches!(sub, "exec" | "x" | "explore" | "dlx") {
        j.raise(
            Class::Opaque,
            format!("[shell.exec-arg.{name}] `{name} {sub}` runs a program the command names"),
        );
    }
    if let Some(a) = find_opt(args, &["--script-shell", "--shell"], &[]) {
        executing(j, name, a, "sets the shell that runs scripts");
    }
}

/// `npx`, `pnpx`, `bunx`: run a package's binary, fetched if need be.
pub(crate) fn runs_package(j: &mut Judge, name: &str) {
    j.raise(
        Class::Opaque,
        format!("[shell.exec-arg.{name}] `{name}` runs a program the command names"),
    );
}

/// Compiler options that choose the programs the driver runs: `-B DIR` (where `cc1`, `as`
/// and `ld` are looked up) and spec files, which can name any command.
pub(crate) fn compiler(j: &mut Judge, name: &str, args: &[Word]) {
    if !matches!(name, "gcc" | "g++" | "cc" | "c++" | "clang" | "clang++") {
        return;
    }
    if let Some(a) = find_opt(args, &["-B", "-specs", "--specs"], &["-B"]) {
        executing(j, name, a, "runs programs the command line points at");
    }
}

/// `sort --compress-program=PROG` runs PROG on its temporary files.
pub(crate) fn sort(j: &mut Judge, args: &[Word]) {
    if let Some(a) = find_opt(args, &["--compress-program"], &[]) {
        executing(j, "sort", a, "runs a program the command names");
    }
}
