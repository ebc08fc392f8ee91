//! Which file a path names. Device and inode number alone do not tell: a number freed by a
//! removal is given to the next file made (`rmdir .github; mkdir .github` gets the same one on
//! ext4 and tmpfs). The kernel's file handle carries the inode's generation, drawn anew for
//! each file made, and the birth time tells them apart where the file system keeps one.
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The longest handle the kernel gives (`MAX_HANDLE_SZ`).
const HANDLE_MAX: usize = 128;

/// Asks for a handle that identifies the file, also on a file system that cannot open files
/// by handle (Linux 6.5); older kernels refuse the flag and are asked without it.
const AT_HANDLE_FID: libc::c_int = 0x200;

/// One file, as the file system names it for as long as it exists and never again after.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct FileKey {
    dev: u64,
    ino: u64,
    born: Option<(i64, i64)>,
    handle: Option<Handle>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Handle {
    kind: i32,
    len: u32,
    bytes: [u8; HANDLE_MAX],
}

/// Whether a link at the end of the path is followed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Links {
    Follow,
    Keep,
}

impl FileKey {
    /// The file at `path` now; `None` when nothing is there (or, followed, a link dangles).
    pub(super) fn of(path: &Path, links: Links) -> Option<Self> {
        Self::with_metadata(path, links).map(|(key, _)| key)
    }

    /// [`FileKey::of`], with the metadata it was read from.
    pub(super) fn with_metadata(path: &Path, links: Links) -> Option<(Self, std::fs::Metadata)> {
        let m = match links {
            Links::Follow => super::walk::stat(path),
            Links::Keep => super::walk::lstat(path),
        }
        .ok()?;
        let born = m
            .created()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| (d.as_secs() as i64, i64::from(d.subsec_nanos())));
        let key = Self {
            dev: m.dev(),
            ino: m.ino(),
            born,
            handle: handle(path, links),
        };
        Some((key, m))
    }

    #[cfg(test)]
    /// Whether the file system told one file from another made later at the same inode
    /// number (a handle or a birth time); without either, only device and inode compare.
    pub(super) fn tells_reuse(&self) -> bool {
        self.born.is_some() || self.handle.is_some()
    }
}

fn handle(path: &Path, links: Links) -> Option<Handle> {
    let path = CString::new(path.as_os_str().as_bytes()).ok()?;
    let follow = match links {
        Links::Follow => libc::AT_SYMLINK_FOLLOW,
        Links::Keep => 0,
    };
    handle_with(&path, follow | AT_HANDLE_FID).or_else(|| handle_with(&path, follow))
}

/// `struct file_handle` with room for the longest handle.
#[repr(C)]
struct RawHandle {
    bytes: u32,
    kind: libc::c_int,
    data: [u8; HANDLE_MAX],
}

fn handle_with(path: &CString, flags: libc::c_int) -> Option<Handle> {
    let mut raw = RawHandle {
        bytes: HANDLE_MAX as u32,
        kind: 0,
        data: [0; HANDLE_MAX],
    };
    let mut mount_id: libc::c_int = 0;
    // SAFETY: `raw` is a `struct file_handle` whose `handle_bytes` says how much room follows
    // it; the path is NUL-terminated; both outlive the call, which keeps no pointer.
    let rc = unsafe {
        libc::name_to_handle_at(
            libc::AT_FDCWD,
            path.as_ptr(),
            (&raw mut raw).cast::<libc::file_handle>(),
            &mut mount_id,
            flags,
        )
    };
    (rc == 0 && raw.bytes as usize <= HANDLE_MAX).then_some(Handle {
        kind: raw.kind,
        len: raw.bytes,
        bytes: raw.data,
    })
}

/// A protected path's file, and for a regular file its link count and change time: a hard
/// link made before the run (`ln app/.envrc app/x`) is another name for a held file, outside
/// its read-only mount, and a write through it changes the file's change time, which no
/// program can set back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Seen {
    /// The file, `None` when nothing is there.
    pub(super) file: Option<FileKey>,
    links: u64,
    ctime: (i64, i64),
}

impl Seen {
    /// What is at `path` now, links not followed.
    pub(super) fn of(path: &Path) -> Self {
        match FileKey::with_metadata(path, Links::Keep) {
            Some((key, m)) if m.is_file() => Self {
                file: Some(key),
                links: m.nlink(),
                ctime: (m.ctime(), m.ctime_nsec()),
            },
            Some((key, _)) => Self {
                file: Some(key),
                links: 1,
                ctime: (0, 0),
            },
            None => Self {
                file: None,
                links: 0,
                ctime: (0, 0),
            },
        }
    }

    /// What the run did to the file that was `self` and is `now` at the same name: another
    /// file is there, or the file, which had other names, was changed (through one of them:
    /// its own is read-only).
    pub(super) fn change(&self, now: &Self) -> Option<&'static str> {
        if self.file != now.file {
            Some("replaced")
        } else if self.links > 1 && self.ctime != now.ctime {
            Some("changed through another link")
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "test set-up fails loudly")]
    use super::*;

    #[test]
    fn a_directory_made_again_at_the_same_inode_is_another_file() {
        let dir = tempfile_dir();
        let p = dir.join("d");
        std::fs::create_dir(&p).unwrap();
        let first = FileKey::of(&p, Links::Keep).unwrap();
        assert_eq!(FileKey::of(&p, Links::Keep), Some(first));
        let mut reused = false;
        for _ in 0..20 {
            std::fs::remove_dir(&p).unwrap();
            std::fs::create_dir(&p).unwrap();
            let again = FileKey::of(&p, Links::Keep).unwrap();
            reused |= again.ino == first.ino;
            if first.tells_reuse() {
                assert_ne!(again, first, "a new directory taken for the old one");
            }
        }
        assert!(
            first.tells_reuse() || !reused,
            "inode reused and nothing tells it"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_link_followed_names_its_target() {
        let dir = tempfile_dir();
        std::fs::create_dir(dir.join("t")).unwrap();
        std::os::unix::fs::symlink("t", dir.join("l")).unwrap();
        let target = FileKey::of(&dir.join("t"), Links::Keep);
        assert_eq!(FileKey::of(&dir.join("l"), Links::Follow), target);
        assert_ne!(FileKey::of(&dir.join("l"), Links::Keep), target);
        assert_eq!(FileKey::of(&dir.join("missing"), Links::Keep), None);
        std::fs::remove_dir_all(dir).unwrap();
    }

    fn tempfile_dir() -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!(
            "sbx-identity-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }
}
