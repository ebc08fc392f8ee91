//! sbx's side of a run's pseudo-terminal: the primary end, received from the sandbox's init;
//! what comes out of it, read with the command's other output (see `supervise`); and a task of
//! its own that relays what the caller types and the caller's window size changes.
use super::Stream;
use super::fds::{ReadBuf, async_fd, read_ready, readable, set_nonblocking};
use super::output::{Caps, Output, deliver, echo};
use super::pty_control::PtyControl;
use super::terminal::{RawMode, Sink, Terminal, copy_size, eof_char};
use crate::enforce::pty::{PtySpec, Received, receive, socket_pair};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use tokio::io::unix::{AsyncFd, AsyncFdReadyGuard};
use tokio::signal::unix::{Signal, SignalKind, signal};

/// Input read ahead of the command is held back beyond this much, until it reads.
const MAX_PENDING: usize = 64 * 1024;

/// The running relay; [`InputRelay::stop`] ends it, and so does dropping it (the task then
/// ends at the runtime's next turn).
pub(super) struct InputRelay {
    task: tokio::task::JoinHandle<()>,
}

impl Drop for InputRelay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn dup(fd: RawFd) -> std::io::Result<OwnedFd> {
    // SAFETY: F_DUPFD_CLOEXEC returns a new fd or -1.
    let new = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
    if new < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a new fd nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(new) })
}

impl InputRelay {
    /// Relay this process's stdin to `primary` when `input`, and the size of the caller's
    /// terminal on `caller` whenever it changes. The stdin fd is not made non-blocking (that
    /// flag would be shared with the caller's shell): reads take what FIONREAD says is there.
    pub(super) fn start(primary: RawFd, caller: RawFd, input: bool) -> std::io::Result<Self> {
        let stdin = if input {
            Some(async_fd(dup(0)?)?)
        } else {
            None
        };
        let primary = async_fd(dup(primary)?)?;
        let winch = signal(SignalKind::window_change()).ok();
        // A change before the handler was there would otherwise be missed.
        copy_size(caller, primary.as_raw_fd());
        let task = tokio::spawn(relay(stdin, primary, caller, winch));
        Ok(Self { task })
    }

    /// Stop relaying; the relay's fds are closed when this returns.
    pub(super) async fn stop(mut self) {
        self.task.abort();
        let _ = (&mut self.task).await;
    }
}

async fn relay(
    stdin: Option<AsyncFd<OwnedFd>>,
    primary: AsyncFd<OwnedFd>,
    caller: RawFd,
    mut winch: Option<Signal>,
) {
    let mut pending: Vec<u8> = Vec::new();
    let mut input_open = stdin.is_some();
    loop {
        tokio::select! {
            r = readable(stdin.as_ref()), if input_open && pending.len() < MAX_PENDING => {
                if !read_input(r, &mut pending) {
                    // End of input (the terminal hung up): the command reads end-of-file.
                    input_open = false;
                    pending.push(eof_char(primary.as_raw_fd()));
                }
            }
            r = primary.writable(), if !pending.is_empty() => {
                if !write_pending(r, &mut pending) {
                    input_open = false;
                    pending.clear();
                }
            }
            () = resized(winch.as_mut()) => copy_size(caller, primary.as_raw_fd()),
        }
    }
}

async fn resized(winch: Option<&mut Signal>) {
    match winch {
        Some(s) => {
            if s.recv().await.is_none() {
                std::future::pending::<()>().await;
            }
        }
        None => std::future::pending().await,
    }
}

/// Append what the caller typed to `pending`; `false` at the end of input.
fn read_input(
    ready: std::io::Result<AsyncFdReadyGuard<'_, OwnedFd>>,
    pending: &mut Vec<u8>,
) -> bool {
    let Ok(mut guard) = ready else {
        return false;
    };
    let fd = guard.get_inner().as_raw_fd();
    let mut avail: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int.
    if unsafe { libc::ioctl(fd, libc::FIONREAD, &mut avail) } < 0 {
        return false;
    }
    let want = (avail.max(0) as usize).min(MAX_PENDING);
    if want == 0 {
        let closed = guard.ready().is_read_closed();
        guard.clear_ready();
        return !closed;
    }
    let start = pending.len();
    pending.resize(start + want, 0);
    // SAFETY: read writes at most `want` bytes into the space just made; that many are there,
    // so it does not block.
    let n = unsafe { libc::read(fd, pending[start..].as_mut_ptr().cast(), want) };
    pending.truncate(start + n.max(0) as usize);
    n > 0
}

/// Write what is pending to the pseudo-terminal; `false` once it cannot take input any more.
fn write_pending(
    ready: std::io::Result<AsyncFdReadyGuard<'_, OwnedFd>>,
    pending: &mut Vec<u8>,
) -> bool {
    let Ok(mut guard) = ready else {
        return false;
    };
    let fd = guard.get_inner().as_raw_fd();
    // SAFETY: write reads at most `len` bytes of the buffer.
    let n = unsafe { libc::write(fd, pending.as_ptr().cast(), pending.len()) };
    if n >= 0 {
        pending.drain(..n as usize);
        return true;
    }
    if std::io::Error::last_os_error().kind() == std::io::ErrorKind::WouldBlock {
        guard.clear_ready();
        return true;
    }
    false
}

