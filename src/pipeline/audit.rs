//! The audit log: an observer writing JSON lines.
//!
//! Two events per call: `call` before anything runs, and `result` with the
//! canonical form, decision, deciding stage, rule and source, duration, exit
//! status and enforcement summary.
#![forbid(unsafe_code)]

use super::call::ToolCall;
use super::observer::Observer;
use super::result::{CallResult, PolicyHookRewrite};
use super::tool::ToolMeta;
use serde::Serialize;
use std::io::Write;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

/// Version of the audit line format.
pub const AUDIT_VERSION: u32 = 1;

/// One line of the audit log.
#[derive(Clone, Debug, Serialize)]
pub struct AuditRecord<'a> {
    /// The record format's version ([`AUDIT_VERSION`]).
    pub v: u32,
    /// `call` or `result`.
    pub event: &'static str,
    /// When, in milliseconds since the Unix epoch.
    pub ts_ms: u128,
    /// The call's id.
    pub call_id: &'a str,
    /// The harness session the call came from.
    pub session: &'a str,
    /// The agent within the session.
    pub agent: &'a str,
    /// The tool called.
    pub tool: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// The call's input (call records).
    pub input: Option<&'a serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// The call in one canonical line.
    pub canonical: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// Facts about the tool.
    pub meta: Option<ToolMeta>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// `allow`, `ask` or `deny`.
    pub decision: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// The stage that decided.
    pub stage: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// The listener, guard, hook or floor entry that decided.
    pub by: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// The deciding rule as written.
    pub rule: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// Where that rule was written.
    pub source: Option<&'a crate::provenance::Provenance>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// Why it was decided so.
    pub reason: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// Whether the result is an error (result records).
    pub is_error: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// How long the call took.
    pub duration_ms: Option<u128>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// The command's exit status.
    pub exit_status: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// The signal that killed the command.
    pub signal: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// The executor's enforcement report.
    pub enforcement: Option<&'a serde_json::Value>,
    /// The proxy's connections, in `proxy` network mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<&'a [crate::proxy::NetRecord]>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    /// Inputs hooks would have run instead (never applied).
    pub hook_rewrites: &'a [PolicyHookRewrite],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    /// Post-execute handlers that changed the result.
    pub post: &'a [String],
}

/// Writes one JSON line per event to any writer (a file opened for append, a pipe, a buffer).
pub struct AuditLog {
    out: Mutex<Box<dyn Write + Send>>,
}

impl AuditLog {
    /// An audit log that writes to `out`.
    pub fn new(out: Box<dyn Write + Send>) -> Self {
        Self {
            out: Mutex::new(out),
        }
    }

    /// Open (create) `path` for appending.
    pub fn open(path: &std::path::Path) -> std::io::Result<Self> {
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(Self::new(Box::new(f)))
    }

    fn write(&self, rec: &AuditRecord<'_>) {
        let Ok(mut line) = serde_json::to_vec(rec) else {
            return;
        };
        line.push(b'\n');
        if let Ok(mut out) = self.out.lock() {
            // One write per line; an audit sink that fails cannot change the call's result.
            let _ignored = out.write_all(&line).and_then(|()| out.flush());
        }
    }

    fn base<'a>(event: &'static str, call: &'a ToolCall) -> AuditRecord<'a> {
        AuditRecord {
            v: AUDIT_VERSION,
            event,
            ts_ms: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_millis())
                .unwrap_or(0),
            call_id: call.id(),
            session: &call.caller().session,
            agent: &call.caller().agent,
            tool: call.tool(),
            input: None,
            canonical: None,
            meta: None,
            decision: None,
            stage: None,
            by: None,
            rule: None,
            source: None,
            reason: None,
            is_error: None,
            duration_ms: None,
            exit_status: None,
            signal: None,
            enforcement: None,
            network: None,
            hook_rewrites: &[],
            post: &[],
        }
    }
}

impl Observer for AuditLog {
    fn on_call(&self, call: &ToolCall) {
        let mut rec = Self::base("call", call);
        rec.input = Some(call.input());
        self.write(&rec);
    }

    fn on_result(&self, call: &ToolCall, r: &CallResult) {
        let mut rec = Self::base("result", call);
        rec.canonical = Some(&r.canonical);
        rec.meta = Some(r.meta);
        rec.decision = Some(r.ruling.decision.as_str());
        rec.stage = Some(r.ruling.stage.as_str());
        rec.by = Some(&r.ruling.by);
        rec.rule = r.ruling.rule.as_deref();
        rec.source = r.ruling.source.as_ref();
        rec.reason = Some(&r.ruling.reason);
        rec.is_error = Some(r.is_error);
        rec.duration_ms = Some(r.duration.as_millis());
        rec.exit_status = r.exec.as_ref().and_then(|e| e.exit_status);
        rec.signal = r.exec.as_ref().and_then(|e| e.signal);
        rec.enforcement = r.exec.as_ref().map(|e| &e.enforcement);
        rec.network = r.exec.as_ref().and_then(|e| e.network.as_deref());
        rec.hook_rewrites = &r.hook_rewrites;
        rec.post = &r.post;
        self.write(&rec);
    }
}
