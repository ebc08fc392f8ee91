//! The code that runs between `clone` and `execve`. Only raw syscalls on data prepared by the
//! parent: no allocation, no locks, no panics.
#![allow(clippy::missing_safety_doc)]

use super::Prepared;
use super::mounts::Op;
use libc::{c_int, c_void};
use std::os::fd::AsRawFd;

/// A fixed-size message on the report pipe.
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
    /// (0 peak RSS in KiB, 1 user CPU ms, 2 system CPU ms), `value` the amount.
    Usage = 5,
}

impl MessageKind {
    pub fn from_u32(v: u32) -> Option<Self> {
        Some(match v {
            1 => Self::SetupFailed,
            2 => Self::ExecFailed,
            3 => Self::Exited,
            4 => Self::Landlock,
            5 => Self::Usage,
            _ => return None,
        })
    }
}

/// Setup steps, named in error messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Step {
    UserMap = 1,
    Cgroup,
    MakePrivate,
    CloneMount,
    Tmpfs,
    Mkdir,
    Touch,
    AttachMount,
    Bind,
    ReadOnly,
    Proc,
    Devpts,
    Symlink,
    Hostname,
    Loopback,
    ForkCommand,
    Setsid,
    Stdio,
    Chdir,
    Rlimit,
    Capabilities,
    Landlock,
    Seccomp,
    Signals,
}

impl Step {
    pub fn from_u32(v: u32) -> Option<Self> {
        const ALL: [Step; 24] = [
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
            Step::Hostname,
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
        ];
        ALL.iter().copied().find(|s| *s as u32 == v)
    }

    pub fn describe(self) -> &'static str {
        match self {
            Step::UserMap => "writing the user namespace uid/gid maps",
            Step::Cgroup => "joining the pids cgroup",
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
            Step::Hostname => "setting the hostname",
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
        }
    }
}

/// File descriptors the children use.
#[derive(Clone, Copy, Debug)]
pub struct ChildFds {
    pub stdout: c_int,
    pub stderr: c_int,
    pub report: c_int,
    /// A pidfd of the process that starts the sandbox (or -1): closes the window between
    /// `clone` and `PR_SET_PDEATHSIG` in which its death would go unnoticed.
    pub parent: c_int,
}

