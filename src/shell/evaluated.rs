//! Text that bash evaluates a second time when the command runs, after the parse this analysis
//! sees: arithmetic (`$((x))`, `(( ))`, `let`, `[[ x -eq y ]]`, `${s:x}`, an indexed array's
//! subscript) and variable names, which may carry a subscript (`printf -v`, `read`, `declare`,
//! `unset`, `test -v`, `${!x}`). Bash expands a subscript when it evaluates it, so a `$(...)`
//! that was quoted at parse time runs then (`printf -v 'a[$(id)]' x`), and so does one in the
//! value of a variable that arithmetic names (`x='a[$(id)]'; echo $((x))`): arithmetic takes a
//! variable's value as an expression in turn. Values are known only for the variables of
//! `walk::vars`; one from the environment or from `read` is not followed.

use crate::shell::walk::Vars;
use crate::shell::words::Word;

/// Variables followed through the names in their values at most this deep (`y=x; (( y ))`).
const MAX_DEPTH: usize = 8;

/// Arithmetic text that runs code when bash evaluates it: it holds a command substitution or a
/// backquote (quoted at parse time, or the output of one), or names a variable whose known
/// value does (see [`names_run_code`]).
pub(crate) fn arith(text: &str, vars: &Vars) -> bool {
    text.contains("$(") || text.contains('`') || names_run_code(text, vars)
}

/// A variable name, as the builtins that set or test one take it, that runs code when bash
/// resolves it: anything left to expand in it (`$`, a backquote), or a subscript whose
/// arithmetic runs code. A plain name (`line`, `a[0]`, `a[i]` with `i` harmless) does not.
pub(crate) fn name(text: &str, vars: &Vars) -> bool {
    if text.contains('$') || text.contains('`') {
        return true;
    }
    subscript(text).is_some_and(|s| arith(s, vars))
}

/// The subscript of `name[subscript]`, if the text has one.
pub(crate) fn subscript(text: &str) -> Option<&str> {
    let open = text.find('[')?;
    let close = text.rfind(']').filter(|c| *c > open)?;
    text.get(open + 1..close)
}

/// Whether a name in `text` is a variable whose known value holds `$` or a backquote, directly
/// or through the names in that value. Arithmetic evaluates such a value as an expression,
/// and an array subscript in it is expanded then, running what it holds; the pieces may be
/// split over several variables (`x='a[$'; y='(id)]'; $(($x$y))`), so any `$` counts.
pub(crate) fn names_run_code(text: &str, vars: &Vars) -> bool {
    runs_at(text, vars, 0)
}

fn runs_at(text: &str, vars: &Vars, depth: usize) -> bool {
    identifiers(text).any(|n| {
        vars.get(n).is_some_and(|v| {
            let value = v.value.as_str();
            value.contains('$')
                || value.contains('`')
                || (depth < MAX_DEPTH && runs_at(value, vars, depth + 1))
        })
    })
}

/// The shell identifiers in `text` (`x`, `_a1`), each not part of a longer word or number.
fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.split(move |c: char| !ident(c))
        .filter(|t| t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
}

/// A value the line passes to another program (a leading assignment, `env NAME=VALUE`,
/// `export`) that holds a literal `$` or backquote: a child shell that evaluates it as
/// arithmetic or a name runs the code, and the analysis does not follow values into it.
pub(crate) fn passes_code(w: &Word, value: &str) -> bool {
    !w.unknown && !w.subst && (value.contains('$') || value.contains('`'))
}

/// Text that runs code when bash evaluates it, as a command line whose substitutions are that
/// code (`: "a[$(id)]"`), so that what they run is judged like any command: a download piped
/// into a shell there is one. Quotes in the text stay text, as they do when bash expands a
/// subscript. `None` when the text holds no substitution.
pub(crate) fn as_code(text: &str) -> Option<String> {
    (text.contains("$(") || text.contains('`')).then(|| {
        let quoted = text.replace('\\', "\\\\").replace('"', "\\\"");
        format!(": \"{quoted}\"")
    })
}

/// The finding for arithmetic `text` that runs code.
pub(crate) fn arith_reason(text: &str) -> String {
    format!(
        "[shell.eval.arith] `{text}` is evaluated as arithmetic when it runs, and a subscript or a variable's value in it runs code"
    )
}

/// The finding for a variable name `text` that runs code.
pub(crate) fn name_reason(text: &str) -> String {
    format!(
        "[shell.eval.name] `{text}` is resolved as a variable name when it runs, and what it holds runs code"
    )
}

/// The finding for a subscript of `param` (`a[x]`) that runs code.
pub(crate) fn subscript_reason(param: &str) -> String {
    format!(
        "[shell.eval.subscript] the subscript of `{param}` is expanded and evaluated when it runs, and it runs code"
    )
}

/// The finding for a value with code in it passed to another program as `lhs`.
pub(crate) fn passed_reason(lhs: &str) -> String {
    format!(
        "[shell.eval.env] `{lhs}` is passed a value holding `$` or a backquote, which a shell that evaluates it as arithmetic or a name runs"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::walk::vars::VarVal;

    fn vars(pairs: &[(&str, &str)]) -> Vars {
        pairs
            .iter()
            .map(|(k, v)| {
                (
                    k.to_string(),
                    VarVal {
                        value: v.to_string(),
                        glob: false,
                    },
                )
            })
            .collect()
    }

    #[test]
    fn arithmetic_text() {
        let none = Vars::new();
        assert!(arith("a[$(id)]", &none));
        assert!(arith("a[`id`]", &none));
        assert!(!arith("i+1", &none));
        assert!(!arith("0x1f + 16#ff", &none));
        let v = vars(&[("x", "a[$(id)]"), ("y", "x"), ("n", "5"), ("p", "a[$")]);
        assert!(arith("x", &v));
        assert!(arith("y * 2", &v), "through another name");
        assert!(arith("$p", &v), "a piece of a split payload");
        assert!(!arith("n + 1", &v));
    }

    #[test]
    fn names() {
        let v = vars(&[("x", "a[$(id)]"), ("i", "2")]);
        assert!(name("a[$(id)]", &v));
        assert!(name("a[$i]", &v), "a subscript with an expansion");
        assert!(name("$n", &v), "a name only known when it runs");
        assert!(name("a[x]", &v));
        assert!(!name("line", &v));
        assert!(!name("a[i]", &v));
        assert!(!name("a[0]", &v));
    }

    #[test]
    fn code_of_evaluated_text() {
        assert_eq!(
            as_code(r#"a['$(id "x")']"#).as_deref(),
            Some(r#": "a['$(id \"x\")']""#)
        );
        assert_eq!(as_code("a[i]"), None);
    }

    #[test]
    fn cycles_end() {
        let v = vars(&[("x", "y"), ("y", "x")]);
        assert!(!arith("x", &v));
    }
}
