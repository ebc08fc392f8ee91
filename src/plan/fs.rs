//! The filesystem as planning sees it: a narrow [`DirLister`] trait, and [`RealFs`], which
//! asks the real one and remembers each answer.
#![forbid(unsafe_code)]

use crate::host::NameCase;
use crate::pathset::{PathMap, split_last};
use std::cell::RefCell;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
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
    /// The text of the symbolic link at `path`; `None` when it is none or cannot be read.
    fn read_link(&self, path: &Path) -> Option<PathBuf>;
    /// How the file system holding `entry` (an existing path) treats its name under another
    /// case ([`crate::host::names::probe`]).
    fn name_case(&self, entry: &Path) -> NameCase;
    /// How the file system holding `dir` treats names under another case, probed on one of
    /// its entries ([`NameCase::Untold`] when none has a letter to flip).
    fn name_case_in(&self, dir: &Path) -> NameCase;
    /// Whether the directory `dir` can be searched (its entries looked up) by whoever plans.
    fn searchable(&self, _dir: &Path) -> bool {
        true
    }
}

/// The real filesystem. Each path is looked up once per plan: planning asks about the same
/// denied paths several times.
pub struct RealFs {
    /// `(exists, is a directory following symlinks, is a symlink)` per path asked about.
    seen: RefCell<PathMap<Kind>>,
    /// Per directory whose children were asked about: how many were, and from [`LIST_AFTER`] on
    /// the directory's listing (one read answers for all its siblings).
    dirs: RefCell<PathMap<Dir>>,
    /// Each directory [`DirLister::list`] was asked for: granting around several denials
    /// under one home lists the same directories once per grant.
    lists: RefCell<PathMap<Vec<PathBuf>>>,
    /// Each directory [`DirLister::searchable`] was asked about: every denied path missing
    /// beneath one asks again.
    searchable: RefCell<PathMap<bool>>,
}

type Kind = (bool, bool, bool);

impl Default for RealFs {
    /// Sized for a built-in profile's plan (a few hundred paths in a few dozen directories),
    /// so that the maps do not grow while planning.
    fn default() -> Self {
        Self {
            seen: RefCell::new(PathMap::with_capacity_and_hasher(512, Default::default())),
            dirs: RefCell::new(PathMap::with_capacity_and_hasher(64, Default::default())),
            lists: RefCell::default(),
            searchable: RefCell::default(),
        }
    }
}

enum Dir {
    Asked(u32),
    /// `None`: not listable (unreadable, or more than [`LIST_MAX`] entries).
    Listed(Option<PathMap<std::fs::FileType>>),
}

/// Directories with more entries than this are not listed: their lookups stay one by one.
const LIST_MAX: usize = 512;

