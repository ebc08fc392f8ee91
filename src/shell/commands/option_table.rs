//! Options, across programs, that name a file the program writes or reads, or a program it
//! runs, in every form the program accepts: `-o FILE`, `-oFILE` (a short option with its value
//! attached), `--output FILE` and `--output=FILE`. Outputs are judged as writes (so one
//! outside the writable set, or a protected path, meets the plan), inputs as reads (so a
//! secret named there is a secret read), and a program to run is a finding.

use crate::shell::Class;
use crate::shell::ShellContext;
use crate::shell::classify::Judge;
use crate::shell::commands::outputs;
use crate::shell::walk::Cwd;
use crate::shell::words::Word;

#[derive(Clone, Copy)]
enum Kind {
    /// A file the program writes.
    Output,
    /// A file the program reads (patterns, scripts, messages).
    Input,
    /// A program or shell command the program runs.
    Exec,
}

use Kind::{Exec, Input, Output};

/// Per program, its options of each kind.
const TABLE: &[(&str, Kind, &[&str])] = &[
    ("sort", Output, &["-o", "--output"]),
    ("shuf", Output, &["-o", "--output"]),
    ("iconv", Output, &["-o", "--output"]),
    ("less", Output, &["-o", "-O", "--log-file", "--LOG-FILE"]),
    // A lesskey file's `#env` section sets `LESSOPEN=|cmd %s`, a shell command less runs on
    // every file, and its `#command` section binds keys to shell escapes.
    (
        "less",
        Exec,
        &["-k", "--lesskey-file", "--lesskey-src", "--lesskey-content"],
    ),
    ("tree", Output, &["-o"]),
    ("info", Output, &["-o", "--output"]),
    ("strace", Output, &["-o", "--output"]),
    ("cp", Output, &["-t", "--target-directory"]),
    ("mv", Output, &["-t", "--target-directory"]),
    ("install", Output, &["-t", "--target-directory"]),
    ("ln", Output, &["-t", "--target-directory"]),
    ("unzip", Output, &["-d"]),
    ("ltrace", Output, &["-o", "--output"]),
    ("ss", Output, &["-D", "--diag"]),
    ("journalctl", Output, &["--cursor-file"]),
    ("ss", Input, &["-F", "--filter"]),
    // `file -m F` prints each line of a magic file it cannot parse; `-f F` names the files.
    ("file", Input, &["-m", "--magic-file", "-f", "--files-from"]),
    ("grep", Input, &["-f", "--file"]),
    ("egrep", Input, &["-f", "--file"]),
    ("fgrep", Input, &["-f", "--file"]),
    ("rg", Input, &["-f", "--file", "--ignore-file"]),
    ("sed", Input, &["-f", "--file"]),
    ("date", Input, &["-f", "--file", "-r", "--reference"]),
    ("hostname", Input, &["-F", "--file"]),
    ("awk", Input, &["-f", "--file"]),
    ("gawk", Input, &["-f", "--file"]),
    ("fd", Exec, &["-x", "--exec", "-X", "--exec-batch"]),
    ("fdfind", Exec, &["-x", "--exec", "-X", "--exec-batch"]),
    ("bat", Exec, &["--pager"]),
    ("batcat", Exec, &["--pager"]),
    ("delta", Exec, &["--pager"]),
    ("man", Exec, &["-H", "--html", "-P", "--pager"]),
    // The interpreter pip and uv run themselves under, or query, for any subcommand.
    ("pip", Exec, &["--python"]),
    ("pip3", Exec, &["--python"]),
    ("uv", Exec, &["--python", "-p"]),
    ("rsync", Exec, &["-e", "--rsh", "--rsync-path"]),
    ("zip", Exec, &["-TT", "--unzip-command"]),
    ("split", Exec, &["--filter"]),
    ("cpio", Exec, &["--rsh-command"]),
    ("script", Exec, &["-c", "--command"]),
    (
        "gdb",
        Exec,
        &["-ex", "--eval-command", "-x", "--command", "-ix", "-iex"],
    ),
    // binutils load a linker plugin (a shared object) to read LTO objects: its code runs.
    ("nm", Exec, &["--plugin"]),
    ("objdump", Exec, &["--plugin"]),
    ("ar", Exec, &["--plugin"]),
    ("ranlib", Exec, &["--plugin"]),
];

/// Programs whose arguments are commands they run.
const RUNS_ITS_ARGUMENTS: &[&str] = &["hyperfine", "compgen", "parallel"];

/// The only options with which `dc` runs no program: it prints its version or its help.
const DC_INFO: &[&str] = &["-V", "--version", "-h", "--help"];

/// `ssh -o` settings that run a local program.
const SSH_COMMANDS: &[&str] = &["proxycommand", "localcommand", "knownhostscommand"];

