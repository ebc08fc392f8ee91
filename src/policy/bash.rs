//! Rules applied to a Bash command, one segment at a time.
//!
//! A compound command is allowed by rules only if every segment is allowed
//! (by an allow rule, or by the analyser as read-only: nothing written, no finding); any
//! segment matching a
//! deny rule denies; an analyser Deny is never lifted by an allow rule; an
//! analyser Ask segment is lifted by an allow rule that matches it, unless the
//! analysis has a finding in it (a secret read, an executing argument, ...):
//! then only a rule that writes the command out, with no wildcard, lifts it.
#![forbid(unsafe_code)]

use super::pattern::{PathFamily, Pattern};
use super::rule::Rule;
use super::set::{Policy, Target};
use crate::decision::{Decision, Mode};
use crate::shell::Analysis;

/// What the rules (and the analyser's denials) say about a command.
#[derive(Clone, Debug)]
pub struct BashRuling<'a> {
    /// The strictest decision over the command's segments.
    pub decision: Decision,
    /// The deciding rule; `None` when the analyser decided.
    pub rule: Option<&'a Rule>,
    /// Why.
    pub reason: String,
    /// The segment that decided.
    pub segment: Option<usize>,
}

/// Each segment's command as written, wrappers included (`sudo apt-get install x`), beside
/// its unwrapped `text` (`apt-get install x`). Deny and ask rules match either form; an allow
/// rule must match both, so a wrapper such as `sudo` cannot ride on an allow written for the
/// bare command.
fn full_forms(analysis: &Analysis) -> Vec<String> {
    analysis.segments.iter().map(|s| s.argv.join(" ")).collect()
}

fn targets_of<'t>(
    analysis: &'t Analysis,
    fulls: &'t [String],
) -> impl Iterator<Item = (usize, Target<'t>)> {
    analysis
        .segments
        .iter()
        .enumerate()
        .flat_map(move |(i, s)| {
            let full = fulls.get(i).filter(|f| **f != s.text);
            std::iter::once((i, Target::Command(s.text.as_str())))
                .chain(full.map(|f| (i, Target::Command(f.as_str()))))
                .chain(s.writes.iter().map(move |w| {
                    (
                        i,
                        Target::Path {
                            tool: "Bash",
                            family: PathFamily::Edit,
                            path: w.as_path(),
                        },
                    )
                }))
                .chain(s.reads.iter().map(move |r| {
                    (
                        i,
                        Target::Path {
                            tool: "Bash",
                            family: PathFamily::Read,
                            path: r.as_path(),
                        },
                    )
                }))
        })
}

fn hit<'a>(decision: Decision, rule: &'a Rule, segment: usize) -> BashRuling<'a> {
    BashRuling {
        decision,
        rule: Some(rule),
        reason: rule
            .reason
            .clone()
            .unwrap_or_else(|| format!("matched {}", rule.text)),
        segment: Some(segment),
    }
}

/// Deny rules from built-in and managed sources only.
pub fn managed_deny<'a>(
    policy: &'a Policy,
    analysis: &Analysis,
    mode: Mode,
) -> Option<BashRuling<'a>> {
    let fulls = full_forms(analysis);
    targets_of(analysis, &fulls).find_map(|(i, t)| {
        policy
            .find_managed_deny(&t, mode)
            .map(|r| hit(Decision::Deny, r, i))
    })
}

/// The rule set's decision on a command, or `None` to pass on.
pub fn evaluate<'a>(policy: &'a Policy, analysis: &Analysis, mode: Mode) -> Option<BashRuling<'a>> {
    let fulls = full_forms(analysis);
    if let Some(d) = targets_of(analysis, &fulls).find_map(|(i, t)| {
        policy
            .find(Decision::Deny, &t, mode)
            .map(|r| hit(Decision::Deny, r, i))
    }) {
        return Some(d);
    }
    if let Some((i, s)) = analysis
        .segments
        .iter()
        .enumerate()
        .find(|(_, s)| s.verdict == Decision::Deny)
    {
        return Some(BashRuling {
            decision: Decision::Deny,
            rule: None,
            reason: format!("shell analysis: {}", s.reason),
            segment: Some(i),
        });
    }
    if let Some(a) = targets_of(analysis, &fulls).find_map(|(i, t)| {
        policy
            .find(Decision::Ask, &t, mode)
            .map(|r| hit(Decision::Ask, r, i))
    }) {
        return Some(a);
    }
    let mut first_allow: Option<BashRuling<'a>> = None;
    for (i, s) in analysis.segments.iter().enumerate() {
        let found = !s.findings.is_empty();
        let find = |text: &str| allow_rule(policy, text, found, mode);
        let full_ok = fulls
            .get(i)
            .is_none_or(|f| *f == s.text || find(f).is_some());
        match find(&s.text).filter(|_| full_ok) {
            Some(r) => {
                if first_allow.is_none() {
                    first_allow = Some(hit(Decision::Allow, r, i));
                }
            }
            None if rides_along(s) => {}
            None => return None,
        }
    }
    first_allow
}

/// Whether a segment no allow rule matches may ride along with those one matches: only what
/// the read-only fast path would allow on its own (nothing written, no finding). A write, even
/// inside the workspace, is decided for the whole command by the later stages, as it would be
/// alone: `Bash(ls *)` does not allow `ls && tar xf a.tar`.
fn rides_along(s: &crate::shell::Segment) -> bool {
    s.verdict == Decision::Allow
        && s.class != crate::shell::Class::WorkspaceWrite
        && s.writes.is_empty()
        && s.write_patterns.is_empty()
        && s.findings.is_empty()
}

/// The allow rule that covers a segment's text. A segment with a finding is covered only by a
/// rule that writes the command out with no wildcard: `Bash(cat *)` does not lift a secret
/// read, `Bash(python3 -c 'print(1)')` does lift that one inline program.
fn allow_rule<'a>(policy: &'a Policy, text: &str, found: bool, mode: Mode) -> Option<&'a Rule> {
    let target = Target::Command(text);
    if !found {
        return policy.find(Decision::Allow, &target, mode);
    }
    policy.find_where(Decision::Allow, &target, mode, |r| match &r.pattern {
        Pattern::Bash(p) => p.is_exact(),
        Pattern::Tool(_)
        | Pattern::Family(_)
        | Pattern::Path { .. }
        | Pattern::Domain(_)
        | Pattern::Mcp { .. } => false,
    })
}
