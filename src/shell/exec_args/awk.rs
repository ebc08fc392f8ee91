//! `awk`: a program that runs commands or writes files.

use super::Ctx;
use crate::shell::Class;
use crate::shell::classify::Judge;
use crate::shell::words::Word;

pub(super) fn awk(j: &mut Judge, c: &Ctx<'_, '_, '_>, args: &[Word]) {
    // In every form getopt takes (`-fFILE`, `-nf FILE`, `--file=FILE`, `--fi=FILE`).
    let from_file = [
        "-f",
        "--file",
        "-i",
        "--include",
        "-l",
        "--load",
        "-E",
        "--exec",
    ];
    if !crate::shell::commands::outputs::getopt_values(args, &from_file).is_empty() {
        j.raise(
            Class::ScriptRun,
            "[shell.exec-arg.awk] awk program from a file",
        );
        return;
    }
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
    let files = print_files(code);
    for f in &files {
        j.write(&Word::literal(f), c.cmd.cwd, c.w.ctx, "awk program writes");
    }
    if files.is_empty()
        && (compact.contains(">\"")
            || compact.contains(">>")
            || compact.contains(">(")
            || compact.contains(">$"))
    {
        j.raise(
            Class::OutsideWrite,
            "[shell.exec-arg.awk] awk program writes to files",
        );
    }
}

/// The files a `print` or `printf` statement redirects to by a string literal
/// (`print > "out"`, `printf "%s", $1 >> "/tmp/x"`); a `>` outside such a statement compares.
fn print_files(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for stmt in code.split([';', '{', '}', '\n']) {
        let printing = stmt
            .split(|ch: char| !ch.is_ascii_alphanumeric() && ch != '_')
            .any(|w| w == "print" || w == "printf");
        if !printing {
            continue;
        }
        let mut rest = stmt;
        while let Some(at) = rest.find('>') {
            let after = rest[at + 1..].trim_start_matches('>').trim_start();
            if let Some(lit) = after.strip_prefix('"')
                && let Some(end) = lit.find('"')
            {
                out.push(lit[..end].to_string());
            }
            rest = &rest[at + 1..];
        }
    }
    out
}
