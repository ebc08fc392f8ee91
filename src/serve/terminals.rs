//! Terminals of one session: interactive shells on a pseudo-terminal (see [`super::term`]),
//! each run in the same sandbox plan as a one-shot call.
//!
//! A terminal belongs to the agent that opened it: any other owner is told it does not exist.
//! A terminal nobody has used for [`TERMINAL_IDLE`] (or the session's own limit) is closed;
//! closing it, the session's end, and sbx's exit kill its whole process tree.
#![forbid(unsafe_code)]

use super::protocol::JobInfo;
use super::runs::{Owned, Runs};
pub use super::term::TermRead;
use super::term::{Term, drive, size};
use crate::capability::CapabilitySet;
use crate::exec::{Output, RunRequest, Sandbox, Terminal};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;

/// By default, a terminal that receives no key and is not read for this long is closed.
pub const TERMINAL_IDLE: Duration = Duration::from_secs(30 * 60);

/// Terminals one session may have open at once.
pub const MAX_TERMINALS: usize = 8;

/// The longest a `terminal_read` waits.
pub const MAX_TERMINAL_WAIT: Duration = Duration::from_secs(60);

/// Why a terminal tool could not act.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TerminalError {
    /// No such terminal, or it belongs to another owner.
    #[error("no terminal `{id}` in this session")]
    Unknown {
        /// The id asked for.
        id: String,
    },
    /// The session is ending.
    #[error("the session is ending: no new terminals")]
    Closed,
    /// The shell could not be started.
    #[error("cannot open the terminal: {message}")]
    Start {
        /// Why.
        message: String,
    },
    /// The session holds as many terminals as it may.
    #[error("{max} terminals are already open in this session; close one")]
    TooMany {
        /// The most a session may hold.
        max: usize,
    },
    /// The shell has ended (or its pseudo-terminal is not open yet).
    #[error("terminal `{id}` takes no input: {why}")]
    NotOpen {
        /// The terminal.
        id: String,
        /// Why it takes no input.
        why: String,
    },
    /// Reading, writing or resizing the pseudo-terminal failed.
    #[error("terminal `{id}`: {message}")]
    Io {
        /// The terminal.
        id: String,
        /// The error.
        message: String,
    },
}
/// The terminals of one session.
pub struct Terminals {
    runs: Runs<Term>,
    /// How long a terminal may sit unused before it is closed.
    idle: Duration,
}

impl Owned for Term {
    fn id(&self) -> &str {
        &self.id
    }
    fn owned_by(&self, owner: &str) -> bool {
        Term::owned_by(self, owner)
    }
    fn set_owner(&self, owner: &str) {
        if let Some(mut s) = self.state() {
            s.owner = Some(owner.to_string());
        }
    }
}

impl Default for Terminals {
    fn default() -> Self {
        Self::new(TERMINAL_IDLE)
    }
}

impl Terminals {
    /// Terminals that close after `idle` without use.
    pub fn new(idle: Duration) -> Self {
        Self {
            runs: Runs::default(),
            idle,
        }
    }

    /// Open a terminal running `run` (the shell) in `sandbox`, narrowed to `caps`, and return
    /// its id at once.
    pub fn open(
        &self,
        sandbox: Arc<Sandbox>,
        mut run: RunRequest,
        caps: Arc<CapabilitySet>,
        (rows, cols): (u16, u16),
    ) -> Result<String, TerminalError> {
        run.terminal = Some(Terminal {
            stdin: true,
            stdout: true,
            stderr: true,
        });
        let prepared =
            sandbox
                .prepare_run(&run, Some(&caps))
                .map_err(|e| TerminalError::Start {
                    message: e.to_string(),
                })?;
        let mut reg = self.runs.lock().ok_or(TerminalError::Closed)?;
        if reg.closed {
            return Err(TerminalError::Closed);
        }
        reg.entries.retain(|e| e.run.info().status.is_running());
        if reg.entries.len() >= MAX_TERMINALS {
            return Err(TerminalError::TooMany { max: MAX_TERMINALS });
        }
        reg.started += 1;
        let (r, c) = size(rows, cols);
        let command = run
            .argv
            .last()
            .map(|a| a.to_string_lossy().into_owned())
            .unwrap_or_default();
        let term = Arc::new(Term::new(format!("term-{}", reg.started), command, (r, c)));
        let (kill, killed) = oneshot::channel();
        let (control_tx, control_rx) = oneshot::channel();
        let (stop, stopped) = oneshot::channel();
        let sink = term.clone();
        run.output = Output::Callback(Box::new(move |_, bytes| {
            sink.push(bytes);
            std::ops::ControlFlow::Continue(())
        }));
        run.cancel = Some(killed);
        run.pty_primary = Some(control_tx);
        let held = term.clone();
        let dims = (r.get(), c.get());
        let limit = self.idle;
        let task = tokio::spawn(async move {
            let fut = sandbox.run_prepared(prepared, run);
            drive(held, fut, kill, stopped, control_rx, dims, limit).await;
        });
        let id = term.id.clone();
        reg.push(term, stop, task);
        Ok(id)
    }

