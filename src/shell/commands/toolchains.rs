//! Toolchains, task runners and package managers: builds and tests run project code and are
//! asked about outside the sandbox, like project scripts; installs are asked about.

use super::{first_op, has, outputs, pm_config, program_options};
use crate::shell::Class;
use crate::shell::classify::Judge;
use crate::shell::exec_args::Ctx;
use crate::shell::project::{self, Run};
use crate::shell::tables;
use crate::shell::tables::project::RUSTUP_PROXIES;
use crate::shell::words::Word;

/// Options of a build or test tool that run another program: `-exec`/`-toolexec` runners,
/// compiler wrappers and plugins.
const RUNNER_OPTIONS: &[&str] = &["-exec", "-toolexec", "-wrapper", "-fplugin"];

/// Raise when an argument names a program the build runs (`go test -exec x`,
/// `cargo --config build.rustc-wrapper=x`): the build's class does not cover it.
fn runner_options(j: &mut Judge, name: &str, args: &[Word]) {
    // Cargo's `--config` sets any key, compiler wrappers and runners included.
    let cargo: &[&str] = if name == "cargo" { &["--config"] } else { &[] };
    let hit = args.iter().find(|a| {
        let v = a.value.as_str();
        RUNNER_OPTIONS.iter().chain(cargo).any(|o| {
            v == *o
                || v.strip_prefix(o)
                    .is_some_and(|r| r.starts_with('=') || r.starts_with(','))
        })
    });
    if let Some(a) = hit {
        j.raise(
            Class::Opaque,
            format!(
                "[shell.exec-arg.runner] `{name} {}` runs a program the build names",
                a.display
            ),
        );
    }
}

pub(super) fn go(j: &mut Judge, c: &Ctx<'_, '_, '_>, args: &[Word]) {
    runner_options(j, "go", args);
    if matches!(first_op(args), "build" | "test") {
        outputs::judge(j, c, args, &["-o"], "go output");
    }
    match first_op(args) {
        "env" if args.iter().any(|a| matches!(a.value.as_str(), "-w" | "-u")) => {
            j.raise(
                Class::ConfigChange,
                "[shell.config.go] `go env -w` changes the user's Go configuration",
            );
            if let Some(file) = known_dir(c, "GOENV", "{home}/.config/go/env") {
                j.write(&file, c.cmd.cwd, c.w.ctx, "`go env -w`");
            }
        }
        "version" | "env" | "list" | "doc" | "help" | "" => {}
        "fmt" => {
            j.t.rewrites_only = true;
            j.raise(
                Class::WorkspaceWrite,
                "[shell.build.go] `go fmt` rewrites sources",
            );
            super::formatters::go_fmt(j, c, args);
        }
        "build" | "test" | "vet" | "run" | "generate" | "tool" => {
            j.raise(Class::BuildTest, "[shell.build.go] go toolchain")
        }
        "install" | "get" | "mod" => {
            j.raise(
                Class::PackageInstall,
                "[shell.package.go] go fetches modules",
            );
            if first_op(args) == "install" {
                global_install(j, c, &["{home}/go/bin"], "go install");
            }
        }
        _ => j.raise(Class::Unknown, "[shell.unknown] go subcommand not known"),
    }
}

/// Linters and formatters that load no code from the project (no configuration written in a
/// programming language, no project plugins): they only read and rewrite files.
const NO_PROJECT_CODE: &[&str] = &["ruff", "isort", "shellcheck", "tsc", "rustfmt"];

pub(super) fn build_tool(j: &mut Judge, c: &Ctx<'_, '_, '_>, name: &str, args: &[Word]) {
    build_class(j, c, name, args);
    if crate::shell::tables::project::MAVEN.contains(&name) {
        let run = Run {
            program: name,
            sub: "",
            dirs: c.cmd.cwd,
        };
        project::judge(j, c.w.ctx, &run);
    }
    if RUSTUP_PROXIES.contains(&name) {
        let run = Run {
            program: name,
            sub: "",
            dirs: c.cmd.cwd,
        };
        rustup_proxy(j, c, &run, args);
    }
}

