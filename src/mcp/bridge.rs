//! The MCP server's way into the `sbx serve` session it runs in the same process: requests
//! written as protocol lines, events read back and routed to the call they belong to. Going
//! through the protocol keeps one code path for the pipeline, the executor and the jobs.
#![forbid(unsafe_code)]

use crate::serve::{Event, Line, Request, next_line};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};

type Routes = Arc<Mutex<HashMap<String, mpsc::UnboundedSender<Event>>>>;

/// The longest event line read back from the session (a result carries at most a few MiB).
const MAX_EVENT_LINE: usize = 64 * 1024 * 1024;

/// A client of the in-process session.
pub(super) struct Bridge {
    requests: mpsc::UnboundedSender<Request>,
    routes: Routes,
    next: AtomicU64,
    close: Mutex<Option<oneshot::Sender<()>>>,
}

/// The events of one call, up to and including its `result` (or an `error`).
pub(super) struct CallEvents {
    pub(super) id: String,
    pub(super) events: mpsc::UnboundedReceiver<Event>,
}

/// Who makes a call: serve's session and agent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Owner {
    pub(super) session: String,
    pub(super) agent: String,
}

impl Bridge {
    /// Speak to a session over `io` (one end of a duplex whose other end the session serves).
    pub(super) fn start<S>(io: S) -> Arc<Self>
    where
        S: AsyncRead + AsyncWrite + Send + 'static,
    {
        let (read, write) = tokio::io::split(io);
        let (requests, queue) = mpsc::unbounded_channel();
        let (close, closed) = oneshot::channel();
        let routes: Routes = Arc::new(Mutex::new(HashMap::new()));
        tokio::spawn(write_requests(queue, closed, write));
        tokio::spawn(route_events(read, routes.clone()));
        Arc::new(Self {
            requests,
            routes,
            next: AtomicU64::new(1),
            close: Mutex::new(Some(close)),
        })
    }

    /// Start a call; its events arrive on the returned receiver.
    pub(super) fn call(&self, tool: &str, input: Map<String, Value>, owner: &Owner) -> CallEvents {
        let id = format!("mcp-{}", self.next.fetch_add(1, Ordering::Relaxed));
        let (tx, events) = mpsc::unbounded_channel();
        if let Ok(mut r) = self.routes.lock() {
            r.insert(id.clone(), tx);
        }
        self.send(Request::Call {
            id: id.clone(),
            tool: tool.to_string(),
            input,
            cwd: None,
            session: Some(owner.session.clone()),
            agent: Some(owner.agent.clone()),
        });
        CallEvents { id, events }
    }

    /// Send a request that needs no routing (`cancel`, `approval`).
    pub(super) fn send(&self, req: Request) {
        let _closed = self.requests.send(req);
    }

    /// End the session: it cancels every call and kills every process tree it started.
    pub(super) fn close(&self) {
        if let Some(c) = self.close.lock().ok().and_then(|mut c| c.take()) {
            let _gone = c.send(());
        }
    }
}

async fn write_requests<W: AsyncWrite>(
    mut queue: mpsc::UnboundedReceiver<Request>,
    mut closed: oneshot::Receiver<()>,
    write: W,
) {
    let mut write = std::pin::pin!(write);
    loop {
        let req = tokio::select! {
            r = queue.recv() => r,
            _ = &mut closed => None,
        };
        let Some(req) = req else { break };
        let Ok(mut line) = serde_json::to_vec(&req) else {
            continue;
        };
        line.push(b'\n');
        if write.write_all(&line).await.is_err() || write.flush().await.is_err() {
            break;
        }
    }
    // The session reads end-of-input: it stops every call and kills every tree.
    let _closed = write.shutdown().await;
}

/// The call an event belongs to, and whether it is the call's last.
fn route_of(ev: &Event) -> Option<(&str, bool)> {
    match ev {
        Event::Ready { .. } | Event::Error { id: None, .. } => None,
        Event::Decision { id, .. }
        | Event::ApprovalRequest { id, .. }
        | Event::Stdout { id, .. }
        | Event::Stderr { id, .. } => Some((id, false)),
        Event::Result { id, .. } | Event::Error { id: Some(id), .. } => Some((id, true)),
    }
}

async fn route_events<R: AsyncRead>(read: R, routes: Routes) {
    let read = std::pin::pin!(read);
    let mut reader = BufReader::new(read);
    while let Ok(Line::Line(l)) = next_line(&mut reader, MAX_EVENT_LINE).await {
        let Ok(ev) = serde_json::from_slice::<Event>(&l) else {
            continue;
        };
        let Some((id, last)) = route_of(&ev) else {
            continue;
        };
        let Ok(mut r) = routes.lock() else { break };
        let tx = if last {
            r.remove(id)
        } else {
            r.get(id).cloned()
        };
        drop(r);
        if let Some(tx) = tx {
            let _gone = tx.send(ev);
        }
    }
    // The session is gone: every call waiting on it sees its channel close.
    if let Ok(mut r) = routes.lock() {
        r.clear();
    }
}
