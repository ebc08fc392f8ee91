//! The protections a profile can require, by name.
#![forbid(unsafe_code)]

use serde::Deserialize;

/// The protections a profile can demand; a missing one is a setup error, not a warning.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, serde::Serialize,
)]
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
