//! What the sandbox's children tell sbx: fixed-size messages on the message pipe, the setup
//! steps they name, and the async-signal-safe helpers that send them.
#![allow(clippy::missing_safety_doc)]

use libc::{c_int, c_void};

/// A fixed-size message on the message pipe.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Message {
    pub kind: u32,
    pub step: u32,
    pub value: i32,
}

pub const MESSAGE_LEN: usize = std::mem::size_of::<Message>();

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum MessageKind {
    /// A setup step failed: `step`, `value` = errno.
    SetupFailed = 1,
    /// execve failed: `value` = errno.
    ExecFailed = 2,
    /// The command ended: `value` = its wait status.
    Exited = 3,
    /// Landlock applied: `value` = 0 fully, 1 partially, 2 not enforced.
    Landlock = 4,
    /// Resource use of the whole tree, sent just before `Exited`: `step` says which
    /// (0 peak RSS in KiB, 1 user CPU ms, 2 system CPU ms, 3 which sized private tmpfs
    /// mounts are full, one bit each in `Prepared::sized_tmpfs` order), `value` the amount.
    Usage = 5,
    /// Sent right before `SetupFailed` when a mount operation failed: `value` = its index in
    /// the prepared operations, which name the path.
    FailedOp = 6,
}

impl MessageKind {
    pub fn from_u32(v: u32) -> Option<Self> {
        Some(match v {
            1 => Self::SetupFailed,
            2 => Self::ExecFailed,
            3 => Self::Exited,
            4 => Self::Landlock,
            5 => Self::Usage,
            6 => Self::FailedOp,
            _ => return None,
        })
    }
}

/// A step of the sandbox's setup, in a child before `execve`: named by a setup message and by
/// [`RunError::Setup`](crate::exec::RunError::Setup) when it fails (re-exported as
/// [`exec::Step`](crate::exec::Step)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
#[non_exhaustive]
pub enum Step {
    /// Writing the user namespace uid/gid maps.
    UserMap = 1,
    /// Joining the run's cgroup.
    Cgroup,
    /// Making the mount namespace private.
    MakePrivate,
    /// Copying a mount to keep it under a tmpfs.
    CloneMount,
    /// Mounting a tmpfs.
    Tmpfs,
    /// Creating a mount point.
    Mkdir,
    /// Creating a file mount point.
    Touch,
    /// Attaching a kept mount.
    AttachMount,
    /// Bind-mounting a path.
    Bind,
    /// Making a path read-only.
    ReadOnly,
    /// Mounting /proc for the PID namespace.
    Proc,
    /// Mounting a private devpts.
    Devpts,
    /// Creating a /dev symlink.
    Symlink,
    /// Bringing up lo.
    Loopback,
    /// Forking the command.
    ForkCommand,
    /// Starting a new session.
    Setsid,
    /// Connecting stdout and stderr.
    Stdio,
    /// Entering the working directory.
    Chdir,
    /// Setting resource limits.
    Rlimit,
    /// Dropping capabilities.
    Capabilities,
    /// Applying Landlock.
    Landlock,
    /// Installing the seccomp filter.
    Seccomp,
    /// Setting up signal handling.
    Signals,
    /// Setting up the command's pseudo-terminal.
    Terminal,
    /// Opening the proxy's port on the sandbox's loopback.
    Proxy,
    /// Receiving the command.
    Command,
}

impl Step {
    pub(crate) fn from_u32(v: u32) -> Option<Self> {
        const ALL: [Step; 26] = [
            Step::UserMap,
            Step::Cgroup,
            Step::MakePrivate,
            Step::CloneMount,
            Step::Tmpfs,
            Step::Mkdir,
            Step::Touch,
            Step::AttachMount,
            Step::Bind,
            Step::ReadOnly,
            Step::Proc,
            Step::Devpts,
            Step::Symlink,
            Step::Loopback,
            Step::ForkCommand,
            Step::Setsid,
            Step::Stdio,
            Step::Chdir,
            Step::Rlimit,
            Step::Capabilities,
            Step::Landlock,
            Step::Seccomp,
            Step::Signals,
            Step::Terminal,
            Step::Proxy,
            Step::Command,
        ];
        ALL.iter().copied().find(|s| *s as u32 == v)
    }

    /// What the step does, as an error message words it ("mounting a tmpfs").
    pub fn describe(self) -> &'static str {
        match self {
            Step::UserMap => "writing the user namespace uid/gid maps",
            Step::Cgroup => "joining the run's cgroup",
            Step::MakePrivate => "making the mount namespace private",
            Step::CloneMount => "copying a mount to keep it under a tmpfs",
            Step::Tmpfs => "mounting a tmpfs",
            Step::Mkdir => "creating a mount point",
            Step::Touch => "creating a file mount point",
            Step::AttachMount => "attaching a kept mount",
            Step::Bind => "bind-mounting a path",
            Step::ReadOnly => "making a path read-only",
            Step::Proc => "mounting /proc for the PID namespace",
            Step::Devpts => "mounting a private devpts",
            Step::Symlink => "creating a /dev symlink",
            Step::Loopback => "bringing up lo",
            Step::ForkCommand => "forking the command",
            Step::Setsid => "starting a new session",
            Step::Stdio => "connecting stdout and stderr",
            Step::Chdir => "entering the working directory",
            Step::Rlimit => "setting resource limits",
            Step::Capabilities => "dropping capabilities",
            Step::Landlock => "applying Landlock",
            Step::Seccomp => "installing the seccomp filter",
            Step::Signals => "setting up signal handling",
            Step::Terminal => "setting up the command's pseudo-terminal",
            Step::Proxy => "opening the proxy's port on the sandbox's loopback",
            Step::Command => "receiving the command",
        }
    }
}

