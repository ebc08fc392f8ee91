//! The `hook`, `serve` and `tools` subcommands: argument parsing only.
use crate::stdout::outln;
use clap::{Args, ValueEnum};
use sbx::hook::{Harness, HookEventKind, HookOptions, SandboxMode, handle_event};
use sbx::serve::{DEFAULT_MAX_LINE_BYTES, ServeOptions, serve as serve_session};
use sbx::setup::{Loaded, SetupOptions};
use sbx::tools::{ToolFormat, tool_schemas};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum HarnessArg {
    ClaudeCode,
    Codex,
    Gemini,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum SandboxArg {
    Auto,
    Rewrite,
    Redirect,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum EventArg {
    Pre,
    Post,
}

#[derive(Args, Debug)]
pub struct HookArgs {
    /// The harness that runs the hook.
    #[arg(value_enum)]
    harness: HarnessArg,
    /// pre: decide (PreToolUse, BeforeTool); post: record the result (never blocks).
    #[arg(long, value_enum, default_value = "pre")]
    event: EventArg,
    /// Built-in profile name or path to a profile .toml file.
    #[arg(long, default_value = "workspace")]
    profile: String,
    /// An extra policy file (it must exist).
    #[arg(long)]
    policy: Option<PathBuf>,
    /// The workspace (default: the event's `cwd`).
    #[arg(long)]
    workspace: Option<PathBuf>,
    /// Run allowed or asked shell calls inside `sbx run`. `redirect` denies the raw command
    /// and names the exact sandboxed command to run instead (which it then allows); `rewrite`
    /// allows with the command rewritten. Without a value: redirect for claude-code, whose
    /// rewrites are not sure to apply, rewrite for codex and gemini.
    #[arg(long, value_enum, num_args = 0..=1, default_missing_value = "auto", require_equals = true)]
    sandbox: Option<SandboxArg>,
    /// Audit log for post events (default: ~/.local/state/sbx/audit.jsonl).
    #[arg(long)]
    audit: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    #[arg(long, default_value = "workspace")]
    profile: String,
    #[arg(long)]
    policy: Option<PathBuf>,
    /// The workspace (default: the current directory).
    #[arg(long)]
    workspace: Option<PathBuf>,
    /// Seconds an approval request waits for an answer before it is denied.
    #[arg(long, default_value_t = 60.0)]
    approval_timeout: f64,
    /// Longest request line accepted, in bytes.
    #[arg(long, default_value_t = DEFAULT_MAX_LINE_BYTES)]
    max_line_bytes: usize,
    /// Append an audit line per call and result to this file.
    #[arg(long)]
    audit: Option<PathBuf>,
    /// Seconds a terminal may go without a send or a read before it is closed.
    #[arg(long, default_value_t = 1800.0)]
    terminal_idle: f64,
    /// Print the JSON Schemas of every request and event, and exit.
    #[arg(long)]
    schema: bool,
}

pub fn hook(a: HookArgs) -> ExitCode {
    let harness = match a.harness {
        HarnessArg::ClaudeCode => Harness::ClaudeCode,
        HarnessArg::Codex => Harness::Codex,
        HarnessArg::Gemini => Harness::Gemini,
    };
    let opts = HookOptions {
        harness,
        event: match a.event {
            EventArg::Pre => HookEventKind::Pre,
            EventArg::Post => HookEventKind::Post,
        },
        profile: a.profile,
        policy: a.policy,
        workspace: a.workspace,
        sandbox: a.sandbox.map(|m| match m {
            SandboxArg::Auto => SandboxMode::default_for(harness),
            SandboxArg::Rewrite => SandboxMode::Rewrite,
            SandboxArg::Redirect => SandboxMode::Redirect,
        }),
        sbx_path: None,
        audit: a.audit,
    };
    let answer = handle_event(&opts, std::io::stdin().lock());
    outln!("{answer}");
    ExitCode::SUCCESS
}

pub fn serve(a: ServeArgs) -> ExitCode {
    if a.schema {
        return match serde_json::to_string_pretty(&sbx::serve::schemas()) {
            Ok(s) => {
                outln!("{s}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("sbx serve: {e}");
                ExitCode::from(1)
            }
        };
    }
    let Some((loaded, observers)) =
        load_session("serve", a.profile.clone(), a.policy, a.workspace, a.audit)
    else {
        return ExitCode::from(125);
    };
    let opts = ServeOptions {
        max_line_bytes: a.max_line_bytes.max(1),
        approval_timeout: Duration::from_secs_f64(a.approval_timeout.clamp(0.0, 86_400.0)),
        profile: a.profile,
        terminal_idle: Duration::from_secs_f64(a.terminal_idle.clamp(0.0, 31_536_000.0)),
    };
    session_runtime("serve", || {
        serve_session(
            &loaded,
            &opts,
            observers,
            tokio::io::stdin(),
            tokio::io::stdout(),
        )
    })
}

/// A `serve` or `mcp` session on a runtime of its own: exit 125 when the runtime cannot
/// start, 1 when the session fails, each with its cause on stderr.
pub fn session_runtime<F, E>(name: &str, session: impl FnOnce() -> F) -> ExitCode
where
    F: std::future::Future<Output = Result<(), E>>,
    E: std::fmt::Display,
{
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("sbx {name}: cannot start the runtime: {e}");
            return ExitCode::from(125);
        }
    };
    match rt.block_on(session()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sbx {name}: {e}");
            ExitCode::from(1)
        }
    }
}

/// Load the profile, policy and workspace of a `serve` or `mcp` session, and its audit log.
/// A failure is told on stderr (the setup exit code is the caller's).
pub fn load_session(
    cmd: &str,
    profile: String,
    policy: Option<PathBuf>,
    workspace: Option<PathBuf>,
    audit: Option<PathBuf>,
) -> Option<(Loaded, Vec<Arc<dyn sbx::pipeline::Observer>>)> {
    let workspace =
        workspace.unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")));
    let loaded = Loaded::load(&SetupOptions {
        profile,
        policy,
        workspace,
    })
    .map_err(|e| eprintln!("sbx {cmd}: {e}"))
    .ok()?;
    let mut observers: Vec<Arc<dyn sbx::pipeline::Observer>> = Vec::new();
    if let Some(path) = &audit {
        let log = sbx::pipeline::AuditLog::open(path)
            .map_err(|e| eprintln!("sbx {cmd}: audit log {}: {e}", path.display()))
            .ok()?;
        observers.push(Arc::new(log));
    }
    Some((loaded, observers))
}

pub fn tools(format: &str) -> ExitCode {
    let Some(f) = ToolFormat::parse(format) else {
        eprintln!("sbx tools: unknown format `{format}` (anthropic, openai, json-schema)");
        return ExitCode::from(2);
    };
    match serde_json::to_string_pretty(&tool_schemas(f)) {
        Ok(s) => {
            outln!("{s}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("sbx tools: {e}");
            ExitCode::from(1)
        }
    }
}
