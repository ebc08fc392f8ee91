//! Apply a [`SandboxPlan`] to a new process tree.
//!
//! Everything that allocates or can fail in complex ways happens in [`Prepared::new`], in the
//! parent: paths become C strings, the Landlock ruleset is built from opened path fds, the
//! seccomp BPF is compiled. Between `clone` and `execve` only raw syscalls run (see
//! [`child`]), so the code is async-signal-safe even when the parent is multi-threaded.
//!
//! The child side is two processes: the sandbox init (`G`), which builds the namespaces and
//! mount layout and then reaps; and the command (`H`), which drops capabilities, restricts
//! itself (Landlock, seccomp, rlimits) and execs.

pub mod child;
mod command;
pub mod landlock;
pub mod mounts;
pub mod pty;
pub mod report;
pub mod seccomp;
mod setup;

use crate::plan::{Rlimit, SandboxPlan};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

pub use report::{Message, MessageKind, Step};

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EnforceError {
    #[error(transparent)]
    Landlock(#[from] landlock::LandlockError),
    #[error(transparent)]
    Seccomp(#[from] seccomp::SeccompError),
    #[error("path contains a NUL byte: {path:?}")]
    Nul { path: PathBuf },
    #[error("more than {max} paths to keep under private tmpfs mounts")]
    TooManyKept { max: usize },
    #[error("cannot create the pids cgroup {path}: {source}")]
    Cgroup {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot map the command's stack: {source}")]
    Stack { source: std::io::Error },
}

pub(crate) fn cstr(p: &Path) -> Result<CString, EnforceError> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| EnforceError::Nul {
        path: p.to_path_buf(),
    })
}

/// A null-terminated array of C strings, owned.
pub struct CStrArray {
    _owned: Vec<CString>,
    ptrs: Vec<*const libc::c_char>,
}

// SAFETY: the pointers point into `_owned`, which moves with the struct and is never mutated.
unsafe impl Send for CStrArray {}
// SAFETY: as above; shared access only reads.
unsafe impl Sync for CStrArray {}

impl CStrArray {
    pub fn new(items: Vec<CString>) -> Self {
        let mut ptrs: Vec<*const libc::c_char> = items.iter().map(|c| c.as_ptr()).collect();
        ptrs.push(std::ptr::null());
        Self {
            _owned: items,
            ptrs,
        }
    }
    pub fn as_ptr(&self) -> *const *const libc::c_char {
        self.ptrs.as_ptr()
    }
}

/// What the command to exec is, resolved in the parent.
pub struct ExecSpec {
    /// Candidate paths tried in order (PATH search done in the parent).
    pub candidates: Vec<CString>,
    pub argv: CStrArray,
    pub envp: CStrArray,
    pub cwd: CString,
}

/// Everything the children need, prepared before `clone`.
pub struct Prepared {
    pub clone_flags: u64,
    pub uid_map: Option<Vec<u8>>,
    pub gid_map: Option<Vec<u8>>,
    pub mount_ops: Vec<mounts::Op>,
    /// Scratch fds for detached mounts, filled in the child.
    pub slots: [libc::c_int; mounts::MAX_SLOTS],
    pub hostname: Option<CString>,
    pub loopback_up: bool,
    pub cgroup_procs: Option<CString>,
    pub cgroup_dir: Option<PathBuf>,
    pub rlimits: Vec<(libc::__rlimit_resource_t, u64)>,
    pub ruleset: Option<std::os::fd::OwnedFd>,
    pub late_rules: Vec<landlock::LateRule>,
    /// The one seccomp program, or none when the plan has no seccomp layer.
    pub seccomp: Option<seccompiler::BpfProgram>,
    /// The stack the command runs on between its clone and `execve`.
    pub command_stack: command::CommandStack,
    pub pid_namespace: bool,
    /// Whether the command may clear its bounding set (sbx holds CAP_SETPCAP, or the command
    /// is inside a user namespace).
    /// Without that privilege there is nothing to drop: no_new_privs stops any gain at exec.
    pub drop_bounding: bool,
    pub exec: ExecSpec,
    pub landlock_skipped: Vec<PathBuf>,
}

fn rlimit_resource(r: Rlimit) -> libc::__rlimit_resource_t {
    match r {
        Rlimit::As => libc::RLIMIT_AS,
        Rlimit::Nproc => libc::RLIMIT_NPROC,
        Rlimit::Fsize => libc::RLIMIT_FSIZE,
        Rlimit::Cpu => libc::RLIMIT_CPU,
        Rlimit::Nofile => libc::RLIMIT_NOFILE,
        Rlimit::Core => libc::RLIMIT_CORE,
    }
}

/// Remove empty `sbx-PID-N` cgroups left by runs whose sbx was killed before it could clean up.
fn remove_stale_cgroups(root: &Path) {
    let Ok(rd) = std::fs::read_dir(root) else {
        return;
    };
    for e in rd.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("sbx-"))
            .and_then(|n| n.split('-').next())
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            // Fails harmlessly while the cgroup still has members.
            let _ = std::fs::remove_dir(e.path());
        }
    }
}

