//! Approval: an Ask goes to a channel; no channel means deny. Session grants remember
//! "allow for this session" answers, scoped to the exact canonical call (or one MCP server).
#![forbid(unsafe_code)]

use super::access::Access;
use super::call::ToolCall;
use super::decision::Ruling;
use super::stage_error::StageError;
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;

/// A boxed, sendable future, so the traits stay object-safe.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What an allow-for-session answer covers.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "kebab-case")]
pub enum GrantScope {
    /// The exact canonical call (for Bash, the command in that directory).
    Exact(String),
    /// Every tool of one MCP server.
    McpServer(String),
}

impl std::fmt::Display for GrantScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GrantScope::Exact(k) => write!(f, "{k}"),
            GrantScope::McpServer(s) => write!(f, "mcp__{s}"),
        }
    }
}

/// The channel's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApprovalAnswer {
    /// Run this call only.
    AllowOnce,
    /// Must be one of the request's offered scopes; anything else denies.
    AllowForSession(GrantScope),
    /// Refuse, with the reason shown to the model.
    Deny(Option<String>),
}

/// What the channel is asked.
#[derive(Clone, Debug, Serialize)]
pub struct ApprovalRequest {
    /// The call to approve.
    pub call: ToolCall,
    /// The call in one canonical line, as rules see it.
    pub canonical: String,
    /// The ask: why the call needs approval, the rule that decided when one did, and where
    /// that rule was written.
    pub asked: Ruling,
    /// The scopes an allow-for-session answer may choose from.
    pub scopes: Vec<GrantScope>,
}

/// A TTY prompt, a library callback, or a message over `sbx serve`.
pub trait ApprovalChannel: Send + Sync {
    /// Ask about `req`; the pipeline denies when the answer does not come in time.
    fn ask<'a>(
        &'a self,
        req: &'a ApprovalRequest,
    ) -> BoxFuture<'a, Result<ApprovalAnswer, StageError>>;
}

/// An approval channel from a plain function (the library callback).
pub struct CallbackApproval<F>(pub F);

impl<F> ApprovalChannel for CallbackApproval<F>
where
    F: Fn(&ApprovalRequest) -> ApprovalAnswer + Send + Sync,
{
    fn ask<'a>(
        &'a self,
        req: &'a ApprovalRequest,
    ) -> BoxFuture<'a, Result<ApprovalAnswer, StageError>> {
        let answer = (self.0)(req);
        Box::pin(async move { Ok(answer) })
    }
}

/// The key an exact grant is stored under.
pub fn grant_key(call: &ToolCall, access: &Access) -> String {
    match access {
        Access::Bash(b) => format!("{} in {}", access.canonical(call), b.workdir.display()),
        Access::Read { .. }
        | Access::Write { .. }
        | Access::WebFetch { .. }
        | Access::WebSearch { .. }
        | Access::Mcp { .. }
        | Access::Harness
        | Access::Unknown => access.canonical(call),
    }
}

/// The scopes offered for a call.
pub fn offered_scopes(call: &ToolCall, access: &Access) -> Vec<GrantScope> {
    let mut v = vec![GrantScope::Exact(grant_key(call, access))];
    if let Access::Mcp { server, .. } = access {
        v.push(GrantScope::McpServer(server.clone()));
    }
    v
}

/// Grants remembered per session, for that session only.
#[derive(Debug, Default)]
pub struct SessionGrants {
    inner: Mutex<HashMap<String, HashSet<GrantScope>>>,
}

impl SessionGrants {
    /// Let `session` skip approval for calls within `scope` from now on.
    pub fn grant(&self, session: &str, scope: GrantScope) {
        if let Ok(mut m) = self.inner.lock() {
            m.entry(session.to_string()).or_default().insert(scope);
        }
    }

    /// The grant covering `key` (or the MCP `server`) in `session`, if any.
    pub fn covers(&self, session: &str, key: &str, server: Option<&str>) -> Option<GrantScope> {
        let m = self.inner.lock().ok()?;
        let set = m.get(session)?;
        let exact = GrantScope::Exact(key.to_string());
        if set.contains(&exact) {
            return Some(exact);
        }
        let s = GrantScope::McpServer(server?.to_string());
        set.contains(&s).then_some(s)
    }

    /// True when `session` holds no grant (lets the listener skip building a key).
    pub fn is_empty_for(&self, session: &str) -> bool {
        self.inner
            .lock()
            .map(|m| m.get(session).is_none_or(HashSet::is_empty))
            .unwrap_or(true)
    }

    /// Forget everything granted in `session`.
    pub fn end_session(&self, session: &str) {
        if let Ok(mut m) = self.inner.lock() {
            m.remove(session);
        }
    }
}
