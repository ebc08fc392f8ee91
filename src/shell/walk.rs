//! Walk the syntax tree: find every simple command, follow substitutions
//! and re-parsed shell strings, and apply the rules that need more than one
//! segment (pipelines into interpreters, exfiltration, download then run).

use super::classify::{self, Cmd, Outcome};
use super::limits::{deceptive_char, opaque, shape};
use super::paths::{self, Zone};
use super::words::{self, Env, Word};
use super::{Analysis, Class, Segment, ShellContext, tables};
use rable::{ListOperator, Node, NodeKind};
use std::path::PathBuf;

/// Facts about a segment that rules spanning several segments need.
#[derive(Clone, Debug, Default)]
pub(crate) struct Traits {
    pub network: bool,
    pub decoder: bool,
    /// Reads commands from standard input (a shell or interpreter without script).
    pub stdin_code: bool,
    pub reads_secret: bool,
    pub dumps_env: bool,
    /// Text a literal `echo`/`printf` prints, for `echo '...' | sh`.
    pub prints: Option<String>,
    /// Base name of a file this segment downloads.
    pub download: Option<String>,
}

pub(crate) struct Seg {
    pub seg: Segment,
    pub t: Traits,
}

/// Candidate working directories; `None` when unknown.
pub(crate) type Cwd = Option<Vec<PathBuf>>;

#[derive(Clone)]
pub(crate) struct Scope {
    pub cwd: Cwd,
    pub depth: usize,
    pub via: String,
}

pub(crate) struct Walker<'c> {
    pub ctx: &'c ShellContext,
    budget: usize,
    pub out: Vec<Seg>,
}

pub(crate) fn analyze_top(command: &str, ctx: &ShellContext, budget: usize) -> Analysis {
    paths::reset_roots();
    let mut w = Walker {
        ctx,
        budget,
        out: Vec::new(),
    };
    if let Some(c) = deceptive_char(command) {
        w.push_opaque(
            command,
            &format!("[shell.deceptive-char] contains U+{:04X}, which renders like a separator or hides text", c as u32),
            "",
        );
    }
    let mut scope = Scope {
        cwd: Some(vec![ctx.cwd.clone()]),
        depth: 0,
        via: String::new(),
    };
    w.source(command, &mut scope);
    w.cross_rules();
    Analysis::from_segments(w.out.into_iter().map(|s| s.seg).collect())
}

/// Words bash would leave alone: a single simple command of plain ASCII characters (no quotes,
/// expansions, globs, operators, redirections, comments or assignments) that does not start
/// with a reserved word. Anything else goes to the parser.
pub(crate) fn plain_words(text: &str) -> Option<Vec<Word>> {
    const RESERVED: &[&str] = &[
        "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until",
        "do", "done", "in", "function", "time", "coproc",
    ];
    // `~` is literal except at the start of a word (assignments, which may expand it after
    // `:` or `=`, are not plain: `=` is not in the set).
    let plain = |b: u8| b.is_ascii_alphanumeric() || b" \t-_./:,+@%~".contains(&b);
    if text.len() > 512 || !text.bytes().all(plain) {
        return None;
    }
    let fields: Vec<&str> = text.split([' ', '\t']).filter(|f| !f.is_empty()).collect();
    if fields.iter().any(|f| f.starts_with('~')) {
        return None;
    }
    let first = fields.first()?;
    if RESERVED.contains(first) {
        return None;
    }
    Some(
        fields
            .into_iter()
            .map(|f| Word {
                raw: f.to_string(),
                display: f.to_string(),
                value: f.to_string(),
                exact: true,
                ..Word::default()
            })
            .collect(),
    )
}

