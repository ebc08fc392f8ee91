//! What is at each path, asked of the file system once per moment. Resolving a profile
//! ([`crate::profile::RealFiles`]) and planning its mounts ([`crate::plan::RealFs`]) ask about
//! the same few hundred denied paths, most of them absent and in a few directories (the home,
//! `~/.config`); made together, the two share one [`Lookups`], so each path costs one `lstat`
//! at most and a directory asked about often is read once instead.
#![forbid(unsafe_code)]

use crate::pathset::{PathMap, split_last};
use std::cell::RefCell;
use std::ffi::OsString;
use std::path::Path;
use std::rc::Rc;

/// What is at a path, not following a final symbolic link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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

impl FileKind {
    /// What a file type says is at a path.
    pub fn of(t: std::fs::FileType) -> Self {
        if t.is_symlink() {
            FileKind::Symlink
        } else if t.is_dir() {
            FileKind::Dir
        } else if t.is_file() {
            FileKind::File
        } else {
            FileKind::Other
        }
    }
}

/// A directory entry's name and, where the listing gives it, what it is.
pub type Entry = (OsString, Option<FileKind>);

/// The answers so far. Nothing is asked again: the answers are one moment's, so a
/// [`Lookups`] lives as long as one resolution and the plan made right after it.
#[derive(Debug, Default)]
pub struct Lookups {
    /// What is at each path asked about; `None` when nothing is.
    kinds: RefCell<PathMap<Option<FileKind>>>,
    /// Each directory read so far; empty when it could not be read.
    listings: RefCell<PathMap<Rc<[Entry]>>>,
    /// Per directory, how many of its entries were looked up one by one.
    asked: RefCell<PathMap<u32>>,
    /// Per directory whose listing answers lookups, its entries by name.
    indexes: RefCell<PathMap<Rc<Index>>>,
}

/// A listing's entries by name, and by ASCII lower case where every name is ASCII: a lookup
/// in a listing of the home is then two hash probes, not a comparison with every entry.
#[derive(Debug)]
struct Index {
    by_name: PathMap<Option<FileKind>>,
    /// `None` when some name is not ASCII: a Unicode fold is then asked of every entry.
    lowered: Option<PathMap<()>>,
}

impl Index {
    fn of(entries: &[Entry]) -> Self {
        let by_name = entries.iter().cloned().collect();
        let lowered = entries
            .iter()
            .map(|(n, _)| n.is_ascii().then(|| lower(n)))
            .map(|n| n.map(|n| (n, ())))
            .collect();
        Index { by_name, lowered }
    }
}

fn lower(name: &std::ffi::OsStr) -> OsString {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    OsString::from_vec(name.as_bytes().to_ascii_lowercase())
}

/// A directory is read once this many of its entries were looked up one by one. Measured on
/// ext4: a failed lookup costs about 0.5 us, a listing about 2 us plus 0.2 us an entry; the
/// home and `~/.config` are asked about some hundred times a plan, `/etc` some twenty.
const LIST_AFTER: u32 = 8;

/// A listing this long answers no lookup: one by one they stay cheaper.
const LIST_MAX: usize = 512;

impl Lookups {
    /// What is at `path` (absolute and normal), not following a final link; `None` when
    /// nothing is, also below a missing directory or a file.
    pub fn kind(&self, path: &Path) -> Option<FileKind> {
        if let Some(k) = self.kinds.borrow().get(path.as_os_str()) {
            return *k;
        }
        let split = split_last(path.as_os_str()).filter(|(p, _)| p.len() > 1);
        let k = match split {
            Some((parent, _)) if !self.may_hold(Path::new(parent)) => None,
            Some((parent, name)) => self.listed(parent, name).unwrap_or_else(|| lstat(path)),
            None => lstat(path),
        };
        self.kinds
            .borrow_mut()
            .insert(path.as_os_str().to_os_string(), k);
        k
    }

