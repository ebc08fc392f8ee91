//! Builtins and assignments whose arguments bash evaluates again when it runs (see
//! `shell::evaluated`): the names `printf -v`, `read`, `mapfile`, `wait -p`, `unset`,
//! `getopts`, `test -v` and `declare` resolve, the arithmetic of `let` and `shift`, `mapfile -C`
//! callbacks, `declare -i`/`-n`, arrays given as strings, and assignment subscripts. Each that
//! runs code is opaque: the quoting that kept it from the parser does not keep it from bash.

use super::{Cmd, Judge};
use crate::shell::Class;
use crate::shell::commands::outputs::attached_value;
use crate::shell::evaluated::{
    arith, arith_reason, as_code, name, name_reason, passed_reason, passes_code, subscript,
    subscript_reason,
};
use crate::shell::walk::Vars;
use crate::shell::words::Word;

/// The builtin at `leader`, by what it evaluates.
pub(super) fn builtins(j: &mut Judge, cmd: &Cmd<'_>, leader: usize, vars: &Vars) {
    let Some((lead, args)) = cmd.argv.get(leader..).and_then(<[Word]>::split_first) else {
        return;
    };
    match lead.value.as_str() {
        "printf" => names(j, &option_values(args, "v", 'v'), vars),
        "wait" => names(j, &option_values(args, "p", 'p'), vars),
        "read" => {
            let (opts, operands) = getopt(args, "adinNptu");
            names(j, values_of(&opts, 'a'), vars);
            names(j, operands.iter(), vars);
        }
        "mapfile" | "readarray" => {
            let (opts, operands) = getopt(args, "dnOsuCc");
            if opts.iter().any(|(c, _)| *c == 'C') {
                j.raise(
                    Class::Opaque,
                    format!(
                        "[shell.eval.callback] `{} -C` runs its callback as code",
                        lead.value
                    ),
                );
            }
            names(j, operands.iter(), vars);
        }
        "unset" => names(j, getopt(args, "").1.iter(), vars),
        "getopts" => names(j, args.get(1), vars),
        "test" | "[" => names(j, tested_names(args), vars),
        "let" | "shift" => {
            for a in args.iter().filter(|a| arith(&a.value, vars)) {
                runs(j, a, &a.value, arith_reason(&a.display));
            }
        }
        "declare" | "typeset" | "local" | "export" | "readonly" => {
            declared(j, &lead.value, args, vars)
        }
        _ => {}
    }
}

/// Leading assignments: a subscript that runs code (`a[x]=1`, `a=([x]=1)`), and a value with a
/// literal `$` or backquote handed to the command's environment.
pub(super) fn assignments(j: &mut Judge, cmd: &Cmd<'_>, vars: &Vars) {
    for a in cmd.assigns {
        let Some((lhs, value)) = a.value.split_once('=') else {
            continue;
        };
        let lhs = lhs.strip_suffix('+').unwrap_or(lhs);
        // The parser expands the subscript once, as it expands `${a[$i]}`; what bash then
        // evaluates as arithmetic is what matters here.
        if subscript(lhs).is_some_and(|s| arith(s, vars)) {
            j.raise(Class::Opaque, subscript_reason(lhs));
        }
        rebinding(j, lhs);
        if a.raw.starts_with(&format!("{lhs}=(")) || a.raw.starts_with(&format!("{lhs}+=(")) {
            compound_subscripts(j, lhs, value, vars);
        } else if !cmd.argv.is_empty() && passes_code(a, value) {
            j.raise(Class::Opaque, passed_reason(lhs));
        }
    }
}

/// `declare` and its kin: the names they set, `-i` (every later assignment is arithmetic),
/// `-n` (the value is a name), an array given as a string, and exported values.
fn declared(j: &mut Judge, builtin: &str, args: &[Word], vars: &Vars) {
    let is_flag =
        |a: &Word| a.value.len() > 1 && a.value.starts_with(['-', '+']) && a.value != "--";
    let flags: String = args
        .iter()
        .filter(|a| is_flag(a) && a.value.starts_with('-'))
        .flat_map(|a| a.value.chars().skip(1))
        .collect();
    let typed = matches!(builtin, "declare" | "typeset" | "local");
    for a in args.iter().filter(|a| !is_flag(a) && a.value != "--") {
        let (lhs, value) = match a.value.split_once('=') {
            Some((n, v)) => (n.strip_suffix('+').unwrap_or(n), Some(v)),
            None => (a.value.as_str(), None),
        };
        if name(lhs, vars) {
            runs(j, a, lhs, name_reason(lhs));
        }
        rebinding(j, lhs);
        if typed && flags.contains('i') {
            j.raise(
                Class::Opaque,
                format!(
                    "[shell.eval.integer] `{builtin} -i {lhs}` makes every later assignment to it arithmetic, which runs the code a subscript in the value holds"
                ),
            );
        }
        if typed && flags.contains('n') {
            nameref(j, builtin, a, value, vars);
        }
        let exported = builtin == "export" || flags.contains('x');
        let Some(value) = value else {
            // `x='a[$(id)]'; export x`: the known value goes to the children.
            let known = vars.get(lhs).map(|v| Word::literal(&v.value));
            if exported && known.is_some_and(|k| passes_code(&k, &k.value)) {
                j.raise(Class::Opaque, passed_reason(lhs));
            }
            continue;
        };
        if a.raw.starts_with(&format!("{lhs}=(")) || a.raw.starts_with(&format!("{lhs}+=(")) {
            compound_subscripts(j, lhs, value, vars);
        } else if value.starts_with('(') && (a.subst || value.contains(['$', '`'])) {
            j.raise(
                Class::Opaque,
                format!(
                    "[shell.eval.compound] `{builtin}` parses the string given to `{lhs}` as an array when it runs, expanding what it holds"
                ),
            );
        }
        if exported && passes_code(a, value) {
            j.raise(Class::Opaque, passed_reason(lhs));
        }
    }
}

