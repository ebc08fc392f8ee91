//! Compound commands: lists, conditionals, loops, functions, groups and
//! `[[ ]]` tests, walked down to their simple commands while the working
//! directory is carried from one command to the next.

use super::{Cwd, Scope, Walker, vars};
use crate::shell::Class;
use rable::{ListOperator, Node, NodeKind};

impl Walker<'_> {
    pub(super) fn node(&mut self, n: &Node, scope: &mut Scope) {
        if scope.depth > self.budget {
            self.push_opaque(
                "",
                "[shell.limit.depth] nested deeper than the analysis limit",
                &scope.via,
            );
            return;
        }
        if self.control(n, scope) {
            return;
        }
        match &n.kind {
            NodeKind::Command {
                assignments,
                words,
                redirects,
            } => self.simple(assignments, words, redirects, scope, None),
            NodeKind::Pipeline { commands, .. } => self.pipeline(commands, scope),
            NodeKind::List { items } => self.list(items, scope),
            NodeKind::Function { name, body } => self.function(name, body, scope),
            NodeKind::Subshell { body, redirects } | NodeKind::BraceGroup { body, redirects } => {
                let mut inner = scope.clone();
                self.node(body, &mut inner);
                self.redirects_only(redirects, scope);
                if matches!(n.kind, NodeKind::BraceGroup { .. }) {
                    scope.cwd = inner.cwd;
                    scope.vars = inner.vars;
                }
            }
            NodeKind::Coproc { command, .. } => self.node(command, &mut deeper(scope)),
            NodeKind::Negation { pipeline } | NodeKind::Time { pipeline, .. } => {
                self.node(pipeline, scope)
            }
            NodeKind::ArithmeticCommand {
                raw_content,
                redirects,
                ..
            } => {
                self.arith_text(raw_content, scope);
                self.redirects_only(redirects, scope);
            }
            NodeKind::ConditionalExpr { body, redirects } => {
                self.cond(body, scope);
                self.redirects_only(redirects, scope);
            }
            NodeKind::Comment { .. } | NodeKind::Empty => {}
            _ => self.push_opaque(
                "",
                "[shell.unsupported] construct not understood by the analysis",
                &scope.via,
            ),
        }
    }

    /// A list: each command in turn, the working directory carried along; after `||` or `;`
    /// the directory may be either.
    /// Variables set by an item that may not run (after `&&` or `||`) are forgotten unless
    /// unchanged; a background item (`&`) runs in a subshell and sets none here.
    fn list(&mut self, items: &[rable::ListItem], scope: &mut Scope) {
        let mut conditional = false;
        for item in items {
            let before = scope.cwd.clone();
            let vars_before = scope.vars.clone();
            self.node(&item.command, scope);
            // The last item's directory is the list's: the list's own operator, in the list
            // around it, says whether what follows may run in the one before.
            let keep_only_new = matches!(item.operator, Some(ListOperator::And) | None);
            if !keep_only_new && scope.cwd != before {
                scope.cwd = merge_cwd(&before, &scope.cwd);
            }
            match item.operator {
                Some(ListOperator::Background) => scope.vars = vars_before,
                _ if conditional => vars::merge(&mut scope.vars, &vars_before),
                _ => {}
            }
            conditional = matches!(item.operator, Some(ListOperator::And | ListOperator::Or));
        }
    }

    /// Conditionals, loops and `case`: their parts walked one level deeper, their working
    /// directory merged back. `false` for any other node.
    fn control(&mut self, n: &Node, scope: &mut Scope) -> bool {
        let mut deeper = deeper(scope);
        let redirects = match &n.kind {
            NodeKind::If {
                condition,
                then_body,
                else_body,
                redirects,
            } => {
                self.node(condition, &mut deeper);
                self.node(then_body, &mut deeper);
                if let Some(e) = else_body {
                    self.node(e, &mut deeper);
                }
                redirects
            }
            NodeKind::While {
                condition,
                body,
                redirects,
            }
            | NodeKind::Until {
                condition,
                body,
                redirects,
            } => {
                self.node(condition, &mut deeper);
                self.node(body, &mut deeper);
                redirects
            }
            NodeKind::For {
                var,
                words,
                body,
                redirects,
            } => {
                self.for_loop(var, words.as_deref(), body, scope, &mut deeper);
                redirects
            }
            NodeKind::Select {
                var,
                words,
                body,
                redirects,
            } => {
                if let Some(ws) = words {
                    self.words_nested(ws, scope);
                }
                // The user picks the value.
                exec_variable(self, var, "select");
                deeper.vars.remove(var);
                self.node(body, &mut deeper);
                redirects
            }
            NodeKind::ForArith {
                init,
                cond,
                incr,
                body,
                redirects,
            } => {
                for t in [init, cond, incr] {
                    self.arith_text(t, scope);
                }
                self.node(body, &mut deeper);
                redirects
            }
            NodeKind::Case {
                word,
                patterns,
                redirects,
            } => {
                self.case(word, patterns, scope, &mut deeper);
                redirects
            }
            _ => return false,
        };
        self.redirects_only(redirects, scope);
        settle(scope, &deeper);
        true
    }

    /// `for VAR in WORDS`: the body once per word with the variable set to it, when the words
    /// are known and few; once with the variable unknown otherwise. The variable is unknown
    /// after the loop.
    fn for_loop(
        &mut self,
        var: &str,
        words: Option<&[Node]>,
        body: &Node,
        scope: &Scope,
        deeper: &mut Scope,
    ) {
        exec_variable(self, var, "for");
        let env = self.env(scope);
        let values = words.and_then(|ws| {
            let converted: Vec<_> = ws
                .iter()
                .map(|n| crate::shell::words::convert(n, &env))
                .collect();
            vars::loop_values(&converted)
        });
        if let Some(ws) = words {
            self.words_nested(ws, scope);
        }
        match values {
            Some(vs) if !vs.is_empty() => {
                for v in vs {
                    deeper.vars.insert(var.to_string(), v);
                    self.node(body, deeper);
                }
            }
            Some(_) => {}
            None => {
                deeper.vars.remove(var);
                self.node(body, deeper);
            }
        }
        deeper.vars.remove(var);
    }

    /// `case WORD in PATTERNS) BODY;; esac`: the word and patterns at this level, the bodies
    /// one deeper.
    fn case(
        &mut self,
        word: &Node,
        patterns: &[rable::CasePattern],
        scope: &Scope,
        deeper: &mut Scope,
    ) {
        self.words_nested(std::slice::from_ref(word), scope);
        for p in patterns {
            self.words_nested(&p.patterns, scope);
            if let Some(b) = &p.body {
                self.node(b, deeper);
            }
        }
    }

    /// A function's body, walked where it is defined; one that calls itself is a fork bomb.
    fn function(&mut self, name: &str, body: &Node, scope: &Scope) {
        self.shadows_output |= crate::shell::words::PREDICTED.contains(&name);
        let start = self.out.len();
        self.node(body, &mut deeper(scope));
        let recursive = self.out.get(start..).is_some_and(|segs| {
            segs.iter()
                .any(|s| s.seg.text == *name || s.seg.text.starts_with(&format!("{name} ")))
        });
        if recursive {
            self.push_class(
                name,
                Class::Malicious,
                format!("[shell.malicious.fork-bomb] function `{name}` calls itself"),
                &scope.via,
            );
        }
    }

    fn cond(&mut self, n: &Node, scope: &mut Scope) {
        self.evaluated_test(n, scope);
        match &n.kind {
            NodeKind::CondTerm { value, .. } => {
                if value.contains("$(") || value.contains('`') || value.contains("<(") {
                    let mut inner = Scope {
                        cwd: scope.cwd.clone(),
                        depth: scope.depth + 1,
                        via: "[[ ]]".into(),
                        vars: scope.vars.clone(),
                    };
                    self.source(&format!(": {value}"), &mut inner);
                }
            }
            NodeKind::UnaryTest { operand, .. } => self.cond(operand, scope),
            NodeKind::BinaryTest { left, right, .. }
            | NodeKind::CondAnd { left, right }
            | NodeKind::CondOr { left, right } => {
                self.cond(left, scope);
                self.cond(right, scope);
            }
            NodeKind::CondNot { operand } => self.cond(operand, scope),
            NodeKind::CondParen { inner } => self.cond(inner, scope),
            NodeKind::Word { .. } => {
                self.words_nested(std::slice::from_ref(n), scope);
            }
            _ => self.push_opaque(
                "[[ ]]",
                "[shell.unsupported] test expression not understood",
                &scope.via,
            ),
        }
    }

    fn arith_text(&mut self, t: &str, scope: &Scope) {
        if t.contains("$(") || t.contains('`') {
            self.push_opaque(
                t,
                "[shell.subst.arith] command substitution inside arithmetic",
                &scope.via,
            );
        }
        self.arith_names(t, scope);
    }

    fn redirects_only(&mut self, redirects: &[Node], scope: &mut Scope) {
        if redirects.is_empty() {
            return;
        }
        self.simple(&[], &[], redirects, scope, Some("compound command"));
    }
}

