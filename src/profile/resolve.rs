//! Resolving a profile for one workspace: variables substituted, globs expanded, paths made
//! absolute and normal, giving a capability set.
#![forbid(unsafe_code)]

use super::{PathPattern, Profile, ProfileError};
use crate::capability::{CapabilitySet, FsCaps, Limits, Origin, PathEntry};
use std::path::{Component, Path, PathBuf};

/// Values substituted into path patterns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vars {
    pub workspace: PathBuf,
    pub home: PathBuf,
    pub tmp: PathBuf,
}

impl Profile {
    /// Where a limit was set, for `sbx explain`.
    pub fn limit_origin(&self, key: &str) -> Option<Origin> {
        self.limits.get(key).map(|(v, src)| Origin {
            source: src.clone(),
            line: v.line,
            key: format!("limits.{key}"),
        })
    }

    /// The size of each private tmpfs: `tmp_size` when the profile sets it (`"unlimited"`
    /// included), else half of `memory`, so that `/tmp` and `/dev/shm` together hold at most
    /// the memory budget.
    pub fn tmp_size(&self) -> Option<u64> {
        match self.limits.get("tmp_size") {
            Some((v, _)) => v.value,
            None => self
                .limits
                .get("memory")
                .and_then(|(v, _)| v.value)
                .map(|m| m / 2),
        }
    }

    /// Directories the profile asks to exist (`+` prefix): created by the executor before the
    /// sandbox starts.
    pub fn dirs_to_create(&self, vars: &Vars) -> Vec<PathBuf> {
        plus_paths(
            self.read.iter().chain(&self.write).chain(&self.execute),
            vars,
        )
    }

    /// Read-only directories the profile asks to exist (`+` prefix on a `deny_write` entry):
    /// made by the executor when only the last component is missing, so that the kernel keeps
    /// them read-only rather than letting the command create them.
    pub fn denied_dirs_to_create(&self, vars: &Vars) -> Vec<PathBuf> {
        plus_paths(self.deny_write.iter(), vars)
    }

    /// Substitute variables and make every path absolute and normal.
    pub fn resolve(&self, vars: &Vars) -> Result<CapabilitySet, ProfileError> {
        let lim = |k: &str| self.limits.get(k).and_then(|(v, _)| v.value);
        Ok(CapabilitySet {
            fs: FsCaps {
                read: expand_all(&self.read, vars, true)?,
                write: expand_all(&self.write, vars, true)?,
                execute: expand_all(&self.execute, vars, true)?,
                deny_read: expand_all(&self.deny_read, vars, false)?,
                deny_write: expand_all(&self.deny_write, vars, false)?,
            },
            network: self.network.0,
            limits: Limits {
                timeout_ms: lim("timeout").map(|s| s.saturating_mul(1000)),
                output_bytes: lim("output"),
                memory_bytes: lim("memory"),
                processes: lim("processes"),
                file_size_bytes: lim("file_size"),
                cpu_seconds: lim("cpu_time"),
                open_files: lim("open_files"),
                tmp_bytes: self.tmp_size(),
            },
            isolation: self.isolation,
            env: self.env.clone(),
            extra_denied_syscalls: self
                .extra_denied_syscalls
                .iter()
                .map(|(s, _)| s.clone())
                .collect(),
        })
    }
}

/// Lexically normalise an absolute path: drop `.`, apply `..`.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
        }
    }
    out
}

/// `s` with `{workspace}`, `{home}` and `{tmp}` replaced.
fn substitute(s: &str, vars: &Vars) -> String {
    s.replace("{workspace}", &vars.workspace.to_string_lossy())
        .replace("{home}", &vars.home.to_string_lossy())
        .replace("{tmp}", &vars.tmp.to_string_lossy())
}

fn plus_paths<'a>(pats: impl Iterator<Item = &'a PathPattern>, vars: &Vars) -> Vec<PathBuf> {
    pats.filter_map(|p| p.pattern.strip_prefix('+'))
        .filter(|s| !s.contains(['*', '?', '[']))
        .map(|s| normalize(Path::new(&substitute(s, vars))))
        .collect()
}

fn expand_all(
    pats: &[PathPattern],
    vars: &Vars,
    grant: bool,
) -> Result<Vec<PathEntry>, ProfileError> {
    let mut out: Vec<PathEntry> = Vec::new();
    for p in pats {
        let (optional, s) = match (p.pattern.strip_prefix('?'), p.pattern.strip_prefix('+')) {
            (Some(rest), _) => (true, rest),
            // Created before the sandbox starts; optional so that planning without creating
            // (`sbx explain`) does not fail.
            (None, Some(rest)) => (true, rest),
            (None, None) => (!grant, p.pattern.as_str()),
        };
        let s = substitute(s, vars);
        let paths: Vec<PathBuf> = if s.contains(['*', '?', '[']) {
            glob::glob(&s)
                .map_err(|e| ProfileError::Invalid {
                    source_name: p.origin.source.clone(),
                    line: p.origin.line,
                    key: p.origin.key.clone(),
                    message: format!("bad glob `{s}`: {e}"),
                })?
                .filter_map(Result::ok)
                .collect()
        } else {
            vec![PathBuf::from(&s)]
        };
        for path in paths {
            let path = normalize(&path);
            if out.iter().any(|e| e.path == path) {
                continue;
            }
            out.push(PathEntry {
                path,
                required: !optional,
                origin: p.origin.clone(),
            });
        }
    }
    Ok(out)
}
