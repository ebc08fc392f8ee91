//! Commands that reach past the project: raw network clients, services,
//! network settings, system packages, containers and `openssl`.

use super::first_op;
use super::outputs::getopt_values;
use crate::shell::Class;
use crate::shell::classify::Judge;
use crate::shell::exec_args::Ctx;
use crate::shell::words::Word;

pub(super) fn socket_client(j: &mut Judge, name: &str, args: &[Word]) {
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

pub(super) fn services(j: &mut Judge, name: &str, args: &[Word]) {
    if name == "systemctl" && !getopt_values(args, &["-H", "--host", "-M", "--machine"]).is_empty()
    {
        j.t.network = true;
        j.raise(
            Class::Network,
            "[shell.network] `systemctl -H`/`-M` acts on another host (over ssh) or machine",
        );
    }
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

/// `ss`, `journalctl`, `lsof` and `netstat` inspect, but `ss -K` closes the sockets it lists,
/// and journalctl's maintenance options delete, rotate, flush or re-key the journal.
pub(super) fn inspectors(j: &mut Judge, name: &str, args: &[Word]) {
    let (change, what) = match name {
        "ss" => (args.iter().find(|a| ss_kills(&a.value)), "closes sockets"),
        "journalctl" => (
            args.iter().find(|a| journal_maintenance(&a.value)),
            "deletes, rotates or moves the system journal",
        ),
        _ => (None, ""),
    };
    if let Some(a) = change {
        j.raise(
            Class::Privilege,
            format!("[shell.privilege] `{name} {}` {what}", a.display),
        );
    }
}

/// `ss -K`, in a bundle (`-tK`) before any option that takes a value, or `--kill` shortened.
fn ss_kills(v: &str) -> bool {
    if let Some(long) = v.strip_prefix("--") {
        return !long.is_empty() && "kill".starts_with(long);
    }
    v.strip_prefix('-').is_some_and(|body| {
        body.chars()
            .take_while(|c| !"fAFND".contains(*c))
            .any(|c| c == 'K')
    })
}

/// journalctl's options that change the journal, by any prefix getopt takes for them.
fn journal_maintenance(v: &str) -> bool {
    const CHANGES: &[&str] = &[
        "vacuum-size",
        "vacuum-time",
        "vacuum-files",
        "rotate",
        "flush",
        "setup-keys",
        "relinquish-var",
        "smart-relinquish-var",
        "sync",
        "update-catalog",
    ];
    let Some(long) = v.strip_prefix("--") else {
        return false;
    };
    let name = long.split_once('=').map_or(long, |(n, _)| n);
    !name.is_empty() && CHANGES.iter().any(|c| c.starts_with(name))
}

/// `ip`'s commands that change settings or run programs. `ip` takes any prefix of a command
/// (`ip a a` adds an address, `ip l s` sets a link), so a command word is judged by the
/// commands it can stand for.
const IP_CHANGES: &[&str] = &[
    "add",
    "allocspi",
    "append",
    "attach",
    "change",
    "chg",
    "del",
    "delete",
    "deleteall",
    "detach",
    "exec",
    "flush",
    "prepend",
    "replace",
    "restore",
    "save",
    "set",
    "setdefault",
    "update",
];

/// `ip`'s commands that only show.
const IP_SHOWS: &[&str] = &[
    "afstats",
    "count",
    "get",
    "getdefault",
    "help",
    "identify",
    "list",
    "lst",
    "monitor",
    "pids",
    "show",
    "showdump",
    "xstats",
];

/// `ip`'s global options that take the next word as their value: `-n NETNS`, `-f FAMILY`,
/// `-l LOOPS`, `-rc SIZE` (each by its shortest accepted prefix and full name).
const IP_VALUES: &[(&str, &str)] = &[
    ("-n", "-netns"),
    ("-f", "-family"),
    ("-l", "-loops"),
    ("-rc", "-rcvbuf"),
];

pub(super) fn ip(j: &mut Judge, args: &[Word]) {
    let skip = ip_options(j, args);
    let words: Vec<&str> = args
        .get(skip..)
        .unwrap_or(&[])
        .iter()
        .map(|a| a.value.as_str())
        .collect();
    let (command, changes) = ip_changes(&words);
    // The whole-word check stays as a backstop for what the positions miss.
    let named = words.iter().any(|w| {
        matches!(
            *w,
            "add" | "del" | "delete" | "set" | "flush" | "change" | "replace"
        )
    });
    if changes || named {
        j.raise(
            Class::Privilege,
            "[shell.privilege] `ip` changes network settings",
        );
    }
    if changes && "exec".starts_with(command) {
        j.raise(
            Class::Opaque,
            "[shell.exec-arg.ip] `ip netns exec`/`ip vrf exec` runs a program the command names",
        );
    }
}

/// `ip`'s global options, up to the object; `-batch FILE` (and `-force`, which goes with it)
/// runs the commands a file lists. Returns how many words they take.
fn ip_options(j: &mut Judge, args: &[Word]) -> usize {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let raw = a.value.as_str();
        if !raw.starts_with('-') || raw.len() < 2 {
            break;
        }
        i += 1;
        // `ip` also takes its options with two dashes (`--batch`).
        let v = raw
            .strip_prefix('-')
            .filter(|r| r.starts_with('-'))
            .unwrap_or(raw);
        let force = v.len() >= 3 && "-force".starts_with(v);
        if force || "-batch".starts_with(v) {
            i += usize::from(!force);
            j.raise(
                Class::Privilege,
                "[shell.privilege] `ip -batch` runs the commands a file lists, which may change \
                 network settings",
            );
        } else if IP_VALUES
            .iter()
            .any(|(short, full)| v.len() >= short.len() && full.starts_with(v))
        {
            i += 1;
        }
    }
    i
}

/// The command word after `ip`'s object, and whether it changes settings or runs a program.
fn ip_changes<'a>(words: &[&'a str]) -> (&'a str, bool) {
    let object = words.first().copied().unwrap_or("");
    let mut command = words.get(1).copied().unwrap_or("");
    // Nested objects (`ip xfrm state add`, `ip mptcp endpoint flush`, `ip link property add`):
    // a word that is no command names a part, and the next word is the command.
    if ip_command(command).is_none() && !command.is_empty() {
        command = words.get(2).copied().unwrap_or("");
    }
    let changes = match ip_command(command) {
        Some(IpCommand::Change) => true,
        // `s` is `show` for addresses, routes and neighbours, which look `show` up before
        // `save`, and `set` for links and the rest.
        Some(IpCommand::Either) => {
            !(command == "s"
                && !object.is_empty()
                && ["address", "route", "neighbor", "neighbour"]
                    .iter()
                    .any(|o| o.starts_with(object)))
        }
        Some(IpCommand::Show) | None => false,
    };
    (command, changes)
}

