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
use crate::serve::{DEFAULT_MAX_LINE_BYTES, ServeOptions, serve_until};
use bridge::Bridge;
use handler::SbxServer;
use rmcp::ServiceExt;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::oneshot;

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
    let never = std::future::pending();
    serve_mcp_until(loaded, opts, observers, input, output, never).await
}

/// [`serve_mcp`] until the client goes away or `stop` completes. On `stop` the session ends
/// as when the client goes: every call, job and terminal is killed and each run's checks are
/// done; then the client is no longer waited for. `sbx mcp` stops on SIGTERM, SIGINT or
/// SIGHUP.
pub async fn serve_mcp_until<R, W>(
    loaded: &Loaded,
    opts: &McpOptions,
    observers: Vec<Arc<dyn Observer>>,
    input: R,
    output: W,
    stop: impl Future<Output = ()>,
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
    let stopped = std::cell::Cell::new(false);
    let stop = async {
        stop.await;
        stopped.set(true);
    };
    let (ended, session_ended) = oneshot::channel::<()>();
    let session = async {
        let served = serve_until(
            loaded,
            &serve_opts,
            observers,
            their_read,
            their_write,
            stop,
        );
        let served = served.await;
        let _told = ended.send(());
        served
    };
    let client = client(Bridge::start(ours), opts, input, output);
    let cut = async {
        // Once a stopped session has ended, the client is not waited for.
        if session_ended.await.is_ok() && stopped.get() {
            return;
        }
        std::future::pending::<()>().await;
    };
    let (served, client) = tokio::join!(session, async {
        tokio::select! {
            r = client => r,
            () = cut => Ok(()),
        }
    });
    served.and(client)
}

/// The MCP front over `input` and `output`, until the client goes away.
async fn client<R, W>(
    bridge: Arc<Bridge>,
    opts: &McpOptions,
    input: R,
    output: W,
) -> std::io::Result<()>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
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
    let (fronted, relayed) = tokio::join!(front, relay);
    fronted.and(relayed)
}
