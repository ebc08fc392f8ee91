//! From a capability set and the host's features to a [`SandboxPlan`]: every Landlock rule,
//! the seccomp policy, namespaces, mounts, rlimits and environment, each with its origin.
//!
//! Pure: no syscalls here except reading directory listings for Landlock's
//! "deny inside allow" expansion, which the caller may precompute.
#![forbid(unsafe_code)]

use crate::capability::{CapabilitySet, NetworkMode, Origin, PathEntry};
use crate::host::{Availability, Host, LANDLOCK_ABI};
use crate::profile::Protection;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Landlock filesystem rights, by name, grouped as sbx grants them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FsRight {
    Execute,
    ReadFile,
    ReadDir,
    WriteFile,
    Truncate,
    MakeAndRemove,
    Refer,
    IoctlDev,
}

pub const READ: &[FsRight] = &[FsRight::ReadFile, FsRight::ReadDir];
pub const WRITE: &[FsRight] = &[
    FsRight::WriteFile,
    FsRight::Truncate,
    FsRight::MakeAndRemove,
    FsRight::Refer,
    FsRight::IoctlDev,
];
pub const EXEC: &[FsRight] = &[FsRight::Execute];

/// One Landlock path rule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LandlockRule {
    pub path: PathBuf,
    pub rights: Vec<FsRight>,
    /// A missing required path is a setup error; a missing optional path is skipped.
    pub required: bool,
    pub origin: Origin,
    /// The path lies on a filesystem the sandbox mounts itself (private /tmp, /proc, /dev):
    /// the rule is added inside the sandbox after the mounts, since Landlock does not see
    /// through a mount to the directory it covers.
    pub after_mounts: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LandlockPlan {
    /// Highest ABI the rights are taken from.
    pub abi: i32,
    pub rules: Vec<LandlockRule>,
    /// Deny all TCP bind and connect (no rules for ports are ever added).
    pub deny_tcp: bool,
    pub scope_signals: bool,
    pub scope_abstract_unix: bool,
}

