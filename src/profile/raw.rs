//! The profile as written in TOML, before `extends` and validation: every table rejects
//! unknown keys, and values keep their spans so that origins can name a line.
#![forbid(unsafe_code)]

use super::Protection;
use crate::capability::{Inherit, NetworkMode};
use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawProfile {
    pub(super) description: Option<String>,
    pub(super) extends: Option<Spanned<String>>,
    pub(super) requires: Option<Vec<Spanned<Protection>>>,
    #[serde(default)]
    pub(super) filesystem: RawFs,
    pub(super) network: Option<RawNetwork>,
    pub(super) limits: Option<RawLimits>,
    pub(super) environment: Option<RawEnv>,
    pub(super) syscalls: Option<RawSyscalls>,
    pub(super) isolation: Option<RawIsolation>,
    /// Permission rules; interpreted by the policy module, not here.
    pub(super) policy: Option<toml::Table>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFs {
    #[serde(default)]
    pub(super) read: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) write: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) execute: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) deny_read: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) deny_write: Vec<Spanned<String>>,
    pub(super) protected_change: Option<Spanned<crate::capability::ProtectedChange>>,
    pub(super) case_folding: Option<Spanned<crate::capability::CaseFolding>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawNetwork {
    pub(super) mode: Option<Spanned<NetworkMode>>,
    /// Host names the proxy lets through (`proxy` mode).
    #[serde(default)]
    pub(super) allow: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) deny: Vec<Spanned<String>>,
    /// Special address ranges the proxy may connect to.
    #[serde(default)]
    pub(super) private: Vec<Spanned<String>>,
    /// A hosts file the proxy consults before the host's resolver.
    pub(super) hosts: Option<Spanned<String>>,
    /// Connections per run.
    pub(super) connections: Option<Spanned<toml::Value>>,
    /// Bytes relayed per run.
    pub(super) bytes: Option<Spanned<toml::Value>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLimits {
    pub(super) timeout: Option<Spanned<toml::Value>>,
    pub(super) output: Option<Spanned<toml::Value>>,
    pub(super) memory: Option<Spanned<toml::Value>>,
    pub(super) processes: Option<Spanned<toml::Value>>,
    pub(super) file_size: Option<Spanned<toml::Value>>,
    pub(super) cpu_time: Option<Spanned<toml::Value>>,
    pub(super) open_files: Option<Spanned<toml::Value>>,
    pub(super) tmp_size: Option<Spanned<toml::Value>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawEnv {
    pub(super) inherit: Option<Spanned<Inherit>>,
    #[serde(default)]
    pub(super) pass: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) deny: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) set: BTreeMap<String, Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSyscalls {
    #[serde(default)]
    pub(super) deny: Vec<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawIsolation {
    pub(super) pid: Option<Spanned<bool>>,
    pub(super) ipc: Option<Spanned<bool>>,
    pub(super) scope_signals: Option<Spanned<bool>>,
    pub(super) scope_abstract_unix: Option<Spanned<bool>>,
    pub(super) private_tmp: Option<Spanned<bool>>,
    pub(super) minimal_dev: Option<Spanned<bool>>,
}
