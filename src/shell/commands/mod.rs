//! Rules for named commands: toolchains, package managers, writers,
//! destructive commands, network clients, privilege, and inspection.

mod daemons;
mod formatters;
mod interpreters;
pub(crate) mod option_table;
pub(crate) mod outputs;
mod pm_config;
mod program_options;
mod system;
mod toolchains;
mod trees;

use super::classify::Judge;
use super::exec_args::Ctx;
use super::git;
use super::walk::Cwd;
use super::words::Word;
use super::{Class, paths, tables};
use interpreters::interpreter;
use std::path::PathBuf;
use system::{containers, ip, openssl, services, socket_client, system_packages};
use toolchains::{build_tool, cargo, go, js_pm, package_manager, task_runner};
pub(crate) use trees::{
    acts_on_entries, follows_links, follows_root_links, listed_links, lists_paths, tree_roots,
};

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
    if let Some((_, flags)) = tables::INTERPRETERS.iter().find(|(n, _)| *n == name) {
        interpreter(j, c, name, flags, args);
        return;
    }
    if builtin(j, c, name, args, new_cwd) || file_writer(j, c, name, args) {
        return;
    }
    // A table: each command name to the function that judges it.
    match name {
        "git" => {
            git::classify(j, c, args);
            super::git_exec::transports(j, args);
        }
        "cargo" => cargo(j, c, args),
        "go" => go(j, c, args),
        "npm" | "pnpm" | "yarn" | "bun" => js_pm(j, c, name, args),
        "pytest" | "py.test" | "tox" | "nox" | "mypy" | "pyright" | "jest" | "vitest" | "mocha"
        | "tsc" | "eslint" | "prettier" | "ruff" | "black" | "isort" | "flake8" | "pylint"
        | "rustc" | "rustfmt" | "clippy-driver" | "gcc" | "g++" | "cc" | "c++" | "clang"
        | "clang++" | "javac" | "mvn" | "gradle" | "./gradlew" | "gradlew" | "dotnet" | "ctest"
        | "ninja" | "meson" | "cmake" | "swift" | "swiftc" | "zig" | "ghc" | "stack-test"
        | "shellcheck" | "golangci-lint" | "staticcheck" | "cargo-nextest" | "phpunit"
        | "rspec" | "nextest" | "java" => build_tool(j, c, name, args),
        "make" | "gmake" => {
            program_options::make(j, c, name, args);
            task_runner(j, name, args);
        }
        "just" | "task" | "rake" | "invoke" | "nx" | "turbo" | "bazel" | "buck" | "pants" => {
            task_runner(j, name, args)
        }
        "npx" | "pnpx" | "bunx" => {
            program_options::runs_package(j, name);
            package_manager(j, c, name, args);
        }
        "mktemp" => outputs::mktemp(j, c, args),
        n if tables::PACKAGE_MANAGERS.contains(&n) => package_manager(j, c, n, args),
        "cp" | "mv" | "ln" | "install" | "rsync" => super::writers::copy_like(j, c, name, args),
        n if tables::DESTRUCTIVE.contains(&n) => super::writers::destructive(j, c, n, args),
        "curl" | "wget" | "http" | "https" | "xh" | "aria2c" | "fetch" => {
            super::writers::fetcher(j, c, name, args)
        }
        "nc" | "ncat" | "netcat" | "socat" | "telnet" => socket_client(j, name, args),
        "systemctl" | "service" => services(j, name, args),
        "journalctl" | "lsof" | "ss" | "netstat" => system::inspectors(j, name, args),
        "ip" => ip(j, args),
        "dpkg" | "rpm" => system_packages(j, c, name, args),
        "docker" | "podman" | "nerdctl" | "buildctl" => containers(j, c, name, args),
        "openssl" => openssl(j, args),
        "yq" => {
            formatters::judge(j, c, name, args);
        }
        "gofmt" | "clang-format" => rewriter(j, c, name, args),
        n => system(j, n, args),
    }
}

/// `gofmt` and `clang-format` load no project code: they print, or rewrite their operands in
/// place with `-w` (`-i`), which inside the workspace is what they are for.
fn rewriter(j: &mut Judge, c: &Ctx<'_, '_, '_>, name: &str, args: &[Word]) {
    let flag = if name == "gofmt" { "-w" } else { "-i" };
    if has(args, &[flag]) {
        j.t.rewrites_only = true;
        j.raise(
            Class::WorkspaceWrite,
            format!("[shell.build.lint] `{name} {flag}` rewrites sources"),
        );
    }
    formatters::judge(j, c, name, args);
}

