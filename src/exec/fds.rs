//! The file descriptors between sbx and the sandbox: standard fds kept taken, pipes, and
//! non-blocking reads of them under tokio.
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use tokio::io::unix::AsyncFd;

/// Open `/dev/null` on any of fds 0, 1, 2 that is closed, so that the pipes sbx creates can
/// never take those numbers (the command's stdout would then be the pipe's other end, or
/// closed at exec). Call it first thing in a program that may be started with them closed.
pub fn ensure_standard_fds() {
    for fd in 0..3 {
        // SAFETY: F_GETFD only queries; open returns the lowest free number, which is `fd`
        // when it is closed; that fd is meant to stay open for the life of the process.
        unsafe {
            if libc::fcntl(fd, libc::F_GETFD) == -1 {
                libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
            }
        }
    }
}

pub(super) fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: pipe2 fills two fds on success.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both fds were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

pub(super) fn set_nonblocking(fd: RawFd) {
    // SAFETY: fcntl on an fd we own.
    unsafe {
        let fl = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK);
    }
}

/// A buffer for reads from the sandbox's pipes. It is left uninitialised, so that its pages are
/// touched only as reads fill them: a zeroed one would fault all sixteen in at the start of
/// every run.
pub(super) struct ReadBuf(Box<[MaybeUninit<u8>]>);

impl ReadBuf {
    pub(super) fn new() -> Self {
        Self(Box::new_uninit_slice(64 * 1024))
    }
}

/// Read from a pipe tokio reported readable: `Some(bytes)`, empty when it is closed (or
/// failed), `None` when nothing was there after all.
pub(super) fn read_ready<'b>(
    ready: std::io::Result<tokio::io::unix::AsyncFdReadyGuard<'_, OwnedFd>>,
    buf: &'b mut ReadBuf,
) -> Option<&'b [u8]> {
    let Ok(mut guard) = ready else {
        return Some(&[]);
    };
    let fd = guard.get_inner().as_raw_fd();
    // SAFETY: read writes at most `len` bytes into the buffer.
    let n = unsafe { libc::read(fd, buf.0.as_mut_ptr().cast(), buf.0.len()) };
    if n >= 0 {
        // SAFETY: the kernel initialised the first `n` bytes.
        return Some(unsafe { std::slice::from_raw_parts(buf.0.as_ptr().cast(), n as usize) });
    }
    if std::io::Error::last_os_error().kind() == std::io::ErrorKind::WouldBlock {
        guard.clear_ready();
        return None;
    }
    Some(&[])
}

pub(super) fn async_fd(fd: OwnedFd) -> std::io::Result<AsyncFd<OwnedFd>> {
    // SAFETY: the fd is owned by the AsyncFd from here on and is not closed elsewhere.
    unsafe { AsyncFd::register(fd) }.map_err(|e| std::io::Error::other(e.to_string()))
}

/// Readiness of `fd` to read; never, when there is none.
pub(super) async fn readable(
    fd: Option<&AsyncFd<OwnedFd>>,
) -> std::io::Result<tokio::io::unix::AsyncFdReadyGuard<'_, OwnedFd>> {
    match fd {
        Some(f) => f.readable().await,
        None => std::future::pending().await,
    }
}

/// A pipe for one of the command's output streams, unless that stream is the pseudo-terminal.
pub(super) fn pipe_unless(on_pty: bool) -> std::io::Result<(Option<OwnedFd>, Option<OwnedFd>)> {
    if on_pty {
        return Ok((None, None));
    }
    let (r, w) = pipe()?;
    set_nonblocking(r.as_raw_fd());
    Ok((Some(r), Some(w)))
}