fn build_class(j: &mut Judge, c: &Ctx<'_, '_, '_>, name: &str, args: &[Word]) {
    let ctx = c.w.ctx;
    let cwd = c.cmd.cwd;
    if tables::version_only(name, args) {
        return;
    }
    if NO_PROJECT_CODE.contains(&name) {
        // `tsc` emits new files; the others rewrite the ones they are given.
        j.t.rewrites_only = name != "tsc";
        j.raise(
            Class::WorkspaceWrite,
            format!("[shell.build.lint] `{name}` lints or formats and runs no project code"),
        );
    } else {
        j.raise(
            Class::BuildTest,
            format!(
                "[shell.build] `{name}` builds, tests or lints, running project code or configuration"
            ),
        );
    }
    runner_options(j, name, args);
    program_options::compiler(j, name, args);
    for (i, a) in args.iter().enumerate() {
        let out = match a.value.strip_prefix("--output=") {
            Some(v) => Some(Word {
                value: v.to_string(),
                display: v.to_string(),
                ..a.clone()
            }),
            None if matches!(a.value.as_str(), "-o" | "--output" | "--out-dir") => {
                args.get(i + 1).cloned()
            }
            None => None,
        };
        if let Some(out) = out {
            j.output(&out, cwd, ctx, "compiler output");
        }
    }
    super::formatters::judge(j, c, name, args);
}

/// A task runner runs the project's recipes. Only help and version output skip the project
/// file: a dry run still evaluates it (`make -n` expands `$(shell ...)`, `rake -n` loads the
/// Rakefile), and `make -l` is a load limit, not a listing.
pub(super) fn task_runner(j: &mut Judge, name: &str, args: &[Word]) {
    let inert: &[&str] = if matches!(name, "make" | "gmake") {
        &["--help", "-v", "--version"]
    } else {
        &["--list", "-l", "--help"]
    };
    if has(args, inert) {
        return;
    }
    j.raise(
        Class::ScriptRun,
        format!("[shell.script.task] `{name}` runs project-defined recipes"),
    );
    if has(args, &["install", "uninstall"]) {
        j.raise(
            Class::OutsideWrite,
            format!("[shell.write.install] `{name} install` installs outside the workspace"),
        );
    }
}

/// `uv pip VERB` and `rustup toolchain|target|component list`: the verb that decides is the
/// second word.
fn pm_verb<'a>(n: &str, args: &'a [Word]) -> &'a str {
    let verb = first_op(args);
    let second = || {
        args.iter()
            .skip_while(|a| a.value != verb)
            .skip(1)
            .map(|a| a.value.as_str())
            .find(|v| !v.starts_with('-'))
            .unwrap_or("")
    };
    match (n, verb) {
        ("uv", "pip") => second(),
        ("rustup", "toolchain" | "target" | "component") if second() == "list" => "list",
        // Without a toolchain it prints the default one.
        ("rustup", "default") if second().is_empty() => "show",
        _ => verb,
    }
}

