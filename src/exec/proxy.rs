//! Connecting the run to its proxy: the unix socket on which the sandbox's init sends the
//! listening socket it opened on the namespace's loopback, or a port on the host's loopback
//! when there is no network namespace; then the proxy's thread, started once the init runs.
use super::prepare::Launch;
use crate::plan::ProxyBridge;
use crate::proxy::{ListenerSource, NetRules};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;

/// The init's end of the channel (to pass in `ChildFds::proxy`), and how the proxy gets its
/// listening socket.
pub(super) struct Bridge {
    pub(super) child_end: Option<UnixStream>,
    /// Our end of the channel, to wake the proxy's thread if the listener never comes (an
    /// init of another run, forked meanwhile, may hold a copy of the init's end).
    wake: Option<UnixStream>,
    /// The listener on the host's loopback, for the init to close its copy of.
    host_fd: libc::c_int,
    source: ListenerSource,
    rules: NetRules,
}

/// Receive one fd sent with SCM_RIGHTS on `chan`, blocking until it comes or `chan` closes.
fn receive_listener(chan: &UnixStream) -> std::io::Result<std::net::TcpListener> {
    #[repr(C, align(8))]
    struct CmsgBuf([u8; 64]);
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let mut cmsg = CmsgBuf([0; 64]);
    // SAFETY: recvmsg into buffers on this frame; the control message is read with the libc
    // macros within `cmsg`, and the fd it carries is new to this process, owned once.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cmsg.0.as_mut_ptr().cast();
        msg.msg_controllen = cmsg.0.len();
        let n = libc::recvmsg(chan.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC);
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let hdr = libc::CMSG_FIRSTHDR(&msg);
        if n == 0
            || hdr.is_null()
            || (*hdr).cmsg_level != libc::SOL_SOCKET
            || (*hdr).cmsg_type != libc::SCM_RIGHTS
        {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the sandbox sent no listening socket",
            ));
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(hdr).cast::<libc::c_int>());
        Ok(std::net::TcpListener::from(OwnedFd::from_raw_fd(fd)))
    }
}

impl Bridge {
    /// `None` when the run has no proxy.
    pub(super) fn new(launch: &mut Launch) -> std::io::Result<Option<Bridge>> {
        let Some(pp) = &launch.plan.proxy else {
            return Ok(None);
        };
        let rules = pp.rules.clone();
        match pp.bridge {
            ProxyBridge::Namespace { .. } => {
                let (ours, theirs) = UnixStream::pair()?;
                Ok(Some(Bridge {
                    child_end: Some(theirs),
                    wake: Some(ours.try_clone()?),
                    host_fd: -1,
                    source: Box::new(move || receive_listener(&ours)),
                    rules,
                }))
            }
            ProxyBridge::HostLoopback => {
                let l = launch.proxy_listener.take().ok_or_else(|| {
                    std::io::Error::new(std::io::ErrorKind::NotFound, "no proxy port was opened")
                })?;
                Ok(Some(Bridge {
                    child_end: None,
                    wake: None,
                    host_fd: l.as_raw_fd(),
                    source: Box::new(move || Ok(l)),
                    rules,
                }))
            }
        }
    }

    pub(super) fn child_fd(&self) -> libc::c_int {
        self.child_end
            .as_ref()
            .map_or(self.host_fd, AsRawFd::as_raw_fd)
    }

    /// Close the init's end here and start the proxy.
    pub(super) fn start(
        mut self,
        approver: Option<crate::proxy::Approver>,
    ) -> std::io::Result<RunProxy> {
        self.child_end = None;
        Ok(RunProxy {
            handle: Some(crate::proxy::start(self.source, self.rules, approver)?),
            wake: self.wake,
        })
    }
}

/// The run's proxy; dropping it stops the proxy too.
pub(super) struct RunProxy {
    handle: Option<crate::proxy::ProxyHandle>,
    wake: Option<UnixStream>,
}

impl RunProxy {
    /// Stop the proxy (also while it still waits for its listener) and take its records.
    pub(super) fn finish(mut self) -> Vec<crate::proxy::NetRecord> {
        self.wake_up();
        self.handle
            .take()
            .map(crate::proxy::ProxyHandle::finish)
            .unwrap_or_default()
    }

    fn wake_up(&self) {
        if let Some(w) = &self.wake {
            let _ = w.shutdown(std::net::Shutdown::Both);
        }
    }
}

impl Drop for RunProxy {
    fn drop(&mut self) {
        self.wake_up();
    }
}

/// On a host without network namespaces: a port on the host's loopback for the proxy, which
/// Landlock lets the command connect to (and no other TCP port), and the variables that
/// point the command at it.
pub(super) fn host_port(
    plan: &mut std::sync::Arc<crate::plan::SandboxPlan>,
) -> std::io::Result<Option<std::net::TcpListener>> {
    if !matches!(
        plan.proxy.as_ref().map(|p| &p.bridge),
        Some(ProxyBridge::HostLoopback)
    ) {
        return Ok(None);
    }
    let l = std::net::TcpListener::bind(("127.0.0.1", 0))?;
    let port = l.local_addr()?.port();
    let plan = std::sync::Arc::make_mut(plan);
    if let Some(ll) = &mut plan.landlock {
        ll.tcp_connect = vec![port];
    }
    plan.env.set.extend(crate::plan::proxy_env(port));
    Ok(Some(l))
}