/// An element of bash's table of command paths (`BASH_CMDS[cat]=/bin/cp`, as `hash -p` does)
/// or of its aliases: the command name then runs something else.
fn rebinding(j: &mut Judge, lhs: &str) {
    let table = lhs.split('[').next().unwrap_or(lhs);
    if matches!(table, "BASH_CMDS" | "BASH_ALIASES") {
        j.raise(
            Class::Opaque,
            format!("[shell.rebind] `{lhs}` binds a command name to another program"),
        );
    }
}

/// `declare -n NAME[=TARGET]`: the target is resolved as a name whenever NAME is used; without
/// one, the next assignment to NAME sets it.
fn nameref(j: &mut Judge, builtin: &str, a: &Word, target: Option<&str>, vars: &Vars) {
    let lhs = a.value.split('=').next().unwrap_or("");
    match target {
        None => j.raise(
            Class::Opaque,
            format!(
                "[shell.eval.nameref] `{builtin} -n {lhs}` has no target: the next assignment to it names the variable it resolves to"
            ),
        ),
        Some(t) if name(t, vars) => runs(j, a, t, name_reason(t)),
        Some(_) => {}
    }
}

/// The subscripts of an array literal (`a=([x]=1 [$(id)]=2)`), each evaluated as arithmetic
/// when the array is made.
fn compound_subscripts(j: &mut Judge, lhs: &str, value: &str, vars: &Vars) {
    let runs = value
        .split('[')
        .skip(1)
        .filter_map(|rest| rest.split_once(']').map(|(s, _)| s))
        .any(|s| arith(s, vars));
    if runs {
        j.raise(
            Class::Opaque,
            format!(
                "[shell.eval.subscript] a subscript in the array given to `{lhs}` is expanded and evaluated when it runs, and it runs code"
            ),
        );
    }
}

/// Raise for each word that names a variable in a way that runs code.
fn names<'a>(j: &mut Judge, words: impl IntoIterator<Item = &'a Word>, vars: &Vars) {
    for w in words {
        if name(&w.value, vars) {
            runs(j, w, &w.value, name_reason(&w.display));
        }
    }
}

/// Raise `why` for the evaluated `text` of word `w`, and walk what its substitutions run (see
/// `as_code`); a substitution the parser saw is walked already.
fn runs(j: &mut Judge, w: &Word, text: &str, why: String) {
    j.raise(Class::Opaque, why);
    if let Some(code) = as_code(text).filter(|_| !w.subst) {
        j.code(&code, "evaluated text");
    }
}

/// The operands of `test -v NAME` and `test -R NAME`.
fn tested_names(args: &[Word]) -> impl Iterator<Item = &Word> {
    args.windows(2)
        .filter(|p| matches!(p.first().map(|a| a.value.as_str()), Some("-v" | "-R")))
        .filter_map(|p| p.get(1))
}

/// The values of option `letter` among a builtin's options, `valued` its letters that take one.
fn option_values(args: &[Word], valued: &str, letter: char) -> Vec<Word> {
    values_of(&getopt(args, valued).0, letter)
        .cloned()
        .collect()
}

fn values_of(opts: &[(char, Option<Word>)], letter: char) -> impl Iterator<Item = &Word> {
    opts.iter()
        .filter(move |(c, _)| *c == letter)
        .filter_map(|(_, v)| v.as_ref())
}

/// A builtin's options as bash's own getopt reads them, up to the first operand or `--`: each
/// letter, with its value when it is one of `valued` (`-p PROMPT`, `-pPROMPT`, `-ra NAME`);
/// then the operands.
fn getopt<'a>(args: &'a [Word], valued: &str) -> (Vec<(char, Option<Word>)>, &'a [Word]) {
    let mut opts = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        if a.value == "--" {
            break;
        }
        let Some(body) = a.value.strip_prefix('-').filter(|b| !b.is_empty()) else {
            i -= 1;
            break;
        };
        for (at, c) in body.char_indices() {
            if !valued.contains(c) {
                opts.push((c, None));
                continue;
            }
            let rest = body.get(at + c.len_utf8()..).unwrap_or("");
            let value = if rest.is_empty() {
                i += 1;
                args.get(i - 1).cloned()
            } else {
                Some(attached_value(a, rest))
            };
            opts.push((c, value));
            break;
        }
    }
    (opts, args.get(i..).unwrap_or(&[]))
}

#[cfg(test)]
mod tests {
    use super::getopt;
    use crate::shell::words::Word;

    fn lit(s: &str) -> Vec<Word> {
        s.split(' ').map(Word::literal).collect()
    }

    #[test]
    fn getopt_bundles_and_values() {
        let args = lit("-ra arr -pPROMPT -- x");
        let (opts, rest) = getopt(&args, "adp");
        let got: Vec<(char, Option<&str>)> = opts
            .iter()
            .map(|(c, v)| (*c, v.as_ref().map(|w| w.value.as_str())))
            .collect();
        assert_eq!(
            got,
            [('r', None), ('a', Some("arr")), ('p', Some("PROMPT"))]
        );
        assert_eq!(rest.len(), 1);
        let args = lit("line other");
        assert_eq!(getopt(&args, "a").1.len(), 2);
    }
}
