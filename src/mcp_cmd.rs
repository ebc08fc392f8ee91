//! The `mcp` subcommand: argument parsing only.
use crate::adapters::{load_session, session_runtime};
use clap::Args;
use sbx::mcp::{DEFAULT_MAX_OUTPUT_BYTES, McpOptions, serve_mcp_until};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct McpArgs {
    /// Built-in profile name or path to a profile .toml file.
    #[arg(long, default_value = "workspace")]
    profile: String,
    /// An extra policy file for the permission gate.
    #[arg(long)]
    policy: Option<PathBuf>,
    /// The workspace (default: the current directory).
    #[arg(long)]
    workspace: Option<PathBuf>,
    /// Append an audit line per call and result to this file.
    #[arg(long)]
    audit: Option<PathBuf>,
    /// Cut a result's text to this many bytes, keeping its start and end (the default is
    /// about 20,000 tokens, below what hosts accept).
    #[arg(long, default_value_t = DEFAULT_MAX_OUTPUT_BYTES)]
    max_output_bytes: usize,
    /// Seconds an approval asked through the client waits for the user before it is denied.
    #[arg(long, default_value_t = 60.0)]
    approval_timeout: f64,
    /// Seconds a terminal may go without a send or a read before it is closed.
    #[arg(long, default_value_t = 1800.0)]
    terminal_idle: f64,
    /// Seconds the host waits for a tool call: a `bash` call whose `timeout_ms` is longer is
    /// started in the background and answered with its job id.
    #[arg(long, default_value_t = 55.0)]
    host_timeout: f64,
}

pub fn mcp(a: McpArgs) -> ExitCode {
    let Some((loaded, observers)) =
        load_session("mcp", a.profile.clone(), a.policy, a.workspace, a.audit)
    else {
        return ExitCode::from(125);
    };
    let opts = McpOptions {
        profile: a.profile,
        max_output_bytes: a.max_output_bytes.max(256),
        approval_timeout: Duration::from_secs_f64(a.approval_timeout.clamp(0.0, 86_400.0)),
        terminal_idle: Duration::from_secs_f64(a.terminal_idle.clamp(0.0, 31_536_000.0)),
        host_timeout: Duration::from_secs_f64(a.host_timeout.clamp(0.0, 86_400.0)),
    };
    session_runtime("mcp", |stop| {
        serve_mcp_until(
            &loaded,
            &opts,
            observers,
            tokio::io::stdin(),
            tokio::io::stdout(),
            stop,
        )
    })
}
