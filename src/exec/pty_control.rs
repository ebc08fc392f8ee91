//! A caller's hold on a run's pseudo-terminal, for runs whose input comes from the caller
//! rather than from this process's terminal (the terminals of `sbx serve` and `sbx mcp`): it
//! writes keys, sets the window size and signals the terminal's foreground process group. The
//! run itself still reads what comes out, as its stdout.
use super::fds::async_fd;
use std::os::fd::{AsRawFd, OwnedFd};
use tokio::io::unix::AsyncFd;

/// A copy of a run's primary end, handed over when the run's init has opened it (see
/// [`RunRequest::pty_primary`](super::RunRequest::pty_primary)).
pub struct PtyControl {
    fd: AsyncFd<OwnedFd>,
}

impl PtyControl {
    pub(super) fn new(fd: OwnedFd) -> std::io::Result<Self> {
        Ok(Self { fd: async_fd(fd)? })
    }

    /// Write all of `bytes`, as if typed.
    pub async fn write(&self, mut bytes: &[u8]) -> std::io::Result<()> {
        while !bytes.is_empty() {
            let mut guard = self.fd.writable().await?;
            let fd = guard.get_inner().as_raw_fd();
            // SAFETY: write reads at most `len` bytes of the slice.
            let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
            if n >= 0 {
                bytes = &bytes[n as usize..];
                continue;
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::WouldBlock {
                return Err(e);
            }
            guard.clear_ready();
        }
        Ok(())
    }

    /// Set the window size; the kernel signals SIGWINCH to the foreground when it changed.
    pub fn resize(&self, rows: u16, cols: u16) -> std::io::Result<()> {
        let ws = libc::winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: TIOCSWINSZ reads one winsize.
        let r = unsafe { libc::ioctl(self.fd.as_raw_fd(), libc::TIOCSWINSZ, &ws) };
        if r < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// Send `signal` to the terminal's foreground process group (the program the shell runs,
    /// or the shell itself), as the line discipline does for ^C.
    pub fn signal(&self, signal: i32) -> std::io::Result<()> {
        // SAFETY: TIOCSIG takes the signal number as its argument.
        let r = unsafe { libc::ioctl(self.fd.as_raw_fd(), libc::TIOCSIG, signal) };
        if r < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}
