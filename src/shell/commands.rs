//! Rules for named commands: toolchains, package managers, writers,
//! destructive commands, network clients, privilege, and inspection.

use super::classify::Judge;
use super::exec_args::{Ctx, inline_code};
use super::git;
use super::walk::Cwd;
use super::words::Word;
use super::{Class, paths, tables};

pub(crate) fn operands(args: &[Word]) -> Vec<&Word> {
    let mut out = Vec::new();
    let mut dashdash = false;
    for a in args {
        if !dashdash && a.value == "--" {
            dashdash = true;
            continue;
        }
        if dashdash || !a.value.starts_with('-') || a.value == "-" {
            out.push(a);
        }
    }
    out
}

pub(crate) fn has(args: &[Word], flags: &[&str]) -> bool {
    args.iter().any(|a| flags.contains(&a.value.as_str()))
}

pub(crate) fn short_flag(args: &[Word], ch: char) -> bool {
    args.iter().any(|a| {
        let v = a.value.as_str();
        v.starts_with('-') && !v.starts_with("--") && v.contains(ch)
    })
}

fn first_op(args: &[Word]) -> &str {
    args.iter()
        .map(|a| a.value.as_str())
        .find(|v| !v.starts_with('-'))
        .unwrap_or("")
}

pub(crate) fn classify_named(
    j: &mut Judge,
    c: &Ctx<'_, '_, '_>,
    name: &str,
    args: &[Word],
    new_cwd: &mut Option<Cwd>,
) {
    let ctx = c.w.ctx;
    let cwd = c.cmd.cwd;
    if let Some((_, flags)) = tables::INTERPRETERS.iter().find(|(n, _)| *n == name) {
        interpreter(j, c, name, flags, args);
        return;
    }
    match name {
        "cd" | "pushd" => {
            let target = args
                .iter()
                .find(|a| !a.value.starts_with('-') || a.value == "-");
            *new_cwd = Some(match target {
                None => Some(vec![ctx.home.clone()]),
                Some(t) if t.unknown || t.subst || t.value == "-" => None,
                Some(t) => {
                    let cs = cwd.clone().unwrap_or_default();
                    if cs.is_empty() && !t.value.starts_with('/') {
                        None
                    } else if t.value.starts_with('/') {
                        Some(vec![paths::resolve(&t.value, &ctx.cwd)])
                    } else {
                        Some(cs.iter().map(|d| paths::resolve(&t.value, d)).collect())
                    }
                }
            });
        }
        "popd" => *new_cwd = Some(None),
        "echo" | "printf" => {
            if args.iter().all(|a| a.exact) {
                let text: Vec<&str> = args
                    .iter()
                    .map(|a| a.value.as_str())
                    .filter(|v| !matches!(*v, "-n" | "-e" | "-E"))
                    .collect();
                j.t.prints = Some(text.join(" "));
            }
        }
        "env" | "printenv" | "set" if args.is_empty() => j.t.dumps_env = true,
        "export" | "declare" | "typeset" | "local" | "readonly" => {
            if has(args, &["-p"]) || args.is_empty() {
                j.t.dumps_env = true;
            }
            for a in args {
                let key = a.value.split('=').next().unwrap_or("");
                if a.value.contains('=') && tables::EXEC_ENV.contains(&key) {
                    j.raise(
                        Class::Opaque,
                        format!("[shell.env.exec] `{key}` changes which code runs"),
                    );
                }
            }
        }
        "git" => git::classify(j, c, args),
        "cargo" => cargo(j, args),
        "go" => match first_op(args) {
            "build" | "test" | "vet" | "fmt" | "run" | "version" | "env" | "list" | "doc"
            | "generate" | "tool" | "" => {
                j.raise(Class::BuildTest, "[shell.build.go] go toolchain")
            }
            "install" | "get" | "mod" => j.raise(
                Class::PackageInstall,
                "[shell.package.go] go fetches modules",
            ),
            _ => j.raise(Class::Unknown, "[shell.unknown] go subcommand not known"),
        },
        "npm" | "pnpm" | "yarn" | "bun" => js_pm(j, name, args),
        "pytest" | "py.test" | "tox" | "nox" | "mypy" | "pyright" | "jest" | "vitest" | "mocha"
        | "tsc" | "eslint" | "prettier" | "ruff" | "black" | "isort" | "flake8" | "pylint"
        | "rustc" | "rustfmt" | "clippy-driver" | "gcc" | "g++" | "cc" | "c++" | "clang"
        | "clang++" | "javac" | "mvn" | "gradle" | "./gradlew" | "gradlew" | "dotnet" | "ctest"
        | "ninja" | "meson" | "cmake" | "swift" | "swiftc" | "zig" | "ghc" | "stack-test"
        | "shellcheck" | "golangci-lint" | "staticcheck" | "cargo-nextest" | "phpunit"
        | "rspec" | "nextest" => {
            j.raise(
                Class::BuildTest,
                format!("[shell.build] `{name}` builds, tests or lints"),
            );
            for (i, a) in args.iter().enumerate() {
                if a.value == "-o" {
                    if let Some(out) = args.get(i + 1) {
                        j.write(out, cwd, ctx, "compiler output");
                    }
                }
            }
        }
        "make" | "gmake" | "just" | "task" | "rake" | "invoke" | "nx" | "turbo" | "bazel"
        | "buck" | "pants" => {
            if has(
                args,
                &["-n", "--dry-run", "--just-print", "--list", "-l", "--help"],
            ) {
                return;
            }
            j.raise(
                Class::ScriptRun,
                format!("[shell.script.task] `{name}` runs project-defined recipes"),
            );
        }
        n if tables::PACKAGE_MANAGERS.contains(&n) => {
            let verb = first_op(args);
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
            if read || (args.len() == 1 && has(args, &["--version", "-V", "--help"])) {
                return;
            }
            if matches!(n, "uv" | "poetry" | "pdm") && matches!(verb, "run") {
                let rest: Vec<Word> = args
                    .iter()
                    .skip_while(|a| a.value != "run")
                    .skip(1)
                    .cloned()
                    .collect();
                if rest.first().is_some_and(|r| {
                    matches!(r.value.as_str(), "pytest" | "mypy" | "ruff" | "black")
                }) {
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
            j.raise(
                Class::PackageInstall,
                format!("[shell.package] `{n} {verb}` installs or changes packages"),
            );
        }
        "cp" | "mv" | "ln" | "install" | "rsync" => super::writers::copy_like(j, c, name, args),
        "mkdir" | "touch" | "mkfifo" | "mknod" | "tee" => {
            for a in operands(args) {
                j.write(a, cwd, ctx, name);
            }
        }
        "sort" => {
            for (i, a) in args.iter().enumerate() {
                if a.value == "-o" || a.value == "--output" {
                    if let Some(f) = args.get(i + 1) {
                        j.write(f, cwd, ctx, "sort -o");
                    }
                } else if let Some(f) = a.value.strip_prefix("--output=") {
                    j.write(&Word::literal(f), cwd, ctx, "sort -o");
                }
            }
        }
        "uniq" | "xxd" => {
            if let Some(out) = operands(args).get(1) {
                j.write(out, cwd, ctx, name);
            }
        }
        "patch" | "unzip" | "gunzip" | "gzip" | "bzip2" | "bunzip2" | "xz" | "unxz" | "zstd"
        | "split" | "csplit" | "zip" | "7z" => {
            if matches!(
                name,
                "gunzip" | "gzip" | "xz" | "unxz" | "bzip2" | "bunzip2" | "zstd"
            ) && short_flag(args, 'c')
            {
                return;
            }
            let ops = operands(args);
            if ops.is_empty() {
                j.write(&Word::literal("."), cwd, ctx, name);
            }
            for a in ops {
                j.write(a, cwd, ctx, name);
            }
        }
        n if tables::DESTRUCTIVE.contains(&n) => super::writers::destructive(j, c, n, args),
        n if n.starts_with("mkfs") => {
            j.raise(
                Class::Malicious,
                format!("[shell.malicious.wipe] `{n}` formats a device"),
            );
        }
        "curl" | "wget" | "http" | "https" | "xh" | "aria2c" | "fetch" => {
            super::writers::fetcher(j, c, name, args)
        }
        "nc" | "ncat" | "netcat" | "socat" | "telnet" => {
            j.t.network = true;
            let exec = args.iter().any(|a| {
                let v = a.value.to_ascii_lowercase();
                matches!(
                    v.as_str(),
                    "-e" | "-c" | "--exec" | "--sh-exec" | "--lua-exec"
                ) || v.starts_with("exec:")
                    || v.starts_with("system:")
                    || v.contains(",exec:")
                    || v.starts_with("--exec=")
                    || v.starts_with("--sh-exec=")
            });
            if exec {
                j.raise(Class::Malicious, format!("[shell.malicious.reverse-shell] `{name}` attaches a program to a network connection"));
            }
            j.raise(
                Class::Network,
                format!("[shell.network] `{name}` opens network connections"),
            );
        }
        n if tables::NETWORK.contains(&n) => {
            j.t.network = true;
            j.raise(
                Class::Network,
                format!("[shell.network] `{n}` uses the network"),
            );
        }
        n if tables::PRIVILEGE.contains(&n) => {
            if matches!(n, "mount" | "umount") && args.is_empty() {
                return;
            }
            j.raise(
                Class::Privilege,
                format!("[shell.privilege] `{n}` needs or changes privileges"),
            );
        }
        n if tables::EDITORS.contains(&n) => {
            j.raise(
                Class::Opaque,
                format!("[shell.editor] `{n}` is interactive and can run commands"),
            );
        }
        "man" | "less" | "more" | "most" => {
            if args.iter().any(|a| {
                matches!(a.value.as_str(), "-P" | "--pager" | "-H" | "--html")
                    || a.value.starts_with("--pager=")
                    || a.value.starts_with("+!")
            }) {
                j.raise(
                    Class::Opaque,
                    format!("[shell.exec-arg.pager] `{name}` option runs a command"),
                );
            }
        }
        "systemctl" | "service" => {
            if !matches!(
                first_op(args),
                "status"
                    | "is-active"
                    | "is-enabled"
                    | "list-units"
                    | "list-unit-files"
                    | "show"
                    | "cat"
                    | ""
            ) {
                j.raise(
                    Class::Privilege,
                    format!("[shell.privilege] `{name}` changes services"),
                );
            }
        }
        "journalctl" | "lsof" | "ss" | "netstat" => {}
        "ip" => {
            if args.iter().any(|a| {
                matches!(
                    a.value.as_str(),
                    "add" | "del" | "delete" | "set" | "flush" | "change" | "replace"
                )
            }) {
                j.raise(
                    Class::Privilege,
                    "[shell.privilege] `ip` changes network settings",
                );
            }
        }
        "dpkg" | "rpm" => {
            if !args.iter().all(|a| {
                matches!(
                    a.value.as_str(),
                    "-l" | "-L"
                        | "-s"
                        | "-S"
                        | "-q"
                        | "-qa"
                        | "-qi"
                        | "-ql"
                        | "--list"
                        | "--status"
                        | "--version"
                ) || !a.value.starts_with('-')
            }) {
                j.raise(
                    Class::PackageInstall,
                    format!("[shell.package] `{name}` changes packages"),
                );
            }
        }
        "docker" | "podman" | "nerdctl" => {
            if !matches!(
                first_op(args),
                "ps" | "images" | "logs" | "inspect" | "version" | "info" | "stats" | "top"
            ) {
                j.raise(
                    Class::Privilege,
                    format!("[shell.privilege.container] `{name}` runs or changes containers"),
                );
            }
        }
        "openssl" => {
            if args
                .iter()
                .any(|a| a.value == "s_client" || a.value == "s_server")
            {
                j.t.network = true;
                j.raise(
                    Class::Network,
                    "[shell.network] `openssl s_client` connects to a host",
                );
            } else {
                j.raise(
                    Class::Unknown,
                    "[shell.unknown] `openssl` subcommand not analysed",
                );
            }
        }
        "crontab" | "at" | "batch" => j.raise(
            Class::ConfigChange,
            format!("[shell.persistence] `{name}` schedules commands"),
        ),
        n if tables::READ_ONLY.contains(&n) => {}
        n => j.raise(
            Class::Unknown,
            format!("[shell.unknown] `{n}` is not a command this analysis knows"),
        ),
    }
}

fn interpreter(j: &mut Judge, c: &Ctx<'_, '_, '_>, name: &str, flags: &[&str], args: &[Word]) {
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
            let rest = args.get(i + 2..).unwrap_or(&[]);
            match module {
                "pytest" | "unittest" | "mypy" | "ruff" | "black" | "flake8" | "pylint"
                | "doctest" | "compileall" | "py_compile" | "tox" | "nox" => j.raise(
                    Class::BuildTest,
                    format!("[shell.build] `{name} -m {module}`"),
                ),
                "pip" | "ensurepip" => {
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
                "json.tool" | "tabnanny" | "pydoc" | "site" | "platform" | "sysconfig" => {}
                "http.server" | "smtpd" | "ftplib" => {
                    j.t.network = true;
                    j.raise(
                        Class::Network,
                        format!("[shell.network] `{name} -m {module}` serves on the network"),
                    );
                }
                _ => j.raise(
                    Class::ScriptRun,
                    format!("[shell.script] `{name} -m {module}` runs a module"),
                ),
            }
            return;
        }
        if matches!(v, "--version" | "-V" | "--help" | "-h") {
            return;
        }
        if name == "deno" || name == "bun" {
            match v {
                "test" | "check" | "lint" | "fmt" | "bench" | "build" => {
                    j.raise(Class::BuildTest, format!("[shell.build] `{name} {v}`"));
                    return;
                }
                "install" | "add" | "i" => {
                    j.raise(
                        Class::PackageInstall,
                        format!("[shell.package] `{name} {v}`"),
                    );
                    return;
                }
                _ => {}
            }
        }
        if name.starts_with("node") && v == "--test" {
            j.raise(Class::BuildTest, "[shell.build] `node --test`");
            return;
        }
        if v.starts_with('-') && v.len() > 1 {
            i += 1;
            continue;
        }
        if v == "-" {
            break;
        }
        if a.subst {
            super::classify::code_from_substitution(j, c.w, c.cmd, &format!("{name} <(...)"));
            return;
        }
        j.raise(
            Class::ScriptRun,
            format!(
                "[shell.script] `{name} {}` runs a program whose content is not analysed",
                a.display
            ),
        );
        return;
    }
    match c.stdin {
        super::classify::Stdin::Text(code) => inline_code(j, name, code),
        super::classify::Stdin::File => j.raise(
            Class::ScriptRun,
            format!("[shell.script] `{name}` runs a file from its input"),
        ),
        super::classify::Stdin::Inherited => {
            j.t.stdin_code = true;
            j.raise(
                Class::Opaque,
                format!("[shell.stdin-code] `{name}` runs whatever arrives on its input"),
            );
        }
    }
}

fn cargo(j: &mut Judge, args: &[Word]) {
    let sub = args
        .iter()
        .map(|a| a.value.as_str())
        .find(|v| !v.starts_with('-') && !v.starts_with('+'))
        .unwrap_or("");
    match sub {
        "build" | "b" | "check" | "c" | "test" | "t" | "clippy" | "doc" | "d" | "bench" | "run"
        | "r" | "fmt" | "tree" | "metadata" | "nextest" | "miri" | "expand" | "llvm-cov"
        | "udeps" | "deny" | "audit" | "machete" | "verify-project" | "locate-project"
        | "pkgid" | "version" | "help" | "" => j.raise(
            Class::BuildTest,
            format!("[shell.build.cargo] `cargo {sub}`"),
        ),
        "clean" => j.raise(
            Class::WorkspaceWrite,
            "[shell.build.cargo] `cargo clean` removes build output",
        ),
        "install" | "add" | "remove" | "rm" | "update" | "fetch" | "uninstall" | "binstall" => j
            .raise(
                Class::PackageInstall,
                format!("[shell.package.cargo] `cargo {sub}`"),
            ),
        "publish" | "login" | "owner" | "yank" | "search" => {
            j.t.network = true;
            j.raise(
                Class::Network,
                format!("[shell.network] `cargo {sub}` talks to a registry"),
            )
        }
        "new" | "init" | "generate-lockfile" | "vendor" | "fix" => j.raise(
            Class::WorkspaceWrite,
            format!("[shell.build.cargo] `cargo {sub}` writes in the project"),
        ),
        _ => j.raise(
            Class::Unknown,
            format!("[shell.unknown] `cargo {sub}` (may be an installed plugin)"),
        ),
    }
}

fn js_pm(j: &mut Judge, name: &str, args: &[Word]) {
    let sub = first_op(args);
    match sub {
        "test" | "t" | "tst" | "--version" | "-v" | "ls" | "list" | "why" | "audit"
        | "outdated" | "view" | "info" | "explain" | "config" | "help" | "bin" | "root"
        | "prefix" => j.raise(Class::BuildTest, format!("[shell.build.js] `{name} {sub}`")),
        "" if name == "yarn" || name == "pnpm" || name == "bun" => j.raise(
            Class::PackageInstall,
            format!("[shell.package.js] `{name}` installs dependencies"),
        ),
        "install" | "i" | "ci" | "add" | "update" | "upgrade" | "up" | "remove" | "rm"
        | "uninstall" | "link" | "dlx" | "exec" | "x" | "create" | "init" | "rebuild"
        | "dedupe" | "prune" => j.raise(
            Class::PackageInstall,
            format!("[shell.package.js] `{name} {sub}`"),
        ),
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
