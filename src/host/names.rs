//! Whether a directory's file system finds a name under another case, and whether the kernel's
//! name cache knows it.
//!
//! A read-only mount sits on one dentry. Where the kernel folds case itself (ext4, f2fs and
//! tmpfs `casefold` directories, vfat, exfat, cifs mounted `nocase`), every case variant of a
//! name is looked up to that same dentry, so the mount holds. Where only the file system
//! beneath folds (an SMB share mounted without `nocase`, a macOS folder shared through
//! virtiofs, 9p or FUSE, a case-insensitive FUSE file system), the kernel makes a dentry per
//! variant: `.GIT/CONFIG` opens the file of `.git/config` without crossing its mount.
//!
//! The probe costs one `lstat` where case matters (the variant is not there). Only where the
//! variant answers does it read the directory and open both names.
#![forbid(unsafe_code)]

use serde::Serialize;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// How a directory's file system treats a name under another case.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(tag = "names", rename_all = "kebab-case")]
pub enum NameCase {
    /// A name with its case changed is another name: nothing, or another entry.
    Exact,
    /// The variant reaches the same dentry: the kernel folds case (a mount on the name holds
    /// for every variant).
    FoldedByKernel,
    /// The file system finds the variant, but the kernel made a dentry of its own for it: a
    /// mount on the name does not hold for the variant.
    FoldedBeneath {
        /// The file system's type, as `statfs` names it (`fuse`, `cifs`, `9p`, ...).
        fs: String,
    },
    /// No name to try: the entry has no ASCII letter, or has no directory.
    Untold,
}

/// `name` with the case of its ASCII letters flipped; `None` when it has none.
pub fn flip_case(name: &OsStr) -> Option<OsString> {
    let b = name.as_bytes();
    if !b.iter().any(u8::is_ascii_alphabetic) {
        return None;
    }
    let flipped = b
        .iter()
        .map(|c| match c {
            b'a'..=b'z' => c.to_ascii_uppercase(),
            b'A'..=b'Z' => c.to_ascii_lowercase(),
            _ => *c,
        })
        .collect();
    Some(OsString::from_vec(flipped))
}

/// What the probe saw, for [`decide`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seen {
    /// Something answers to the case variant.
    pub variant_found: bool,
    /// The variant is an entry of the directory's own (the listing names it exactly).
    pub variant_listed: bool,
    /// Both names open to one dentry; `None` when that could not be asked.
    pub same_dentry: Option<bool>,
}

/// The verdict from what the probe saw. A variant found but not listed is the file system
/// folding; which dentry it opens says whether the kernel knows. When that cannot be asked,
/// the mounts cannot be shown to hold.
pub fn decide(seen: Seen, fs: impl FnOnce() -> String) -> NameCase {
    match seen {
        Seen {
            variant_found: false,
            ..
        }
        | Seen {
            variant_listed: true,
            ..
        } => NameCase::Exact,
        Seen {
            same_dentry: Some(true),
            ..
        } => NameCase::FoldedByKernel,
        Seen {
            same_dentry: Some(false) | None,
            ..
        } => NameCase::FoldedBeneath { fs: fs() },
    }
}

/// How the file system holding `entry` (an existing path, not followed) treats its name under
/// another case.
pub fn probe(entry: &Path) -> NameCase {
    let (Some(dir), Some(name)) = (entry.parent(), entry.file_name()) else {
        return NameCase::Untold;
    };
    let Some(flipped) = flip_case(name) else {
        return NameCase::Untold;
    };
    let variant = dir.join(&flipped);
    // The one call where case matters.
    if variant.symlink_metadata().is_err() {
        return NameCase::Exact;
    }
    let seen = Seen {
        variant_found: true,
        variant_listed: listed(dir, &flipped),
        same_dentry: same_dentry(entry, &variant),
    };
    decide(seen, || fs_type(dir))
}

/// How the file system of `dir` treats names under another case, probed on the first of
/// `names` (entries of `dir`, from a listing the caller has) that has an ASCII letter.
pub fn probe_listed<I>(dir: &Path, names: I) -> NameCase
where
    I: IntoIterator,
    I::Item: AsRef<OsStr>,
{
    match names.into_iter().find(|n| flip_case(n.as_ref()).is_some()) {
        Some(n) => probe(&dir.join(n.as_ref())),
        None => NameCase::Untold,
    }
}

/// [`probe_listed`] on `dir`'s own listing, read only as far as the first name with a letter.
pub fn probe_dir(dir: &Path) -> NameCase {
    match std::fs::read_dir(dir) {
        Ok(rd) => probe_listed(dir, rd.flatten().map(|e| e.file_name())),
        Err(_) => NameCase::Untold,
    }
}

/// Whether `dir`'s listing names `name` exactly. A listing that fails names nothing.
fn listed(dir: &Path, name: &OsStr) -> bool {
    std::fs::read_dir(dir).is_ok_and(|rd| rd.flatten().any(|e| e.file_name() == name))
}

/// Whether `a` and `b` open to one dentry: the kernel's path of each open file, which it
/// builds from the dentry, is the same.
fn same_dentry(a: &Path, b: &Path) -> Option<bool> {
    let (fa, fb) = (open_path(a)?, open_path(b)?);
    Some(fd_path(&fa)? == fd_path(&fb)?)
}

