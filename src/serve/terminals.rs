//! Terminals of one session: interactive shells on a pseudo-terminal, each run in the same
//! sandbox plan as a one-shot call. A run's output is kept as it arrives (unread output, and
//! a screen that a small VT renderer keeps up to date); keys, sizes and signals go to the
//! terminal through the run's [`PtyControl`].
//!
//! A terminal belongs to the agent that opened it: any other owner is told it does not exist.
//! A terminal nobody has used for [`TERMINAL_IDLE`] is closed; closing it, the session's end,
//! and sbx's exit kill its whole process tree.
#![forbid(unsafe_code)]

use super::protocol::{JobInfo, JobStatus};
use super::unread::Unread;
use crate::capability::CapabilitySet;
use crate::exec::{Output, PtyControl, RunRequest, RunResult, Sandbox, Terminal};
use std::future::Future;
use std::num::NonZeroU16;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;

/// By default, a terminal that receives no key and is not read for this long is closed.
pub const TERMINAL_IDLE: Duration = Duration::from_secs(30 * 60);

/// Terminals one session may have open at once.
pub const MAX_TERMINALS: usize = 8;

/// The longest a `terminal_read` waits.
pub const MAX_TERMINAL_WAIT: Duration = Duration::from_secs(60);

/// Lines of scrollback the screen keeps above the visible rows.
const SCROLLBACK: usize = 1000;

/// Why a terminal tool could not act.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TerminalError {
    /// No such terminal, or it belongs to another owner.
    #[error("no terminal `{id}` in this session")]
    Unknown { id: String },
    #[error("the session is ending: no new terminals")]
    Closed,
    #[error("cannot open the terminal: {message}")]
    Start { message: String },
    #[error("{max} terminals are already open in this session; close one")]
    TooMany { max: usize },
    /// The shell has ended (or its pseudo-terminal is not open yet).
    #[error("terminal `{id}` takes no input: {why}")]
    NotOpen { id: String, why: String },
    #[error("terminal `{id}`: {message}")]
    Io { id: String, message: String },
}

struct State {
    status: JobStatus,
    unread: Unread,
    screen: vt100::Parser,
    owner: Option<String>,
    used: Instant,
}

struct Term {
    id: String,
    command: String,
    state: Mutex<State>,
    control: OnceLock<PtyControl>,
    changed: watch::Sender<u64>,
}

/// One `terminal_read`: output since the last read, the screen when asked, the status.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TermRead {
    pub info: JobInfo,
    pub output: String,
    /// Unread bytes dropped (oldest first) because the terminal wrote faster than it was read.
    pub dropped: u64,
    /// The rendered screen: its rows as text, and the cursor's row and column.
    pub screen: Option<(String, (u16, u16))>,
}

fn size(rows: u16, cols: u16) -> (NonZeroU16, NonZeroU16) {
    let n = |v: u16, d: u16| {
        NonZeroU16::new(v)
            .or(NonZeroU16::new(d))
            .unwrap_or(NonZeroU16::MIN)
    };
    (n(rows, 24), n(cols, 80))
}

