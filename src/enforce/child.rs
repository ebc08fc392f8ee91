//! The sandbox's init: cloned into the new namespaces, it sets them up, starts the command
//! and reaps the tree. Only raw syscalls on data prepared by the parent: no allocation, no
//! locks, no panics.
#![allow(clippy::missing_safety_doc)]

use super::Prepared;
use super::command::start_command;
use super::messages::{ChildFds, Message, MessageKind, Step, errno, or_fail, send_all, write_file};
use super::setup::{add_late_rules, apply_mount_ops, hand_over_listener, loopback_up};
use libc::c_int;
use std::os::fd::AsRawFd;

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

/// clone3's flag to start the child in the cgroup `CloneArgs::cgroup` (Linux 5.7+); libc's
/// constant is an `int` too narrow for it.
const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;

/// `struct clone_args` of clone3 up to `cgroup` (CLONE_ARGS_SIZE_VER2).
#[repr(C)]
#[derive(Default)]
struct CloneArgs {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
    set_tid: u64,
    set_tid_size: u64,
    cgroup: u64,
}

/// Fork-like clone with `flags` (CLONE_PIDFD stores the pidfd in `pidfd`), into the cgroup v2
/// directory `cgroup` when given. Returns the child's pid, 0 in the child, or -1.
///
/// # Safety
/// The child gets a copy of this stack and returns here: between this and `execve` or `_exit`
/// it may only run async-signal-safe code.
unsafe fn clone_fork(flags: u64, cgroup: Option<c_int>, pidfd: &mut c_int) -> libc::c_long {
    match cgroup {
        Some(cg) => {
            let args = CloneArgs {
                flags: flags | CLONE_INTO_CGROUP,
                pidfd: (pidfd as *mut c_int) as u64,
                exit_signal: libc::SIGCHLD as u64,
                cgroup: cg as u64,
                ..CloneArgs::default()
            };
            // SAFETY: clone3 without a stack behaves like fork. The kernel reads `args` and
            // stores the pidfd through the pointer in it.
            unsafe {
                libc::syscall(
                    libc::SYS_clone3,
                    &raw const args,
                    std::mem::size_of::<CloneArgs>(),
                )
            }
        }
        // SAFETY: clone without CLONE_VM and with a NULL stack behaves like fork.
        None => unsafe {
            libc::syscall(
                libc::SYS_clone,
                flags | libc::SIGCHLD as u64,
                0usize,
                pidfd as *mut c_int,
                0usize,
                0usize,
            )
        },
    }
}

/// Clone the sandbox init, straight into the run's cgroup v2 when there is one (so that no
/// migration, which waits for an RCU grace period, is needed). Returns `(pid, pidfd)` in the
/// parent; never returns in the child.
///
/// # Safety
/// `prep` and `fds` must be fully prepared; the child touches only them.
pub(crate) unsafe fn spawn(
    prep: &mut Prepared,
    fds: ChildFds,
) -> std::io::Result<(libc::pid_t, c_int)> {
    let mut pidfd: c_int = -1;
    let flags = prep.clone_flags | libc::CLONE_PIDFD as u64;
    let cgroup = prep.cgroups.v2_fd.as_ref().map(AsRawFd::as_raw_fd);
    // SAFETY: the child continues below, in `init`, on prepared data only.
    let pid = unsafe { clone_fork(flags, cgroup, &mut pidfd) };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: we are the single-threaded child; `init` never returns.
        unsafe { init(prep, fds) }
    }
    Ok((pid as libc::pid_t, pidfd))
}

/// The sandbox init: its setup steps in order, then the command, then reaping.
unsafe fn init(p: &mut Prepared, mut f: ChildFds) -> ! {
    let msgs = f.messages;
    // SAFETY: raw syscalls on prepared data; see module docs.
    unsafe {
        for fd in std::iter::once(f.stdin_feed).chain(f.sbx_ends) {
            if fd >= 0 {
                libc::close(fd);
            }
        }
        tie_to_parent(p, &mut f);
        identity_and_cgroups(p, msgs);
        namespace_setup(p, &mut f, msgs);
        let set = block_signals(msgs);
        if let Some(spec) = f.pty {
            take_pty(&spec, &mut f);
        }
        let exec = if f.command >= 0 {
            await_command(p, f.command, msgs)
        } else {
            p.exec.ptrs()
        };
        if f.go >= 0 {
            await_go(f.go, msgs);
        }
        let cmd = start_command(p, f, exec);
        or_fail!(msgs, Step::ForkCommand, cmd);
        // Only the command keeps the replica: once its tree is gone, sbx reads the end of it.
        for fd in [f.stdin, f.stdout, f.stderr, f.ctty] {
            if fd >= 0 {
                libc::close(fd);
            }
        }
        reap(p, cmd, msgs, &set)
    }
}

