//! A merged policy: every source's rules, indexed for fast matching.
//!
//! Evaluation is deny > ask > allow whatever the order of rules and sources:
//! rules are sorted by text and source before indexing, so the reported rule
//! is the same however the sources were listed.
#![forbid(unsafe_code)]

use super::hook::PolicyHookSpec;
use super::pattern::{PathFamily, Pattern};
use super::rule::{Rule, RuleSource, SourceKind};
use crate::decision::{Decision, Mode};
use crate::workspace::WorkspaceContext;
use std::collections::HashMap;
use std::path::Path;

/// Something a call touches, as rules see it.
#[derive(Clone, Copy, Debug)]
pub enum Target<'a> {
    /// A Bash segment's canonical text.
    Command(&'a str),
    /// A file path touched by `tool` (absolute, normalized).
    Path {
        /// The tool.
        tool: &'a str,
        /// The tool's family.
        family: PathFamily,
        /// The path.
        path: &'a Path,
    },
    /// A WebFetch host (lower-case, no trailing dot).
    Domain {
        /// The tool.
        tool: &'a str,
        /// The host.
        host: &'a str,
    },
    /// An MCP tool.
    Mcp {
        /// The server's name.
        server: &'a str,
        /// The tool's name.
        tool: &'a str,
    },
    /// Any other tool, matched by name only.
    Tool(&'a str),
}

impl Target<'_> {
    fn tool_name(&self) -> &str {
        match self {
            Target::Command(_) => "Bash",
            Target::Path { tool, .. } | Target::Domain { tool, .. } | Target::Tool(tool) => tool,
            Target::Mcp { .. } => "",
        }
    }
}

fn rule_matches(rule: &Rule, target: &Target<'_>) -> bool {
    match (&rule.pattern, target) {
        (Pattern::Tool(_), Target::Mcp { .. }) => false,
        (Pattern::Tool(name), t) => name == t.tool_name(),
        (Pattern::Family(f), Target::Path { family, .. }) => f == family,
        (Pattern::Family(_), _) => false,
        (Pattern::Bash(p), Target::Command(text)) => p.matches(text),
        (Pattern::Bash(_), _) => false,
        (
            Pattern::Path {
                family: f,
                tool: one,
                pattern,
            },
            Target::Path { tool, family, path },
        ) => {
            f == family
                && one.as_deref().is_none_or(|o| o == *tool)
                // A pattern that could not be compiled matches for deny and ask rules and not
                // for allow rules: it fails closed.
                && pattern
                    .matches(path)
                    .unwrap_or(rule.effect != Decision::Allow)
        }
        (Pattern::Path { .. }, _) => false,
        (Pattern::Domain(d), Target::Domain { host, .. }) => d.matches(host),
        (Pattern::Domain(_), _) => false,
        (Pattern::Mcp { server, tool }, Target::Mcp { server: s, tool: t }) => {
            server == s && tool.as_deref().is_none_or(|x| x == *t)
        }
        (Pattern::Mcp { .. }, _) => false,
    }
}

#[derive(Debug, Default)]
struct Index {
    /// Bash patterns that start with a literal word, by that word.
    by_word: HashMap<String, Vec<usize>>,
    /// Rules that may match a command without a fixed first word (`Bash(* x)`, bare `Bash`).
    command: Vec<usize>,
    /// Rules for every other target.
    other: Vec<usize>,
}

/// The policy in force: merged rules, mode and hooks from every source.
#[derive(Debug)]
pub struct Policy {
    rules: Vec<Rule>,
    /// allow, ask, deny.
    index: [Index; 3],
    mode: Option<(Mode, RuleSource)>,
    hooks: Vec<PolicyHookSpec>,
    workspace: WorkspaceContext,
}

fn slot(d: Decision) -> usize {
    match d {
        Decision::Allow => 0,
        Decision::Ask => 1,
        Decision::Deny => 2,
    }
}