impl Walker<'_> {
    pub(crate) fn push_opaque(&mut self, text: &str, reason: &str, via: &str) {
        let mut seg = opaque(text, reason);
        seg.via = via.to_string();
        self.out.push(Seg {
            seg,
            t: Traits::default(),
        });
    }

    fn push_class(&mut self, text: &str, class: Class, reason: String, via: &str) {
        self.out.push(Seg {
            seg: Segment {
                text: text.to_string(),
                argv: vec![text.to_string()],
                class,
                verdict: class.default_verdict(),
                reason,
                writes: Vec::new(),
                via: via.to_string(),
            },
            t: Traits::default(),
        });
    }

    /// Parse and walk a string; returns the index of its first segment.
    pub(crate) fn source(&mut self, text: &str, scope: &mut Scope) -> usize {
        let start = self.out.len();
        let depth = scope.depth + shape(text).nesting;
        if depth > self.budget {
            self.push_opaque(
                text,
                "[shell.limit.depth] nested deeper than the analysis limit",
                &scope.via,
            );
            return start;
        }
        if let Some(argv) = plain_words(text) {
            // Nothing in it that bash would expand, split or treat as an operator: the words
            // are the whitespace-separated fields, so the parser has nothing to add.
            let empty: [Node; 0] = [];
            let cmd = Cmd {
                argv: &argv,
                assigns: &[],
                redirects: &empty,
                cwd: &scope.cwd,
                arg_subst: false,
                nested: start..start,
                via: &scope.via,
                label: None,
            };
            let outcome = classify::classify(self, &cmd, scope);
            self.finish(outcome, scope);
            return start;
        }
        match rable::parse(text, false) {
            Ok(nodes) => {
                for n in &nodes {
                    self.node(n, scope);
                }
            }
            Err(e) => {
                self.push_opaque(
                    text,
                    &format!("[shell.parse] not valid bash: {e}"),
                    &scope.via,
                );
            }
        }
        start
    }

    fn nested(&mut self, node: &Node, scope: &Scope, via: &str) -> usize {
        let start = self.out.len();
        if scope.depth + 1 > self.budget {
            self.push_opaque(
                via,
                "[shell.limit.depth] nested deeper than the analysis limit",
                via,
            );
            return start;
        }
        let mut inner = Scope {
            cwd: scope.cwd.clone(),
            depth: scope.depth + 1,
            via: via.to_string(),
        };
        self.node(node, &mut inner);
        start
    }

    fn node(&mut self, n: &Node, scope: &mut Scope) {
        if scope.depth > self.budget {
            self.push_opaque(
                "",
                "[shell.limit.depth] nested deeper than the analysis limit",
                &scope.via,
            );
            return;
        }
        let mut deeper = Scope {
            cwd: scope.cwd.clone(),
            depth: scope.depth + 1,
            via: scope.via.clone(),
        };
        match &n.kind {
            NodeKind::Command {
                assignments,
                words,
                redirects,
            } => self.simple(assignments, words, redirects, scope, None),
            NodeKind::Pipeline { commands, .. } => self.pipeline(commands, scope),
            NodeKind::List { items } => {
                for item in items {
                    let before = scope.cwd.clone();
                    self.node(&item.command, scope);
                    let keep_only_new = matches!(item.operator, Some(ListOperator::And));
                    if !keep_only_new && scope.cwd != before {
                        scope.cwd = merge_cwd(&before, &scope.cwd);
                    }
                }
            }
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
                self.redirects_only(redirects, scope);
                settle(scope, &deeper);
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
                self.redirects_only(redirects, scope);
                settle(scope, &deeper);
            }
            NodeKind::For {
                words,
                body,
                redirects,
                ..
            }
            | NodeKind::Select {
                words,
                body,
                redirects,
                ..
            } => {
                if let Some(ws) = words {
                    self.words_nested(ws, scope);
                }
                self.node(body, &mut deeper);
                self.redirects_only(redirects, scope);
                settle(scope, &deeper);
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
                self.redirects_only(redirects, scope);
                settle(scope, &deeper);
            }
            NodeKind::Case {
                word,
                patterns,
                redirects,
            } => {
                self.words_nested(std::slice::from_ref(word.as_ref()), scope);
                for p in patterns {
                    self.words_nested(&p.patterns, scope);
                    if let Some(b) = &p.body {
                        self.node(b, &mut deeper);
                    }
                }
                self.redirects_only(redirects, scope);
                settle(scope, &deeper);
            }
            NodeKind::Function { name, body } => {
                let start = self.out.len();
                self.node(body, &mut deeper);
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
            NodeKind::Subshell { body, redirects } | NodeKind::BraceGroup { body, redirects } => {
                let mut inner = scope.clone();
                self.node(body, &mut inner);
                self.redirects_only(redirects, scope);
                if matches!(n.kind, NodeKind::BraceGroup { .. }) {
                    scope.cwd = inner.cwd;
                }
            }
            NodeKind::Coproc { command, .. } => self.node(command, &mut deeper),
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

    fn cond(&mut self, n: &Node, scope: &mut Scope) {
        match &n.kind {
            NodeKind::CondTerm { value, .. } => {
                if value.contains("$(") || value.contains('`') || value.contains("<(") {
                    let mut inner = Scope {
                        cwd: scope.cwd.clone(),
                        depth: scope.depth + 1,
                        via: "[[ ]]".into(),
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
    }

    fn pipeline(&mut self, commands: &[Node], scope: &mut Scope) {
        let mut stages: Vec<(usize, usize)> = Vec::new();
        for c in commands {
            let start = self.out.len();
            let mut stage_scope = scope.clone();
            self.node(c, &mut stage_scope);
            stages.push((start, self.out.len()));
        }
        let any = |w: &Walker<'_>, (a, b): (usize, usize), f: &dyn Fn(&Seg) -> bool| {
            w.out.get(a..b).is_some_and(|s| s.iter().any(f))
        };
        let network_anywhere = stages.iter().any(|&r| any(self, r, &|s| s.t.network));
        for (j, &stage) in stages.iter().enumerate() {
            if !any(self, stage, &|s| s.t.stdin_code) {
                continue;
            }
            let earlier = stages.get(..j).unwrap_or(&[]);
            let text = self
                .out
                .get(stage.0)
                .map(|s| s.seg.text.clone())
                .unwrap_or_default();
            if network_anywhere {
                self.push_class(
                    &text,
                    Class::Malicious,
                    "[shell.malicious.download-exec] network data and an interpreter reading commands share a pipeline".into(),
                    &scope.via,
                );
            } else if earlier.iter().any(|&r| any(self, r, &|s| s.t.decoder)) {
                self.push_class(
                    &text,
                    Class::Malicious,
                    "[shell.malicious.decode-exec] decoded data piped into an interpreter".into(),
                    &scope.via,
                );
            } else if let Some(prev) = earlier.last() {
                let printed = self
                    .out
                    .get(prev.0..prev.1)
                    .and_then(|s| s.first())
                    .and_then(|s| s.t.prints.clone());
                if let Some(code) = printed {
                    let mut inner = Scope {
                        cwd: scope.cwd.clone(),
                        depth: scope.depth + 1,
                        via: "piped into a shell".into(),
                    };
                    self.source(&code, &mut inner);
                }
            }
        }
    }

    fn words_nested(&mut self, ws: &[Node], scope: &Scope) -> bool {
        let mut found = false;
        for w in ws {
            found |= self.word_nested(w, scope);
        }
        found
    }

    /// Walk substitutions inside a word. Returns whether it had any.
    pub(crate) fn word_nested(&mut self, w: &Node, scope: &Scope) -> bool {
        let NodeKind::Word { value, parts, .. } = &w.kind else {
            return false;
        };
        let mut found = false;
        for p in parts {
            match &p.kind {
                NodeKind::CommandSubstitution { command, .. } => {
                    found = true;
                    self.nested(command, scope, "$(...)");
                }
                NodeKind::ProcessSubstitution { command, direction } => {
                    found = true;
                    self.nested(command, scope, &format!("{direction}(...)"));
                }
                NodeKind::ParamExpansion { arg: Some(a), .. }
                | NodeKind::ParamIndirect { arg: Some(a), .. }
                    if a.contains("$(") || a.contains('`') || a.contains("<(") =>
                {
                    found = true;
                    let mut inner = Scope {
                        cwd: scope.cwd.clone(),
                        depth: scope.depth + 1,
                        via: "${...}".into(),
                    };
                    self.source(&format!(": {a}"), &mut inner);
                }
                NodeKind::ArithmeticExpansion { .. }
                    if value.replace("$((", "").contains("$(") || value.contains('`') =>
                {
                    found = true;
                    self.push_opaque(
                        value,
                        "[shell.subst.arith] command substitution inside arithmetic",
                        &scope.via,
                    );
                }
                _ => {}
            }
        }
        found
    }

    fn redirects_only(&mut self, redirects: &[Node], scope: &mut Scope) {
        if redirects.is_empty() {
            return;
        }
        self.simple(&[], &[], redirects, scope, Some("compound command"));
    }

    pub(crate) fn env<'a>(&'a self, scope: &'a Scope) -> Env<'a> {
        Env {
            home: self.ctx.home.to_str().unwrap_or("~"),
            pwd: scope
                .cwd
                .as_ref()
                .and_then(|c| c.first())
                .and_then(|p| p.to_str())
                .unwrap_or("$PWD"),
        }
    }

    fn simple(
        &mut self,
        assignments: &[Node],
        word_nodes: &[Node],
        redirects: &[Node],
        scope: &mut Scope,
        label: Option<&str>,
    ) {
        let nested_start = self.out.len();
        let mut subst = false;
        subst |= self.words_nested(assignments, scope);
        self.words_nested(word_nodes, scope);
        for r in redirects {
            if let NodeKind::Redirect { target, .. } = &r.kind {
                subst |= self.word_nested(target, scope);
            }
        }
        let arg_subst = subst;
        let env = self.env(scope);
        let argv: Vec<Word> = word_nodes.iter().map(|n| words::convert(n, &env)).collect();
        let assigns: Vec<Word> = assignments
            .iter()
            .map(|n| words::convert(n, &env))
            .collect();
        let cmd = Cmd {
            argv: &argv,
            assigns: &assigns,
            redirects,
            cwd: &scope.cwd,
            arg_subst,
            nested: nested_start..self.out.len(),
            via: &scope.via,
            label,
        };
        let outcome = classify::classify(self, &cmd, scope);
        self.finish(outcome, scope);
    }

    fn finish(&mut self, o: Outcome, scope: &mut Scope) {
        if let Some(new_cwd) = o.new_cwd.clone() {
            scope.cwd = new_cwd;
        }
        for (code, via) in &o.reparse {
            let mut inner = Scope {
                cwd: scope.cwd.clone(),
                depth: scope.depth + 1,
                via: via.clone(),
            };
            self.source(code, &mut inner);
        }
        if let Some(seg) = o.segment {
            self.out.push(seg);
        }
    }

    /// Rules over the whole command line.
    fn cross_rules(&mut self) {
        let network = self.out.iter().any(|s| s.t.network);
        let secret = self.out.iter().find(|s| s.t.reads_secret || s.t.dumps_env);
        if let (true, Some(s)) = (network, secret) {
            let text = s.seg.text.clone();
            self.push_class(
                &text,
                Class::Malicious,
                "[shell.malicious.exfiltration] secrets or the environment are read on a command line that uses the network".into(),
                "",
            );
        }
        let mut downloads: Vec<String> = Vec::new();
        let mut hits: Vec<String> = Vec::new();
        for s in &self.out {
            let runs = matches!(
                s.seg.class,
                Class::ScriptRun
                    | Class::InlineCode
                    | Class::Opaque
                    | Class::Unknown
                    | Class::Destructive
            ) || s
                .seg
                .argv
                .iter()
                .any(|a| tables::SHELLS.contains(&a.as_str()));
            if runs
                && s.seg.argv.iter().any(|a| {
                    let base = a.rsplit('/').next().unwrap_or(a);
                    downloads.iter().any(|d| d == base)
                })
            {
                hits.push(s.seg.text.clone());
            }
            if let Some(d) = &s.t.download {
                downloads.push(d.clone());
            }
        }
        for text in hits {
            self.push_class(
                &text,
                Class::Malicious,
                "[shell.malicious.download-exec] runs a file downloaded earlier on the same command line".into(),
                "",
            );
        }
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
fn settle(scope: &mut Scope, inner: &Scope) {
    if inner.cwd != scope.cwd {
        scope.cwd = merge_cwd(&scope.cwd, &inner.cwd);
    }
}

/// Judge one write target for every candidate working directory.
pub(crate) fn judge(w: &Word, cwd: &Cwd, ctx: &ShellContext) -> Vec<(Zone, PathBuf)> {
    let known = !w.unknown && !w.subst;
    let value = if w.glob {
        glob_dir(&w.value)
    } else {
        w.value.clone()
    };
    let abs = std::path::Path::new(&value).is_absolute();
    match (known, cwd, abs) {
        (false, _, _) => vec![(Zone::Outside, PathBuf::from(&w.display))],
        (true, _, true) => vec![paths::judge_write(&value, &ctx.cwd, ctx)],
        (true, None, false) => vec![(Zone::Outside, PathBuf::from(&w.display))],
        (true, Some(cs), false) => cs
            .iter()
            .map(|c| paths::judge_write(&value, c, ctx))
            .collect(),
    }
}

/// The directory a glob's matches live in, plus a marker file name when the
/// pattern can match dotfiles (so the floor check sees `.git`, `.env`).
fn glob_dir(v: &str) -> String {
    let cut = v.find(['*', '?', '[', '{']).unwrap_or(v.len());
    let prefix = v.get(..cut).unwrap_or("");
    let dir = match prefix.rfind('/') {
        Some(0) => "/".to_string(),
        Some(i) => prefix.get(..i).unwrap_or("").to_string(),
        None => ".".to_string(),
    };
    let last = v.rsplit('/').next().unwrap_or("");
    if last.starts_with('.') || last.starts_with("{.") {
        format!("{dir}/.git")
    } else {
        dir
    }
}
