//! Sets and maps keyed by a path's bytes, with a cheap hash. Planning looks up every denied
//! path several times (the built-in secrets list has over a hundred); `Path`'s own `Hash`
//! parses components and SipHash guards against inputs chosen to collide, which paths from
//! profiles and the local file system are not.
#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::hash::{BuildHasherDefault, Hasher};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// The Fx hash (rustc's): one rotate, xor and multiply per eight bytes.
#[derive(Default)]
pub struct WordHash(u64);

impl WordHash {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for WordHash {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            let mut b = [0u8; 8];
            b.copy_from_slice(w);
            self.add(u64::from_le_bytes(b));
        }
        let rest = words.remainder();
        let mut b = [0u8; 8];
        b[..rest.len()].copy_from_slice(rest);
        // The length keeps `a` and `a\0` apart.
        self.add(u64::from_le_bytes(b) ^ ((rest.len() as u64) << 59));
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Paths (as their bytes, so compare normalised ones) to values.
pub type PathMap<V> = HashMap<OsString, V, BuildHasherDefault<WordHash>>;

/// `path` is `base` or lies beneath it, both normal (absolute or relative alike, no `.` or `..`
/// components, no repeated `/`). Comparing bytes with a separator check agrees with
/// `Path::starts_with` there at a fraction of its cost, which parses every component of both:
/// planning asks it for every denied path against every grant.
pub fn under(path: &Path, base: &Path) -> bool {
    let (p, b) = (path.as_os_str().as_bytes(), base.as_os_str().as_bytes());
    // A path written `/root/.` or `//root` (a `HOME` as the caller set it) is not normal:
    // `Path` reads it as `/root`.
    if !plain(p) || !plain(b) {
        return path.starts_with(base);
    }
    under_clean(path, base)
}

/// [`under`] for paths known to be clean (no `//`, no `.` component), as the policy's path
/// patterns and the paths judged against them are: it meets every path rule of its family for
/// every path a call names, a thousand rules a call.
pub fn under_clean(path: &Path, base: &Path) -> bool {
    let (p, mut b) = (path.as_os_str().as_bytes(), base.as_os_str().as_bytes());
    while b.len() > 1 && b.ends_with(b"/") {
        b = &b[..b.len() - 1];
    }
    if b == b"/" {
        return p.first() == Some(&b'/');
    }
    p.starts_with(b) && matches!(p.get(b.len()), None | Some(b'/'))
}

/// Whether `b` holds no `//` and no `.` component, which `Path` skips and bytes do not.
fn plain(b: &[u8]) -> bool {
    !b.windows(2).any(|w| w == b"//")
        && !b.windows(3).any(|w| w == b"/./")
        && !b.ends_with(b"/.")
        && !b.starts_with(b"./")
}

/// The parent and last component of an absolute path without a trailing `/`, found by one
/// byte search (`Path::parent` parses every component); `None` for `/`, for a last component
/// `.` or `..`, and for anything else.
pub fn split_last(path: &OsStr) -> Option<(&OsStr, &OsStr)> {
    let b = path.as_bytes();
    if b.len() < 2 || b[0] != b'/' || b.ends_with(b"/") {
        return None;
    }
    let i = b.iter().rposition(|c| *c == b'/')?;
    let parent = if i == 0 { &b[..1] } else { &b[..i] };
    let name = &b[i + 1..];
    // A `.` or `..` is no entry of a listing: such a path is looked up as it is.
    if name == b"." || name == b".." {
        return None;
    }
    Some((OsStr::from_bytes(parent), OsStr::from_bytes(name)))
}

/// `dir` joined with `name`, one name without `/`: `Path::join` checks whether what it joins
/// is absolute and parses `dir`'s end, some six hundred instructions, and following the denied
/// paths' links joins a thousand names a plan.
pub fn child(dir: &Path, name: &OsStr) -> PathBuf {
    let (d, n) = (dir.as_os_str().as_bytes(), name.as_bytes());
    let mut b = Vec::with_capacity(d.len() + 1 + n.len());
    b.extend_from_slice(d);
    if !d.ends_with(b"/") {
        b.push(b'/');
    }
    b.extend_from_slice(n);
    PathBuf::from(OsString::from_vec(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where both are normal, the byte comparison answers as `Path::starts_with`.
    #[test]
    fn under_agrees_with_starts_with() {
        let paths = [
            "/", "/a", "/a/b", "/ab", "/a/bc", "/a/b/c", "a", "a/b", "ab",
        ];
        for p in paths {
            for b in paths {
                let (p, b) = (Path::new(p), Path::new(b));
                assert_eq!(under(p, b), p.starts_with(b), "{p:?} under {b:?}");
            }
        }
        assert!(under(Path::new("/a/b"), Path::new("/a/")));
        assert!(!under(Path::new("/ab"), Path::new("/a/")));
    }

    #[test]
    fn child_agrees_with_join() {
        for (d, n) in [("/", "a"), ("/a", "b"), ("/a/", "b"), ("a", "b")] {
            let (d, n) = (Path::new(d), OsStr::new(n));
            assert_eq!(child(d, n), d.join(n));
        }
    }

    #[test]
    fn last_component_split() {
        let s = |p: &str| split_last(OsStr::new(p)).map(|(a, b)| (a.to_owned(), b.to_owned()));
        assert_eq!(s("/a/b"), Some(("/a".into(), "b".into())));
        assert_eq!(s("/a"), Some(("/".into(), "a".into())));
        assert_eq!(s("/"), None);
        assert_eq!(s("/a/"), None);
        assert_eq!(s("a/b"), None);
        assert_eq!(s("/a/.."), None);
        assert_eq!(s("/a/./b"), Some(("/a/.".into(), "b".into())));
    }
}
