//! Why a profile could not be loaded, parsed or resolved.
#![forbid(unsafe_code)]

use super::BUILTIN_NAMES;
use crate::capability::Origin;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
/// Why a profile could not be loaded or resolved; each names the file, line and key.
pub enum ProfileError {
    #[error("unknown profile `{name}`: built-ins are {}; or give a path to a .toml file", BUILTIN_NAMES.join(", "))]
    /// No built-in profile has this name.
    Unknown {
        /// The name.
        name: String,
    },
    #[error("cannot read profile {path}: {source}")]
    /// A profile file could not be read.
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    #[error("{}:{}: {}{message}", at.source, at.line, if at.key.is_empty() { String::new() } else { format!("`{}`: ", at.key) })]
    /// A profile is not valid TOML or has an unknown key.
    Parse {
        /// Where: the built-in's or file's name, the line, and the dotted key the error is
        /// about (empty when the text shows none).
        at: Origin,
        /// The parser's message.
        message: String,
    },
    #[error("{}:{}: `{}`: {message}", at.source, at.line, at.key)]
    /// A value is not allowed.
    Invalid {
        /// Where it was written: the built-in's or file's name, the line and the key.
        at: Origin,
        /// Why.
        message: String,
    },
    #[error("profile `extends` chain is too deep or circular at `{name}`")]
    /// `extends` goes round in a loop, or too deep.
    ExtendsLoop {
        /// The profile where it was noticed.
        name: String,
    },
    #[error(
        "{origin}: required path {path} does not exist (prefix it with `?` to make it optional)"
    )]
    /// A required path does not exist.
    MissingPath {
        /// Where it was written.
        origin: Origin,
        /// The path.
        path: PathBuf,
    },
}