/// File descriptors the children use.
#[derive(Clone, Copy, Debug)]
pub struct ChildFds {
    /// The command's stdin, or -1 to keep the one sbx was given.
    pub stdin: c_int,
    pub stdout: c_int,
    pub stderr: c_int,
    /// The command's controlling terminal, or -1: set by the init when it opens `pty`.
    pub ctty: c_int,
    /// A pseudo-terminal for the command to open in the sandbox, or none.
    pub pty: Option<super::pty::PtySpec>,
    /// The write end of the message pipe to sbx.
    pub messages: c_int,
    /// A unix socket on which the init sends the proxy's listening socket; or, when the
    /// proxy listens on the host's loopback, that socket, which the init closes; or -1.
    pub proxy: c_int,
    /// A pidfd of the process that starts the sandbox (or -1): closes the window between
    /// `clone` and `PR_SET_PDEATHSIG` in which its death would go unnoticed.
    pub parent: c_int,
    /// sbx's end of the pipe it relays stdin through (or -1), which the init closes at once:
    /// the command sees the end of its input only when sbx's copy is the last one.
    pub stdin_feed: c_int,
    /// sbx's own ends of the other pipes it shares with the init (the read ends of the
    /// command's stdout and stderr and of the messages, the write ends of `command` and `go`),
    /// or -1, which the init closes at once as well: the command's write fails when sbx closes
    /// its read end (its reader is gone), and a `go` or `command` pipe ends when sbx does.
    pub sbx_ends: [c_int; 5],
    /// For an init made ahead of its call: the pipe its command arrives on (see
    /// [`handover`](super::handover)); -1 to run the prepared one.
    pub command: c_int,
    /// A pipe on which sbx says the command may start (one byte), or -1 to start it once set
    /// up: sbx records the workspace's protected state while the init sets the sandbox up.
    pub go: c_int,
}

pub(super) fn errno() -> c_int {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

pub(super) unsafe fn send(fd: c_int, kind: MessageKind, step: u32, value: i32) {
    let m = Message {
        kind: kind as u32,
        step,
        value,
    };
    // SAFETY: writes MESSAGE_LEN bytes from a live stack value; a short write only loses the message.
    unsafe { libc::write(fd, (&raw const m).cast::<c_void>(), MESSAGE_LEN) };
}

/// Send several messages in one write, so that sbx wakes once for all of them (a write of at
/// most `PIPE_BUF` bytes to a pipe is atomic).
pub(super) unsafe fn send_all<const N: usize>(fd: c_int, messages: &[Message; N]) {
    const { assert!(N * MESSAGE_LEN <= libc::PIPE_BUF) };
    // SAFETY: writes the array, a live stack value of N * MESSAGE_LEN bytes (repr(C), no
    // padding: three 4-byte fields); a short write only loses the messages.
    unsafe { libc::write(fd, messages.as_ptr().cast::<c_void>(), N * MESSAGE_LEN) };
}

/// The index of the mount operation running in this process, or -1: set by the init as it
/// applies them, so that a failure names its path. An atomic of the forked process's own
/// memory: no lock, no allocation.
pub(super) static MOUNT_OP: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);

pub(super) unsafe fn fail(fd: c_int, step: Step, err: c_int) -> ! {
    let op = MOUNT_OP.load(std::sync::atomic::Ordering::Relaxed);
    let failed = Message {
        kind: MessageKind::SetupFailed as u32,
        step: step as u32,
        value: err,
    };
    // SAFETY: see `send` and `send_all`; _exit is async-signal-safe.
    unsafe {
        if op >= 0 {
            let at = Message {
                kind: MessageKind::FailedOp as u32,
                step: 0,
                value: op,
            };
            send_all(fd, &[at, failed]);
        } else {
            send_all(fd, &[failed]);
        }
        libc::_exit(125)
    }
}

/// Report `step` as failed and exit when `$e` is negative.
macro_rules! or_fail {
    ($fd:expr, $step:expr, $e:expr) => {
        if $e < 0 {
            let err = $crate::enforce::messages::errno();
            $crate::enforce::messages::fail($fd, $step, err)
        }
    };
}
pub(super) use or_fail;

pub(super) unsafe fn write_file(path: &std::ffi::CStr, data: &[u8]) -> c_int {
    // SAFETY: path is NUL-terminated; data is a live slice.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return -1;
        }
        let n = libc::write(fd, data.as_ptr().cast(), data.len());
        libc::close(fd);
        if n == data.len() as isize { 0 } else { -1 }
    }
}
