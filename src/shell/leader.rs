//! Find the leader of a simple command: skip wrappers (`env`, `nice`,
//! `timeout`, `sudo`, ...) recursively, remembering what they imply.

use super::Class;
use super::commands::outputs::attached_value;
use super::words::Word;

/// What the wrappers in front of the leader mean.
#[derive(Debug, Default)]
pub(crate) struct Unwrapped {
    /// Index of the leader in argv; `argv.len()` when there is none.
    pub leader: usize,
    /// The privilege wrapper, if any (`sudo`, `doas`, `pkexec`, `su`, ...).
    pub privilege: Option<String>,
    /// `xargs` appends arguments that are not visible here.
    pub xargs: bool,
    /// `xargs -I R` (`-i`, `--replace`): the text each input line replaces.
    pub replace: Option<String>,
    /// Code strings that the wrappers run through a shell (`su -c`, `watch`, `flock -c`).
    pub shell_code: Vec<(Word, &'static str)>,
    /// Findings on the wrappers themselves (class, reason).
    pub notes: Vec<(Class, String)>,
    /// Files the wrappers write (`time -o`, `flock FILE`).
    pub writes: Vec<Word>,
    /// Files the wrappers read (`xargs -a FILE`).
    pub reads: Vec<Word>,
    /// A wrapper that lists the environment and runs nothing (`env` alone).
    pub dumps_env: bool,
}

/// Whether a wrapper's option takes a value.
fn takes_value(wrapper: &str, opt: &str) -> bool {
    value_options(wrapper).contains(&opt)
}

/// The options that take a value, per wrapper, short and long.
fn value_options(wrapper: &str) -> &'static [&'static str] {
    match wrapper {
        "env" => &["-u", "--unset", "-C", "--chdir", "-S", "--split-string"],
        "nice" => &["-n", "--adjustment"],
        "timeout" => &["-s", "--signal", "-k", "--kill-after"],
        "time" => &["-f", "--format", "-o", "--output"],
        "stdbuf" => &["-i", "-o", "-e", "--input", "--output", "--error"],
        "exec" => &["-a"],
        "xargs" => &[
            "-I",
            "-L",
            "-n",
            "-P",
            "-s",
            "-d",
            "-E",
            "-a",
            "--max-args",
            "--max-procs",
            "--max-lines",
            "--delimiter",
            "--arg-file",
            "--eof",
            "--replace",
            "--max-chars",
            "--process-slot-var",
        ],
        "setsid" => &[],
        "ionice" => &["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"],
        "flock" => &[
            "-w",
            "--timeout",
            "-E",
            "--conflict-exit-code",
            "-c",
            "--command",
        ],
        "watch" => &["-n", "--interval", "-d", "-q", "--equexit"],
        "sudo" => &[
            "-u",
            "-g",
            "-h",
            "-p",
            "-C",
            "-D",
            "-r",
            "-t",
            "-U",
            "-T",
            "--user",
            "--group",
            "--host",
            "--prompt",
            "--chdir",
            "--role",
            "--type",
            "--other-user",
            "--close-from",
            "--command-timeout",
        ],
        "doas" => &["-u", "-C"],
        "pkexec" => &["--user"],
        "runuser" | "su" => &[
            "-u",
            "-g",
            "-G",
            "-s",
            "-c",
            "--user",
            "--group",
            "--shell",
            "--command",
            "-w",
        ],
        "chrt" => &[],
        "taskset" => &["-p", "--pid"],
        _ => &[],
    }
}

const WRAPPERS: &[&str] = &[
    "env",
    "nice",
    "nohup",
    "timeout",
    "time",
    "stdbuf",
    "command",
    "builtin",
    "exec",
    "xargs",
    "setsid",
    "ionice",
    "flock",
    "watch",
    "sudo",
    "doas",
    "pkexec",
    "su",
    "runuser",
    "chrt",
    "taskset",
    "unbuffer",
    "caffeinate",
    "catchsegv",
    "torsocks",
    "proxychains",
    "proxychains4",
];

fn base(w: &Word) -> &str {
    let v = w.value.as_str();
    v.rsplit('/').next().unwrap_or(v)
}

pub(crate) fn unwrap(argv: &[Word]) -> Unwrapped {
    let mut u = Unwrapped::default();
    let mut i = 0;
    // Each pass consumes at least one word, so this ends.
    while let Some(name) = argv.get(i).and_then(wrapper) {
        i += 1;
        note(&mut u, name);
        let Some(positional_first) = options(&mut u, name, argv, &mut i) else {
            return finish(u, argv);
        };
        if !positionals(&mut u, name, argv, &mut i, positional_first) {
            return finish(u, argv);
        }
        if name == "env" && argv.get(i).is_none() {
            u.dumps_env = true;
        }
    }
    u.leader = i.min(argv.len());
    u
}