fn open_path(p: &Path) -> Option<std::fs::File> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_NOFOLLOW)
        .open(p)
        .ok()
}

fn fd_path(f: &std::fs::File) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    std::fs::read_link(format!("/proc/self/fd/{}", f.as_raw_fd())).ok()
}

/// The file system type of `dir`, by its `statfs` magic.
pub fn fs_type(dir: &Path) -> String {
    match nix::sys::statfs::statfs(dir) {
        Ok(s) => fs_name(s.filesystem_type().0 as u64),
        Err(e) => format!("unknown ({e})"),
    }
}

/// The name of a `statfs` magic number, for the file systems that fold case beneath the
/// kernel and the common others.
pub fn fs_name(magic: u64) -> String {
    match magic {
        // virtiofs is a FUSE file system too.
        0x6573_5546 => "fuse".into(),
        0xFF53_4D42 => "cifs".into(),
        0xFE53_4D42 => "smb2".into(),
        0x517B => "smbfs".into(),
        0x0102_1997 => "9p".into(),
        0x6969 => "nfs".into(),
        0xEF53 => "ext4".into(),
        0x0102_1994 => "tmpfs".into(),
        0x4d44 => "vfat".into(),
        0x2011_BAB0 => "exfat".into(),
        other => format!("type {other:#x}"),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn flipped_names() {
        let f = |s: &str| flip_case(OsStr::new(s)).map(|o| o.into_string().unwrap());
        assert_eq!(f(".git").as_deref(), Some(".GIT"));
        assert_eq!(f(".Env.Local").as_deref(), Some(".eNV.lOCAL"));
        assert_eq!(f("été").as_deref(), Some("éTé"));
        assert_eq!(f("..."), None);
        assert_eq!(f("123_"), None);
    }

    /// Every combination of what the probe can see, and its verdict.
    #[test]
    fn verdicts() {
        let seen = |variant_found, variant_listed, same_dentry| Seen {
            variant_found,
            variant_listed,
            same_dentry,
        };
        let d = |s| decide(s, || "fuse".to_string());
        let beneath = NameCase::FoldedBeneath { fs: "fuse".into() };
        assert_eq!(d(seen(false, false, None)), NameCase::Exact);
        assert_eq!(
            d(seen(true, true, Some(false))),
            NameCase::Exact,
            "its own entry"
        );
        assert_eq!(
            d(seen(true, true, Some(true))),
            NameCase::Exact,
            "a hard link"
        );
        assert_eq!(d(seen(true, false, Some(true))), NameCase::FoldedByKernel);
        assert_eq!(d(seen(true, false, Some(false))), beneath);
        assert_eq!(
            d(seen(true, false, None)),
            beneath,
            "cannot be shown to hold"
        );
    }

    /// On the case-sensitive file system the tests run on: a variant that is not there, and
    /// one that is an entry of its own, a file or a link; a name without letters cannot tell.
    #[test]
    fn case_sensitive_directories() {
        let t = tempfile::tempdir().unwrap();
        let git = t.path().join(".git");
        std::fs::create_dir(&git).unwrap();
        std::fs::write(git.join("config"), "").unwrap();
        assert_eq!(probe(&git), NameCase::Exact);
        assert_eq!(probe(&git.join("config")), NameCase::Exact);
        std::fs::write(git.join("CONFIG"), "").unwrap();
        assert_eq!(probe(&git.join("config")), NameCase::Exact);
        std::fs::hard_link(git.join("config"), git.join("Config.x")).unwrap();
        std::fs::hard_link(git.join("config"), git.join("cONFIG.X")).unwrap();
        assert_eq!(probe(&git.join("Config.x")), NameCase::Exact);
        std::fs::write(t.path().join("123"), "").unwrap();
        assert_eq!(probe(&t.path().join("123")), NameCase::Untold);
        assert_eq!(probe(Path::new("/")), NameCase::Untold);
        let listed = [OsStr::new("123"), OsStr::new(".git")];
        assert_eq!(probe_listed(t.path(), listed), NameCase::Exact);
        assert_eq!(probe_listed(t.path(), [OsStr::new("1")]), NameCase::Untold);
        assert_eq!(probe_dir(t.path()), NameCase::Exact);
        assert_eq!(probe_dir(&t.path().join("none")), NameCase::Untold);
    }

    /// Two names of one directory open to one dentry; two entries do not.
    #[test]
    fn dentries_compared_by_the_kernel_s_path() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join("a")).unwrap();
        std::fs::create_dir(t.path().join("A")).unwrap();
        let a = t.path().join("a");
        assert_eq!(same_dentry(&a, &t.path().join("./a")), Some(true));
        assert_eq!(same_dentry(&a, &t.path().join("A")), Some(false));
        assert_eq!(same_dentry(&a, &t.path().join("none")), None);
    }

    #[test]
    fn file_system_names() {
        assert_eq!(fs_name(0x6573_5546), "fuse");
        assert_eq!(fs_name(0x1234), "type 0x1234");
        assert!(!fs_type(Path::new("/")).starts_with("unknown"));
    }
}
