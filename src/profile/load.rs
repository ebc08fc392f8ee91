//! Loading a profile: built-ins by name or files by path, parsing with origins for every
//! entry, `extends` applied base first, and path patterns validated.
#![forbid(unsafe_code)]

use super::limits::{
    LimitKey, LimitParser, LimitValue, parse_count, parse_duration_secs, parse_size,
};
use super::raw::{RawEnv, RawFs, RawIsolation, RawLimits, RawProfile};
use super::{Profile, ProfileError, ProfilePath};
use crate::capability::{
    DeniedSyscall, EnvFilter, Isolation, NetworkMode, Origin, ProtectedChange, Requirement,
};
use crate::environment::pattern_error;
use crate::lines::LineIndex;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use toml::Spanned;

/// The text of a file in `profiles/` as compiled in: without its comments (build.rs), with
/// its lines where they are in the file.
macro_rules! builtin_text {
    ($file:literal) => {
        include_str!(concat!(env!("OUT_DIR"), "/profiles/", $file))
    };
}

/// A built-in as build.rs digests it: its text with the `[filesystem]` arrays emptied, and
/// their entries as records (`KEY LINE VALUE` lines, KEY an index into [`FS_ARRAYS`]).
macro_rules! builtin_digest {
    ($name:literal) => {
        (
            $name,
            include_str!(concat!(
                env!("OUT_DIR"),
                "/profiles/",
                $name,
                ".digest.toml"
            )),
            include_str!(concat!(env!("OUT_DIR"), "/profiles/", $name, ".records")),
        )
    };
}

/// The built-ins as loaded: the same profiles as [`BUILTIN`], their path lists read from
/// records instead of TOML (build.rs `digest_filesystem`).
const DIGESTED: &[(&str, &str, &str)] = &[
    builtin_digest!("base"),
    builtin_digest!("read-only"),
    builtin_digest!("workspace"),
    builtin_digest!("workspace-net"),
    builtin_digest!("workspace-registries"),
    builtin_digest!("strict"),
    builtin_digest!("ci"),
];

/// The `[filesystem]` path lists, in the order of the records' keys (build.rs `FS_ARRAYS`).
const FS_ARRAYS: [&str; 5] = [
    "filesystem.read",
    "filesystem.write",
    "filesystem.execute",
    "filesystem.deny_read",
    "filesystem.deny_write",
];

/// Built-in profiles, compiled into the binary (without comments: `profiles/` explains them).
pub const BUILTIN: &[(&str, &str)] = &[
    ("base", builtin_text!("base.toml")),
    ("read-only", builtin_text!("read-only.toml")),
    ("workspace", builtin_text!("workspace.toml")),
    ("workspace-net", builtin_text!("workspace-net.toml")),
    (
        "workspace-registries",
        builtin_text!("workspace-registries.toml"),
    ),
    ("strict", builtin_text!("strict.toml")),
    ("ci", builtin_text!("ci.toml")),
];

/// The permission policy each built-in profile brings, as shipped in `profiles/policy/`.
pub const BUILTIN_POLICIES: &[(&str, &str)] = &[
    ("read-only", builtin_text!("policy/read-only.toml")),
    ("workspace", builtin_text!("policy/workspace.toml")),
    ("workspace-net", builtin_text!("policy/workspace-net.toml")),
    // The registries profile reaches fewer hosts; the same calls are worth asking about.
    (
        "workspace-registries",
        builtin_text!("policy/workspace-net.toml"),
    ),
    ("strict", builtin_text!("policy/strict.toml")),
    ("ci", builtin_text!("policy/ci.toml")),
];

/// Names of the built-in profiles meant to be used directly.
pub const BUILTIN_NAMES: &[&str] = &[
    "read-only",
    "workspace",
    "workspace-net",
    "workspace-registries",
    "strict",
    "ci",
];

const MAX_EXTENDS_DEPTH: usize = 8;

struct Source {
    name: Arc<str>,
    lines: LineIndex,
    /// The keys origins were made for, each shared by all of that key's entries.
    keys: std::cell::RefCell<Vec<Arc<str>>>,
}

impl Source {
    fn new(name: &str, text: &str) -> Self {
        Self {
            name: name.into(),
            lines: LineIndex::new(text),
            keys: Default::default(),
        }
    }