/// Shell built-ins: `cd` and its kin move the working directory, `echo` prints what a pipe
/// into a shell would run, `env` and `export` dump or change the environment.
fn builtin(
    j: &mut Judge,
    c: &Ctx<'_, '_, '_>,
    name: &str,
    args: &[Word],
    new_cwd: &mut Option<Cwd>,
) -> bool {
    match name {
        "cd" | "pushd" => *new_cwd = Some(cd_target(c, args)),
        "popd" => *new_cwd = Some(None),
        "echo" | "printf" => {
            // A word whose value is known prints that value (`~` expanded, as the shell does).
            if crate::shell::words::outputs_predicted()
                && args
                    .iter()
                    .all(|a| a.exact || (!a.unknown && !a.subst && !a.glob))
            {
                let text: Vec<&str> = args
                    .iter()
                    .map(|a| a.value.as_str())
                    .filter(|v| !matches!(*v, "-n" | "-e" | "-E"))
                    .collect();
                j.t.prints = Some(text.join(" "));
            }
        }
        "env" | "printenv" | "set" if args.is_empty() => j.t.dumps_env = true,
        // `compgen -e`/`-v` list names only; `ps e` (BSD style) prints every listed
        // process's environment, as `/proc/PID/environ` holds it.
        "ps" if args.first().is_some_and(|a| {
            let v = a.value.as_str();
            v.contains('e') && v.bytes().all(|b| b.is_ascii_alphabetic())
        }) =>
        {
            j.t.reads_secret = true;
            j.raise(
                Class::SecretRead,
                "[shell.secret.env] `ps e` prints the environment of each process it lists, secrets included",
            );
        }
        "export" | "declare" | "typeset" | "local" | "readonly" => declare(j, args),
        "hash" | "enable" => rebinds(j, name, args),
        "history" => history(j, c, args),
        _ => return false,
    }
    true
}

/// `hash -p PATH NAME` makes NAME run PATH for the rest of the line (`hash -p /bin/cp cat`, then
/// `cat` copies), and `enable -f LIB NAME` loads a shared object as a builtin; `enable NAME` and
/// `enable -n NAME` change whether NAME is the builtin or a program. Listing changes nothing.
fn rebinds(j: &mut Judge, name: &str, args: &[Word]) {
    let options = args
        .iter()
        .take_while(|a| a.value.starts_with('-') && a.value != "--");
    let has = |letters: &[char]| {
        options
            .clone()
            .any(|a| a.value.chars().skip(1).any(|c| letters.contains(&c)))
    };
    let why = match name {
        "hash" if has(&['p']) => "`hash -p` binds a command name to another program",
        "enable" if has(&['f']) => "`enable -f` loads a shared object as a builtin",
        "enable" if !operands(args).is_empty() => {
            "`enable` changes whether a name runs the builtin or a program"
        }
        _ => return,
    };
    j.raise(Class::Opaque, format!("[shell.rebind] {why}"));
}

/// `history -c`, `-d N` and `-s TEXT` erase or forge the shell's record of what ran; `-w` and
/// `-a` write the history file (the operand, else `~/.bash_history`), `-r` and `-n` read it.
/// Listing (`history`, `history 20`) changes nothing.
fn history(j: &mut Judge, c: &Ctx<'_, '_, '_>, args: &[Word]) {
    let letters: String = args
        .iter()
        .take_while(|a| a.value.starts_with('-') && a.value != "--")
        .flat_map(|a| a.value.chars().skip(1))
        .collect();
    if letters.contains(['c', 'd', 's']) {
        j.raise(
            Class::Destructive,
            "[shell.history] `history -c`/`-d`/`-s` erases or rewrites the shell's record",
        );
        return;
    }
    let (ctx, cwd) = (c.w.ctx, c.cmd.cwd);
    let file = operands(args).first().map_or_else(
        || Word {
            display: "~/.bash_history".to_string(),
            ..Word::literal(&ctx.workspace.home.join(".bash_history").to_string_lossy())
        },
        |w| (*w).clone(),
    );
    if letters.contains(['w', 'a']) {
        j.write(&file, cwd, ctx, "history file");
    } else if letters.contains(['r', 'n']) {
        j.read(&file, cwd, ctx);
    }
}

