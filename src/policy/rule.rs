//! One rule with its provenance.
#![forbid(unsafe_code)]

use super::pattern::Pattern;
use crate::decision::Decision;
use serde::Serialize;
use std::fmt;

/// Which kind of source a rule came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SourceKind {
    /// Compiled into sbx.
    Builtin,
    /// Installed by an administrator; its deny rules run in the managed-deny listener.
    Managed,
    /// A profile's `[policy]` table.
    Profile,
    /// `~/.config/sbx/policy.toml`.
    User,
    /// `.sbx/policy.toml` in the workspace.
    Project,
    /// `--policy FILE`.
    File,
}

impl SourceKind {
    /// The kind's name in provenance (`project`, `user`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Builtin => "builtin",
            SourceKind::Managed => "managed",
            SourceKind::Profile => "profile",
            SourceKind::User => "user",
            SourceKind::Project => "project",
            SourceKind::File => "file",
        }
    }
}

/// Where one rule (or hook, or mode setting) was written.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct RuleSource {
    /// What kind of source.
    pub kind: SourceKind,
    /// The file as given, or `sbx` for built-in rules.
    pub file: String,
    /// 1-based line, 0 for built-in rules.
    pub line: usize,
}

impl fmt::Display for RuleSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}:{}", self.kind.as_str(), self.file, self.line)
        } else {
            write!(f, "{}:{}", self.kind.as_str(), self.file)
        }
    }
}

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
}

impl Rule {
    /// `Bash(git push *) by project:.sbx/policy.toml:3 "no pushes"`.
    pub fn describe(&self) -> String {
        match &self.reason {
            Some(r) => format!("{} by {} \"{}\"", self.text, self.source, r),
            None => format!("{} by {}", self.text, self.source),
        }
    }
}