/// One step of the mount layout built in the sandbox's mount namespace, in order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum MountStep {
    /// Replace `target` by an empty tmpfs, carrying `keep` (which must lie beneath it) over.
    Tmpfs {
        target: PathBuf,
        keep: Vec<PathBuf>,
        origin: Origin,
    },
    /// A fresh procfs for the PID namespace, with /proc/sys read-only.
    Proc,
    /// A minimal /dev: null, zero, full, random, urandom, tty, a private devpts and /dev/shm.
    MinimalDev,
    /// Make `target` read-only (recursively), by bind-mounting it onto itself.
    ReadOnly { target: PathBuf, origin: Origin },
    /// Hide `target`: an empty read-only tmpfs over a directory, /dev/null over a file.
    Hide {
        target: PathBuf,
        is_dir: bool,
        origin: Origin,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Namespaces {
    pub user: bool,
    pub mount: bool,
    pub pid: bool,
    pub net: bool,
    pub ipc: bool,
    pub uts: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SeccompPlan {
    /// Syscalls answered with EPERM.
    pub denied: Vec<String>,
    /// Extra syscalls denied by the profile, with where.
    pub extra: Vec<(String, Origin)>,
    /// `socket(2)` domains allowed; every other domain gets EAFNOSUPPORT.
    pub socket_families: Vec<String>,
    /// clone/unshare flags that create namespaces are refused.
    pub deny_namespace_clone: bool,
    /// clone3 answers ENOSYS so that libc falls back to clone, whose flags are inspectable.
    pub clone3_enosys: bool,
    /// The x32 ABI answers EPERM; 32-bit entry points kill the process.
    pub block_x32_and_i386: bool,
    pub deny_ioctls: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Rlimit {
    As,
    Nproc,
    Fsize,
    Cpu,
    Nofile,
    Core,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RlimitStep {
    pub resource: Rlimit,
    pub value: u64,
    pub origin: Origin,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LayerStatus {
    Enforced,
    Partial,
    NotEnforced,
}

/// One line of the enforcement report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Layer {
    pub name: String,
    pub status: LayerStatus,
    pub detail: String,
}

/// How the tree is made to die with the command.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TreeKill {
    /// The command's init is PID 1 of a private PID namespace; the kernel kills the rest.
    PidNamespace,
    /// A subreaper kills every descendant it collects; a SIGKILL of sbx can leave orphans.
    Subreaper,
}

/// Everything the enforce layer will apply, printable by `sbx explain`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SandboxPlan {
    pub namespaces: Namespaces,
    pub mounts: Vec<MountStep>,
    pub landlock: Option<LandlockPlan>,
    pub seccomp: Option<SeccompPlan>,
    pub rlimits: Vec<RlimitStep>,
    /// pids.max for a cgroup, when RLIMIT_NPROC does not bind (root).
    pub cgroup_pids_max: Option<u64>,
    /// pid_max of the sandbox's PID namespace, when that is how the process limit is kept.
    pub pid_max: Option<u64>,
    pub network: NetworkMode,
    pub tree_kill: TreeKill,
    pub hostname: Option<String>,
    /// Environment: name -> (value or None to copy from the caller, origin).
    pub env_pass: Vec<String>,
    pub env_set: BTreeMap<String, String>,
    pub timeout_ms: Option<u64>,
    pub output_bytes: Option<u64>,
    pub report: Vec<Layer>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlanError {
    #[error(
        "the profile requires {protection} but this host cannot provide it: {reason}. Fix: {fix}"
    )]
    Missing {
        protection: &'static str,
        reason: String,
        fix: String,
    },
}

/// Lists a directory's entries; injected so that the plan stays testable.
pub trait DirLister {
    fn list(&self, dir: &Path) -> Vec<PathBuf>;
    fn is_dir(&self, path: &Path) -> bool;
    fn exists(&self, path: &Path) -> bool;
}

/// The real filesystem. Each path is looked up once per plan: planning asks about the same
/// denied paths several times.
#[derive(Default)]
pub struct RealFs {
    /// `(exists, is a directory following symlinks)` per path asked about.
    seen: std::cell::RefCell<std::collections::HashMap<PathBuf, (bool, bool)>>,
}

impl RealFs {
    fn lookup(&self, path: &Path) -> (bool, bool) {
        if let Some(v) = self.seen.borrow().get(path) {
            return *v;
        }
        let v = match path.symlink_metadata() {
            Ok(m) if m.file_type().is_symlink() => (true, path.is_dir()),
            Ok(m) => (true, m.is_dir()),
            Err(_) => (false, false),
        };
        self.seen.borrow_mut().insert(path.to_path_buf(), v);
        v
    }
}

impl DirLister for RealFs {
    fn list(&self, dir: &Path) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        v.sort();
        v
    }
    fn is_dir(&self, path: &Path) -> bool {
        self.lookup(path).1
    }
    fn exists(&self, path: &Path) -> bool {
        self.lookup(path).0
    }
}

/// The smallest pid_max the kernel accepts (RESERVED_PIDS + 1).
pub const PID_MAX_MIN: u64 = 301;

pub const BASE_DENIED_SYSCALLS: &[&str] = &[
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "setns",
    "unshare",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "acct",
    "quotactl",
    "quotactl_fd",
    "sethostname",
    "setdomainname",
    "iopl",
    "ioperm",
    "lookup_dcookie",
    "name_to_handle_at",
    "open_by_handle_at",
    "syslog",
    "vhangup",
    "nfsservctl",
    "personality",
    "uselib",
    "pidfd_getfd",
    "kcmp",
    "fanotify_init",
    "vmsplice",
];

/// Inputs to [`plan`] besides the capability set.
pub struct PlanInput<'a> {
    pub caps: &'a CapabilitySet,
    pub host: &'a Host,
    pub requires: &'a [(Protection, Origin)],
    pub extra_syscall_origins: &'a [(String, Origin)],
    /// Where each limit was set (`timeout`, `memory`, ...).
    pub limit_origins: &'a BTreeMap<String, Origin>,
    /// The sandbox's temporary directory as the command sees it.
    pub tmp: &'a Path,
}

