//! The TOML profile format: parsing, `extends`, variables and validation.
//!
//! A profile is data. [`Profile::resolve`] turns it into a
//! [`CapabilitySet`](crate::CapabilitySet) with absolute paths; nothing here touches the kernel.
#![forbid(unsafe_code)]

mod error;
mod files;
mod limits;
mod load;
mod protection;
mod raw;
mod resolve;

pub use error::ProfileError;
pub use files::{FileKind, Files, RealFiles};
pub use load::{BUILTIN, BUILTIN_NAMES, BUILTIN_POLICIES};
pub use protection::Protection;
pub(crate) use resolve::expand_glob;
pub use resolve::{Vars, normalize};

use crate::capability::{EnvPolicy, Isolation, NetworkMode, Origin, ProtectedChange};
use limits::LimitValue;
use std::collections::BTreeMap;

/// A path pattern before variable substitution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathPattern {
    pub pattern: String,
    pub origin: Origin,
}

/// A parsed profile with `extends` applied; paths still hold `{workspace}`, `{home}`, `{tmp}`.
#[derive(Clone, Debug)]
pub struct Profile {
    pub name: String,
    pub description: String,
    pub requires: Vec<(Protection, Origin)>,
    pub read: Vec<PathPattern>,
    pub write: Vec<PathPattern>,
    pub execute: Vec<PathPattern>,
    pub deny_read: Vec<PathPattern>,
    pub deny_write: Vec<PathPattern>,
    /// `filesystem.protected_change` and where it was set.
    pub protected_change: (ProtectedChange, Origin),
    pub network: (NetworkMode, Origin),
    limits: BTreeMap<&'static str, (LimitValue, String)>,
    pub env: EnvPolicy,
    /// Where `environment.inherit` was set; `None` for the default.
    pub env_inherit_origin: Option<Origin>,
    /// Where each `environment.pass` and `environment.deny` entry and each `environment.set`
    /// name came from.
    pub env_pass_origins: BTreeMap<String, Origin>,
    pub env_deny_origins: BTreeMap<String, Origin>,
    pub env_set_origins: BTreeMap<String, Origin>,
    pub extra_denied_syscalls: Vec<(String, Origin)>,
    pub isolation: Isolation,
    /// Where each `isolation` switch set by a file came from; the others are defaults.
    pub isolation_origins: BTreeMap<&'static str, Origin>,
    /// The permission policy this profile brings, as `(source name, text)`, base first: the
    /// shipped policy of the nearest built-in in the `extends` chain (the profile itself when it
    /// is one; named after it), then every file in the chain that has a `[policy]` table (named
    /// by its path, the whole file's text). The one source of truth for a profile's policy.
    pub policy_sources: Vec<(String, String)>,
}
