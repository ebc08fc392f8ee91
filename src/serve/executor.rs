//! The pipeline's executor backed by the sandbox: runs `bash -c` calls under the profile,
//! streams output to a sink, and stops a run when its cancel handle fires or is dropped.
//! A call with `run_in_background` is handed to the session's [`Jobs`] instead of awaited.
#![forbid(unsafe_code)]

use super::jobs::Jobs;
use super::terminals::Terminals;
use super::utf8::Utf8Chunks;
use crate::exec::{Output, RunRequest, Sandbox, Stream};
use crate::pipeline::{BoxFuture, EnforcedCaps, ExecError, ExecOutcome, ExecRequest, Executor};
use crate::workspace::WorkspaceContext;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::oneshot;

/// Receives output chunks as they arrive: `(call id, stream, text)`.
pub type OutputSink = Arc<dyn Fn(&str, Stream, String) + Send + Sync>;

/// How much output an [`ExecOutcome`] keeps per stream (the profile's cap applies first).
pub const OUTCOME_BYTES: usize = 1024 * 1024;

/// Runs shell calls inside the sandbox.
pub struct SandboxExecutor {
    sandbox: Arc<Sandbox>,
    workspace: WorkspaceContext,
    sink: Option<OutputSink>,
    cancels: Mutex<HashMap<String, oneshot::Receiver<()>>>,
    jobs: Arc<Jobs>,
    /// Asks about host names a `proxy` profile does not list.
    net_approval: Option<Arc<super::approval::NetApproval>>,
    terminals: Arc<Terminals>,
}

impl SandboxExecutor {
    /// An executor running calls in `sandbox` where `workspace` says (its root is
    /// `{workspace}`): every run takes this context, derived once for the session
    /// ([`WorkspaceContext::of`] for a bare path).
    pub fn new(sandbox: Arc<Sandbox>, workspace: WorkspaceContext) -> Self {
        Self {
            sandbox,
            workspace,
            sink: None,
            cancels: Mutex::new(HashMap::new()),
            jobs: Arc::new(Jobs::default()),
            net_approval: None,
            terminals: Arc::new(Terminals::default()),
        }
    }

    /// Ask the client about host names a `proxy` profile does not list.
    #[must_use]
    pub(super) fn with_net_approval(mut self, a: Arc<super::approval::NetApproval>) -> Self {
        self.net_approval = Some(a);
        self
    }

    /// The background jobs this executor started. Dropping the last handle kills them.
    pub fn jobs(&self) -> Arc<Jobs> {
        self.jobs.clone()
    }

    /// The terminals this executor opened. Dropping the last handle kills them.
    pub fn terminals(&self) -> Arc<Terminals> {
        self.terminals.clone()
    }

    /// Close terminals after `idle` without use (default [`TERMINAL_IDLE`](super::TERMINAL_IDLE)).
    #[must_use]
    pub fn with_terminal_idle(mut self, idle: Duration) -> Self {
        self.terminals = Arc::new(Terminals::new(idle));
        self
    }

    /// Stream output chunks to `sink` as well as collecting them.
    #[must_use]
    pub fn with_sink(mut self, sink: OutputSink) -> Self {
        self.sink = Some(sink);
        self
    }

    /// A handle that cancels the call `id` when sent to or dropped.
    pub fn register_cancel(&self, id: &str) -> oneshot::Sender<()> {
        let (tx, rx) = oneshot::channel();
        if let Ok(mut m) = self.cancels.lock() {
            m.insert(id.to_string(), rx);
        }
        tx
    }

    /// Drop the cancel handle of a finished call.
    pub fn forget(&self, id: &str) {
        if let Ok(mut m) = self.cancels.lock() {
            m.remove(id);
        }
    }

    fn take_cancel(&self, id: &str) -> Option<oneshot::Receiver<()>> {
        self.cancels.lock().ok().and_then(|mut m| m.remove(id))
    }

    fn run_request(&self, req: &ExecRequest, output: Output) -> RunRequest {
        let argv = req.argv.iter().map(std::ffi::OsString::from);
        let mut run = RunRequest::new(argv, self.workspace.clone());
        run.cwd = req.cwd.clone();
        run.env = std::env::vars_os().collect();
        run.timeout = req.timeout;
        run.grace = Duration::from_secs(2);
        run.output = output;
        run.net_approver = self.net_approval.as_ref().map(|a| a.for_call(&req.call_id));
        run
    }

    /// Start `req` as a background job; the call's own cancel handle ends with the call.
    fn start_job(&self, req: &ExecRequest, caps: &EnforcedCaps) -> Result<ExecOutcome, ExecError> {
        let command = req
            .input
            .get("command")
            .and_then(serde_json::Value::as_str)
            .map_or_else(|| req.argv.join(" "), str::to_string);
        let run = self.run_request(req, Output::Collect);
        let id = self
            .jobs
            .start(
                self.sandbox.clone(),
                run,
                Arc::clone(caps.shared()),
                command,
            )
            .map_err(|e| ExecError::Failed {
                message: e.to_string(),
            })?;
        Ok(ExecOutcome {
            stdout: format!(
                "started job {id} in the background; read its output with job_output, \
                 stop it with job_kill"
            ),
            job: Some(id),
            ..ExecOutcome::default()
        })
    }
}

