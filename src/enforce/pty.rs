//! The command's pseudo-terminal, opened by the sandbox's init in the `/dev` the command sees
//! (the private devpts when there is a mount namespace), so that its name resolves inside:
//! `tty` and `ttyname` work there. The init sets the caller's modes and size on it before the
//! command starts and hands the primary end to sbx over a socket; the replica is the command's.
#![allow(clippy::missing_safety_doc)]

use super::messages::{Step, fail, or_fail};
use libc::c_int;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

/// What the init needs to give the command a pseudo-terminal, prepared by sbx.
#[derive(Clone, Copy, Debug)]
pub struct PtySpec {
    /// The init's end of the socket that carries the primary end to sbx.
    pub sock: c_int,
    /// The caller's terminal modes and window size, copied to the new terminal.
    pub modes: Option<libc::termios>,
    pub size: Option<libc::winsize>,
    pub stdin: bool,
    pub stdout: bool,
    pub stderr: bool,
}

/// A connected pair of datagram sockets, both close-on-exec: sbx's end and the init's.
pub fn socket_pair() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: socketpair fills two fds on success.
    let r = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both fds were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Room for one control message carrying one fd.
#[repr(C, align(8))]
struct CmsgBuf([u8; 32]);

/// Open a pseudo-terminal on `/dev/ptmx`, give it the caller's modes and size, send its primary
/// end to sbx, and return the replica. Fails the setup (and exits) on any error.
///
/// # Safety
/// Called in the init only: raw syscalls on the stack and `spec`.
pub(super) unsafe fn open(spec: &PtySpec, msgs: c_int) -> c_int {
    // SAFETY: raw syscalls on locals and `spec`; see the module docs.
    unsafe {
        let flags = libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC;
        let primary = libc::open(c"/dev/ptmx".as_ptr(), flags);
        or_fail!(msgs, Step::Terminal, primary);
        let unlock: c_int = 0;
        or_fail!(
            msgs,
            Step::Terminal,
            libc::ioctl(primary, libc::TIOCSPTLCK, &unlock)
        );
        let replica = libc::ioctl(primary, libc::TIOCGPTPEER, flags);
        or_fail!(msgs, Step::Terminal, replica);
        if let Some(m) = &spec.modes {
            or_fail!(msgs, Step::Terminal, libc::ioctl(replica, libc::TCSETS, m));
        }
        if let Some(ws) = &spec.size {
            or_fail!(
                msgs,
                Step::Terminal,
                libc::ioctl(replica, libc::TIOCSWINSZ, ws)
            );
        }
        if send_fd(spec.sock, primary) < 0 {
            fail(msgs, Step::Terminal, super::messages::errno());
        }
        libc::close(primary);
        libc::close(spec.sock);
        replica
    }
}

unsafe fn send_fd(sock: c_int, fd: c_int) -> isize {
    // SAFETY: the message and its control buffer live on this stack for the call.
    unsafe {
        let mut byte = [0u8; 1];
        let mut iov = libc::iovec {
            iov_base: byte.as_mut_ptr().cast(),
            iov_len: 1,
        };
        let mut buf = CmsgBuf([0; 32]);
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = buf.0.as_mut_ptr().cast();
        msg.msg_controllen = libc::CMSG_SPACE(size_of::<c_int>() as u32) as usize;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(size_of::<c_int>() as u32) as usize;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<c_int>(), fd);
        libc::sendmsg(sock, &msg, libc::MSG_NOSIGNAL)
    }
}

/// What a read of sbx's end of the socket gave.
pub enum Received {
    /// The primary end (close-on-exec).
    Primary(OwnedFd),
    /// Nothing yet.
    NotYet,
    /// The init closed its end without sending one (its setup failed).
    Closed,
}

/// Receive the primary end from the init, on sbx's end of the socket (non-blocking).
pub fn receive(sock: RawFd) -> Received {
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let mut buf = CmsgBuf([0; 32]);
    // SAFETY: msghdr is plain data; recvmsg fills the buffers it points to, which live here.
    let (n, msg) = unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = buf.0.as_mut_ptr().cast();
        msg.msg_controllen = buf.0.len();
        let n = libc::recvmsg(sock, &mut msg, libc::MSG_CMSG_CLOEXEC | libc::MSG_DONTWAIT);
        (n, msg)
    };
    if n < 0 {
        let e = std::io::Error::last_os_error();
        if e.kind() == std::io::ErrorKind::WouldBlock {
            return Received::NotYet;
        }
        return Received::Closed;
    }
    // SAFETY: the control buffer was filled by recvmsg; the macros stay within msg_controllen.
    unsafe {
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if cmsg.is_null()
            || (*cmsg).cmsg_level != libc::SOL_SOCKET
            || (*cmsg).cmsg_type != libc::SCM_RIGHTS
        {
            return Received::Closed;
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<c_int>());
        Received::Primary(OwnedFd::from_raw_fd(fd))
    }
}
