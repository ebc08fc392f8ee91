//! Why a profile could not be loaded, parsed or resolved.
#![forbid(unsafe_code)]

use super::BUILTIN_NAMES;
use crate::capability::Origin;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProfileError {
    #[error("unknown profile `{name}`: built-ins are {}; or give a path to a .toml file", BUILTIN_NAMES.join(", "))]
    Unknown { name: String },
    #[error("cannot read profile {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{source_name}:{line}: {}{message}", key.as_deref().map(|k| format!("`{k}`: ")).unwrap_or_default())]
    Parse {
        source_name: String,
        line: usize,
        /// The dotted key the error is about, when the text shows one.
        key: Option<String>,
        message: String,
    },
    #[error("{source_name}:{line}: `{key}`: {message}")]
    Invalid {
        source_name: String,
        line: usize,
        key: String,
        message: String,
    },
    #[error("profile `extends` chain is too deep or circular at `{name}`")]
    ExtendsLoop { name: String },
    #[error(
        "{origin}: required path {path} does not exist (prefix it with `?` to make it optional)"
    )]
    MissingPath { origin: Origin, path: PathBuf },
}