    /// Whether `id` is one of these terminals (a call's result names it).
    pub fn knows(&self, id: &str) -> bool {
        self.find(id, None).is_ok()
    }

    /// Give terminal `id` to `owner`.
    pub fn set_owner(&self, id: &str, owner: &str) {
        self.runs.set_owner(id, owner);
    }

    /// Terminal `id` (with `owner`, only when that agent owns it), marked as used.
    fn find(&self, id: &str, owner: Option<&str>) -> Result<Arc<Term>, TerminalError> {
        let term = self
            .runs
            .find(id, owner)
            .ok_or_else(|| TerminalError::Unknown { id: id.to_string() })?;
        term.touch();
        Ok(term)
    }

    /// Type `bytes` into terminal `id`.
    pub async fn send(&self, id: &str, owner: &str, bytes: &[u8]) -> Result<(), TerminalError> {
        let t = self.find(id, Some(owner))?;
        t.opened().await;
        let c = t.control()?;
        c.write(bytes).await.map_err(|e| t.io_error(&e))
    }

    /// Output since the last read, once there is some (or, with `until`, once it holds that
    /// text), the shell has ended, `wait` has passed (at most [`MAX_TERMINAL_WAIT`]) or `stop`.
    pub async fn read(
        &self,
        id: &str,
        owner: &str,
        wait: Duration,
        until: Option<&str>,
        screen: bool,
        stop: impl Future<Output = ()>,
    ) -> Result<TermRead, TerminalError> {
        let t = self.find(id, Some(owner))?;
        let mut changed = t.changed.subscribe();
        let ready = async {
            while !t.ready(until) {
                if changed.changed().await.is_err() {
                    break;
                }
            }
        };
        tokio::select! {
            _ = tokio::time::timeout(wait.min(MAX_TERMINAL_WAIT), ready) => {}
            () = stop => {}
        }
        Ok(t.read(screen))
    }

    /// Set the size of terminal `id` (and of its screen).
    pub async fn resize(
        &self,
        id: &str,
        owner: &str,
        rows: u16,
        cols: u16,
    ) -> Result<(), TerminalError> {
        let t = self.find(id, Some(owner))?;
        t.opened().await;
        let (r, c) = size(rows, cols);
        t.control()?
            .resize(r.get(), c.get())
            .map_err(|e| t.io_error(&e))?;
        if let Some(mut s) = t.state() {
            s.screen.set_size(r, c);
        }
        Ok(())
    }

    /// Send `signal` to the foreground process group of terminal `id`.
    pub async fn signal(&self, id: &str, owner: &str, signal: i32) -> Result<(), TerminalError> {
        let t = self.find(id, Some(owner))?;
        t.opened().await;
        t.control()?.signal(signal).map_err(|e| t.io_error(&e))
    }

    /// Kill terminal `id`'s process tree and wait until it is gone (or `stop`); the last
    /// output and how it ended.
    pub async fn close_one(
        &self,
        id: &str,
        owner: &str,
        stop: impl Future<Output = ()>,
    ) -> Result<TermRead, TerminalError> {
        let t = self.find(id, Some(owner))?;
        let mut changed = t.changed.subscribe();
        self.runs.stop(id);
        let ended = async {
            while t.info().status.is_running() {
                if changed.changed().await.is_err() {
                    break;
                }
            }
        };
        tokio::select! {
            () = ended => {}
            () = stop => {}
        }
        Ok(t.read(false))
    }

    /// The terminals `owner` may see, oldest first.
    pub fn list(&self, owner: &str) -> Vec<JobInfo> {
        self.runs.owned(owner).iter().map(|t| t.info()).collect()
    }

    /// Open no more terminals and kill every open one (the session is ending).
    pub fn close(&self) {
        self.runs.close();
    }

    /// Wait until every terminal's run has returned (after [`Terminals::close`]: until every
    /// tree is gone).
    pub async fn wait_all(&self) {
        self.runs.wait_all().await;
    }
}
