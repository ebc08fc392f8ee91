//! A served call's `result` event as an MCP tool result: the model-facing text as `content`
//! (capped below what hosts accept), the error flag as `isError`, and the rest as
//! `structuredContent`, valid against the one output schema every sbx tool declares.
#![forbid(unsafe_code)]

use crate::serve::{Event, JobInfo, JobStatus};
use rmcp::model::{CallToolResult, ContentBlock};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

/// The default cap on a result's text: about 20,000 tokens, below the 25,000 that Claude Code
/// accepts by default.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 80_000;

/// What a tool result carries besides its text (`structuredContent`).
#[expect(
    missing_docs,
    reason = "a wire type: doc comments become part of its JSON schema"
)]
#[derive(Clone, Debug, Default, Serialize, JsonSchema, PartialEq)]
pub struct ToolOutcome {
    /// The final decision: `allow`, `ask` or `deny`.
    pub decision: String,
    /// Why, and the rule that decided, if any.
    pub reason: String,
    pub rule: Option<String>,
    /// The command's exit code (124 on timeout); absent when killed by a signal or not run.
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    /// The output was cut: by the profile's or the executor's cap, or to fit the host.
    pub truncated: bool,
    pub duration_ms: u64,
    /// The sandbox's enforcement report, when a process ran.
    pub enforcement: Option<Value>,
    /// The background job or terminal the call started or acted on.
    pub job_id: Option<String>,
    pub job_status: Option<JobStatus>,
    pub jobs: Option<Vec<JobInfo>>,
}

/// The JSON Schema of [`ToolOutcome`], self-contained (no `$ref`), as `outputSchema`.
pub fn output_schema() -> Map<String, Value> {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let schema = generator.into_root_schema_for::<ToolOutcome>();
    match serde_json::to_value(schema) {
        Ok(Value::Object(m)) => m,
        Ok(_) | Err(_) => Map::new(),
    }
}

/// Cut `text` to at most `max` bytes, keeping its start and its end (where the exit code
/// is), with a notice between them. Says whether it cut.
pub fn cap_text(text: &str, max: usize) -> (String, bool) {
    if text.len() <= max {
        return (text.to_string(), false);
    }
    let notice = format!(
        "\n[... {} bytes cut to fit the host's limit ...]\n",
        text.len() - max
    );
    let keep = max.saturating_sub(notice.len());
    let mut head = keep / 2;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - (keep - keep / 2);
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    (format!("{}{notice}{}", &text[..head], &text[tail..]), true)
}

/// A call's last event as a tool result.
pub fn tool_result(ev: Event, max_bytes: usize) -> CallToolResult {
    match ev {
        Event::Result {
            decision,
            reason,
            rule,
            is_error,
            exit_code,
            signal,
            timed_out,
            truncated,
            duration_ms,
            content,
            enforcement,
            job_id,
            job_status,
            jobs,
            ..
        } => {
            let (text, cut) = cap_text(&content, max_bytes);
            let outcome = ToolOutcome {
                decision,
                reason,
                rule,
                exit_code,
                signal,
                timed_out,
                truncated: truncated || cut,
                duration_ms,
                enforcement,
                job_id,
                job_status,
                jobs,
            };
            finish(text, is_error, &outcome)
        }
        Event::Error { message, .. } => failure(&format!("error: {message}")),
        Event::Ready { .. }
        | Event::Decision { .. }
        | Event::ApprovalRequest { .. }
        | Event::Stdout { .. }
        | Event::Stderr { .. } => failure("error: the call ended without a result"),
    }
}

/// A call that never reached the session (or lost it), as an error result.
pub fn failure(text: &str) -> CallToolResult {
    let outcome = ToolOutcome {
        decision: "deny".into(),
        reason: text.to_string(),
        ..ToolOutcome::default()
    };
    finish(text.to_string(), true, &outcome)
}

fn finish(text: String, is_error: bool, outcome: &ToolOutcome) -> CallToolResult {
    let content = vec![ContentBlock::text(text)];
    let mut r = if is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    // Always an object, always valid against the schema: hosts validate it even on errors.
    r.structured_content =
        Some(serde_json::to_value(outcome).unwrap_or(Value::Null)).filter(Value::is_object);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capping_keeps_both_ends_within_the_limit() {
        let text = format!("{}{}[exit code: 0]", "a".repeat(500), "b".repeat(500));
        let (cut, did) = cap_text(&text, 200);
        assert!(did);
        assert!(cut.len() <= 200, "{}", cut.len());
        assert!(cut.starts_with("aaa"));
        assert!(cut.ends_with("[exit code: 0]"));
        assert!(cut.contains("bytes cut to fit"));
        assert_eq!(cap_text("short", 200), ("short".to_string(), false));
    }

    #[test]
    fn capping_respects_character_boundaries() {
        let text = "é".repeat(300);
        let (cut, did) = cap_text(&text, 101);
        assert!(did);
        assert!(cut.len() <= 101);
    }

    #[test]
    fn the_output_schema_is_a_self_contained_object_schema() {
        let s = output_schema();
        assert_eq!(s.get("type"), Some(&Value::from("object")));
        let text = serde_json::to_string(&s).unwrap_or_default();
        assert!(!text.contains("$ref"), "{text}");
        let props = s.get("properties").and_then(Value::as_object);
        assert!(props.is_some_and(|p| p.contains_key("exit_code") && p.contains_key("job_id")));
    }
}