/// The wrapper a word names, if it is one: a literal name from the list, by itself or under
/// `/usr/` or `/bin/`.
fn wrapper(w: &Word) -> Option<&str> {
    let name = base(w);
    let elsewhere =
        w.value.contains('/') && !w.value.starts_with("/usr/") && !w.value.starts_with("/bin/");
    (w.exact && WRAPPERS.contains(&name) && !elsewhere).then_some(name)
}

/// What a wrapper says by its name alone: privilege, `xargs`, a proxy.
fn note(u: &mut Unwrapped, name: &str) {
    if matches!(name, "sudo" | "doas" | "pkexec" | "su" | "runuser") {
        u.privilege = Some(name.to_string());
    }
    if name == "xargs" {
        u.xargs = true;
    }
    if matches!(name, "torsocks" | "proxychains" | "proxychains4") {
        u.notes.push((
            Class::Network,
            format!("[shell.network.proxy] `{name}` routes traffic through a proxy"),
        ));
    }
}

/// The wrapper's options, from `argv[*i]`. `None` when the wrapper ends the command line
/// (`su -c CODE`, `command -v`); otherwise whether `watch -x` runs its arguments directly.
fn options(u: &mut Unwrapped, name: &str, argv: &[Word], i: &mut usize) -> Option<Option<usize>> {
    let mut positional_first: Option<usize> = None;
    while let Some(a) = argv.get(*i) {
        let v = a.value.as_str();
        if v == "--" {
            *i += 1;
            break;
        }
        if name == "env" && v.contains('=') && !v.starts_with('-') {
            env_assignment(u, a);
            *i += 1;
            continue;
        }
        if !v.starts_with('-') || v == "-" {
            if name == "su" && v == "-" {
                *i += 1;
                continue;
            }
            break;
        }
        let parts = split_options(name, v);
        let needs_next = parts
            .last()
            .is_some_and(|(o, val)| val.is_none() && takes_value(name, o));
        for (opt, value) in &parts {
            let own_value = value.map(|val| attached_value(a, val));
            let next = if value.is_some() {
                own_value.as_ref()
            } else {
                argv.get(*i + 1)
            };
            match option(u, name, opt, next) {
                Opt::Ends => {
                    u.leader = argv.len();
                    return None;
                }
                Opt::Direct => positional_first = Some(0),
                Opt::Plain => {}
            }
        }
        *i += if needs_next { 2 } else { 1 };
    }
    Some(positional_first)
}

/// The options one word holds, as getopt reads them, each with the value it carries in the
/// word. `--name=VALUE` or `--name`, where a unique prefix of a long option that takes a
/// value stands for it (`--out=FILE` is `--output`); or a bundle of short options, where the
/// first that takes a value takes the rest of the word (`-iSCMD`, `-ao FILE`).
fn split_options<'v>(wrapper: &str, v: &'v str) -> Vec<(String, Option<&'v str>)> {
    if let Some(long) = v.strip_prefix("--") {
        let (o, val) = match long.split_once('=') {
            Some((o, val)) => (o, Some(val)),
            None => (long, None),
        };
        return vec![(long_option(wrapper, o), val)];
    }
    let mut out = Vec::new();
    for (at, c) in v.char_indices().skip(1) {
        let o = format!("-{c}");
        if takes_value(wrapper, &o) {
            let rest = &v[at + c.len_utf8()..];
            out.push((o, (!rest.is_empty()).then_some(rest)));
            break;
        }
        out.push((o, None));
    }
    out
}

/// `--NAME`, or the long option that takes a value which `NAME` abbreviates, when it
/// abbreviates only one.
fn long_option(wrapper: &str, name: &str) -> String {
    let full = format!("--{name}");
    let known = value_options(wrapper)
        .iter()
        .filter(|o| o.starts_with("--") && o.starts_with(&full));
    match (takes_value(wrapper, &full), known.clone().count()) {
        (false, 1) => known.copied().next().unwrap_or_default().to_string(),
        _ => full,
    }
}

/// `env NAME=VALUE`: a variable that changes which code runs is opaque, and so is a value that
/// holds code a child shell may evaluate (see `evaluated::passes_code`).
fn env_assignment(u: &mut Unwrapped, a: &Word) {
    let (key, value) = a.value.split_once('=').unwrap_or((&a.value, ""));
    if let Some(why) = super::tables::exec_env(key, value) {
        u.notes
            .push((Class::Opaque, format!("[shell.env.exec] `{key}` {why}")));
    }
    if super::evaluated::passes_code(a, value) {
        u.notes
            .push((Class::Opaque, super::evaluated::passed_reason(key)));
    }
}

/// What one option of a wrapper does.
enum Opt {
    Plain,
    /// The rest of the command line belongs to the wrapper.
    Ends,
    /// `watch -x`: the arguments run directly, not through `sh -c`.
    Direct,
}

