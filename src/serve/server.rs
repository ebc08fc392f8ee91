//! The `sbx serve` session: read requests, run calls concurrently through the pipeline,
//! stream events back. Closing stdin (or the caller's stop, such as a signal) cancels every
//! call and kills every process tree, background jobs included, each run's checks done.
#![forbid(unsafe_code)]

use super::approval::{Pending, ProtocolApproval, scope_of};
use super::executor::{OutputSink, SandboxExecutor};
use super::job_tools::{self, JobTool};
use super::jobs::Jobs;
use super::lines::{Line, next_line};
use super::protocol::{ApprovalReply, Event, PROTOCOL_VERSION, Request};
use super::ruling::{RulingFields, SESSION};
use super::term_tools::{self, TermTool};
use super::terminals::Terminals;
use crate::exec::Stream;
use crate::pipeline::{
    ApprovalAnswer, CallResult, Caller, Observer, Pipeline, Ruling, Stage, ToolCall,
};
use crate::setup::Loaded;
use crate::tools::{render_refusal, render_result};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};

/// Session settings.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// Request lines longer than this are refused with an error event.
    pub max_line_bytes: usize,
    /// An approval request not answered within this is denied.
    pub approval_timeout: Duration,
    /// The profile name, announced in the `ready` event.
    pub profile: String,
    /// A terminal unused for this long is closed.
    pub terminal_idle: Duration,
}

fn str_of(v: &Value) -> Option<String> {
    v.as_str().map(str::to_string)
}

/// The shell a terminal runs: the pipeline decides a `terminal_open` as this command.
pub const TERMINAL_SHELL: &str = "bash -i";

/// The owner of jobs and terminals: the agent session and the agent within it.
fn owner_key(session: &str, agent: &str) -> String {
    serde_json::to_string(&[session, agent]).unwrap_or_default()
}

/// `terminal_open` in the pipeline's vocabulary: a `Bash` call of [`TERMINAL_SHELL`] whose
/// `terminal` object tells the executor to run it on a terminal.
fn terminal_call(input: Map<String, Value>) -> (String, Value) {
    let mut m = Map::new();
    m.insert("command".into(), TERMINAL_SHELL.into());
    m.insert(
        "description".into(),
        "an interactive shell on a terminal".into(),
    );
    // The shell is sbx's to name: only the size and the working directory come from the
    // caller (a `command` here would open a terminal on a program the gate never saw).
    let mut size = Map::new();
    for (k, v) in input {
        match k.as_str() {
            "rows" | "cols" => {
                size.insert(k, v);
            }
            "workdir" => {
                m.insert(k, v);
            }
            _ => {}
        }
    }
    m.insert("terminal".into(), Value::Object(size));
    ("Bash".to_string(), Value::Object(m))
}

/// The served `bash` tool in the pipeline's vocabulary (`Bash`, `timeout` in ms).
fn pipeline_call(tool: &str, input: Map<String, Value>) -> (String, Value) {
    if tool == "terminal_open" {
        return terminal_call(input);
    }
    if tool != "bash" {
        // Only `terminal_open` opens a terminal, whatever tool name a call uses.
        let mut input = input;
        input.remove("terminal");
        return (tool.to_string(), Value::Object(input));
    }
    let mut m = Map::new();
    // Only `terminal_open` opens a terminal.
    for (k, v) in input.into_iter().filter(|(k, _)| k != "terminal") {
        let key = if k == "timeout_ms" {
            "timeout".to_string()
        } else {
            k
        };
        m.insert(key, v);
    }
    ("Bash".to_string(), Value::Object(m))
}

