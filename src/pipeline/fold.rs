//! Case variants of a protected path. On a file system that folds case (ext4, f2fs or tmpfs
//! directories with the casefold attribute, vfat, exfat, case-insensitive FUSE file systems),
//! `~/.SSH/id_rsa` names the file `~/.ssh/id_rsa`, and the kernel, which resolves names the
//! same way, hides or protects it; the gate must see the same file. A path is taken for a
//! protected one only when it matches it ignoring case and the file system says so: the two
//! name one inode, or, for a path that does not exist yet, its directory folds case.
//!
//! ext4, f2fs and tmpfs fold with Unicode normalisation (the kernel's `utf8` encoding: NFD,
//! then case folding), so a composed `é` and `e` with a combining accent are one name there; on
//! vfat, exfat and FUSE file systems normalisation is the file system's own affair, and a
//! variant that differs only by it is taken for the protected name only when both name one
//! inode.
#![forbid(unsafe_code)]

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

/// `path` is `root` or lies beneath it, by bytes or, where the file system folds case, by a
/// case variant of `root`'s components.
pub fn within_folded(path: &Path, root: &Path) -> bool {
    path.starts_with(root) || case_variant_within(path, path.as_os_str().is_ascii(), root)
}

/// `path` lies at or beneath a case variant of `root` (not `root` itself) that the file
/// system takes for `root`. `ascii`: whether `path` is ASCII, known to the caller.
pub fn case_variant_within(path: &Path, ascii: bool, root: &Path) -> bool {
    let (p, r) = (path.as_os_str().as_bytes(), root.as_os_str().as_bytes());
    // The common case, both ASCII: a byte comparison, no allocation (every path a call names
    // meets every hidden and read-only entry).
    if ascii && r.is_ascii() {
        let boundary = p.len() == r.len() || p.get(r.len()) == Some(&b'/') || r == b"/";
        if p.len() < r.len() || !boundary || !p[..r.len()].eq_ignore_ascii_case(r) {
            return false;
        }
    }
    let Some((prefix, how)) = case_variant_prefix(path, root) else {
        return false;
    };
    same_file(&prefix, root) || (root.symlink_metadata().is_err() && folds_to(&prefix, root, how))
}

/// How two names were found equal.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Equal {
    /// By case folding alone.
    Case,
    /// Only once both are normalised (NFD) too.
    Normalised,
}

/// The first components of `path` when they equal `root`'s ignoring case (and not exactly),
/// and how they were found equal.
fn case_variant_prefix(path: &Path, root: &Path) -> Option<(PathBuf, Equal)> {
    let mut p = path.components();
    let mut prefix = PathBuf::new();
    let mut how = Equal::Case;
    for r in root.components() {
        let c = p.next()?;
        how = how.max(same_ignoring_case(c, r)?);
        prefix.push(c);
    }
    Some((prefix, how))
}

fn same_ignoring_case(a: Component<'_>, b: Component<'_>) -> Option<Equal> {
    let (a, b) = (a.as_os_str(), b.as_os_str());
    if a.as_bytes().eq_ignore_ascii_case(b.as_bytes()) {
        return Some(Equal::Case);
    }
    if a.is_ascii() && b.is_ascii() {
        return None;
    }
    let (a, b) = (a.to_str()?, b.to_str()?);
    if fold(a) == fold(b) {
        Some(Equal::Case)
    } else if fold_normalised(a) == fold_normalised(b) {
        Some(Equal::Normalised)
    } else {
        None
    }
}

/// `s` as ext4, f2fs and tmpfs compare names in a casefold directory: decomposed (NFD), case
/// folded, and decomposed again (a folded letter may have a decomposition of its own).
pub fn fold_normalised(s: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    let folded = fold(&s.nfd().collect::<String>());
    folded.nfd().collect()
}

/// `s` with its case folded: upper-cased, then lower-cased, so that letters whose lower case
/// differs but whose upper case agrees (`ſ` and `s`, `K` (Kelvin) and `k`, `ß` and `ss`)
/// come out equal, as the kernel's casefold tables make them.
pub fn fold(s: &str) -> String {
    s.to_uppercase().to_lowercase()
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.symlink_metadata(), b.symlink_metadata()) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// For a `root` that does not exist: would `prefix`, made now, be `root`? Yes when both lie
/// in the same directory and it folds case, with normalisation if the names needed it.
fn folds_to(prefix: &Path, root: &Path, how: Equal) -> bool {
    let (Some(dir), Some(rdir)) = (prefix.parent(), root.parent()) else {
        return false;
    };
    let normalises = how == Equal::Case || normalising_file_system(dir);
    (dir == rdir || same_file(dir, rdir)) && normalises && dir_folds_case(dir)
}

/// File systems whose casefold directories compare names normalised: the kernel's `utf8`
/// encoding (ext4, f2fs, tmpfs).
fn normalising_file_system(dir: &Path) -> bool {
    use nix::sys::statfs::{EXT4_SUPER_MAGIC, F2FS_SUPER_MAGIC, TMPFS_MAGIC, statfs};
    statfs(dir).is_ok_and(|s| {
        [EXT4_SUPER_MAGIC, F2FS_SUPER_MAGIC, TMPFS_MAGIC].contains(&s.filesystem_type())
    })
}

