//! The built-in listeners, in their default order:
//! plan-mode gate, managed deny rules, the rule set, session grants, the
//! sandbox (mode) fast path, the read-only fast path, then ask.
#![forbid(unsafe_code)]

use super::access::Access;
use super::decision::{Decision, Ruling, Stage};
use super::listener::{CallContext, Listener, Next, StageError};
use crate::capability::path_within;
use crate::decision::Mode;
use crate::policy::{self, Target, is_sensitive};
use std::sync::Arc;

/// The default waterfall.
pub fn default_listeners() -> Vec<Arc<dyn Listener>> {
    vec![
        Arc::new(PlanModeGate),
        Arc::new(ManagedDeny),
        Arc::new(RuleSet),
        Arc::new(SessionGrantListener),
        Arc::new(ModeFastPath),
        Arc::new(ReadOnlyFastPath),
        Arc::new(AskFallback),
    ]
}

/// In plan mode every write, edit and non-read-only command is denied before anything else.
pub struct PlanModeGate;

impl Listener for PlanModeGate {
    fn name(&self) -> &str {
        "plan-gate"
    }

    fn on_call(&self, cx: &CallContext<'_>, next: Next<'_>) -> Result<Ruling, StageError> {
        if cx.mode != Mode::Plan {
            return next.decide(cx);
        }
        let blocked = match cx.access {
            Access::Bash(b) => !b.read_only(),
            Access::Write { .. } | Access::Mcp { .. } | Access::Unknown => true,
            Access::Read { .. }
            | Access::WebFetch { .. }
            | Access::WebSearch { .. }
            | Access::Harness => false,
        };
        if blocked {
            return Ok(Ruling::deny(
                Stage::PlanModeGate,
                self.name(),
                "plan mode: no writes, edits or commands that change anything",
            ));
        }
        next.decide(cx)
    }
}

/// Strictest rule over a list of targets: any deny, else any ask, else allow if every target is allowed.
fn non_bash_rules<'a>(
    cx: &'a CallContext<'_>,
    managed_only: bool,
) -> Option<(Decision, &'a policy::Rule)> {
    let targets: Vec<Target<'_>> = cx.access.targets(cx.call.tool());
    let find = |d: Decision, t: &Target<'_>| {
        if managed_only {
            match d {
                Decision::Deny => cx.policy.find_managed_deny(t, cx.mode),
                Decision::Allow | Decision::Ask => None,
            }
        } else {
            cx.policy.find(d, t, cx.mode)
        }
    };
    for d in [Decision::Deny, Decision::Ask] {
        if let Some(r) = targets.iter().find_map(|t| find(d, t)) {
            return Some((d, r));
        }
    }
    if managed_only || targets.is_empty() {
        return None;
    }
    let mut first = None;
    for t in &targets {
        let r = find(Decision::Allow, t)?;
        first.get_or_insert(r);
    }
    first.map(|r| (Decision::Allow, r))
}

fn rule_ruling(stage: Stage, by: &str, d: Decision, rule: &policy::Rule) -> Ruling {
    let reason = rule
        .reason
        .clone()
        .unwrap_or_else(|| format!("matched {}", rule.text));
    Ruling::new(d, stage, by, reason).with_rule(rule)
}

/// Deny rules from built-in and managed sources, ahead of everything else.
pub struct ManagedDeny;

impl Listener for ManagedDeny {
    fn name(&self) -> &str {
        "managed-deny"
    }

    fn on_call(&self, cx: &CallContext<'_>, next: Next<'_>) -> Result<Ruling, StageError> {
        let hit = match cx.access {
            Access::Bash(b) => {
                policy::bash::managed_deny(cx.policy, &b.analysis, cx.mode).and_then(|r| r.rule)
            }
            Access::Read { .. }
            | Access::Write { .. }
            | Access::WebFetch { .. }
            | Access::WebSearch { .. }
            | Access::Mcp { .. }
            | Access::Harness
            | Access::Unknown => non_bash_rules(cx, true).map(|(_, r)| r),
        };
        match hit {
            Some(rule) => Ok(rule_ruling(
                Stage::ManagedDeny,
                self.name(),
                Decision::Deny,
                rule,
            )),
            None => next.decide(cx),
        }
    }
}

/// Every source's rules: deny > ask > allow; nothing matched passes on.
pub struct RuleSet;

impl Listener for RuleSet {
    fn name(&self) -> &str {
        "rules"
    }

    fn on_call(&self, cx: &CallContext<'_>, next: Next<'_>) -> Result<Ruling, StageError> {
        match cx.access {
            Access::Bash(b) => match policy::bash::evaluate(cx.policy, &b.analysis, cx.mode) {
                Some(r) => {
                    let ruling = Ruling::new(r.decision, Stage::Rules, self.name(), r.reason);
                    Ok(match r.rule {
                        Some(rule) => ruling.with_rule(rule),
                        None => ruling,
                    })
                }
                None => next.decide(cx),
            },
            Access::Read { .. }
            | Access::Write { .. }
            | Access::WebFetch { .. }
            | Access::WebSearch { .. }
            | Access::Mcp { .. }
            | Access::Harness
            | Access::Unknown => match non_bash_rules(cx, false) {
                Some((d, rule)) => Ok(rule_ruling(Stage::Rules, self.name(), d, rule)),
                None => next.decide(cx),
            },
        }
    }
}

