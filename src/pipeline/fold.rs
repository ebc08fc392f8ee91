//! Case variants of a protected path. On a file system that folds case (ext4, f2fs or tmpfs
//! directories with the casefold attribute, vfat, exfat, case-insensitive FUSE file systems),
//! `~/.SSH/id_rsa` names the file `~/.ssh/id_rsa`, and the kernel, which resolves names the
//! same way, hides or protects it; the gate must see the same file. A path is taken for a
//! protected one only when it matches it ignoring case and the file system says so: the two
//! name one inode, or, for a path that does not exist yet, its directory folds case.
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
    let Some(prefix) = case_variant_prefix(path, root) else {
        return false;
    };
    same_file(&prefix, root) || (root.symlink_metadata().is_err() && folds_to(&prefix, root))
}

/// The first components of `path` when they equal `root`'s ignoring case (and not exactly).
fn case_variant_prefix(path: &Path, root: &Path) -> Option<PathBuf> {
    let mut p = path.components();
    let mut prefix = PathBuf::new();
    for r in root.components() {
        let c = p.next()?;
        if !same_ignoring_case(c, r) {
            return None;
        }
        prefix.push(c);
    }
    Some(prefix)
}

fn same_ignoring_case(a: Component<'_>, b: Component<'_>) -> bool {
    let (a, b) = (a.as_os_str(), b.as_os_str());
    if a.as_bytes().eq_ignore_ascii_case(b.as_bytes()) {
        return true;
    }
    let folded = |s: &OsStr| s.to_str().map(fold);
    (!a.is_ascii() || !b.is_ascii()) && folded(a).is_some_and(|x| Some(x) == folded(b))
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
/// in the same directory and it folds case.
fn folds_to(prefix: &Path, root: &Path) -> bool {
    let (Some(dir), Some(rdir)) = (prefix.parent(), root.parent()) else {
        return false;
    };
    (dir == rdir || same_file(dir, rdir)) && dir_folds_case(dir)
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

    #[test]
    fn case_variant_prefixes() {
        let p = |a: &str, b: &str| case_variant_prefix(Path::new(a), Path::new(b));
        assert_eq!(p("/h/.SSH/id", "/h/.ssh"), Some(PathBuf::from("/h/.SSH")));
        assert_eq!(p("/h/.ssh2/id", "/h/.ssh"), None);
        assert_eq!(p("/h", "/h/.ssh"), None);
        assert_eq!(p("/h/ÉTÉ/x", "/h/été"), Some(PathBuf::from("/h/ÉTÉ")));
        assert_eq!(p("/h/.sſh/x", "/h/.ssh"), Some(PathBuf::from("/h/.sſh")));
        assert_eq!(
            p("/h/\u{212A}ey", "/h/key"),
            Some(PathBuf::from("/h/\u{212A}ey"))
        );
    }
}