fn merge_cwd(a: &Cwd, b: &Cwd) -> Cwd {
    match (a, b) {
        (Some(x), Some(y)) => {
            let mut v = x.clone();
            for p in y {
                if !v.contains(p) {
                    v.push(p.clone());
                }
            }
            if v.len() > 4 { None } else { Some(v) }
        }
        _ => None,
    }
}

/// After a conditional or loop body: a `cd` inside may or may not have run.
/// The scope one level down: the same directory and construct.
fn deeper(scope: &Scope) -> Scope {
    Scope {
        cwd: scope.cwd.clone(),
        depth: scope.depth + 1,
        via: scope.via.clone(),
        vars: scope.vars.clone(),
    }
}

fn settle(scope: &mut Scope, inner: &Scope) {
    if inner.cwd != scope.cwd {
        scope.cwd = merge_cwd(&scope.cwd, &inner.cwd);
    }
    vars::merge(&mut scope.vars, &inner.vars);
}

/// A loop variable that changes which code later commands run (`for HOME in DIR`, `select
/// PATH in ...`): the variable keeps its export, so every command in the body runs with it.
fn exec_variable(w: &mut super::Walker<'_>, var: &str, construct: &str) {
    if let Some(why) = crate::shell::tables::exec_env(var, "x") {
        let reason = format!("[shell.env.exec] `{construct} {var}` sets `{var}`, which {why}");
        w.push_opaque(&format!("{construct} {var}"), &reason, construct);
    }
}
