//! Globs made of literal components, `*` within a component and `**` as a whole component,
//! matched without compiling anything: the shape of nearly every path rule that is not a plain
//! path (`Edit(*secret*)`, `Read(~/.ssh/id_*)`). Compiling a glob set costs about a quarter of
//! a million instructions per rule, more than deciding a whole call; this matcher decides the
//! same question (tested against the glob set in `pattern_tests`).
#![forbid(unsafe_code)]

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// An absolute glob split into components.
#[derive(Clone, Debug)]
pub struct SimpleGlob {
    components: Vec<Vec<u8>>,
}

impl SimpleGlob {
    /// `None` unless `glob` is absolute and uses no syntax but `*` and whole-component `**`
    /// (no `?`, classes, alternatives or escapes), with no empty, `.` or `..` component.
    pub fn new(glob: &str) -> Option<Self> {
        let rest = glob.strip_prefix('/')?;
        if rest.contains(['?', '[', ']', '{', '}', '\\']) {
            return None;
        }
        let components: Vec<Vec<u8>> = rest.split('/').map(|c| c.as_bytes().to_vec()).collect();
        let plain = |c: &Vec<u8>| {
            !c.is_empty()
                && c.as_slice() != b"."
                && c.as_slice() != b".."
                && (c.as_slice() == b"**" || !c.windows(2).any(|w| w == b"**"))
        };
        // `/**` matches `/` itself in the glob set, unlike `/a/**` and `/a`: left to the set.
        let root_only = components.len() == 1 && components[0].as_slice() == b"**";
        (!root_only && components.iter().all(plain)).then_some(Self { components })
    }

    /// Does `path`, or a directory containing it, match? (The glob set it stands for holds
    /// the glob and the glob followed by `/**`.)
    pub fn matches(&self, path: &Path) -> bool {
        let Some(rest) = path.as_os_str().as_bytes().strip_prefix(b"/") else {
            return false;
        };
        // `/` itself is one empty component, which a lone `*` matches, as in the glob set.
        let parts: Vec<&[u8]> = rest.split(|b| *b == b'/').collect();
        prefix_matches(&self.components, &parts)
    }
}

/// The components of `pat` match the first components of `path` (all of them, or fewer).
fn prefix_matches(pat: &[Vec<u8>], path: &[&[u8]]) -> bool {
    match pat.split_first() {
        None => true,
        // A trailing `**` stands for at least one component (`a/**` is not `a`).
        Some((c, rest)) if c.as_slice() == b"**" && rest.is_empty() => !path.is_empty(),
        Some((c, rest)) if c.as_slice() == b"**" => {
            (0..=path.len()).any(|i| prefix_matches(rest, &path[i..]))
        }
        Some((c, rest)) => path
            .split_first()
            .is_some_and(|(p, tail)| component_matches(c, p) && prefix_matches(rest, tail)),
    }
}

/// `*` matches any run of bytes (a component holds no `/`); everything else itself.
fn component_matches(pat: &[u8], s: &[u8]) -> bool {
    let (mut p, mut i) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while i < s.len() {
        if p < pat.len() && pat[p] == b'*' {
            star = Some((p, i));
            p += 1;
        } else if p < pat.len() && pat[p] == s[i] {
            p += 1;
            i += 1;
        } else if let Some((sp, si)) = star {
            p = sp + 1;
            i = si + 1;
            star = Some((sp, si + 1));
        } else {
            return false;
        }
    }
    pat[p..].iter().all(|b| *b == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;
    use globset::{GlobBuilder, GlobSetBuilder};

    /// Every glob of up to three components over a small alphabet, against every path of up
    /// to four components over another: the same answers as the glob set of the glob and the
    /// glob followed by `/**`, which is what path rules compiled to before this matcher.
    #[test]
    fn agrees_with_the_glob_set_exhaustively() {
        let pieces = ["a", "ab", "*", "**", "a*", "*b*"];
        let names = ["a", "b", "ab", "ba", "aab"];
        let mut globs: Vec<String> = Vec::new();
        let mut level = vec![String::new()];
        for _ in 0..3 {
            level = level
                .iter()
                .flat_map(|g| pieces.iter().map(move |p| format!("{g}/{p}")))
                .collect();
            globs.extend(level.iter().cloned());
        }
        let mut paths = vec!["/".to_string()];
        let mut level = vec![String::new()];
        for _ in 0..4 {
            level = level
                .iter()
                .flat_map(|g| names.iter().map(move |p| format!("{g}/{p}")))
                .collect();
            paths.extend(level.iter().cloned());
        }
        let mut checked = 0;
        for g in &globs {
            let Some(simple) = SimpleGlob::new(g) else {
                assert_eq!(g, "/**", "only the root glob is left to the set");
                continue;
            };
            let mut b = GlobSetBuilder::new();
            for s in [g.clone(), format!("{g}/**")] {
                let glob = GlobBuilder::new(&s).literal_separator(true).build();
                assert!(glob.is_ok(), "{s}");
                b.add(glob.unwrap_or_else(|_| unreachable!()));
            }
            let set = b.build();
            assert!(set.is_ok(), "{g}");
            let Ok(set) = set else { continue };
            for p in &paths {
                assert_eq!(
                    simple.matches(Path::new(p)),
                    set.is_match(p),
                    "{g} against {p}"
                );
                checked += 1;
            }
        }
        assert!(checked > 100_000, "{checked}");
    }

    #[test]
    fn other_syntax_is_left_to_the_glob_set() {
        for g in [
            "/a/?", "/a/[b]", "/{a,b}", "/a/\\*", "/a**", "/a/./b", "/a//b", "a/b", "/**",
        ] {
            assert!(SimpleGlob::new(g).is_none(), "{g}");
        }
        assert!(SimpleGlob::new("/a/**/b*").is_some());
    }
}
