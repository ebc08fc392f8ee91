//! A ruling serialised for each harness.
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
use crate::pipeline::{Decision, Ruling, Stage, Wording};
use serde_json::{Map, Value, json};

/// A denial by sbx itself (bad input, missing policy, internal error).
pub fn fail_closed(cause: impl std::fmt::Display) -> Ruling {
    Ruling::deny(
        Stage::Extraction,
        "sbx-hook (fail closed)",
        cause.to_string(),
    )
}

/// The JSON a harness reads on stdout. `updated` is the rewritten tool input, if any.
pub fn answer(harness: Harness, v: &Ruling, updated: Option<&Map<String, Value>>) -> Value {
    // The reason shown to the user or the model, naming the rule and its source.
    let why = v.text(Wording::HarnessAnswer);
    match harness {
        Harness::ClaudeCode => {
            let mut out = Map::new();
            out.insert("hookEventName".into(), "PreToolUse".into());
            out.insert("permissionDecision".into(), v.decision.as_str().into());
            out.insert("permissionDecisionReason".into(), why.into());
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
                    format!("{why} (needs approval, which Codex hooks cannot ask for)"),
            }}),
            (Decision::Deny, _) => json!({ "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": why,
            }}),
        },
        Harness::Gemini => match (v.decision, updated) {
            (Decision::Allow, None) => json!({ "decision": "allow", "reason": why }),
            (Decision::Allow, Some(u)) => json!({
                "decision": "allow",
                "reason": why,
                "hookSpecificOutput": { "tool_input": u },
            }),
            (Decision::Ask, _) => json!({
                "decision": "deny",
                "reason": format!("{why} (needs approval, which Gemini CLI hooks cannot ask for)"),
            }),
            (Decision::Deny, _) => json!({ "decision": "deny", "reason": why }),
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

    fn v(decision: Decision) -> Ruling {
        let mut r = Ruling::new(decision, Stage::Rules, "rules", "r");
        r.rule = Some("Bash(git push *)".into());
        r.source = Some(crate::provenance::Provenance::Sbx("builtin"));
        r
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