    fn origin(&self, span: std::ops::Range<usize>, key: &str) -> Origin {
        self.origin_at(self.lines.line(span.start), key)
    }

    fn origin_at(&self, line: usize, key: &str) -> Origin {
        let mut keys = self.keys.borrow_mut();
        let key = match keys.iter().find(|k| &***k == key) {
            Some(k) => Arc::clone(k),
            None => {
                keys.push(key.into());
                Arc::clone(&keys[keys.len() - 1])
            }
        };
        Origin {
            source: Arc::clone(&self.name),
            line,
            key,
        }
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
            let (text, records) = DIGESTED
                .iter()
                .find(|(n, _, _)| *n == name_or_path)
                .map(|(_, t, r)| (*t, *r))
                .ok_or_else(|| ProfileError::Unknown {
                    name: name_or_path.into(),
                })?;
            let source = format!("builtin:{name_or_path}");
            let mut p = Self::parse_records(&source, text, records, depth, true)?;
            p.bring_builtin_policy(name_or_path);
            Ok(p)
        }
    }

    /// Parse profile text; `source_name` appears in errors and origins.
    pub fn parse(source_name: &str, text: &str) -> Result<Profile, ProfileError> {
        Self::parse_depth(source_name, text, 0)
    }

    fn parse_depth(source_name: &str, text: &str, depth: usize) -> Result<Profile, ProfileError> {
        Self::parse_records(source_name, text, "", depth, false)
    }

    /// [`Self::parse_depth`] with path-list entries given as records besides the text.
    fn parse_records(
        source_name: &str,
        text: &str,
        records: &str,
        depth: usize,
        builtin: bool,
    ) -> Result<Profile, ProfileError> {
        let src = Source::new(source_name, text);
        let raw: RawProfile = toml::from_str(text).map_err(|e| ProfileError::Parse {
            at: Origin {
                source: source_name.into(),
                line: e.span().map_or(0, |s| src.lines.line(s.start)),
                key: e
                    .span()
                    .and_then(|s| key_at(text, s.start))
                    .unwrap_or_default()
                    .into(),
            },
            message: e.message().trim().to_string(),
        })?;
        let mut p = Self::base(raw.extends.as_ref(), source_name, depth)?;
        p.digest = text_digest(
            &p.digest,
            source_name,
            (!builtin).then_some((text, records)),
        );
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
                if !p.requires.iter().any(|q| q.protection == prot) {
                    p.requires.push(Requirement {
                        protection: prot,
                        origin: o,
                    });
                }
            }
        }
        apply_filesystem(&mut p, raw.filesystem, &src)?;
        apply_records(&mut p, records, &src)?;
        if let Some(n) = raw.network {
            super::network::apply_network(&mut p, n, source_name, &|span, key| {
                src.origin(span, key)
            })?;
        }
        if let Some(l) = raw.limits {
            apply_limits(&mut p, l, &src)?;
        }
        if let Some(e) = raw.environment {
            apply_env(&mut p, e, &src)?;
        }
        if let Some(s) = raw.syscalls {
            for name in s.deny {
                let o = src.origin(name.span(), "syscalls.deny");
                p.extra_denied_syscalls.push(DeniedSyscall {
                    name: name.into_inner(),
                    origin: o,
                });
            }
        }
        if let Some(i) = raw.isolation {
            apply_isolation(&mut p, i, &src);
        }
        if raw.policy.is_some() {
            p.policy_sources
                .push((source_name.to_string(), text.to_string()));
        }
        refuse_plus_in_deny_write(&p)?;
        Ok(p)
    }

    /// What a file builds on: the profile it `extends` (a relative path is the extending
    /// file's), else the built-in limits for a file, else nothing for a built-in.
    fn base(
        extends: Option<&Spanned<String>>,
        source_name: &str,
        depth: usize,
    ) -> Result<Profile, ProfileError> {
        match extends {
            Some(parent) => {
                let named = parent.get_ref();
                let is_path = named.contains('/') || named.ends_with(".toml");
                let base =
                    if is_path && !named.starts_with('/') && !source_name.starts_with("builtin:") {
                        // Relative to the extending file, not to the current directory.
                        Path::new(source_name)
                            .parent()
                            .unwrap_or(Path::new("."))
                            .join(parent.get_ref())
                            .display()
                            .to_string()
                    } else {
                        parent.get_ref().clone()
                    };
                Self::load_depth(&base, depth + 1)
            }
            // A profile file that builds on nothing still starts from the built-in limits, so
            // that an unlimited resource is one written out, never one forgotten.
            None if !source_name.starts_with("builtin:") => {
                let mut p = Profile::empty();
                p.limits = Self::load_depth("base", depth + 1)?.limits;
                Ok(p)
            }
            None => Ok(Profile::empty()),
        }
    }

    /// A built-in brings its shipped policy, which replaces the one of a built-in it extends:
    /// only the nearest built-in's policy is inherited, and it comes first.
    fn bring_builtin_policy(&mut self, name: &str) {
        let shipped = |n: &str| BUILTIN_POLICIES.iter().any(|(b, _)| *b == n);
        self.policy_sources.retain(|(n, _)| !shipped(n));
        if let Some((n, text)) = BUILTIN_POLICIES.iter().find(|(b, _)| *b == name) {
            self.policy_sources
                .insert(0, ((*n).to_string(), (*text).to_string()));
        }
    }

    fn empty() -> Profile {
        Profile {
            digest: [0; 32],
            name: String::new(),
            description: String::new(),
            requires: Vec::new(),
            read: Vec::new(),
            write: Vec::new(),
            execute: Vec::new(),
            deny_read: Vec::new(),
            deny_write: Vec::new(),
            protected_change: (
                ProtectedChange::Undo,
                Origin::builtin("filesystem.protected_change (default)"),
            ),
            case_folding: (
                crate::capability::CaseFolding::Refuse,
                Origin::builtin("filesystem.case_folding (default)"),
            ),
            network: (NetworkMode::None, Origin::builtin("network.mode (default)")),
            net_rules: crate::capability::NetRules::default(),
            limits: BTreeMap::new(),
            env: EnvFilter::default(),
            env_inherit_origin: None,
            env_pass_origins: BTreeMap::new(),
            env_deny_origins: BTreeMap::new(),
            env_set_origins: BTreeMap::new(),
            extra_denied_syscalls: Vec::new(),
            isolation: Isolation::default(),
            isolation_origins: BTreeMap::new(),
            policy_sources: Vec::new(),
        }
    }
}

