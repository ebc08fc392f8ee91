//! Interpreters (`python`, `node`, `perl`, ...): inline code, `-m` modules,
//! scripts, and programs read from standard input.

use super::{first_op, operands};
use crate::shell::Class;
use crate::shell::classify::{self, Judge};
use crate::shell::exec_args::{Ctx, inline_code, stdin_code};
use crate::shell::words::Word;

pub(super) fn interpreter(
    j: &mut Judge,
    c: &Ctx<'_, '_, '_>,
    name: &str,
    flags: &[&str],
    args: &[Word],
) {
    if crate::shell::tables::version_only(name, args) {
        return;
    }
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let v = a.value.as_str();
        if let Some(f) = flags
            .iter()
            .find(|f| v == **f || (f.len() == 2 && v.starts_with(**f) && !v.starts_with("--")))
        {
            let code = if v.len() > f.len() {
                v.get(f.len()..).unwrap_or("").to_string()
            } else {
                args.get(i + 1).map(|x| x.value.clone()).unwrap_or_default()
            };
            inline_code(j, name, &code);
            return;
        }
        if v == "-m" {
            let module = args.get(i + 1).map(|x| x.value.as_str()).unwrap_or("");
            // `-I` and `-P` leave the working directory off the import path.
            let before = args.get(..i).unwrap_or(&[]);
            let safe = before
                .iter()
                .any(|a| matches!(a.value.as_str(), "-I" | "-P"));
            let m = Module { name: module, safe };
            module_run(j, c, name, &m, args.get(i + 2..).unwrap_or(&[]));
            return;
        }
        if matches!(v, "--version" | "-V" | "--help" | "-h") || subcommand(j, name, v) {
            return;
        }
        if v.starts_with('-') && v.len() > 1 {
            i += 1;
            continue;
        }
        if v == "-" {
            break;
        }
        script(j, c, name, a);
        return;
    }
    stdin_code(j, c, name);
}

/// The module `python -m` runs, and whether the working directory is on the import path.
struct Module<'a> {
    name: &'a str,
    safe: bool,
}

/// `python -m MODULE`: tests and linters build, `pip` installs, `venv` writes its directory,
/// a server uses the network, any other module runs.
fn module_run(j: &mut Judge, c: &Ctx<'_, '_, '_>, name: &str, m: &Module<'_>, rest: &[Word]) {
    let module = m.name;
    match module {
        "pytest" | "unittest" | "mypy" | "ruff" | "black" | "flake8" | "pylint" | "doctest"
        | "compileall" | "py_compile" | "tox" | "nox" => j.raise(
            Class::BuildTest,
            format!("[shell.build] `{name} -m {module}`"),
        ),
        "pip" | "ensurepip" => {
            shadowed(j, c, name, m);
            if !matches!(
                first_op(rest),
                "list" | "show" | "freeze" | "check" | "--version"
            ) {
                j.raise(
                    Class::PackageInstall,
                    format!("[shell.package] `{name} -m pip`"),
                );
            }
        }
        "venv" | "virtualenv" => {
            for a in operands(rest) {
                j.write(a, c.cmd.cwd, c.w.ctx, "virtual environment");
            }
        }
        "json.tool" | "tabnanny" | "pydoc" | "site" | "platform" | "sysconfig" => {
            shadowed(j, c, name, m);
            if module == "json.tool"
                && let Some(out) = operands(rest).get(1)
            {
                j.output(out, c.cmd.cwd, c.w.ctx, "json.tool output");
            }
        }
        "http.server" | "smtpd" | "ftplib" => {
            j.t.network = true;
            j.raise(
                Class::Network,
                format!("[shell.network] `{name} -m {module}` serves on the network"),
            );
            if module == "http.server" {
                served_tree(j, c, rest);
            }
        }
        // Their arguments are code, or the program they run: the module's words hide it.
        "timeit" | "cProfile" | "profile" | "trace" | "pdb" => j.raise(
            Class::Opaque,
            format!("[shell.exec-arg.python-m] `{name} -m {module}` runs the code or program it is given"),
        ),
        "zipfile" | "tarfile" => archive_module(j, c, module, rest),
        _ => j.raise(
            Class::ScriptRun,
            format!("[shell.script] `{name} -m {module}` runs a module"),
        ),
    }
}

/// `python -m http.server` serves `--directory DIR` (`-d`), else the working directory, to
/// whoever connects: the whole tree is read.
fn served_tree(j: &mut Judge, c: &Ctx<'_, '_, '_>, rest: &[Word]) {
    let dir = rest
        .iter()
        .position(|a| matches!(a.value.as_str(), "-d" | "--directory"))
        .and_then(|i| rest.get(i + 1))
        .cloned()
        .or_else(|| {
            rest.iter()
                .find_map(|a| a.value.strip_prefix("--directory=").map(Word::literal))
        })
        .unwrap_or_else(|| Word::literal("."));
    j.tree(&dir, c.cmd.cwd, crate::shell::paths::Reach::Target);
}

