//! What spares a kept plan most of its questions: the directory (or file) whose state decides
//! a question's answer, and a stamp of that state. While the stamp is unchanged the answer is
//! too, so the question need not be asked again.
//!
//! A directory's entries change only with its change time (`ctime`, which no program can set
//! back, unlike `mtime`), and a path resolves to another directory only with another device
//! and inode. Two limits are kept: a stamp counts only once its change time is older than a
//! margin before it was taken (a change within the same clock tick would leave the time as
//! it was), and only on file systems that keep these times for their directories (not
//! `/proc`, `/sys` or network file systems).
#![forbid(unsafe_code)]

use indexmap::IndexMap;
use nix::sys::statfs::{self, FsType};
use std::cell::RefCell;
use std::collections::HashMap;
use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Changes this recent are not trusted to have moved a change time.
const MARGIN: Duration = Duration::from_secs(1);

/// File systems whose directories' change times follow every change of their entries.
const TRUSTED: [FsType; 5] = [
    statfs::EXT4_SUPER_MAGIC, // ext2, ext3 and ext4 share it
    statfs::XFS_SUPER_MAGIC,
    statfs::BTRFS_SUPER_MAGIC,
    statfs::TMPFS_MAGIC,
    statfs::F2FS_SUPER_MAGIC,
];

/// Where an answer comes from.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub(super) enum Witness {
    /// A directory's entries (and what the path resolves to).
    Entries(PathBuf),
    /// Which directory a path resolves to, whatever its entries.
    Directory(PathBuf),
}

/// The state of a witness: its device and inode, type, and for entries its times and size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub(super) struct Stamp {
    dev: u64,
    ino: u64,
    mode: u32,
    ctime: (i64, i64),
    mtime: (i64, i64),
    size: u64,
}

/// What each path held when a call's checks first looked at it (links followed), so that
/// the kept plan's stamps and the spare's held files look at each path once: the checks then
/// judge one moment of the file system, as a plan made at that moment would.
#[derive(Clone, Default)]
pub(super) struct Looks(Rc<RefCell<IndexMap<PathBuf, Option<Look>, Fast>>>);

/// What a check uses of a path's metadata, and no more: a session's every call fills a map of
/// some hundreds of them, and a smaller one is written over fewer pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Look {
    pub(super) dev: u64,
    pub(super) ino: u64,
    pub(super) mode: u32,
    pub(super) size: u64,
    pub(super) ctime: (i64, i64),
    pub(super) mtime: (i64, i64),
    /// The birth time, where the file system keeps one.
    pub(super) born: Option<(i64, i64)>,
}

impl Look {
    fn of(m: &Metadata) -> Self {
        let born = m
            .created()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .and_then(|d| {
                Some((
                    i64::try_from(d.as_secs()).ok()?,
                    i64::from(d.subsec_nanos()),
                ))
            });
        Self {
            dev: m.dev(),
            ino: m.ino(),
            mode: m.mode(),
            size: m.size(),
            ctime: (m.ctime(), m.ctime_nsec()),
            mtime: (m.mtime(), m.mtime_nsec()),
            born,
        }
    }

    fn is_dir(&self) -> bool {
        self.mode & libc::S_IFMT == libc::S_IFDIR
    }
}

impl Looks {
    /// Looks with room made for a kept plan's check, which asks about some hundreds of paths.
    pub(super) fn with_room() -> Self {
        let map = IndexMap::with_capacity_and_hasher(WITNESSES, Fast::default());
        Self(Rc::new(RefCell::new(map)))
    }
}

/// The hasher of [`crate::pathset::PathMap`]: a kept plan's check hashes a few hundred paths
/// on every call. The maps keep their entries together, apart from the index: the pages a
/// call writes are those its entries fill, not a table's spread over its whole capacity
/// (a session's spare init shares the memory copy-on-write, so each page written costs a
/// copy).
type Fast = std::hash::BuildHasherDefault<crate::pathset::WordHash>;

