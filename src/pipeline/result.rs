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
    pub exit_status: Option<i32>,
    pub signal: Option<i32>,
    pub duration_ms: u64,
    pub truncated: bool,
    /// Killed because its time ran out.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub timed_out: bool,
    pub enforcement: serde_json::Value,
    /// The background job the run was handed to, when it was started in the background.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
}

/// A hook's rewritten input: recorded, never applied.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HookRewrite {
    pub hook: String,
    pub updated_input: serde_json::Value,
}

/// An ordinary result. Denials, unknown tools and tool failures are error results too.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CallResult {
    pub call_id: String,
    pub tool: String,
    pub canonical: String,
    pub meta: ToolMeta,
    pub is_error: bool,
    /// The text shown to the model.
    pub content: String,
    /// The structured value.
    pub value: serde_json::Value,
    /// The ruling that let the call run or stopped it.
    pub ruling: Ruling,
    pub trace: Vec<TraceStep>,
    pub exec: Option<ExecSummary>,
    pub hook_rewrites: Vec<HookRewrite>,
    /// Post-execute handlers that changed the result, with what they did.
    pub post: Vec<String>,
    pub duration: Duration,
}
