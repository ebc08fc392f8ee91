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

/// `path` is `base` or lies beneath it, as `Path::starts_with` answers (components, so `//`
/// and `.` components are skipped). Planning asks this for every denied path against every
/// grant, so bytes are compared instead, which agree with components wherever neither path
/// holds `//` or a `.` component up to their first difference: only that much of each is
/// looked at (a `HOME` set to `/root/.` or `//root` falls back to components).
pub fn under(path: &Path, base: &Path) -> bool {
    let (p, b) = (path.as_os_str().as_bytes(), base.as_os_str().as_bytes());
    let same = p.iter().zip(b).take_while(|(x, y)| x == y).count();
    // A `//` or `/.` begins at a `/`, and is seen two bytes after it.
    let seen = |x: &[u8]| plain(&x[..x.len().min(same + 3)]);
    if b.is_empty() || !seen(p) || !seen(b) {
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

/// Whether `b` holds no `//` and no `.` component, which `Path` skips and bytes do not. One
/// pass that looks only behind each `/`: planning asks this of both paths of every
/// comparison, and a search call per `/` costs more than the loop on paths this short.
fn plain(b: &[u8]) -> bool {
    if b.starts_with(b"./") {
        return false;
    }
    b.iter().enumerate().all(|(i, c)| {
        *c != b'/'
            || match b.get(i + 1) {
                Some(b'/') => false,
                Some(b'.') => !matches!(b.get(i + 2), None | Some(b'/')),
                _ => true,
            }
    })
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

    /// `under` answers as `Path::starts_with`: by bytes where both are normal, by components
    /// where either holds `//` or a `.` component.
    #[test]
    fn under_agrees_with_starts_with() {
        let paths = [
            "/", "/a", "/a/b", "/ab", "/a/bc", "/a/b/c", "a", "a/b", "ab", "//a", "/a//b",
            "/a/./b", "/a/.", "./a", "/.", "a/.", "/a/.b", "/a/..", "/.a/b", "/a/b/",
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

    /// Every path of up to six bytes of `/`, `.`, `a` and `b` against every other: the bytes
    /// looked at up to the first difference decide as the components do.
    #[test]
    fn under_agrees_with_starts_with_on_every_short_path() {
        let mut paths = vec![String::new()];
        for _ in 0..6 {
            let longer: Vec<String> = paths
                .iter()
                .filter(|p| p.len() == paths.last().map_or(0, String::len))
                .flat_map(|p| ["/", ".", "a", "b"].map(|c| format!("{p}{c}")))
                .collect();
            paths.extend(longer);
        }
        let short: Vec<&String> = paths.iter().filter(|p| p.len() <= 4).collect();
        for p in &paths {
            for b in &short {
                let (p, b) = (Path::new(p), Path::new(b.as_str()));
                assert_eq!(under(p, b), p.starts_with(b), "{p:?} under {b:?}");
            }
        }
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
