//! Shell variables whose value the analysis knows: those a plain assignment (`X=value`), an
//! `export X=value` or `readonly X=value`, or a `for` loop over literal words gave a value
//! earlier on the same line. Anything else that can set a variable (`read`, `mapfile`,
//! `declare`, `printf -v`, an assignment in a branch that may not run) forgets it, and a
//! variable that is not known is judged as unknown: a path built from it asks (see
//! `classify::variables`).

use super::Scope;
use crate::shell::words::Word;
use std::collections::BTreeMap;

/// A known value; `glob` when it came from a pattern (`for f in *.rs`), so the shell expands
/// it to the matches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct VarVal {
    pub value: String,
    pub glob: bool,
}

/// Known variables by name.
pub(crate) type Vars = BTreeMap<String, VarVal>;

/// Loop words walked one by one at most; a longer list leaves the variable unknown.
const MAX_LOOP_VALUES: usize = 8;

/// A valid variable name (`X`, `_a1`), not an array element or an append (`a[0]=`, `X+=`).
fn name_ok(n: &str) -> bool {
    let mut c = n.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
}

/// The assignments of a command without words (`X=~/.netrc Y=$X`), in order: a literal value
/// is remembered, with `~` expanded as the shell expands it after `=` and `:`; anything else (an
/// array, a substitution, an unknown expansion) forgets the variable.
pub(crate) fn assign(scope: &mut Scope, assigns: &[Word]) {
    for a in assigns {
        let Some((name, raw_value)) = a.raw.split_once('=') else {
            continue;
        };
        let (name, append) = match name.strip_suffix('+') {
            Some(n) => (n, true),
            None => (name, false),
        };
        if !name_ok(name) {
            // `X[0]=v` sets what `$X` expands to: the variable is no longer known.
            if let Some(base) = name.split_once('[').map(|(b, _)| b).filter(|b| name_ok(b)) {
                scope.vars.remove(base);
            }
            continue;
        }
        // The word's value has `~` expanded as the shell expands it after `=` and `:`.
        let value = a.value.split_once('=').map_or("", |(_, v)| v).to_string();
        let known = !a.unknown && !a.subst && !raw_value.starts_with('(') && !append;
        if !known {
            scope.vars.remove(name);
            continue;
        }
        scope
            .vars
            .insert(name.to_string(), VarVal { value, glob: false });
    }
}

/// Builtins that set the variables they name.
const SETTERS: &[&str] = &[
    "read",
    "mapfile",
    "readarray",
    "getopts",
    "declare",
    "typeset",
    "local",
    "export",
    "readonly",
    "unset",
    "printf",
    "let",
];

/// A command that may set variables (`read x`, `declare X=1`, `printf -v x`): every name among
/// its arguments is forgotten.
pub(crate) fn forget(scope: &mut Scope, argv: &[Word]) {
    let Some(lead) = argv.first() else {
        return;
    };
    if !SETTERS.contains(&lead.value.as_str()) {
        return;
    }
    let args = argv.get(1..).unwrap_or(&[]);
    if matches!(lead.value.as_str(), "export" | "readonly")
        && args.iter().all(|a| !a.value.starts_with('-'))
    {
        exported(scope, args);
        return;
    }
    for a in args {
        let name = a.value.split(['=', '[', '+']).next().unwrap_or("");
        scope.vars.remove(name);
    }
}

/// Assignments before a builtin that sets variables (`X=v export X`, `X=v command readonly X`)
/// outlast the command, unlike those before any other: what they set is no longer known.
pub(crate) fn forget_persisting(scope: &mut Scope, assigns: &[Word], argv: &[Word]) {
    if assigns.is_empty() || !argv.iter().any(|a| SETTERS.contains(&a.value.as_str())) {
        return;
    }
    for a in assigns {
        let name = a.raw.split(['=', '[', '+']).next().unwrap_or("");
        scope.vars.remove(name);
    }
}

/// `export X=value` and `readonly X=value` set the variable as an assignment does (a literal
/// value is known, anything else forgets it); `export X` leaves its value as it was.
fn exported(scope: &mut Scope, args: &[Word]) {
    for a in args.iter().filter(|a| a.value.contains('=')) {
        let plain = a.raw.split_once('=').is_some_and(|(n, _)| name_ok(n));
        if plain {
            assign(scope, std::slice::from_ref(a));
        } else {
            let name = a.value.split(['=', '[', '+']).next().unwrap_or("");
            scope.vars.remove(name);
        }
    }
}

/// After a part that may or may not have run: only what both sides agree on stays known.
pub(crate) fn merge(into: &mut Vars, other: &Vars) {
    into.retain(|k, v| other.get(k) == Some(v));
}

/// The values a `for` loop gives its variable, one per word; `None` when a word is not known
/// before running or there are too many to walk the body for each.
pub(crate) fn loop_values(words: &[Word]) -> Option<Vec<VarVal>> {
    if words.len() > MAX_LOOP_VALUES || words.iter().any(|w| w.unknown || w.subst) {
        return None;
    }
    Some(
        words
            .iter()
            .map(|w| VarVal {
                value: w.value.clone(),
                glob: w.glob,
            })
            .collect(),
    )
}
