//! The next call's sandbox, made ahead of it. A session (`sbx serve`, `sbx mcp`) runs one call
//! after another, mostly under one plan; creating the namespaces and mounting the plan's
//! layout is most of what a call costs beyond the command itself. So once a call has started,
//! a thread of its own prepares the next call's enforcement and clones its init, which sets
//! the sandbox up and waits for its command (see `enforce::handover`). The next call hands its
//! command over instead of cloning when the spare is what a sandbox made now would be: its
//! plan equals the call's (which was checked against the file system as always), and every
//! host path its mounts and Landlock rules hold on to is still the same file (a mount stays on
//! the file it was made on when a rename replaces it, and a rule grants an inode). Otherwise
//! the spare is killed and the call clones an init as usual.
//!
//! A spare serves one call, in namespaces nothing ran in before. It is not used once older
//! than [`MAX_AGE`], and it dies with its sandbox and with sbx (the init dies with the thread
//! that cloned it, which lives as long as the process).
use super::fds::{pipe, set_nonblocking};
use super::stamp::{Look, Looks};
use crate::enforce::messages::ChildFds;
use crate::enforce::{CommandSlot, Prepared, handover};
use crate::host::Host;
use crate::plan::{MountStep, SandboxPlan};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, mpsc};
use std::time::{Duration, Instant};

/// A spare older than this is not used: the sandbox a call gets is at most this old.
const MAX_AGE: Duration = Duration::from_secs(30);

/// Held while a child's ends of its pipes exist: a clone on another thread in that window
/// would give its init copies of them, and this run's output would end only with that one.
pub(super) static SPAWNING: Mutex<()> = Mutex::new(());

/// A set-up init waiting for its command, and sbx's ends of its pipes. Dropped before its
/// command came, it is killed and reaped.
pub(super) struct Init {
    pid: libc::pid_t,
    fds: Option<InitFds>,
}

/// sbx's ends of a waiting init's pipes, and its pidfd.
pub(super) struct InitFds {
    pub(super) pidfd: OwnedFd,
    pub(super) out: OwnedFd,
    pub(super) err: OwnedFd,
    pub(super) messages: OwnedFd,
    /// Where the command goes.
    pub(super) command: OwnedFd,
}

impl Init {
    /// The init's pid and fds, for the run it now serves: dropping it no longer kills it.
    pub(super) fn take(mut self) -> Option<(libc::pid_t, InitFds)> {
        Some((self.pid, self.fds.take()?))
    }
}

impl Drop for Init {
    fn drop(&mut self) {
        let Some(fds) = self.fds.take() else {
            return;
        };
        // SAFETY: a signal through our own pidfd, then a wait for our own child.
        unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                fds.pidfd.as_raw_fd(),
                libc::SIGKILL,
                std::ptr::null::<libc::siginfo_t>(),
                0u32,
            );
            let mut status = 0;
            libc::waitpid(self.pid, &mut status, 0);
        }
    }
}

/// An init set up for `plan`, with its enforcement.
pub(super) struct Spare {
    plan: Arc<SandboxPlan>,
    made: Instant,
    /// What was at each host path its mounts and Landlock rules hold, when it was made.
    held: Vec<Held>,
    /// sbx's own mount table, opened when the spare was made: it polls as changed once a file
    /// system is mounted or unmounted on the host, which the spare's copy would not follow.
    mounts: Option<std::fs::File>,
    /// `None` once handed over.
    parts: Option<(Prepared, Init)>,
}

impl Drop for Spare {
    fn drop(&mut self) {
        if let Some((prepared, init)) = self.parts.take() {
            // The init first: the run's cgroups go with `prepared`, once empty.
            drop(init);
            drop(prepared);
        }
    }
}

/// The spare a sandbox holds, if any.
#[derive(Default, Clone)]
pub(super) struct Slot(Arc<Mutex<Option<Spare>>>);

/// What a call hands to its spare: the init and the command for it.
pub(super) struct Handover {
    pub(super) init: Init,
    pub(super) message: Vec<u8>,
}

