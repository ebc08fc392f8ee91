//! The filesystem as planning sees it: a narrow [`DirLister`] trait, and [`RealFs`], which
//! asks the real one and remembers each answer.
#![forbid(unsafe_code)]

use crate::pathset::PathMap;
use std::path::{Path, PathBuf};

/// Lists a directory's entries; injected so that the plan stays testable.
pub trait DirLister {
    fn list(&self, dir: &Path) -> Vec<PathBuf>;
    fn is_dir(&self, path: &Path) -> bool;
    fn exists(&self, path: &Path) -> bool;
    /// Whether `path` itself is a symbolic link.
    fn is_symlink(&self, _path: &Path) -> bool {
        false
    }
}

/// The real filesystem. Each path is looked up once per plan: planning asks about the same
/// denied paths several times.
#[derive(Default)]
pub struct RealFs {
    /// `(exists, is a directory following symlinks, is a symlink)` per path asked about.
    seen: std::cell::RefCell<PathMap<(bool, bool, bool)>>,
}

impl RealFs {
    fn lookup(&self, path: &Path) -> (bool, bool, bool) {
        if let Some(v) = self.seen.borrow().get(path.as_os_str()) {
            return *v;
        }
        let v = match path.symlink_metadata() {
            Ok(m) if m.file_type().is_symlink() => (true, path.is_dir(), true),
            Ok(m) => (true, m.is_dir(), false),
            Err(_) => (false, false, false),
        };
        self.seen
            .borrow_mut()
            .insert(path.as_os_str().to_os_string(), v);
        v
    }
}

impl DirLister for RealFs {
    fn list(&self, dir: &Path) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        v.sort();
        v
    }
    fn is_dir(&self, path: &Path) -> bool {
        self.lookup(path).1
    }
    fn exists(&self, path: &Path) -> bool {
        self.lookup(path).0
    }
    fn is_symlink(&self, path: &Path) -> bool {
        self.lookup(path).2
    }
}
