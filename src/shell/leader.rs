//! Find the leader of a simple command: skip wrappers (`env`, `nice`,
//! `timeout`, `sudo`, ...) recursively, remembering what they imply.

use super::Class;
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
    /// Code strings that the wrappers run through a shell (`su -c`, `watch`, `flock -c`).
    pub shell_code: Vec<(Word, &'static str)>,
    /// Findings on the wrappers themselves (class, reason).
    pub notes: Vec<(Class, String)>,
    /// Files the wrappers write (`time -o`, `flock FILE`).
    pub writes: Vec<Word>,
    /// A wrapper that lists the environment and runs nothing (`env` alone).
    pub dumps_env: bool,
}

/// Options that take a value, per wrapper (short forms; long forms use `=`
/// or are listed with their leading dashes).
fn takes_value(wrapper: &str, opt: &str) -> bool {
    let list: &[&str] = match wrapper {
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
        "flock" => &["-w", "--timeout", "-E", "--conflict-exit-code"],
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
        "runuser" | "su" => &["-u", "-g", "-G", "-s", "--user", "--group", "--shell", "-w"],
        "chrt" => &[],
        "taskset" => &["-p", "--pid"],
        _ => &[],
    };
    list.contains(&opt)
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
    while let Some(w) = argv.get(i) {
        if !w.exact {
            break;
        }
        let name = base(w);
        if !WRAPPERS.contains(&name) {
            break;
        }
        if w.value.contains('/') && !w.value.starts_with("/usr/") && !w.value.starts_with("/bin/") {
            break;
        }
        i += 1;
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
        // Options.
        let mut positional_first: Option<usize> = None;
        while let Some(a) = argv.get(i) {
            let v = a.value.as_str();
            if v == "--" {
                i += 1;
                break;
            }
            if name == "env" && v.contains('=') && !v.starts_with('-') {
                let key = v.split('=').next().unwrap_or("");
                if super::tables::EXEC_ENV.contains(&key) {
                    u.notes.push((
                        Class::Opaque,
                        format!("[shell.env.exec] `{key}` changes which code runs"),
                    ));
                }
                i += 1;
                continue;
            }
            if !v.starts_with('-') || v == "-" {
                if name == "su" && v == "-" {
                    i += 1;
                    continue;
                }
                break;
            }
            let (opt, attached) = match v.split_once('=') {
                Some((o, _)) => (o, true),
                None => (v, false),
            };
            match (name, opt) {
                ("env", "-S" | "--split-string") | ("env", "-C" | "--chdir") => {
                    u.notes.push((
                        Class::Opaque,
                        format!("[shell.wrapper.env] `env {opt}` changes how the command is found"),
                    ));
                }
                ("command", "-v" | "-V") | ("xargs", "-a" | "--arg-file") => {}
                ("time", "-o" | "--output") => {
                    if let Some(f) = argv.get(i + 1).filter(|_| !attached) {
                        u.writes.push(f.clone());
                    }
                }
                ("su" | "runuser", "-c" | "--command") | ("flock", "-c" | "--command") => {
                    if let Some(code) = argv.get(i + 1) {
                        u.shell_code.push((
                            code.clone(),
                            if name == "flock" { "flock -c" } else { "su -c" },
                        ));
                    }
                    u.leader = argv.len();
                    return finish(u, argv);
                }
                ("sudo", "-s" | "-i" | "--shell" | "--login") | ("doas", "-s") => {
                    u.notes.push((
                        Class::Privilege,
                        format!("[shell.privilege.shell] `{name} {opt}` starts a root shell"),
                    ));
                }
                ("sudo", "-e" | "--edit") => {
                    u.notes
                        .push((Class::Privilege, "[shell.privilege.edit] sudoedit".into()));
                }
                ("watch", "-x" | "--exec") => positional_first = Some(0),
                ("ionice", "-p" | "-P" | "-u") | ("taskset", "-p" | "--pid") => {
                    u.notes.push((
                        Class::Destructive,
                        format!("[shell.wrapper.pid] `{name} {opt}` changes another process"),
                    ));
                }
                _ => {}
            }
            if name == "command" && (opt == "-v" || opt == "-V") {
                // `command -v NAME` only looks the name up.
                u.leader = argv.len();
                return finish(u, argv);
            }
            i += 1;
            if !attached && takes_value(name, opt) {
                i += 1;
            }
        }
        // Positional arguments that belong to the wrapper.
        match name {
            "timeout" => i += 1,
            "flock" => {
                if let Some(f) = argv.get(i) {
                    u.writes.push(f.clone());
                }
                i += 1;
                if argv
                    .get(i)
                    .is_some_and(|a| a.value == "-c" || a.value == "--command")
                {
                    if let Some(code) = argv.get(i + 1) {
                        u.shell_code.push((code.clone(), "flock -c"));
                    }
                    u.leader = argv.len();
                    return finish(u, argv);
                }
            }
            "chrt" => i += 1,
            "taskset" => i += 1,
            "watch" if positional_first.is_none() => {
                // watch joins its arguments and runs them with `sh -c`.
                let rest: Vec<&str> = argv
                    .get(i..)
                    .unwrap_or(&[])
                    .iter()
                    .map(|w| w.value.as_str())
                    .collect();
                let all_exact = argv.get(i..).unwrap_or(&[]).iter().all(|w| w.exact);
                let mut code = Word::literal(&rest.join(" "));
                code.exact = all_exact;
                u.shell_code.push((code, "watch"));
                u.leader = argv.len();
                return finish(u, argv);
            }
            "su" => {
                // `su [user]` without -c: an interactive root shell.
                u.notes.push((
                    Class::Privilege,
                    "[shell.privilege.su] `su` starts a shell as another user".into(),
                ));
                u.leader = argv.len();
                return finish(u, argv);
            }
            _ => {}
        }
        if name == "env" && argv.get(i).is_none() {
            u.dumps_env = true;
        }
    }
    u.leader = i.min(argv.len());
    u
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
