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
