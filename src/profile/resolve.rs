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

    /// Directories the profile asks to exist (`+` prefix): created by the executor before the
    /// sandbox starts.
    pub fn dirs_to_create(&self, vars: &Vars) -> Vec<PathBuf> {
        plus_paths(
            self.read.iter().chain(&self.write).chain(&self.execute),
            vars,
        )
    }

    /// The `deny_write` patterns inside the workspace, substituted but not expanded.
    fn watched(&self, vars: &Vars) -> Vec<PathEntry> {
        self.deny_write
            .iter()
            .map(|p| PathEntry {
                // Always a glob, the variables escaped, so that it matches what it names.
                path: normalize(Path::new(&substitute_escaped(
                    p.pattern.strip_prefix('?').unwrap_or(&p.pattern),
                    vars,
                ))),
                required: false,
                origin: p.origin.clone(),
            })
            .filter(|e| {
                let ws = glob::Pattern::escape(&vars.workspace.to_string_lossy());
                e.path != Path::new(&ws) && e.path.starts_with(&ws)
            })
            .collect()
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
                deny_write: with_gitlink(expand_all(&self.deny_write, vars, false)?, vars),
                watch: self.watched(vars),
                protected_change: self.protected_change.0,
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

/// When the profile keeps paths under `{workspace}/.git` read-only, more paths that steer git
/// stay read-only: `.git` itself when it is a file (a linked worktree's or a submodule's,
/// naming its git directory elsewhere), so that it cannot be pointed at a copy with other
/// hooks; the directory `core.hooksPath` names inside the workspace (`.husky`, say), from the
/// repository's config or the user's global one, whose scripts git runs instead of
/// `.git/hooks`; and config files the repository's config includes from the workspace.
fn with_gitlink(mut deny_write: Vec<PathEntry>, vars: &Vars) -> Vec<PathEntry> {
    let dot_git = vars.workspace.join(".git");
    let Some(origin) = deny_write
        .iter()
        .find(|e| e.path.starts_with(&dot_git) && e.path != dot_git)
        .map(|e| e.origin.clone())
    else {
        return deny_write;
    };
    let meta = dot_git.symlink_metadata();
    let mut extra = Vec::new();
    if meta.as_ref().is_ok_and(|m| m.is_file()) {
        extra.push(dot_git.clone());
    }
    if meta.is_ok_and(|m| m.is_dir()) {
        let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
        let (hooks, includes) =
            crate::gitconfig::hooks_and_includes(&read(&dot_git.join("config")));
        let xdg = std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| vars.home.join(".config"));
        // ~/.gitconfig is read after the XDG file, so its value wins.
        let global = [vars.home.join(".gitconfig"), xdg.join("git/config")]
            .iter()
            .find_map(|p| crate::gitconfig::hooks_and_includes(&read(p)).0);
        // A relative hooksPath is the worktree's; an include is relative to the config file.
        let not_home = |p: &String| !p.starts_with('~');
        extra.extend(
            hooks
                .or(global)
                .filter(not_home)
                .map(|h| vars.workspace.join(h)),
        );
        extra.extend(
            includes
                .iter()
                .filter(|i| not_home(i))
                .map(|i| dot_git.join(i)),
        );
    }
    for path in extra {
        let path = normalize(&path);
        let inside = path.starts_with(&vars.workspace) && path != vars.workspace;
        if inside && !deny_write.iter().any(|e| e.path == path) {
            deny_write.push(PathEntry {
                path,
                required: false,
                origin: origin.clone(),
            });
        }
    }
    deny_write
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

/// [`substitute`] with each value escaped for a glob.
fn substitute_escaped(s: &str, vars: &Vars) -> String {
    let esc = |p: &Path| glob::Pattern::escape(&p.to_string_lossy());
    s.replace("{workspace}", &esc(&vars.workspace))
        .replace("{home}", &esc(&vars.home))
        .replace("{tmp}", &esc(&vars.tmp))
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
        // Whether it is a glob is the profile's say, not the variables' (a workspace named
        // `w[1]`): their values are escaped inside a glob.
        let is_glob = s.contains(['*', '?', '[']);
        let s = if is_glob {
            substitute_escaped(s, vars)
        } else {
            substitute(s, vars)
        };
        let paths: Vec<PathBuf> = if is_glob {
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