pub(super) fn package_manager(j: &mut Judge, c: &Ctx<'_, '_, '_>, n: &str, args: &[Word]) {
    let verb = pm_verb(n, args);
    if matches!(n, "pip" | "pip3") {
        if pm_config::config_change(j, c, "pip", args) {
            return;
        }
        if verb == "install" {
            let dirs = ["--target", "-t", "--prefix", "--root"];
            outputs::judge(j, c, args, &dirs, "pip install into");
            if has(args, &["--user"]) {
                global_install(
                    j,
                    c,
                    &["{home}/.local/lib", "{home}/.local/bin"],
                    "pip --user",
                );
            }
        }
    }
    let read = matches!(
        verb,
        "list"
            | "show"
            | "search"
            | "info"
            | "freeze"
            | "check"
            | "outdated"
            | "--version"
            | "version"
            | "help"
            | "config"
            | "env"
            | "which"
            | "tree"
    );
    let version = args.len() == 1 && has(args, &["--version", "-V", "--help"]);
    if read && !version {
        project_code(j, n, verb, args);
    }
    if read || version {
        return;
    }
    if matches!(n, "uv" | "poetry" | "pdm") && matches!(verb, "run") {
        let rest: Vec<Word> = args
            .iter()
            .skip_while(|a| a.value != "run")
            .skip(1)
            .cloned()
            .collect();
        if rest
            .first()
            .is_some_and(|r| matches!(r.value.as_str(), "pytest" | "mypy" | "ruff" | "black"))
        {
            j.raise(
                Class::BuildTest,
                format!("[shell.build] `{n} run` of a test tool"),
            );
            return;
        }
        j.raise(
            Class::ScriptRun,
            format!("[shell.script.task] `{n} run` runs a project command"),
        );
        return;
    }
    if n == "rustup" && !matches!(verb, "run" | "doc" | "completions" | "man") {
        // Toolchains, components and settings live in rustup's home.
        if let Some(home) = known_dir(c, "RUSTUP_HOME", "{home}/.rustup") {
            j.write(&home, c.cmd.cwd, c.w.ctx, "rustup");
        }
    }
    j.raise(
        Class::PackageInstall,
        format!("[shell.package] `{n} {verb}` installs or changes packages"),
    );
}

/// Where a tool keeps what `var` moves: the value the command is given (`VAR=... tool`), else
/// the one sbx was started with (which the command inherits), else `default` with `{home}`
/// replaced; `None` when the value given is not an absolute path known before running.
fn known_dir(c: &Ctx<'_, '_, '_>, var: &str, default: &str) -> Option<Word> {
    let for_command = c
        .cmd
        .assigns
        .iter()
        .filter_map(|a| Some((a, a.value.split_once('=')?)))
        .filter(|(_, (name, _))| *name == var)
        .map(|(a, (_, v))| (!a.unknown && !a.subst).then(|| v.to_string()))
        .next_back();
    let inherited = || std::env::var(var).ok().filter(|v| !v.is_empty());
    let home = c.w.ctx.workspace.home.to_string_lossy();
    let value = match for_command {
        Some(given) => given?,
        None => inherited().unwrap_or_else(|| default.replace("{home}", &home)),
    };
    value.starts_with('/').then(|| Word::literal(&value))
}

/// Package managers whose every command loads code from the project: Bundler evaluates the
/// Gemfile, which is Ruby; Composer loads the plugins installed in `vendor/` (unless
/// `--no-plugins`).
fn project_code(j: &mut Judge, n: &str, verb: &str, args: &[Word]) {
    let why = match n {
        "bundle" | "bundler" if !matches!(verb, "version" | "help" | "config") => {
            "evaluates the Gemfile, which is Ruby"
        }
        "composer" if !has(args, &["--no-plugins"]) => {
            "loads the plugins installed in the project's `vendor/`"
        }
        _ => return,
    };
    j.raise(
        Class::ScriptRun,
        format!("[shell.script.project] `{n} {verb}` {why}"),
    );
}

/// The first word of `args` that is not an option nor the value of one of `valued`.
pub(super) fn verb_after<'a>(args: &'a [Word], valued: &[&str]) -> &'a str {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let v = a.value.as_str();
        if !v.starts_with('-') || v == "-" {
            return v;
        }
        i += if valued.contains(&v) { 2 } else { 1 };
    }
    ""
}

