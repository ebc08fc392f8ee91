//! Commands that reach past the project: raw network clients, services,
//! network settings, system packages, containers and `openssl`.

use super::first_op;
use crate::shell::Class;
use crate::shell::classify::Judge;
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

pub(super) fn ip(j: &mut Judge, args: &[Word]) {
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

pub(super) fn system_packages(j: &mut Judge, name: &str, args: &[Word]) {
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

pub(super) fn containers(j: &mut Judge, name: &str, args: &[Word]) {
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