/// What an `ip` command word can stand for.
enum IpCommand {
    Change,
    Show,
    /// A prefix of both (`s`: `set`, `save`, `show`).
    Either,
}

fn ip_command(w: &str) -> Option<IpCommand> {
    if w.is_empty() {
        return None;
    }
    let change = IP_CHANGES.iter().any(|c| c.starts_with(w));
    let show = IP_SHOWS.iter().any(|c| c.starts_with(w));
    match (change, show) {
        (true, true) => Some(IpCommand::Either),
        (true, false) => Some(IpCommand::Change),
        (false, true) => Some(IpCommand::Show),
        (false, false) => None,
    }
}

pub(super) fn system_packages(j: &mut Judge, c: &Ctx<'_, '_, '_>, name: &str, args: &[Word]) {
    let extract = ["-x", "--extract", "-X", "--vextract"];
    if name == "dpkg" && args.iter().any(|a| extract.contains(&a.value.as_str())) {
        // `dpkg -x PKG DIR` unpacks the package's files, whatever they are named, into DIR.
        let ops = super::operands(args);
        let here = Word::literal(".");
        let dir = ops.get(1).copied().unwrap_or(&here);
        j.content_write(dir, c.cmd.cwd, c.w.ctx, "dpkg extraction into");
    }
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

/// `docker compose` verbs that only show the project's containers (not `config`, which prints
/// the values it took from the project's `.env`).
const COMPOSE_SHOWS: &[&str] = &[
    "ps", "ls", "logs", "images", "top", "version", "port", "events",
];

/// `docker compose` options that take the next word as their value.
const COMPOSE_VALUED: &[&str] = &[
    "-f",
    "--file",
    "-p",
    "--project-name",
    "--env-file",
    "--profile",
    "--project-directory",
    "--ansi",
    "--progress",
    "--parallel",
];

/// Containers: anything but showing them is privileged. Their verbs also dial the daemon's
/// socket or open podman's store ([`super::daemons`]).
pub(super) fn containers(j: &mut Judge, c: &Ctx<'_, '_, '_>, name: &str, args: &[Word]) {
    let verb = super::daemons::judge(j, c, name, args);
    if verb == "compose" {
        let rest = args
            .iter()
            .skip_while(|a| a.value != "compose")
            .skip(1)
            .cloned()
            .collect::<Vec<_>>();
        let verb = super::toolchains::verb_after(&rest, COMPOSE_VALUED);
        if !COMPOSE_SHOWS.contains(&verb) {
            j.raise(
                Class::Privilege,
                format!(
                    "[shell.privilege.container] `{name} compose {verb}` runs or changes containers"
                ),
            );
        }
        return;
    }
    if !matches!(
        verb,
        "ps" | "images" | "logs" | "inspect" | "version" | "info" | "stats" | "top"
    ) {
        j.raise(
            Class::Privilege,
            format!("[shell.privilege.container] `{name}` runs or changes containers"),
        );
    }
}

pub(super) fn openssl(j: &mut Judge, args: &[Word]) {
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

/// `date` and `hostname` print, unless told to set the clock or the host's name: `date -s`,
/// `date MMDDhhmm` (an operand without `+`), `hostname NAME`, `hostname -F FILE`.
pub(super) fn clock_or_name(j: &mut Judge, name: &str, args: &[Word]) {
    // Options whose value is the next word when not attached.
    let valued: &[&str] = match name {
        "date" => &[
            "-d",
            "--date",
            "-f",
            "--file",
            "-r",
            "--reference",
            "-s",
            "--set",
        ],
        _ => &["-F", "--file"],
    };
    let sets_opt: &[char] = if name == "date" { &['s'] } else { &['F', 'b'] };
    let mut sets = false;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let v = a.value.as_str();
        i += 1;
        if v == "--" {
            sets |= args[i..]
                .iter()
                .any(|a| name != "date" || !a.value.starts_with('+'));
            break;
        }
        if let Some(long) = v.strip_prefix("--") {
            let opt = long.split_once('=').map_or(long, |(o, _)| o);
            sets |= ["set", "file", "boot"]
                .iter()
                .any(|full| opt.len() >= 2 && full.starts_with(opt))
                && !(name == "date" && opt.starts_with('f'));
            i += usize::from(!long.contains('=') && valued.contains(&v));
        } else if v.len() > 1 && v.starts_with('-') {
            let shorts: Vec<char> = v.chars().skip(1).collect();
            // `date -I[FMT]`: its value is only ever attached.
            let optional = |c: &char| name == "date" && *c == 'I';
            if let Some(p) = shorts.iter().position(optional) {
                sets |= shorts[..p].iter().any(|c| sets_opt.contains(c));
                continue;
            }
            let at = shorts
                .iter()
                .position(|c| valued.contains(&format!("-{c}").as_str()));
            sets |= shorts[..at.map_or(shorts.len(), |p| p + 1)]
                .iter()
                .any(|c| sets_opt.contains(c));
            i += usize::from(at.is_some_and(|p| p + 1 == shorts.len()));
        } else {
            sets |= name != "date" || !v.starts_with('+');
        }
    }
    if sets {
        let what = if name == "date" {
            "sets the system clock"
        } else {
            "sets the host's name"
        };
        j.raise(
            Class::Privilege,
            format!("[shell.privilege.system] `{name}` {what}"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::{ip_changes, journal_maintenance, ss_kills};

    #[test]
    fn ip_commands_by_prefix() {
        for w in [
            "a a 10.9.9.9/32 dev lo",
            "l s dev lo mtu 1000",
            "link s lo down",
            "r a default via 10.0.0.1",
            "netns exec x id",
            "vrf e x sh",
            "xfrm state add x",
            "a c 10.0.0.1 dev lo",
        ] {
            let words: Vec<&str> = w.split(' ').collect();
            assert!(ip_changes(&words).1, "{w}");
        }
        for w in [
            "a",
            "addr show",
            "a s",
            "r",
            "route get 1.1.1.1",
            "link show",
            "n s",
        ] {
            let words: Vec<&str> = w.split(' ').collect();
            assert!(!ip_changes(&words).1, "{w}");
        }
    }

    #[test]
    fn socket_kills_and_journal_maintenance() {
        assert!(ss_kills("-K") && ss_kills("-tK") && ss_kills("--ki"));
        assert!(!ss_kills("-tlnp") && !ss_kills("-fK") && !ss_kills("--kernel-x"));
        assert!(journal_maintenance("--vacuum-size=1M") && journal_maintenance("--rot"));
        assert!(!journal_maintenance("--since=today") && !journal_maintenance("-u"));
    }
}
