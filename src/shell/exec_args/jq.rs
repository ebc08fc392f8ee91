//! `jq`: a filter that reads files besides its inputs. `import` and `include` load modules and
//! JSON data from a search path (`-L DIR`, `~/.jq`, or the `{search: ...}` the program itself
//! names: `jq -n -L ~ 'import ".claude" as $x; $x'` prints `~/.claude.json`); `--rawfile` and
//! `--slurpfile` read a file into a variable; `-f FILE` reads the program.

use super::Ctx;
use crate::shell::Class;
use crate::shell::classify::Judge;
use crate::shell::words::Word;

/// Options whose values are the next words, and how many.
const VALUES: &[(&str, usize)] = &[
    ("--arg", 2),
    ("--argjson", 2),
    ("--slurpfile", 2),
    ("--rawfile", 2),
    ("--indent", 1),
    ("--library-path", 1),
    ("-L", 1),
];

pub(super) fn jq(j: &mut Judge, c: &Ctx<'_, '_, '_>, name: &str, args: &[Word]) {
    let (cwd, ctx) = (c.cmd.cwd, c.w.ctx);
    let mut from_file = false;
    let mut program: Option<&Word> = None;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        let v = a.value.as_str();
        if v == "--" {
            program = program.or_else(|| args.get(i));
            break;
        }
        if let Some(&(opt, n)) = VALUES.iter().find(|(o, _)| *o == v) {
            if matches!(opt, "--rawfile" | "--slurpfile")
                && let Some(f) = args.get(i + 1)
            {
                j.read(f, cwd, ctx);
            }
            i += n;
        } else if v == "--from-file" || (short_bundle(v) && v.contains('f')) {
            from_file = true;
        } else if v.starts_with('-') && v.len() > 1 {
            // A flag, or `-Ldir` with its value attached.
        } else if program.is_none() {
            program = Some(a);
        }
    }
    let Some(p) = program else {
        return;
    };
    if from_file {
        j.read(p, cwd, ctx);
        j.raise(
            Class::ScriptRun,
            format!("[shell.exec-arg.jq] `{name} -f` runs a program from a file"),
        );
        return;
    }
    // `env` and `$ENV` are the whole environment, one variable of it by any name.
    if identifiers(&p.value).contains(&"env") || p.value.contains("$ENV") {
        j.t.dumps_env = true;
    }
    if identifiers(&p.value)
        .iter()
        .any(|w| *w == "import" || *w == "include")
    {
        j.raise(
            Class::Opaque,
            format!(
                "[shell.exec-arg.jq] `{name}` program loads modules or data from files its \
                 search path names (`import`, `include`)"
            ),
        );
    }
}

/// A bundle of jq's one-letter flags (`-nr`, `-rf`), not a long option.
fn short_bundle(v: &str) -> bool {
    v.len() > 1
        && v.starts_with('-')
        && !v.starts_with("--")
        && !v.starts_with("-L")
        && v[1..].chars().all(|c| c.is_ascii_alphabetic())
}

/// The identifiers (and `$variables`) of a jq program outside its string literals and
/// comments.
fn identifiers(code: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    let mut start: Option<usize> = None;
    let mut comment = false;
    for (k, ch) in code.char_indices() {
        let word_char = ch.is_ascii_alphanumeric() || ch == '_' || ch == '$';
        if let Some(s) = start
            && !word_char
        {
            out.push(&code[s..k]);
            start = None;
        }
        if comment {
            comment = ch != '\n';
        } else if in_string {
            in_string = escaped || ch != '"';
            escaped = !escaped && ch == '\\';
        } else if ch == '"' {
            in_string = true;
        } else if ch == '#' {
            comment = true;
        } else if word_char && start.is_none() {
            start = Some(k);
        }
    }
    if let Some(s) = start {
        out.push(&code[s..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::identifiers;

    #[test]
    fn identifiers_outside_strings() {
        assert_eq!(
            identifiers("import \".claude\" as $x; $x"),
            ["import", "as", "$x", "$x"]
        );
        assert_eq!(identifiers(".a | \"import\" # include"), ["a"]);
        assert_eq!(identifiers("\"a\\\"b\" | include"), ["include"]);
    }
}
