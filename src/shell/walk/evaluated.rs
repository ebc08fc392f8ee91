//! Parts of words and compound commands whose text bash evaluates again when it runs (see
//! `shell::evaluated`): array subscripts, `${s:offset}`, `${!name}`, `${x@P}`, `$((...))`,
//! `$[...]`, `(( ))`, and the arithmetic and `-v` operands of `[[ ]]`. Each that runs code is an
//! opaque segment of its own, as a command substitution inside arithmetic is.

use super::{Scope, Vars, Walker};
use crate::shell::evaluated::{
    arith, arith_reason, as_code, name, name_reason, names_run_code, subscript, subscript_reason,
};
use crate::shell::words;
use rable::{Node, NodeKind};

/// `[[ ]]` operators whose operands are arithmetic.
const ARITH_TESTS: &[&str] = &["-eq", "-ne", "-lt", "-le", "-gt", "-ge"];

/// What bash does with a `[[ ]]` operand.
#[derive(Clone, Copy)]
enum Operand {
    Arith,
    Name,
}

impl Walker<'_> {
    /// The parts of word `w` that bash evaluates again and that run code.
    pub(super) fn evaluated_word(&mut self, w: &Node, scope: &Scope) {
        let NodeKind::Word { value, parts, .. } = &w.kind else {
            return;
        };
        if value.contains("$[") && deprecated_arith(value, &scope.vars) {
            self.push_opaque(value, &arith_reason(value), &scope.via);
        }
        for p in parts {
            if let Some(why) = part(p, value, &scope.vars) {
                self.push_opaque(value, &why, &scope.via);
            }
            // Quotes in a subscript do not keep bash from expanding it (`${a['$(id)']}`).
            if let Some(sub) = param(p).and_then(subscript)
                && runs_commands(sub)
            {
                let code = as_code(sub).unwrap_or_else(|| format!(": {sub}"));
                self.expansion_text(&code, "${...}", scope);
            }
            // An expansion nested in an operand (`${x:-${y@P}}`); one with a command
            // substitution is walked by `word_nested`.
            if let Some(arg) = param_operand(p)
                && (arg.contains("${") || arg.contains("$["))
                && !runs_commands(arg)
            {
                self.expansion_text(&format!(": {arg}"), "${...}", scope);
            }
        }
    }

    /// Text inside a parameter expansion that the parser keeps as text (a subscript, an
    /// operand: `${a[$(id)]}`, `${x:-${y@P}}`), walked as `code`, the arguments of `:`, found `via` it.
    fn expansion_text(&mut self, code: &str, via: &str, scope: &Scope) {
        let mut inner = Scope {
            cwd: scope.cwd.clone(),
            depth: scope.depth + 1,
            via: via.into(),
            vars: scope.vars.clone(),
        };
        self.source(code, &mut inner);
    }

    /// `(( ))` and `for (( ))` text that names a variable whose value runs code (a command
    /// substitution in the text itself is `[shell.subst.arith]`).
    pub(super) fn arith_names(&mut self, t: &str, scope: &Scope) {
        if names_run_code(t, &scope.vars) {
            self.push_opaque(t, &arith_reason(t), &scope.via);
        }
    }

    /// A `[[ ]]` node: its terms' parts, the operands of an arithmetic test, and the name of
    /// `-v` and `-R`.
    pub(super) fn evaluated_test(&mut self, n: &Node, scope: &Scope) {
        match &n.kind {
            NodeKind::CondTerm { value, .. } if value.contains('$') => {
                if let Some(w) = term_node(value) {
                    self.evaluated_word(&w, scope);
                }
            }
            NodeKind::BinaryTest { op, left, right } if ARITH_TESTS.contains(&op.as_str()) => {
                self.test_operand(left, Operand::Arith, scope);
                self.test_operand(right, Operand::Arith, scope);
            }
            NodeKind::UnaryTest { op, operand } if matches!(op.as_str(), "-v" | "-R") => {
                self.test_operand(operand, Operand::Name, scope);
            }
            _ => {}
        }
    }

    /// One operand of a test, by what bash does with its value.
    fn test_operand(&mut self, n: &Node, how: Operand, scope: &Scope) {
        let NodeKind::CondTerm { value, .. } = &n.kind else {
            return;
        };
        let Some(node) = term_node(value) else {
            self.push_opaque(
                value,
                "[shell.unsupported] test operand not understood",
                &scope.via,
            );
            return;
        };
        let w = words::convert(&node, &self.env(scope));
        let why = match how {
            Operand::Arith if arith(&w.value, &scope.vars) => arith_reason(&w.display),
            Operand::Name if name(&w.value, &scope.vars) => name_reason(&w.display),
            Operand::Arith | Operand::Name => return,
        };
        self.push_opaque(value, &why, &scope.via);
        if let Some(code) = as_code(&w.value).filter(|_| !w.subst) {
            self.expansion_text(&code, "[[ ]]", scope);
        }
    }
}

