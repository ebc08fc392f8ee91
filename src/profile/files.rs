//! What resolving a profile asks of the machine: glob matches, what a path is, a git config's
//! text, one environment variable. Behind a narrow trait so that a whole capability set (and
//! the plan after it) can be computed against a fake file system.
#![forbid(unsafe_code)]

use crate::pathset::PathMap;
use std::cell::RefCell;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::rc::Rc;

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
    /// The text of the symbolic link at `path`; `None` when it is none or cannot be read.
    fn read_link(&self, path: &Path) -> Option<PathBuf>;
    /// An environment variable of the process that plans (`XDG_CONFIG_HOME`).
    fn var(&self, name: &str) -> Option<OsString>;
}

/// The real file system and environment. Each directory a glob lists is read once.
#[derive(Debug, Default)]
pub struct RealFiles {
    /// The names in each directory listed so far; empty when it could not be read.
    listings: RefCell<PathMap<Rc<[OsString]>>>,
    /// How many of each directory's entries [`Files::kind`] was asked about.
    asked: RefCell<PathMap<u32>>,
}

/// From this many entries of one directory asked about on, its listing answers for the
/// missing ones: the denied paths of a profile are a few hundred names in a few directories
/// (the home, `~/.config`), most of them absent, and following their links asks about each.
const LIST_AFTER: u32 = 4;

impl RealFiles {
    /// The names in `dir`, read on first use; none when it cannot be read.
    pub(crate) fn names(&self, dir: &Path) -> Rc<[OsString]> {
        if let Some(n) = self.listings.borrow().get(dir.as_os_str()) {
            return Rc::clone(n);
        }
        let names: Rc<[OsString]> = std::fs::read_dir(dir)
            .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.file_name())).collect())
            .unwrap_or_default();
        self.listings
            .borrow_mut()
            .insert(dir.as_os_str().to_os_string(), Rc::clone(&names));
        names
    }
}

impl RealFiles {
    /// Whether `path` is known absent from its directory's listing, read once enough of that
    /// directory's entries were asked about (a resolution is one moment: the listing is not
    /// read again). A listing that could not be read answers nothing.
    fn listed_absent(&self, path: &Path) -> bool {
        let Some((dir, name)) = crate::pathset::split_last(path.as_os_str()) else {
            return false;
        };
        let n = {
            let mut asked = self.asked.borrow_mut();
            match asked.get_mut(dir) {
                Some(n) => {
                    *n += 1;
                    *n
                }
                None => {
                    asked.insert(dir.to_os_string(), 1);
                    1
                }
            }
        };
        if n < LIST_AFTER {
            return false;
        }
        // A name under another case is asked of the file system: it may fold case.
        let names = self.names(Path::new(dir));
        !names.is_empty() && !names.iter().any(|x| x.eq_ignore_ascii_case(name))
    }
}

impl Files for RealFiles {
    fn glob(&self, pattern: &str) -> Result<Vec<PathBuf>, glob::PatternError> {
        super::resolve::expand_glob_in(pattern, self)
    }

    fn kind(&self, path: &Path) -> Option<FileKind> {
        if self.listed_absent(path) {
            return None;
        }
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

    fn read_link(&self, path: &Path) -> Option<PathBuf> {
        std::fs::read_link(path).ok()
    }

    fn var(&self, name: &str) -> Option<OsString> {
        std::env::var_os(name)
    }
}