impl Term {
    fn state(&self) -> Option<MutexGuard<'_, State>> {
        self.state.lock().ok()
    }

    fn bump(&self) {
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    fn push(&self, bytes: &[u8]) {
        if let Some(mut s) = self.state() {
            s.unread.push(bytes);
            s.screen.process(bytes);
        }
        self.bump();
    }

    fn end(&self, status: JobStatus) {
        if let Some(mut s) = self.state() {
            s.status = status;
        }
        self.bump();
    }

    fn touch(&self) {
        if let Some(mut s) = self.state() {
            s.used = Instant::now();
        }
    }

    fn info(&self) -> JobInfo {
        JobInfo {
            job_id: self.id.clone(),
            command: self.command.clone(),
            status: self
                .state()
                .map_or(JobStatus::Running, |s| s.status.clone()),
        }
    }

    fn owned_by(&self, owner: &str) -> bool {
        self.state()
            .is_some_and(|s| s.owner.as_deref() == Some(owner))
    }

    /// Whether a read returns now: the shell ended, or the output holds `until` (any new
    /// output, without it).
    fn ready(&self, until: Option<&str>) -> bool {
        self.state().is_none_or(|mut s| {
            !s.status.is_running()
                || match until {
                    Some(u) => s.unread.contains(u.as_bytes()),
                    None => !s.unread.is_empty(),
                }
        })
    }

    fn read(&self, screen: bool) -> TermRead {
        let info = self.info();
        let ended = !info.status.is_running();
        let Some(mut s) = self.state() else {
            return TermRead {
                info,
                ..TermRead::default()
            };
        };
        let (output, dropped) = s.unread.take(ended);
        let screen = screen.then(|| {
            let sc = s.screen.screen();
            (sc.contents(), sc.cursor_position())
        });
        TermRead {
            info,
            output,
            dropped,
            screen,
        }
    }

    /// Wait until the pseudo-terminal is open or the shell has ended.
    async fn opened(&self) {
        let mut changed = self.changed.subscribe();
        while self.control.get().is_none() && self.info().status.is_running() {
            if changed.changed().await.is_err() {
                break;
            }
        }
    }

    fn control(&self) -> Result<&PtyControl, TerminalError> {
        let why = |w: &str| TerminalError::NotOpen {
            id: self.id.clone(),
            why: w.to_string(),
        };
        if !self.info().status.is_running() {
            return Err(why("its shell has ended"));
        }
        self.control.get().ok_or_else(|| why("not open yet"))
    }

    fn io_error(&self, e: &std::io::Error) -> TerminalError {
        TerminalError::Io {
            id: self.id.clone(),
            message: e.to_string(),
        }
    }
}

struct Entry {
    term: Arc<Term>,
    /// Sending or dropping it kills the terminal's process tree.
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

#[derive(Default)]
struct Registry {
    entries: Vec<Entry>,
    opened: u64,
    closed: bool,
}

/// The terminals of one session.
pub struct Terminals {
    registry: Mutex<Registry>,
    /// How long a terminal may sit unused before it is closed.
    idle: Duration,
}

impl Default for Terminals {
    fn default() -> Self {
        Self::new(TERMINAL_IDLE)
    }
}

fn status_of(r: &RunResult) -> JobStatus {
    if r.timed_out {
        JobStatus::TimedOut
    } else if let Some(signal) = r.signal {
        JobStatus::Killed { signal }
    } else {
        JobStatus::Exited {
            exit_code: r.code(),
        }
    }
}

/// Resolves once `term` has been idle for `limit`.
async fn idle(term: &Term, limit: Duration) {
    loop {
        let used = term.state().map_or_else(Instant::now, |s| s.used);
        let left = (used + limit).saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        tokio::time::sleep(left).await;
    }
}

/// Run the terminal's shell until it ends, `stop` fires, or it is idle too long.
async fn drive(
    term: Arc<Term>,
    run: impl Future<Output = Result<RunResult, crate::exec::RunError>>,
    kill: oneshot::Sender<()>,
    stop: oneshot::Receiver<()>,
    control: oneshot::Receiver<PtyControl>,
    (rows, cols): (u16, u16),
    limit: Duration,
) {
    let mut run = std::pin::pin!(run);
    let mut kill = Some(kill);
    let mut stop = std::pin::pin!(stop);
    let mut control = std::pin::pin!(control);
    let mut waiting_control = true;
    let ran = loop {
        tokio::select! {
            r = &mut run => break r,
            c = &mut control, if waiting_control => {
                waiting_control = false;
                if let Ok(c) = c {
                    let _sized = c.resize(rows, cols);
                    let _set = term.control.set(c);
                }
                term.bump();
            }
            _ = &mut stop, if kill.is_some() => drop(kill.take()),
            () = idle(&term, limit), if kill.is_some() => drop(kill.take()),
        }
    };
    term.end(match ran {
        Ok(r) => status_of(&r),
        Err(e) => JobStatus::Failed {
            message: e.to_string(),
        },
    });
}

impl Terminals {
    /// Terminals that close after `idle` without use.
    pub fn new(idle: Duration) -> Self {
        Self {
            registry: Mutex::new(Registry::default()),
            idle,
        }
    }

