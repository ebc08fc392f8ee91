//! The command's last steps before `execve`: session, stdio, limits, capabilities, Landlock
//! and seccomp. Runs in a child that shares the init's memory until it executes, on a stack
//! prepared by the parent. Raw syscalls on prepared data only.
#![allow(clippy::missing_safety_doc)]

use super::messages::{ChildFds, MessageKind, Step, errno, fail, or_fail, send, write_file};
use super::{ExecPtrs, Prepared};
use libc::{c_int, c_void};
use std::os::fd::AsRawFd;

/// The command's stack while it shares the init's memory, mapped by the parent with a guard
/// page below it.
pub struct CommandStack {
    base: *mut c_void,
}

// SAFETY: the mapping is owned by this value alone; only the child that runs on it uses it.
unsafe impl Send for CommandStack {}
// SAFETY: as above: shared references never touch the mapping.
unsafe impl Sync for CommandStack {}

impl CommandStack {
    /// Far more than the steps before `execve` use; pages are only touched as needed.
    const LEN: usize = 256 * 1024;
    const GUARD: usize = 4096;

    pub fn new() -> std::io::Result<Self> {
        // SAFETY: a fresh anonymous private mapping, owned by the returned value.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                Self::LEN,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let stack = Self { base };
        // SAFETY: the lowest page of the mapping just made.
        if unsafe { libc::mprotect(base, Self::GUARD, libc::PROT_NONE) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(stack)
    }

    fn top(&self) -> *mut c_void {
        // SAFETY: one past the end of the mapping, where a downward stack starts.
        unsafe { self.base.cast::<u8>().add(Self::LEN).cast() }
    }
}

impl Drop for CommandStack {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once.
        unsafe { libc::munmap(self.base, Self::LEN) };
    }
}

struct Start {
    prepared: *const Prepared,
    fds: ChildFds,
    exec: ExecPtrs,
}

extern "C" fn command_entry(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the `Start` on the init's stack, which stays put: the init is
    // suspended (CLONE_VFORK) until this child executes or exits.
    unsafe {
        let start = &*arg.cast::<Start>();
        command(&*start.prepared, start.fds, start.exec)
    }
}