/// A directory is listed once this many of its children have been asked about. Measured on
/// ext4: a failed lookup costs about 0.5 us, a listing about 2 us plus 0.2 us an entry (30 us
/// for a 140-entry `/etc`, which the built-ins ask about some 20 times). The home (about 100
/// asks), its `.config` and the workspace (about 40 each) are worth listing; `/etc` is not.
const LIST_AFTER: u32 = 24;

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
    fn in_listing(&self, parent: &OsStr, name: &OsStr, path: &Path) -> Option<Kind> {
        let mut dirs = self.dirs.borrow_mut();
        let state = match dirs.get_mut(parent) {
            Some(s) => s,
            None => {
                dirs.insert(parent.to_os_string(), Dir::Asked(1));
                return None;
            }
        };
        if let Dir::Asked(n) = state {
            *n += 1;
            if *n < LIST_AFTER {
                return None;
            }
            *state = Dir::Listed(listing(Path::new(parent)));
        }
        let Dir::Listed(Some(list)) = state else {
            return None;
        };
        Some(match list.get(name) {
            None => (false, false, false),
            Some(t) if t.is_symlink() => (true, path.is_dir(), true),
            Some(t) => (true, t.is_dir(), false),
        })
    }

    fn lookup(&self, path: &Path) -> Kind {
        if let Some(v) = self.seen.borrow().get(path.as_os_str()) {
            return *v;
        }
        let split = split_last(path.as_os_str()).filter(|(p, _)| p.as_bytes() != b"/");
        // Below a missing directory nothing exists: one lookup answers for every path under
        // it (the denied lists name many paths under a few tools' directories).
        if let Some((parent, _)) = split
            && !self.lookup(Path::new(parent)).0
        {
            return (false, false, false);
        }
        let listed = split.and_then(|(parent, name)| self.in_listing(parent, name, path));
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
        if let Some(v) = self.lists.borrow().get(dir.as_os_str()) {
            return v.clone();
        }
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        v.sort();
        self.lists
            .borrow_mut()
            .insert(dir.as_os_str().to_os_string(), v.clone());
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
    fn read_link(&self, path: &Path) -> Option<PathBuf> {
        std::fs::read_link(path).ok()
    }
    fn name_case(&self, entry: &Path) -> NameCase {
        crate::host::names::probe(entry)
    }
    /// On a name of the directory's listing when planning has read it already (the
    /// workspace's usually is), so the probe is one `lstat`.
    fn name_case_in(&self, dir: &Path) -> NameCase {
        use crate::host::names::{flip_case, probe, probe_dir};
        let listed = match self.dirs.borrow().get(dir.as_os_str()) {
            Some(Dir::Listed(Some(names))) => {
                Some(names.keys().find(|n| flip_case(n).is_some()).cloned())
            }
            Some(Dir::Listed(None) | Dir::Asked(_)) | None => None,
        };
        match listed {
            Some(Some(name)) => probe(&dir.join(name)),
            Some(None) => NameCase::Untold,
            None => probe_dir(dir),
        }
    }
    fn searchable(&self, dir: &Path) -> bool {
        if let Some(v) = self.searchable.borrow().get(dir.as_os_str()) {
            return *v;
        }
        let v = nix::unistd::access(dir, nix::unistd::AccessFlags::X_OK).is_ok();
        self.searchable
            .borrow_mut()
            .insert(dir.as_os_str().to_os_string(), v);
        v
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The remembered answers, from single lookups and from listings alike, are the file
    /// system's: files, directories, symlinks to either, dangling links, missing paths and
    /// paths below missing directories or below files.
    #[test]
    fn answers_agree_with_the_file_system() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        std::fs::create_dir_all(root.join("d/sub")).unwrap();
        for i in 0..6 {
            std::fs::write(root.join(format!("d/f{i}")), "").unwrap();
        }
        std::os::unix::fs::symlink(root.join("d/sub"), root.join("d/to-dir")).unwrap();
        std::os::unix::fs::symlink(root.join("d/f0"), root.join("d/to-file")).unwrap();
        std::os::unix::fs::symlink(root.join("nowhere"), root.join("d/dangling")).unwrap();
        let names = [
            "d",
            "d/sub",
            "d/f0",
            "d/f1",
            "d/f2",
            "d/f3",
            "d/f5",
            "d/to-dir",
            "d/to-file",
            "d/dangling",
            "d/none",
            "none",
            "none/a/b",
            "d/f0/x",
            "d/sub/x",
            "d/./sub",
            "d/../d",
        ];
        // Enough names in `d` for it to be listed, most of them missing.
        let missing: Vec<String> = (0..LIST_AFTER).map(|i| format!("d/missing{i}")).collect();
        let names = names
            .iter()
            .copied()
            .chain(missing.iter().map(String::as_str));
        let fs = RealFs::default();
        // Twice: the second round answers from what the first remembered.
        for _ in 0..2 {
            for n in names.clone() {
                let p = root.join(n);
                let link = p
                    .symlink_metadata()
                    .is_ok_and(|m| m.file_type().is_symlink());
                let expected = (p.symlink_metadata().is_ok(), p.is_dir(), link);
                assert_eq!(fs.lookup(&p), expected, "{n}");
            }
        }
        assert!(
            matches!(
                fs.dirs.borrow().get(root.join("d").as_os_str()),
                Some(Dir::Listed(Some(_)))
            ),
            "the directory asked about most was listed"
        );
    }
}
