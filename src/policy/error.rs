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
    /// A policy file could not be read.
    Read {
        /// The file.
        path: PathBuf,
        #[source]
        /// Why it could not be read.
        source: std::io::Error,
    },
    #[error("{at}: invalid TOML: {message}")]
    /// The file is not valid TOML.
    Toml {
        /// Where.
        at: Location,
        /// The parser's message.
        message: String,
    },
    #[error("{at}: unknown key `{key}`")]
    /// A key sbx does not know.
    UnknownKey {
        /// Where.
        at: Location,
        /// The key.
        key: String,
    },
    #[error("{at}: `{key}` must be {expected}")]
    /// A key holds a value of the wrong type.
    WrongType {
        /// Where.
        at: Location,
        /// The key.
        key: String,
        /// What it should hold.
        expected: &'static str,
    },
    #[error("{at}: invalid rule `{rule}`: {reason}")]
    /// A rule that does not parse.
    Rule {
        /// Where.
        at: Location,
        /// The rule as written.
        rule: String,
        /// Why it does not parse.
        reason: String,
    },
    #[error(
        "{at}: unknown mode `{mode}` (expected default, plan, accept-edits, sandbox-auto or bypass)"
    )]
    /// A mode sbx does not know.
    UnknownMode {
        /// Where.
        at: Location,
        /// The mode as written.
        mode: String,
    },
    #[error("{at}: a {source_kind} policy may not {what}")]
    /// A source sets what its kind may not (a project's hooks or `bypass` mode).
    NotPermitted {
        /// Where.
        at: Location,
        /// The kind of source (`project`).
        source_kind: &'static str,
        /// What it tried.
        what: String,
    },
    #[error("{at}: example `{command}` must be {expected} but the policy says {actual} ({why})")]
    /// An example the source's own rules do not decide as it says.
    Example {
        /// Where the example is written.
        at: Location,
        /// The example command.
        command: String,
        /// The decision the example expects.
        expected: &'static str,
        /// The decision the rules give.
        actual: &'static str,
        /// The step that decided.
        why: String,
    },
}