/// sbx's side of a run's pseudo-terminal, when the run has a [`Terminal`].
pub(super) struct PtyRelay {
    term: Option<Terminal>,
    /// What the init needs, the caller's modes read before raw mode.
    spec: Option<PtySpec>,
    /// sbx's end of the socket on which the init sends the primary end, until it has.
    sock: Option<AsyncFd<OwnedFd>>,
    /// The init's end, closed here once the init has started.
    init_sock: Option<OwnedFd>,
    primary: Option<AsyncFd<OwnedFd>>,
    input: Option<InputRelay>,
    raw: Option<RawMode>,
    /// Where a caller that feeds the terminal itself takes its copy of the primary end.
    share: Option<tokio::sync::oneshot::Sender<PtyControl>>,
    /// Whether output may still come out of the primary end.
    pub(super) open: bool,
    pub(super) sink: Sink,
}

impl PtyRelay {
    /// Prepare for `term`: the socket, and the caller's terminal in raw mode when the command
    /// reads it. Nothing at all without a terminal.
    pub(super) fn new(
        term: Option<Terminal>,
        share: Option<tokio::sync::oneshot::Sender<PtyControl>>,
    ) -> std::io::Result<Self> {
        let mut relay = Self {
            term,
            spec: None,
            sock: None,
            init_sock: None,
            primary: None,
            input: None,
            raw: None,
            share,
            open: false,
            sink: term.map_or(Sink::Echo, |t| t.sink()),
        };
        if let Some(t) = term {
            let (ours, theirs) = socket_pair()?;
            relay.spec = Some(t.spec(theirs.as_raw_fd()));
            relay.sock = Some(async_fd(ours)?);
            relay.init_sock = Some(theirs);
            let fed_here = t.stdin && relay.share.is_none();
            relay.raw = if fed_here { RawMode::enter(0) } else { None };
        }
        Ok(relay)
    }

    pub(super) fn spec(&self) -> Option<PtySpec> {
        self.spec
    }

    /// The init is running: only it holds its end of the socket now.
    pub(super) fn started(&mut self) {
        self.init_sock = None;
    }

    pub(super) fn raw(&self) -> bool {
        self.raw.is_some()
    }

    /// Whether the run must go on for the pseudo-terminal: its primary end is still to come,
    /// or output may still come out of it.
    pub(super) fn waiting(&self) -> bool {
        self.sock.is_some() || self.open
    }

    pub(super) fn receiving(&self) -> bool {
        self.sock.is_some()
    }

    pub(super) fn sock(&self) -> Option<&AsyncFd<OwnedFd>> {
        self.sock.as_ref()
    }

    pub(super) fn primary(&self) -> Option<&AsyncFd<OwnedFd>> {
        self.primary.as_ref()
    }

    /// Take what a ready read of the socket gave: the primary end starts the relay.
    pub(super) fn accept(&mut self, got: Received) {
        let fd = match got {
            Received::NotYet => return,
            Received::Closed => {
                self.sock = None;
                return;
            }
            Received::Primary(fd) => fd,
        };
        self.sock = None;
        set_nonblocking(fd.as_raw_fd());
        if let Some(tx) = self.share.take() {
            // The caller feeds the terminal: nothing of this process's terminal is relayed.
            if let Some(c) = dup(fd.as_raw_fd())
                .ok()
                .and_then(|d| PtyControl::new(d).ok())
            {
                let _gone = tx.send(c);
            }
        } else if let Some(t) = self.term {
            let input = self.raw.is_some();
            self.input = InputRelay::start(fd.as_raw_fd(), t.caller_fd(), input).ok();
        }
        if self.input.is_none() {
            // Nothing reads the keys: the caller's terminal must keep its ^C.
            self.raw = None;
        }
        self.primary = async_fd(fd).ok();
        self.open = self.primary.is_some();
    }

    /// Once the init has started the command (or died), the primary end is in the socket or
    /// will never come: take it, or stop waiting. (Another run's init, cloned meanwhile, may
    /// hold a copy of the init's end, so the socket's end cannot be relied on.)
    pub(super) fn settle(&mut self) {
        if let Some(sock) = &self.sock {
            match receive(sock.as_raw_fd()) {
                Received::NotYet => self.accept(Received::Closed),
                got => self.accept(got),
            }
        }
    }

    /// Stop relaying and give the caller's terminal its modes back.
    pub(super) async fn stop(&mut self) {
        if let Some(input) = self.input.take() {
            input.stop().await;
        }
        self.raw = None;
    }
}

/// Read what a ready socket holds: the primary end, nothing yet, or its end.
pub(super) fn receive_ready(ready: std::io::Result<AsyncFdReadyGuard<'_, OwnedFd>>) -> Received {
    let Ok(mut guard) = ready else {
        return Received::Closed;
    };
    let got = receive(guard.get_inner().as_raw_fd());
    if matches!(got, Received::NotYet) {
        guard.clear_ready();
    }
    got
}

/// Pass on one ready read from the primary end; `false` once every replica is closed (the
/// command's tree is gone) and all it wrote has been read.
pub(super) fn relay_pty(
    ready: std::io::Result<AsyncFdReadyGuard<'_, OwnedFd>>,
    buf: &mut ReadBuf,
    output: &mut Output,
    caps: &mut Caps,
    sink: Sink,
) -> bool {
    match read_ready(ready, buf) {
        Some([]) => false,
        Some(b) => {
            let mut shown = Vec::with_capacity(b.len());
            if matches!(sink, Sink::Stream(_)) {
                caps.term.filter(b, &mut shown);
            }
            // A terminal's output has no pipe of its own to close: the relay goes on.
            let _ = match sink {
                Sink::Stream(Stream::Stdout) => {
                    deliver(output, &mut caps.out, Stream::Stdout, &shown)
                }
                Sink::Stream(Stream::Stderr) => {
                    deliver(output, &mut caps.err, Stream::Stderr, &shown)
                }
                Sink::Echo => {
                    echo(&mut caps.echo, b);
                    super::output::ControlFlow::Continue(())
                }
            };
            true
        }
        None => true,
    }
}
