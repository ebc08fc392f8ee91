//! The `hook`, `serve` and `tools` subcommands: argument parsing only.
use crate::stdout::outln;
use clap::{Args, ValueEnum};
use sbx::hook::{Harness, HookEventKind, HookOptions, SandboxMode, handle_event};
use sbx::serve::{DEFAULT_MAX_LINE_BYTES, ServeOptions, serve_until as serve_session};
use sbx::setup::{Loaded, SetupOptions};
use sbx::tools::{ToolFormat, tool_schemas};
use std::cell::Cell;
use std::path::PathBuf;
use std::process::ExitCode;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;
use tokio::signal::unix::{Signal, SignalKind, signal};

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
    session_runtime("serve", |stop| {
        serve_session(
            &loaded,
            &opts,
            observers,
            tokio::io::stdin(),
            tokio::io::stdout(),
            stop,
        )
    })
}

/// What ends a session early: the first SIGTERM, SIGINT or SIGHUP.
pub type Stop = std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>;

/// A `serve` or `mcp` session on a runtime of its own: exit 125 when the runtime cannot
/// start or the stop signals cannot be caught, 1 when the session fails, each with its cause
/// on stderr, and 128+N when signal N stopped it (once the session ended as at the end of its
/// input: every run killed and checked).
pub fn session_runtime<F, E>(name: &str, session: impl FnOnce(Stop) -> F) -> ExitCode
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
    let got = Rc::new(Cell::new(0));
    let ran = rt.block_on(async {
        let signals = StopSignals::catch()?;
        let stop = Box::pin(signals.first(name.to_string(), got.clone()));
        Ok::<_, std::io::Error>(session(stop).await.map_err(|e| e.to_string()))
    });
    let ran = match ran {
        Ok(ran) => ran,
        Err(e) => {
            eprintln!("sbx {name}: cannot catch SIGTERM, SIGINT and SIGHUP: {e}");
            return ExitCode::from(125);
        }
    };
    if got.get() > 0 {
        // The stdin reader may still be blocked in a read that nobody waits for.
        rt.shutdown_background();
    }
    if let Err(e) = &ran {
        eprintln!("sbx {name}: {e}");
    }
    match (got.get(), ran) {
        (n, _) if n > 0 => ExitCode::from(u8::try_from(128 + n).unwrap_or(u8::MAX)),
        (_, Ok(())) => ExitCode::SUCCESS,
        (_, Err(_)) => ExitCode::from(1),
    }
}

/// SIGTERM (how hosts stop their servers), SIGINT and SIGHUP, caught for the rest of the
/// process's life: one ends the session as closing stdin does, and any after it is ignored
/// (the session's end kills the trees with SIGKILL, and the checks after them are quick).
struct StopSignals {
    term: Signal,
    int: Signal,
    hup: Signal,
}

impl StopSignals {
    fn catch() -> std::io::Result<Self> {
        Ok(Self {
            term: signal(SignalKind::terminate())?,
            int: signal(SignalKind::interrupt())?,
            hup: signal(SignalKind::hangup())?,
        })
    }

    /// Wait for the first, tell it on stderr and keep its number in `got`.
    async fn first(mut self, name: String, got: Rc<Cell<i32>>) {
        let (n, what) = tokio::select! {
            _ = self.term.recv() => (libc::SIGTERM, "SIGTERM"),
            _ = self.int.recv() => (libc::SIGINT, "SIGINT"),
            _ = self.hup.recv() => (libc::SIGHUP, "SIGHUP"),
        };
        eprintln!("sbx {name}: {what}: ending the session (killing its runs, then their checks)");
        got.set(n);
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
