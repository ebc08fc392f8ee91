//! The TOML profile format: parsing, `extends`, variables and validation.
//!
//! A profile is data. [`Profile::resolve`] turns it into a
//! [`CapabilitySet`](crate::CapabilitySet) with absolute paths; nothing here touches the kernel.
#![forbid(unsafe_code)]

mod error;
mod files;
mod limits;
mod load;
mod network;
mod raw;
mod resolve;

pub use crate::capability::Protection;
pub use error::ProfileError;
pub use files::{FileKind, Files, RealFiles};
pub use load::{BUILTIN, BUILTIN_NAMES, BUILTIN_POLICIES};
pub use resolve::{Vars, normalize};
pub(crate) use resolve::{compiled, expand_glob};

use crate::capability::{
    DeniedSyscall, EnvFilter, Isolation, NetworkMode, Origin, ProtectedChange, Requirement,
};
use limits::{LimitKey, LimitValue};
use std::collections::BTreeMap;

/// A profile's path as written: its `?` or `+` prefix kept, variables not yet substituted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfilePath {
    /// The pattern as written, with its `?` or `+` prefix.
    pub pattern: String,
    /// Where it was written.
    pub origin: Origin,
}

/// A parsed profile with `extends` applied; paths still hold `{workspace}`, `{home}`, `{tmp}`.
#[derive(Clone, Debug)]
pub struct Profile {
    /// The built-in's name or the file's path.
    pub name: String,
    /// What the profile is for.
    pub description: String,
    /// Protections a run refuses to go without, and where each was asked for.
    pub requires: Vec<Requirement>,
    /// `filesystem.read`.
    pub read: Vec<ProfilePath>,
    /// `filesystem.write`.
    pub write: Vec<ProfilePath>,
    /// `filesystem.execute`.
    pub execute: Vec<ProfilePath>,
    /// `filesystem.deny_read`: hidden inside readable trees.
    pub deny_read: Vec<ProfilePath>,
    /// `filesystem.deny_write`: read-only inside writable trees.
    pub deny_write: Vec<ProfilePath>,
    /// `filesystem.protected_change` and where it was set.
    pub protected_change: (ProtectedChange, Origin),
    /// `filesystem.case_folding` and where it was set.
    pub case_folding: (crate::capability::CaseFolding, Origin),
    /// `network.mode` and where it was set.
    pub network: (NetworkMode, Origin),
    /// `[network]` allow, deny and private entries, hosts file and limits (`proxy` mode).
    pub net_rules: crate::capability::NetRules,
    limits: BTreeMap<LimitKey, (LimitValue, String)>,
    /// The `[environment]` table.
    pub env: EnvFilter,
    /// Where `environment.inherit` was set; `None` for the default.
    pub env_inherit_origin: Option<Origin>,
    /// Where each `environment.pass` and `environment.deny` entry and each `environment.set`
    /// name came from.
    pub env_pass_origins: BTreeMap<String, Origin>,
    /// Where each `environment.deny` entry came from.
    pub env_deny_origins: BTreeMap<String, Origin>,
    /// Where each `environment.set` name came from.
    pub env_set_origins: BTreeMap<String, Origin>,
    /// `syscalls.deny`, each with where.
    pub extra_denied_syscalls: Vec<DeniedSyscall>,
    /// The `[isolation]` switches.
    pub isolation: Isolation,
    /// Where each `isolation` switch set by a file came from; the others are defaults.
    pub isolation_origins: BTreeMap<&'static str, Origin>,
    /// The permission policy this profile brings, as `(source name, text)`, base first: the
    /// shipped policy of the nearest built-in in the `extends` chain (the profile itself when it
    /// is one; named after it), then every file in the chain that has a `[policy]` table (named
    /// by its path, the whole file's text). The one source of truth for a profile's policy.
    pub policy_sources: Vec<(String, String)>,
    /// A digest of the texts the profile was parsed from, its `extends` chain's included: two
    /// loads with the same digest give the same profile. A caller that changes the profile
    /// after loading it must not keep plans by it (see `Sandbox::store_plans`).
    pub(crate) digest: [u8; 32],
}