/// Whether a served tool's input fits its schema, and its `workdir`, when it names one, is a
/// directory inside the workspace (a typo must not run the command somewhere else).
fn served_input_fits(
    tool: &str,
    input: &Map<String, Value>,
    base: &std::path::Path,
    workspace: &std::path::Path,
) -> Result<(), String> {
    crate::tools::validate_input(tool, input).unwrap_or(Ok(()))?;
    let Some(dir) = input.get("workdir").and_then(Value::as_str) else {
        return Ok(());
    };
    let inside = std::fs::canonicalize(base.join(dir))
        .ok()
        .filter(|d| d.is_dir())
        .zip(std::fs::canonicalize(workspace).ok());
    match inside {
        Some((d, ws)) if d.starts_with(&ws) => Ok(()),
        _ => Err(format!(
            "invalid input for {tool}: workdir `{dir}` is not a directory inside the workspace"
        )),
    }
}

struct Session {
    pipeline: Arc<Pipeline>,
    executor: Arc<SandboxExecutor>,
    events: mpsc::UnboundedSender<Event>,
    pending: Pending,
    /// Cancel handles of calls in flight.
    running: Arc<Mutex<HashMap<String, oneshot::Sender<()>>>>,
    /// The background jobs the executor started for this session.
    jobs: Arc<Jobs>,
    terminals: Arc<Terminals>,
    workspace: std::path::PathBuf,
    tasks: tokio::task::JoinSet<()>,
    /// The sandbox whose spare is killed as the session ends.
    sandbox: Arc<crate::exec::Sandbox>,
}

impl Session {
    fn error(&self, id: Option<String>, message: impl Into<String>) {
        let _closed = self.events.send(Event::Error {
            id,
            message: message.into(),
        });
    }

    fn handle(&mut self, line: &[u8]) {
        let req: Request = match serde_json::from_slice(line) {
            Ok(r) => r,
            Err(e) => {
                let id = serde_json::from_slice::<Value>(line)
                    .ok()
                    .and_then(|v| v.get("id").and_then(str_of));
                return self.error(id, format!("malformed request: {e}"));
            }
        };
        match req {
            Request::Call {
                id,
                tool,
                input,
                cwd,
                session,
                agent,
            } => self.call(id, &tool, input, cwd, session, agent),
            Request::Cancel { id } => {
                let cancel = self.running.lock().ok().and_then(|mut m| m.remove(&id));
                let approval = self.pending.lock().ok().and_then(|mut m| m.remove(&id));
                if cancel.is_none() && approval.is_none() {
                    if self.jobs.signal_kill(&id) {
                        return;
                    }
                    return self.error(Some(id), "no call in flight or job with this id");
                }
                if let Some((a, _)) = approval {
                    let _gone =
                        a.send(ApprovalAnswer::Deny(Some("cancelled by the client".into())));
                }
                if let Some(c) = cancel {
                    let _gone = c.send(());
                }
            }
            Request::Approval {
                id,
                answer,
                scope,
                reason,
            } => {
                let Some((tx, offered)) = self.pending.lock().ok().and_then(|mut m| m.remove(&id))
                else {
                    return self.error(Some(id), "no approval pending for this id");
                };
                let a = match answer {
                    ApprovalReply::AllowOnce => ApprovalAnswer::AllowOnce,
                    ApprovalReply::Deny => ApprovalAnswer::Deny(reason),
                    ApprovalReply::AllowForSession => {
                        ApprovalAnswer::AllowForSession(scope_of(scope, &offered))
                    }
                };
                let _gone = tx.send(a);
            }
        }
    }

