//! The TOML profile format: parsing, `extends`, variables and validation.
//!
//! A profile is data. [`Profile::resolve`] turns it into a [`CapabilitySet`]
//! with absolute paths; nothing here touches the kernel.
#![forbid(unsafe_code)]

use crate::capability::{
    CapabilitySet, EnvPolicy, FsCaps, Isolation, Limits, NetworkMode, Origin, PathEntry,
};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use toml::Spanned;

/// Built-in profiles, compiled into the binary.
pub const BUILTIN: &[(&str, &str)] = &[
    ("base", include_str!("../profiles/base.toml")),
    ("read-only", include_str!("../profiles/read-only.toml")),
    ("workspace", include_str!("../profiles/workspace.toml")),
    (
        "workspace-net",
        include_str!("../profiles/workspace-net.toml"),
    ),
    ("strict", include_str!("../profiles/strict.toml")),
    ("ci", include_str!("../profiles/ci.toml")),
];

/// Names of the built-in profiles meant to be used directly.
pub const BUILTIN_NAMES: &[&str] = &["read-only", "workspace", "workspace-net", "strict", "ci"];

const MAX_EXTENDS_DEPTH: usize = 8;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProfileError {
    #[error("unknown profile `{name}`: built-ins are {}; or give a path to a .toml file", BUILTIN_NAMES.join(", "))]
    Unknown { name: String },
    #[error("cannot read profile {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{source_name}:{line}: {message}")]
    Parse {
        source_name: String,
        line: usize,
        message: String,
    },
    #[error("{source_name}:{line}: `{key}`: {message}")]
    Invalid {
        source_name: String,
        line: usize,
        key: String,
        message: String,
    },
    #[error("profile `extends` chain is too deep or circular at `{name}`")]
    ExtendsLoop { name: String },
    #[error(
        "{origin}: required path {path} does not exist (prefix it with `?` to make it optional)"
    )]
    MissingPath { origin: Origin, path: PathBuf },
}

/// The protections a profile can demand; a missing one is a setup error, not a warning.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, serde::Serialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Protection {
    Landlock,
    LandlockNetwork,
    LandlockScope,
    Seccomp,
    UserNamespace,
    MountNamespace,
    PidNamespace,
    NetworkNamespace,
    ProcessLimit,
}

