//! Per-command rules for commands whose arguments execute code or name
//! other commands: shells, interpreters, `eval`, `find -exec`, `xargs`,
//! `awk`, `sed`, `rg --pre`, `tar --to-command`.

use super::classify::{self, Cmd, Judge, Stdin};
use super::commands;
use super::walk::{Cwd, Scope, Walker};
use super::words::Word;
use super::{Class, tables};

pub(crate) struct Ctx<'x, 'w, 'c> {
    pub w: &'x mut Walker<'w>,
    pub cmd: &'x Cmd<'c>,
    pub stdin: &'x Stdin,
    pub xargs: bool,
    pub scope: &'x Scope,
}

pub(crate) fn dispatch(
    j: &mut Judge,
    c: Ctx<'_, '_, '_>,
    name: &str,
    args: &[Word],
    new_cwd: &mut Option<Cwd>,
) {
    if tables::DECODERS.contains(&name) {
        j.t.decoder = true;
    }
    if c.xargs {
        let argv: Vec<Word> = std::iter::once(Word::literal(name))
            .chain(args.iter().cloned())
            .collect();
        let mut probe = Judge::new_pub();
        probe.t.decoder = j.t.decoder;
        let inner = Ctx {
            w: &mut *c.w,
            cmd: c.cmd,
            stdin: c.stdin,
            xargs: true,
            scope: c.scope,
        };
        dispatch_named(&mut probe, inner, name, args, new_cwd);
        // The appended arguments are not visible: anything beyond
        // inspection is asked about.
        if probe.class != Class::ReadOnly {
            j.raise(probe.class, probe.reason.clone());
            j.raise(
                Class::Opaque,
                format!(
                    "[shell.xargs] `xargs {}` gets arguments that are not visible here",
                    argv.first().map_or("", |w| w.display.as_str())
                ),
            );
        }
        j.t = probe.t;
        j.reparse = probe.reparse;
        return;
    }
    dispatch_named(j, c, name, args, new_cwd);
}

fn dispatch_named(
    j: &mut Judge,
    c: Ctx<'_, '_, '_>,
    name: &str,
    args: &[Word],
    new_cwd: &mut Option<Cwd>,
) {
    match name {
        n if tables::SHELLS.contains(&n) => shell(j, &c, n, args),
        n if tables::FOREIGN_SHELLS.contains(&n) => j.raise(
            Class::Opaque,
            format!("[shell.foreign] `{n}` uses a syntax this analysis does not parse"),
        ),
        "eval" => {
            let code: Vec<&str> = args.iter().map(|a| a.value.as_str()).collect();
            if args.iter().all(|a| a.exact) {
                j.code(&code.join(" "), "eval");
            } else {
                classify::code_from_substitution(j, c.w, c.cmd, "eval");
            }
            j.raise(Class::Opaque, "[shell.eval] `eval` runs a string as code");
        }
        "source" | "." => {
            let from_subst = args.first().is_some_and(|a| a.subst);
            if from_subst {
                classify::code_from_substitution(j, c.w, c.cmd, name);
            }
            if args.first().is_some_and(|a| a.value == "/dev/stdin") {
                j.t.stdin_code = true;
            }
            j.raise(
                Class::Opaque,
                format!("[shell.source] `{name}` runs a file as code"),
            );
        }
        "trap" => {
            if let Some(code) = args
                .first()
                .filter(|a| a.exact && !a.value.starts_with('-'))
            {
                j.code(&code.value, "trap");
            } else if args.first().is_some_and(|a| !a.exact) {
                j.raise(Class::Opaque, "[shell.trap] trap code is computed");
            }
        }
        "alias" => {
            for a in args {
                if let Some((_, v)) = a.value.split_once('=') {
                    j.code(v, "alias");
                }
            }
        }
        "find" => find(j, c, args),
        "awk" | "gawk" | "mawk" | "nawk" | "busybox-awk" => awk(j, args),
        "sed" | "gsed" => sed(j, &c, args),
        "rg" => {
            if args
                .iter()
                .any(|a| a.value == "--pre" || a.value.starts_with("--pre="))
            {
                j.raise(
                    Class::Opaque,
                    "[shell.exec-arg.rg-pre] `rg --pre` runs a command on every file",
                );
            }
        }
        "tar" | "gtar" | "bsdtar" => tar(j, &c, args),
        _ => commands::classify_named(j, &c, name, args, new_cwd),
    }
}