    fn call(
        &mut self,
        id: String,
        tool: &str,
        input: Map<String, Value>,
        cwd: Option<std::path::PathBuf>,
        session: Option<String>,
        agent: Option<String>,
    ) {
        let busy = self
            .running
            .lock()
            .map(|m| m.contains_key(&id))
            .unwrap_or(true);
        if busy {
            return self.error(Some(id), "a call with this id is already in flight");
        }
        let base = cwd
            .as_ref()
            .map_or_else(|| self.workspace.clone(), |c| self.workspace.join(c));
        if let Err(why) = served_input_fits(tool, &input, &base, &self.workspace) {
            return self.refuse_input(id, why);
        }
        let session = session.unwrap_or_default();
        let agent = agent.unwrap_or_default();
        let owner = owner_key(&session, &agent);
        if let Some(t) = JobTool::parse(tool) {
            return self.job_call(id, t, input, owner);
        }
        if let Some(t) = TermTool::parse(tool) {
            return self.term_call(id, t, input, owner);
        }
        let cancel = self.executor.register_cancel(&id);
        if let Ok(mut m) = self.running.lock() {
            m.insert(id.clone(), cancel);
        }
        let (tool, input) = pipeline_call(tool, input);
        let caller = Caller { session, agent };
        let cwd = cwd
            .map(|c| self.workspace.join(c))
            .unwrap_or_else(|| self.workspace.clone());
        let call = ToolCall::new(&id, tool, input, caller, cwd);
        let pipeline = self.pipeline.clone();
        let executor = self.executor.clone();
        let events = self.events.clone();
        let running = self.running.clone();
        let jobs = self.jobs.clone();
        let terminals = self.terminals.clone();
        self.tasks.spawn(async move {
            let decided = |ruling: &Ruling| {
                let _closed = events.send(RulingFields::from(ruling).decision_event(id.clone()));
            };
            let r = pipeline.submit_observed(call, decided).await;
            executor.forget(&id);
            if let Ok(mut m) = running.lock() {
                m.remove(&id);
            }
            if let Some(job) = r.exec.as_ref().and_then(|x| x.job.as_deref()) {
                if terminals.knows(job) {
                    terminals.set_owner(job, &owner);
                } else {
                    jobs.set_owner(job, &owner);
                }
            }
            let _closed = events.send(result_event(id, &r));
        });
    }

    /// A served tool's call whose input does not fit the tool: refused before anything runs.
    fn refuse_input(&self, id: String, why: String) {
        let ruling = Ruling::deny(
            Stage::Input,
            SESSION,
            "the input does not fit the tool's schema",
        );
        let _closed = self
            .events
            .send(RulingFields::from(&ruling).decision_event(id.clone()));
        let answer = job_tools::Answer::error(&why);
        let _closed = self
            .events
            .send(answer.into_event(id, Duration::ZERO, &ruling));
    }

    /// A job tool call: answered by the session from its jobs, never by the executor.
    fn job_call(&mut self, id: String, tool: JobTool, input: Map<String, Value>, owner: String) {
        let (cancel, stop) = oneshot::channel::<()>();
        if let Ok(mut m) = self.running.lock() {
            m.insert(id.clone(), cancel);
        }
        let _closed = self
            .events
            .send(RulingFields::from(&job_tools::ruling()).decision_event(id.clone()));
        let jobs = self.jobs.clone();
        let events = self.events.clone();
        let running = self.running.clone();
        self.tasks.spawn(async move {
            let stop = async {
                let _fired = stop.await;
            };
            let ev = job_tools::answer(&jobs, tool, id.clone(), input, &owner, stop).await;
            if let Ok(mut m) = running.lock() {
                m.remove(&id);
            }
            let _closed = events.send(ev);
        });
    }

    /// A terminal tool call: answered by the session from its terminals.
    fn term_call(&mut self, id: String, tool: TermTool, input: Map<String, Value>, owner: String) {
        let (cancel, stop) = oneshot::channel::<()>();
        if let Ok(mut m) = self.running.lock() {
            m.insert(id.clone(), cancel);
        }
        let _closed = self
            .events
            .send(RulingFields::from(&term_tools::ruling()).decision_event(id.clone()));
        let terminals = self.terminals.clone();
        let events = self.events.clone();
        let running = self.running.clone();
        self.tasks.spawn(async move {
            let stop = async {
                let _fired = stop.await;
            };
            let ev = term_tools::answer(&terminals, tool, id.clone(), input, &owner, stop).await;
            if let Ok(mut m) = running.lock() {
                m.remove(&id);
            }
            let _closed = events.send(ev);
        });
    }