/// Where `cd` goes: the home without an operand, unknown for `-` or a computed one.
fn cd_target(c: &Ctx<'_, '_, '_>, args: &[Word]) -> Cwd {
    let ctx = c.w.ctx;
    // `pushd +N` / `-N` rotate the directory stack, which this analysis does not follow.
    let rotates = |t: &Word| {
        let n = t.value.trim_start_matches(['+', '-']);
        t.value.len() > n.len() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
    };
    let target = args
        .iter()
        .find(|a| !a.value.starts_with('-') || a.value == "-" || rotates(a));
    let physical = args.iter().any(|a| a.value == "-P");
    match target {
        None => Some(vec![ctx.workspace.home.clone()]),
        Some(t) if t.value == "-" || rotates(t) || (ctx.workspace.cdpath && searched(t)) => None,
        Some(t) if t.glob && !t.unknown && !t.subst => glob_target(t, c.cmd.cwd, ctx),
        Some(t) if physical => dir_from(t, c.cmd.cwd, ctx),
        Some(t) => logical_dir(t, c.cmd.cwd, ctx),
    }
}

/// `cd` to a glob (`cd ~/.cod*`): the one directory it matches from each working directory,
/// else not known (bash refuses more than one, and none leaves a name that is no directory).
fn glob_target(t: &Word, cwd: &Cwd, ctx: &crate::shell::ShellContext) -> Cwd {
    let pattern = t.pattern();
    let starts = if pattern.starts_with('/') {
        vec![PathBuf::from("/")]
    } else {
        cwd.clone()?
    };
    let mut out = Vec::new();
    for d in &starts {
        let matches = crate::shell::globs::expand(&pattern, d).ok()?;
        let [one] = matches.as_slice() else {
            return None;
        };
        let found = Word::literal(&one.to_string_lossy());
        out.extend(logical_dir(&found, &Some(vec![d.clone()]), ctx)?);
    }
    Some(out)
}

/// Whether the shell looks `t` up in `CDPATH` first where that is set for the command (see
/// `WorkspaceContext::cdpath`): a name that does not start with `/`, `./` or `../` (`cd .ssh`
/// goes to `~/.ssh` under `CDPATH=~`).
fn searched(t: &Word) -> bool {
    let v = t.value.as_str();
    let anchored = v.starts_with('/')
        || matches!(v, "." | "..")
        || v.starts_with("./")
        || v.starts_with("../");
    !anchored
}

/// Candidate directories past which the working directory is taken as not known.
const MAX_CWDS: usize = 8;