/// Calls the user allowed for this session.
pub struct SessionGrantListener;

impl Listener for SessionGrantListener {
    fn name(&self) -> &str {
        "session-grants"
    }

    fn on_call(&self, cx: &CallContext<'_>, next: Next<'_>) -> Result<Ruling, StageError> {
        if cx.grants.is_empty_for(&cx.call.caller().session) {
            return next.decide(cx);
        }
        let key = super::approval::grant_key(cx.call, cx.access);
        let server = match cx.access {
            Access::Mcp { server, .. } => Some(server.as_str()),
            Access::Bash(_)
            | Access::Read { .. }
            | Access::Write { .. }
            | Access::WebFetch { .. }
            | Access::WebSearch { .. }
            | Access::Harness
            | Access::Unknown => None,
        };
        match cx.grants.covers(&cx.call.caller().session, &key, server) {
            Some(scope) => Ok(Ruling::allow(
                Stage::SessionGrant,
                self.name(),
                format!("granted for this session: {scope}"),
            )),
            None => next.decide(cx),
        }
    }
}

fn sensitive_write(cx: &CallContext<'_>) -> bool {
    cx.access
        .writes()
        .iter()
        .any(|p| is_sensitive(p, cx.workspace))
}

/// The mode's fast path: sandbox-auto for Bash, accept-edits for workspace edits, bypass for the rest.
pub struct ModeFastPath;

impl Listener for ModeFastPath {
    fn name(&self) -> &str {
        "mode-fast-path"
    }

    fn on_call(&self, cx: &CallContext<'_>, next: Next<'_>) -> Result<Ruling, StageError> {
        if sensitive_write(cx) {
            return next.decide(cx);
        }
        match (cx.mode, cx.access) {
            (Mode::SandboxAuto | Mode::Bypass, Access::Bash(_))
                if cx.outlook.fully_enforced && cx.outlook.missing.is_empty() =>
            {
                Ok(Ruling::allow(
                    Stage::SandboxFastPath,
                    self.name(),
                    "sandbox-auto: runs fully enforced",
                ))
            }
            (Mode::AcceptEdits | Mode::Bypass, Access::Write { paths })
                if paths.iter().all(|p| path_within(p, &cx.workspace.root)) =>
            {
                Ok(Ruling::allow(
                    Stage::ModeFastPath,
                    self.name(),
                    format!("{}: edit inside the workspace", cx.mode.as_str()),
                ))
            }
            (Mode::Bypass, Access::Unknown) => next.decide(cx),
            (Mode::Bypass, _) => Ok(Ruling::allow(
                Stage::ModeFastPath,
                self.name(),
                "bypass: no rule denies or asks",
            )),
            (Mode::Default | Mode::Plan | Mode::AcceptEdits | Mode::SandboxAuto, _) => {
                next.decide(cx)
            }
        }
    }
}

/// Read-only tools on readable paths, and commands the analyser judges harmless.
pub struct ReadOnlyFastPath;

impl Listener for ReadOnlyFastPath {
    fn name(&self) -> &str {
        "read-only-fast-path"
    }

    fn on_call(&self, cx: &CallContext<'_>, next: Next<'_>) -> Result<Ruling, StageError> {
        let readable = |p: &std::path::Path| {
            let fs = &cx.profile.fs;
            (path_within(p, &cx.workspace.root) || fs.read.iter().any(|e| path_within(p, &e.path)))
                && !fs.deny_read.iter().any(|e| path_within(p, &e.path))
                && !fs
                    .deny_read
                    .iter()
                    .any(|e| super::fold::case_variant_within(p, p.as_os_str().is_ascii(), &e.path))
        };
        let ok = match cx.access {
            Access::Bash(b) => b.read_only(),
            Access::Read { paths, trees } => paths.iter().chain(trees).all(|p| readable(p)),
            Access::Harness => true,
            Access::Write { .. }
            | Access::WebFetch { .. }
            | Access::WebSearch { .. }
            | Access::Mcp { .. }
            | Access::Unknown => false,
        };
        if ok {
            Ok(Ruling::allow(
                Stage::ReadOnlyFastPath,
                self.name(),
                "read-only",
            ))
        } else {
            next.decide(cx)
        }
    }
}

/// The last listener: ask.
pub struct AskFallback;

impl Listener for AskFallback {
    fn name(&self) -> &str {
        "ask"
    }

    fn on_call(&self, cx: &CallContext<'_>, _next: Next<'_>) -> Result<Ruling, StageError> {
        let reason = match cx.access {
            Access::Unknown => format!("unknown tool `{}`", cx.call.tool()),
            Access::Bash(b) => format!("no rule matched ({})", b.analysis.reason),
            Access::Read { .. }
            | Access::Write { .. }
            | Access::WebFetch { .. }
            | Access::WebSearch { .. }
            | Access::Harness
            | Access::Mcp { .. } => "no rule matched".to_string(),
        };
        Ok(Ruling::ask(Stage::Default, self.name(), reason))
    }
}
