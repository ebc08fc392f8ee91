//! A network namespace made ahead of the sandbox, on a thread of its own, while the parent
//! is still planning: creating one is the most expensive part of `clone`, and this way it
//! runs on another core. Namespaces belong to threads, so `unshare` on that thread changes
//! nothing for the rest of sbx. The init then joins the namespace with `setns` instead of
//! creating its own.
//!
//! Only for root without a user namespace: an unprivileged caller needs the user namespace
//! the init creates before it may own a network namespace.
use std::os::fd::OwnedFd;
use std::thread::JoinHandle;

/// A network namespace being made.
pub struct PendingNet {
    loopback: bool,
    thread: JoinHandle<std::io::Result<OwnedFd>>,
}

/// A ready network namespace: an fd for `setns`, and whether `lo` is up in it.
pub struct NetNamespace {
    pub fd: OwnedFd,
    pub loopback: bool,
}

fn last_error() -> std::io::Error {
    std::io::Error::last_os_error()
}

fn make(loopback: bool) -> std::io::Result<OwnedFd> {
    // SAFETY: unshare affects only this thread, which ends after opening the namespace.
    if unsafe { libc::unshare(libc::CLONE_NEWNET) } < 0 {
        return Err(last_error());
    }
    if loopback && super::setup::bring_up_lo() < 0 {
        return Err(last_error());
    }
    let f = std::fs::File::open("/proc/thread-self/ns/net")?;
    Ok(f.into())
}

impl PendingNet {
    /// Start making a network namespace, with `lo` up when `loopback`. `None` when a thread
    /// cannot be started; the init then creates the namespace itself.
    pub fn start(loopback: bool) -> Option<PendingNet> {
        let thread = std::thread::Builder::new()
            .name("sbx-netns".into())
            .stack_size(64 * 1024)
            .spawn(move || make(loopback))
            .ok()?;
        Some(PendingNet { loopback, thread })
    }

    /// Wait for the namespace. `None` when making it failed; the init then creates its own,
    /// which reports the failure the usual way.
    pub fn finish(self) -> Option<NetNamespace> {
        let fd = self.thread.join().ok()?.ok()?;
        Some(NetNamespace {
            fd,
            loopback: self.loopback,
        })
    }
}
