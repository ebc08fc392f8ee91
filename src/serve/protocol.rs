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
#[expect(
    missing_docs,
    reason = "a doc comment here is a description in the wire schema (`sbx serve --schema`, docs/protocol.md), which documents these fields"
)]
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    /// Run one tool call. Events for it carry the same `id`.
    Call {
        /// Chosen by the client; unique among calls in flight.
        id: String,
        /// `bash` or a job tool (`job_output`, `job_kill`, `job_list`; see `sbx tools`), or a
        /// pipeline tool name such as `Bash`, `Read`, `Edit`.
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
    /// Stop a call: a pending approval is denied, a running process tree is killed. With a
    /// background job's id, that job's process tree is killed.
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
#[expect(
    missing_docs,
    reason = "a doc comment here is a description in the wire schema (`sbx serve --schema`, docs/protocol.md), which documents these fields"
)]
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalReply {
    AllowOnce,
    AllowForSession,
    Deny,
}

/// A server message.
#[expect(
    missing_docs,
    reason = "a doc comment here is a description in the wire schema (`sbx serve --schema`, docs/protocol.md), which documents these fields"
)]
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
        /// Killed because the call's `timeout_ms` or the profile's wall limit ran out.
        #[serde(default)]
        timed_out: bool,
        truncated: bool,
        duration_ms: u64,
        /// What the model should see: output, a truncation notice, `[exit code: N]`.
        content: String,
        /// The executor's enforcement report, when a process ran (for `job_output`: once the
        /// job has ended).
        enforcement: Option<serde_json::Value>,
        /// Under a `proxy` profile: every connection the command asked for, allowed or refused.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        network: Option<Vec<crate::proxy::NetRecord>>,
        /// The background job this call started (`bash` with `run_in_background`) or acted on
        /// (`job_output`, `job_kill`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        job_id: Option<String>,
        /// The job's status, for `job_output` and `job_kill`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        job_status: Option<JobStatus>,
        /// The session's jobs, for `job_list`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        jobs: Option<Vec<JobInfo>>,
    },
    /// A request could not be handled. The session goes on.
    Error {
        /// The request's id, when it could be read.
        id: Option<String>,
        message: String,
    },
}

/// Where a background job stands.
#[expect(
    missing_docs,
    reason = "a doc comment here is a description in the wire schema (`sbx serve --schema`, docs/protocol.md), which documents these fields"
)]
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(tag = "state", rename_all = "snake_case")]
#[non_exhaustive]
pub enum JobStatus {
    Running,
    /// The command ended by itself (126 not executable, 127 not found).
    Exited {
        exit_code: i32,
    },
    /// Killed by a signal: `job_kill`, a `cancel` request, the session's end, or another cause.
    Killed {
        signal: i32,
    },
    /// Killed when the call's `timeout_ms` or the profile's wall limit ran out.
    TimedOut,
    /// The sandbox could not start the command.
    Failed {
        message: String,
    },
}

impl JobStatus {
    /// Whether the job still runs.
    pub fn is_running(&self) -> bool {
        matches!(self, Self::Running)
    }

    /// The conventional exit code once ended: the command's own, 128+N for signal N, 124 on
    /// timeout, 125 when the sandbox could not start it (as `sbx run` exits).
    pub fn code(&self) -> Option<i32> {
        match self {
            Self::Running => None,
            Self::Exited { exit_code } => Some(*exit_code),
            Self::Killed { signal } => Some(128 + signal),
            Self::TimedOut => Some(124),
            Self::Failed { .. } => Some(125),
        }
    }
}

/// One background job, as `job_list` reports it.
#[expect(
    missing_docs,
    reason = "a doc comment here is a description in the wire schema (`sbx serve --schema`, docs/protocol.md), which documents these fields"
)]
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
pub struct JobInfo {
    pub job_id: String,
    /// The command line it runs.
    pub command: String,
    pub status: JobStatus,
}

/// The JSON Schemas of both directions, as `docs/protocol.md` prints them.
pub fn schemas() -> serde_json::Value {
    serde_json::json!({
        "request": schemars::schema_for!(Request),
        "event": schemars::schema_for!(Event),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_conventional_codes() {
        assert_eq!(JobStatus::Running.code(), None);
        assert_eq!(JobStatus::Exited { exit_code: 3 }.code(), Some(3));
        assert_eq!(JobStatus::Killed { signal: 15 }.code(), Some(143));
        assert_eq!(JobStatus::TimedOut.code(), Some(124));
        let failed = JobStatus::Failed {
            message: "no".into(),
        };
        assert_eq!(failed.code(), Some(125));
    }
}