fn errno() -> c_int {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

unsafe fn send(fd: c_int, kind: MessageKind, step: u32, value: i32) {
    let m = Message {
        kind: kind as u32,
        step,
        value,
    };
    // SAFETY: writes MESSAGE_LEN bytes from a live stack value; a short write only loses the report.
    unsafe { libc::write(fd, (&raw const m).cast::<c_void>(), MESSAGE_LEN) };
}

unsafe fn fail(fd: c_int, step: Step, err: c_int) -> ! {
    // SAFETY: see `send`; _exit is async-signal-safe.
    unsafe {
        send(fd, MessageKind::SetupFailed, step as u32, err);
        libc::_exit(125)
    }
}

macro_rules! check {
    ($fd:expr, $step:expr, $e:expr) => {
        if $e < 0 {
            let err = errno();
            fail($fd, $step, err)
        }
    };
}

unsafe fn write_file(path: &std::ffi::CStr, data: &[u8]) -> c_int {
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

/// `struct landlock_path_beneath_attr`, which the kernel declares packed.
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

unsafe fn add_late_rules(ruleset: c_int, rules: &[super::landlock::LateRule], rep: c_int) {
    const LANDLOCK_RULE_PATH_BENEATH: c_int = 1;
    for r in rules {
        // SAFETY: open/fstat/close on a prepared path; the attr lives on the stack.
        unsafe {
            let fd = libc::open(r.path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC);
            if fd < 0 {
                if r.required {
                    fail(rep, Step::Landlock, errno());
                }
                continue;
            }
            let mut st: libc::stat = std::mem::zeroed();
            let is_dir =
                libc::fstat(fd, &mut st) == 0 && (st.st_mode & libc::S_IFMT) == libc::S_IFDIR;
            let access = if is_dir { r.dir_access } else { r.file_access };
            if access != 0 {
                let attr = PathBeneathAttr {
                    allowed_access: access,
                    parent_fd: fd,
                };
                check!(
                    rep,
                    Step::Landlock,
                    libc::syscall(
                        libc::SYS_landlock_add_rule,
                        ruleset,
                        LANDLOCK_RULE_PATH_BENEATH,
                        &raw const attr,
                        0u32
                    )
                );
            }
            libc::close(fd);
        }
    }
}

#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

unsafe fn run_mount_ops(ops: &[Op], slots: &mut [c_int], rep: c_int) {
    const OPEN_TREE_CLONE: libc::c_uint = 1;
    const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 4;
    const MOUNT_ATTR_RDONLY: u64 = 1;
    let null = std::ptr::null::<libc::c_char>();
    for op in ops {
        // SAFETY: every pointer comes from a CString owned by `ops` or a literal.
        unsafe {
            match op {
                Op::MakePrivate => check!(
                    rep,
                    Step::MakePrivate,
                    libc::mount(
                        null,
                        c"/".as_ptr(),
                        null,
                        libc::MS_REC | libc::MS_PRIVATE,
                        std::ptr::null()
                    )
                ),
                Op::Clone { path, slot } => {
                    let fd = libc::syscall(
                        libc::SYS_open_tree,
                        libc::AT_FDCWD,
                        path.as_ptr(),
                        OPEN_TREE_CLONE
                            | libc::O_CLOEXEC as libc::c_uint
                            | libc::AT_RECURSIVE as libc::c_uint,
                    ) as c_int;
                    check!(rep, Step::CloneMount, fd);
                    slots[*slot] = fd;
                }
                Op::Tmpfs { target, data } => check!(
                    rep,
                    Step::Tmpfs,
                    libc::mount(
                        c"tmpfs".as_ptr(),
                        target.as_ptr(),
                        c"tmpfs".as_ptr(),
                        libc::MS_NOSUID | libc::MS_NODEV,
                        data.as_ptr().cast()
                    )
                ),
                Op::Mkdir { path } => {
                    if libc::mkdir(path.as_ptr(), 0o755) < 0 && errno() != libc::EEXIST {
                        fail(rep, Step::Mkdir, errno());
                    }
                }
                Op::Touch { path } => {
                    let fd = libc::open(
                        path.as_ptr(),
                        libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
                        0o644,
                    );
                    check!(rep, Step::Touch, fd);
                    libc::close(fd);
                }
                Op::Attach { slot, target } => {
                    let r = libc::syscall(
                        libc::SYS_move_mount,
                        slots[*slot],
                        c"".as_ptr(),
                        libc::AT_FDCWD,
                        target.as_ptr(),
                        MOVE_MOUNT_F_EMPTY_PATH,
                    );
                    check!(rep, Step::AttachMount, r);
                    libc::close(slots[*slot]);
                }
                Op::BindSelf { path } => check!(
                    rep,
                    Step::Bind,
                    libc::mount(
                        path.as_ptr(),
                        path.as_ptr(),
                        null,
                        libc::MS_BIND | libc::MS_REC,
                        std::ptr::null()
                    )
                ),
                Op::BindFile { src, target } => check!(
                    rep,
                    Step::Bind,
                    libc::mount(
                        src.as_ptr(),
                        target.as_ptr(),
                        null,
                        libc::MS_BIND,
                        std::ptr::null()
                    )
                ),
                Op::ReadOnly { path } => {
                    let attr = MountAttr {
                        attr_set: MOUNT_ATTR_RDONLY,
                        attr_clr: 0,
                        propagation: 0,
                        userns_fd: 0,
                    };
                    let r = libc::syscall(
                        libc::SYS_mount_setattr,
                        libc::AT_FDCWD,
                        path.as_ptr(),
                        libc::AT_RECURSIVE,
                        &raw const attr,
                        std::mem::size_of::<MountAttr>(),
                    );
                    check!(rep, Step::ReadOnly, r);
                }
                Op::Proc => check!(
                    rep,
                    Step::Proc,
                    libc::mount(
                        c"proc".as_ptr(),
                        c"/proc".as_ptr(),
                        c"proc".as_ptr(),
                        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                        std::ptr::null()
                    )
                ),
                Op::Devpts => check!(
                    rep,
                    Step::Devpts,
                    libc::mount(
                        c"devpts".as_ptr(),
                        c"/dev/pts".as_ptr(),
                        c"devpts".as_ptr(),
                        libc::MS_NOSUID | libc::MS_NOEXEC,
                        c"newinstance,ptmxmode=0666,mode=0620".as_ptr().cast()
                    )
                ),
                Op::WriteFile { path, data } => {
                    check!(rep, Step::Proc, write_file(path, data.as_bytes()))
                }
                Op::Symlink { target, link } => check!(
                    rep,
                    Step::Symlink,
                    libc::symlink(target.as_ptr(), link.as_ptr())
                ),
            }
        }
    }
}

unsafe fn loopback_up(rep: c_int) {
    // SAFETY: a zeroed ifreq with a NUL-terminated name is valid for SIOC[GS]IFFLAGS.
    unsafe {
        let s = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        check!(rep, Step::Loopback, s);
        let mut ifr: libc::ifreq = std::mem::zeroed();
        ifr.ifr_name[0] = b'l' as libc::c_char;
        ifr.ifr_name[1] = b'o' as libc::c_char;
        check!(
            rep,
            Step::Loopback,
            libc::ioctl(s, libc::SIOCGIFFLAGS, &mut ifr)
        );
        ifr.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
        check!(
            rep,
            Step::Loopback,
            libc::ioctl(s, libc::SIOCSIFFLAGS, &ifr)
        );
        libc::close(s);
    }
}

extern "C" fn noop(_: c_int) {}

/// Signals the init forwards to the tree. SIGUSR2 means "kill the tree now".
const FORWARDED: [c_int; 5] = [
    libc::SIGTERM,
    libc::SIGINT,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGUSR1,
];

unsafe fn wait_set() -> libc::sigset_t {
    // SAFETY: sigset operations on a local.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in FORWARDED {
            libc::sigaddset(&mut set, s);
        }
        libc::sigaddset(&mut set, libc::SIGCHLD);
        libc::sigaddset(&mut set, libc::SIGUSR2);
        set
    }
}

