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

pub mod cgroup;
pub(crate) mod child;
mod command;
pub mod handover;
pub mod landlock;
pub mod messages;
pub mod mounts;
pub mod pty;
pub mod seccomp;
mod setup;

pub use handover::{CommandSlot, ExecPtrs};

use crate::plan::{Rlimit, SandboxPlan};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Why the enforcement of a plan could not be prepared in the parent, before the fork
/// (re-exported as [`exec::EnforceError`](crate::exec::EnforceError)).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EnforceError {
    /// The Landlock ruleset could not be built.
    #[error(transparent)]
    Landlock(#[from] landlock::LandlockError),
    /// The seccomp program could not be compiled.
    #[error(transparent)]
    Seccomp(#[from] seccomp::SeccompError),
    /// A path or argument cannot be passed to the kernel as a C string.
    #[error("path contains a NUL byte: {path:?}")]
    Nul {
        /// The path or argument, as given.
        path: PathBuf,
    },
    /// More paths are kept beneath private tmpfs mounts than the prepared slots hold.
    #[error("more than {max} paths to keep under private tmpfs mounts")]
    TooManyKept {
        /// How many the slots hold.
        max: usize,
    },
    /// The run's cgroup could not be made or configured.
    #[error("cannot set up the run's cgroup at {path}: {source}")]
    Cgroup {
        /// The cgroup's directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The stack the command's process starts on could not be mapped.
    #[error("cannot map the command's stack: {source}")]
    Stack {
        /// Why.
        source: std::io::Error,
    },
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
    pub fn items(&self) -> &[CString] {
        &self._owned
    }
}

/// What the command to exec is, resolved in the parent.
pub struct ExecSpec {
    /// Candidate paths tried in order (PATH search done in the parent).
    pub candidates: CStrArray,
    pub argv: CStrArray,
    pub envp: CStrArray,
    pub cwd: CString,
}

impl ExecSpec {
    /// The pointers the init and the command use.
    pub fn ptrs(&self) -> ExecPtrs {
        ExecPtrs {
            cwd: self.cwd.as_ptr(),
            candidates: self.candidates.as_ptr(),
            argv: self.argv.as_ptr(),
            envp: self.envp.as_ptr(),
        }
    }
}

/// Everything the children need, prepared before `clone`.
pub struct Prepared {
    pub clone_flags: u64,
    pub uid_map: Option<Vec<u8>>,
    pub gid_map: Option<Vec<u8>>,
    pub mount_ops: Vec<mounts::Op>,
    /// Scratch fds for detached mounts, filled in the child.
    pub slots: [libc::c_int; mounts::MAX_SLOTS],
    pub loopback_up: bool,
    /// The port of the proxy's listening socket on the sandbox's loopback, or 0 for none.
    pub proxy_port: u16,
    /// The run's cgroups; removed when this drops.
    pub cgroups: cgroup::RunCgroups,
    /// The init shields itself from the OOM killer (with CAP_SYS_RESOURCE), so that a tree over
    /// its memory limit loses the process that grew, not its init; the command resets its own
    /// score.
    pub protect_init: bool,
    /// The sandbox's own /proc turns read-only once the command has set its OOM score: root's
    /// chmod on a kernel-wide entry (`/proc/version`) would change it for the whole host.
    pub proc_read_only: bool,
    pub rlimits: Vec<(libc::__rlimit_resource_t, u64)>,
    /// The private tmpfs mounts with a size, whose filling up the init reports at the end.
    pub sized_tmpfs: Vec<CString>,
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
    /// For an init made ahead of its call: where it receives the command
    /// ([`ChildFds::command`](messages::ChildFds)) instead of running `exec`.
    pub command_slot: Option<CommandSlot>,
    pub landlock_skipped: Vec<PathBuf>,
}

fn rlimit_resource(r: Rlimit) -> libc::__rlimit_resource_t {
    match r {
        Rlimit::Data => libc::RLIMIT_DATA,
        Rlimit::Nproc => libc::RLIMIT_NPROC,
        Rlimit::Fsize => libc::RLIMIT_FSIZE,
        Rlimit::Cpu => libc::RLIMIT_CPU,
        Rlimit::Nofile => libc::RLIMIT_NOFILE,
        Rlimit::Core => libc::RLIMIT_CORE,
    }
}

/// The `CLONE_NEW*` flags of the plan's namespaces.
fn clone_flags(ns: &crate::plan::Namespaces) -> u64 {
    [
        (ns.user, libc::CLONE_NEWUSER),
        (ns.mount, libc::CLONE_NEWNS),
        (ns.pid, libc::CLONE_NEWPID),
        (ns.net, libc::CLONE_NEWNET),
        (ns.ipc, libc::CLONE_NEWIPC),
        (ns.uts, libc::CLONE_NEWUTS),
    ]
    .iter()
    .filter(|(on, _)| *on)
    .fold(0, |flags, (_, f)| flags | *f as u64)
}

/// The uid and gid maps of a user namespace: sbx's own ids, and nothing else.
fn id_maps(user_ns: bool, host: &crate::host::Host) -> (Option<Vec<u8>>, Option<Vec<u8>>) {
    if user_ns {
        (
            Some(format!("{0} {0} 1\n", host.euid).into_bytes()),
            Some(format!("{0} {0} 1\n", host.egid).into_bytes()),
        )
    } else {
        (None, None)
    }
}

/// The Landlock ruleset, the rules added after the mounts, and the optional paths skipped.
type LandlockParts = (
    Option<std::os::fd::OwnedFd>,
    Vec<landlock::LateRule>,
    Vec<PathBuf>,
);

fn landlock_parts(plan: &SandboxPlan) -> Result<LandlockParts, EnforceError> {
    Ok(match &plan.landlock {
        Some(lp) => {
            let built = landlock::build(lp)?;
            (Some(built.ruleset), built.late, built.skipped)
        }
        None => (None, Vec::new(), Vec::new()),
    })
}

/// The sized private tmpfs mounts: the private `/tmp`, and `/dev` (with `/dev/shm`).
fn sized_tmpfs(plan: &SandboxPlan) -> Vec<CString> {
    if plan.tmp_size.is_none() || !plan.namespaces.mount {
        return Vec::new();
    }
    let mut out = Vec::new();
    for m in &plan.mounts {
        match m {
            crate::plan::MountStep::Tmpfs { target, .. } => out.extend(cstr(target).ok()),
            crate::plan::MountStep::MinimalDev => out.push(c"/dev/shm".to_owned()),
            _ => {}
        }
    }
    out
}

/// The port of the proxy's listener on the namespace's loopback, or 0.
fn proxy_port(plan: &SandboxPlan) -> u16 {
    match plan.proxy.as_ref().map(|p| &p.bridge) {
        Some(crate::plan::ProxyBridge::Namespace { port }) if plan.namespaces.net => *port,
        _ => 0,
    }
}

/// Whether the init shields itself from the OOM killer: only where a cgroup bounds memory,
/// and only with CAP_SYS_RESOURCE.
fn protect_init(cgroups: &cgroup::RunCgroups) -> bool {
    cgroups.limits_memory()
        && caps::has_cap(
            None,
            caps::CapSet::Effective,
            caps::Capability::CAP_SYS_RESOURCE,
        )
        .unwrap_or(false)
}

impl Prepared {
    /// Prepare `plan` for `exec`, making the run's cgroups.
    pub fn new(
        plan: &SandboxPlan,
        exec: ExecSpec,
        host: &crate::host::Host,
    ) -> Result<Prepared, EnforceError> {
        let ns = &plan.namespaces;
        let (uid_map, gid_map) = id_maps(ns.user, host);
        let mount_ops = if ns.mount {
            mounts::compile(&plan.mounts, plan.pid_max, plan.tmp_size)?
        } else {
            Vec::new()
        };
        let (ruleset, late_rules, landlock_skipped) = landlock_parts(plan)?;
        let seccomp = match &plan.seccomp {
            Some(sp) => Some(seccomp::program_for(sp)?),
            None => None,
        };
        let cgroups = cgroup::RunCgroups::create(&plan.cgroups)?;
        let loopback = matches!(
            plan.network,
            crate::capability::NetworkMode::Loopback | crate::capability::NetworkMode::Proxy
        );
        Ok(Prepared {
            clone_flags: clone_flags(ns),
            uid_map,
            gid_map,
            mount_ops,
            slots: [-1; mounts::MAX_SLOTS],
            loopback_up: ns.net && loopback,
            proxy_port: proxy_port(plan),
            protect_init: protect_init(&cgroups),
            proc_read_only: plan
                .mounts
                .iter()
                .any(|m| matches!(m, crate::plan::MountStep::Proc)),
            cgroups,
            sized_tmpfs: sized_tmpfs(plan),
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
            command_slot: None,
            landlock_skipped,
        })
    }
}
