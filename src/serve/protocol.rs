//! The messages of `sbx serve`: one JSON object per line in each direction.
//! `docs/protocol.md` carries the JSON Schema of each, generated from these types.
#![forbid(unsafe_code)]

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The protocol version announced in the `ready` event.
pub const PROTOCOL_VERSION: u32 = 1;

/// The default limit on one request line, in bytes. Longer lines are refused unread.
pub const DEFAULT_MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// A client message.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    /// Run one tool call. Events for it carry the same `id`.
    Call {
        /// Chosen by the client; unique among calls in flight.
        id: String,
        /// `bash` (see `sbx tools`), or a pipeline tool name such as `Bash`, `Read`, `Edit`.
        tool: String,
        /// The tool's input object.
        #[serde(default)]
        input: serde_json::Map<String, serde_json::Value>,
        /// Where the call starts; defaults to the workspace.
        #[serde(default)]
        cwd: Option<PathBuf>,
        /// The agent session; allow-for-session answers are remembered per session.
        #[serde(default)]
        session: Option<String>,
        /// The agent within the session.
        #[serde(default)]
        agent: Option<String>,
    },
    /// Stop a call: a pending approval is denied, a running process tree is killed.
    Cancel { id: String },
    /// Answer an `approval_request`.
    Approval {
        id: String,
        answer: ApprovalReply,
        /// For `allow-for-session`: one of the request's `scopes` (default: the first).
        #[serde(default)]
        scope: Option<String>,
        /// For `deny`: why, shown to the model.
        #[serde(default)]
        reason: Option<String>,
    },
}

/// A client's answer to an approval request.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalReply {
    AllowOnce,
    AllowForSession,
    Deny,
}

/// A server message.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// First line of every session.
    Ready {
        protocol: u32,
        profile: String,
        workspace: PathBuf,
        max_line_bytes: usize,
        approval_timeout_ms: u64,
    },
    /// The pipeline's decision before approval: `allow`, `ask` or `deny`.
    Decision {
        id: String,
        decision: String,
        stage: String,
        by: String,
        reason: String,
        rule: Option<String>,
        source: Option<String>,
    },
    /// The call needs approval; answer with an `approval` request before `timeout_ms`,
    /// or it is denied.
    ApprovalRequest {
        id: String,
        canonical: String,
        reason: String,
        rule: Option<String>,
        /// What an allow-for-session answer may cover.
        scopes: Vec<String>,
        timeout_ms: u64,
    },
    /// A chunk of the command's standard output (UTF-8; invalid bytes replaced).
    Stdout { id: String, data: String },
    /// A chunk of the command's standard error.
    Stderr { id: String, data: String },
    /// The end of a call. Exactly one per accepted call.
    Result {
        id: String,
        /// The final decision (after hooks, approval and guards).
        decision: String,
        stage: String,
        reason: String,
        rule: Option<String>,
        source: Option<String>,
        /// Denied, failed to start, or exited non-zero.
        is_error: bool,
        /// The process's exit code (124 on timeout); absent when killed by a signal or not run.
        exit_code: Option<i32>,
        signal: Option<i32>,
        truncated: bool,
        duration_ms: u64,
        /// What the model should see: output, a truncation notice, `[exit code: N]`.
        content: String,
        /// The executor's enforcement report, when a process ran.
        enforcement: Option<serde_json::Value>,
    },
    /// A request could not be handled. The session goes on.
    Error {
        /// The request's id, when it could be read.
        id: Option<String>,
        message: String,
    },
}

/// The JSON Schemas of both directions, as `docs/protocol.md` prints them.
pub fn schemas() -> serde_json::Value {
    serde_json::json!({
        "request": schemars::schema_for!(Request),
        "event": schemars::schema_for!(Event),
    })
}
