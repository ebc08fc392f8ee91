//! A decision serialised for each harness.
//!
//! - Claude Code: `hookSpecificOutput.permissionDecision` allow | ask | deny, with
//!   `updatedInput` for a rewrite.
//! - Codex CLI: only what its parser accepts. It rejects `ask`, a bare `allow` and unknown
//!   fields, and a rejected answer runs the tool; so allow is `{}` (no opinion, Codex's own
//!   approval applies), ask is a deny, and a rewrite is `allow` with `updatedInput`.
//! - Gemini CLI `BeforeTool`: top-level `decision` allow | deny and `reason`; no ask, so
//!   ask is a deny; a rewrite goes in `hookSpecificOutput.tool_input`.
#![forbid(unsafe_code)]

use super::event::Harness;
use crate::pipeline::{CheckReport, Decision};
use serde_json::{Map, Value, json};

/// The decision an adapter serialises, with where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// The decision.
    pub decision: Decision,
    /// Why.
    pub reason: String,
    /// The deciding rule as written.
    pub rule: Option<String>,
    /// Where that rule was written.
    pub source: Option<String>,
    /// The listener, guard or stage that decided.
    pub by: String,
}

impl Verdict {
    /// A denial by sbx itself (bad input, missing policy, internal error).
    pub fn fail_closed(cause: impl std::fmt::Display) -> Self {
        Self {
            decision: Decision::Deny,
            reason: cause.to_string(),
            rule: None,
            source: None,
            by: "sbx-hook (fail closed)".into(),
        }
    }

    /// The verdict of a check.
    pub fn from_report(r: &CheckReport) -> Self {
        Self {
            decision: r.decision,
            reason: r.reason.clone(),
            rule: r.rule.clone(),
            source: r.source.clone(),
            by: r.by.clone(),
        }
    }

    /// The reason shown to the user or the model, naming the rule and its source.
    pub fn text(&self) -> String {
        let by = match (&self.rule, &self.source) {
            (Some(rule), Some(src)) => format!("rule {rule} from {src}"),
            (Some(rule), None) => format!("rule {rule}"),
            (None, Some(src)) => format!("{} from {src}", self.by),
            (None, None) => self.by.clone(),
        };
        format!("sbx: {} by {by}: {}", self.decision.as_str(), self.reason)
    }
}

/// The JSON a harness reads on stdout. `updated` is the rewritten tool input, if any.
pub fn answer(harness: Harness, v: &Verdict, updated: Option<&Map<String, Value>>) -> Value {
    match harness {
        Harness::ClaudeCode => {
            let mut out = Map::new();
            out.insert("hookEventName".into(), "PreToolUse".into());
            out.insert("permissionDecision".into(), v.decision.as_str().into());
            out.insert("permissionDecisionReason".into(), v.text().into());
            if let (Some(u), Decision::Allow | Decision::Ask) = (updated, v.decision) {
                out.insert("updatedInput".into(), Value::Object(u.clone()));
            }
            json!({ "hookSpecificOutput": out })
        }
        Harness::Codex => match (v.decision, updated) {
            (Decision::Allow, None) => json!({}),
            (Decision::Allow, Some(u)) => json!({ "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "allow",
                "updatedInput": u,
            }}),
            (Decision::Ask, _) => json!({ "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason":
                    format!("{} (needs approval, which Codex hooks cannot ask for)", v.text()),
            }}),
            (Decision::Deny, _) => json!({ "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": v.text(),
            }}),
        },
        Harness::Gemini => match (v.decision, updated) {
            (Decision::Allow, None) => json!({ "decision": "allow", "reason": v.text() }),
            (Decision::Allow, Some(u)) => json!({
                "decision": "allow",
                "reason": v.text(),
                "hookSpecificOutput": { "tool_input": u },
            }),
            (Decision::Ask, _) => json!({
                "decision": "deny",
                "reason": format!("{} (needs approval, which Gemini CLI hooks cannot ask for)", v.text()),
            }),
            (Decision::Deny, _) => json!({ "decision": "deny", "reason": v.text() }),
        },
    }
}

/// The answer to a post-tool event: never blocks.
pub fn post_answer() -> Value {
    json!({})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(decision: Decision) -> Verdict {
        Verdict {
            decision,
            reason: "r".into(),
            rule: Some("Bash(git push *)".into()),
            source: Some("builtin".into()),
            by: "rules".into(),
        }
    }

    #[test]
    fn every_harness_and_decision_has_an_exact_shape() {
        let mut u = Map::new();
        u.insert("command".into(), "x".into());
        let t = "sbx: ask by rule Bash(git push *) from builtin: r";
        assert_eq!(
            answer(Harness::ClaudeCode, &v(Decision::Ask), Some(&u)),
            json!({"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask",
                "permissionDecisionReason": t, "updatedInput": {"command":"x"}}})
        );
        assert_eq!(
            answer(Harness::ClaudeCode, &v(Decision::Deny), Some(&u)),
            json!({"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny",
                "permissionDecisionReason": "sbx: deny by rule Bash(git push *) from builtin: r"}})
        );
        assert_eq!(answer(Harness::Codex, &v(Decision::Allow), None), json!({}));
        assert_eq!(
            answer(Harness::Codex, &v(Decision::Allow), Some(&u)),
            json!({"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"x"}}})
        );
        assert_eq!(
            answer(Harness::Codex, &v(Decision::Ask), Some(&u))["hookSpecificOutput"]["permissionDecision"],
            "deny"
        );
        assert_eq!(
            answer(Harness::Gemini, &v(Decision::Ask), None)["decision"],
            "deny"
        );
        assert_eq!(
            answer(Harness::Gemini, &v(Decision::Allow), Some(&u)),
            json!({"decision":"allow","reason":"sbx: allow by rule Bash(git push *) from builtin: r",
                "hookSpecificOutput":{"tool_input":{"command":"x"}}})
        );
    }
}
