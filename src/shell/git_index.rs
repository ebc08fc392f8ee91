//! The symbolic links a repository tracks, read from its index as git writes it
//! (gitformat-index(5): versions 2, 3 and 4, SHA-1 or SHA-256 object names). `git ls-files`
//! lists what the index holds, so a link it can name is a tracked one. An index that cannot
//! be read this way answers "not known", and the caller takes every link to be tracked.

use std::path::{Path, PathBuf};

/// The type bits of a symbolic link's mode.
const SYMLINK: u32 = 0o120000;
/// An entry's fixed part before its object name: ten 32-bit fields.
const STAT_BYTES: usize = 40;

/// The tracked links of the work tree `tree` whose index is `index`, as paths under `tree`;
/// `None` when the index is not understood. No index: nothing is tracked.
pub(crate) fn tracked_links(tree: &Path, index: &Path) -> Option<Vec<PathBuf>> {
    let data = match std::fs::read(index) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(Vec::new()),
        Err(_) => return None,
    };
    // The object names' width is the one that makes every entry fit.
    [20, 32]
        .into_iter()
        .find_map(|width| links(&data, width))
        .map(|names| names.iter().map(|n| tree.join(n)).collect())
}

fn be32(data: &[u8], at: usize) -> Option<u32> {
    let b: [u8; 4] = data.get(at..at + 4)?.try_into().ok()?;
    Some(u32::from_be_bytes(b))
}

fn be16(data: &[u8], at: usize) -> Option<u16> {
    let b: [u8; 2] = data.get(at..at + 2)?.try_into().ok()?;
    Some(u16::from_be_bytes(b))
}

/// The names of the link entries, object names `width` bytes wide.
fn links(data: &[u8], width: usize) -> Option<Vec<String>> {
    if data.get(..4)? != b"DIRC" {
        return None;
    }
    let version = be32(data, 4)?;
    let count = be32(data, 8)?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let mut at = 12;
    let mut name: Vec<u8> = Vec::new();
    let mut out = Vec::new();
    for _ in 0..count {
        let start = at;
        let mode = be32(data, at + 24)?;
        at += STAT_BYTES + width;
        let flags = be16(data, at)?;
        at += 2;
        if version >= 3 && flags & 0x4000 != 0 {
            at += 2;
        }
        if version == 4 {
            let (strip, used) = varint(data.get(at..)?)?;
            at += used;
            name.truncate(name.len().checked_sub(strip)?);
        } else {
            name.clear();
        }
        let end = at + data.get(at..)?.iter().position(|b| *b == 0)?;
        name.extend_from_slice(data.get(at..end)?);
        at = end + 1;
        if version < 4 {
            // NULs pad the entry to a multiple of eight bytes, the name's own included.
            at = start + (at - start).div_ceil(8) * 8;
        }
        if mode & 0o170000 == SYMLINK {
            out.push(String::from_utf8(name.clone()).ok()?);
        }
    }
    // What follows the entries is extensions and the checksum: at least the checksum.
    (data.len() >= at + width).then_some(out)
}

/// git's offset encoding of version 4's prefix length: the value and the bytes it took.
fn varint(data: &[u8]) -> Option<(usize, usize)> {
    let mut bytes = data.iter();
    let mut b = *bytes.next()?;
    let mut value = usize::from(b & 0x7f);
    let mut used = 1;
    while b & 0x80 != 0 {
        b = *bytes.next()?;
        value = value.checked_add(1)?.checked_mul(128)? + usize::from(b & 0x7f);
        used += 1;
    }
    Some((value, used))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", dir)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }

    /// A repository with a tracked link, an untracked one and files, read at each index
    /// version, against what git itself lists.
    #[test]
    fn the_links_git_lists() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        git(root, &["init", "-q"]);
        std::fs::create_dir_all(root.join("deep/er")).unwrap();
        std::fs::write(root.join("deep/er/file"), "x").unwrap();
        std::os::unix::fs::symlink("/etc/hostname", root.join("deep/er/tracked")).unwrap();
        std::os::unix::fs::symlink("../x", root.join("deep/link2")).unwrap();
        git(root, &["add", "."]);
        std::os::unix::fs::symlink("/etc/hostname", root.join("untracked")).unwrap();
        for v in ["2", "3", "4"] {
            git(root, &["update-index", "--index-version", v]);
            let got = tracked_links(root, &root.join(".git/index"));
            assert_eq!(
                got,
                Some(vec![root.join("deep/er/tracked"), root.join("deep/link2")]),
                "index version {v}"
            );
        }
    }

    #[test]
    fn an_index_not_understood_is_not_known() {
        let d = tempfile::tempdir().unwrap();
        let index = d.path().join("index");
        std::fs::write(&index, b"DIRC\0\0\0\x02\0\0\0\x05short").unwrap();
        assert_eq!(tracked_links(d.path(), &index), None);
        assert_eq!(
            tracked_links(d.path(), &d.path().join("none")),
            Some(Vec::new())
        );
    }
}