/// `python -m zipfile` and `-m tarfile`: `-c ARCHIVE SOURCES...` writes the archive and reads
/// the sources whole; `-e ARCHIVE DIR` writes into DIR; `-l` and `-t` only read.
fn archive_module(j: &mut Judge, c: &Ctx<'_, '_, '_>, module: &str, rest: &[Word]) {
    let ops = operands(rest);
    let flag = |f: &[&str]| rest.iter().any(|a| f.contains(&a.value.as_str()));
    let (ctx, cwd) = (c.w.ctx, c.cmd.cwd);
    if flag(&["-c", "--create"]) {
        if let Some((archive, sources)) = ops.split_first() {
            j.output(archive, cwd, ctx, &format!("{module} archive"));
            for s in sources {
                j.tree(s, cwd, crate::shell::paths::Reach::Target);
            }
        }
    } else if flag(&["-e", "--extract"]) {
        let here = Word::literal(".");
        let dir = ops.get(1).copied().unwrap_or(&here);
        if ops.len() > 1 {
            j.output(dir, cwd, ctx, &format!("{module} extraction"));
        }
        j.content_write(dir, cwd, ctx, &format!("{module} extraction"));
    }
    if let Some(a) = ops.first() {
        j.read(a, cwd, ctx);
    }
}

/// `python -m MODULE` puts the working directory first on the import path: any module there
/// (`argparse.py`, a `json/` package) runs in place of the standard library's one of that name
/// when the run imports it, and a run imports dozens.
fn shadowed(j: &mut Judge, c: &Ctx<'_, '_, '_>, name: &str, m: &Module<'_>) {
    if m.safe {
        return;
    }
    let dirs = c.cmd.cwd.clone().unwrap_or_default();
    j.t.project_files = true;
    let found = if dirs.is_empty() {
        Some("a working directory only known when it runs".to_string())
    } else {
        let top = m.name.split('.').next().unwrap_or(m.name);
        dirs.iter().find_map(|d| python_module(d, top))
    };
    if let Some(what) = found {
        j.raise(
            Class::ScriptRun,
            format!(
                "[shell.script] `{name} -m {}` imports modules from {what}",
                m.name
            ),
        );
    }
}

/// A Python module or package in `dir`, which an import would take from there, or an entry
/// named as the module's first component.
fn python_module(dir: &std::path::Path, top: &str) -> Option<String> {
    const MODULE: [&str; 3] = [".py", ".pyc", ".so"];
    let entries = std::fs::read_dir(dir).ok()?;
    entries.filter_map(Result::ok).find_map(|e| {
        let name = e.file_name().to_string_lossy().into_owned();
        let package = || {
            e.file_type().is_ok_and(|t| !t.is_file())
                && ["__init__.py", "__init__.pyc"]
                    .iter()
                    .any(|i| e.path().join(i).exists())
        };
        let module = name == top || MODULE.iter().any(|x| name.ends_with(x)) || package();
        module.then(|| format!("the working directory (`{name}`)"))
    })
}

/// The runtimes' own subcommands (`deno test`, `bun add`, `node --test`); `true` when `v`
/// is one of them.
fn subcommand(j: &mut Judge, name: &str, v: &str) -> bool {
    if name == "deno" || name == "bun" {
        match v {
            "test" | "check" | "lint" | "fmt" | "bench" | "build" => {
                j.raise(Class::BuildTest, format!("[shell.build] `{name} {v}`"));
                return true;
            }
            "install" | "add" | "i" => {
                j.raise(
                    Class::PackageInstall,
                    format!("[shell.package] `{name} {v}`"),
                );
                return true;
            }
            _ => {}
        }
    }
    if name.starts_with("node") && v == "--test" {
        j.raise(Class::BuildTest, "[shell.build] `node --test`");
        return true;
    }
    false
}

/// A script operand: a program whose content is not analysed, or code from a substitution.
fn script(j: &mut Judge, c: &Ctx<'_, '_, '_>, name: &str, a: &Word) {
    if a.subst {
        classify::code_from_substitution(j, c.w, c.cmd, &format!("{name} <(...)"));
        return;
    }
    j.raise(
        Class::ScriptRun,
        format!(
            "[shell.script] `{name} {}` runs a program whose content is not analysed",
            a.display
        ),
    );
}