impl SandboxExecutor {
    /// Open `req` (the shell) on a terminal: a call with a `terminal` object in its input.
    fn open_terminal(
        &self,
        req: &ExecRequest,
        caps: &EnforcedCaps,
        size: &serde_json::Value,
    ) -> Result<ExecOutcome, ExecError> {
        let dim = |k: &str| {
            size.get(k)
                .and_then(serde_json::Value::as_u64)
                .and_then(|v| u16::try_from(v).ok())
                .unwrap_or(0)
        };
        let mut run = self.run_request(req, Output::Collect);
        run.env.push(("TERM".into(), "xterm-256color".into()));
        let id = self
            .terminals
            .open(
                self.sandbox.clone(),
                run,
                Arc::clone(caps.shared()),
                (dim("rows"), dim("cols")),
            )
            .map_err(|e| ExecError::Failed {
                message: e.to_string(),
            })?;
        Ok(ExecOutcome {
            stdout: format!(
                "opened terminal {id}: type with terminal_send, read with terminal_read, \
                 close with terminal_close"
            ),
            job: Some(id),
            ..ExecOutcome::default()
        })
    }
}

#[derive(Default)]
struct Collected {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    cut: bool,
}

impl Executor for SandboxExecutor {
    fn execute<'a>(
        &'a self,
        req: &'a ExecRequest,
        caps: &'a EnforcedCaps,
    ) -> BoxFuture<'a, Result<ExecOutcome, ExecError>> {
        Box::pin(async move {
            let cancel = self.take_cancel(&req.call_id);
            if req.argv.is_empty() {
                return Err(ExecError::Unsupported {
                    tool: req.tool.clone(),
                });
            }
            if let Some(size) = req.input.get("terminal") {
                drop(cancel);
                return self.open_terminal(req, caps, size);
            }
            if req.background {
                drop(cancel);
                return self.start_job(req, caps);
            }
            let collected = Arc::new(Mutex::new(Collected::default()));
            let callback = collector(collected.clone(), self.sink.clone(), req.call_id.clone());
            let mut run = self.run_request(req, Output::Callback(Box::new(callback)));
            run.cancel = cancel;
            let result = self
                .sandbox
                .run(run, Some(caps.shared()))
                .await
                .map_err(|e| ExecError::Spawn {
                    message: e.to_string(),
                })?;
            let c = collected
                .lock()
                .map(|mut c| std::mem::take(&mut *c))
                .unwrap_or_default();
            Ok(outcome(&result, c))
        })
    }
}

/// Keeps a run's output (up to [`OUTCOME_BYTES`] a stream) and streams it to `sink` as text.
fn collector(
    keep: Arc<Mutex<Collected>>,
    sink: Option<OutputSink>,
    id: String,
) -> impl FnMut(Stream, &[u8]) -> std::ops::ControlFlow<()> + Send + 'static {
    let mut out = Utf8Chunks::default();
    let mut err = Utf8Chunks::default();
    move |stream: Stream, bytes: &[u8]| {
        if let Ok(mut c) = keep.lock() {
            let buf = match stream {
                Stream::Stdout => &mut c.stdout,
                Stream::Stderr => &mut c.stderr,
            };
            let room = OUTCOME_BYTES.saturating_sub(buf.len());
            buf.extend_from_slice(&bytes[..bytes.len().min(room)]);
            if bytes.len() > room {
                c.cut = true;
            }
        }
        if let Some(sink) = &sink {
            let text = match stream {
                Stream::Stdout => out.push(bytes),
                Stream::Stderr => err.push(bytes),
            };
            if !text.is_empty() {
                sink(&id, stream, text);
            }
        }
        std::ops::ControlFlow::Continue(())
    }
}

/// The command's standard error and after it the run's notices, as `sbx run` prints them.
pub(super) fn with_notices(mut stderr: String, result: &crate::exec::RunResult) -> String {
    for n in result.notices() {
        if !stderr.is_empty() && !stderr.ends_with('\n') {
            stderr.push('\n');
        }
        stderr.push_str(&format!("sbx: {n}\n"));
    }
    stderr
}

/// What the pipeline gets back from a run and the output kept of it.
fn outcome(result: &crate::exec::RunResult, c: Collected) -> ExecOutcome {
    let killed = result.signal.filter(|_| !result.timed_out);
    ExecOutcome {
        exit_status: if killed.is_some() {
            None
        } else {
            Some(result.code())
        },
        signal: killed,
        stdout: String::from_utf8_lossy(&c.stdout).into_owned(),
        stderr: with_notices(String::from_utf8_lossy(&c.stderr).into_owned(), result),
        truncated: c.cut || result.stdout_truncated || result.stderr_truncated,
        timed_out: result.timed_out,
        duration: Duration::from_millis(result.duration_ms),
        enforcement: serde_json::to_value(&result.enforcement).unwrap_or(serde_json::Value::Null),
        job: None,
        network: result.network.clone(),
    }
}
