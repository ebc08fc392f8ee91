//! What resolving a profile asks of the machine: glob matches, what a path is, a git config's
//! text, one environment variable. Behind a narrow trait so that a whole capability set (and
//! the plan after it) can be computed against a fake file system.
#![forbid(unsafe_code)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// What is at a path, not following a final symbolic link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link.
    Symlink,
    /// A device, socket or pipe.
    Other,
}

/// The file system and environment as [`Profile::resolve_in`](super::Profile::resolve_in)
/// sees them. [`RealFiles`] asks the real ones.
pub trait Files {
    /// The paths a glob matches, sorted (the variables' values in it are escaped).
    fn glob(&self, pattern: &str) -> Result<Vec<PathBuf>, glob::PatternError>;
    /// What is at `path`, not following a final symbolic link; `None` when nothing is.
    fn kind(&self, path: &Path) -> Option<FileKind>;
    /// A file's text; `None` when it cannot be read.
    fn read(&self, path: &Path) -> Option<String>;
    /// An environment variable of the process that plans (`XDG_CONFIG_HOME`).
    fn var(&self, name: &str) -> Option<OsString>;
}

/// The real file system and environment.
#[derive(Clone, Copy, Debug, Default)]
pub struct RealFiles;

impl Files for RealFiles {
    fn glob(&self, pattern: &str) -> Result<Vec<PathBuf>, glob::PatternError> {
        super::resolve::expand_glob(pattern)
    }

    fn kind(&self, path: &Path) -> Option<FileKind> {
        let t = path.symlink_metadata().ok()?.file_type();
        Some(if t.is_symlink() {
            FileKind::Symlink
        } else if t.is_dir() {
            FileKind::Dir
        } else if t.is_file() {
            FileKind::File
        } else {
            FileKind::Other
        })
    }

    fn read(&self, path: &Path) -> Option<String> {
        std::fs::read_to_string(path).ok()
    }

    fn var(&self, name: &str) -> Option<OsString> {
        std::env::var_os(name)
    }
}
