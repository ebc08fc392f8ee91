//! The protections a profile can require, by name, and a requirement with where it was made.
#![forbid(unsafe_code)]

use super::Origin;
use serde::{Deserialize, Serialize};

/// The protections a profile can demand; a missing one is a setup error, not a warning.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Protection {
    /// Landlock file-system rules.
    Landlock,
    /// Landlock TCP rules (ABI 4).
    LandlockNetwork,
    /// Landlock scopes for signals and abstract sockets (ABI 6).
    LandlockScope,
    /// The seccomp filter.
    Seccomp,
    /// A user namespace.
    UserNamespace,
    /// A mount namespace.
    MountNamespace,
    /// A PID namespace.
    PidNamespace,
    /// A network namespace.
    NetworkNamespace,
    /// Limits on the tree's processes.
    ProcessLimit,
    /// Memory and processes bounded for the whole tree by a cgroup, not per process.
    TreeLimits,
}

impl Protection {
    /// Every protection.
    pub const ALL: &[Protection] = &[
        Protection::Landlock,
        Protection::LandlockNetwork,
        Protection::LandlockScope,
        Protection::Seccomp,
        Protection::UserNamespace,
        Protection::MountNamespace,
        Protection::PidNamespace,
        Protection::NetworkNamespace,
        Protection::ProcessLimit,
        Protection::TreeLimits,
    ];

    /// The name a profile writes in `requires`.
    pub fn name(self) -> &'static str {
        match self {
            Protection::Landlock => "landlock",
            Protection::LandlockNetwork => "landlock-network",
            Protection::LandlockScope => "landlock-scope",
            Protection::Seccomp => "seccomp",
            Protection::UserNamespace => "user-namespace",
            Protection::MountNamespace => "mount-namespace",
            Protection::PidNamespace => "pid-namespace",
            Protection::NetworkNamespace => "network-namespace",
            Protection::ProcessLimit => "process-limit",
            Protection::TreeLimits => "tree-limits",
        }
    }
}

/// A protection a run refuses to go without: planning fails when the host cannot give it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Requirement {
    /// The protection required.
    pub protection: Protection,
    /// Where it was asked for (`requires` in a profile).
    pub origin: Origin,
}

/// The requirements of both: each protection once, `a`'s origin first.
pub(super) fn union(a: &[Requirement], b: &[Requirement]) -> Vec<Requirement> {
    let mut out = a.to_vec();
    for r in b {
        if !out.iter().any(|o| o.protection == r.protection) {
            out.push(r.clone());
        }
    }
    out
}

/// Whether every protection `theirs` requires, `mine` requires too.
pub(super) fn keeps_all(mine: &[Requirement], theirs: &[Requirement]) -> bool {
    theirs
        .iter()
        .all(|t| mine.iter().any(|m| m.protection == t.protection))
}