    /// Stdin closed or the session stopped: deny every pending approval, cancel every call,
    /// wait for their results (each run's checks after it included), then kill the spare.
    async fn shutdown(mut self) {
        if let Ok(mut m) = self.pending.lock() {
            m.clear();
        }
        self.jobs.close();
        self.terminals.close();
        if let Ok(mut m) = self.running.lock() {
            for (_, c) in m.drain() {
                let _gone = c.send(());
            }
        }
        while self.tasks.join_next().await.is_some() {}
        self.jobs.wait_all().await;
        self.terminals.wait_all().await;
        let sandbox = self.sandbox.clone();
        let _joined = tokio::task::spawn_blocking(move || sandbox.end_spares()).await;
    }
}

/// The `result` event of a call that went through the pipeline.
fn result_event(id: String, r: &CallResult) -> Event {
    let job_id = r.exec.as_ref().and_then(|x| x.job.clone());
    let network = r.exec.as_ref().and_then(|x| x.network.clone());
    let (exit_code, signal, truncated, enforcement, content) = match &r.exec {
        Some(x) if x.job.is_some() => (None, None, false, None, r.content.clone()),
        Some(x) => {
            let code = x.exit_status.unwrap_or(128 + x.signal.unwrap_or(0));
            let shown = r.content.len() as u64;
            (
                x.exit_status,
                x.signal,
                x.truncated,
                Some(x.enforcement.clone()),
                render_result(&r.content, x.truncated, shown, code),
            )
        }
        None => (None, None, false, None, render_refusal(&r.content)),
    };
    let (decision, stage, reason, rule, source) = RulingFields::from(&r.ruling).for_result();
    Event::Result {
        id,
        decision,
        stage,
        reason,
        rule,
        source,
        is_error: r.is_error,
        exit_code,
        signal,
        timed_out: r.exec.as_ref().is_some_and(|x| x.timed_out),
        truncated,
        duration_ms: u64::try_from(r.duration.as_millis()).unwrap_or(u64::MAX),
        content,
        enforcement,
        network,
        job_id,
        job_status: None,
        jobs: None,
    }
}

/// Run a session over `input` and `output` until `input` ends.
pub async fn serve<R, W>(
    loaded: &Loaded,
    opts: &ServeOptions,
    observers: Vec<Arc<dyn Observer>>,
    input: R,
    output: W,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    serve_until(
        loaded,
        opts,
        observers,
        input,
        output,
        std::future::pending(),
    )
    .await
}

/// [`serve`] until `input` ends or `stop` completes, whichever comes first. Either way the
/// session ends the same: no further request is read, every call, job and terminal is
/// killed, each run's checks after it are done and its result written, and the spare
/// sandbox is killed. `sbx serve` stops on SIGTERM, SIGINT or SIGHUP.
pub async fn serve_until<R, W>(
    loaded: &Loaded,
    opts: &ServeOptions,
    observers: Vec<Arc<dyn Observer>>,
    input: R,
    output: W,
    stop: impl std::future::Future<Output = ()>,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, rx) = mpsc::unbounded_channel::<Event>();
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let writer = spawn_writer(output, rx, stop_rx);
    let mut session = open_session(loaded, opts, observers, &tx);
    let _closed = tx.send(Event::Ready {
        protocol: PROTOCOL_VERSION,
        profile: opts.profile.clone(),
        workspace: loaded.workspace.root.clone(),
        max_line_bytes: opts.max_line_bytes,
        approval_timeout_ms: u64::try_from(opts.approval_timeout.as_millis()).unwrap_or(u64::MAX),
    });
    let read_error = tokio::select! {
        e = read_requests(&mut session, input, opts.max_line_bytes) => e,
        () = stop => None,
    };
    session.shutdown().await;
    let _stopped = stop_tx.send(());
    drop(tx);
    let _joined = writer.await;
    match read_error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Write each event as one line, flushed, until the events end or `stop` fires (then what
/// is queued is written first).
fn spawn_writer<W>(
    mut output: W,
    mut rx: mpsc::UnboundedReceiver<Event>,
    mut stop_rx: oneshot::Receiver<()>,
) -> tokio::task::JoinHandle<()>
where
    W: AsyncWrite + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        let write = |ev: Event| {
            let mut line = serde_json::to_vec(&ev).unwrap_or_else(|_| b"{}".to_vec());
            line.push(b'\n');
            line
        };
        loop {
            tokio::select! {
                biased;
                ev = rx.recv() => match ev {
                    Some(ev) => {
                        if output.write_all(&write(ev)).await.is_err() { break; }
                        if output.flush().await.is_err() { break; }
                    }
                    None => break,
                },
                _ = &mut stop_rx => {
                    while let Ok(ev) = rx.try_recv() {
                        if output.write_all(&write(ev)).await.is_err() { break; }
                    }
                    let _ignored = output.flush().await;
                    break;
                }
            }
        }
    })
}

