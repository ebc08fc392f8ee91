//! The `sbx serve` session: read requests, run calls concurrently through the pipeline,
//! stream events back. Closing stdin cancels every call and kills every process tree.
#![forbid(unsafe_code)]

use super::executor::{OutputSink, SandboxExecutor};
use super::lines::{Line, next_line};
use super::protocol::{ApprovalReply, Event, PROTOCOL_VERSION, Request};
use crate::exec::Stream;
use crate::hook::Loaded;
use crate::pipeline::{
    ApprovalAnswer, ApprovalChannel, ApprovalRequest, BoxFuture, Caller, GrantScope, Observer,
    Pipeline, StageError, ToolCall,
};
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
}

type Pending = Arc<Mutex<HashMap<String, (oneshot::Sender<ApprovalAnswer>, Vec<GrantScope>)>>>;

/// Approval over the protocol: an `approval_request` event, answered by an `approval` request.
struct ProtocolApproval {
    events: mpsc::UnboundedSender<Event>,
    pending: Pending,
    timeout: Duration,
}

impl ApprovalChannel for ProtocolApproval {
    fn ask<'a>(
        &'a self,
        req: &'a ApprovalRequest,
    ) -> BoxFuture<'a, Result<ApprovalAnswer, StageError>> {
        Box::pin(async move {
            let id = req.call.id().to_string();
            let (tx, rx) = oneshot::channel();
            if let Ok(mut p) = self.pending.lock() {
                p.insert(id.clone(), (tx, req.scopes.clone()));
            }
            let _closed = self.events.send(Event::ApprovalRequest {
                id: id.clone(),
                canonical: req.canonical.clone(),
                reason: req.reason.clone(),
                rule: req.rule.clone(),
                scopes: req.scopes.iter().map(ToString::to_string).collect(),
                timeout_ms: u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX),
            });
            let answer = match tokio::time::timeout(self.timeout, rx).await {
                Ok(Ok(a)) => a,
                Ok(Err(_)) => ApprovalAnswer::Deny(Some("cancelled before an answer".into())),
                Err(_) => ApprovalAnswer::Deny(Some(format!(
                    "no answer within {} ms",
                    self.timeout.as_millis()
                ))),
            };
            if let Ok(mut p) = self.pending.lock() {
                p.remove(&id);
            }
            Ok(answer)
        })
    }
}

fn str_of(v: &Value) -> Option<String> {
    v.as_str().map(str::to_string)
}

/// The served `bash` tool in the pipeline's vocabulary (`Bash`, `timeout` in ms).
fn pipeline_call(tool: &str, input: Map<String, Value>) -> (String, Value) {
    if tool != "bash" {
        return (tool.to_string(), Value::Object(input));
    }
    let mut m = Map::new();
    for (k, v) in input {
        let key = if k == "timeout_ms" {
            "timeout".to_string()
        } else {
            k
        };
        m.insert(key, v);
    }
    ("Bash".to_string(), Value::Object(m))
}

struct Session {
    pipeline: Arc<Pipeline>,
    executor: Arc<SandboxExecutor>,
    events: mpsc::UnboundedSender<Event>,
    pending: Pending,
    /// Cancel handles of calls in flight.
    running: Arc<Mutex<HashMap<String, oneshot::Sender<()>>>>,
    workspace: std::path::PathBuf,
    tasks: tokio::task::JoinSet<()>,
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
                    return self.error(Some(id), "no call in flight with this id");
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
        let cancel = self.executor.register_cancel(&id);
        if let Ok(mut m) = self.running.lock() {
            m.insert(id.clone(), cancel);
        }
        let (tool, input) = pipeline_call(tool, input);
        let caller = Caller {
            session: session.unwrap_or_default(),
            agent: agent.unwrap_or_default(),
        };
        let cwd = cwd
            .map(|c| self.workspace.join(c))
            .unwrap_or_else(|| self.workspace.clone());
        let call = ToolCall::new(&id, tool, input, caller, cwd);
        let pipeline = self.pipeline.clone();
        let executor = self.executor.clone();
        let events = self.events.clone();
        let running = self.running.clone();
        self.tasks.spawn(async move {
            let d = pipeline.decide(&call);
            let _closed = events.send(Event::Decision {
                id: id.clone(),
                decision: d.ruling.decision.as_str().into(),
                stage: d.ruling.stage.as_str().into(),
                by: d.ruling.by.clone(),
                reason: d.ruling.reason.clone(),
                rule: d.ruling.rule.clone(),
                source: d.ruling.source.clone(),
            });
            let r = pipeline.run(call).await;
            executor.forget(&id);
            if let Ok(mut m) = running.lock() {
                m.remove(&id);
            }
            let (exit_code, signal, truncated, enforcement, content) = match &r.exec {
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
            let _closed = events.send(Event::Result {
                id,
                decision: r.ruling.decision.as_str().into(),
                stage: r.ruling.stage.as_str().into(),
                reason: r.ruling.reason.clone(),
                rule: r.ruling.rule.clone(),
                source: r.ruling.source.clone(),
                is_error: r.is_error,
                exit_code,
                signal,
                truncated,
                duration_ms: u64::try_from(r.duration.as_millis()).unwrap_or(u64::MAX),
                content,
                enforcement,
            });
        });
    }

