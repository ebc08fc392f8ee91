//! The result of a call: what the model sees, and what the audit log records.
#![forbid(unsafe_code)]

use super::decision::Ruling;
use super::listener::TraceStep;
use super::tool::ToolMeta;
use serde::Serialize;
use std::time::Duration;

/// What the executor reported, kept for observers.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ExecSummary {
    /// The exit code, when the command exited.
    pub exit_status: Option<i32>,
    /// The signal that killed it, when one did.
    pub signal: Option<i32>,
    /// How long it ran.
    pub duration_ms: u64,
    /// Whether output was cut at its cap.
    pub truncated: bool,
    /// Killed because its time ran out.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub timed_out: bool,
    /// The executor's enforcement report.
    pub enforcement: serde_json::Value,
    /// The background job the run was handed to, when it was started in the background.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
    /// In `proxy` network mode: every connection the command asked for, allowed or refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<Vec<crate::proxy::NetRecord>>,
}

/// A policy hook's rewritten input: recorded, never applied.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PolicyHookRewrite {
    /// The hook's name.
    pub hook: String,
    /// The input it would have run instead.
    pub updated_input: serde_json::Value,
}

/// An ordinary result. Denials, unknown tools and tool failures are error results too.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CallResult {
    /// The call's id.
    pub call_id: String,
    /// The tool called.
    pub tool: String,
    /// The call in one canonical line.
    pub canonical: String,
    /// Facts about the tool.
    pub meta: ToolMeta,
    /// Denied, failed to start, or exited non-zero.
    pub is_error: bool,
    /// The text shown to the model.
    pub content: String,
    /// The structured value.
    pub value: serde_json::Value,
    /// The ruling that let the call run or stopped it.
    pub ruling: Ruling,
    /// Each step of the waterfall.
    pub trace: Vec<TraceStep>,
    /// What the executor reported, when something ran.
    pub exec: Option<ExecSummary>,
    /// Inputs hooks would have run instead (never applied).
    pub hook_rewrites: Vec<PolicyHookRewrite>,
    /// Post-execute handlers that changed the result, with what they did.
    pub post: Vec<String>,
    /// How long the call took, decision included.
    pub duration: Duration,
}
