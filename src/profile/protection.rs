//! The protections a profile can require, by name.
#![forbid(unsafe_code)]

use serde::Deserialize;

/// The protections a profile can demand; a missing one is a setup error, not a warning.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, serde::Serialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Protection {
    Landlock,
    LandlockNetwork,
    LandlockScope,
    Seccomp,
    UserNamespace,
    MountNamespace,
    PidNamespace,
    NetworkNamespace,
    ProcessLimit,
    /// Memory and processes bounded for the whole tree by a cgroup, not per process.
    TreeLimits,
}

impl Protection {
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