impl Judge {
    pub(crate) fn new_pub() -> Judge {
        let mut j = Judge {
            class: Class::ReadOnly,
            reason: String::new(),
            writes: Vec::new(),
            t: Default::default(),
            reparse: Vec::new(),
        };
        j.reason = "[shell.read-only] inspection only".into();
        j
    }
}

fn shell(j: &mut Judge, c: &Ctx<'_, '_, '_>, name: &str, args: &[Word]) {
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
fn stdin_code(j: &mut Judge, c: &Ctx<'_, '_, '_>, name: &str) {
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

fn find(j: &mut Judge, c: Ctx<'_, '_, '_>, args: &[Word]) {
    let mut i = 0;
    let mut roots: Vec<&Word> = Vec::new();
    while let Some(a) = args.get(i) {
        if a.value.starts_with('-') || a.value == "(" || a.value == "!" {
            break;
        }
        roots.push(a);
        i += 1;
    }
    while let Some(a) = args.get(i) {
        let v = a.value.as_str();
        i += 1;
        match v {
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let start = i;
                while args
                    .get(i)
                    .is_some_and(|x| x.value != ";" && x.value != "+")
                {
                    i += 1;
                }
                let inner: Vec<Word> = args
                    .get(start..i)
                    .unwrap_or(&[])
                    .iter()
                    .map(|x| {
                        let mut x = x.clone();
                        if x.value.contains("{}") {
                            x.unknown = true;
                            x.exact = false;
                        }
                        x
                    })
                    .collect();
                i += 1;
                if inner.is_empty() {
                    j.raise(
                        Class::Opaque,
                        "[shell.exec-arg.find] `find -exec` without a command",
                    );
                } else {
                    classify::child(c.w, &inner, c.cmd.cwd, &format!("find {v}"), c.scope);
                }
            }
            "-delete" => {
                let critical = roots.iter().any(|r| is_critical_word(r, &c));
                if critical {
                    j.raise(
                        Class::Malicious,
                        "[shell.malicious.wipe] `find -delete` over the root or home directory",
                    );
                }
                j.raise(
                    Class::Destructive,
                    "[shell.destructive.find-delete] `find -delete` removes files",
                );
                for r in &roots {
                    j.write(r, c.cmd.cwd, c.w.ctx, "find -delete under");
                }
            }
            "-fprint" | "-fprint0" | "-fprintf" | "-fls" => {
                if let Some(f) = args.get(i) {
                    j.write(f, c.cmd.cwd, c.w.ctx, "find output file");
                }
            }
            _ => {}
        }
    }
}

pub(crate) fn is_critical_word(w: &Word, c: &Ctx<'_, '_, '_>) -> bool {
    if w.unknown || w.subst {
        return false;
    }
    let cwds: Vec<std::path::PathBuf> = match c.cmd.cwd {
        Some(v) => v.clone(),
        None => vec![c.w.ctx.cwd.clone()],
    };
    let value = if w.glob {
        let cut = w.value.find(['*', '?', '[']).unwrap_or(w.value.len());
        let p = w.value.get(..cut).unwrap_or("");
        if p.is_empty() {
            ".".to_string()
        } else {
            p.to_string()
        }
    } else {
        w.value.clone()
    };
    cwds.iter()
        .any(|cwd| super::paths::is_critical(&super::paths::resolve(&value, cwd), c.w.ctx))
}

fn awk(j: &mut Judge, args: &[Word]) {
    let mut i = 0;
    let mut program: Option<&Word> = None;
    while let Some(a) = args.get(i) {
        let v = a.value.as_str();
        match v {
            "-f" | "--file" | "-i" | "--include" | "-l" | "--load" | "-E" | "--exec" => {
                j.raise(
                    Class::ScriptRun,
                    "[shell.exec-arg.awk] awk program from a file",
                );
                return;
            }
            "-F" | "-v" | "--assign" | "--field-separator" => i += 2,
            "--" => {
                program = args.get(i + 1);
                break;
            }
            _ if v.starts_with('-') && v.len() > 1 => i += 1,
            _ => {
                program = Some(a);
                break;
            }
        }
    }
    let Some(p) = program else {
        return;
    };
    let code = p.value.as_str();
    let compact: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    if compact.contains("system(")
        || compact.contains("|getline")
        || compact.contains("|\"")
        || compact.contains("|&")
    {
        j.raise(
            Class::InlineCode,
            "[shell.exec-arg.awk] awk program runs commands (`system`, pipes)",
        );
    }
    if compact.contains(">\"")
        || compact.contains(">>")
        || compact.contains(">(")
        || compact.contains(">$")
    {
        j.raise(
            Class::OutsideWrite,
            "[shell.exec-arg.awk] awk program writes to files",
        );
    }
}

fn sed(j: &mut Judge, c: &Ctx<'_, '_, '_>, args: &[Word]) {
    let mut in_place = false;
    let mut scripts: Vec<&str> = Vec::new();
    let mut files: Vec<&Word> = Vec::new();
    let mut i = 0;
    let mut explicit_script = false;
    while let Some(a) = args.get(i) {
        let v = a.value.as_str();
        i += 1;
        if v == "-e" || v == "--expression" {
            if let Some(s) = args.get(i) {
                scripts.push(s.value.as_str());
            }
            explicit_script = true;
            i += 1;
        } else if let Some(s) = v.strip_prefix("--expression=") {
            scripts.push(s);
            explicit_script = true;
        } else if v == "-f" || v == "--file" || v.starts_with("--file=") {
            j.raise(
                Class::ScriptRun,
                "[shell.exec-arg.sed] sed script from a file",
            );
            i += 1;
        } else if v == "-i"
            || v.starts_with("-i")
            || v.starts_with("--in-place")
            || (v.starts_with('-') && !v.starts_with("--") && v.contains('i') && v.len() <= 4)
        {
            in_place = true;
        } else if v == "-l" || v == "--line-length" {
            i += 1;
        } else if v.starts_with('-') && v.len() > 1 {
        } else if !explicit_script && scripts.is_empty() {
            scripts.push(v);
        } else {
            files.push(a);
        }
    }
    for s in &scripts {
        if sed_runs_or_writes(s) {
            j.raise(
                Class::InlineCode,
                "[shell.exec-arg.sed] sed script runs commands or writes files (`e`, `w`)",
            );
        }
    }
    if in_place {
        if files.is_empty() {
            j.raise(
                Class::Opaque,
                "[shell.exec-arg.sed] `sed -i` without visible files",
            );
        }
        if c.xargs {
            j.raise(
                Class::Opaque,
                "[shell.xargs] `sed -i` on files not visible here",
            );
        }
        for f in files {
            j.write(f, c.cmd.cwd, c.w.ctx, "sed -i on");
        }
    }
}

/// Does a sed script use `e`, `w`/`W`, or the `e`/`w` flags of `s`?
/// Anything this scanner cannot follow counts as yes.
pub(crate) fn sed_runs_or_writes(script: &str) -> bool {
    let b: Vec<char> = script.chars().collect();
    let mut i = 0;
    let at = |k: usize| b.get(k).copied();
    loop {
        // Skip blanks, separators and addresses.
        while let Some(ch) = at(i) {
            match ch {
                ' ' | '\t' | '\n' | ';' | '!' | '{' | '}' | ',' | '$' | '~' | '+' => i += 1,
                '0'..='9' => i += 1,
                '/' | '\\' => {
                    let delim = if ch == '\\' {
                        i += 1;
                        match at(i) {
                            Some(d) => d,
                            None => return true,
                        }
                    } else {
                        '/'
                    };
                    i += 1;
                    while let Some(x) = at(i) {
                        if x == '\\' {
                            i += 2;
                            continue;
                        }
                        i += 1;
                        if x == delim {
                            break;
                        }
                    }
                    if matches!(at(i), Some('I' | 'M')) {
                        i += 1;
                    }
                }
                _ => break,
            }
        }
        let Some(cmd) = at(i) else {
            return false;
        };
        i += 1;
        match cmd {
            'e' | 'w' | 'W' => return true,
            's' | 'y' => {
                let Some(delim) = at(i) else {
                    return true;
                };
                if delim == '\n' || delim == '\\' {
                    return true;
                }
                i += 1;
                let mut parts = 0;
                while parts < 2 {
                    match at(i) {
                        None => return true,
                        Some('\\') => i += 2,
                        Some(x) => {
                            i += 1;
                            if x == delim {
                                parts += 1;
                            }
                        }
                    }
                }
                if cmd == 's' {
                    while let Some(f) = at(i) {
                        match f {
                            'e' | 'w' | 'W' => return true,
                            'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9' => i += 1,
                            _ => break,
                        }
                    }
                }
            }
            'a' | 'i' | 'c' | 'r' | 'R' | 'b' | 't' | 'T' | ':' => {
                while at(i).is_some_and(|x| x != '\n') {
                    if matches!(cmd, 'b' | 't' | 'T' | ':') && at(i) == Some(';') {
                        break;
                    }
                    i += 1;
                }
            }
            'p' | 'P' | 'd' | 'D' | 'n' | 'N' | 'g' | 'G' | 'h' | 'H' | 'x' | 'l' | '=' | 'q'
            | 'Q' | 'z' | 'F' => {
                while at(i).is_some_and(|x| x.is_ascii_digit() || x == ' ') {
                    i += 1;
                }
            }
            '#' => {
                while at(i).is_some_and(|x| x != '\n') {
                    i += 1;
                }
            }
            _ => return true,
        }
    }
}

fn tar(j: &mut Judge, c: &Ctx<'_, '_, '_>, args: &[Word]) {
    let first = args.first().map(|a| a.value.as_str()).unwrap_or("");
    let mut extract = false;
    let mut create = false;
    if !first.starts_with('-') {
        extract = first.contains('x');
        create = first.contains('c') || first.contains('r') || first.contains('u');
    }
    let mut file: Option<&Word> = None;
    let mut dir: Option<&Word> = None;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let v = a.value.as_str();
        i += 1;
        if v.starts_with("--to-command")
            || v.starts_with("--checkpoint-action")
            || v.starts_with("--use-compress-program")
            || v == "-I"
            || v.starts_with("--info-script")
            || v.starts_with("--new-volume-script")
            || v == "-F"
            || v.starts_with("--rsh-command")
        {
            j.raise(
                Class::Opaque,
                format!("[shell.exec-arg.tar] `tar {v}` runs a command"),
            );
        }
        if v == "-x"
            || v == "--extract"
            || v == "--get"
            || (v.starts_with('-') && !v.starts_with("--") && v.contains('x'))
        {
            extract = true;
        }
        if v == "-c"
            || v == "--create"
            || v == "-r"
            || v == "--append"
            || (v.starts_with('-') && !v.starts_with("--") && v.contains('c'))
        {
            create = true;
        }
        if v == "-C" || v == "--directory" {
            dir = args.get(i);
        }
        if v == "-f"
            || v == "--file"
            || (v.starts_with('-') && !v.starts_with("--") && v.ends_with('f'))
            || (!v.starts_with('-') && i == 1 && v.ends_with('f'))
        {
            file = args.get(i);
        }
    }
    if extract {
        let target = dir.cloned().unwrap_or_else(|| Word::literal("."));
        j.write(&target, c.cmd.cwd, c.w.ctx, "tar extraction into");
    }
    if create {
        if let Some(f) = file.filter(|f| f.value != "-") {
            j.write(f, c.cmd.cwd, c.w.ctx, "tar archive");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::sed_runs_or_writes;

    #[test]
    fn sed_scanner() {
        assert!(!sed_runs_or_writes("s/a/b/g"));
        assert!(!sed_runs_or_writes("1,5p;/x/d"));
        assert!(!sed_runs_or_writes("s|/usr|/opt|; 3q"));
        assert!(sed_runs_or_writes("s/a/b/e"));
        assert!(sed_runs_or_writes("s/a/b/w out"));
        assert!(sed_runs_or_writes("1e id"));
        assert!(sed_runs_or_writes("w /tmp/x"));
        assert!(sed_runs_or_writes("/x/ { e rm -rf ~\n}"));
    }
}
