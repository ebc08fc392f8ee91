//! The submodule entries of a git index: git recurses into them from the top (`git status`),
//! wherever they lie.
use std::path::PathBuf;

/// What a git index says of submodules.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Gitlinks {
    /// The paths of its submodule entries (gitlinks, mode 160000).
    pub links: Vec<PathBuf>,
    /// The hash of the shared index its `link` extension names (`git update-index
    /// --split-index`): git loads `sharedindex.HEX` beside it, and the entries there count
    /// as the index's own.
    pub shared: Option<String>,
}

/// The [`Gitlinks`] of a git index, versions 2 to 4; `None` when the file is not an index
/// this understands.
pub(super) fn index_gitlinks(index: &[u8], hash_len: usize) -> Option<Gitlinks> {
    let (links, mut pos) = entries(index, hash_len)?;
    let mut shared = None;
    // Extensions: a signature, a 32-bit size, the data; the index's hash ends the file.
    let end = index.len().checked_sub(hash_len)?;
    while pos + 8 <= end {
        let size =
            usize::try_from(u32::from_be_bytes(index[pos + 4..pos + 8].try_into().ok()?)).ok()?;
        let data = index.get(pos + 8..(pos + 8).checked_add(size)?)?;
        if &index[pos..pos + 4] == b"link" {
            let hash = data.get(..hash_len)?;
            shared = Some(hash.iter().map(|b| format!("{b:02x}")).collect());
        }
        pos += 8 + size;
    }
    Some(Gitlinks { links, shared })
}

/// The gitlinks among the entries, and where the entries end.
fn entries(index: &[u8], hash_len: usize) -> Option<(Vec<PathBuf>, usize)> {
    use std::os::unix::ffi::OsStrExt;
    let be32 = |at: usize| -> Option<u32> {
        Some(u32::from_be_bytes(index.get(at..at + 4)?.try_into().ok()?))
    };
    if index.get(..4)? != b"DIRC" {
        return None;
    }
    let version = be32(4)?;
    let count = be32(8)?;
    let mut pos = 12usize;
    let mut prev: Vec<u8> = Vec::new();
    let mut out = Vec::new();
    for _ in 0..count {
        let start = pos;
        let mode = be32(pos + 24)?;
        pos += 40 + hash_len;
        let flags = u16::from_be_bytes(index.get(pos..pos + 2)?.try_into().ok()?);
        pos += 2;
        if version >= 3 && flags & 0x4000 != 0 {
            pos += 2;
        }
        let path = if version == 4 {
            let (strip, used) = varint(index.get(pos..)?)?;
            pos += used;
            let keep = prev.len().checked_sub(strip)?;
            let end = pos + index.get(pos..)?.iter().position(|b| *b == 0)?;
            let mut p = prev[..keep].to_vec();
            p.extend_from_slice(&index[pos..end]);
            pos = end + 1;
            p
        } else {
            let end = pos + index.get(pos..)?.iter().position(|b| *b == 0)?;
            let p = index[pos..end].to_vec();
            pos = start + ((end - start + 8) & !7);
            p
        };
        if mode & 0o170000 == 0o160000 {
            out.push(PathBuf::from(std::ffi::OsStr::from_bytes(&path)));
        }
        prev = path;
    }
    Some((out, pos))
}

/// git's offset encoding of the index's version 4 path prefixes.
fn varint(b: &[u8]) -> Option<(usize, usize)> {
    let mut i = 0;
    let mut c = *b.first()?;
    let mut val = usize::from(c & 0x7f);
    while c & 0x80 != 0 {
        i += 1;
        c = *b.get(i)?;
        val = ((val + 1) << 7) | usize::from(c & 0x7f);
    }
    Some((val, i + 1))
}

#[cfg(test)]
mod tests {
    use super::{index_gitlinks, varint};

    #[test]
    fn index_gitlinks_are_found_in_versions_2_and_4() {
        fn entry(mode: u32, path: &[u8]) -> Vec<u8> {
            let mut e = vec![0u8; 24];
            e.extend_from_slice(&mode.to_be_bytes());
            e.extend_from_slice(&[0u8; 12]);
            e.extend_from_slice(&[0u8; 20]);
            e.extend_from_slice(&(path.len() as u16).to_be_bytes());
            e
        }
        let mut v2 = b"DIRC".to_vec();
        v2.extend_from_slice(&2u32.to_be_bytes());
        v2.extend_from_slice(&2u32.to_be_bytes());
        for (mode, path) in [(0o100644, b"a.txt".as_slice()), (0o160000, b"deep/sub")] {
            let start = v2.len();
            v2.extend(entry(mode, path));
            v2.extend_from_slice(path);
            let len = v2.len() - start;
            v2.resize(start + ((len + 8) & !7), 0);
        }
        let mut split = v2.clone();
        v2.extend_from_slice(&[0u8; 20]);
        assert_eq!(
            index_gitlinks(&v2, 20).unwrap_or_default().links,
            [std::path::PathBuf::from("deep/sub")]
        );
        // A split index names its shared index in its `link` extension.
        split.extend_from_slice(b"link");
        split.extend_from_slice(&40u32.to_be_bytes());
        split.extend_from_slice(&[0xab; 20]);
        split.extend_from_slice(&[0u8; 20]);
        split.extend_from_slice(&[0u8; 20]);
        let got = index_gitlinks(&split, 20).unwrap_or_default();
        assert_eq!(got.shared, Some("ab".repeat(20)));
        assert_eq!(got.links, [std::path::PathBuf::from("deep/sub")]);
        let mut v4 = b"DIRC".to_vec();
        v4.extend_from_slice(&4u32.to_be_bytes());
        v4.extend_from_slice(&2u32.to_be_bytes());
        v4.extend(entry(0o160000, b"node_modules/x"));
        v4.push(0); // strip nothing
        v4.extend_from_slice(b"node_modules/x");
        v4.push(0);
        v4.extend(entry(0o160000, b"node_modules/y"));
        v4.push(1); // strip "x", keep "node_modules/"
        v4.extend_from_slice(b"y");
        v4.push(0);
        v4.extend_from_slice(&[0u8; 20]);
        assert_eq!(
            index_gitlinks(&v4, 20).unwrap_or_default().links,
            ["node_modules/x", "node_modules/y"].map(std::path::PathBuf::from)
        );
        assert_eq!(varint(&[0x80, 0x00]), Some((128, 2)));
        assert!(index_gitlinks(b"NOPE", 20).is_none());
    }
}