/// Start the command in a child that shares this process's memory until it executes
/// (`CLONE_VM | CLONE_VFORK`, as `posix_spawn` does): no copy of the address space is made,
/// and this process waits until the child has executed or failed. Returns its pid or -1.
///
/// # Safety
/// Called in the init only, with `p` fully prepared.
pub(super) unsafe fn start_command(p: &Prepared, f: ChildFds, exec: ExecPtrs) -> libc::pid_t {
    let top = p.command_stack.top();
    let mut start = Start {
        prepared: &raw const *p,
        fds: f,
        exec,
    };
    // SAFETY: the child runs `command_entry` on its own stack and never returns into this
    // frame; it only reads `start` and the prepared data, and this thread is suspended until
    // it executes or exits. It changes signal dispositions in its own copy (no CLONE_SIGHAND).
    unsafe {
        libc::clone(
            command_entry,
            top,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            (&raw mut start).cast(),
        )
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

/// The command's steps, in order, then `execve`.
unsafe fn command(p: &Prepared, f: ChildFds, e: ExecPtrs) -> ! {
    let msgs = f.messages;
    // SAFETY: raw syscalls on prepared data; see module docs.
    unsafe {
        reset_signals();
        session_and_stdio(&f, e.cwd);
        limits(p, msgs);
        or_fail!(
            msgs,
            Step::Stdio,
            libc::syscall(
                libc::SYS_close_range,
                3u32,
                u32::MAX,
                libc::CLOSE_RANGE_CLOEXEC
            )
        );
        no_privileges(p, msgs);
        restrict(p, msgs);
        exec(e, msgs)
    }
}

/// Default dispositions for every signal, and none blocked.
unsafe fn reset_signals() {
    // SAFETY: sigaction and sigprocmask with zeroed structures on the stack.
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
    }
}

/// A session of its own that dies with the init, the terminal, stdio and the directory.
unsafe fn session_and_stdio(f: &ChildFds, cwd: *const libc::c_char) {
    let msgs = f.messages;
    // SAFETY: plain syscalls on fds and a path prepared by the parent.
    unsafe {
        or_fail!(msgs, Step::Setsid, libc::setsid());
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if f.ctty >= 0 {
            // A session leader without a terminal takes the replica as its own: /dev/tty, job
            // control and ^C then work on the pseudo-terminal, never on the caller's.
            or_fail!(
                msgs,
                Step::Terminal,
                libc::ioctl(f.ctty, libc::TIOCSCTTY, 0)
            );
        }
        if f.stdin >= 0 {
            or_fail!(msgs, Step::Stdio, libc::dup2(f.stdin, 0));
        }
        or_fail!(msgs, Step::Stdio, libc::dup2(f.stdout, 1));
        or_fail!(msgs, Step::Stdio, libc::dup2(f.stderr, 2));
        or_fail!(msgs, Step::Chdir, libc::chdir(cwd));
    }
}

/// The OOM score the init gave up, /proc read-only from then on, and the rlimits (never above the hard limit it has).
unsafe fn limits(p: &Prepared, msgs: c_int) {
    // SAFETY: a literal path; rlimit structures on the stack.
    unsafe {
        if p.protect_init {
            or_fail!(
                msgs,
                Step::Cgroup,
                write_file(c"/proc/self/oom_score_adj", b"0")
            );
        }
        if p.proc_read_only {
            super::setup::set_attr(c"/proc", super::mounts::MOUNT_ATTR_RDONLY, 0, msgs);
        }
        for &(res, v) in &p.rlimits {
            let mut cur: libc::rlimit = std::mem::zeroed();
            libc::getrlimit(res, &mut cur);
            let v = v.min(cur.rlim_max);
            let lim = libc::rlimit {
                rlim_cur: v,
                rlim_max: v,
            };
            or_fail!(msgs, Step::Rlimit, libc::setrlimit(res, &lim));
        }
    }
}

/// The bounding set cleared (where it can be), no ambient capabilities, no_new_privs.
unsafe fn no_privileges(p: &Prepared, msgs: c_int) {
    // SAFETY: prctl with integer arguments.
    unsafe {
        if p.drop_bounding {
            for cap in 0..64 {
                if libc::prctl(libc::PR_CAPBSET_DROP, cap) < 0 && errno() != libc::EINVAL {
                    fail(msgs, Step::Capabilities, errno());
                }
            }
        }
        or_fail!(
            msgs,
            Step::Capabilities,
            libc::prctl(
                libc::PR_CAP_AMBIENT,
                libc::PR_CAP_AMBIENT_CLEAR_ALL,
                0,
                0,
                0
            )
        );
        or_fail!(
            msgs,
            Step::Capabilities,
            libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        );
    }
}

/// Landlock (reported as applied), every capability set emptied, then seccomp.
unsafe fn restrict(p: &Prepared, msgs: c_int) {
    // SAFETY: the prepared ruleset fd and BPF program; capset's structures on the stack.
    unsafe {
        if let Some(rs) = &p.ruleset {
            or_fail!(
                msgs,
                Step::Landlock,
                libc::syscall(libc::SYS_landlock_restrict_self, rs.as_raw_fd(), 0u32)
            );
            send(msgs, MessageKind::Landlock, 0, 0);
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
        or_fail!(
            msgs,
            Step::Capabilities,
            libc::syscall(libc::SYS_capset, &raw const hdr, data.as_ptr())
        );
        if let Some(prog) = &p.seccomp
            && seccompiler::apply_filter(prog).is_err()
        {
            fail(msgs, Step::Seccomp, errno());
        }
    }
}

/// Execute the first candidate that exists; else report why and exit 127 (not found) or 126.
unsafe fn exec(e: ExecPtrs, msgs: c_int) -> ! {
    // SAFETY: prepared null-terminated arrays of NUL-terminated candidates, argv and envp.
    unsafe {
        let mut err = libc::ENOENT;
        let mut cand = e.candidates;
        while !(*cand).is_null() {
            libc::execve(*cand, e.argv, e.envp);
            let code = errno();
            if code != libc::ENOENT && code != libc::ENOTDIR {
                err = code;
            }
            cand = cand.add(1);
        }
        send(msgs, MessageKind::ExecFailed, 0, err);
        libc::_exit(if err == libc::ENOENT { 127 } else { 126 })
    }
}