/// An init made ahead of its call waits here, set up, for its command. Closed without one, the
/// spare was not wanted: it leaves quietly.
unsafe fn await_command(p: &mut Prepared, fd: c_int, msgs: c_int) -> super::ExecPtrs {
    use super::handover::{Missing, receive};
    let Some(slot) = p.command_slot.as_mut() else {
        // SAFETY: reporting and exiting are async-signal-safe.
        unsafe { super::messages::fail(msgs, Step::Command, libc::EINVAL) }
    };
    // SAFETY: `slot` is this process's copy; close on an fd it holds.
    unsafe {
        let got = receive(slot, fd);
        libc::close(fd);
        match got {
            Ok(exec) => exec,
            Err(Missing::Closed) => libc::_exit(0),
            Err(Missing::Malformed) => super::messages::fail(msgs, Step::Command, libc::EINVAL),
        }
    }
}

/// Wait for sbx's word that the command may start. A gate closed without it means sbx did not
/// get to record what the run is checked against: the command does not start.
unsafe fn await_go(fd: c_int, msgs: c_int) {
    let mut byte = 0u8;
    // SAFETY: read into a local byte and close, on an fd this process holds; reporting and
    // exiting are async-signal-safe.
    unsafe {
        let got = loop {
            let n = libc::read(fd, (&raw mut byte).cast(), 1);
            if n >= 0 || *libc::__errno_location() != libc::EINTR {
                break n;
            }
        };
        libc::close(fd);
        if got != 1 {
            super::messages::fail(msgs, Step::Command, libc::EPIPE);
        }
    }
}

/// The tree's usage, which private tmpfs mounts are full, and the command's wait status, in
/// one write: sbx need not wait for this process's own exit (which tears the namespaces down)
/// to report them.
unsafe fn send_final_messages(sized_tmpfs: &[std::ffi::CString], msgs: c_int, st: c_int) {
    // SAFETY: getrusage and statfs into locals; one write of messages on the stack.
    unsafe {
        // The tree's usage, so that sbx need not wait for this process's own exit
        // (which tears the namespaces down) to report it.
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru);
        let ms = |t: libc::timeval| {
            (t.tv_sec * 1000 + t.tv_usec / 1000).clamp(0, i32::MAX as i64) as i32
        };
        let m = |kind: MessageKind, step, value| Message {
            kind: kind as u32,
            step,
            value,
        };
        send_all(
            msgs,
            &[
                m(
                    MessageKind::Usage,
                    0,
                    ru.ru_maxrss.clamp(0, i32::MAX as i64) as i32,
                ),
                m(MessageKind::Usage, 1, ms(ru.ru_utime)),
                m(MessageKind::Usage, 2, ms(ru.ru_stime)),
                m(MessageKind::Usage, 3, full_tmpfs(sized_tmpfs)),
                m(MessageKind::Exited, 0, st),
            ],
        );
    }
}

/// Which of the sized private tmpfs mounts are full, one bit each in their order.
unsafe fn full_tmpfs(sized: &[std::ffi::CString]) -> i32 {
    let mut bits = 0;
    for (i, path) in sized.iter().enumerate().take(31) {
        // SAFETY: statfs into a zeroed struct on the stack, of a NUL-terminated path.
        let full = unsafe {
            let mut st: libc::statfs = std::mem::zeroed();
            libc::statfs(path.as_ptr(), &mut st) == 0 && st.f_blocks > 0 && st.f_bavail == 0
        };
        if full {
            bits |= 1 << i;
        }
    }
    bits
}

/// Die with sbx, and give up what belongs to sbx alone.
unsafe fn tie_to_parent(p: &Prepared, f: &mut ChildFds) {
    // SAFETY: prctl, close and poll on fds this process holds.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if p.proxy_port == 0 && f.proxy >= 0 {
            // The proxy's listener on the host's loopback belongs to sbx alone: a copy here
            // would keep its port open while this process lingers after sbx is gone.
            libc::close(f.proxy);
            f.proxy = -1;
        }
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
    }
}

/// The user namespace's maps, a process group of its own, the OOM score, the v1 cgroups.
unsafe fn identity_and_cgroups(p: &Prepared, msgs: c_int) {
    // SAFETY: writes of prepared data to prepared or literal paths.
    unsafe {
        if let (Some(u), Some(g)) = (&p.uid_map, &p.gid_map) {
            or_fail!(
                msgs,
                Step::UserMap,
                write_file(c"/proc/self/setgroups", b"deny")
            );
            or_fail!(msgs, Step::UserMap, write_file(c"/proc/self/uid_map", u));
            or_fail!(msgs, Step::UserMap, write_file(c"/proc/self/gid_map", g));
        }
        libc::setpgid(0, 0);
        if p.protect_init {
            or_fail!(
                msgs,
                Step::Cgroup,
                write_file(c"/proc/self/oom_score_adj", b"-1000")
            );
        }
        for procs in &p.cgroups.v1_procs {
            or_fail!(msgs, Step::Cgroup, write_file(procs, b"0"));
        }
    }
}

