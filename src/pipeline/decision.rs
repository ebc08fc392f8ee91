//! The ruling that carries a [`Decision`] with its stage and provenance.
#![forbid(unsafe_code)]

use crate::capability::CapabilitySet;
use crate::provenance::Provenance;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

pub use crate::decision::Decision;

/// The stage of the pipeline that produced a ruling, or the part of `sbx serve` that answers
/// a call itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    /// Turning the call into what it touches failed.
    Extraction,
    /// Plan mode lets only read-only calls through.
    #[serde(rename = "plan-gate")]
    PlanModeGate,
    /// A deny rule of a managed source.
    ManagedDeny,
    /// The merged allow, ask and deny rules.
    Rules,
    /// An approval given earlier for the session.
    SessionGrant,
    /// `sandbox-auto`: the sandbox confines what the rules leave undecided.
    SandboxFastPath,
    /// A mode that allows a kind of call (`accept-edits`, `bypass`).
    ModeFastPath,
    /// A read-only tool within the readable set.
    ReadOnlyFastPath,
    /// Nothing decided: ask.
    Default,
    /// A listener added by the embedding program.
    Listener,
    /// The safety floor: sensitive paths no rule can open.
    Floor,
    /// The sandbox would refuse the access: the kernel would refuse it or undo it.
    #[serde(rename = "plan")]
    SandboxRefusal,
    /// A policy hook (a program asked about the call).
    #[serde(rename = "hook")]
    PolicyHook,
    /// A guard, which can only deny.
    Guard,
    /// The approval channel's answer.
    Approval,
    /// `sbx serve` itself, before the pipeline: the input of a tool it serves does not fit
    /// the tool's schema. This and the next two are the stages of the calls a session answers
    /// itself; no stage of the pipeline gives them, and their names are the protocol's.
    Input,
    /// `sbx serve` itself: a job tool, answered from the session's own background jobs.
    Jobs,
    /// `sbx serve` itself: a terminal tool, answered from the caller's own terminals.
    Terminals,
}

impl Stage {
    /// The stage's name in traces, audit lines and the protocol.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Extraction => "extraction",
            Stage::PlanModeGate => "plan-gate",
            Stage::ManagedDeny => "managed-deny",
            Stage::Rules => "rules",
            Stage::SessionGrant => "session-grant",
            Stage::SandboxFastPath => "sandbox-fast-path",
            Stage::ModeFastPath => "mode-fast-path",
            Stage::ReadOnlyFastPath => "read-only-fast-path",
            Stage::Default => "default",
            Stage::Listener => "listener",
            Stage::Floor => "floor",
            Stage::SandboxRefusal => "plan",
            Stage::PolicyHook => "hook",
            Stage::Guard => "guard",
            Stage::Approval => "approval",
            Stage::Input => "input",
            Stage::Jobs => "jobs",
            Stage::Terminals => "terminals",
        }
    }
}

/// A decision with who made it and why.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Ruling {
    /// The decision.
    pub decision: Decision,
    /// Why, in words shown to the model.
    pub reason: String,
    /// The stage that decided.
    pub stage: Stage,
    /// The listener, guard, hook or floor entry that decided.
    pub by: String,
    /// The deciding rule as written, when a rule decided.
    pub rule: Option<String>,
    /// Where that rule (or hook) was written, or the profile line the sandbox refused by.
    pub source: Option<Provenance>,
    /// A narrower capability set this call must run under; only ever intersected with the profile's.
    #[serde(skip)]
    pub narrow: Option<Arc<CapabilitySet>>,
}

impl Ruling {
    /// A ruling of `stage`, decided by `by`.
    pub fn new(decision: Decision, stage: Stage, by: &str, reason: impl Into<String>) -> Self {
        Self {
            decision,
            reason: reason.into(),
            stage,
            by: by.to_string(),
            rule: None,
            source: None,
            narrow: None,
        }
    }

    /// An allow ruling.
    pub fn allow(stage: Stage, by: &str, reason: impl Into<String>) -> Self {
        Self::new(Decision::Allow, stage, by, reason)
    }

    /// An ask ruling.
    pub fn ask(stage: Stage, by: &str, reason: impl Into<String>) -> Self {
        Self::new(Decision::Ask, stage, by, reason)
    }

    /// A deny ruling.
    pub fn deny(stage: Stage, by: &str, reason: impl Into<String>) -> Self {
        Self::new(Decision::Deny, stage, by, reason)
    }

    #[must_use]
    /// The same ruling, naming `rule` and where it was written.
    pub fn with_rule(mut self, rule: &crate::policy::Rule) -> Self {
        self.rule = Some(rule.text.clone());
        self.source = Some(Provenance::Rule(rule.source.clone()));
        self
    }

    /// Ask that the call run under `caps` intersected with the profile's set.
    #[must_use]
    pub fn narrowed(mut self, caps: CapabilitySet) -> Self {
        self.narrow = Some(Arc::new(caps));
        self
    }

