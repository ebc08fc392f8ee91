//! Policy hooks (`[[policy.hooks]]`): a program gets the call as JSON and answers allow / ask /
//! deny.
//!
//! Answers fold strictest-wins and order-insensitively. A hook's allow only
//! settles an ask that nothing but the waterfall's default gave; it never
//! lifts a deny or ask from rules, guards or the floor. A rewritten input is
//! recorded, never applied. A hook that crashes, errors or times out denies.
#![forbid(unsafe_code)]

use super::approval::BoxFuture;
use super::call::ToolCall;
use super::decision::Decision;
use super::stage_error::StageError;
use crate::policy::PolicyHookSpec;
use crate::provenance::Provenance;
use futures_util::FutureExt;
use futures_util::future::join_all;
use serde_json::{Value, json};
use std::panic::AssertUnwindSafe;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::AsyncWriteExt;

/// A policy hook's answer. `decision: None` is no opinion.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PolicyHookAnswer {
    /// `allow`, `ask` or `deny`; `None` is no opinion.
    pub decision: Option<Decision>,
    /// Why.
    pub reason: String,
    /// An input the hook would have liked to run instead: recorded in the audit log, never applied.
    pub updated_input: Option<Value>,
}

/// A policy hook: asked about each call after the listeners, with a timeout.
pub trait PolicyHook: Send + Sync {
    /// The hook's name, in traces.
    fn name(&self) -> String;
    /// Where the hook was configured, for provenance.
    fn source(&self) -> Option<Provenance> {
        None
    }
    /// How long it may take; past that, the call is denied.
    fn timeout(&self) -> Duration;
    /// Answer about the call described by `input`.
    fn ask<'a>(&'a self, input: &'a Value) -> BoxFuture<'a, Result<PolicyHookAnswer, StageError>>;
}

/// The JSON a policy hook receives (Claude Code's PreToolUse shape).
pub fn policy_hook_input(call: &ToolCall) -> Value {
    json!({
        "hook_event_name": "PreToolUse",
        "session_id": call.caller().session,
        "agent_id": call.caller().agent,
        "tool_use_id": call.id(),
        "tool_name": call.tool(),
        "tool_input": call.input(),
        "cwd": call.cwd(),
    })
}

/// Parse a policy hook's stdout: `{"decision","reason","updated_input"}` or Claude Code's
/// `{"hookSpecificOutput":{"permissionDecision","permissionDecisionReason","updatedInput"}}`.
pub fn parse_policy_hook_output(stdout: &str, name: &str) -> Result<PolicyHookAnswer, StageError> {
    let text = stdout.trim();
    if text.is_empty() {
        return Ok(PolicyHookAnswer::default());
    }
    let v: Value = serde_json::from_str(text)
        .map_err(|e| StageError::failed("hook", name, format!("unreadable answer: {e}")))?;
    let body = v.get("hookSpecificOutput").unwrap_or(&v);
    let field = |a: &str, b: &str| body.get(a).or_else(|| body.get(b));
    let decision =
        match field("decision", "permissionDecision").and_then(Value::as_str) {
            None => None,
            Some(s) => Some(Decision::parse(s).ok_or_else(|| {
                StageError::failed("hook", name, format!("unknown decision `{s}`"))
            })?),
        };
    Ok(PolicyHookAnswer {
        decision,
        reason: field("reason", "permissionDecisionReason")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        updated_input: field("updated_input", "updatedInput").cloned(),
    })
}

/// A policy hook that starts a program.
pub struct CommandPolicyHook {
    /// The program, its timeout and where it was configured.
    pub spec: PolicyHookSpec,
}

impl PolicyHook for CommandPolicyHook {
    fn name(&self) -> String {
        self.spec.command.join(" ")
    }

    fn source(&self) -> Option<Provenance> {
        Some(Provenance::Rule(self.spec.source.clone()))
    }

    fn timeout(&self) -> Duration {
        Duration::from_millis(self.spec.timeout_ms)
    }

    fn ask<'a>(&'a self, input: &'a Value) -> BoxFuture<'a, Result<PolicyHookAnswer, StageError>> {
        Box::pin(async move {
            let name = self.name();
            let fail = |m: String| StageError::failed("hook", &name, m);
            let (prog, args) = self
                .spec
                .command
                .split_first()
                .ok_or_else(|| fail("empty command".into()))?;
            let mut child = tokio::process::Command::new(prog)
                .args(args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .kill_on_drop(true)
                .spawn()
                .map_err(|e| fail(format!("cannot start: {e}")))?;
            if let Some(mut stdin) = child.stdin.take() {
                let bytes = serde_json::to_vec(input).map_err(|e| fail(e.to_string()))?;
                // A hook that does not read its input is not an error.
                let _ignored = stdin.write_all(&bytes).await;
            }
            let out = child
                .wait_with_output()
                .await
                .map_err(|e| fail(format!("wait failed: {e}")))?;
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            match out.status.code() {
                Some(0) => parse_policy_hook_output(&stdout, &name),
                Some(2) => Ok(PolicyHookAnswer {
                    decision: Some(Decision::Deny),
                    reason: stderr.trim().to_string(),
                    updated_input: None,
                }),
                Some(c) => Err(fail(format!("exited with status {c}: {}", stderr.trim()))),
                None => Err(fail("killed by a signal".into())),
            }
        })
    }
}

/// One policy hook's vote: its answer, or the denial its failure became.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyHookVote {
    /// The hook's name.
    pub hook: String,
    /// Where it was configured.
    pub source: Option<Provenance>,
    /// Its decision; `None` is no opinion.
    pub decision: Option<Decision>,
    /// Why.
    pub reason: String,
    /// An input it would have run instead (never applied).
    pub updated_input: Option<Value>,
}

/// Ask every policy hook concurrently, each under its own timeout. Failures become deny votes.
pub async fn ask_policy_hooks(
    hooks: &[std::sync::Arc<dyn PolicyHook>],
    call: &ToolCall,
) -> Vec<PolicyHookVote> {
    let input = policy_hook_input(call);
    let futs = hooks.iter().map(|h| {
        let input = &input;
        async move {
            let name = h.name();
            let t = h.timeout();
            let res = tokio::time::timeout(t, AssertUnwindSafe(h.ask(input)).catch_unwind()).await;
            let (decision, reason, updated_input) = match res {
                Ok(Ok(Ok(a))) => (a.decision, a.reason, a.updated_input),
                Ok(Ok(Err(e))) => (Some(Decision::Deny), format!("fail closed: {e}"), None),
                Ok(Err(_)) => (
                    Some(Decision::Deny),
                    format!("fail closed: hook `{name}` panicked"),
                    None,
                ),
                Err(_) => (
                    Some(Decision::Deny),
                    format!(
                        "fail closed: hook `{name}` timed out after {} ms",
                        t.as_millis()
                    ),
                    None,
                ),
            };
            PolicyHookVote {
                hook: name,
                source: h.source(),
                decision,
                reason,
                updated_input,
            }
        }
    });
    let mut votes = join_all(futs).await;
    votes.sort_by(|a, b| {
        b.decision
            .cmp(&a.decision)
            .then_with(|| (&a.hook, &a.reason).cmp(&(&b.hook, &b.reason)))
    });
    votes
}
