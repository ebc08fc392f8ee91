//! Where a decision came from, carried as data down to the adapters that render it: a policy
//! rule or hook (its kind of source, file and line), a profile line, or sbx itself.
#![forbid(unsafe_code)]

use crate::capability::Origin;
use serde::{Serialize, Serializer};
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

/// Who decided a call, for its answer and the audit log.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Provenance {
    /// A policy rule, policy hook or mode setting, where it was written.
    Rule(RuleSource),
    /// A profile line: the sandbox refused the call because of it.
    Profile(Origin),
    /// sbx's own judgement with no line behind it (`floor`, `plan`, `builtin`).
    Sbx(&'static str),
}

impl fmt::Display for Provenance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Provenance::Rule(r) => r.fmt(f),
            Provenance::Profile(o) => o.fmt(f),
            Provenance::Sbx(s) => f.write_str(s),
        }
    }
}

/// Rendered as its text: the answers and the audit log carry one string.
impl Serialize for Provenance {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}
