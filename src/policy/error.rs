//! Errors raised while loading, parsing or checking a policy.

use std::path::PathBuf;

/// Where in a policy source something was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The file path, or a name such as `builtin` for sources without a file.
    pub file: PathBuf,
    /// 1-based line, 0 when unknown.
    pub line: usize,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)
    }
}

/// Why a policy could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    #[error("{path}: cannot read policy file: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{at}: invalid TOML: {message}")]
    Toml { at: Location, message: String },
    #[error("{at}: unknown key `{key}`")]
    UnknownKey { at: Location, key: String },
    #[error("{at}: `{key}` must be {expected}")]
    WrongType {
        at: Location,
        key: String,
        expected: &'static str,
    },
    #[error("{at}: invalid rule `{rule}`: {reason}")]
    Rule {
        at: Location,
        rule: String,
        reason: String,
    },
    #[error(
        "{at}: unknown mode `{mode}` (expected default, plan, accept-edits, sandbox-auto or bypass)"
    )]
    UnknownMode { at: Location, mode: String },
    #[error("{at}: a {source_kind} policy may not {what}")]
    NotPermitted {
        at: Location,
        source_kind: &'static str,
        what: String,
    },
    #[error("{at}: example `{command}` must be {expected} but the policy says {actual} ({why})")]
    Example {
        at: Location,
        command: String,
        expected: &'static str,
        actual: &'static str,
        why: String,
    },
}
