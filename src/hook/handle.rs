//! One hook invocation: read the event, decide through the pipeline, answer.
//!
//! Every failure answers deny with its cause: a harness treats a crash, a non-zero exit
//! or malformed output as "no opinion" and runs the tool.
#![forbid(unsafe_code)]

use super::answer::{answer, fail_closed, post_answer};
use super::event::{Harness, HookEvent};
use super::quote::{sandbox_command, sandboxed_inner};
use crate::pipeline::{AUDIT_VERSION, AuditRecord, Decision, Ruling, Stage};
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

/// How `--sandbox` puts an allowed shell call inside the sandbox.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SandboxMode {
    /// Allow with `updatedInput`: the command rewritten to run inside `sbx run`. Safe only
    /// where the harness is sure to apply the rewrite along with the allow.
    Rewrite,
    /// Deny the raw command, telling the model the exact sandboxed command to run instead, and
    /// allow (or ask for) exactly that command: nothing depends on the harness applying a
    /// rewrite, so nothing can run outside the sandbox when it drops one.
    Redirect,
}

impl SandboxMode {
    /// The mode a harness gets when none is named: redirect for Claude Code, which has
    /// dropped a hook's `updatedInput` for Bash while applying its allow; rewrite elsewhere.
    pub fn default_for(harness: Harness) -> Self {
        match harness {
            Harness::ClaudeCode => Self::Redirect,
            Harness::Codex | Harness::Gemini => Self::Rewrite,
        }
    }
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
    /// Run allowed or asked shell calls inside `sbx run`, and how.
    pub sandbox: Option<SandboxMode>,
    /// The `sbx` executable the rewrite names; defaults to this executable.
    pub sbx_path: Option<PathBuf>,
    /// Where post events are appended; defaults to `~/.local/state/sbx/audit.jsonl`.
    pub audit: Option<PathBuf>,
}

/// Handle one event and return the JSON to print. Never panics, never fails.
pub fn handle_event(opts: &HookOptions, input: impl std::io::Read) -> Value {
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
    let (verdict, updated) = match decide(opts, input) {
        Ok(x) => x,
        Err(cause) => (fail_closed(cause), None),
    };
    answer(opts.harness, &verdict, updated.as_ref())
}

/// The strictest verdict over the event's calls, and the rewritten input if any.
fn decide(
    opts: &HookOptions,
    input: impl std::io::Read,
) -> Result<(Ruling, Option<Map<String, Value>>), String> {
    let mut event = HookEvent::read(input).map_err(|e| e.to_string())?;
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
    let shell = opts.sandbox.is_some() && event.tool_name().ok() == Some(opts.harness.shell_tool());
    let mut wrap = None;
    if shell {
        let w = Wrap::new(opts, &loaded)?;
        // A redirected command, run as told: decide the command it wraps.
        if opts.sandbox == Some(SandboxMode::Redirect) && w.unwrap(&mut event)? {
            return Ok((decide_calls(&event, opts, &loaded)?, None));
        }
        wrap = Some(w);
    }
    let verdict = decide_calls(&event, opts, &loaded)?;
    let (Some(w), Decision::Allow | Decision::Ask) = (wrap, verdict.decision) else {
        return Ok((verdict, None));
    };
    let mut updated = event.tool_input().map_err(|e| e.to_string())?.clone();
    let command = updated
        .get("command")
        .and_then(Value::as_str)
        .ok_or("the shell call has no string `command`")?;
    let sandboxed = w.command(command)?;
    if opts.sandbox == Some(SandboxMode::Redirect) {
        return Ok((redirect(&verdict, &sandboxed), None));
    }
    updated.insert("command".into(), Value::String(sandboxed));
    Ok((verdict, Some(updated)))
}

/// The strictest verdict over the event's calls.
fn decide_calls(event: &HookEvent, opts: &HookOptions, loaded: &Loaded) -> Result<Ruling, String> {
    let cwd = event
        .cwd
        .clone()
        .unwrap_or_else(|| loaded.workspace.root.clone());
    let calls = event.calls(opts.harness, cwd).map_err(|e| e.to_string())?;
    let pipeline = loaded.pipeline().build();
    let mut verdict: Option<Ruling> = None;
    for call in &calls {
        let v = pipeline.decide(call).ruling;
        if verdict.as_ref().is_none_or(|w| v.decision > w.decision) {
            verdict = Some(v);
        }
    }
    verdict.ok_or_else(|| "the event names no call".to_string())
}

/// The deny that tells the model the exact sandboxed command to run instead.
fn redirect(verdict: &Ruling, sandboxed: &str) -> Ruling {
    Ruling::deny(
        Stage::Rules,
        "sbx-sandbox-redirect",
        format!(
            "this command may run only inside the sbx sandbox ({} by {}); run exactly this \
             command instead, unchanged: {sandboxed}",
            verdict.decision.as_str(),
            verdict.by
        ),
    )
}

/// What the sandboxed form of a command is made of.
struct Wrap {
    sbx: PathBuf,
    profile: String,
    workspace: PathBuf,
}

impl Wrap {
    fn new(opts: &HookOptions, loaded: &Loaded) -> Result<Self, String> {
        let sbx = match &opts.sbx_path {
            Some(p) => p.clone(),
            None => std::env::current_exe().map_err(|e| format!("cannot find sbx itself: {e}"))?,
        };
        // The profile the decision was made with, named as `Profile::load` took it: a file only
        // when the name is a path (a file in the session's directory named like a built-in
        // would otherwise become the profile the command runs under).
        let is_path = opts.profile.contains('/') || opts.profile.ends_with(".toml");
        let profile = match std::fs::canonicalize(&opts.profile) {
            Ok(p) if is_path && p.is_file() => p.to_string_lossy().into_owned(),
            Ok(_) | Err(_) => opts.profile.clone(),
        };
        Ok(Self {
            sbx,
            profile,
            workspace: loaded.workspace.root.clone(),
        })
    }

    fn command(&self, command: &str) -> Result<String, String> {
        sandbox_command(&self.sbx, &self.profile, &self.workspace, command)
            .map_err(|e| format!("cannot rewrite the command for the sandbox: {e}"))
    }

    /// When the event's command is exactly this sandboxed form, put the command it wraps in
    /// its place (to be decided) and say so.
    fn unwrap(&self, event: &mut HookEvent) -> Result<bool, String> {
        let command = event
            .tool_input()
            .map_err(|e| e.to_string())?
            .get("command")
            .and_then(Value::as_str)
            .ok_or("the shell call has no string `command`")?;
        let Some(inner) = sandboxed_inner(&self.sbx, &self.profile, &self.workspace, command)
        else {
            return Ok(false);
        };
        if let Some(Value::Object(input)) = event.tool_input.as_mut() {
            input.insert("command".into(), Value::String(inner));
        }
        Ok(true)
    }
}

fn post(opts: &HookOptions, input: impl std::io::Read) -> Value {
    if let Err(e) = record(opts, input) {
        eprintln!("sbx hook: post event not recorded: {e}");
    }
    post_answer()
}

fn default_audit_path() -> PathBuf {
    let state = std::env::var_os("XDG_STATE_HOME");
    crate::workspace::state_dir(state.as_deref(), &crate::workspace::home_dir()).join("audit.jsonl")
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
