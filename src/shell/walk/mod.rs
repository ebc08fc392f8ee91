//! Walk the syntax tree: find every simple command, follow substitutions
//! and re-parsed shell strings, and apply the rules that need more than one
//! segment (pipelines into interpreters, exfiltration, download then run).

mod compound;
mod cross;
mod evaluated;
pub(crate) mod vars;

use super::classify::{self, Cmd, Outcome};
use super::globs;
use super::limits::{deceptive_char, opaque, shape};
use super::paths::{self, Zone};
use super::words::{self, Known, Word};
use super::{Analysis, Class, Segment, ShellContext};
use rable::{Node, NodeKind};
use std::path::PathBuf;
pub(crate) use vars::Vars;

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
    /// A read-only command under `xargs`: it reads paths it gets on standard input, which
    /// the pipeline's producer decides (see `cross.rs`).
    pub xargs_reader: bool,
    /// Prints paths under directories this analysis checked (`find`, `fd`, `rg --files`,
    /// `grep -rl`, `git ls-files`): fine input for an `xargs` reader.
    pub lists_paths: bool,
    /// The symbolic links its listing may name (see `tree_links`).
    pub lists_links: crate::shell::tree_links::Listed,
    /// Its verdict took project files as they are when the analysis runs (see
    /// `shell::project`): another command on the line that may write them makes it stale.
    pub project_files: bool,
    /// Its writes only rewrite files that exist (a formatter) or a repository's own directory
    /// (`git add`, `git commit`): it cannot plant project files.
    pub rewrites_only: bool,
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
    /// Variables known at this point (see `vars`).
    pub vars: Vars,
}

pub(crate) struct Walker<'c> {
    pub ctx: &'c ShellContext<'c>,
    budget: usize,
    pub out: Vec<Seg>,
    /// A command seen may turn on glob options (see `sets_glob_options`).
    glob_options: bool,
    /// A function on the line takes the name of a command whose output the analysis predicts
    /// (see [`crate::shell::words::set_outputs_predicted`]).
    pub shadows_output: bool,
    /// Work trees a `git init` earlier on the line makes a repository of: git finds that one
    /// from inside them, not the one around them.
    pub made_repos: std::cell::RefCell<Vec<PathBuf>>,
    /// A git command earlier on the line pointed `HEAD` or the index at another tree
    /// (`git reset --soft REF`, `git read-tree REF`): a later restore from them writes it.
    pub moved_head: std::cell::Cell<bool>,
}

pub(crate) fn analyze_top(command: &str, ctx: &ShellContext, budget: usize) -> Analysis {
    paths::reset_roots();
    crate::shell::tree_links::reset();
    globs::set_wide(false);
    let mut w = walk_once(command, ctx, budget);
    if w.shadows_output {
        // `echo() { ...; }` prints what its body prints: nothing is taken from what `echo`,
        // `pwd` or `mktemp` would print.
        crate::shell::words::set_outputs_predicted(false);
        w = walk_once(command, ctx, budget);
    }
    if w.glob_options {
        // A command may turn on options that change what globs match, and it may run before
        // any glob of the line (a loop, a function): the whole line is judged again with them.
        globs::set_wide(true);
        w = walk_once(command, ctx, budget);
        globs::set_wide(false);
    }
    crate::shell::words::set_outputs_predicted(true);
    Analysis::from_segments(w.out.into_iter().map(|s| s.seg).collect())
}

fn walk_once<'c>(command: &str, ctx: &'c ShellContext<'c>, budget: usize) -> Walker<'c> {
    let mut w = Walker {
        ctx,
        budget,
        out: Vec::new(),
        glob_options: false,
        shadows_output: false,
        made_repos: std::cell::RefCell::new(Vec::new()),
        moved_head: std::cell::Cell::new(false),
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
        vars: Vars::new(),
    };
    w.source(command, &mut scope);
    w.cross_rules();
    w
}