fn rights_minus(a: &[FsRight], r: &[FsRight]) -> Vec<FsRight> {
    a.iter().copied().filter(|x| !r.contains(x)).collect()
}

/// Grant `rights` on `root`, but not `deny_rights` on the denied trees beneath it: grant the
/// reduced rights on `root` and the full rights on every sibling along the way to each denial.
fn grant_around(
    out: &mut Vec<LandlockRule>,
    root: &PathEntry,
    rights: &[FsRight],
    denials: &[&PathEntry],
    deny_rights: &[FsRight],
    fs: &dyn DirLister,
) {
    let inner: Vec<&PathEntry> = denials
        .iter()
        .copied()
        .filter(|d| d.path != root.path && d.path.starts_with(&root.path) && fs.exists(&d.path))
        .collect();
    if inner.is_empty() {
        out.push(LandlockRule {
            path: root.path.clone(),
            rights: rights.to_vec(),
            required: root.required,
            origin: root.origin.clone(),
            after_mounts: false,
        });
        return;
    }
    let reduced = rights_minus(rights, deny_rights);
    if !reduced.is_empty() {
        out.push(LandlockRule {
            path: root.path.clone(),
            rights: reduced,
            required: root.required,
            origin: root.origin.clone(),
            after_mounts: false,
        });
    }
    let removed: Vec<FsRight> = rights
        .iter()
        .copied()
        .filter(|x| deny_rights.contains(x))
        .collect();
    walk_around(out, &root.path, &removed, &inner, &root.origin, fs);
}

fn walk_around(
    out: &mut Vec<LandlockRule>,
    dir: &Path,
    rights: &[FsRight],
    denials: &[&PathEntry],
    origin: &Origin,
    fs: &dyn DirLister,
) {
    // Children of `dir` that lead towards a denial.
    let mut toward: Vec<PathBuf> = Vec::new();
    for d in denials {
        if let Ok(rest) = d.path.strip_prefix(dir) {
            if let Some(first) = rest.components().next() {
                let child = dir.join(first);
                if !toward.contains(&child) {
                    toward.push(child);
                }
            }
        }
    }
    for child in fs.list(dir) {
        if !toward.contains(&child) {
            out.push(LandlockRule {
                path: child,
                rights: rights.to_vec(),
                required: false,
                origin: Origin {
                    key: format!("{} (around a denial)", origin.key),
                    ..origin.clone()
                },
                after_mounts: false,
            });
        }
    }
    for child in toward {
        if denials.iter().any(|d| d.path == child) {
            continue;
        }
        if fs.is_dir(&child) {
            walk_around(out, &child, rights, denials, origin, fs);
        }
    }
}

fn missing(p: Protection, reason: &str, fix: &str) -> (Protection, String, String) {
    (p, reason.to_string(), fix.to_string())
}