    /// The entries of `dir`, read on first use; none when it cannot be read.
    pub fn entries(&self, dir: &Path) -> Rc<[Entry]> {
        if let Some(n) = self.listings.borrow().get(dir.as_os_str()) {
            return Rc::clone(n);
        }
        let entries: Rc<[Entry]> = std::fs::read_dir(dir)
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .map(|e| (e.file_name(), e.file_type().ok().map(FileKind::of)))
                    .collect()
            })
            .unwrap_or_default();
        self.listings
            .borrow_mut()
            .insert(dir.as_os_str().to_os_string(), Rc::clone(&entries));
        entries
    }

    /// The entries of `dir` if it was read already, and could be; else `None`.
    pub fn read_already(&self, dir: &Path) -> Option<Rc<[Entry]>> {
        let listings = self.listings.borrow();
        let entries = listings.get(dir.as_os_str())?;
        (!entries.is_empty()).then(|| Rc::clone(entries))
    }

    /// Whether anything can lie beneath `dir`: not when nothing is there, or a file is.
    fn may_hold(&self, dir: &Path) -> bool {
        matches!(self.kind(dir), Some(FileKind::Dir | FileKind::Symlink))
    }

    /// What `dir`'s listing says of `name`, once enough of its entries were asked about:
    /// `Some(None)` when it is absent. A listing that could not be read or is too long answers
    /// nothing, nor does one without the entry's type, nor one holding the name under another
    /// case (the file system may fold case: it is asked).
    fn listed(&self, dir: &std::ffi::OsStr, name: &std::ffi::OsStr) -> Option<Option<FileKind>> {
        if self.count(dir) < LIST_AFTER {
            return None;
        }
        let entries = self.entries(Path::new(dir));
        if entries.is_empty() || entries.len() > LIST_MAX {
            return None;
        }
        let index = self.index(dir, &entries);
        if let Some(kind) = index.by_name.get(name) {
            return kind.map(Some);
        }
        let folded = match &index.lowered {
            Some(lowered) if name.is_ascii() => lowered.contains_key(&lower(name)),
            // Unicode too: a file system may fold `K` (Kelvin) to `k`, or one normal form to
            // another.
            _ => entries
                .iter()
                .any(|(x, _)| crate::folded_names::same_without_case(x, name)),
        };
        (!folded).then_some(None)
    }

    /// `dir`'s index, made from its listing on first use.
    fn index(&self, dir: &std::ffi::OsStr, entries: &[Entry]) -> Rc<Index> {
        if let Some(index) = self.indexes.borrow().get(dir) {
            return Rc::clone(index);
        }
        let index = Rc::new(Index::of(entries));
        self.indexes
            .borrow_mut()
            .insert(dir.to_os_string(), Rc::clone(&index));
        index
    }

    /// How many of `dir`'s entries have been looked up, this one included.
    fn count(&self, dir: &std::ffi::OsStr) -> u32 {
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
    }
}

fn lstat(path: &Path) -> Option<FileKind> {
    Some(FileKind::of(path.symlink_metadata().ok()?.file_type()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The remembered answers, from single lookups and from listings alike, are the file
    /// system's: files, directories, symlinks, missing paths, paths below missing directories
    /// or below files.
    #[test]
    fn answers_agree_with_the_file_system() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        std::fs::create_dir_all(root.join("d/sub")).unwrap();
        for i in 0..6 {
            std::fs::write(root.join(format!("d/f{i}")), "").unwrap();
        }
        std::os::unix::fs::symlink(root.join("d/sub"), root.join("d/to-dir")).unwrap();
        std::os::unix::fs::symlink(root.join("nowhere"), root.join("d/dangling")).unwrap();
        let names = [
            "d",
            "d/sub",
            "d/f0",
            "d/f1",
            "d/f2",
            "d/f5",
            "d/to-dir",
            "d/dangling",
            "d/none",
            "none",
            "none/a/b",
            "d/f0/x",
            "d/sub/x",
            "d/to-dir/x",
        ];
        let missing: Vec<String> = (0..LIST_AFTER).map(|i| format!("d/missing{i}")).collect();
        let names = names
            .iter()
            .copied()
            .chain(missing.iter().map(String::as_str));
        let looks = Lookups::default();
        for _ in 0..2 {
            for n in names.clone() {
                let p = root.join(n);
                let expected = p
                    .symlink_metadata()
                    .ok()
                    .map(|m| FileKind::of(m.file_type()));
                assert_eq!(looks.kind(&p), expected, "{n}");
            }
        }
        let d = root.join("d");
        assert!(
            looks.listings.borrow().contains_key(d.as_os_str()),
            "the directory asked about most was read"
        );
    }

    /// A name the listing holds under another case only is asked of the file system.
    #[test]
    fn a_name_under_another_case_is_looked_up() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        std::fs::write(d.join("Secret"), "").unwrap();
        let looks = Lookups::default();
        for i in 0..LIST_AFTER {
            looks.kind(&d.join(format!("m{i}")));
        }
        // On this (case-sensitive) file system the lookup finds nothing either; what matters
        // is that the answer came from a lookup, which a folding one would answer.
        assert_eq!(looks.listed(d.as_os_str(), "secret".as_ref()), None);
        assert_eq!(looks.listed(d.as_os_str(), "other".as_ref()), Some(None));
        assert_eq!(
            looks.listed(d.as_os_str(), "Secret".as_ref()),
            Some(Some(FileKind::File))
        );
        // A name outside ASCII in the listing (`K`, Kelvin, folds to `k`): an ASCII name is
        // compared with every entry under Unicode folding, not by its lower case alone.
        std::fs::write(d.join("\u{212A}ey"), "").unwrap();
        let looks = Lookups::default();
        for i in 0..LIST_AFTER {
            looks.kind(&d.join(format!("m{i}")));
        }
        assert_eq!(looks.listed(d.as_os_str(), "key".as_ref()), None);
        assert_eq!(looks.listed(d.as_os_str(), "SECRET".as_ref()), None);
        assert_eq!(looks.listed(d.as_os_str(), "other".as_ref()), Some(None));
    }
}
