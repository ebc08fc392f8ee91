//! The MCP tool handler: lists sbx's tools and answers `tools/call` by running the call in
//! the in-process `sbx serve` session, so that it takes the same pipeline, approval, sandbox
//! and jobs as a call over `sbx serve`.
#![forbid(unsafe_code)]

use super::approval;
use super::bridge::{Bridge, CallEvents, Owner};
use super::render::{failure, output_schema, tool_result};
use crate::serve::{Event, Request};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, JsonObject, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Settings of an `sbx mcp` server.
#[derive(Clone, Debug)]
pub struct McpOptions {
    /// The profile's name, for the server's instructions.
    pub profile: String,
    /// A result's text is cut to this many bytes (start and end kept).
    pub max_output_bytes: usize,
    /// How long an approval asked through elicitation waits for the user.
    pub approval_timeout: Duration,
    /// A terminal unused for this long is closed.
    pub terminal_idle: Duration,
    /// How long the host waits for a tool call; a `bash` call with a longer `timeout_ms` is
    /// started in the background.
    pub host_timeout: Duration,
}

/// The `_meta` keys a client may set to name the agent session and agent making a call;
/// jobs and terminals belong to that pair.
pub const SESSION_META: &str = "sbx/session";
/// The `_meta` key naming the agent (see [`SESSION_META`]).
pub const AGENT_META: &str = "sbx/agent";

pub(super) struct SbxServer {
    pub(super) bridge: Arc<Bridge>,
    pub(super) opts: McpOptions,
    tools: Vec<Tool>,
    /// Calls waiting for a current client's approval, by call id.
    parked: Mutex<HashMap<String, (CallEvents, Owner, Instant)>>,
}

fn annotations(name: &str) -> ToolAnnotations {
    let mut a = ToolAnnotations::default();
    let (read_only, destructive) = match name {
        "job_output" | "job_list" | "terminal_read" | "terminal_list" => (true, false),
        _ => (false, true),
    };
    a.read_only_hint = Some(read_only);
    a.destructive_hint = Some(destructive);
    a
}

/// Every tool sbx serves, with the one output schema.
fn tool_list() -> Vec<Tool> {
    let out = Arc::new(output_schema());
    crate::tools::tools()
        .into_iter()
        .map(|(name, description, schema)| {
            let input: JsonObject = match schema {
                Value::Object(m) => m,
                _ => JsonObject::new(),
            };
            Tool::new(name, description, Arc::new(input))
                .with_raw_output_schema(out.clone())
                .with_annotations(annotations(name))
        })
        .collect()
}

/// A `bash` call allowed to run longer than the host waits for a tool is started in the
/// background, so that it is not cut off: its result is the job id. Says whether it did.
pub fn background_if_long(input: &mut JsonObject, host_timeout: Duration) -> bool {
    let long = input
        .get("timeout_ms")
        .and_then(Value::as_u64)
        .is_some_and(|ms| u128::from(ms) > host_timeout.as_millis());
    let explicit = input.contains_key("run_in_background");
    if long && !explicit {
        input.insert("run_in_background".into(), Value::Bool(true));
    }
    long && !explicit
}

