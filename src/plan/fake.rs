//! A fake machine for tests: a file system held in memory and a host description, so that a
//! profile's whole road to its plan ([`Profile::resolve_in`](crate::profile::Profile::resolve_in),
//! then [`plan`](super::plan)) runs without looking at this machine.
#![forbid(unsafe_code)]

use super::DirLister;
use crate::host::{
    Availability, CgroupBase, CgroupHost, CgroupVersion, Host, LANDLOCK_ABI, NameCase,
};
use crate::profile::{FileKind, Files, normalize};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug)]
enum Entry {
    Dir,
    File(String),
    Symlink(PathBuf),
}

/// A file system in memory: directories, files with their text, symbolic links, and the
/// environment variables resolution reads. Adding a path adds its parent directories.
#[derive(Clone, Debug)]
pub struct FakeFs {
    entries: BTreeMap<PathBuf, Entry>,
    vars: BTreeMap<String, OsString>,
    /// How names fold beneath a directory, when not [`NameCase::Exact`].
    folding: BTreeMap<PathBuf, NameCase>,
}

impl Default for FakeFs {
    fn default() -> Self {
        Self::new()
    }
}

/// How many links are followed before a path counts as missing (a loop).
const MAX_LINKS: usize = 16;

impl FakeFs {
    /// A file system holding only `/`.
    pub fn new() -> Self {
        let mut entries = BTreeMap::new();
        entries.insert(PathBuf::from("/"), Entry::Dir);
        Self {
            entries,
            vars: BTreeMap::new(),
            folding: BTreeMap::new(),
        }
    }

    fn add(mut self, path: &str, entry: Entry) -> Self {
        let path = normalize(Path::new(path));
        for a in path.ancestors().skip(1) {
            self.entries.entry(a.to_path_buf()).or_insert(Entry::Dir);
        }
        self.entries.insert(path, entry);
        self
    }

    /// Add a directory.
    pub fn dir(self, path: &str) -> Self {
        self.add(path, Entry::Dir)
    }

    /// Add a file with its text.
    pub fn file(self, path: &str, text: &str) -> Self {
        self.add(path, Entry::File(text.to_string()))
    }

    /// Add a symbolic link to `target` (absolute, or relative to the link's directory).
    pub fn symlink(self, path: &str, target: &str) -> Self {
        self.add(path, Entry::Symlink(PathBuf::from(target)))
    }

    /// Make names beneath `dir` fold as `case` says (the nearest such directory decides).
    pub fn names(mut self, dir: &str, case: NameCase) -> Self {
        self.folding.insert(normalize(Path::new(dir)), case);
        self
    }

    /// Set an environment variable.
    pub fn var(mut self, name: &str, value: &str) -> Self {
        self.vars.insert(name.to_string(), value.into());
        self
    }

    /// `path` with the links in it followed (the last one too when `last` is set); `None`
    /// when a component is missing.
    fn follow(&self, path: &Path, last: bool, hops: usize) -> Option<PathBuf> {
        let path = normalize(path);
        let names: Vec<_> = path.components().skip(1).collect();
        let mut cur = PathBuf::from("/");
        for (i, name) in names.iter().enumerate() {
            cur.push(name);
            match self.entries.get(&cur)? {
                Entry::Symlink(target) if last || i + 1 < names.len() => {
                    if hops >= MAX_LINKS {
                        return None;
                    }
                    let base = cur.parent().unwrap_or(Path::new("/"));
                    cur = self.follow(&base.join(target), true, hops + 1)?;
                }
                Entry::Symlink(_) | Entry::Dir | Entry::File(_) => {}
            }
        }
        Some(cur)
    }

    fn entry(&self, path: &Path, last: bool) -> Option<(PathBuf, &Entry)> {
        let p = self.follow(path, last, 0)?;
        let e = self.entries.get(&p)?;
        Some((p, e))
    }
}

impl DirLister for FakeFs {
    fn list(&self, dir: &Path) -> Vec<PathBuf> {
        let Some((real, Entry::Dir)) = self.entry(dir, true) else {
            return Vec::new();
        };
        self.entries
            .keys()
            .filter(|p| p.parent() == Some(real.as_path()) && *p != &real)
            .filter_map(|p| p.file_name().map(|n| dir.join(n)))
            .collect()
    }

    fn is_dir(&self, path: &Path) -> bool {
        matches!(self.entry(path, true), Some((_, Entry::Dir)))
    }

    fn exists(&self, path: &Path) -> bool {
        self.entry(path, false).is_some()
    }

    fn is_symlink(&self, path: &Path) -> bool {
        matches!(self.entry(path, false), Some((_, Entry::Symlink(_))))
    }

