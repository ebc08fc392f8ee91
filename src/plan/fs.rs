//! The filesystem as planning sees it: a narrow [`DirLister`] trait, and [`RealFs`], which
//! asks the real one and remembers each answer.
#![forbid(unsafe_code)]

use crate::host::NameCase;
use crate::lookups::{FileKind, Lookups};
use crate::pathset::PathMap;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

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

/// The real filesystem. Each path is looked up once per plan ([`Lookups`], shared with the
/// resolution the plan is made from when both are made together): planning asks about the
/// same denied paths several times.
#[derive(Default)]
pub struct RealFs {
    looks: Rc<Lookups>,
    /// Where each link asked about leads: a directory or not.
    link_is_dir: RefCell<PathMap<bool>>,
    /// Each directory [`DirLister::list`] was asked for: granting around several denials
    /// under one home lists the same directories once per grant.
    lists: RefCell<PathMap<Vec<PathBuf>>>,
    /// Each directory [`DirLister::searchable`] was asked about: every denied path missing
    /// beneath one asks again.
    searchable: RefCell<PathMap<bool>>,
}

impl RealFs {
    /// The real file system as `looks` has seen it so far: the resolution the plan is made
    /// from, right before, looked at the same denied paths (see
    /// [`crate::profile::RealFiles::sharing`]).
    pub fn sharing(looks: Rc<Lookups>) -> Self {
        Self {
            looks,
            ..Self::default()
        }
    }

    /// Whether the link at `path` leads to a directory.
    fn leads_to_dir(&self, path: &Path) -> bool {
        if let Some(v) = self.link_is_dir.borrow().get(path.as_os_str()) {
            return *v;
        }
        let v = path.is_dir();
        self.link_is_dir
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
        let mut v: Vec<PathBuf> = self
            .looks
            .entries(dir)
            .iter()
            .map(|(name, _)| crate::pathset::child(dir, name))
            .collect();
        v.sort();
        self.lists
            .borrow_mut()
            .insert(dir.as_os_str().to_os_string(), v.clone());
        v
    }
    fn is_dir(&self, path: &Path) -> bool {
        match self.looks.kind(path) {
            Some(FileKind::Dir) => true,
            Some(FileKind::Symlink) => self.leads_to_dir(path),
            Some(FileKind::File | FileKind::Other) | None => false,
        }
    }
    fn exists(&self, path: &Path) -> bool {
        self.looks.kind(path).is_some()
    }
    fn is_symlink(&self, path: &Path) -> bool {
        self.looks.kind(path) == Some(FileKind::Symlink)
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
        let listed = self.looks.read_already(dir).map(|entries| {
            entries
                .iter()
                .map(|(n, _)| n)
                .find(|n| flip_case(n).is_some())
                .cloned()
        });
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

    /// Files, directories, links to either, dangling links and missing paths answer as the
    /// file system does, asked once or again.
    #[test]
    fn answers_agree_with_the_file_system() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        std::fs::create_dir_all(root.join("d/sub")).unwrap();
        std::fs::write(root.join("d/f"), "").unwrap();
        std::os::unix::fs::symlink(root.join("d/sub"), root.join("d/to-dir")).unwrap();
        std::os::unix::fs::symlink(root.join("d/f"), root.join("d/to-file")).unwrap();
        std::os::unix::fs::symlink(root.join("nowhere"), root.join("d/dangling")).unwrap();
        let fs = RealFs::sharing(Rc::new(Lookups::default()));
        for _ in 0..2 {
            for n in [
                "d",
                "d/sub",
                "d/f",
                "d/to-dir",
                "d/to-file",
                "d/dangling",
                "d/none",
            ] {
                let p = root.join(n);
                let link = p
                    .symlink_metadata()
                    .is_ok_and(|m| m.file_type().is_symlink());
                let expected = (p.symlink_metadata().is_ok(), p.is_dir(), link);
                assert_eq!(
                    (fs.exists(&p), fs.is_dir(&p), fs.is_symlink(&p)),
                    expected,
                    "{n}"
                );
            }
        }
        let listed = fs.list(&root.join("d"));
        assert_eq!(listed.len(), 5);
        assert!(listed.windows(2).all(|w| w[0] < w[1]), "sorted");
    }
}