fn meta_str(ctx: &RequestContext<RoleServer>, req: &CallToolRequestParams, key: &str) -> String {
    ctx.meta
        .get(key)
        .or_else(|| req.meta.as_ref().and_then(|m| m.get(key)))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

impl SbxServer {
    pub(super) fn new(bridge: Arc<Bridge>, opts: McpOptions) -> Self {
        Self {
            bridge,
            opts,
            tools: tool_list(),
            parked: Mutex::new(HashMap::new()),
        }
    }

    /// Follow a call to its result, asking for approval when the session asks, and passing
    /// on the host's cancellation. On the current protocol an approval parks the call and
    /// answers `input_required`.
    async fn follow(
        &self,
        mut call: CallEvents,
        owner: Owner,
        ctx: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let mut cancelled = false;
        loop {
            let ev = tokio::select! {
                ev = call.events.recv() => ev,
                () = ctx.ct.cancelled(), if !cancelled => {
                    cancelled = true;
                    self.bridge.send(Request::Cancel { id: call.id.clone() });
                    continue;
                }
            };
            match ev {
                None => return failure("error: the sandbox session has ended").into(),
                Some(Event::ApprovalRequest {
                    canonical, reason, ..
                }) => {
                    if !approval::is_modern(ctx) {
                        let timeout = self.opts.approval_timeout;
                        let answer =
                            approval::ask_now(ctx, timeout, &call.id, &canonical, &reason).await;
                        self.bridge.send(answer);
                        continue;
                    }
                    match approval::ask_later(ctx, &call.id, &canonical, &reason) {
                        Ok(ask) => {
                            self.park(call, owner);
                            return ask.into();
                        }
                        Err(why) => self.bridge.send(approval::deny(&call.id, why)),
                    }
                }
                Some(ev @ (Event::Result { .. } | Event::Error { .. })) => {
                    return tool_result(ev, self.opts.max_output_bytes).into();
                }
                Some(
                    Event::Ready { .. }
                    | Event::Decision { .. }
                    | Event::Stdout { .. }
                    | Event::Stderr { .. },
                ) => {}
            }
        }
    }

    /// Keep a call that waits for the client's answer; calls parked longer than the session's
    /// approval timeout have been denied by then and are dropped.
    fn park(&self, call: CallEvents, owner: Owner) {
        if let Ok(mut p) = self.parked.lock() {
            let limit = self.opts.approval_timeout;
            p.retain(|_, (_, _, at)| at.elapsed() <= limit);
            p.insert(call.id.clone(), (call, owner, Instant::now()));
        }
    }

    /// The parked call a retry names, when the same owner retries it.
    fn unpark(&self, state: &str, owner: &Owner) -> Option<CallEvents> {
        let mut p = self.parked.lock().ok()?;
        if p.get(state).is_some_and(|(_, o, _)| o == owner) {
            return p.remove(state).map(|(c, _, _)| c);
        }
        None
    }
}

impl ServerHandler for SbxServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("sbx", env!("CARGO_PKG_VERSION")))
            .with_instructions(format!(
                "Shell commands run inside the sbx sandbox (profile `{}`): use `bash` for \
                 commands, `run_in_background` for anything longer than a minute.",
                self.opts.profile
            ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !self.tools.iter().any(|t| t.name == request.name) {
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{}`", request.name),
                None,
            ));
        }
        let owner = Owner {
            session: meta_str(&ctx, &request, SESSION_META),
            agent: meta_str(&ctx, &request, AGENT_META),
        };
        if let Some(state) = request.request_state.as_deref() {
            let Some(call) = self.unpark(state, &owner) else {
                return Ok(failure("error: this approval is unknown or has expired").into());
            };
            self.bridge.send(approval::answer_of(
                &call.id,
                request.input_responses.as_ref(),
            ));
            return Ok(self.follow(call, owner, &ctx).await);
        }
        let mut input = request.arguments.clone().unwrap_or_default();
        if request.name == "bash" {
            background_if_long(&mut input, self.opts.host_timeout);
        }
        let call = self.bridge.call(&request.name, input, &owner);
        Ok(self.follow(call, owner, &ctx).await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(v: Value) -> JsonObject {
        match v {
            Value::Object(m) => m,
            _ => JsonObject::new(),
        }
    }

    #[test]
    fn only_calls_longer_than_the_host_waits_go_to_the_background() {
        let host = Duration::from_secs(55);
        let mut long = input(serde_json::json!({"command": "make", "timeout_ms": 600_000}));
        assert!(background_if_long(&mut long, host));
        assert_eq!(long.get("run_in_background"), Some(&Value::Bool(true)));
        let mut short = input(serde_json::json!({"command": "make", "timeout_ms": 30_000}));
        assert!(!background_if_long(&mut short, host));
        assert!(!short.contains_key("run_in_background"));
        let mut none = input(serde_json::json!({"command": "make"}));
        assert!(!background_if_long(&mut none, host));
        // The caller's own choice stands.
        let mut chosen = input(
            serde_json::json!({"command": "make", "timeout_ms": 600_000, "run_in_background": false}),
        );
        assert!(!background_if_long(&mut chosen, host));
        assert_eq!(chosen.get("run_in_background"), Some(&Value::Bool(false)));
    }
}