    /// Stdin closed: deny every pending approval, cancel every call, wait for their results.
    async fn shutdown(mut self) {
        if let Ok(mut m) = self.pending.lock() {
            m.clear();
        }
        if let Ok(mut m) = self.running.lock() {
            for (_, c) in m.drain() {
                let _gone = c.send(());
            }
        }
        while self.tasks.join_next().await.is_some() {}
    }
}

/// The offered scope a client named (by its text), or the first offered one. A scope that
/// was not offered is passed on as given, and the pipeline denies it.
fn scope_of(scope: Option<String>, offered: &[GrantScope]) -> GrantScope {
    match scope {
        None => offered
            .first()
            .cloned()
            .unwrap_or(GrantScope::Exact(String::new())),
        Some(s) => offered
            .iter()
            .find(|o| o.to_string() == s)
            .cloned()
            .unwrap_or(GrantScope::Exact(s)),
    }
}

/// Run a session over `input` and `output` until `input` ends.
pub async fn serve<R, W>(
    loaded: &Loaded,
    opts: &ServeOptions,
    observers: Vec<Arc<dyn Observer>>,
    input: R,
    mut output: W,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, mut rx) = mpsc::unbounded_channel::<Event>();
    let (stop_tx, mut stop_rx) = oneshot::channel::<()>();
    let writer = tokio::spawn(async move {
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
    });

    let sink_tx = tx.clone();
    let sink: OutputSink = Arc::new(move |id: &str, stream: Stream, data: String| {
        let id = id.to_string();
        let _closed = sink_tx.send(match stream {
            Stream::Stdout => Event::Stdout { id, data },
            Stream::Stderr => Event::Stderr { id, data },
        });
    });
    let executor = Arc::new(
        SandboxExecutor::new(loaded.sandbox.clone(), loaded.workspace.clone()).with_sink(sink),
    );
    let pending: Pending = Arc::new(Mutex::new(HashMap::new()));
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
    let mut session = Session {
        pipeline: Arc::new(builder.build()),
        executor,
        events: tx.clone(),
        pending,
        running: Arc::new(Mutex::new(HashMap::new())),
        workspace: loaded.workspace.clone(),
        tasks: tokio::task::JoinSet::new(),
    };
    let _closed = tx.send(Event::Ready {
        protocol: PROTOCOL_VERSION,
        profile: opts.profile.clone(),
        workspace: loaded.workspace.clone(),
        max_line_bytes: opts.max_line_bytes,
        approval_timeout_ms: u64::try_from(opts.approval_timeout.as_millis()).unwrap_or(u64::MAX),
    });

    let mut reader = BufReader::new(input);
    let read_error = loop {
        match next_line(&mut reader, opts.max_line_bytes).await {
            Ok(Line::Eof) => break None,
            Ok(Line::TooLong { len }) => session.error(
                None,
                format!(
                    "request line of {len} bytes refused: the limit is {} bytes",
                    opts.max_line_bytes
                ),
            ),
            Ok(Line::Line(l)) if l.iter().all(u8::is_ascii_whitespace) => {}
            Ok(Line::Line(l)) => session.handle(&l),
            Err(e) => break Some(e),
        }
        // Reap finished calls as we go.
        while session.tasks.try_join_next().is_some() {}
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