/// Apply one file's `[filesystem]` table: its path lists are appended (each entry validated as
/// it is added; the parent's already were), `protected_change` and `case_folding` replace the
/// parent's.
fn apply_filesystem(p: &mut Profile, fs: RawFs, src: &Source) -> Result<(), ProfileError> {
    let add = |dst: &mut Vec<ProfilePath>, items: Vec<Spanned<String>>, key: &str| {
        dst.reserve(items.len());
        for it in items {
            let origin = src.origin(it.span(), key);
            let pat = ProfilePath {
                pattern: it.into_inner(),
                origin,
            };
            validate_pattern(&pat)?;
            dst.push(pat);
        }
        Ok::<(), ProfileError>(())
    };
    add(&mut p.read, fs.read, "filesystem.read")?;
    add(&mut p.write, fs.write, "filesystem.write")?;
    add(&mut p.execute, fs.execute, "filesystem.execute")?;
    add(&mut p.deny_read, fs.deny_read, "filesystem.deny_read")?;
    add(&mut p.deny_write, fs.deny_write, "filesystem.deny_write")?;
    if let Some(c) = fs.protected_change {
        p.protected_change = (
            *c.get_ref(),
            src.origin(c.span(), "filesystem.protected_change"),
        );
    }
    if let Some(c) = fs.case_folding {
        p.case_folding = (
            *c.get_ref(),
            src.origin(c.span(), "filesystem.case_folding"),
        );
    }
    Ok(())
}