/// The session: the executor over the sandbox (output, network approvals and terminals
/// reported as events) and the pipeline over it.
fn open_session(
    loaded: &Loaded,
    opts: &ServeOptions,
    observers: Vec<Arc<dyn Observer>>,
    tx: &mpsc::UnboundedSender<Event>,
) -> Session {
    let sink_tx = tx.clone();
    let sink: OutputSink = Arc::new(move |id: &str, stream: Stream, data: String| {
        let id = id.to_string();
        let _closed = sink_tx.send(match stream {
            Stream::Stdout => Event::Stdout { id, data },
            Stream::Stderr => Event::Stderr { id, data },
        });
    });
    let pending: Pending = Arc::new(Mutex::new(HashMap::new()));
    let net_approval = Arc::new(super::approval::NetApproval {
        events: tx.clone(),
        pending: pending.clone(),
        timeout: opts.approval_timeout,
        allowed: Mutex::new(std::collections::HashSet::new()),
        seq: std::sync::atomic::AtomicU64::new(0),
    });
    // A session runs call after call: each has the next one's sandbox made ahead.
    loaded.sandbox.make_spares();
    let executor = Arc::new(
        SandboxExecutor::new(loaded.sandbox.clone(), loaded.workspace.clone())
            .with_sink(sink)
            .with_net_approval(net_approval)
            .with_terminal_idle(opts.terminal_idle),
    );
    let approval = Arc::new(ProtocolApproval {
        events: tx.clone(),
        pending: pending.clone(),
        timeout: opts.approval_timeout,
    });
    let mut builder = loaded
        .pipeline()
        .executor(executor.clone())
        .approval(approval)
        .approval_timeout(opts.approval_timeout + Duration::from_secs(1));
    for o in observers {
        builder = builder.observer(o);
    }
    let jobs = executor.jobs();
    let terminals = executor.terminals();
    Session {
        pipeline: Arc::new(builder.build()),
        executor,
        events: tx.clone(),
        pending,
        running: Arc::new(Mutex::new(HashMap::new())),
        jobs,
        terminals,
        workspace: loaded.workspace.root.clone(),
        tasks: tokio::task::JoinSet::new(),
        sandbox: loaded.sandbox.clone(),
    }
}

/// Handle request lines until the input ends (`None`) or cannot be read.
async fn read_requests<R: AsyncRead + Unpin>(
    session: &mut Session,
    input: R,
    max_line_bytes: usize,
) -> Option<std::io::Error> {
    let mut reader = BufReader::new(input);
    loop {
        match next_line(&mut reader, max_line_bytes).await {
            Ok(Line::Eof) => return None,
            Ok(Line::TooLong { len }) => session.error(
                None,
                format!("request line of {len} bytes refused: the limit is {max_line_bytes} bytes"),
            ),
            Ok(Line::Line(l)) if l.iter().all(u8::is_ascii_whitespace) => {}
            Ok(Line::Line(l)) => session.handle(&l),
            Err(e) => return Some(e),
        }
        // Reap finished calls as we go.
        while session.tasks.try_join_next().is_some() {}
    }
}
