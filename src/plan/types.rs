//! The plan as a whole: the [`SandboxPlan`] the enforce layer applies, its namespaces, the
//! enforcement report's lines, and the error a missing required protection gives.
#![forbid(unsafe_code)]

use super::{CgroupStep, LandlockPlan, MountStep, RlimitStep, SeccompPlan};
use crate::capability::{EnvFilter, NetworkMode, Origin};
use serde::Serialize;
use std::path::PathBuf;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
/// Which namespaces the command gets.
pub struct Namespaces {
    /// A user namespace (when sbx is not root).
    pub user: bool,
    /// A mount namespace.
    pub mount: bool,
    /// A PID namespace.
    pub pid: bool,
    /// A network namespace.
    pub net: bool,
    /// An IPC namespace.
    pub ipc: bool,
    /// A UTS namespace: it starts with the host's name, which the host's `/etc/hosts` resolves,
    /// and no change to it reaches the host.
    pub uts: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
/// How far a layer is enforced on this host.
pub enum LayerStatus {
    /// Fully.
    Enforced,
    /// In part; the detail says what is missing.
    Partial,
    /// Not at all; the detail says why.
    NotEnforced,
}

/// One line of the enforcement report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Layer {
    /// The layer (`landlock`, `seccomp`, `pid-namespace`, ...).
    pub name: String,
    /// How far it is enforced.
    pub status: LayerStatus,
    /// What is enforced, or why not.
    pub detail: String,
}

/// How the tree is made to die with the command.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TreeKill {
    /// The command's init is PID 1 of a private PID namespace; the kernel kills the rest.
    PidNamespace,
    /// A subreaper kills every descendant it collects; a SIGKILL of sbx can leave orphans.
    Subreaper,
}

/// Everything the enforce layer will apply, printable by `sbx explain`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct SandboxPlan {
    /// The namespaces to create.
    pub namespaces: Namespaces,
    /// The mount layout, in order.
    pub mounts: Vec<MountStep>,
    /// The Landlock ruleset, when Landlock is there.
    pub landlock: Option<LandlockPlan>,
    /// The seccomp filter, when seccomp is there.
    pub seccomp: Option<SeccompPlan>,
    /// Resource limits per process.
    pub rlimits: Vec<RlimitStep>,
    /// The run's cgroups, which bound the whole tree's memory and processes.
    pub cgroups: Vec<CgroupStep>,
    /// pid_max of the sandbox's PID namespace, when that is how the process limit is kept.
    pub pid_max: Option<u64>,
    /// Size of each private tmpfs the command can write (`/tmp`, and `/dev` with `/dev/shm`).
    pub tmp_size: Option<u64>,
    /// How far the network reaches.
    pub network: NetworkMode,
    /// The proxy of `proxy` mode: where the command reaches it, and its rules.
    pub proxy: Option<ProxyPlan>,
    /// How the tree dies with the command.
    pub tree_kill: TreeKill,
    /// Which of the caller's variables the command gets, and the fixed values (`TMPDIR` among
    /// them).
    pub env: EnvFilter,
    /// The wall-clock timeout.
    pub timeout_ms: Option<u64>,
    /// Bytes per output stream before it is cut.
    pub output_bytes: Option<u64>,
    /// What each layer enforces here.
    pub report: Vec<Layer>,
}

/// The port the proxy listens on inside the sandbox's network namespace.
pub const PROXY_PORT: u16 = 3128;

/// Where the command reaches the proxy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProxyBridge {
    /// A listening socket on the namespace's own loopback, opened by the sandbox's init and
    /// served by sbx from outside.
    Namespace {
        /// The port on the namespace's loopback the proxy variables name.
        port: u16,
    },
    /// No network namespace: a port on the host's loopback, chosen at launch; Landlock lets
    /// the command connect to it and to no other TCP port.
    HostLoopback,
}

/// The proxy of a `proxy` profile: how the command reaches it and what it lets through.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ProxyPlan {
    /// Where the command reaches the proxy.
    pub bridge: ProxyBridge,
    /// The names, ranges and limits the proxy decides by.
    pub rules: crate::capability::NetRules,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
/// Why no plan could be made.
pub enum PlanError {
    #[error(
        "the profile requires {protection} but this host cannot provide it: {reason}. Fix: {fix}"
    )]
    /// The profile requires a protection this host cannot give.
    Missing {
        /// The protection.
        protection: &'static str,
        /// Why the host lacks it.
        reason: String,
        /// How to give it.
        fix: String,
    },
    /// A denied path's symbolic links cannot be followed, so what it names cannot be hidden.
    #[error("cannot hide {} ({origin}): {source}", path.display())]
    Link {
        /// The denied path.
        path: PathBuf,
        /// The profile line it comes from.
        origin: Origin,
        /// Why the links cannot be followed.
        #[source]
        source: crate::links::LinkError,
    },
    /// A denied path is a link to a tree that holds what the profile grants: hiding the tree
    /// would take the grant away with it.
    #[error(
        "cannot hide {} ({}): it leads through a symbolic link to {}, which holds {} that the profile grants ({}); hiding it would hide that too. Point the link at the secret's own directory or file",
        .0.path.display(), .0.origin, .0.real.display(), .0.granted.display(), .0.granted_by
    )]
    HoldsGrant(Box<HeldGrant>),
    /// A writable tree holding protected paths is on a file system that finds names under
    /// another case while the kernel does not fold them: the read-only mounts and the check
    /// after the run hold only the exact names.
    #[error(
        "{} is on a file system ({}) that finds a name under another case while the kernel does not fold it{}. A read-only mount holds only the name it is on, so the profile's read-only paths there could be written under another case (.GIT/CONFIG for .git/config), and names made during the run (.ENVRC, .GITHUB) would escape the check after it. Fix: work in a directory on a case-sensitive file system, or mount the share so that the kernel folds names (cifs: the `nocase` option); or accept the gap knowingly with `case_folding = \"accept\"` under `[filesystem]` in a profile that extends this one",
        .0.root.display(), .0.fs, .0.example()
    )]
    CaseFolded(Box<super::names::CaseFolded>),
}

/// A denied path whose links lead to a tree holding a grant.
#[derive(Debug, PartialEq, Eq)]
pub struct HeldGrant {
    /// The denied path.
    pub path: PathBuf,
    /// Where its links lead.
    pub real: PathBuf,
    /// The granted tree inside it.
    pub granted: PathBuf,
    /// The profile line it comes from.
    pub origin: Origin,
    /// The profile line of the grant.
    pub granted_by: Origin,
}