/// Append path-list entries given as records (`KEY LINE VALUE` lines) as
/// [`apply_filesystem`] appends those of the TOML arrays.
fn apply_records(p: &mut Profile, records: &str, src: &Source) -> Result<(), ProfileError> {
    let mut rest = records;
    while let Some(end) = crate::lines::find_byte(b'\n', rest.as_bytes()) {
        let record = &rest[..end];
        rest = &rest[end + 1..];
        let (key, line, value) = record_fields(record).ok_or_else(|| bad_record(src, record))?;
        let pat = ProfilePath {
            pattern: value.to_string(),
            origin: src.origin_at(line, FS_ARRAYS[key]),
        };
        validate_pattern(&pat)?;
        let dst = match key {
            0 => &mut p.read,
            1 => &mut p.write,
            2 => &mut p.execute,
            3 => &mut p.deny_read,
            _ => &mut p.deny_write,
        };
        dst.push(pat);
    }
    Ok(())
}

/// A record's key (an index into [`FS_ARRAYS`]), line and value.
fn record_fields(record: &str) -> Option<(usize, usize, &str)> {
    let b = record.as_bytes();
    let first = crate::lines::find_byte(b' ', b)?;
    let second = first + 1 + crate::lines::find_byte(b' ', &b[first + 1..])?;
    let key = record[..first]
        .parse()
        .ok()
        .filter(|k| *k < FS_ARRAYS.len())?;
    let line = record[first + 1..second].parse().ok()?;
    Some((key, line, &record[second + 1..]))
}

fn bad_record(src: &Source, record: &str) -> ProfileError {
    ProfileError::Invalid {
        at: src.origin_at(0, "filesystem"),
        message: format!("malformed built-in record `{record}`"),
    }
}

/// Apply one file's `[limits]` table: each limit it sets replaces the parent's.
fn apply_limits(p: &mut Profile, l: RawLimits, src: &Source) -> Result<(), ProfileError> {
    let fields: [(LimitKey, Option<Spanned<toml::Value>>, LimitParser); 8] = [
        (LimitKey::Timeout, l.timeout, parse_duration_secs),
        (LimitKey::Output, l.output, parse_size),
        (LimitKey::Memory, l.memory, parse_size),
        (LimitKey::Processes, l.processes, parse_count),
        (LimitKey::FileSize, l.file_size, parse_size),
        (LimitKey::CpuTime, l.cpu_time, parse_duration_secs),
        (LimitKey::OpenFiles, l.open_files, parse_count),
        (LimitKey::TmpSize, l.tmp_size, parse_size),
    ];
    for (key, v, f) in fields {
        if let Some(v) = v {
            let line = src.lines.line(v.span().start);
            let value = f(v.get_ref()).map_err(|message| ProfileError::Invalid {
                at: src.origin(v.span(), &format!("limits.{}", key.as_str())),
                message,
            })?;
            p.limits
                .insert(key, (LimitValue { value, line }, src.name.to_string()));
        }
    }
    Ok(())
}

/// Apply one file's `[isolation]` table: each switch it sets replaces the parent's.
fn apply_isolation(p: &mut Profile, i: RawIsolation, src: &Source) {
    let d = &mut p.isolation;
    let switches = [
        ("pid", i.pid, &mut d.pid),
        ("ipc", i.ipc, &mut d.ipc),
        ("scope_signals", i.scope_signals, &mut d.scope_signals),
        (
            "scope_abstract_unix",
            i.scope_abstract_unix,
            &mut d.scope_abstract_unix,
        ),
        ("private_tmp", i.private_tmp, &mut d.private_tmp),
        ("minimal_dev", i.minimal_dev, &mut d.minimal_dev),
    ];
    for (key, v, field) in switches {
        if let Some(v) = v {
            let o = src.origin(v.span(), &format!("isolation.{key}"));
            *field = *v.get_ref();
            p.isolation_origins.insert(key, o);
        }
    }
}

/// A `+` (create) in `deny_write`, from this file or one it extends, is an error.
fn refuse_plus_in_deny_write(p: &Profile) -> Result<(), ProfileError> {
    match p.deny_write.iter().find(|d| d.pattern.starts_with('+')) {
        Some(pat) => Err(ProfileError::Invalid {
            at: pat.origin.clone(),
            message: format!(
                "`{}`: `+` is not allowed in deny_write (sbx makes no placeholders in the workspace; a protected path the command creates is moved to quarantine after the run)",
                pat.pattern
            ),
        }),
        None => Ok(()),
    }
}

