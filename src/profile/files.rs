//! What resolving a profile asks of the machine: glob matches, what a path is, a git config's
//! text, one environment variable. Behind a narrow trait so that a whole capability set (and
//! the plan after it) can be computed against a fake file system.
#![forbid(unsafe_code)]

use crate::lookups::Lookups;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::rc::Rc;

pub use crate::lookups::FileKind;

/// The file system and environment as [`Profile::resolve_in`](super::Profile::resolve_in)
/// sees them. [`RealFiles`] asks the real ones.
pub trait Files {
    /// The paths a glob matches, sorted (the variables' values in it are escaped).
    fn glob(&self, pattern: &str) -> Result<Vec<PathBuf>, glob::PatternError>;
    /// What is at `path`, not following a final symbolic link; `None` when nothing is.
    fn kind(&self, path: &Path) -> Option<FileKind>;
    /// A file's text; `None` when it cannot be read.
    fn read(&self, path: &Path) -> Option<String>;
    /// The text of the symbolic link at `path`; `None` when it is none or cannot be read.
    fn read_link(&self, path: &Path) -> Option<PathBuf>;
    /// An environment variable of the process that plans (`XDG_CONFIG_HOME`).
    fn var(&self, name: &str) -> Option<OsString>;
}

/// The real file system and environment, each path looked at once ([`Lookups`]).
#[derive(Debug, Default)]
pub struct RealFiles {
    looks: Rc<Lookups>,
}

impl RealFiles {
    /// The real file system as `looks` has seen it so far: planning right after resolving
    /// asks it again (see [`crate::plan::RealFs::sharing`]).
    pub fn sharing(looks: Rc<Lookups>) -> Self {
        Self { looks }
    }

    /// The entries of `dir`, read on first use; none when it cannot be read.
    pub(crate) fn entries(&self, dir: &Path) -> Rc<[crate::lookups::Entry]> {
        self.looks.entries(dir)
    }
}

impl Files for RealFiles {
    fn glob(&self, pattern: &str) -> Result<Vec<PathBuf>, glob::PatternError> {
        super::resolve::expand_glob_in(pattern, self)
    }

    fn kind(&self, path: &Path) -> Option<FileKind> {
        self.looks.kind(path)
    }

    fn read(&self, path: &Path) -> Option<String> {
        std::fs::read_to_string(path).ok()
    }

    fn read_link(&self, path: &Path) -> Option<PathBuf> {
        std::fs::read_link(path).ok()
    }

    fn var(&self, name: &str) -> Option<OsString> {
        std::env::var_os(name)
    }
}
