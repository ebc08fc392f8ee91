//! One hook invocation: read the event, decide through the pipeline, answer.
//!
//! Every failure answers deny with its cause: a harness treats a crash, a non-zero exit
//! or malformed output as "no opinion" and runs the tool.
#![forbid(unsafe_code)]

use super::answer::{answer, fail_closed, post_answer};
use super::event::{Harness, HookEvent};
use super::quote::sandbox_command;
use crate::pipeline::{AUDIT_VERSION, AuditRecord, Decision, Ruling};
use crate::setup::{Loaded, SetupOptions};
use serde_json::{Map, Value};
use std::io::Write;
use std::path::PathBuf;

/// Which event the hook is installed for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookEventKind {
    /// PreToolUse (Claude Code, Codex) or BeforeTool (Gemini CLI): decide.
    Pre,
    /// PostToolUse or AfterTool: record the result; never block.
    Post,
}

/// The options of `sbx hook`.
#[derive(Clone, Debug)]
pub struct HookOptions {
    /// The harness that runs the hook.
    pub harness: Harness,
    /// The event it is installed for.
    pub event: HookEventKind,
    /// A built-in profile's name or a profile file's path.
    pub profile: String,
    /// An extra policy file.
    pub policy: Option<PathBuf>,
    /// Defaults to the event's `cwd`.
    pub workspace: Option<PathBuf>,
    /// Rewrite allowed or asked shell calls to run inside `sbx run`.
    pub sandbox: bool,
    /// The `sbx` executable the rewrite names; defaults to this executable.
    pub sbx_path: Option<PathBuf>,
    /// Where post events are appended; defaults to `~/.local/state/sbx/audit.jsonl`.
    pub audit: Option<PathBuf>,
}

/// Handle one event and return the JSON to print. Never panics, never fails.
pub fn run_hook(opts: &HookOptions, input: impl std::io::Read) -> Value {
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match opts.event {
        HookEventKind::Pre => pre(opts, input),
        HookEventKind::Post => post(opts, input),
    }));
    match outcome {
        Ok(v) => v,
        Err(_) => match opts.event {
            HookEventKind::Pre => {
                answer(opts.harness, &fail_closed("internal error (panic)"), None)
            }
            HookEventKind::Post => post_answer(),
        },
    }
}

fn pre(opts: &HookOptions, input: impl std::io::Read) -> Value {
    let (ruling, updated) = match decide(opts, input) {
        Ok(x) => x,
        Err(cause) => (fail_closed(cause), None),
    };
    answer(opts.harness, &ruling, updated.as_ref())
}

/// The strictest ruling over the event's calls, and the rewritten input if any.
fn decide(
    opts: &HookOptions,
    input: impl std::io::Read,
) -> Result<(Ruling, Option<Map<String, Value>>), String> {
    let event = HookEvent::read(input).map_err(|e| e.to_string())?;
    let workspace = opts
        .workspace
        .clone()
        .or_else(|| event.cwd.clone())
        .ok_or("no workspace: the event has no `cwd` and --workspace was not given")?;
    let loaded = Loaded::load(&SetupOptions {
        profile: opts.profile.clone(),
        policy: opts.policy.clone(),
        workspace,
    })
    .map_err(|e| e.to_string())?;
    let cwd = event
        .cwd
        .clone()
        .unwrap_or_else(|| loaded.workspace.clone());
    let calls = event.calls(opts.harness, cwd).map_err(|e| e.to_string())?;
    let pipeline = loaded.pipeline().build();
    let mut ruling: Option<Ruling> = None;
    for call in &calls {
        let v = pipeline.decide(call).ruling;
        if ruling.as_ref().is_none_or(|w| v.decision > w.decision) {
            ruling = Some(v);
        }
    }
    let ruling = ruling.ok_or("the event names no call")?;
    let tool = event.tool_name().map_err(|e| e.to_string())?;
    let wants_rewrite = opts.sandbox
        && tool == opts.harness.shell_tool()
        && matches!(ruling.decision, Decision::Allow | Decision::Ask);
    if !wants_rewrite {
        return Ok((ruling, None));
    }
    let mut updated = event.tool_input().map_err(|e| e.to_string())?.clone();
    let command = updated
        .get("command")
        .and_then(Value::as_str)
        .ok_or("the shell call has no string `command`")?;
    let sbx = match &opts.sbx_path {
        Some(p) => p.clone(),
        None => std::env::current_exe().map_err(|e| format!("cannot find sbx itself: {e}"))?,
    };
    let profile = match std::fs::canonicalize(&opts.profile) {
        Ok(p) if p.is_file() => p.to_string_lossy().into_owned(),
        Ok(_) | Err(_) => opts.profile.clone(),
    };
    let rewritten = sandbox_command(&sbx, &profile, &loaded.workspace, command)
        .map_err(|e| format!("cannot rewrite the command for the sandbox: {e}"))?;
    updated.insert("command".into(), Value::String(rewritten));
    Ok((ruling, Some(updated)))
}

fn post(opts: &HookOptions, input: impl std::io::Read) -> Value {
    if let Err(e) = record(opts, input) {
        eprintln!("sbx hook: post event not recorded: {e}");
    }
    post_answer()
}

fn default_audit_path() -> PathBuf {
    let state = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))
        .unwrap_or_else(|| PathBuf::from("/tmp"));
    state.join("sbx/audit.jsonl")
}

/// Append the harness's result to the audit log, in the pipeline's audit line format.
fn record(opts: &HookOptions, input: impl std::io::Read) -> Result<(), String> {
    let event = HookEvent::read(input).map_err(|e| e.to_string())?;
    let path = opts.audit.clone().unwrap_or_else(default_audit_path);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let ts_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let tool = event.tool_name.clone().unwrap_or_default();
    let agent = opts.harness.as_str();
    let is_error = event
        .tool_response
        .as_ref()
        .and_then(|r| r.get("is_error").or_else(|| r.get("error")))
        .map(|e| !e.is_null() && e != &Value::Bool(false));
    let rec = AuditRecord {
        v: AUDIT_VERSION,
        event: "harness-result",
        ts_ms,
        call_id: event.tool_use_id.as_deref().unwrap_or(""),
        session: &event.session_id,
        agent,
        tool: &tool,
        input: event.tool_input.as_ref(),
        canonical: None,
        meta: None,
        decision: None,
        stage: None,
        by: Some(agent),
        rule: None,
        source: None,
        reason: None,
        is_error,
        duration_ms: None,
        exit_status: None,
        signal: None,
        enforcement: None,
        network: None,
        hook_rewrites: &[],
        post: &[],
    };
    let mut line = serde_json::to_vec(&rec).map_err(|e| e.to_string())?;
    line.push(b'\n');
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    f.write_all(&line)
        .map_err(|e| format!("{}: {e}", path.display()))
}