/// A tool's leading options (see [`tables::LEADING_OPTIONS`]): every valued one, and the
/// directory it is told to run in, if any.
fn leading(tool: &str, args: &[Word]) -> (Vec<&'static str>, Option<Word>) {
    let Some((_, dirs, others)) = tables::LEADING_OPTIONS.iter().find(|(t, ..)| *t == tool) else {
        return (Vec::new(), None);
    };
    let valued: Vec<&'static str> = dirs.iter().chain(others.iter()).copied().collect();
    let mut dir = None;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let v = a.value.as_str();
        if !v.starts_with('-') || v == "-" || v == "--" {
            break;
        }
        // `--cwd=DIR`, and a short option's value attached (`-CDIR`, `-C=DIR`).
        let attached = dirs.iter().find_map(|d| {
            let rest = v.strip_prefix(d)?;
            rest.strip_prefix('=')
                .or_else(|| (d.len() == 2 && !rest.is_empty()).then_some(rest))
        });
        if let Some(value) = attached {
            dir = Some(outputs::attached_value(a, value));
        } else if dirs.contains(&v) {
            dir = args.get(i + 1).cloned();
        }
        i += if valued.contains(&v) { 2 } else { 1 };
    }
    (valued, dir)
}

/// Where a tool told to run in `dir` runs: that directory from each candidate one.
fn run_dirs(c: &Ctx<'_, '_, '_>, dir: Option<&Word>) -> crate::shell::walk::Cwd {
    match dir {
        Some(d) => super::dir_from(d, c.cmd.cwd, c.w.ctx),
        None => c.cmd.cwd.clone(),
    }
}

pub(super) fn cargo(j: &mut Judge, c: &Ctx<'_, '_, '_>, args: &[Word]) {
    let (_, dir) = leading("cargo", args);
    // `cargo -C DIR` builds there and may write its lock file even when it only inspects.
    if let Some(d) = dir
        .as_ref()
        .filter(|d| !program_options::within_workspace(d, c))
    {
        j.output(d, c.cmd.cwd, c.w.ctx, "cargo -C directory");
    }
    let dirs = run_dirs(c, dir.as_ref());
    let sub = cargo_subcommand(j, c, args);
    let run = Run {
        program: "cargo",
        // `cargo metadata --no-deps` resolves nothing, so it runs no compiler.
        sub: if sub == "metadata" && has(args, &["--no-deps"]) {
            ""
        } else {
            sub
        },
        dirs: &dirs,
    };
    rustup_proxy(j, c, &run, args);
}

/// A rustup proxy (`cargo`, `rustc`, `rustfmt`, ...): `+/path` runs the toolchain at that path,
/// and the project's toolchain file and cargo configuration can name programs it runs.
fn rustup_proxy(j: &mut Judge, c: &Ctx<'_, '_, '_>, run: &Run<'_>, args: &[Word]) {
    let name = run.program;
    if let Some(a) = args
        .first()
        .filter(|a| a.value.starts_with('+') && a.value.contains('/'))
    {
        j.raise(
            Class::Opaque,
            format!(
                "[shell.exec-arg.toolchain] `{name} {}` runs the toolchain in that directory",
                a.display
            ),
        );
    }
    project::judge(j, c.w.ctx, run);
}