    fn registry(&self) -> Option<MutexGuard<'_, Registry>> {
        self.registry.lock().ok()
    }

    /// Open a terminal running `run` (the shell) in `sandbox`, narrowed to `caps`, and return
    /// its id at once.
    pub fn open(
        &self,
        sandbox: Arc<Sandbox>,
        mut run: RunRequest,
        caps: CapabilitySet,
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
        let mut reg = self.registry().ok_or(TerminalError::Closed)?;
        if reg.closed {
            return Err(TerminalError::Closed);
        }
        reg.entries.retain(|e| e.term.info().status.is_running());
        if reg.entries.len() >= MAX_TERMINALS {
            return Err(TerminalError::TooMany { max: MAX_TERMINALS });
        }
        reg.opened += 1;
        let (r, c) = size(rows, cols);
        let term = Arc::new(Term {
            id: format!("term-{}", reg.opened),
            command: run
                .argv
                .last()
                .map(|a| a.to_string_lossy().into_owned())
                .unwrap_or_default(),
            state: Mutex::new(State {
                status: JobStatus::Running,
                unread: Unread::default(),
                screen: vt100::Parser::new(r, c, SCROLLBACK),
                owner: None,
                used: Instant::now(),
            }),
            control: OnceLock::new(),
            changed: watch::channel(0).0,
        });
        let (kill, killed) = oneshot::channel();
        let (control_tx, control_rx) = oneshot::channel();
        let (stop, stopped) = oneshot::channel();
        let sink = term.clone();
        run.output = Output::Callback(Box::new(move |_, bytes| sink.push(bytes)));
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
        reg.entries.push(Entry {
            term,
            stop: Some(stop),
            task: Some(task),
        });
        Ok(id)
    }

    /// Whether `id` is one of these terminals (a call's result names it).
    pub fn knows(&self, id: &str) -> bool {
        self.find(id, None).is_ok()
    }

    /// Give terminal `id` to `owner`.
    pub fn set_owner(&self, id: &str, owner: &str) {
        if let Ok(t) = self.find(id, None)
            && let Some(mut s) = t.state()
        {
            s.owner = Some(owner.to_string());
        }
    }

    fn find(&self, id: &str, owner: Option<&str>) -> Result<Arc<Term>, TerminalError> {
        let unknown = || TerminalError::Unknown { id: id.to_string() };
        let term = self
            .registry()
            .and_then(|r| {
                r.entries
                    .iter()
                    .find(|e| e.term.id == id)
                    .map(|e| e.term.clone())
            })
            .ok_or_else(unknown)?;
        match owner {
            Some(o) if !term.owned_by(o) => Err(unknown()),
            Some(_) | None => {
                term.touch();
                Ok(term)
            }
        }
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
        if let Some(mut reg) = self.registry()
            && let Some(e) = reg.entries.iter_mut().find(|e| e.term.id == id)
        {
            drop(e.stop.take());
        }
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
        let terms: Vec<Arc<Term>> = self
            .registry()
            .map(|r| r.entries.iter().map(|e| e.term.clone()).collect())
            .unwrap_or_default();
        terms
            .iter()
            .filter(|t| t.owned_by(owner))
            .map(|t| t.info())
            .collect()
    }

    /// Open no more terminals and kill every open one (the session is ending).
    pub fn close(&self) {
        if let Some(mut reg) = self.registry() {
            reg.closed = true;
            for e in &mut reg.entries {
                drop(e.stop.take());
            }
        }
    }

    /// Wait until every terminal's run has returned (after [`Terminals::close`]: until every
    /// tree is gone).
    pub async fn wait_all(&self) {
        let tasks: Vec<JoinHandle<()>> = self
            .registry()
            .map(|mut r| r.entries.iter_mut().filter_map(|e| e.task.take()).collect())
            .unwrap_or_default();
        for t in tasks {
            let _joined = t.await;
        }
    }
}