/// Compute the plan. Fails only when a required protection is missing.
pub fn plan(input: &PlanInput<'_>, fs: &dyn DirLister) -> Result<SandboxPlan, PlanError> {
    let caps = input.caps;
    let host = input.host;
    let ns_ok = host.namespaces.ok();
    let use_userns = ns_ok && host.euid != 0;
    let mut report: Vec<Layer> = Vec::new();
    let mut gaps: Vec<(Protection, String, String)> = Vec::new();
    let ns_reason = match &host.namespaces {
        Availability::Available => (String::new(), String::new()),
        Availability::Missing { reason, fix } => (reason.clone(), fix.clone()),
    };

    let namespaces = Namespaces {
        user: use_userns,
        mount: ns_ok,
        pid: ns_ok && caps.isolation.pid,
        net: ns_ok && caps.network != NetworkMode::Host,
        ipc: ns_ok && caps.isolation.ipc,
        uts: ns_ok,
    };
    if !ns_ok {
        for p in [
            Protection::UserNamespace,
            Protection::MountNamespace,
            Protection::PidNamespace,
            Protection::NetworkNamespace,
        ] {
            gaps.push(missing(p, &ns_reason.0, &ns_reason.1));
        }
    } else if !use_userns {
        gaps.push(missing(
            Protection::UserNamespace,
            "not needed as root",
            "none needed",
        ));
    }

    // Mount layout.
    let mut mounts = Vec::new();
    let tmp = input.tmp.to_path_buf();
    if namespaces.mount {
        for d in &caps.fs.deny_read {
            if fs.exists(&d.path) && !d.path.starts_with("/proc") && !d.path.starts_with("/dev") {
                mounts.push(MountStep::Hide {
                    target: d.path.clone(),
                    is_dir: fs.is_dir(&d.path),
                    origin: d.origin.clone(),
                });
            }
        }
        for d in &caps.fs.deny_write {
            if fs.exists(&d.path) && caps.fs.write.iter().any(|w| d.path.starts_with(&w.path)) {
                mounts.push(MountStep::ReadOnly {
                    target: d.path.clone(),
                    origin: d.origin.clone(),
                });
            }
        }
        // The private tmp comes after hides and read-only binds: kept paths carry them along.
        if caps.isolation.private_tmp {
            let mut keep: Vec<PathBuf> = caps
                .fs
                .read
                .iter()
                .chain(&caps.fs.write)
                .chain(&caps.fs.execute)
                .filter(|e| e.path != tmp && e.path.starts_with(&tmp) && fs.exists(&e.path))
                .map(|e| e.path.clone())
                .collect();
            keep.sort();
            keep.dedup();
            // Keep only outermost paths.
            let outer: Vec<PathBuf> = keep
                .iter()
                .filter(|p| !keep.iter().any(|q| q != *p && p.starts_with(q)))
                .cloned()
                .collect();
            mounts.push(MountStep::Tmpfs {
                target: tmp.clone(),
                keep: outer,
                origin: Origin::builtin("isolation.private_tmp"),
            });
        }
        if namespaces.pid {
            mounts.push(MountStep::Proc);
        }
        if caps.isolation.minimal_dev {
            mounts.push(MountStep::MinimalDev);
        }
    }

    // Landlock.
    let landlock = if host.landlock.ok() {
        let abi = host.landlock_abi.unwrap_or(0).min(LANDLOCK_ABI);
        let mut rules = Vec::new();
        // Secrets hidden by a mount need no Landlock rules around them; the others (and all of
        // them when there is no mount namespace) are kept out by granting around them.
        let hidden: Vec<&PathBuf> = mounts
            .iter()
            .filter_map(|m| match m {
                MountStep::Hide { target, .. } => Some(target),
                MountStep::Tmpfs { .. }
                | MountStep::Proc
                | MountStep::MinimalDev
                | MountStep::ReadOnly { .. } => None,
            })
            .collect();
        let deny_r: Vec<&PathEntry> = caps
            .fs
            .deny_read
            .iter()
            .filter(|d| !hidden.contains(&&d.path))
            .collect();
        // With a mount namespace, read-only mounts keep deny_write; without one, go around.
        let deny_w: Vec<&PathEntry> = if namespaces.mount {
            Vec::new()
        } else {
            caps.fs.deny_write.iter().collect()
        };
        let file_read_rights = [FsRight::ReadFile, FsRight::Execute];
        for e in &caps.fs.read {
            grant_around(&mut rules, e, READ, &deny_r, &file_read_rights, fs);
        }
        for e in &caps.fs.execute {
            grant_around(&mut rules, e, EXEC, &deny_r, &file_read_rights, fs);
        }
        for e in &caps.fs.write {
            let mut denials = deny_w.clone();
            denials.extend(deny_r.iter().copied());
            grant_around(&mut rules, e, WRITE, &denials, WRITE, fs);
        }
        // Devices: the whole minimal /dev, or the few harmless host devices.
        let dev_paths: &[&str] = if namespaces.mount && caps.isolation.minimal_dev {
            &["/dev"]
        } else {
            &[
                "/dev/null",
                "/dev/zero",
                "/dev/full",
                "/dev/random",
                "/dev/urandom",
                "/dev/tty",
                "/dev/ptmx",
                "/dev/pts",
                "/dev/shm",
            ]
        };
        for p in dev_paths {
            let mut rights = READ.to_vec();
            rights.extend_from_slice(WRITE);
            rules.push(LandlockRule {
                path: PathBuf::from(p),
                rights,
                required: false,
                origin: Origin::builtin("devices"),
                after_mounts: false,
            });
        }
        if namespaces.pid {
            rules.push(LandlockRule {
                path: PathBuf::from("/proc"),
                rights: READ.to_vec(),
                required: false,
                origin: Origin::builtin("proc"),
                after_mounts: false,
            });
        } else {
            rules.push(LandlockRule {
                path: PathBuf::from("/proc/self"),
                rights: READ.to_vec(),
                required: false,
                origin: Origin::builtin("proc"),
                after_mounts: false,
            });
        }
        let mut mounted: Vec<PathBuf> = Vec::new();
        for m in &mounts {
            match m {
                MountStep::Tmpfs { target, .. } => mounted.push(target.clone()),
                MountStep::Proc => mounted.push(PathBuf::from("/proc")),
                MountStep::MinimalDev => mounted.push(PathBuf::from("/dev")),
                MountStep::ReadOnly { .. } | MountStep::Hide { .. } => {}
            }
        }
        for r in &mut rules {
            r.after_mounts = mounted.iter().any(|m| r.path.starts_with(m));
        }
        let net_ok = abi >= 4;
        let scope_ok = abi >= 6;
        let deny_tcp = net_ok
            && (caps.network == NetworkMode::None
                || (caps.network == NetworkMode::Loopback && !namespaces.net));
        if !net_ok {
            gaps.push(missing(
                Protection::LandlockNetwork,
                &format!("Landlock ABI {abi} lacks TCP rules (needs 4)"),
                "upgrade to Linux 6.7 or newer",
            ));
        }
        if !scope_ok {
            gaps.push(missing(
                Protection::LandlockScope,
                &format!("Landlock ABI {abi} lacks scopes (needs 6)"),
                "upgrade to Linux 6.12 or newer",
            ));
        }
        if !deny_w.is_empty() {
            report.push(Layer {
                name: "deny-write".into(),
                status: LayerStatus::Partial,
                detail: "no mount namespace: read-only paths inside writable trees are kept by Landlock rules around them, so their parent directories (e.g. the workspace root) accept no new entries".into(),
            });
        }
        let n_rules = rules.len();
        report.push(Layer {
            name: "landlock".into(),
            status: if abi >= LANDLOCK_ABI {
                LayerStatus::Enforced
            } else {
                LayerStatus::Partial
            },
            detail: format!(
                "ABI {abi} (written for {LANDLOCK_ABI}); {n_rules} path rules; tcp {}; scopes {}",
                if deny_tcp { "denied" } else { "unrestricted" },
                if scope_ok {
                    "signal+abstract-unix"
                } else {
                    "unavailable"
                }
            ),
        });
        Some(LandlockPlan {
            abi,
            rules,
            deny_tcp,
            scope_signals: scope_ok && caps.isolation.scope_signals,
            scope_abstract_unix: scope_ok && caps.isolation.scope_abstract_unix,
        })
    } else {
        if let Availability::Missing { reason, fix } = &host.landlock {
            for p in [
                Protection::Landlock,
                Protection::LandlockNetwork,
                Protection::LandlockScope,
            ] {
                gaps.push(missing(p, reason, fix));
            }
            report.push(Layer {
                name: "landlock".into(),
                status: LayerStatus::NotEnforced,
                detail: reason.clone(),
            });
        }
        None
    };

    // seccomp.
    let seccomp = if host.seccomp.ok() {
        let families: Vec<String> = match (caps.network, namespaces.net) {
            (NetworkMode::None, _) | (NetworkMode::Loopback, false) => vec!["AF_UNIX".into()],
            (NetworkMode::Loopback, true) | (NetworkMode::Host, _) => {
                vec![
                    "AF_UNIX".into(),
                    "AF_INET".into(),
                    "AF_INET6".into(),
                    "AF_NETLINK".into(),
                ]
            }
        };
        let mut denied: Vec<String> = BASE_DENIED_SYSCALLS.iter().map(|s| s.to_string()).collect();
        let extra: Vec<(String, Origin)> = input.extra_syscall_origins.to_vec();
        for (s, _) in &extra {
            if !denied.contains(s) {
                denied.push(s.clone());
            }
        }
        report.push(Layer {
            name: "seccomp".into(),
            status: LayerStatus::Enforced,
            detail: format!("{} syscalls denied; sockets: {}; clone3 ENOSYS; x32 and 32-bit entry blocked; TIOCSTI/TIOCLINUX denied", denied.len(), families.join(",")),
        });
        Some(SeccompPlan {
            denied,
            extra,
            socket_families: families,
            deny_namespace_clone: true,
            clone3_enosys: true,
            block_x32_and_i386: true,
            deny_ioctls: vec!["TIOCSTI".into(), "TIOCLINUX".into()],
        })
    } else {
        if let Availability::Missing { reason, fix } = &host.seccomp {
            gaps.push(missing(Protection::Seccomp, reason, fix));
            report.push(Layer {
                name: "seccomp".into(),
                status: LayerStatus::NotEnforced,
                detail: reason.clone(),
            });
        }
        None
    };

    // Namespaces in the report.
    let ns_layer = |name: &str, on: bool, why_off: &str| Layer {
        name: name.into(),
        status: if on {
            LayerStatus::Enforced
        } else {
            LayerStatus::NotEnforced
        },
        detail: if on { "private".into() } else { why_off.into() },
    };
    report.push(ns_layer("mount-namespace", namespaces.mount, &ns_reason.0));
    report.push(ns_layer(
        "pid-namespace",
        namespaces.pid,
        if ns_ok {
            "disabled by the profile"
        } else {
            &ns_reason.0
        },
    ));
    let net_detail = match (caps.network, namespaces.net) {
        (NetworkMode::Host, _) => "host network (profile)".to_string(),
        (NetworkMode::None, true) => "empty network namespace".into(),
        (NetworkMode::Loopback, true) => "private namespace with lo up".into(),
        (NetworkMode::None, false) => format!(
            "no namespace ({}); TCP denied by Landlock, inet sockets by seccomp",
            ns_reason.0
        ),
        (NetworkMode::Loopback, false) => format!(
            "no namespace ({}); loopback cannot be isolated, so TCP is denied by Landlock and inet sockets by seccomp",
            ns_reason.0
        ),
    };
    report.push(Layer {
        name: "network".into(),
        status: if caps.network == NetworkMode::Host || namespaces.net {
            LayerStatus::Enforced
        } else {
            LayerStatus::Partial
        },
        detail: net_detail,
    });

    // Limits.
    let l = &caps.limits;
    let mut rlimits = Vec::new();
    let lim_origin = |k: &str| {
        input
            .limit_origins
            .get(k)
            .cloned()
            .unwrap_or_else(|| Origin::builtin(&format!("limits.{k}")))
    };
    let mut push = |r: Rlimit, v: Option<u64>, k: &str| {
        if let Some(value) = v {
            rlimits.push(RlimitStep {
                resource: r,
                value,
                origin: lim_origin(k),
            });
        }
    };
    push(Rlimit::As, l.memory_bytes, "memory");
    push(Rlimit::Nproc, l.processes, "processes");
    push(Rlimit::Fsize, l.file_size_bytes, "file_size");
    push(Rlimit::Cpu, l.cpu_seconds, "cpu_time");
    push(Rlimit::Nofile, l.open_files, "open_files");
    rlimits.push(RlimitStep {
        resource: Rlimit::Core,
        value: 0,
        origin: Origin::builtin("no core dumps"),
    });
    // RLIMIT_NPROC does not bind uid 0. For root, a PID namespace's own pid_max (Linux 6.14+)
    // caps how many processes can exist in it, at no cost; it cannot go below 301, so smaller
    // limits use a pids cgroup, whose attach is slow on cgroup v1.
    let pid_max = if host.euid == 0 && namespaces.pid && host.pid_max_per_namespace {
        l.processes.filter(|n| *n >= PID_MAX_MIN)
    } else {
        None
    };
    let cgroup_pids_max = if host.euid == 0 && pid_max.is_none() {
        l.processes.filter(|_| host.pids_cgroup.is_some())
    } else {
        None
    };
    let nproc_binds = host.euid != 0 || cgroup_pids_max.is_some() || pid_max.is_some();
    if l.processes.is_some() && !nproc_binds {
        gaps.push(missing(
            Protection::ProcessLimit,
            "RLIMIT_NPROC does not bind root and no pids cgroup is writable",
            "mount the pids cgroup controller",
        ));
    }
    report.push(Layer {
        name: "limits".into(),
        status: if nproc_binds || l.processes.is_none() {
            LayerStatus::Enforced
        } else {
            LayerStatus::Partial
        },
        detail: format!(
            "rlimits {}; processes via {}",
            rlimits
                .iter()
                .map(|r| format!("{:?}={}", r.resource, r.value))
                .collect::<Vec<_>>()
                .join(" "),
            if pid_max.is_some() {
                "the PID namespace's pid_max"
            } else if cgroup_pids_max.is_some() {
                "pids cgroup"
            } else if host.euid != 0 {
                "RLIMIT_NPROC"
            } else {
                "nothing (root)"
            }
        ),
    });
    let tree_kill = if namespaces.pid {
        TreeKill::PidNamespace
    } else {
        TreeKill::Subreaper
    };
    report.push(Layer {
        name: "process-tree".into(),
        status: if namespaces.pid {
            LayerStatus::Enforced
        } else {
            LayerStatus::Partial
        },
        detail: match tree_kill {
            TreeKill::PidNamespace => "PID namespace: the tree dies with its init".into(),
            TreeKill::Subreaper => {
                "subreaper kills collected descendants; a SIGKILL of sbx may leave orphans".into()
            }
        },
    });
    report.push(Layer {
        name: "capabilities".into(),
        status: LayerStatus::Enforced,
        detail: if host.euid == 0 || namespaces.user {
            "all sets empty, bounding set cleared, no_new_privs".into()
        } else {
            "all sets empty, no_new_privs (the bounding set cannot be cleared without privilege; nothing can be gained at exec)".into()
        },
    });

    // Required protections.
    for (p, _) in input.requires {
        if let Some((_, reason, fix)) = gaps.iter().find(|(g, _, _)| g == p) {
            if *p == Protection::UserNamespace && host.euid == 0 && ns_ok {
                continue;
            }
            return Err(PlanError::Missing {
                protection: p.name(),
                reason: reason.clone(),
                fix: fix.clone(),
            });
        }
    }

    let mut env_set = caps.env.set.clone();
    env_set
        .entry("TMPDIR".into())
        .or_insert_with(|| tmp.display().to_string());
    Ok(SandboxPlan {
        namespaces: namespaces.clone(),
        mounts,
        landlock,
        seccomp,
        rlimits,
        cgroup_pids_max,
        pid_max,
        network: caps.network,
        tree_kill,
        hostname: namespaces.uts.then(|| "sbx".to_string()),
        env_pass: caps.env.pass.clone(),
        env_set,
        timeout_ms: l.timeout_ms,
        output_bytes: l.output_bytes,
        report,
    })
}