/// Apply one file's `[environment]` table: `inherit` replaces the parent's, `pass` and `deny`
/// are appended, `set` names replace the parent's values.
fn apply_env(p: &mut Profile, e: RawEnv, src: &Source) -> Result<(), ProfileError> {
    if let Some(i) = e.inherit {
        p.env_inherit_origin = Some(src.origin(i.span(), "environment.inherit"));
        p.env.inherit = *i.get_ref();
    }
    let lists = [
        (
            e.pass,
            "environment.pass",
            &mut p.env.pass,
            &mut p.env_pass_origins,
        ),
        (
            e.deny,
            "environment.deny",
            &mut p.env.deny,
            &mut p.env_deny_origins,
        ),
    ];
    for (items, key, list, origins) in lists {
        for v in items {
            let o = src.origin(v.span(), key);
            let v = v.into_inner();
            if let Some(message) = pattern_error(&v) {
                return Err(ProfileError::Invalid { at: o, message });
            }
            if !list.contains(&v) {
                list.push(v.clone());
            }
            origins.insert(v, o);
        }
    }
    for (k, v) in e.set {
        let o = src.origin(v.span(), "environment.set");
        if let Some(message) = pattern_error(&k).or_else(|| {
            k.ends_with('*')
                .then(|| format!("`{k}`: a fixed value needs a whole name, not a prefix"))
        }) {
            return Err(ProfileError::Invalid { at: o, message });
        }
        p.env_set_origins.insert(k.clone(), o);
        p.env.set.insert(k, v.into_inner());
    }
    Ok(())
}

/// The dotted key of the value at byte `offset`: the nearest `key =` on its line or above,
/// under the nearest table header above that (or the header itself, for an error about a
/// table). Lines of a multi-line array have no bare key and are passed over.
fn key_at(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    let end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let mut key: Option<&str> = None;
    for line in text[..end].lines().rev() {
        let t = line.trim_start();
        if let Some(header) = t.strip_prefix('[') {
            let table = header.trim_start_matches('[').split(']').next()?.trim();
            return Some(match key {
                Some(k) => format!("{table}.{k}"),
                None => table.to_string(),
            });
        }
        if key.is_none()
            && let Some((k, _)) = t.split_once('=')
        {
            let k = k.trim();
            if !k.is_empty()
                && k.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
            {
                key = Some(k);
            }
        }
    }
    key.map(str::to_string)
}