/// `cd DIR` as the shell does it by default (`-L`): `..` folds the name before it, not what a
/// link there leads to (`cd link/..` stays put). The shell's `$PWD` keeps the link's name
/// while the process is where it leads, so a directory reached through a link is a candidate
/// under both names: a later `cd ..` climbs from either.
fn logical_dir(t: &Word, cwd: &Cwd, ctx: &crate::shell::ShellContext) -> Cwd {
    if t.unknown || t.subst {
        return dir_from(t, cwd, ctx);
    }
    let starts: Vec<PathBuf> = if t.value.starts_with('/') {
        vec![PathBuf::from("/")]
    } else {
        cwd.clone()?
    };
    let mut out: Vec<PathBuf> = Vec::new();
    for s in starts {
        let named = paths::normalize(&s.join(&t.value));
        let real = paths::resolve(&named.to_string_lossy(), &ctx.cwd);
        for p in [real, named] {
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    (out.len() <= MAX_CWDS).then_some(out)
}

/// The directory a word names (`cd DIR`, `git -C DIR`), from each candidate working directory;
/// unknown when it is computed, or relative to a directory that is unknown.
pub(crate) fn dir_from(t: &Word, cwd: &Cwd, ctx: &crate::shell::ShellContext) -> Cwd {
    if t.unknown || t.subst {
        return toplevel(t, cwd);
    }
    if t.value.starts_with('/') {
        return Some(vec![paths::resolve(&t.value, &ctx.cwd)]);
    }
    let cs = cwd.as_deref().unwrap_or_default();
    if cs.is_empty() {
        None
    } else {
        Some(cs.iter().map(|d| paths::resolve(&t.value, d)).collect())
    }
}

/// `cd "$(git rev-parse --show-toplevel)"`: the work tree around each candidate directory, the
/// first one up with a `.git`; unknown past a directory with a `HEAD`, a repository whose work
/// tree its configuration names, or without any.
fn toplevel(t: &Word, cwd: &Cwd) -> Cwd {
    let forms = [
        "$(git rev-parse --show-toplevel)",
        "`git rev-parse --show-toplevel`",
    ];
    if !forms.contains(&t.raw.trim_matches('"')) {
        return None;
    }
    let top = |d: &PathBuf| {
        for a in d.ancestors() {
            if a.join(".git").symlink_metadata().is_ok() {
                return Some(a.to_path_buf());
            }
            if a.join("HEAD").symlink_metadata().is_ok() {
                return None;
            }
        }
        None
    };
    cwd.as_ref()?.iter().map(top).collect()
}

/// `export`, `declare` and the like: `-p` dumps the environment; a variable that changes
/// which code runs (`LD_PRELOAD=...`) is opaque.
fn declare(j: &mut Judge, args: &[Word]) {
    let names = args.iter().any(|a| !a.value.starts_with('-'));
    if args.is_empty() || (has(args, &["-p", "-x"]) && !names) {
        j.t.dumps_env = true;
    }
    let printing = has(args, &["-p"]);
    for a in args.iter().filter(|a| !a.value.starts_with('-')) {
        let (key, value) = a.value.split_once('=').unwrap_or((a.value.as_str(), ""));
        // A name written with an expansion (`{X,Y}=`, `$n=`) is only known when it runs; the
        // value may be anything.
        let raw_name = a.raw.split_once('=').map_or(a.raw.as_str(), |(n, _)| n);
        if raw_name.contains(['{', '$', '`', '*', '?', '[']) {
            j.raise(
                Class::Opaque,
                format!(
                    "[shell.env.exec] `{}` names a variable only known when it runs",
                    a.display
                ),
            );
            continue;
        }
        if printing && crate::environment::named_secret(key.as_bytes()) {
            crate::shell::classify::secret_variable(j, key);
        }
        // `export NAME` alone exports what an earlier step set it to (`read`, `printf -v`,
        // `${NAME:=...}`, a loop), which this analysis does not follow.
        let set_elsewhere = !a.value.contains('=');
        if let Some(why) = tables::exec_env(key, if set_elsewhere { "x" } else { value }) {
            j.raise(Class::Opaque, format!("[shell.env.exec] `{key}` {why}"));
        }
    }
}

/// Commands that write the files their operands or options name.
fn file_writer(j: &mut Judge, c: &Ctx<'_, '_, '_>, name: &str, args: &[Word]) -> bool {
    let (ctx, cwd) = (c.w.ctx, c.cmd.cwd);
    match name {
        "mkdir" | "touch" | "mkfifo" | "mknod" | "tee" => {
            for a in operands(args) {
                j.write(a, cwd, ctx, name);
            }
        }
        "sort" => {
            program_options::sort(j, args);
            sort_output(j, c, args);
        }
        "uniq" | "xxd" => {
            if let Some(out) = operands(args).get(1) {
                j.write(out, cwd, ctx, name);
            }
        }
        // The archive is written; the other operands are read (see `trees`).
        "zip" => match operands(args).first() {
            Some(archive) => j.write(archive, cwd, ctx, name),
            None => j.raise(
                Class::Opaque,
                "[shell.write.unknown] `zip` without a visible archive",
            ),
        },
        "patch" | "unzip" | "gunzip" | "gzip" | "bzip2" | "bunzip2" | "xz" | "unxz" | "zstd"
        | "split" | "csplit" | "7z" => unpacker(j, c, name, args),
        "cpio" | "pax" | "jar" | "ar" if extracts(name, args) => {
            j.content_write(&Word::literal("."), c.cmd.cwd, c.w.ctx, name);
        }
        _ => return false,
    }
    true
}

/// `sort -o FILE` and `--output=FILE`.
fn sort_output(j: &mut Judge, c: &Ctx<'_, '_, '_>, args: &[Word]) {
    let (ctx, cwd) = (c.w.ctx, c.cmd.cwd);
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

/// Compressors, archivers and `patch` write beside their operands, or in the working
/// directory without one; to standard output (`-c`) they write nothing.
fn unpacker(j: &mut Judge, c: &Ctx<'_, '_, '_>, name: &str, args: &[Word]) {
    let (ctx, cwd) = (c.w.ctx, c.cmd.cwd);
    let streams = matches!(
        name,
        "gunzip" | "gzip" | "xz" | "unxz" | "bzip2" | "bunzip2" | "zstd"
    );
    if (streams && short_flag(args, 'c')) || lists_only(name, args) {
        return;
    }
    let ops = operands(args);
    if ops.is_empty() {
        j.write(&Word::literal("."), cwd, ctx, name);
    }
    for a in &ops {
        j.write(a, cwd, ctx, name);
    }
    // An archive or a patch writes the names its content holds (under `-d DIR`).
    if matches!(name, "unzip" | "patch" | "7z") {
        let into = outputs::values(args, &["-d"], &["-d"]).pop();
        j.content_write(&into.unwrap_or_else(|| Word::literal(".")), cwd, ctx, name);
    }
}

/// Whether an archiver extracts what its archive holds into the working directory: `cpio -i`,
/// `pax -r`, `jar x`, `ar x`.
fn extracts(name: &str, args: &[Word]) -> bool {
    let key = first_op(args);
    match name {
        "cpio" => short_flag(args, 'i') || has(args, &["--extract"]),
        "pax" => short_flag(args, 'r'),
        "jar" => has(args, &["--extract"]) || short_flag(args, 'x') || key.starts_with('x'),
        "ar" => short_flag(args, 'x') || (key.contains('x') && !key.contains('/')),
        _ => false,
    }
}

/// Whether an archiver only lists or tests its archives, or prints their members (`unzip -l`,
/// `-t`, `-Z`, `-p`; `gzip -l`, `xz -t`; `7z l`): nothing is written.
fn lists_only(name: &str, args: &[Word]) -> bool {
    let long = |f: &[&str]| args.iter().any(|a| f.contains(&a.value.as_str()));
    match name {
        "unzip" => ['l', 't', 'Z', 'p', 'v']
            .iter()
            .any(|c| short_flag(args, *c)),
        "gzip" | "gunzip" | "xz" | "unxz" | "bzip2" | "bunzip2" | "zstd" => {
            short_flag(args, 'l') || short_flag(args, 't') || long(&["--list", "--test"])
        }
        "7z" => matches!(first_op(args), "l" | "t"),
        _ => false,
    }
}

/// Commands by their kind in the tables: formatting a device, the network, privileges,
/// editors, pagers that run commands, scheduling, inspection, and the unknown.
fn system(j: &mut Judge, n: &str, args: &[Word]) {
    match n {
        _ if n.starts_with("mkfs") => j.raise(
            Class::Malicious,
            format!("[shell.malicious.wipe] `{n}` formats a device"),
        ),
        _ if tables::NETWORK.contains(&n) => {
            j.t.network = true;
            j.raise(
                Class::Network,
                format!("[shell.network] `{n}` uses the network"),
            );
        }
        _ if tables::PRIVILEGE.contains(&n) => {
            if !(matches!(n, "mount" | "umount") && args.is_empty()) {
                j.raise(
                    Class::Privilege,
                    format!("[shell.privilege] `{n}` needs or changes privileges"),
                );
            }
        }
        _ if tables::EDITORS.contains(&n) => j.raise(
            Class::Opaque,
            format!("[shell.editor] `{n}` is interactive and can run commands"),
        ),
        "man" | "less" | "more" | "most" => pager(j, n, args),
        "crontab" | "at" | "batch" => j.raise(
            Class::ConfigChange,
            format!("[shell.persistence] `{n}` schedules commands"),
        ),
        "date" | "hostname" | "domainname" | "nisdomainname" | "ypdomainname" => {
            system::clock_or_name(j, n, args);
        }
        _ if tables::READ_ONLY.contains(&n) => {}
        _ => j.raise(
            Class::Unknown,
            format!("[shell.unknown] `{n}` is not a command this analysis knows"),
        ),
    }
}

/// A pager option that runs a command.
fn pager(j: &mut Judge, name: &str, args: &[Word]) {
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
    if name == "man"
        && let Some(page) = args.iter().find(|a| local_page(a))
    {
        j.raise(
            Class::Opaque,
            format!(
                "[shell.man.local] `man {}` formats a page file, whose requests (`.so`) include and print other files",
                page.display
            ),
        );
    }
}

/// A `man` operand that is a file rather than a page name (`./page.1`, `-l page.1`,
/// `--local-file`), or an option that names where pages come from (`-M DIR`).
fn local_page(a: &Word) -> bool {
    let v = a.value.as_str();
    let option = v.starts_with('-');
    (option && (v == "-M" || v.starts_with("--manpath") || v.starts_with("-M")))
        || (option && !v.starts_with("--") && v.contains('l'))
        || v.starts_with("--local-file")
        || (!option && v.contains('/'))
}