    /// The ruling's reason and who decided it, worded for where it is shown: the one
    /// rendering of a ruling as text, which every adapter calls. A source is rendered by
    /// [`Provenance`]'s `Display`, here and in the fields of `sbx check --json`, the serve
    /// events and the audit log.
    pub fn text(&self, wording: Wording) -> String {
        let (rule, source) = (self.rule.as_deref(), self.source.as_ref());
        match wording {
            Wording::HarnessAnswer => {
                let by = match (rule, source) {
                    (Some(rule), Some(src)) => format!("rule {rule} from {src}"),
                    (Some(rule), None) => format!("rule {rule}"),
                    (None, Some(src)) => format!("{} from {src}", self.by),
                    (None, None) => self.by.clone(),
                };
                format!("sbx: {} by {by}: {}", self.decision.as_str(), self.reason)
            }
            Wording::Terminal => match (rule, source) {
                (Some(rule), Some(src)) => format!("{} ({rule} from {src})", self.reason),
                (Some(rule), None) => format!("{} ({rule})", self.reason),
                (None, _) => format!("{} (stage {})", self.reason, self.stage.as_str()),
            },
            Wording::Denial => format!("denied: {} ({})", self.reason, rule.unwrap_or(&self.by)),
            Wording::Report => {
                let (decision, by, stage) = (self.decision.as_str(), &self.by, self.stage.as_str());
                let mut text = format!("{decision} by {by} ({stage})\n  reason: {}", self.reason);
                if let Some(r) = rule {
                    text.push_str(&format!("\n  rule:   {r}"));
                }
                if let Some(s) = source {
                    text.push_str(&format!("\n  source: {s}"));
                }
                text
            }
        }
    }
}

/// Where a ruling's text is shown. Each edge words it its own way, since harnesses, people
/// and models read it; the words of all of them are [`Ruling::text`]'s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Wording {
    /// A harness hook's answer (`sbx hook`): `sbx: deny by rule R from S: why`.
    HarnessAnswer,
    /// The terminal, from the gate of `sbx run`: `why (R from S)`, or the stage when no rule
    /// decided.
    Terminal,
    /// The error result of a call that did not run, as the model sees it: `denied: why (R)`,
    /// or who decided when no rule did.
    Denial,
    /// `sbx check`'s text: the decision and who decided, then the reason, rule and source one
    /// a line.
    Report,
}

#[cfg(test)]
mod tests {
    use super::Decision::{Allow, Ask, Deny};
    use super::{Provenance, Ruling, Stage, Wording};
    use crate::provenance::{RuleSource, SourceKind};

    #[test]
    fn each_wording_names_the_rule_its_source_or_who_decided() {
        let mut r = Ruling::deny(Stage::Rules, "rules", "no force push");
        let texts = |r: &Ruling| {
            [Wording::HarnessAnswer, Wording::Terminal, Wording::Denial].map(|w| r.text(w))
        };
        assert_eq!(
            texts(&r),
            [
                "sbx: deny by rules: no force push",
                "no force push (stage rules)",
                "denied: no force push (rules)",
            ]
        );
        r.source = Some(Provenance::Sbx("floor"));
        assert_eq!(
            texts(&r),
            [
                "sbx: deny by rules from floor: no force push",
                "no force push (stage rules)",
                "denied: no force push (rules)",
            ]
        );
        r.rule = Some("Bash(git push --force *)".into());
        assert_eq!(
            texts(&r),
            [
                "sbx: deny by rule Bash(git push --force *) from floor: no force push",
                "no force push (Bash(git push --force *) from floor)",
                "denied: no force push (Bash(git push --force *))",
            ]
        );
        r.source = Some(Provenance::Rule(RuleSource {
            kind: SourceKind::Project,
            file: ".sbx/policy.toml".into(),
            line: 3,
        }));
        assert_eq!(
            r.text(Wording::Terminal),
            "no force push (Bash(git push --force *) from project:.sbx/policy.toml:3)"
        );
        r.source = None;
        assert_eq!(
            texts(&r),
            [
                "sbx: deny by rule Bash(git push --force *): no force push",
                "no force push (Bash(git push --force *))",
                "denied: no force push (Bash(git push --force *))",
            ]
        );
    }

    #[test]
    fn a_report_names_the_decision_then_reason_rule_and_source_a_line_each() {
        let mut r = Ruling::ask(Stage::Rules, "rules", "publishes");
        assert_eq!(
            r.text(Wording::Report),
            "ask by rules (rules)\n  reason: publishes"
        );
        r.rule = Some("Bash(npm publish *)".into());
        r.source = Some(Provenance::Sbx("floor"));
        assert_eq!(
            r.text(Wording::Report),
            "ask by rules (rules)\n  reason: publishes\n  rule:   Bash(npm publish *)\n  source: floor"
        );
    }

    #[test]
    fn a_stage_is_named_alike_in_text_and_in_json() {
        use super::Stage::*;
        let all = [
            Extraction,
            PlanModeGate,
            ManagedDeny,
            Rules,
            SessionGrant,
            SandboxFastPath,
            ModeFastPath,
            ReadOnlyFastPath,
            Default,
            Listener,
            Floor,
            SandboxRefusal,
            PolicyHook,
            Guard,
            Approval,
            Input,
            Jobs,
            Terminals,
        ];
        for s in all {
            let json = serde_json::to_value(s).unwrap_or_default();
            assert_eq!(json.as_str(), Some(s.as_str()), "{s:?}");
        }
    }

    #[test]
    fn lattice_order_and_join() {
        assert!(Allow < Ask && Ask < Deny);
        assert_eq!(Allow.strictest(Deny), Deny);
        assert_eq!(Ask.strictest(Allow), Ask);
        assert_eq!(Deny.strictest(Ask), Deny);
    }
}