/// Signal every process of the tree except the init itself.
unsafe fn signal_tree(pid_ns: bool, cmd: libc::pid_t, sig: c_int) -> bool {
    // SAFETY: kill and read on stack buffers.
    unsafe {
        if pid_ns {
            return libc::kill(-1, sig) == 0;
        }
        libc::kill(-cmd, sig);
        let fd = libc::open(
            c"/proc/thread-self/children".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return false;
        }
        let mut buf = [0u8; 4096];
        let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
        libc::close(fd);
        let mut any = false;
        let mut cur: libc::pid_t = 0;
        for &b in buf.iter().take(n.max(0) as usize) {
            if b.is_ascii_digit() {
                cur = cur * 10 + (b - b'0') as libc::pid_t;
            } else if cur > 0 {
                libc::kill(cur, sig);
                any = true;
                cur = 0;
            }
        }
        if cur > 0 {
            libc::kill(cur, sig);
            any = true;
        }
        any
    }
}

/// Clone the sandbox init. Returns `(pid, pidfd)` in the parent; never returns in the child.
///
/// # Safety
/// `prep` and `fds` must be fully prepared; the child touches only them.
pub unsafe fn spawn(prep: &mut Prepared, fds: ChildFds) -> std::io::Result<(libc::pid_t, c_int)> {
    let mut pidfd: c_int = -1;
    let flags = prep.clone_flags | libc::CLONE_PIDFD as u64 | libc::SIGCHLD as u64;
    // SAFETY: clone without CLONE_VM and with a NULL stack behaves like fork: the child gets a
    // copy of this stack and continues here. CLONE_PIDFD stores the pidfd in `pidfd`.
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone,
            flags,
            0usize,
            &raw mut pidfd,
            0usize,
            0usize,
        )
    };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: we are the single-threaded child; `init` never returns.
        unsafe { init(prep, fds) }
    }
    Ok((pid as libc::pid_t, pidfd))
}