/// Inside the new namespaces: the mounts, the Landlock rules for what was mounted, the
/// hostname, loopback, the proxy's listener, and the subreaper without a PID namespace.
unsafe fn namespace_setup(p: &mut Prepared, f: &mut ChildFds, msgs: c_int) {
    // SAFETY: raw syscalls on prepared data.
    unsafe {
        apply_mount_ops(&p.mount_ops, &mut p.slots, msgs);
        if let Some(rs) = &p.ruleset {
            add_late_rules(rs.as_raw_fd(), &p.late_rules, msgs);
        }
        if p.loopback_up {
            loopback_up(msgs);
        }
        if p.proxy_port != 0 && f.proxy >= 0 {
            hand_over_listener(p.proxy_port, f.proxy, msgs);
            f.proxy = -1;
        }
        if !p.pid_namespace {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1);
        }
    }
}

/// Block the signals the init waits for (forwarded ones, SIGCHLD, SIGUSR2), each with a
/// handler so that none is ignored; the set to wait on.
unsafe fn block_signals(msgs: c_int) -> libc::sigset_t {
    // SAFETY: sigaction and sigprocmask with structures on the stack.
    unsafe {
        let set = wait_set();
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = noop as *const () as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        for s in FORWARDED.iter().chain(&[libc::SIGCHLD, libc::SIGUSR2]) {
            or_fail!(
                msgs,
                Step::Signals,
                libc::sigaction(*s, &sa, std::ptr::null_mut())
            );
        }
        or_fail!(
            msgs,
            Step::Signals,
            libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut())
        );
        set
    }
}

/// Open the pseudo-terminal's replica: the command's controlling terminal, and the stdio
/// streams `spec` names.
unsafe fn take_pty(spec: &super::pty::PtySpec, f: &mut ChildFds) {
    // SAFETY: see `pty::open`: raw syscalls on the prepared spec.
    let replica = unsafe { super::pty::open(spec, f.messages) };
    f.ctty = replica;
    for (on, fd) in [
        (spec.stdin, &mut f.stdin),
        (spec.stdout, &mut f.stdout),
        (spec.stderr, &mut f.stderr),
    ] {
        if on {
            *fd = replica;
        }
    }
}

unsafe fn reap(p: &Prepared, cmd: libc::pid_t, msgs: c_int, set: &libc::sigset_t) -> ! {
    let pid_ns = p.pid_namespace;
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
                // The command is gone: nothing else of the tree may outlive it. Every process
                // of the tree is a child of this one (the PID namespace's init, or the
                // subreaper) or descends from one, so no child left means no tree left. That is
                // the usual case, and it spares `kill(-1)`, which walks every process of the
                // host.
                loop {
                    let mut s2: c_int = 0;
                    let r = libc::waitpid(-1, &mut s2, libc::WNOHANG);
                    if r > 0 {
                        continue;
                    }
                    if r < 0 && errno() == libc::ECHILD {
                        break;
                    }
                    signal_tree(pid_ns, cmd, libc::SIGKILL);
                    libc::waitpid(-1, &mut s2, 0);
                }
                send_final_messages(&p.sized_tmpfs, msgs, st);
                libc::_exit(0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The mechanism behind cgroup v2 runs, on any cgroup2 mount (no controller needed): the
    /// child starts in the cgroup, and nothing joins it afterwards.
    #[test]
    fn a_child_is_cloned_straight_into_a_cgroup_v2() -> std::io::Result<()> {
        if !nix::unistd::geteuid().is_root() {
            eprintln!("SKIP: making a cgroup needs root");
            return Ok(());
        }
        let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let mounts = crate::host::cgroup::parse_mountinfo(&info);
        let Some(v2) = mounts.iter().find(|m| m.v1.is_none()) else {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "no cgroup2 mount on CI"
            );
            eprintln!("SKIP: no cgroup2 mount");
            return Ok(());
        };
        let dir = v2
            .point
            .join(format!("sbx-unit-clone-{}", std::process::id()));
        std::fs::create_dir(&dir)?;
        let fd = std::fs::File::open(&dir)?;
        let mut pidfd: c_int = -1;
        // SAFETY: the child only pauses until it is killed.
        let pid = unsafe { clone_fork(libc::CLONE_PIDFD as u64, Some(fd.as_raw_fd()), &mut pidfd) };
        if pid == 0 {
            // SAFETY: async-signal-safe calls only.
            unsafe {
                libc::pause();
                libc::_exit(0)
            }
        }
        if pid < 0 {
            let err = std::io::Error::last_os_error();
            std::fs::remove_dir(&dir)?;
            panic!("clone3 into a cgroup failed: {err}");
        }
        let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
        let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        // SAFETY: our own child, killed and reaped once; the pidfd closed once.
        unsafe {
            libc::kill(pid as libc::pid_t, libc::SIGKILL);
            libc::waitpid(pid as libc::pid_t, std::ptr::null_mut(), 0);
            libc::close(pidfd);
        }
        std::fs::remove_dir(&dir)?;
        assert!(pidfd >= 0, "no pidfd");
        assert_eq!(
            procs.trim(),
            pid.to_string(),
            "the cgroup holds only the child"
        );
        assert!(
            !own.contains("sbx-unit-clone"),
            "the parent stayed where it was: {own}"
        );
        Ok(())
    }
}