/// A `[[ ]]` term as the word node it is.
fn term_node(raw: &str) -> Option<Node> {
    let nodes = rable::parse(&format!(": {raw}"), false).ok()?;
    match &nodes.first()?.kind {
        NodeKind::Command { words, .. } if words.len() == 2 => words.get(1).cloned(),
        _ => None,
    }
}

/// Why one part of a word runs code when bash expands it, if it does.
fn part(p: &Node, word: &str, vars: &Vars) -> Option<String> {
    match &p.kind {
        NodeKind::ParamExpansion { param, op, arg } => {
            expansion(param, op.as_deref(), arg.as_deref(), vars)
        }
        NodeKind::ParamIndirect { param, op, arg } => {
            expansion(param, op.as_deref(), arg.as_deref(), vars).or_else(|| {
                let target = vars.get(param.as_str())?;
                name(&target.value, vars).then(|| {
                    format!(
                        "[shell.eval.indirect] `${{!{param}}}` names `{}`, whose subscript runs code when bash resolves it",
                        target.value
                    )
                })
            })
        }
        NodeKind::ParamLength { param } => subscript_runs(param, vars),
        // The part's span is not always kept, so the names are looked for in the whole word.
        NodeKind::ArithmeticExpansion { .. } => {
            names_run_code(word, vars).then(|| arith_reason(word))
        }
        _ => None,
    }
}

/// The parameter a part expands, subscript included.
fn param(p: &Node) -> Option<&str> {
    match &p.kind {
        NodeKind::ParamExpansion { param, .. }
        | NodeKind::ParamIndirect { param, .. }
        | NodeKind::ParamLength { param } => Some(param),
        _ => None,
    }
}

/// The operand of `${param op arg}`.
fn param_operand(p: &Node) -> Option<&str> {
    match &p.kind {
        NodeKind::ParamExpansion { arg, .. } | NodeKind::ParamIndirect { arg, .. } => {
            arg.as_deref()
        }
        _ => None,
    }
}

/// Text with a command or process substitution in it.
fn runs_commands(text: &str) -> bool {
    text.contains("$(") || text.contains('`') || text.contains("<(")
}

/// `${param op arg}`: a prompt expansion, a subscript, or a substring's arithmetic offset.
fn expansion(param: &str, op: Option<&str>, arg: Option<&str>, vars: &Vars) -> Option<String> {
    if op == Some("@") && arg == Some("P") {
        return Some(format!(
            "[shell.eval.prompt] `${{{param}@P}}` expands a value as a prompt, which runs the command substitutions in it"
        ));
    }
    if let Some(why) = subscript_runs(param, vars) {
        return Some(why);
    }
    let offset = arg.filter(|_| op == Some(":"))?;
    arith(offset, vars).then(|| arith_reason(offset))
}

/// The subscript of `name[...]` runs code when bash expands and evaluates it.
fn subscript_runs(param: &str, vars: &Vars) -> Option<String> {
    let s = subscript(param)?;
    arith(s, vars).then(|| subscript_reason(param))
}

/// `$[...]`, bash's old arithmetic, which the parser keeps as literal text.
fn deprecated_arith(word: &str, vars: &Vars) -> bool {
    word.split("$[").skip(1).any(|rest| arith(rest, vars))
}