/// Whether a command may turn on shell options that change what globs match: `shopt` (of
/// any option: its words may be computed), a shell given `-O`/`+O`, `GLOBIGNORE` (set, it
/// turns on `dotglob`) or `BASHOPTS`, or any word naming a glob option.
fn sets_glob_options(argv: &[Word], assigns: &[Word]) -> bool {
    let mut shell = false;
    for w in assigns.iter().chain(argv) {
        let v = w.value.as_str();
        if v.contains("glob") || v.contains("GLOB") || v.contains("shopt") || v.contains("BASHOPTS")
        {
            return true;
        }
        let base = v.rsplit('/').next().unwrap_or(v);
        if matches!(base, "bash" | "sh" | "rbash") {
            shell = true;
        } else if shell && v.starts_with(['-', '+']) && !v.starts_with("--") && v.contains('O') {
            return true;
        }
    }
    false
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
                findings: if class.is_finding() {
                    vec![reason.clone()]
                } else {
                    Vec::new()
                },
                reason,
                writes: Vec::new(),
                reads: Vec::new(),
                trees: Vec::new(),
                links: Vec::new(),
                write_patterns: Vec::new(),
                read_patterns: Vec::new(),
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
            self.glob_options |= sets_glob_options(&argv, &[]);
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
            vars: scope.vars.clone(),
        };
        self.node(node, &mut inner);
        start
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
        self.evaluated_word(w, scope);
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
                        vars: scope.vars.clone(),
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

    pub(crate) fn env<'a>(&'a self, scope: &'a Scope) -> Known<'a> {
        Known {
            home: self.ctx.workspace.home.to_str().unwrap_or("~"),
            pwd: scope
                .cwd
                .as_ref()
                .and_then(|c| c.first())
                .and_then(|p| p.to_str())
                .unwrap_or("$PWD"),
            tmp: self
                .ctx
                .workspace
                .tmp
                .as_deref()
                .filter(|t| self.ctx.workspace.writable.iter().any(|w| w == t))
                .and_then(|t| t.to_str()),
            vars: Some(&scope.vars),
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
            .map(|n| words::convert_assignment(n, &env))
            .collect();
        self.glob_options |= sets_glob_options(&argv, &assigns);
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
        if argv.is_empty() {
            vars::assign(scope, &assigns);
        } else {
            vars::forget(scope, &argv);
            vars::forget_persisting(scope, &assigns, &argv);
        }
    }

    fn finish(&mut self, o: Outcome, scope: &mut Scope) {
        if let Some(new_cwd) = o.new_cwd.clone() {
            scope.cwd = new_cwd;
        }
        for (code, via) in &o.reparse {
            // Another shell: the variables of this one are not its own.
            let mut inner = Scope {
                cwd: scope.cwd.clone(),
                depth: scope.depth + 1,
                via: via.clone(),
                vars: Vars::new(),
            };
            self.source(code, &mut inner);
        }
        if let Some(seg) = o.segment {
            self.out.push(seg);
        }
    }
}

/// Judge one write target for every candidate working directory, for a program that reaches
/// as `reach` says.
pub(crate) fn judge(
    w: &Word,
    cwd: &Cwd,
    ctx: &ShellContext,
    reach: paths::Reach,
) -> Vec<(Zone, PathBuf)> {
    let known = !w.unknown && !w.subst;
    let abs = std::path::Path::new(&w.value).is_absolute();
    let one = |c: &PathBuf| paths::judge_write_reaching(&w.value, c, ctx, reach);
    match (known, cwd, abs) {
        (false, _, _) | (true, None, false) => vec![(Zone::Outside, PathBuf::from(&w.display))],
        (true, _, true) if w.glob => judge_glob(w, std::slice::from_ref(&ctx.cwd), ctx, reach),
        (true, _, true) => vec![one(&ctx.cwd)],
        (true, Some(cs), false) if w.glob => judge_glob(w, cs, ctx, reach),
        (true, Some(cs), false) => cs.iter().map(one).collect(),
    }
}

/// A glob target, from each candidate directory: its literal directory, the matches that
/// exist now, and the protected names it could match when it runs (see
/// [`globs::candidates`]).
fn judge_glob(
    w: &Word,
    dirs: &[PathBuf],
    ctx: &ShellContext,
    reach: paths::Reach,
) -> Vec<(Zone, PathBuf)> {
    let mut out = Vec::new();
    for d in dirs {
        out.push(paths::judge_write(&glob_dir(&w.value), d, ctx));
        let matches = globs::expand(&w.value, d).unwrap_or_default();
        for p in matches.iter().chain(&globs::candidates(&w.value, d)) {
            let j = paths::judge_write_reaching(&p.to_string_lossy(), d, ctx, reach);
            if !out.contains(&j) {
                out.push(j);
            }
        }
    }
    out
}

/// The directory a glob's matches live in.
fn glob_dir(v: &str) -> String {
    let cut = v.find(['*', '?', '[', '{']).unwrap_or(v.len());
    let prefix = v.get(..cut).unwrap_or("");
    match prefix.rfind('/') {
        Some(0) => "/".to_string(),
        Some(i) => prefix.get(..i).unwrap_or("").to_string(),
        None => ".".to_string(),
    }
}