/// Judge `cargo SUB`; returns SUB.
fn cargo_subcommand<'a>(j: &mut Judge, c: &Ctx<'_, '_, '_>, args: &'a [Word]) -> &'a str {
    runner_options(j, "cargo", args);
    let dirs = ["--target-dir", "--root", "--artifact-dir", "--out-dir"];
    outputs::judge(j, c, args, &dirs, "cargo output");
    let (valued, _) = leading("cargo", args);
    let toolchain = usize::from(args.first().is_some_and(|a| a.value.starts_with('+')));
    let sub = verb_after(args.get(toolchain..).unwrap_or(&[]), &valued);
    match sub {
        // Inspection that runs no project code: no build script, no proc macro.
        "tree" | "metadata" | "verify-project" | "locate-project" | "pkgid" | "version"
        | "help" | "" => {}
        "fmt" => {
            j.t.rewrites_only = true;
            j.raise(
                Class::WorkspaceWrite,
                "[shell.build.cargo] `cargo fmt` rewrites sources",
            );
            super::formatters::cargo_fmt(j, c, args);
        }
        "build" | "b" | "check" | "c" | "test" | "t" | "clippy" | "doc" | "d" | "bench" | "run"
        | "r" | "fix" | "nextest" | "miri" | "expand" | "llvm-cov" | "udeps" | "deny" | "audit"
        | "machete" => j.raise(
            Class::BuildTest,
            format!("[shell.build.cargo] `cargo {sub}` builds or runs project code"),
        ),
        "clean" => {
            j.raise(
                Class::WorkspaceWrite,
                "[shell.build.cargo] `cargo clean` removes build output",
            );
            for dir in clean_targets(c) {
                j.write(&dir, c.cmd.cwd, c.w.ctx, "cargo clean removes");
            }
        }
        "install" | "add" | "remove" | "rm" | "update" | "fetch" | "uninstall" | "binstall" => {
            j.raise(
                Class::PackageInstall,
                format!("[shell.package.cargo] `cargo {sub}`"),
            );
            let root =
                has(args, &["--root"]) || args.iter().any(|a| a.value.starts_with("--root="));
            if matches!(sub, "install" | "uninstall" | "binstall") && !root {
                global_install(j, c, &["{home}/.cargo/bin"], "cargo install");
            }
        }
        "publish" | "login" | "owner" | "yank" | "search" => {
            j.t.network = true;
            j.raise(
                Class::Network,
                format!("[shell.network] `cargo {sub}` talks to a registry"),
            )
        }
        "new" | "init" | "generate-lockfile" | "vendor" => j.raise(
            Class::WorkspaceWrite,
            format!("[shell.build.cargo] `cargo {sub}` writes in the project"),
        ),
        _ => j.raise(
            Class::Unknown,
            format!("[shell.unknown] `cargo {sub}` (may be an installed plugin)"),
        ),
    }
    sub
}

/// A global install writes where the tool keeps what it installs for the user or the system:
/// pip's user site (`~/.local`), `~/.cargo/bin`, `~/go/bin`, npm's global prefix (`/usr/local`
/// unless configured). Where a variable or a configuration moves them, they still lie outside
/// the workspace, which is what the plan judges.
fn global_install(j: &mut Judge, c: &Ctx<'_, '_, '_>, dirs: &[&str], what: &str) {
    let home = c.w.ctx.workspace.home.to_string_lossy();
    for d in dirs {
        let path = d.replace("{home}", &home);
        j.write(&Word::literal(&path), c.cmd.cwd, c.w.ctx, what);
    }
}

/// The variables that move cargo's target directory.
const TARGET_DIR_VARS: [&str; 2] = ["CARGO_TARGET_DIR", "CARGO_BUILD_TARGET_DIR"];

/// The directories `cargo clean` removes (`--target-dir` is judged with the outputs): one a
/// variable set on the line names (`CARGO_TARGET_DIR=~ cargo clean`, `env ...`, `export ...;`),
/// one the project's `.cargo/config.toml` names in `build.target-dir` (relative to the
/// directory holding `.cargo`), else `target`.
fn clean_targets(c: &Ctx<'_, '_, '_>) -> Vec<Word> {
    let set_on_line = c
        .cmd
        .assigns
        .iter()
        .chain(c.cmd.argv.iter())
        .filter_map(|a| a.value.split_once('='))
        .filter(|(name, _)| TARGET_DIR_VARS.contains(name))
        .map(|(_, v)| v.to_string());
    let known = TARGET_DIR_VARS
        .iter()
        .filter_map(|n| c.scope.vars.get(*n))
        .map(|v| v.value.clone());
    let mut out: Vec<Word> = set_on_line
        .chain(known)
        .map(|v| Word::literal(&v))
        .collect();
    for dir in project::reach(c.cmd.cwd.as_deref().unwrap_or(&[]), c.w.ctx) {
        for name in tables::project::CARGO_CONFIG {
            let text = project::read(&dir.join(name)).and_then(Result::ok);
            let table = text.and_then(|t| toml::from_str::<toml::Table>(&t).ok());
            let target = table.as_ref().and_then(|t| {
                t.get("build")?
                    .get("target-dir")?
                    .as_str()
                    .map(str::to_string)
            });
            if let Some(t) = target {
                out.push(Word::literal(&dir.join(t).to_string_lossy()));
            }
        }
    }
    if out.is_empty() {
        out.push(Word::literal("target"));
    }
    out
}