impl Slot {
    /// The spare, with the message for `exec`, when it was set up for a plan equal to `plan`
    /// and is still as a sandbox made now would be (its held files judged by `looks`, the
    /// moment `plan` was checked in); `None` otherwise, or when `exec` does not fit a
    /// handover. A spare not taken is killed.
    pub(super) fn take(
        &self,
        plan: &Arc<SandboxPlan>,
        exec: &crate::enforce::ExecSpec,
        looks: &Looks,
    ) -> Option<(Prepared, Handover)> {
        let mut slot = self.0.lock().ok()?;
        let mut spare = slot.take()?;
        drop(slot);
        let message = handover::encode(exec)?;
        // Any other spare is killed as it drops here.
        let same_plan = Arc::ptr_eq(&spare.plan, plan) || *spare.plan == **plan;
        if !same_plan || spare.made.elapsed() >= MAX_AGE || !spare.intact(looks) {
            return None;
        }
        let (prepared, init) = spare.parts.take()?;
        Some((prepared, Handover { init, message }))
    }

    /// Have the next spare for `plan` made, on the thread that makes them.
    pub(super) fn refill(&self, plan: Arc<SandboxPlan>, host: Host) {
        let slot = self.clone();
        let job = Box::new(move || {
            let Ok(spare) = make(plan, &host) else {
                return;
            };
            if let Ok(mut s) = slot.0.lock() {
                // A spare older than this one is replaced (and killed as it drops).
                *s = Some(spare);
            }
        });
        if let Some(tx) = maker() {
            let _ = tx.send(job);
        }
    }

    /// Kill the spare and remove its cgroups, once the thread that makes them has done what
    /// it was asked before (a spare it is making now would land here after). Blocks until
    /// then: a session ends with this, so that no spare outlives it.
    pub(super) fn clear(&self) {
        if let Some(Some(tx)) = MAKER.get() {
            let (done, made) = mpsc::channel::<()>();
            let barrier: Job = Box::new(move || {
                let _ = done.send(());
            });
            if tx.send(barrier).is_ok() {
                let _ = made.recv();
            }
        }
        let spare = self.0.lock().ok().and_then(|mut s| s.take());
        drop(spare);
    }
}

type Job = Box<dyn FnOnce() + Send>;

/// The sender to the thread that makes the spares, once it was started.
static MAKER: OnceLock<Option<mpsc::Sender<Job>>> = OnceLock::new();

/// The thread that clones the spares. An init dies with the thread that cloned it
/// (`PR_SET_PDEATHSIG`), so it is one thread that lives as long as the process.
fn maker() -> Option<&'static mpsc::Sender<Job>> {
    MAKER
        .get_or_init(|| {
            let (tx, rx) = mpsc::channel::<Job>();
            std::thread::Builder::new()
                .name("sbx-spares".into())
                .spawn(move || {
                    for job in rx {
                        job();
                    }
                })
                .ok()
                .map(|_| tx)
        })
        .as_ref()
}

/// A host path a spare holds, and which file was at it (links followed, as the mount and the
/// Landlock rule follow them).
struct Held {
    path: PathBuf,
    file: Option<Identity>,
}

/// A file's device, inode and birth time. An inode number freed by a removal is given to
/// the next file made: the birth time tells them apart (the change time stands in where the
/// file system keeps none). No descriptor is kept open: one would keep the host from
/// unmounting the file system.
type Identity = (u64, u64, i64, i64);

fn identity(l: &Look) -> Identity {
    let (secs, nanos) = l.born.unwrap_or(l.ctime);
    (l.dev, l.ino, secs, nanos)
}

impl Held {
    fn new(path: PathBuf) -> Self {
        let file = Looks::default().look(&path).as_ref().map(identity);
        Self { path, file }
    }

    /// Whether the file at the path, as `looks` sees it, is still the one held (or the path
    /// still empty).
    fn holds(&self, looks: &Looks) -> bool {
        looks.look(&self.path).as_ref().map(identity) == self.file
    }
}

/// Whether `fd` has any of `events` now.
fn polls(fd: &impl AsRawFd, events: libc::c_short) -> bool {
    let mut p = libc::pollfd {
        fd: fd.as_raw_fd(),
        events,
        revents: 0,
    };
    // SAFETY: one pollfd on the stack, no wait.
    unsafe { libc::poll(&mut p, 1, 0) > 0 && p.revents & (events | libc::POLLERR) != 0 }
}