impl Policy {
    /// Merge compiled rules. Order of `rules` does not matter.
    pub fn from_parts(
        mut rules: Vec<Rule>,
        mode: Option<(Mode, RuleSource)>,
        mut hooks: Vec<PolicyHookSpec>,
        workspace: WorkspaceContext,
    ) -> Self {
        rules.sort_by(|a, b| (&a.text, &a.source).cmp(&(&b.text, &b.source)));
        let mut index: [Index; 3] = Default::default();
        for (i, rule) in rules.iter().enumerate() {
            let ix = &mut index[slot(rule.effect)];
            match &rule.pattern {
                Pattern::Bash(p) => match p.first_word() {
                    Some(w) => ix.by_word.entry(w.to_string()).or_default().push(i),
                    None => ix.command.push(i),
                },
                Pattern::Tool(_) => {
                    ix.command.push(i);
                    ix.other.push(i);
                }
                Pattern::Family(_)
                | Pattern::Path { .. }
                | Pattern::Domain(_)
                | Pattern::Mcp { .. } => ix.other.push(i),
            }
        }
        hooks.sort_by(|a, b| (&a.command, &a.source).cmp(&(&b.command, &b.source)));
        Self {
            rules,
            index,
            mode,
            hooks,
            workspace,
        }
    }

    /// A policy with no rules at all (nothing matches; everything falls through to ask).
    pub fn empty(workspace: WorkspaceContext) -> Self {
        Self::from_parts(Vec::new(), None, Vec::new(), workspace)
    }

    /// Every rule, from every source.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Every policy hook, from every source.
    pub fn hooks(&self) -> &[PolicyHookSpec] {
        &self.hooks
    }

    /// The mode a policy source asked for, if any, with where it was set.
    pub fn mode(&self) -> Option<&(Mode, RuleSource)> {
        self.mode.as_ref()
    }

    /// Where `~` and relative paths in rules are anchored.
    pub fn workspace(&self) -> &WorkspaceContext {
        &self.workspace
    }

    /// The first rule (in canonical order) of list `effect` applying in `mode` and matching
    /// `target`.
    pub fn find(&self, effect: Decision, target: &Target<'_>, mode: Mode) -> Option<&Rule> {
        self.find_where(effect, target, mode, |_| true)
    }

    /// Like [`Policy::find`], restricted to deny rules from built-in and managed sources.
    pub fn find_managed_deny(&self, target: &Target<'_>, mode: Mode) -> Option<&Rule> {
        self.find_where(Decision::Deny, target, mode, |r| {
            matches!(r.source.kind, SourceKind::Builtin | SourceKind::Managed)
        })
    }

    /// The first rule (in canonical order) of list `effect` applying in `mode` and matching
    /// `target` that `keep` accepts.
    pub fn find_where(
        &self,
        effect: Decision,
        target: &Target<'_>,
        mode: Mode,
        keep: impl Fn(&Rule) -> bool,
    ) -> Option<&Rule> {
        let keep = |r: &Rule| r.applies_in(mode) && keep(r);
        let ix = &self.index[slot(effect)];
        let (by_word, general) = match target {
            Target::Command(text) => {
                let word = text.split(' ').next().unwrap_or(text);
                let w = ix.by_word.get(word).map(Vec::as_slice).unwrap_or(&[]);
                (w, ix.command.as_slice())
            }
            Target::Path { .. } | Target::Domain { .. } | Target::Mcp { .. } | Target::Tool(_) => {
                (&[][..], ix.other.as_slice())
            }
        };
        // Both lists are in canonical order; report the lowest index that matches.
        let a = by_word
            .iter()
            .copied()
            .find(|&i| keep(&self.rules[i]) && rule_matches(&self.rules[i], target));
        let b = general
            .iter()
            .copied()
            .find(|&i| keep(&self.rules[i]) && rule_matches(&self.rules[i], target));
        let best = match (a, b) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, None) => x,
            (None, y) => y,
        };
        best.map(|i| &self.rules[i])
    }
}