/// Whether looking a name up in `dir` ignores its case: an entry's name with its case flipped
/// names the same inode. A directory with no entry whose name has a letter cannot tell, and
/// is taken not to fold.
pub fn dir_folds_case(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    for e in entries.flatten().take(64) {
        let name = e.file_name();
        let flipped: Vec<u8> = name
            .as_bytes()
            .iter()
            .map(|b| match b {
                b'a'..=b'z' => b.to_ascii_uppercase(),
                b'A'..=b'Z' => b.to_ascii_lowercase(),
                _ => *b,
            })
            .collect();
        if flipped != name.as_bytes() {
            return same_file(&e.path(), &dir.join(OsStr::from_bytes(&flipped)));
        }
    }
    false
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// On a file system that does not fold case (the one tests run on), a case variant is
    /// another file: never taken for the protected one, existing or not; exact paths are.
    #[test]
    fn case_variants_on_a_case_sensitive_file_system() {
        let t = tempfile::tempdir().unwrap();
        let ssh = t.path().join(".ssh");
        std::fs::create_dir(&ssh).unwrap();
        std::fs::write(ssh.join("id_rsa"), "k").unwrap();
        assert!(within_folded(&ssh.join("id_rsa"), &ssh));
        assert!(!within_folded(&t.path().join(".SSH/id_rsa"), &ssh));
        std::fs::create_dir(t.path().join(".SSH")).unwrap();
        assert!(!within_folded(&t.path().join(".SSH/id_rsa"), &ssh));
        assert!(!within_folded(
            &t.path().join(".envrc"),
            &t.path().join(".ENVRC")
        ));
        assert!(!dir_folds_case(t.path()));
    }

    /// ext4's `utf8` casefold: a composed letter and its decomposed form are one name, in
    /// either case; letters that only look alike are not.
    #[test]
    fn normalised_folding_joins_composed_and_decomposed_letters() {
        let n = fold_normalised;
        assert_eq!(n("\u{e9}t\u{e9}"), n("e\u{301}te\u{301}"));
        assert_eq!(n("\u{c9}T\u{c9}"), n("e\u{301}te\u{301}"));
        assert_eq!(n(".\u{15b}sh"), n(".S\u{301}SH"));
        assert_eq!(n("\u{212B}"), n("\u{e5}"), "Angstrom sign and a-ring");
        assert_ne!(n("\u{e9}"), n("e"));
        assert_ne!(
            fold("\u{e9}"),
            fold("e\u{301}"),
            "plain folding does not normalise"
        );
        let same = |a: &str, b: &str| {
            same_ignoring_case(Component::Normal(a.as_ref()), Component::Normal(b.as_ref()))
        };
        assert_eq!(
            same("\u{e9}t\u{e9}", "E\u{301}TE\u{301}"),
            Some(Equal::Normalised)
        );
        assert_eq!(same("\u{c9}t\u{e9}", "\u{e9}T\u{c9}"), Some(Equal::Case));
        assert_eq!(same(".ssh", ".SSH"), Some(Equal::Case));
        assert_eq!(same("\u{e9}", "e"), None);
    }

    /// A name that equals a protected one only once normalised is that one for a missing
    /// entry only where the file system normalises: not on the case-sensitive test file
    /// system, whatever the names.
    #[test]
    fn a_normalised_variant_of_a_missing_name_needs_a_normalising_file_system() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("\u{e9}t\u{e9}");
        let decomposed = t.path().join("e\u{301}te\u{301}/x");
        assert!(!case_variant_within(&decomposed, false, &root));
        assert!(!folds_to(
            &t.path().join("e\u{301}te\u{301}"),
            &root,
            Equal::Normalised
        ));
        // tmpfs (/dev/shm) and the like are recognised by their type.
        let shm = std::path::Path::new("/dev/shm");
        if nix::sys::statfs::statfs(shm)
            .is_ok_and(|s| s.filesystem_type() == nix::sys::statfs::TMPFS_MAGIC)
        {
            assert!(normalising_file_system(shm));
        }
    }

    #[test]
    fn case_variant_prefixes() {
        let p = |a: &str, b: &str| {
            case_variant_prefix(Path::new(a), Path::new(b)).map(|(prefix, _)| prefix)
        };
        assert_eq!(p("/h/.SSH/id", "/h/.ssh"), Some(PathBuf::from("/h/.SSH")));
        assert_eq!(p("/h/.ssh2/id", "/h/.ssh"), None);
        assert_eq!(p("/h", "/h/.ssh"), None);
        assert_eq!(p("/h/ÉTÉ/x", "/h/été"), Some(PathBuf::from("/h/ÉTÉ")));
        assert_eq!(p("/h/.sſh/x", "/h/.ssh"), Some(PathBuf::from("/h/.sſh")));
        assert_eq!(
            p("/h/\u{212A}ey", "/h/key"),
            Some(PathBuf::from("/h/\u{212A}ey"))
        );
        assert_eq!(
            p("/h/e\u{301}t\u{e9}/x", "/h/\u{e9}t\u{e9}"),
            Some(PathBuf::from("/h/e\u{301}t\u{e9}"))
        );
    }
}
