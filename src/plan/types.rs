//! The plan as a whole: the [`SandboxPlan`] the enforce layer applies, its namespaces, the
//! enforcement report's lines, and the error a missing required protection gives.
#![forbid(unsafe_code)]

use super::{CgroupStep, LandlockPlan, MountStep, RlimitStep, SeccompPlan};
use crate::capability::{EnvPolicy, NetworkMode};
use serde::Serialize;

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
    /// The run's cgroups, which bound the whole tree's memory and processes.
    pub cgroups: Vec<CgroupStep>,
    /// pid_max of the sandbox's PID namespace, when that is how the process limit is kept.
    pub pid_max: Option<u64>,
    /// Size of each private tmpfs the command can write (`/tmp`, and `/dev` with `/dev/shm`).
    pub tmp_size: Option<u64>,
    pub network: NetworkMode,
    /// The proxy of `proxy` mode: where the command reaches it, and its rules.
    pub proxy: Option<ProxyPlan>,
    pub tree_kill: TreeKill,
    pub hostname: Option<String>,
    /// Which of the caller's variables the command gets, and the fixed values (`TMPDIR` among
    /// them).
    pub env: EnvPolicy,
    pub timeout_ms: Option<u64>,
    pub output_bytes: Option<u64>,
    pub report: Vec<Layer>,
}

/// The port the proxy listens on inside the sandbox's network namespace.
pub const PROXY_PORT: u16 = 3128;

/// Where the command reaches the proxy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProxyBridge {
    /// A listening socket on the namespace's own loopback, opened by the sandbox's init and
    /// served by sbx from outside.
    Namespace { port: u16 },
    /// No network namespace: a port on the host's loopback, chosen at launch; Landlock lets
    /// the command connect to it and to no other TCP port.
    HostLoopback,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProxyPlan {
    pub bridge: ProxyBridge,
    pub rules: crate::proxy::NetRules,
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