pub(super) fn js_pm(j: &mut Judge, c: &Ctx<'_, '_, '_>, name: &str, args: &[Word]) {
    js_subcommand(j, c, name, args);
    let dirs = run_dirs(c, leading(name, args).1.as_ref());
    let run = Run {
        program: name,
        sub: "",
        dirs: &dirs,
    };
    project::judge(j, c.w.ctx, &run);
}

/// Subcommands of npm, pnpm, yarn and bun that only show the project and its packages.
const JS_SHOWS: &[&str] = &[
    "--version",
    "-v",
    "ls",
    "list",
    "why",
    "outdated",
    "view",
    "info",
    "explain",
    "config",
    "help",
    "bin",
    "root",
    "prefix",
];

/// Whether `TOOL SUB ...` only shows the project: `audit fix` installs and `pkg set` rewrites
/// package.json, while `npm pkg get` and `yarn workspaces list` only show.
fn js_shows(sub: &str, args: &[Word]) -> bool {
    let second = args
        .iter()
        .skip_while(|a| a.value != sub)
        .skip(1)
        .find(|a| !a.value.starts_with('-'))
        .map_or("", |w| w.value.as_str());
    JS_SHOWS.contains(&sub)
        || (sub == "audit" && second != "fix")
        || (sub == "pkg" && second == "get")
        || (sub.is_empty() && has(args, &["--version", "-v", "--help", "-h"]))
        || (sub == "workspaces" && matches!(second, "list" | "info"))
}

fn js_subcommand(j: &mut Judge, c: &Ctx<'_, '_, '_>, name: &str, args: &[Word]) {
    let (valued, _) = leading(name, args);
    let sub = verb_after(args, &valued);
    program_options::js(j, name, sub, args);
    let shows = js_shows(sub, args);
    if !shows {
        let dirs = ["--prefix", "-C", "--dir", "--cwd"];
        outputs::judge(j, c, args, &dirs, "package directory");
    }
    if pm_config::config_change(j, c, name, args) {
        return;
    }
    pm_config::config_read(j, c, name, args);
    if shows {
        return;
    }
    match sub {
        "test" | "t" | "tst" => j.raise(
            Class::BuildTest,
            format!("[shell.build.js] `{name} {sub}` runs the package's test script"),
        ),
        "" if name == "yarn" || name == "pnpm" || name == "bun" => j.raise(
            Class::PackageInstall,
            format!("[shell.package.js] `{name}` installs dependencies"),
        ),
        "install" | "i" | "ci" | "add" | "update" | "upgrade" | "up" | "remove" | "rm"
        | "uninstall" | "link" | "dlx" | "exec" | "x" | "create" | "init" | "rebuild"
        | "dedupe" | "prune" => {
            j.raise(
                Class::PackageInstall,
                format!("[shell.package.js] `{name} {sub}`"),
            );
            let global = has(args, &["-g", "--global", "--location=global"]);
            if name == "npm" && global && !has(args, &["--prefix"]) {
                global_install(
                    j,
                    c,
                    &["/usr/local/lib/node_modules", "/usr/local/bin"],
                    "npm --global",
                );
            }
        }
        "publish" | "login" | "adduser" | "unpublish" | "deprecate" | "owner" | "token" => {
            j.t.network = true;
            j.raise(
                Class::Network,
                format!("[shell.network] `{name} {sub}` talks to a registry"),
            )
        }
        _ => j.raise(
            Class::ScriptRun,
            format!("[shell.script.task] `{name} {sub}` runs a package script"),
        ),
    }
}