impl Spare {
    /// Whether the spare is as a sandbox made now would be: its init alive and waiting, every
    /// held path still the file it holds (a mount stays on the file it was made on, and goes
    /// when the host replaces or removes it; a Landlock rule grants an inode), and no file
    /// system mounted or unmounted on the host since.
    fn intact(&self, looks: &Looks) -> bool {
        let alive = self
            .parts
            .as_ref()
            .and_then(|(_, init)| init.fds.as_ref())
            .is_some_and(|f| !polls(&f.pidfd, libc::POLLIN));
        let mounts_same = self
            .mounts
            .as_ref()
            .is_some_and(|m| !polls(m, libc::POLLPRI));
        alive && mounts_same && self.held.iter().all(|h| h.holds(looks))
    }
}

/// The host paths a sandbox made from `plan` holds on to: its mount targets (a mount stays on
/// the file it was made on, and goes when that file is replaced) and its Landlock rules'
/// trees (a rule grants an inode, not a name).
fn held_paths(plan: &SandboxPlan) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for m in &plan.mounts {
        match m {
            MountStep::Tmpfs { target, keep, .. } => {
                out.push(target.clone());
                out.extend(keep.iter().cloned());
            }
            // A link the profile names is held too: pointed elsewhere, its new target is not
            // the one hidden.
            MountStep::Hide { target, link, .. } => {
                out.push(target.clone());
                out.extend(link.iter().cloned());
            }
            MountStep::Pin { target, .. }
            | MountStep::ReadOnly { target, .. }
            | MountStep::CoverLink { target, .. } => {
                out.push(target.clone());
            }
            MountStep::ReadOnlyHost { writable, .. } => out.extend(writable.iter().cloned()),
            MountStep::Proc | MountStep::MinimalDev => {}
        }
    }
    let rules = plan.landlock.iter().flat_map(|l| &l.rules);
    out.extend(rules.filter(|r| !r.after_mounts).map(|r| r.path.clone()));
    out
}

/// Prepare `plan`'s enforcement and clone its init, which waits for a command.
fn make(plan: Arc<SandboxPlan>, host: &Host) -> std::io::Result<Spare> {
    // Before the sandbox is made: a change in between shows as a difference at the call.
    let held = held_paths(&plan).into_iter().map(Held::new).collect();
    let mounts = std::fs::File::open("/proc/self/mountinfo").ok();
    let mut prepared = Prepared::new(&plan, handover::placeholder(), host)
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    prepared.command_slot = Some(CommandSlot::new());
    let _spawning = SPAWNING.lock();
    let (out, out_w) = pipe()?;
    let (err, err_w) = pipe()?;
    let (messages, msg_w) = pipe()?;
    let (command_r, command) = pipe()?;
    // An empty stdin: the write end goes at once.
    let (stdin, _) = pipe()?;
    let parent = own_pidfd();
    let raw = |fd: &Option<OwnedFd>| fd.as_ref().map_or(-1, AsRawFd::as_raw_fd);
    let fds = ChildFds {
        stdin: stdin.as_raw_fd(),
        stdout: out_w.as_raw_fd(),
        stderr: err_w.as_raw_fd(),
        ctty: -1,
        pty: None,
        messages: msg_w.as_raw_fd(),
        proxy: -1,
        parent: raw(&parent),
        stdin_feed: -1,
        sbx_ends: [
            out.as_raw_fd(),
            err.as_raw_fd(),
            messages.as_raw_fd(),
            command.as_raw_fd(),
            -1,
        ],
        command: command_r.as_raw_fd(),
        go: -1,
    };
    // SAFETY: everything the child uses is in `prepared` and `fds`, prepared above.
    let (pid, pidfd) = unsafe { crate::enforce::child::spawn(&mut prepared, fds) }?;
    // SAFETY: CLONE_PIDFD gave us a new fd that nobody else owns.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd) };
    drop((out_w, err_w, msg_w, command_r, stdin, parent));
    for fd in [&out, &err, &messages] {
        set_nonblocking(fd.as_raw_fd());
    }
    let init = Init {
        pid,
        fds: Some(InitFds {
            pidfd,
            out,
            err,
            messages,
            command,
        }),
    };
    Ok(Spare {
        plan,
        made: Instant::now(),
        held,
        mounts,
        parts: Some((prepared, init)),
    })
}

/// A pidfd of this process, which the init watches until its death signal is armed.
pub(super) fn own_pidfd() -> Option<OwnedFd> {
    // SAFETY: pidfd_open on our own pid returns a new fd (or -1), owned below.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, libc::getpid(), 0) } as RawFd;
    // SAFETY: when non-negative, the fd was just created and is owned by nobody else.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}
