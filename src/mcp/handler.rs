//! The MCP tool handler: lists sbx's tools and answers `tools/call` by running the call in
//! the in-process `sbx serve` session, so that it takes the same pipeline, approval, sandbox
//! and jobs as a call over `sbx serve`.
#![forbid(unsafe_code)]

use super::bridge::{Bridge, CallEvents, Owner};
use super::render::{failure, output_schema, tool_result};
use crate::serve::{ApprovalReply, Event, Request};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, JsonObject,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig,
    Tool, ToolAnnotations,
};
use rmcp::service::{ElicitationError, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// Settings of an `sbx mcp` server.
#[derive(Clone, Debug)]
pub struct McpOptions {
    /// The profile's name, for the server's instructions.
    pub profile: String,
    /// A result's text is cut to this many bytes (start and end kept).
    pub max_output_bytes: usize,
    /// How long an approval asked through elicitation waits for the user.
    pub approval_timeout: Duration,
}

/// The `_meta` keys a client may set to name the agent session and agent making a call;
/// jobs and terminals belong to that pair.
pub const SESSION_META: &str = "sbx/session";
pub const AGENT_META: &str = "sbx/agent";

/// The answer form shown when a call needs approval: accepting allows the call.
#[derive(Debug, Default, Deserialize, JsonSchema)]
struct ApprovalForm {
    /// Also allow calls like this one for the rest of the session.
    #[serde(default)]
    remember_for_session: bool,
}

rmcp::elicit_safe!(ApprovalForm);

pub(super) struct SbxServer {
    pub(super) bridge: Arc<Bridge>,
    pub(super) opts: McpOptions,
    tools: Vec<Tool>,
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
        }
    }

    /// Follow a call to its result, asking for approval when the session asks, and passing
    /// on the host's cancellation.
    async fn follow(
        &self,
        mut call: CallEvents,
        ctx: &RequestContext<RoleServer>,
    ) -> CallToolResult {
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
                None => return failure("error: the sandbox session has ended"),
                Some(Event::ApprovalRequest {
                    canonical, reason, ..
                }) => {
                    let answer = self.approve(ctx, &call.id, &canonical, &reason).await;
                    self.bridge.send(answer);
                }
                Some(ev @ (Event::Result { .. } | Event::Error { .. })) => {
                    return tool_result(ev, self.opts.max_output_bytes);
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

    /// Ask the user through elicitation; a client that cannot ask gets the call refused with
    /// the reason.
    async fn approve(
        &self,
        ctx: &RequestContext<RoleServer>,
        id: &str,
        canonical: &str,
        reason: &str,
    ) -> Request {
        let deny = |why: String| Request::Approval {
            id: id.to_string(),
            answer: ApprovalReply::Deny,
            scope: None,
            reason: Some(why),
        };
        let modern = ctx
            .protocol_version()
            .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
        if modern {
            return deny(format!(
                "needs approval ({reason}), and sbx cannot ask for it on this protocol version"
            ));
        }
        let message = format!("sbx: allow `{canonical}`?\n{reason}");
        let asked = ctx
            .peer
            .elicit_with_timeout::<ApprovalForm>(message, Some(self.opts.approval_timeout))
            .await;
        let answer = match asked {
            Ok(Some(f)) if f.remember_for_session => ApprovalReply::AllowForSession,
            Ok(_) => ApprovalReply::AllowOnce,
            Err(ElicitationError::UserDeclined | ElicitationError::UserCancelled) => {
                return deny("the user declined".into());
            }
            Err(ElicitationError::CapabilityNotSupported) => {
                return deny(format!(
                    "needs approval ({reason}), and this MCP client cannot ask the user \
                     (it does not support elicitation)"
                ));
            }
            Err(e) => return deny(format!("needs approval ({reason}); asking failed: {e}")),
        };
        Request::Approval {
            id: id.to_string(),
            answer,
            scope: None,
            reason: None,
        }
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
        let input = request.arguments.clone().unwrap_or_default();
        let call = self.bridge.call(&request.name, input, &owner);
        Ok(self.follow(call, &ctx).await.into())
    }
}