impl Protection {
    pub const ALL: &[Protection] = &[
        Protection::Landlock,
        Protection::LandlockNetwork,
        Protection::LandlockScope,
        Protection::Seccomp,
        Protection::UserNamespace,
        Protection::MountNamespace,
        Protection::PidNamespace,
        Protection::NetworkNamespace,
        Protection::ProcessLimit,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Protection::Landlock => "landlock",
            Protection::LandlockNetwork => "landlock-network",
            Protection::LandlockScope => "landlock-scope",
            Protection::Seccomp => "seccomp",
            Protection::UserNamespace => "user-namespace",
            Protection::MountNamespace => "mount-namespace",
            Protection::PidNamespace => "pid-namespace",
            Protection::NetworkNamespace => "network-namespace",
            Protection::ProcessLimit => "process-limit",
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    description: Option<String>,
    extends: Option<Spanned<String>>,
    requires: Option<Vec<Spanned<Protection>>>,
    #[serde(default)]
    filesystem: RawFs,
    network: Option<RawNetwork>,
    limits: Option<RawLimits>,
    environment: Option<RawEnv>,
    syscalls: Option<RawSyscalls>,
    isolation: Option<RawIsolation>,
    /// Permission rules; interpreted by the policy module, not here.
    policy: Option<toml::Table>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFs {
    #[serde(default)]
    read: Vec<Spanned<String>>,
    #[serde(default)]
    write: Vec<Spanned<String>>,
    #[serde(default)]
    execute: Vec<Spanned<String>>,
    #[serde(default)]
    deny_read: Vec<Spanned<String>>,
    #[serde(default)]
    deny_write: Vec<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNetwork {
    mode: Spanned<NetworkMode>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLimits {
    timeout: Option<Spanned<toml::Value>>,
    output: Option<Spanned<toml::Value>>,
    memory: Option<Spanned<toml::Value>>,
    processes: Option<Spanned<toml::Value>>,
    file_size: Option<Spanned<toml::Value>>,
    cpu_time: Option<Spanned<toml::Value>>,
    open_files: Option<Spanned<toml::Value>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEnv {
    #[serde(default)]
    pass: Vec<String>,
    #[serde(default)]
    set: BTreeMap<String, String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSyscalls {
    #[serde(default)]
    deny: Vec<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawIsolation {
    pid: Option<bool>,
    ipc: Option<bool>,
    scope_signals: Option<bool>,
    scope_abstract_unix: Option<bool>,
    private_tmp: Option<bool>,
    minimal_dev: Option<bool>,
}

/// One limit with where it was set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LimitValue {
    value: Option<u64>,
    line: usize,
}

/// A path pattern before variable substitution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathPattern {
    pub pattern: String,
    pub origin: Origin,
}

/// A parsed profile with `extends` applied; paths still hold `{workspace}`, `{home}`, `{tmp}`.
#[derive(Clone, Debug)]
pub struct Profile {
    pub name: String,
    pub description: String,
    pub requires: Vec<(Protection, Origin)>,
    pub read: Vec<PathPattern>,
    pub write: Vec<PathPattern>,
    pub execute: Vec<PathPattern>,
    pub deny_read: Vec<PathPattern>,
    pub deny_write: Vec<PathPattern>,
    pub network: (NetworkMode, Origin),
    limits: BTreeMap<&'static str, (LimitValue, String)>,
    pub env: EnvPolicy,
    pub env_origin: Vec<Origin>,
    pub extra_denied_syscalls: Vec<(String, Origin)>,
    pub isolation: Isolation,
    /// `(source name, file text)` of every file in the `extends` chain that has a `[policy]` table,
    /// base first.
    pub policy_sources: Vec<(String, String)>,
    /// The nearest built-in in the `extends` chain (the profile itself when it is one), whose
    /// default permission policy a profile file inherits.
    pub builtin_base: Option<String>,
}

/// Values substituted into path patterns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vars {
    pub workspace: PathBuf,
    pub home: PathBuf,
    pub tmp: PathBuf,
}

fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset).map_or(0, |t| t.matches('\n').count()) + 1
}

struct Source {
    name: String,
    /// Byte offset of every newline, to turn a span into a line number by binary search.
    newlines: Vec<usize>,
}

impl Source {
    fn new(name: &str, text: &str) -> Self {
        Self {
            name: name.to_string(),
            newlines: text.match_indices('\n').map(|(i, _)| i).collect(),
        }
    }

    fn origin(&self, span: std::ops::Range<usize>, key: &str) -> Origin {
        Origin {
            source: self.name.clone(),
            line: self.newlines.partition_point(|&n| n < span.start) + 1,
            key: key.into(),
        }
    }
}

/// Parses one limit's value: `None` is unlimited, `Err` names what is wrong.
type LimitParser = fn(&toml::Value) -> Result<Option<u64>, String>;

fn parse_size(v: &toml::Value) -> Result<Option<u64>, String> {
    match v {
        toml::Value::Integer(i) if *i >= 0 => Ok(Some(*i as u64)),
        toml::Value::String(s) if s == "unlimited" => Ok(None),
        toml::Value::String(s) => {
            let s = s.trim();
            let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
            let (num, unit) = s.split_at(split);
            let n: u64 = num.parse().map_err(|_| format!("`{s}` is not a size"))?;
            let mult: u64 = match unit.trim() {
                "" | "B" => 1,
                "K" | "KiB" | "k" => 1 << 10,
                "M" | "MiB" => 1 << 20,
                "G" | "GiB" => 1 << 30,
                "T" | "TiB" => 1 << 40,
                u => {
                    return Err(format!(
                        "unknown size unit `{u}` (use B, KiB, MiB, GiB, TiB)"
                    ));
                }
            };
            n.checked_mul(mult)
                .map(Some)
                .ok_or_else(|| format!("`{s}` is too large"))
        }
        _ => Err(
            "expected a non-negative integer, a string like \"512MiB\", or \"unlimited\"".into(),
        ),
    }
}

fn parse_duration_secs(v: &toml::Value) -> Result<Option<u64>, String> {
    match v {
        toml::Value::Integer(i) if *i >= 0 => Ok(Some(*i as u64)),
        toml::Value::String(s) if s == "unlimited" => Ok(None),
        toml::Value::String(s) => {
            let s = s.trim();
            let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
            let (num, unit) = s.split_at(split);
            let n: u64 = num
                .parse()
                .map_err(|_| format!("`{s}` is not a duration"))?;
            let mult = match unit {
                "" | "s" => 1,
                "m" => 60,
                "h" => 3600,
                u => return Err(format!("unknown duration unit `{u}` (use s, m, h)")),
            };
            Ok(Some(n * mult))
        }
        _ => Err("expected seconds as an integer, a string like \"10m\", or \"unlimited\"".into()),
    }
}

fn parse_count(v: &toml::Value) -> Result<Option<u64>, String> {
    match v {
        toml::Value::Integer(i) if *i > 0 => Ok(Some(*i as u64)),
        toml::Value::String(s) if s == "unlimited" => Ok(None),
        _ => Err("expected a positive integer or \"unlimited\"".into()),
    }
}

impl Profile {
    /// Load a built-in by name, or a file when `name_or_path` contains `/` or ends in `.toml`.
    pub fn load(name_or_path: &str) -> Result<Profile, ProfileError> {
        Self::load_depth(name_or_path, 0)
    }

    fn load_depth(name_or_path: &str, depth: usize) -> Result<Profile, ProfileError> {
        if depth > MAX_EXTENDS_DEPTH {
            return Err(ProfileError::ExtendsLoop {
                name: name_or_path.into(),
            });
        }
        if name_or_path.contains('/') || name_or_path.ends_with(".toml") {
            let path = PathBuf::from(name_or_path);
            let text = std::fs::read_to_string(&path).map_err(|source| ProfileError::Read {
                path: path.clone(),
                source,
            })?;
            let name = path.display().to_string();
            Self::parse_depth(&name, &text, depth)
        } else {
            let text = BUILTIN
                .iter()
                .find(|(n, _)| *n == name_or_path)
                .map(|(_, t)| *t)
                .ok_or_else(|| ProfileError::Unknown {
                    name: name_or_path.into(),
                })?;
            let mut p = Self::parse_depth(&format!("builtin:{name_or_path}"), text, depth)?;
            p.builtin_base = Some(name_or_path.to_string());
            Ok(p)
        }
    }

    /// Parse profile text; `source_name` appears in errors and origins.
    pub fn parse(source_name: &str, text: &str) -> Result<Profile, ProfileError> {
        Self::parse_depth(source_name, text, 0)
    }

    fn parse_depth(source_name: &str, text: &str, depth: usize) -> Result<Profile, ProfileError> {
        let src = Source::new(source_name, text);
        let raw: RawProfile = toml::from_str(text).map_err(|e| ProfileError::Parse {
            source_name: source_name.into(),
            line: e.span().map_or(0, |s| line_of(text, s.start)),
            message: e.message().trim().to_string(),
        })?;
        let mut p = match &raw.extends {
            Some(parent) => {
                let base = if parent.get_ref().contains('/') && !parent.get_ref().starts_with('/') {
                    // Relative to the extending file.
                    Path::new(source_name)
                        .parent()
                        .unwrap_or(Path::new("."))
                        .join(parent.get_ref())
                        .display()
                        .to_string()
                } else {
                    parent.get_ref().clone()
                };
                Self::load_depth(&base, depth + 1)?
            }
            None => Profile::empty(),
        };
        p.name = source_name
            .strip_prefix("builtin:")
            .unwrap_or(source_name)
            .to_string();
        if let Some(d) = raw.description {
            p.description = d;
        }
        if let Some(reqs) = raw.requires {
            for r in reqs {
                let o = src.origin(r.span(), "requires");
                let prot = *r.get_ref();
                if !p.requires.iter().any(|(q, _)| *q == prot) {
                    p.requires.push((prot, o));
                }
            }
        }
        let add = |dst: &mut Vec<PathPattern>, items: Vec<Spanned<String>>, key: &str| {
            for it in items {
                let origin = src.origin(it.span(), key);
                dst.push(PathPattern {
                    pattern: it.into_inner(),
                    origin,
                });
            }
        };
        add(&mut p.read, raw.filesystem.read, "filesystem.read");
        add(&mut p.write, raw.filesystem.write, "filesystem.write");
        add(&mut p.execute, raw.filesystem.execute, "filesystem.execute");
        add(
            &mut p.deny_read,
            raw.filesystem.deny_read,
            "filesystem.deny_read",
        );
        add(
            &mut p.deny_write,
            raw.filesystem.deny_write,
            "filesystem.deny_write",
        );
        if let Some(n) = raw.network {
            p.network = (*n.mode.get_ref(), src.origin(n.mode.span(), "network.mode"));
        }
        if let Some(l) = raw.limits {
            let fields: [(&'static str, Option<Spanned<toml::Value>>, LimitParser); 7] = [
                ("timeout", l.timeout, parse_duration_secs),
                ("output", l.output, parse_size),
                ("memory", l.memory, parse_size),
                ("processes", l.processes, parse_count),
                ("file_size", l.file_size, parse_size),
                ("cpu_time", l.cpu_time, parse_duration_secs),
                ("open_files", l.open_files, parse_count),
            ];
            for (key, v, f) in fields {
                if let Some(v) = v {
                    let line = line_of(text, v.span().start);
                    let value = f(v.get_ref()).map_err(|message| ProfileError::Invalid {
                        source_name: source_name.into(),
                        line,
                        key: format!("limits.{key}"),
                        message,
                    })?;
                    p.limits
                        .insert(key, (LimitValue { value, line }, source_name.to_string()));
                }
            }
        }
        if let Some(e) = raw.environment {
            for v in e.pass {
                if !p.env.pass.contains(&v) {
                    p.env.pass.push(v);
                }
            }
            p.env.set.extend(e.set);
        }
        if let Some(s) = raw.syscalls {
            for name in s.deny {
                let o = src.origin(name.span(), "syscalls.deny");
                p.extra_denied_syscalls.push((name.into_inner(), o));
            }
        }
        if let Some(i) = raw.isolation {
            let d = &mut p.isolation;
            d.pid = i.pid.unwrap_or(d.pid);
            d.ipc = i.ipc.unwrap_or(d.ipc);
            d.scope_signals = i.scope_signals.unwrap_or(d.scope_signals);
            d.scope_abstract_unix = i.scope_abstract_unix.unwrap_or(d.scope_abstract_unix);
            d.private_tmp = i.private_tmp.unwrap_or(d.private_tmp);
            d.minimal_dev = i.minimal_dev.unwrap_or(d.minimal_dev);
        }
        if raw.policy.is_some() {
            p.policy_sources
                .push((source_name.to_string(), text.to_string()));
        }
        for pat in p
            .read
            .iter()
            .chain(&p.write)
            .chain(&p.execute)
            .chain(&p.deny_read)
            .chain(&p.deny_write)
        {
            validate_pattern(pat)?;
        }
        Ok(p)
    }

    fn empty() -> Profile {
        Profile {
            name: String::new(),
            description: String::new(),
            requires: Vec::new(),
            read: Vec::new(),
            write: Vec::new(),
            execute: Vec::new(),
            deny_read: Vec::new(),
            deny_write: Vec::new(),
            network: (NetworkMode::None, Origin::builtin("network.mode (default)")),
            limits: BTreeMap::new(),
            env: EnvPolicy::default(),
            env_origin: Vec::new(),
            extra_denied_syscalls: Vec::new(),
            isolation: Isolation::default(),
            policy_sources: Vec::new(),
            builtin_base: None,
        }
    }

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
        self.read
            .iter()
            .chain(&self.write)
            .chain(&self.execute)
            .filter_map(|p| p.pattern.strip_prefix('+'))
            .map(|s| {
                normalize(Path::new(
                    &s.replace("{workspace}", &vars.workspace.to_string_lossy())
                        .replace("{home}", &vars.home.to_string_lossy())
                        .replace("{tmp}", &vars.tmp.to_string_lossy()),
                ))
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

fn validate_pattern(p: &PathPattern) -> Result<(), ProfileError> {
    let s = p.pattern.strip_prefix(['?', '+']).unwrap_or(&p.pattern);
    let ok_start = s.starts_with('/')
        || s.starts_with("{workspace}")
        || s.starts_with("{home}")
        || s.starts_with("{tmp}");
    let bad = |message: String| ProfileError::Invalid {
        source_name: p.origin.source.clone(),
        line: p.origin.line,
        key: p.origin.key.clone(),
        message,
    };
    if !ok_start {
        return Err(bad(format!(
            "`{s}` must be absolute or start with {{workspace}}, {{home}} or {{tmp}}"
        )));
    }
    let mut rest = s;
    while let Some(i) = rest.find('{') {
        let tail = &rest[i..];
        let end = tail
            .find('}')
            .ok_or_else(|| bad(format!("unclosed `{{` in `{s}`")))?;
        let var = &tail[..=end];
        if !matches!(var, "{workspace}" | "{home}" | "{tmp}") {
            return Err(bad(format!(
                "unknown variable `{var}` (known: {{workspace}}, {{home}}, {{tmp}})"
            )));
        }
        rest = &tail[end + 1..];
    }
    Ok(())
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
        let s = s
            .replace("{workspace}", &vars.workspace.to_string_lossy())
            .replace("{home}", &vars.home.to_string_lossy())
            .replace("{tmp}", &vars.tmp.to_string_lossy());
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