/// One wrapper option `opt`; `next` is its value: the rest of its word (`--output=FILE`,
/// `-oFILE`), or the word after it.
fn option(u: &mut Unwrapped, name: &str, opt: &str, next: Option<&Word>) -> Opt {
    match (name, opt) {
        ("env", "-S" | "--split-string") | ("env", "-C" | "--chdir") => u.notes.push((
            Class::Opaque,
            format!("[shell.wrapper.env] `env {opt}` changes how the command is found"),
        )),
        // `command -v NAME` only looks the name up.
        ("command", "-v" | "-V") => return Opt::Ends,
        ("xargs", "-a" | "--arg-file") => u.reads.extend(next.cloned()),
        ("xargs", "-I" | "--replace") => {
            u.replace = Some(next.map_or_else(|| "{}".to_string(), |w| w.value.clone()));
        }
        ("xargs", "-i") => u.replace = Some("{}".to_string()),
        ("time", "-o" | "--output") => u.writes.extend(next.cloned()),
        ("su" | "runuser", "-c" | "--command") | ("flock", "-c" | "--command") => {
            let via = if name == "flock" { "flock -c" } else { "su -c" };
            u.shell_code.extend(next.map(|code| (code.clone(), via)));
            return Opt::Ends;
        }
        ("sudo", "-s" | "-i" | "--shell" | "--login") | ("doas", "-s") => u.notes.push((
            Class::Privilege,
            format!("[shell.privilege.shell] `{name} {opt}` starts a root shell"),
        )),
        ("sudo", "-e" | "--edit") => u
            .notes
            .push((Class::Privilege, "[shell.privilege.edit] sudoedit".into())),
        ("watch", "-x" | "--exec") => return Opt::Direct,
        ("ionice", "-p" | "-P" | "-u") | ("taskset", "-p" | "--pid") => u.notes.push((
            Class::Destructive,
            format!("[shell.wrapper.pid] `{name} {opt}` changes another process"),
        )),
        _ => {}
    }
    Opt::Plain
}

/// Positional arguments that belong to the wrapper, from `argv[*i]`. `false` when the
/// wrapper ends the command line (`flock FILE -c CODE`, `watch CMD...`, `su USER`).
fn positionals(
    u: &mut Unwrapped,
    name: &str,
    argv: &[Word],
    i: &mut usize,
    positional_first: Option<usize>,
) -> bool {
    match name {
        "timeout" | "chrt" | "taskset" => *i += 1,
        "flock" => {
            u.writes.extend(argv.get(*i).cloned());
            *i += 1;
            if argv
                .get(*i)
                .is_some_and(|a| a.value == "-c" || a.value == "--command")
            {
                u.shell_code
                    .extend(argv.get(*i + 1).map(|code| (code.clone(), "flock -c")));
                u.leader = argv.len();
                return false;
            }
        }
        "watch" if positional_first.is_none() => {
            // watch joins its arguments and runs them with `sh -c`.
            let rest = argv.get(*i..).unwrap_or(&[]);
            let text: Vec<&str> = rest.iter().map(|w| w.value.as_str()).collect();
            let mut code = Word::literal(&text.join(" "));
            code.exact = rest.iter().all(|w| w.exact);
            u.shell_code.push((code, "watch"));
            u.leader = argv.len();
            return false;
        }
        "su" => {
            // `su [user]` without -c: an interactive root shell.
            u.notes.push((
                Class::Privilege,
                "[shell.privilege.su] `su` starts a shell as another user".into(),
            ));
            u.leader = argv.len();
            return false;
        }
        _ => {}
    }
    true
}

fn finish(mut u: Unwrapped, argv: &[Word]) -> Unwrapped {
    u.leader = u.leader.min(argv.len());
    u
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(s: &str) -> Vec<Word> {
        s.split(' ').map(Word::literal).collect()
    }

    #[test]
    fn nested_wrappers() {
        let argv = lit("env -u X A=1 nice -n 5 timeout -s KILL 10 stdbuf -oL git status");
        let u = unwrap(&argv);
        assert_eq!(argv.get(u.leader).map(|w| w.value.as_str()), Some("git"));
        assert!(u.privilege.is_none());
    }

    #[test]
    fn sudo_and_xargs() {
        let argv = lit("sudo -u root xargs -0 -n 1 rm");
        let u = unwrap(&argv);
        assert_eq!(argv.get(u.leader).map(|w| w.value.as_str()), Some("rm"));
        assert_eq!(u.privilege.as_deref(), Some("sudo"));
        assert!(u.xargs);
    }

    #[test]
    fn su_c_is_shell_code() {
        let argv = lit("su -c id root");
        let u = unwrap(&argv);
        assert_eq!(u.leader, argv.len());
        assert_eq!(u.shell_code.first().map(|c| c.0.value.as_str()), Some("id"));
    }
}