unsafe fn init(p: &mut Prepared, f: ChildFds) -> ! {
    let rep = f.report;
    // SAFETY: raw syscalls on prepared data; see module docs.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if f.parent >= 0 {
            let mut pfd = libc::pollfd {
                fd: f.parent,
                events: libc::POLLIN,
                revents: 0,
            };
            if libc::poll(&mut pfd, 1, 0) > 0 {
                // The parent died before the death signal was armed.
                libc::_exit(125);
            }
        }
        if let (Some(u), Some(g)) = (&p.uid_map, &p.gid_map) {
            check!(
                rep,
                Step::UserMap,
                write_file(c"/proc/self/setgroups", b"deny")
            );
            check!(rep, Step::UserMap, write_file(c"/proc/self/uid_map", u));
            check!(rep, Step::UserMap, write_file(c"/proc/self/gid_map", g));
        }
        libc::setpgid(0, 0);
        if let Some(procs) = &p.cgroup_procs {
            check!(rep, Step::Cgroup, write_file(procs, b"0"));
        }
        run_mount_ops(&p.mount_ops, &mut p.slots, rep);
        if let Some(rs) = &p.ruleset {
            add_late_rules(rs.as_raw_fd(), &p.late_rules, rep);
        }
        if let Some(h) = &p.hostname {
            check!(
                rep,
                Step::Hostname,
                libc::sethostname(h.as_ptr(), h.as_bytes().len())
            );
        }
        if p.loopback_up {
            loopback_up(rep);
        }
        if !p.pid_namespace {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1);
        }
        let set = wait_set();
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = noop as *const () as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        for s in FORWARDED.iter().chain(&[libc::SIGCHLD, libc::SIGUSR2]) {
            check!(
                rep,
                Step::Signals,
                libc::sigaction(*s, &sa, std::ptr::null_mut())
            );
        }
        check!(
            rep,
            Step::Signals,
            libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut())
        );

        let cmd = libc::syscall(
            libc::SYS_clone,
            libc::SIGCHLD as u64,
            0usize,
            0usize,
            0usize,
            0usize,
        ) as libc::pid_t;
        check!(rep, Step::ForkCommand, cmd);
        if cmd == 0 {
            command(p, f);
        }
        libc::close(f.stdout);
        libc::close(f.stderr);
        reap(p.pid_namespace, cmd, rep, &set)
    }
}

unsafe fn reap(pid_ns: bool, cmd: libc::pid_t, rep: c_int, set: &libc::sigset_t) -> ! {
    // SAFETY: waitpid, kill, sigwaitinfo on locals.
    unsafe {
        let mut cmd_status: Option<c_int> = None;
        loop {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let sig = libc::sigwaitinfo(set, &mut info);
            if sig == libc::SIGUSR2 {
                signal_tree(pid_ns, cmd, libc::SIGKILL);
            } else if FORWARDED.contains(&sig) {
                signal_tree(pid_ns, cmd, sig);
            }
            loop {
                let mut st: c_int = 0;
                let r = libc::waitpid(-1, &mut st, libc::WNOHANG);
                if r <= 0 {
                    break;
                }
                if r == cmd {
                    cmd_status = Some(st);
                }
            }
            if let Some(st) = cmd_status {
                // The command is gone: nothing else of the tree may outlive it.
                loop {
                    signal_tree(pid_ns, cmd, libc::SIGKILL);
                    let mut s2: c_int = 0;
                    if libc::waitpid(-1, &mut s2, 0) < 0 && errno() == libc::ECHILD {
                        break;
                    }
                }
                // The tree's usage, so that sbx need not wait for this process's own exit
                // (which tears the namespaces down) to report it.
                let mut ru: libc::rusage = std::mem::zeroed();
                libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru);
                let ms = |t: libc::timeval| {
                    (t.tv_sec * 1000 + t.tv_usec / 1000).clamp(0, i32::MAX as i64) as i32
                };
                send(
                    rep,
                    MessageKind::Usage,
                    0,
                    ru.ru_maxrss.clamp(0, i32::MAX as i64) as i32,
                );
                send(rep, MessageKind::Usage, 1, ms(ru.ru_utime));
                send(rep, MessageKind::Usage, 2, ms(ru.ru_stime));
                send(rep, MessageKind::Exited, 0, st);
                libc::_exit(0);
            }
        }
    }
}

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

