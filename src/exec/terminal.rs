//! The caller's terminal kept out of the sandbox: the command gets a pseudo-terminal that sbx
//! owns, with the caller's modes and size copied in, so that whatever the command does to its
//! terminal (echo off, raw mode, a new size, a lock) stays on that pseudo-terminal. While the
//! caller types into it, the caller's own terminal is in raw mode, restored when the run ends.
use crate::enforce::pty::PtySpec;
use std::os::fd::RawFd;

/// Which of the command's standard streams are a pseudo-terminal that sbx relays, in place of
/// this process's own terminal. [`Terminal::from_stdio`] chooses them from this process's
/// standard fds; `sbx run` does that, while `sbx serve` and hooks keep pipes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Terminal {
    /// The command reads the pseudo-terminal, and what this process reads on its stdin is
    /// relayed to it when that is a terminal in the foreground (in raw mode meanwhile).
    /// Without it the command reads this process's stdin directly.
    pub stdin: bool,
    /// The command writes its stdout to the pseudo-terminal; what comes out of the
    /// pseudo-terminal is the run's stdout (counted and capped as such).
    pub stdout: bool,
    /// The same for stderr. When both are set the two arrive merged, as the run's stdout.
    pub stderr: bool,
}

/// Where what comes out of the pseudo-terminal goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Sink {
    /// The run's stdout or stderr.
    Stream(super::Stream),
    /// Back to the caller's terminal on stdin: only what it echoes, when neither stdout nor
    /// stderr is the pseudo-terminal.
    Echo,
}

fn is_tty(fd: RawFd) -> bool {
    // SAFETY: isatty only queries the fd.
    unsafe { libc::isatty(fd) == 1 }
}

impl Terminal {
    /// The streams of this process that are terminals; `None` when neither stdin nor stdout
    /// is one (a terminal on stderr alone is never handed to the command: it gets a pipe).
    pub fn from_stdio() -> Option<Terminal> {
        let t = Terminal {
            stdin: is_tty(0),
            stdout: is_tty(1),
            stderr: is_tty(2),
        };
        (t.stdin || t.stdout).then_some(t)
    }

    /// The caller's terminal whose modes and size the pseudo-terminal copies.
    pub(super) fn caller_fd(&self) -> RawFd {
        [(self.stdin, 0), (self.stdout, 1), (self.stderr, 2)]
            .into_iter()
            .find_map(|(on, fd)| (on && is_tty(fd)).then_some(fd))
            .unwrap_or(0)
    }

    pub(super) fn sink(&self) -> Sink {
        if self.stdout {
            Sink::Stream(super::Stream::Stdout)
        } else if self.stderr {
            Sink::Stream(super::Stream::Stderr)
        } else {
            Sink::Echo
        }
    }

    /// What the sandbox's init needs to open the command's pseudo-terminal: the modes and
    /// window size of the caller's terminal, and `sock`, on which it sends the primary end.
    pub(super) fn spec(&self, sock: RawFd) -> PtySpec {
        let caller = self.caller_fd();
        PtySpec {
            sock,
            modes: termios(caller),
            size: window_size(caller),
            stdin: self.stdin,
            stdout: self.stdout,
            stderr: self.stderr,
        }
    }
}

fn termios(fd: RawFd) -> Option<libc::termios> {
    // SAFETY: termios is plain data filled by tcgetattr.
    let mut t: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: TCGETS into a local.
    (unsafe { libc::tcgetattr(fd, &mut t) } == 0).then_some(t)
}

fn window_size(fd: RawFd) -> Option<libc::winsize> {
    // SAFETY: winsize is plain data filled by TIOCGWINSZ.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: TIOCGWINSZ into a local.
    (unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut ws) } == 0).then_some(ws)
}

/// Give the terminal on `to` the window size of the one on `from`; the kernel then signals
/// SIGWINCH to the foreground of `to` when the size changed.
pub(super) fn copy_size(from: RawFd, to: RawFd) {
    if let Some(ws) = window_size(from) {
        // SAFETY: TIOCSWINSZ reads a winsize.
        unsafe { libc::ioctl(to, libc::TIOCSWINSZ, &ws) };
    }
}

/// The end-of-file character of the terminal on `fd` (^D when it cannot be read).
pub(super) fn eof_char(fd: RawFd) -> u8 {
    termios(fd).map_or(4, |t| t.c_cc[libc::VEOF])
}

/// The caller's terminal in raw mode, so that every key reaches the pseudo-terminal, whose own
/// modes then decide what a key does (^C, ^D, echo). Restored when dropped, which every way out
/// of a run does; a panic unwinds through it too. Only SIGKILL of sbx leaves the terminal raw.
pub(super) struct RawMode {
    fd: RawFd,
    saved: libc::termios,
}

impl RawMode {
    /// Raw mode on `fd` when it is a terminal whose foreground is this process's group. A run
    /// started in the background leaves the terminal alone: changing its modes would stop sbx
    /// (SIGTTOU), and its input belongs to the foreground.
    pub(super) fn enter(fd: RawFd) -> Option<RawMode> {
        // SAFETY: tcgetpgrp and getpgrp only query.
        if unsafe { libc::tcgetpgrp(fd) != libc::getpgrp() } {
            return None;
        }
        let saved = termios(fd)?;
        let mut raw = saved;
        // SAFETY: cfmakeraw edits a local; TCSETS applies it to our terminal.
        unsafe {
            libc::cfmakeraw(&mut raw);
            if libc::tcsetattr(fd, libc::TCSANOW, &raw) < 0 {
                return None;
            }
        }
        Some(RawMode { fd, saved })
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        // SAFETY: TCSETS with the modes read in `enter`.
        unsafe { libc::tcsetattr(self.fd, libc::TCSANOW, &self.saved) };
    }
}