/// How many witnesses a pass makes room for at once (a built-in profile's plan has some
/// hundreds).
const WITNESSES: usize = 512;

impl Looks {
    /// What `path` holds, links followed, looked up on first use.
    pub(super) fn look(&self, path: &Path) -> Option<Look> {
        if let Some(m) = self.0.borrow().get(path) {
            return *m;
        }
        let m = std::fs::metadata(path).ok().as_ref().map(Look::of);
        self.0.borrow_mut().insert(path.to_path_buf(), m);
        m
    }

    /// Forget every look: what follows judges the file system as it is from now on.
    pub(super) fn forget(&self) {
        self.0.borrow_mut().clear();
    }
}

/// Stamps taken in one pass, each witness once.
pub(super) struct Pass {
    /// When the pass began, less [`MARGIN`], in nanoseconds: a witness changed since does
    /// not count.
    settled: i128,
    stamps: IndexMap<Witness, Option<Stamp>, Fast>,
    trusted_fs: HashMap<u64, bool>,
    looks: Looks,
}

impl Pass {
    #[cfg(test)]
    pub(super) fn begin() -> Self {
        Self::begin_in(Looks::default())
    }

    /// A pass that takes its stamps from `looks`.
    pub(super) fn begin_in(looks: Looks) -> Self {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        Self {
            settled: i128::try_from(now.saturating_sub(MARGIN.as_nanos())).unwrap_or(0),
            stamps: IndexMap::with_capacity_and_hasher(WITNESSES, Fast::default()),
            trusted_fs: HashMap::new(),
            looks,
        }
    }

    /// The witness's stamp now, or `None` when it cannot vouch for an answer (missing, on a
    /// file system without reliable times, or changed too recently).
    pub(super) fn stamp(&mut self, w: &Witness) -> Option<Stamp> {
        if let Some(s) = self.stamps.get(w) {
            return *s;
        }
        let s = self.take(w);
        self.stamps.insert(w.clone(), s);
        s
    }

    /// For a path that is absent: its nearest ancestor with a stamp, and the entry right
    /// below that ancestor on the way to the path (which must be absent for the ancestor's
    /// stamp to vouch that the path is).
    pub(super) fn nearest(&mut self, path: &Path) -> (Option<(Witness, Stamp)>, Option<PathBuf>) {
        let mut below = path;
        while let Some(dir) = below.parent() {
            let w = Witness::Entries(dir.to_path_buf());
            if let Some(s) = self.stamp(&w) {
                return (Some((w, s)), Some(below.to_path_buf()));
            }
            below = dir;
        }
        (None, None)
    }

    fn take(&mut self, w: &Witness) -> Option<Stamp> {
        let (path, times) = match w {
            Witness::Entries(p) => (p, true),
            Witness::Directory(p) => (p, false),
        };
        let m = self.looks.look(path)?;
        if !self.trusted(m.dev, path) {
            return None;
        }
        if !times {
            return m.is_dir().then_some(Stamp {
                dev: m.dev,
                ino: m.ino,
                mode: m.mode & libc::S_IFMT,
                ctime: (0, 0),
                mtime: (0, 0),
                size: 0,
            });
        }
        let ns = |(s, n): (i64, i64)| i128::from(s) * 1_000_000_000 + i128::from(n);
        if ns(m.ctime) >= self.settled || ns(m.mtime) >= self.settled {
            return None;
        }
        Some(Stamp {
            dev: m.dev,
            ino: m.ino,
            mode: m.mode,
            ctime: m.ctime,
            mtime: m.mtime,
            size: m.size,
        })
    }

    fn trusted(&mut self, dev: u64, path: &Path) -> bool {
        *self.trusted_fs.entry(dev).or_insert_with(|| {
            statfs::statfs(path).is_ok_and(|s| TRUSTED.contains(&s.filesystem_type()))
        })
    }
}