/// The values of `opts` in `args`, in every form getopt takes, with the option each belongs
/// to.
fn values<'o>(args: &[Word], opts: &[&'o str]) -> Vec<(&'o str, Word)> {
    let mut out = Vec::new();
    for o in opts {
        out.extend(
            outputs::getopt_values(args, &[o])
                .into_iter()
                .map(|v| (*o, v)),
        );
    }
    out
}

/// Judge `name`'s options from the table, and the programs that run their arguments.
pub(crate) fn judge(j: &mut Judge, name: &str, args: &[Word], cwd: &Cwd, ctx: &ShellContext) {
    let name = name.rsplit('/').next().unwrap_or(name);
    if RUNS_ITS_ARGUMENTS.contains(&name) && !args.is_empty() {
        j.raise(
            Class::Opaque,
            format!("[shell.exec-arg.{name}] `{name}` runs the commands it is given"),
        );
    }
    // GNU dc's `!` runs a shell command, in a program from `-e`, a file, or standard input
    // when no file is given (`dc <<< '!id'`, `printf '!cat f' | dc`).
    let info_only = !args.is_empty() && args.iter().all(|a| DC_INFO.contains(&a.value.as_str()));
    if name == "dc" && !info_only {
        j.raise(
            Class::Opaque,
            "[shell.exec-arg.dc] `dc` runs a program (from `-e`, a file or standard input), whose `!` runs shell commands",
        );
    }
    if matches!(name, "ssh" | "scp" | "sftp") {
        ssh_commands(j, name, args);
    }
    if name == "git" {
        git_message_files(j, args, cwd, ctx);
    }
    if matches!(name, "less" | "more") {
        pager_commands(j, name, args);
    }
    // `file -C -m MAGIC` compiles MAGIC into `MAGIC.mgc` in the working directory.
    let compiles = |a: &Word| {
        a.value == "--compile"
            || (a.value.starts_with('-') && !a.value.starts_with("--") && a.value.contains('C'))
    };
    if name == "file" && args.iter().any(compiles) {
        j.output(&Word::literal("."), cwd, ctx, "file -C output");
    }
    if name == "dd" {
        // `if=FILE` is read (`of=FILE`, the write, is judged with the destructive commands).
        for a in args {
            if let Some(f) = a.value.strip_prefix("if=") {
                j.read(&outputs::attached_value(a, f), cwd, ctx);
            }
        }
    }
    for (program, kind, opts) in TABLE {
        if *program != name {
            continue;
        }
        for (opt, value) in values(args, opts) {
            match kind {
                Output => j.output(&value, cwd, ctx, &format!("{name} {opt} output")),
                Input => j.read(&value, cwd, ctx),
                Exec => j.raise(
                    Class::Opaque,
                    format!("[shell.exec-arg.{name}] `{name} {opt}` runs a program it names"),
                ),
            }
        }
    }
}

/// `git commit -F FILE` (and `tag`, `notes`, `merge`): the message is read from FILE, and a
/// secret copied into a commit can then be pushed.
fn git_message_files(j: &mut Judge, args: &[Word], cwd: &Cwd, ctx: &ShellContext) {
    let sub = args
        .iter()
        .map(|a| a.value.as_str())
        .find(|v| !v.starts_with('-'));
    if matches!(sub, Some("commit" | "tag" | "notes" | "merge")) {
        for (_, value) in values(args, &["-F", "--file"]) {
            j.read(&value, cwd, ctx);
        }
    }
}

/// `ssh -o ProxyCommand=...` (and `LocalCommand`, `KnownHostsCommand`): a local program.
fn ssh_commands(j: &mut Judge, name: &str, args: &[Word]) {
    for (_, value) in values(args, &["-o"]) {
        let key = value.value.split(['=', ' ']).next().unwrap_or("");
        if SSH_COMMANDS.contains(&key.to_ascii_lowercase().as_str()) {
            j.raise(
                Class::Opaque,
                format!(
                    "[shell.exec-arg.{name}] `{name} -o {}` runs a local program",
                    value.display
                ),
            );
        }
    }
}

/// `less +CMD` (and `++CMD`) runs CMD when a file opens: `!` and `|` run a shell command, `v`
/// an editor, which can run anything.
fn pager_commands(j: &mut Judge, name: &str, args: &[Word]) {
    let runs = args.iter().find(|a| {
        let cmd = a
            .value
            .strip_prefix('+')
            .map(|c| c.strip_prefix('+').unwrap_or(c));
        cmd.is_some_and(|c| c.starts_with(['!', '|', 'v']))
    });
    if let Some(a) = runs {
        j.raise(
            Class::Opaque,
            format!(
                "[shell.exec-arg.{name}] `{name} {}` runs a command when a file opens",
                a.display
            ),
        );
    }
}
