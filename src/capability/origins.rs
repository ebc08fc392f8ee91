//! Where a capability set's settings beside its paths and limits were written, carried with
//! the set so that what shows the set (`sbx explain`) reads them from it.
#![forbid(unsafe_code)]

use super::Origin;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Where each setting of a set was written; `None` or no entry where none was (a default).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettingOrigins {
    /// Of `network.mode`.
    pub network: Option<Origin>,
    /// Of each `[isolation]` switch a profile set, by its key (`pid`, `private_tmp`, ...).
    pub isolation: BTreeMap<String, Origin>,
    /// Of `environment.inherit`.
    pub env_inherit: Option<Origin>,
    /// Of each `environment.pass` pattern.
    pub env_pass: BTreeMap<String, Origin>,
    /// Of each `environment.deny` pattern.
    pub env_deny: BTreeMap<String, Origin>,
    /// Of each `environment.set` name.
    pub env_set: BTreeMap<String, Origin>,
    /// Of `filesystem.protected_change`.
    pub protected_change: Option<Origin>,
    /// Of `filesystem.case_folding`.
    pub case_folding: Option<Origin>,
}

impl SettingOrigins {
    /// The origins of an intersection: `self`'s, with `other`'s for what only it set.
    /// [`CapabilitySet::intersect`](super::CapabilitySet::intersect) then takes `other`'s for
    /// a setting whose value it keeps from `other`.
    pub(super) fn meet(&self, other: &Self) -> Self {
        let merged = |a: &BTreeMap<String, Origin>, b: &BTreeMap<String, Origin>| {
            let mut out = b.clone();
            out.extend(a.iter().map(|(k, v)| (k.clone(), v.clone())));
            out
        };
        Self {
            network: self.network.clone().or_else(|| other.network.clone()),
            isolation: merged(&self.isolation, &other.isolation),
            env_inherit: self
                .env_inherit
                .clone()
                .or_else(|| other.env_inherit.clone()),
            env_pass: merged(&self.env_pass, &other.env_pass),
            env_deny: merged(&self.env_deny, &other.env_deny),
            env_set: merged(&self.env_set, &other.env_set),
            protected_change: (self.protected_change.clone())
                .or_else(|| other.protected_change.clone()),
            case_folding: self
                .case_folding
                .clone()
                .or_else(|| other.case_folding.clone()),
        }
    }
}
