//! One terminal: an interactive shell on a pseudo-terminal whose run the sandbox supervises.
//! Its output is kept as it arrives (unread output, and a screen that a small VT renderer keeps
//! up to date); keys, sizes and signals go to it through the run's [`PtyControl`].
#![forbid(unsafe_code)]

use super::protocol::{JobInfo, JobStatus};
use super::terminals::TerminalError;
use super::unread::Unread;
use crate::exec::{PtyControl, RunResult};
use std::future::Future;
use std::num::NonZeroU16;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};
use tokio::sync::{oneshot, watch};

/// Lines of scrollback the screen keeps above the visible rows.
const SCROLLBACK: usize = 1000;

pub(super) struct State {
    pub(super) status: JobStatus,
    pub(super) unread: Unread,
    pub(super) screen: vt100::Parser,
    pub(super) owner: Option<String>,
    pub(super) used: Instant,
}

pub(super) struct Term {
    pub(super) id: String,
    pub(super) command: String,
    pub(super) state: Mutex<State>,
    pub(super) control: OnceLock<PtyControl>,
    pub(super) changed: watch::Sender<u64>,
}

/// One `terminal_read`: output since the last read, the screen when asked, the status.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TermRead {
    /// The terminal's id, status and command.
    pub info: JobInfo,
    /// Output since the last read, as text (escape sequences included).
    pub output: String,
    /// Unread bytes dropped (oldest first) because the terminal wrote faster than it was read.
    pub dropped: u64,
    /// The rendered screen: its rows as text, and the cursor's row and column.
    pub screen: Option<(String, (u16, u16))>,
}

pub(super) fn size(rows: u16, cols: u16) -> (NonZeroU16, NonZeroU16) {
    let n = |v: u16, d: u16| {
        NonZeroU16::new(v)
            .or(NonZeroU16::new(d))
            .unwrap_or(NonZeroU16::MIN)
    };
    (n(rows, 24), n(cols, 80))
}

impl Term {
    /// A terminal `id` running `command`, with a screen of `rows` by `cols`.
    pub(super) fn new(id: String, command: String, (rows, cols): (NonZeroU16, NonZeroU16)) -> Self {
        Self {
            id,
            command,
            state: Mutex::new(State {
                status: JobStatus::Running,
                unread: Unread::default(),
                screen: vt100::Parser::new(rows, cols, SCROLLBACK),
                owner: None,
                used: Instant::now(),
            }),
            control: OnceLock::new(),
            changed: watch::channel(0).0,
        }
    }

    pub(super) fn state(&self) -> Option<MutexGuard<'_, State>> {
        self.state.lock().ok()
    }

    pub(super) fn bump(&self) {
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    pub(super) fn push(&self, bytes: &[u8]) {
        if let Some(mut s) = self.state() {
            s.unread.push(bytes);
            s.screen.process(bytes);
        }
        self.bump();
    }

    pub(super) fn end(&self, status: JobStatus) {
        if let Some(mut s) = self.state() {
            s.status = status;
        }
        self.bump();
    }

    pub(super) fn touch(&self) {
        if let Some(mut s) = self.state() {
            s.used = Instant::now();
        }
    }

    pub(super) fn info(&self) -> JobInfo {
        JobInfo {
            job_id: self.id.clone(),
            command: self.command.clone(),
            status: self
                .state()
                .map_or(JobStatus::Running, |s| s.status.clone()),
        }
    }

    pub(super) fn owned_by(&self, owner: &str) -> bool {
        self.state()
            .is_some_and(|s| s.owner.as_deref() == Some(owner))
    }

    /// Whether a read returns now: the shell ended, or the output holds `until` (any new
    /// output, without it).
    pub(super) fn ready(&self, until: Option<&str>) -> bool {
        self.state().is_none_or(|mut s| {
            !s.status.is_running()
                || match until {
                    Some(u) => s.unread.contains(u.as_bytes()),
                    None => !s.unread.is_empty(),
                }
        })
    }

    pub(super) fn read(&self, screen: bool) -> TermRead {
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
    pub(super) async fn opened(&self) {
        let mut changed = self.changed.subscribe();
        while self.control.get().is_none() && self.info().status.is_running() {
            if changed.changed().await.is_err() {
                break;
            }
        }
    }

    pub(super) fn control(&self) -> Result<&PtyControl, TerminalError> {
        let why = |w: &str| TerminalError::NotOpen {
            id: self.id.clone(),
            why: w.to_string(),
        };
        if !self.info().status.is_running() {
            return Err(why("its shell has ended"));
        }
        self.control.get().ok_or_else(|| why("not open yet"))
    }

    pub(super) fn io_error(&self, e: &std::io::Error) -> TerminalError {
        TerminalError::Io {
            id: self.id.clone(),
            message: e.to_string(),
        }
    }
}

pub(super) fn status_of(r: &RunResult) -> JobStatus {
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
pub(super) async fn idle(term: &Term, limit: Duration) {
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
pub(super) async fn drive(
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
    if let Ok(r) = &ran {
        // What the run's end did (a protected path moved to quarantine), as a job says it.
        for n in r.notices() {
            term.push(format!("\r\nsbx: {n}\r\n").as_bytes());
        }
    }
    term.end(match ran {
        Ok(r) => status_of(&r),
        Err(e) => JobStatus::Failed {
            message: e.to_string(),
        },
    });
}
