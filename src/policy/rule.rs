//! One rule with its provenance.
#![forbid(unsafe_code)]

use super::pattern::Pattern;
use crate::decision::{Decision, Mode};

pub use crate::provenance::{RuleSource, SourceKind};

/// A compiled rule: which list it is in, what it matches, and where it came from.
#[derive(Clone, Debug)]
pub struct Rule {
    /// The list: allow, ask or deny.
    pub effect: Decision,
    /// The rule as written, e.g. `Bash(git push --force *)`.
    pub text: String,
    /// What it matches.
    pub pattern: Pattern,
    /// An optional human reason shown in denials and the audit log.
    pub reason: Option<String>,
    /// Where it was written.
    pub source: RuleSource,
    /// The modes it applies in; every mode when `None`.
    pub modes: Option<Vec<Mode>>,
}

impl Rule {
    /// Whether the rule applies to a call decided in `mode`.
    pub fn applies_in(&self, mode: Mode) -> bool {
        self.modes.as_ref().is_none_or(|m| m.contains(&mode))
    }

    /// `Bash(git push *) by project:.sbx/policy.toml:3 "no pushes"`.
    pub fn describe(&self) -> String {
        match &self.reason {
            Some(r) => format!("{} by {} \"{}\"", self.text, self.source, r),
            None => format!("{} by {}", self.text, self.source),
        }
    }
}