unsafe fn command(p: &mut Prepared, f: ChildFds) -> ! {
    let rep = f.report;
    // SAFETY: raw syscalls on prepared data; see module docs.
    unsafe {
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        for s in 1..=64 {
            if s != libc::SIGKILL && s != libc::SIGSTOP {
                libc::sigaction(s, &dfl, std::ptr::null_mut());
            }
        }
        libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        check!(rep, Step::Setsid, libc::setsid());
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        check!(rep, Step::Stdio, libc::dup2(f.stdout, 1));
        check!(rep, Step::Stdio, libc::dup2(f.stderr, 2));
        check!(rep, Step::Chdir, libc::chdir(p.exec.cwd.as_ptr()));
        for &(res, v) in &p.rlimits {
            let mut cur: libc::rlimit = std::mem::zeroed();
            libc::getrlimit(res, &mut cur);
            let v = v.min(cur.rlim_max);
            let lim = libc::rlimit {
                rlim_cur: v,
                rlim_max: v,
            };
            check!(rep, Step::Rlimit, libc::setrlimit(res, &lim));
        }
        check!(
            rep,
            Step::Stdio,
            libc::syscall(
                libc::SYS_close_range,
                3u32,
                u32::MAX,
                libc::CLOSE_RANGE_CLOEXEC
            )
        );
        if p.drop_bounding {
            for cap in 0..64 {
                if libc::prctl(libc::PR_CAPBSET_DROP, cap) < 0 && errno() != libc::EINVAL {
                    fail(rep, Step::Capabilities, errno());
                }
            }
        }
        check!(
            rep,
            Step::Capabilities,
            libc::prctl(
                libc::PR_CAP_AMBIENT,
                libc::PR_CAP_AMBIENT_CLEAR_ALL,
                0,
                0,
                0
            )
        );
        check!(
            rep,
            Step::Capabilities,
            libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        );
        if let Some(rs) = &p.ruleset {
            check!(
                rep,
                Step::Landlock,
                libc::syscall(libc::SYS_landlock_restrict_self, rs.as_raw_fd(), 0u32)
            );
            send(rep, MessageKind::Landlock, 0, 0);
        }
        let hdr = CapHeader {
            version: 0x2008_0522,
            pid: 0,
        };
        let data = [CapData {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        check!(
            rep,
            Step::Capabilities,
            libc::syscall(libc::SYS_capset, &raw const hdr, data.as_ptr())
        );
        if let Some(prog) = &p.seccomp {
            if seccompiler::apply_filter(prog).is_err() {
                fail(rep, Step::Seccomp, errno());
            }
        }
        let mut err = libc::ENOENT;
        for cand in &p.exec.candidates {
            libc::execve(cand.as_ptr(), p.exec.argv.as_ptr(), p.exec.envp.as_ptr());
            let e = errno();
            if e != libc::ENOENT && e != libc::ENOTDIR {
                err = e;
            }
        }
        send(rep, MessageKind::ExecFailed, 0, err);
        libc::_exit(if err == libc::ENOENT { 127 } else { 126 })
    }
}
