//! `sbx mcp`: the sandbox as a Model Context Protocol server over stdio, built on the official
//! Rust SDK. It offers the tools of `sbx serve` and answers them through an `sbx serve` session
//! in the same process: the same permission pipeline, approval, sandbox, jobs and terminals.
//! See `docs/mcp.md`.
#![forbid(unsafe_code)]

mod approval;
mod bridge;
mod frame;
mod handler;
mod render;

pub use handler::{AGENT_META, McpOptions, SESSION_META, background_if_long};
pub use render::{DEFAULT_MAX_OUTPUT_BYTES, ToolOutcome, cap_text, output_schema};

use crate::hook::Loaded;
use crate::pipeline::Observer;
use crate::serve::{DEFAULT_MAX_LINE_BYTES, ServeOptions, serve};
use bridge::Bridge;
use handler::SbxServer;
use rmcp::ServiceExt;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};

/// The in-process pipe between the MCP front and the session, per direction.
const PIPE_BYTES: usize = 256 * 1024;

/// Serve MCP over `input` and `output` until the client goes away; then every call is
/// cancelled and every process tree (jobs and terminals included) is killed.
pub async fn serve_mcp<R, W>(
    loaded: &Loaded,
    opts: &McpOptions,
    observers: Vec<Arc<dyn Observer>>,
    input: R,
    output: W,
) -> std::io::Result<()>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let (ours, theirs) = tokio::io::duplex(PIPE_BYTES);
    let (their_read, their_write) = tokio::io::split(theirs);
    let serve_opts = ServeOptions {
        max_line_bytes: DEFAULT_MAX_LINE_BYTES,
        approval_timeout: opts.approval_timeout,
        profile: opts.profile.clone(),
        terminal_idle: opts.terminal_idle,
    };
    let session = serve(loaded, &serve_opts, observers, their_read, their_write);
    let bridge = Bridge::start(ours);
    let (sdk, relay) = frame::frame(input, output, DEFAULT_MAX_LINE_BYTES, PIPE_BYTES);
    let front = async {
        let server = SbxServer::new(bridge.clone(), opts.clone());
        let ran = match server.serve((sdk.input, sdk.output)).await {
            Ok(running) => running
                .waiting()
                .await
                .map(drop)
                .map_err(std::io::Error::other),
            Err(e) => Err(std::io::Error::other(e.to_string())),
        };
        bridge.close();
        ran
    };
    let (served, fronted, relayed) = tokio::join!(session, front, relay);
    served.and(fronted).and(relayed)
}
