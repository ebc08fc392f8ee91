//! The filesystem as planning sees it: a narrow [`DirLister`] trait, and [`RealFs`], which
//! asks the real one and remembers each answer.
#![forbid(unsafe_code)]

use crate::pathset::PathMap;
use std::path::{Path, PathBuf};

/// Lists a directory's entries; injected so that the plan stays testable.
pub trait DirLister {
    /// The entries of `dir`, sorted; empty when it cannot be read.
    fn list(&self, dir: &Path) -> Vec<PathBuf>;
    /// Whether `path` is a directory, following symbolic links.
    fn is_dir(&self, path: &Path) -> bool;
    /// Whether anything is at `path` (a dangling link included).
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
    /// How many children of each directory were asked about, and, from the third on, the
    /// directory's listing (name -> kind): one read answers for all its siblings.
    asked: std::cell::RefCell<PathMap<u32>>,
    listed: std::cell::RefCell<PathMap<Option<PathMap<std::fs::FileType>>>>,
}

/// Directories with more entries than this are not listed: their lookups stay one by one.
const LIST_MAX: usize = 512;

fn listing(dir: &Path) -> Option<PathMap<std::fs::FileType>> {
    let mut out = PathMap::default();
    for e in std::fs::read_dir(dir).ok()? {
        let e = e.ok()?;
        if out.len() >= LIST_MAX {
            return None;
        }
        out.insert(e.file_name(), e.file_type().ok()?);
    }
    Some(out)
}

impl RealFs {
    /// The answer from the parent's listing, once the parent has been asked about enough.
    fn in_listing(&self, parent: &Path, path: &Path) -> Option<(bool, bool, bool)> {
        let n = {
            let mut asked = self.asked.borrow_mut();
            match asked.get_mut(parent.as_os_str()) {
                Some(n) => {
                    *n += 1;
                    *n
                }
                None => {
                    asked.insert(parent.as_os_str().to_os_string(), 1);
                    1
                }
            }
        };
        if n < 3 {
            return None;
        }
        let mut listed = self.listed.borrow_mut();
        if !listed.contains_key(parent.as_os_str()) {
            listed.insert(parent.as_os_str().to_os_string(), listing(parent));
        }
        let list = listed.get(parent.as_os_str())?.as_ref()?;
        Some(match list.get(path.file_name()?) {
            None => (false, false, false),
            Some(t) if t.is_symlink() => (true, path.is_dir(), true),
            Some(t) => (true, t.is_dir(), false),
        })
    }

    fn lookup(&self, path: &Path) -> (bool, bool, bool) {
        if let Some(v) = self.seen.borrow().get(path.as_os_str()) {
            return *v;
        }
        // Below a missing directory nothing exists: one lookup answers for every path under
        // it (the denied lists name many paths under a few tools' directories).
        if let Some(parent) = path.parent()
            && parent.parent().is_some()
            && !self.lookup(parent).0
        {
            return (false, false, false);
        }
        let listed = path
            .parent()
            .filter(|p| p.parent().is_some())
            .and_then(|p| self.in_listing(p, path));
        let v = listed.unwrap_or_else(|| match path.symlink_metadata() {
            Ok(m) if m.file_type().is_symlink() => (true, path.is_dir(), true),
            Ok(m) => (true, m.is_dir(), false),
            Err(_) => (false, false, false),
        });
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