fn validate_pattern(p: &ProfilePath) -> Result<(), ProfileError> {
    let s = p.pattern.strip_prefix(['?', '+']).unwrap_or(&p.pattern);
    if let Some(rest) = s.strip_prefix("{env:") {
        return validate_env_pattern(p, s, rest);
    }
    let ok_start = s.starts_with('/')
        || s.starts_with("{workspace}")
        || s.starts_with("{home}")
        || s.starts_with("{tmp}");
    let bad = |message: String| ProfileError::Invalid {
        at: p.origin.clone(),
        message,
    };
    if !ok_start {
        return Err(bad(format!(
            "`{s}` must be absolute or start with {{workspace}}, {{home}} or {{tmp}}"
        )));
    }
    let mut rest = s;
    while let Some(i) = crate::lines::find_byte(b'{', rest.as_bytes()) {
        let tail = &rest[i..];
        let end = crate::lines::find_byte(b'}', tail.as_bytes())
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

/// A pattern that starts with `{env:NAME}`: a path the caller's environment names (a
/// credential store moved by `CARGO_HOME`, `GNUPGHOME`, `KUBECONFIG`), for a denial only: the
/// environment may say where a secret lies, never what the command may reach.
fn validate_env_pattern(p: &ProfilePath, s: &str, rest: &str) -> Result<(), ProfileError> {
    let bad = |message: String| ProfileError::Invalid {
        at: p.origin.clone(),
        message,
    };
    if !p.origin.key.starts_with("filesystem.deny_") {
        return Err(bad(format!(
            "`{s}`: {{env:...}} may start a deny_read or deny_write path only"
        )));
    }
    let end = crate::lines::find_byte(b'}', rest.as_bytes())
        .ok_or_else(|| bad(format!("unclosed `{{` in `{s}`")))?;
    let (name, tail) = (&rest[..end], &rest[end + 1..]);
    let named = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
    if !named {
        return Err(bad(format!(
            "`{s}`: `{name}` is no environment variable name (A-Z, 0-9, _)"
        )));
    }
    if !(tail.is_empty() || tail.starts_with('/')) || tail.contains('{') {
        return Err(bad(format!(
            "`{s}`: after {{env:{name}}} comes `/` and a path without variables, or nothing"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod key_tests {
    use super::key_at;

    fn key(text: &str, at: &str) -> Option<String> {
        key_at(text, text.find(at)?)
    }

    #[test]
    fn the_key_of_a_bad_value_is_found_under_its_table() {
        let t = "extends = \"workspace\"\n[network]\nmode = \"lan\"\n";
        assert_eq!(key(t, "\"lan\"").as_deref(), Some("network.mode"));
        assert_eq!(key(t, "\"workspace\"").as_deref(), Some("extends"));
        let t = "[filesystem]\nread = [\n  \"/a\",\n  \"x=y\",\n  3,\n]\n";
        assert_eq!(key(t, "3,").as_deref(), Some("filesystem.read"));
        assert_eq!(
            key("[isolation]\n", "isolation").as_deref(),
            Some("isolation")
        );
        assert_eq!(key("x\n", "x"), None);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// `case_folding` refuses by default, is replaced by a profile that extends, with its
    /// line, and takes no other value.
    #[test]
    fn case_folding_is_refuse_unless_a_profile_accepts_it() {
        use crate::capability::CaseFolding;
        let base = Profile::parse("p.toml", "extends = \"workspace\"\n").unwrap();
        assert_eq!(base.case_folding.0, CaseFolding::Refuse);
        let text = "extends = \"workspace\"\n[filesystem]\ncase_folding = \"accept\"\n";
        let p = Profile::parse("p.toml", text).unwrap();
        assert_eq!(p.case_folding.0, CaseFolding::Accept);
        assert!(
            p.case_folding.1.to_string().contains("p.toml:3"),
            "{}",
            p.case_folding.1
        );
        let bad = Profile::parse("p.toml", "[filesystem]\ncase_folding = \"ignore\"\n");
        let err = bad.unwrap_err().to_string();
        assert!(err.contains("filesystem.case_folding"), "{err}");
    }

    /// The binary embeds the built-ins without comments (build.rs): each parses to the same
    /// profile, and each default policy to the same rules, origins and lines included, as the
    /// file in `profiles/` that a reader sees.
    #[test]
    fn builtins_parse_the_same_without_comments() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles");
        for (name, embedded) in BUILTIN {
            let file = std::fs::read_to_string(dir.join(format!("{name}.toml"))).unwrap();
            assert!(
                embedded.len() < file.len() || !file.contains('#'),
                "{name} is stripped"
            );
            assert_eq!(
                embedded.lines().count(),
                file.lines().count(),
                "{name}: lines kept"
            );
            let source = format!("builtin:{name}");
            // The same profile from other texts: all but the digest of the texts is the same.
            let texts_apart = |mut p: Profile| {
                p.digest = [0; 32];
                p
            };
            let a = texts_apart(Profile::parse_depth(&source, &file, 0).unwrap());
            let b = texts_apart(Profile::parse_depth(&source, embedded, 0).unwrap());
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "{name}");
            let (_, text, records) = DIGESTED.iter().find(|(n, _, _)| n == name).unwrap();
            assert_eq!(
                text.lines().count(),
                file.lines().count(),
                "{name}: lines kept"
            );
            let c = texts_apart(Profile::parse_records(&source, text, records, 0, true).unwrap());
            assert_eq!(format!("{a:?}"), format!("{c:?}"), "{name}: digested");
        }
        // The digest takes out the long lists, which is what it is for.
        let (_, text, records) = DIGESTED.iter().find(|(n, _, _)| *n == "base").unwrap();
        assert!(records.lines().count() > 100 && !text.contains("/.ssh"));
        let env = crate::workspace::WorkspaceContext::new("/w", "/h");
        let mut policies = 0;
        for name in BUILTIN_NAMES {
            let Some(embedded) = crate::policy::profile_policy(name) else {
                continue;
            };
            // A profile may share another's policy file (checked under that name).
            let Ok(file) = std::fs::read_to_string(dir.join(format!("policy/{name}.toml"))) else {
                continue;
            };
            assert_eq!(
                embedded.lines().count(),
                file.lines().count(),
                "{name}: lines kept"
            );
            let parse = |t: &str| {
                format!(
                    "{:?}",
                    crate::policy::parse_profile_policy(t, name, &env).unwrap()
                )
            };
            // Only the embedded text is the shipped one.
            let (a, b) = (parse(&file), parse(embedded));
            assert!(a.ends_with("shipped: false }") && b.ends_with("shipped: true }"));
            assert_eq!(
                a.trim_end_matches("shipped: false }"),
                b.trim_end_matches("shipped: true }"),
                "policy of {name}"
            );
            policies += 1;
        }
        assert!(policies >= 4, "{policies}");
    }
}

#[cfg(test)]
mod policy_tests {
    use super::{BUILTIN_POLICIES, Profile};

    fn names(p: &Profile) -> Vec<&str> {
        p.policy_sources.iter().map(|(n, _)| n.as_str()).collect()
    }

    fn shipped(name: &str) -> String {
        BUILTIN_POLICIES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| (*t).to_string())
            .unwrap_or_default()
    }

    #[test]
    fn a_builtin_brings_its_own_shipped_policy_and_not_its_bases() {
        // ci extends workspace, which extends read-only: only ci's policy comes along.
        let Ok(ci) = Profile::load("ci") else {
            panic!("ci loads")
        };
        assert_eq!(names(&ci), ["ci"]);
        assert_eq!(ci.policy_sources[0].1, shipped("ci"));
        // base ships no policy.
        let Ok(base) = Profile::load("base") else {
            panic!("base loads")
        };
        assert!(base.policy_sources.is_empty());
    }

    #[test]
    fn a_file_brings_the_nearest_builtins_policy_then_each_policy_table_base_first() {
        let dir = std::env::temp_dir().join(format!("sbx-policy-sources-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let mid = dir.join("mid.toml");
        let top = dir.join("top.toml");
        let plain = dir.join("plain.toml");
        let mid_text = "extends = \"workspace-net\"\n[policy]\nask = [\"Bash(make *)\"]\n";
        let top_text = "extends = \"mid.toml\"\n[policy]\ndeny = [\"Bash(make x)\"]\n";
        let written = std::fs::write(&mid, mid_text)
            .and_then(|()| std::fs::write(&top, top_text))
            .and_then(|()| std::fs::write(&plain, "extends = \"mid.toml\"\n"));
        assert!(written.is_ok(), "{written:?}");
        let loaded = Profile::load(&top.display().to_string());
        let plain = Profile::load(&plain.display().to_string());
        let _ = std::fs::remove_dir_all(&dir);
        let (Ok(top_p), Ok(plain)) = (loaded, plain) else {
            panic!("the profiles load")
        };
        let mid_name = mid.display().to_string();
        assert_eq!(
            names(&top_p),
            [
                "workspace-net",
                mid_name.as_str(),
                &top.display().to_string()
            ]
        );
        assert_eq!(top_p.policy_sources[0].1, shipped("workspace-net"));
        assert_eq!(top_p.policy_sources[1].1, mid_text);
        assert_eq!(top_p.policy_sources[2].1, top_text);
        // A file without a [policy] table brings nothing of its own.
        assert_eq!(names(&plain), ["workspace-net", mid_name.as_str()]);
    }
}

/// The digest of a profile named `source_name` on top of the one whose digest is `base`:
/// a file's is its text's (`texts`, and records); a built-in's texts (`None`) are part of the
/// sbx binary, which a digest's user tells apart by itself, so its name stands for them.
fn text_digest(base: &[u8; 32], source_name: &str, texts: Option<(&str, &str)>) -> [u8; 32] {
    use sha2::Digest;
    let (text, records) = texts.unwrap_or_default();
    let mut h = sha2::Sha256::new();
    h.update(base);
    h.update([u8::from(texts.is_some())]);
    for part in [source_name, text, records] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    h.finalize().into()
}
