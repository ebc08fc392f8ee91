//! Shells and interpreters that run code given inline or on standard input:
//! `sh -c`, a here-document fed to a shell, `python -c`.

use super::Ctx;
use crate::shell::classify::{self, Judge, Stdin};
use crate::shell::words::Word;
use crate::shell::{Class, tables};

pub(super) fn shell(j: &mut Judge, c: &Ctx<'_, '_, '_>, name: &str, args: &[Word]) {
    if name == "busybox" {
        j.raise(
            Class::Opaque,
            "[shell.busybox] busybox applets are not analysed",
        );
        return;
    }
    let mut i = 0;
    let mut code_flag = false;
    let mut stdin_flag = false;
    while let Some(a) = args.get(i) {
        let v = a.value.as_str();
        if v == "--" {
            i += 1;
            break;
        }
        if v == "-o" || v == "+o" || v == "-O" || v == "+O" || v == "--rcfile" || v == "--init-file"
        {
            if v.contains("rc") || v.contains("init") {
                j.raise(Class::Opaque, "[shell.rcfile] shell reads a start-up file");
            }
            i += 2;
            continue;
        }
        if (v.starts_with('-') || v.starts_with('+')) && v.len() > 1 {
            if !v.starts_with("--") {
                code_flag |= v.contains('c');
                stdin_flag |= v.contains('s');
            }
            i += 1;
            continue;
        }
        break;
    }
    if code_flag {
        match args.get(i) {
            Some(code) => classify::shell_string(j, c.w, c.cmd, code, &format!("{name} -c")),
            None => j.raise(Class::Opaque, "[shell.parse] `-c` without code"),
        }
        return;
    }
    let script = args.get(i).filter(|_| !stdin_flag);
    match script {
        Some(s) if s.subst => {
            classify::code_from_substitution(j, c.w, c.cmd, &format!("{name} <(...)"))
        }
        Some(s) if s.value == "/dev/stdin" || s.value == "-" => stdin_code(j, c, name),
        Some(s) => j.raise(
            Class::ScriptRun,
            format!(
                "[shell.script] `{name} {}` runs a script whose content is not analysed",
                s.display
            ),
        ),
        None => stdin_code(j, c, name),
    }
}

/// A shell or interpreter that reads its program from standard input.
pub(crate) fn stdin_code(j: &mut Judge, c: &Ctx<'_, '_, '_>, name: &str) {
    match c.stdin {
        Stdin::Text(code) if tables::SHELLS.contains(&name) => {
            j.code(code, &format!("{name} <<here-document"));
            j.reason = format!(
                "[shell.reparse] `{name}` runs a here-document, analysed as its own segments"
            );
        }
        Stdin::Text(code) => inline_code(j, name, code),
        Stdin::File => j.raise(
            Class::ScriptRun,
            format!("[shell.script] `{name}` runs a file from its input"),
        ),
        Stdin::Inherited => {
            j.t.stdin_code = true;
            j.raise(
                Class::Opaque,
                format!("[shell.stdin-code] `{name}` runs whatever arrives on its input"),
            );
        }
    }
}

/// Inline code for an interpreter: asked about, and denied when it is the
/// shape of a reverse shell.
pub(crate) fn inline_code(j: &mut Judge, name: &str, code: &str) {
    let lc = code.to_ascii_lowercase();
    let socket = [
        "socket",
        "fsockopen",
        "/dev/tcp",
        ".connect(",
        "net.dial",
        "tcpstream",
    ]
    .iter()
    .any(|k| lc.contains(k));
    let spawn = [
        "subprocess",
        "pty.spawn",
        "/bin/sh",
        "/bin/bash",
        "dup2",
        "exec(",
        "spawn(",
        "fsockopen",
        "child_process",
        "popen",
        "system(",
    ]
    .iter()
    .any(|k| lc.contains(k));
    if socket && spawn {
        j.raise(
            Class::Malicious,
            format!("[shell.malicious.reverse-shell] `{name}` code connects a socket to a process"),
        );
    }
    j.raise(
        Class::InlineCode,
        format!("[shell.inline-code] `{name}` runs code given on the command line"),
    );
}