static CGROUP_SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl Prepared {
    /// Prepare `plan` for `exec`. `pids_cgroup` is the pids controller root, when the plan uses one.
    pub fn new(
        plan: &SandboxPlan,
        exec: ExecSpec,
        host: &crate::host::Host,
    ) -> Result<Prepared, EnforceError> {
        let ns = &plan.namespaces;
        let mut flags: u64 = 0;
        let mut set = |on: bool, f: libc::c_int| {
            if on {
                flags |= f as u64;
            }
        };
        set(ns.user, libc::CLONE_NEWUSER);
        set(ns.mount, libc::CLONE_NEWNS);
        set(ns.pid, libc::CLONE_NEWPID);
        set(ns.net, libc::CLONE_NEWNET);
        set(ns.ipc, libc::CLONE_NEWIPC);
        set(ns.uts, libc::CLONE_NEWUTS);
        let (uid_map, gid_map) = if ns.user {
            (
                Some(format!("{0} {0} 1\n", host.euid).into_bytes()),
                Some(format!("{0} {0} 1\n", host.egid).into_bytes()),
            )
        } else {
            (None, None)
        };
        let mount_ops = if ns.mount {
            mounts::compile(&plan.mounts, plan.pid_max)?
        } else {
            Vec::new()
        };
        let (ruleset, late_rules, landlock_skipped) = match &plan.landlock {
            Some(lp) => {
                let built = landlock::build(lp)?;
                (Some(built.ruleset), built.late, built.skipped)
            }
            None => (None, Vec::new(), Vec::new()),
        };
        let seccomp = match &plan.seccomp {
            Some(sp) => Some(seccomp::program_for(sp)?),
            None => None,
        };
        let (cgroup_procs, cgroup_dir) = match (plan.cgroup_pids_max, &host.pids_cgroup) {
            (Some(max), Some(root)) => {
                remove_stale_cgroups(root);
                let seq = CGROUP_SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let dir = root.join(format!("sbx-{}-{seq}", std::process::id()));
                let err = |source| EnforceError::Cgroup {
                    path: dir.clone(),
                    source,
                };
                std::fs::create_dir(&dir).map_err(err)?;
                std::fs::write(dir.join("pids.max"), max.to_string()).map_err(err)?;
                (Some(cstr(&dir.join("cgroup.procs"))?), Some(dir))
            }
            _ => (None, None),
        };
        Ok(Prepared {
            clone_flags: flags,
            uid_map,
            gid_map,
            mount_ops,
            slots: [-1; mounts::MAX_SLOTS],
            hostname: plan.hostname.as_deref().and_then(|h| CString::new(h).ok()),
            loopback_up: ns.net && plan.network == crate::capability::NetworkMode::Loopback,
            cgroup_procs,
            cgroup_dir,
            rlimits: plan
                .rlimits
                .iter()
                .map(|r| (rlimit_resource(r.resource), r.value))
                .collect(),
            ruleset,
            late_rules,
            seccomp,
            command_stack: command::CommandStack::new()
                .map_err(|source| EnforceError::Stack { source })?,
            pid_namespace: ns.pid,
            drop_bounding: host.can_drop_bounding || ns.user,
            exec,
            landlock_skipped,
        })
    }
}

impl Drop for Prepared {
    fn drop(&mut self) {
        if let Some(dir) = &self.cgroup_dir {
            let _ = std::fs::remove_dir(dir);
        }
    }
}