    fn read_link(&self, path: &Path) -> Option<PathBuf> {
        Files::read_link(self, path)
    }

    fn name_case(&self, entry: &Path) -> NameCase {
        let found = entry.ancestors().skip(1).find_map(|d| self.folding.get(d));
        found.cloned().unwrap_or(NameCase::Exact)
    }

    fn name_case_in(&self, dir: &Path) -> NameCase {
        let named = |p: &PathBuf| {
            p.file_name()
                .and_then(crate::host::names::flip_case)
                .is_some()
        };
        match self.list(dir).iter().find(|p| named(p)) {
            Some(p) => self.name_case(p),
            None => NameCase::Untold,
        }
    }
}

impl Files for FakeFs {
    fn glob(&self, pattern: &str) -> Result<Vec<PathBuf>, glob::PatternError> {
        let pat = glob::Pattern::new(pattern)?;
        let opts = glob::MatchOptions {
            case_sensitive: true,
            require_literal_separator: true,
            require_literal_leading_dot: false,
        };
        Ok(self
            .entries
            .keys()
            .filter(|p| pat.matches_path_with(p, opts))
            .cloned()
            .collect())
    }

    fn kind(&self, path: &Path) -> Option<FileKind> {
        Some(match self.entry(path, false)?.1 {
            Entry::Dir => FileKind::Dir,
            Entry::File(_) => FileKind::File,
            Entry::Symlink(_) => FileKind::Symlink,
        })
    }

    fn read_link(&self, path: &Path) -> Option<PathBuf> {
        match self.entry(path, false)?.1 {
            Entry::Symlink(target) => Some(target.clone()),
            Entry::Dir | Entry::File(_) => None,
        }
    }

    fn read(&self, path: &Path) -> Option<String> {
        match self.entry(path, true)?.1 {
            Entry::File(text) => Some(text.clone()),
            Entry::Dir | Entry::Symlink(_) => None,
        }
    }

    fn var(&self, name: &str) -> Option<OsString> {
        self.vars.get(name).cloned()
    }
}

/// A host that offers everything sbx uses, for a user `euid` that is not root: Landlock at
/// [`LANDLOCK_ABI`], seccomp, user namespaces, cgroup v2 memory and pids controllers delegated
/// under `/sys/fs/cgroup/sbx`, a PID namespace's own `pid_max`.
pub fn capable_host(euid: u32) -> Host {
    let cgroup = CgroupBase {
        version: CgroupVersion::V2,
        dir: PathBuf::from("/sys/fs/cgroup/sbx"),
        enable: true,
    };
    Host {
        euid,
        egid: euid,
        landlock_abi: Some(LANDLOCK_ABI),
        landlock: Availability::Available,
        seccomp: Availability::Available,
        user_namespaces: Availability::Available,
        namespaces: Availability::Available,
        cgroups: CgroupHost {
            memory: Some(cgroup.clone()),
            pids: Some(cgroup),
            swap_bounded: true,
            missing: Availability::Available,
        },
        pid_max_per_namespace: true,
        can_drop_bounding: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_followed_inside_a_path_and_at_its_end_only_when_asked() {
        let fs = FakeFs::new()
            .dir("/usr/bin")
            .file("/usr/bin/sh", "")
            .symlink("/bin", "usr/bin")
            .symlink("/loop", "/loop");
        assert!(fs.exists(Path::new("/bin/sh")));
        assert!(fs.is_dir(Path::new("/bin")));
        assert!(fs.is_symlink(Path::new("/bin")));
        assert!(!fs.is_symlink(Path::new("/usr/bin")));
        assert_eq!(fs.kind(Path::new("/bin")), Some(FileKind::Symlink));
        assert_eq!(fs.kind(Path::new("/bin/sh")), Some(FileKind::File));
        assert_eq!(fs.list(Path::new("/bin")), [PathBuf::from("/bin/sh")]);
        assert!(!fs.is_dir(Path::new("/loop")));
        assert!(fs.exists(Path::new("/loop")));
        assert!(!fs.exists(Path::new("/nope")));
    }

    #[test]
    fn a_glob_matches_within_one_component_per_wildcard() {
        let fs = FakeFs::new()
            .file("/etc/ssh/ssh_host_rsa_key", "")
            .file("/etc/ssh/ssh_host_rsa_key.pub", "")
            .file("/etc/ssh/sub/ssh_host_x_key", "");
        assert_eq!(
            fs.glob("/etc/ssh/ssh_host_*_key").ok(),
            Some(vec![PathBuf::from("/etc/ssh/ssh_host_rsa_key")])
        );
        assert!(fs.glob("/etc/[").is_err());
    }
}
