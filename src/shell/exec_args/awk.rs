//! `awk`: a program that runs commands or writes files.

use crate::shell::Class;
use crate::shell::classify::Judge;
use crate::shell::words::Word;

pub(super) fn awk(j: &mut Judge, args: &[Word]) {
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
