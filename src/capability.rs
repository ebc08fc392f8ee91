//! The resolved, absolute limits of one sandboxed call.
//!
//! A [`CapabilitySet`] is computed from a profile alone. It offers
//! [`CapabilitySet::intersect`] and [`CapabilitySet::is_subset_of`], and no
//! union: the permission pipeline can narrow what the profile grants, never
//! widen it.
#![forbid(unsafe_code)]

mod addr;
mod limits;
mod loaded;
mod net;
mod origins;
mod protection;

pub use crate::environment::{EnvFilter, Inherit};
pub use addr::special_kind;
pub use limits::{LimitOrigins, Limits};
pub use loaded::{LOADED_WHERE_STARTED, loaded_where_started};
pub use net::{
    Cidr, HostRule, NameVerdict, NetRules, PrivateRange, RuleError, UNLISTED, normalize_host,
    parse_cidr, parse_host_rule,
};
pub use origins::SettingOrigins;
pub use protection::{Protection, Requirement};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where a resolved entry came from: a profile file (or built-in) and line. Its texts are
/// shared: every entry a profile line expands to carries the same ones (a built-in profile
/// has hundreds of entries, planned on every run).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Origin {
    /// `builtin:workspace` or a file path.
    #[serde(deserialize_with = "shared_text")]
    pub source: Arc<str>,
    /// 1-based line in that source, 0 when synthesised.
    pub line: usize,
    /// The key that produced the entry, e.g. `filesystem.write`.
    #[serde(deserialize_with = "shared_text")]
    pub key: Arc<str>,
}

/// An origin's text as read back (a stored plan's hundreds of entries name a few sources and
/// keys): shared with the last texts read on this thread, as the profile's load shares them.
fn shared_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Arc<str>, D::Error> {
    struct Text;
    impl serde::de::Visitor<'_> for Text {
        type Value = Arc<str>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a string")
        }
        fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Arc<str>, E> {
            Ok(shared(s))
        }
    }
    d.deserialize_str(Text)
}

/// `text` as one of the texts recently shared on this thread, or as a new one kept among them.
fn shared(text: &str) -> Arc<str> {
    const KEPT: usize = 32;
    thread_local! {
        static TEXTS: std::cell::RefCell<Vec<Arc<str>>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    TEXTS.with_borrow_mut(|texts| {
        if let Some(t) = texts.iter().find(|t| ***t == *text) {
            return Arc::clone(t);
        }
        let t: Arc<str> = text.into();
        if texts.len() == KEPT {
            texts.remove(0);
        }
        texts.push(Arc::clone(&t));
        t
    })
}

impl Origin {
    /// An origin for entries that sbx adds itself.
    pub fn builtin(key: &str) -> Self {
        Self {
            source: "sbx".into(),
            line: 0,
            key: key.into(),
        }
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{} ({})", self.source, self.line, self.key)
        } else {
            write!(f, "{} ({})", self.source, self.key)
        }
    }
}

/// Both sets' homes: more homes keep more secrets out of the Landlock rules, never fewer.
fn union_homes(a: &[PathBuf], b: &[PathBuf]) -> Vec<PathBuf> {
    let mut v = a.to_vec();
    v.extend(b.iter().filter(|h| !a.contains(h)).cloned());
    v
}

/// One absolute path with its provenance and whether it must exist.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathEntry {
    /// The path, absolute and normal.
    pub path: PathBuf,
    /// A required path that is missing is a setup error; an optional one is skipped and reported.
    pub required: bool,
    /// The profile line it came from.
    pub origin: Origin,
}

/// Filesystem access, as sets of path trees.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FsCaps {
    /// Trees the command may read.
    pub read: Vec<PathEntry>,
    /// Trees the command may write.
    pub write: Vec<PathEntry>,
    /// Trees the command may execute from.
    pub execute: Vec<PathEntry>,
    /// Trees inside readable areas that stay unreadable.
    pub deny_read: Vec<PathEntry>,
    /// Trees inside writable areas that stay read-only.
    pub deny_write: Vec<PathEntry>,
    /// `deny_write` patterns inside the workspace, globs not expanded: what matches one after
    /// the run and did not exist before it is moved to quarantine (the kernel cannot refuse a
    /// name that does not exist yet).
    #[serde(default)]
    pub watch: Vec<PathEntry>,
    /// What a protected path created or changed during the run does to the run.
    #[serde(default)]
    pub protected_change: ProtectedChange,
    /// Whether a writable tree holding protected paths may lie on a file system that finds
    /// names under another case while the kernel does not fold them.
    #[serde(default)]
    pub case_folding: CaseFolding,
    /// The homes the command's secrets live in. Host programs replace files there by rename
    /// while a run goes on (an agent's state and token files, credential stores, shell
    /// history), and a rename over a file detaches the mount that hides it in the sandbox:
    /// the `deny_read` entries below a home are also kept out of the Landlock rules.
    #[serde(default)]
    pub homes: Vec<PathBuf>,
}

/// What a protected path created or changed during a run does to the run, after it has been
/// moved to quarantine. Ordered from least to most strict.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum ProtectedChange {
    /// Undone and reported; the run keeps the command's exit status.
    #[default]
    Undo,
    /// Undone, reported, and the run fails.
    Fail,
}

/// What a run does when a writable tree holding protected paths lies on a file system that
/// finds a name under another case while the kernel's name cache does not fold it (an SMB
/// share, a macOS folder shared through virtiofs, 9p or FUSE): there a case variant
/// (`.GIT/CONFIG`) reaches a read-only path around its mount, and the check after the run
/// compares names exactly. Ordered from least to most strict.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum CaseFolding {
    /// Run, with the protected names reported `partial`.
    Accept,
    /// Refuse the run, naming the file system.
    #[default]
    Refuse,
}

/// Network reach, ordered from least to most.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NetworkMode {
    /// An empty network namespace: no interfaces at all.
    None,
    /// A private network namespace with its own `lo` up.
    Loopback,
    /// Its own loopback, plus the host names `network.allow` lists, reached through a proxy
    /// that sbx runs outside the namespace.
    Proxy,
    /// The host's network.
    Host,
}

/// A syscall denied on top of the built-in baseline, and where.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeniedSyscall {
    /// The syscall's name, e.g. `ptrace`.
    pub name: String,
    /// The profile line that denies it (`syscalls.deny`).
    pub origin: Origin,
}

/// Isolation switches that are not paths.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Isolation {
    /// A private PID namespace: outside processes are invisible.
    pub pid: bool,
    /// A private IPC namespace (System V IPC, POSIX message queues).
    pub ipc: bool,
    /// Landlock scope: no signals to processes outside the sandbox.
    pub scope_signals: bool,
    /// Landlock scope: no connecting to abstract unix sockets outside the sandbox.
    pub scope_abstract_unix: bool,
    /// A private `/tmp` and `/dev/shm`.
    pub private_tmp: bool,
    /// A minimal `/dev` with only null, zero, full, random, urandom, tty and a pty.
    pub minimal_dev: bool,
}

impl Default for Isolation {
    fn default() -> Self {
        Self {
            pid: true,
            ipc: true,
            scope_signals: true,
            scope_abstract_unix: true,
            private_tmp: true,
            minimal_dev: true,
        }
    }
}

/// Everything the kernel will be asked to enforce for one call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapabilitySet {
    /// What the command may read, write and execute.
    pub fs: FsCaps,
    /// How far the command's network reaches.
    pub network: NetworkMode,
    /// The proxy's rules; used only in [`NetworkMode::Proxy`].
    #[serde(default)]
    pub net_rules: NetRules,
    /// Time, output and resource limits.
    pub limits: Limits,
    /// Namespaces and Landlock scopes beyond the paths.
    pub isolation: Isolation,
    /// Which of the caller's variables the command gets, and fixed values.
    pub env: EnvFilter,
    /// Syscalls denied on top of the built-in baseline.
    pub extra_denied_syscalls: Vec<DeniedSyscall>,
    /// Protections the run refuses to go without.
    #[serde(default)]
    pub requires: Vec<Requirement>,
    /// Where the network, isolation, environment and protection settings were written.
    #[serde(default, skip_serializing)]
    pub origins: SettingOrigins,
}

/// True when `path` equals `root` or lies beneath it (purely lexical).
pub fn path_within(path: &Path, root: &Path) -> bool {
    path.starts_with(root)
}

fn covered(path: &Path, sets: &[PathEntry]) -> bool {
    sets.iter().any(|e| path_within(path, &e.path))
}

/// Keep the entries of `a` that `b` also grants, and the parts of `b` that lie inside `a`.
fn intersect_paths(a: &[PathEntry], b: &[PathEntry]) -> Vec<PathEntry> {
    let mut out: Vec<PathEntry> = Vec::new();
    for e in a {
        if covered(&e.path, b) {
            out.push(e.clone());
        }
    }
    for e in b {
        if covered(&e.path, a) && !covered(&e.path, &out) {
            out.push(e.clone());
        }
    }
    out
}

fn union_denials(a: &[PathEntry], b: &[PathEntry]) -> Vec<PathEntry> {
    let mut out = a.to_vec();
    for e in b {
        if !out.iter().any(|o| o.path == e.path) {
            out.push(e.clone());
        }
    }
    out
}

impl Isolation {
    /// Whether a run with these switches has a private `/tmp` and `/dev/shm`: asked for, and a
    /// mount namespace to mount them in. The one answer to it: the executor picks `{tmp}` by
    /// it (from the switches resolved first, [`Profile::resolve_isolation`], with those a
    /// narrowing sets), the plan mounts the tmpfs, leaves it out of the writable trees that
    /// keep their host mount and sets `TMPDIR` by it (from the set's, the same switches).
    ///
    /// [`Profile::resolve_isolation`]: crate::profile::Profile::resolve_isolation
    pub fn private_tmp_in(self, mount_namespace: bool) -> bool {
        mount_namespace && self.private_tmp
    }

    /// Each switch set in either: the isolation of an intersection
    /// ([`CapabilitySet::intersect`]), which a run's `{tmp}` follows too.
    pub(crate) fn stricter(self, o: Self) -> Self {
        Self {
            pid: self.pid || o.pid,
            ipc: self.ipc || o.ipc,
            scope_signals: self.scope_signals || o.scope_signals,
            scope_abstract_unix: self.scope_abstract_unix || o.scope_abstract_unix,
            private_tmp: self.private_tmp || o.private_tmp,
            minimal_dev: self.minimal_dev || o.minimal_dev,
        }
    }

    /// Each switch by its profile key, with its value.
    fn switches(self) -> [(&'static str, bool); 6] {
        [
            ("pid", self.pid),
            ("ipc", self.ipc),
            ("scope_signals", self.scope_signals),
            ("scope_abstract_unix", self.scope_abstract_unix),
            ("private_tmp", self.private_tmp),
            ("minimal_dev", self.minimal_dev),
        ]
    }

    fn at_least(self, o: Self) -> bool {
        (self.pid || !o.pid)
            && (self.ipc || !o.ipc)
            && (self.scope_signals || !o.scope_signals)
            && (self.scope_abstract_unix || !o.scope_abstract_unix)
            && (self.private_tmp || !o.private_tmp)
            && (self.minimal_dev || !o.minimal_dev)
    }
}

impl CapabilitySet {
    /// The proxy rules of the intersection: one side's when only it is a proxy, else names
    /// both allow, denials of either, ranges both admit, the smaller limits.
    fn net_rules_meet(&self, other: &Self) -> NetRules {
        match (self.network, other.network) {
            (NetworkMode::Proxy, NetworkMode::Proxy) => self.net_rules.meet(&other.net_rules),
            (NetworkMode::Proxy, NetworkMode::None | NetworkMode::Loopback | NetworkMode::Host) => {
                self.net_rules.clone()
            }
            (NetworkMode::None | NetworkMode::Loopback | NetworkMode::Host, NetworkMode::Proxy) => {
                other.net_rules.clone()
            }
            (
                NetworkMode::None | NetworkMode::Loopback | NetworkMode::Host,
                NetworkMode::None | NetworkMode::Loopback | NetworkMode::Host,
            ) => NetRules::default(),
        }
    }

    /// The trees a command may write, as the workspace context carries them.
    pub fn writable_trees(&self) -> impl Iterator<Item = PathBuf> + '_ {
        self.fs.write.iter().map(|e| e.path.clone())
    }

    /// The greatest set that both `self` and `other` allow. Denials of both are kept.
    #[must_use]
    pub fn intersect(&self, other: &Self) -> Self {
        let mut extra = self.extra_denied_syscalls.clone();
        for s in &other.extra_denied_syscalls {
            if !extra.iter().any(|e| e.name == s.name) {
                extra.push(s.clone());
            }
        }
        Self {
            fs: FsCaps {
                read: intersect_paths(&self.fs.read, &other.fs.read),
                write: intersect_paths(&self.fs.write, &other.fs.write),
                execute: intersect_paths(&self.fs.execute, &other.fs.execute),
                deny_read: union_denials(&self.fs.deny_read, &other.fs.deny_read),
                deny_write: union_denials(&self.fs.deny_write, &other.fs.deny_write),
                watch: union_denials(&self.fs.watch, &other.fs.watch),
                protected_change: self.fs.protected_change.max(other.fs.protected_change),
                case_folding: self.fs.case_folding.max(other.fs.case_folding),
                homes: union_homes(&self.fs.homes, &other.fs.homes),
            },
            network: self.network.min(other.network),
            net_rules: self.net_rules_meet(other),
            limits: self.limits.meet(&other.limits),
            isolation: self.isolation.stricter(other.isolation),
            env: self.env.intersect(&other.env),
            extra_denied_syscalls: extra,
            requires: protection::union(&self.requires, &other.requires),
            origins: self.origins_meet(other),
        }
    }

    /// The origins of [`CapabilitySet::intersect`]: each setting's from the side whose value
    /// the intersection keeps, `self`'s on a tie.
    fn origins_meet(&self, other: &Self) -> SettingOrigins {
        let mut o = self.origins.meet(&other.origins);
        if other.network < self.network {
            o.network.clone_from(&other.origins.network);
        }
        if other.fs.protected_change > self.fs.protected_change {
            o.protected_change
                .clone_from(&other.origins.protected_change);
        }
        if other.fs.case_folding > self.fs.case_folding {
            o.case_folding.clone_from(&other.origins.case_folding);
        }
        // A switch only `other` turns on is on in the intersection, as `other` set it.
        let (mine, theirs) = (self.isolation.switches(), other.isolation.switches());
        for ((key, on), (_, their_on)) in mine.into_iter().zip(theirs) {
            if their_on && !on {
                match other.origins.isolation.get(key) {
                    Some(origin) => o.isolation.insert(key.to_string(), origin.clone()),
                    None => o.isolation.remove(key),
                };
            }
        }
        o
    }

    /// True when everything `self` grants, `other` grants too.
    pub fn is_subset_of(&self, other: &Self) -> bool {
        let fs_ok = |mine: &[PathEntry], theirs: &[PathEntry]| {
            mine.iter().all(|e| covered(&e.path, theirs))
        };
        let denials_kept = |mine: &[PathEntry], theirs: &[PathEntry]| {
            theirs.iter().all(|d| covered(&d.path, mine))
        };
        fs_ok(&self.fs.read, &other.fs.read)
            && fs_ok(&self.fs.write, &other.fs.write)
            && fs_ok(&self.fs.execute, &other.fs.execute)
            && denials_kept(&self.fs.deny_read, &other.fs.deny_read)
            && denials_kept(&self.fs.deny_write, &other.fs.deny_write)
            && other.fs.watch.iter().all(|w| self.fs.watch.contains(w))
            && self.fs.protected_change >= other.fs.protected_change
            && self.fs.case_folding >= other.fs.case_folding
            && self.network <= other.network
            && (self.network != NetworkMode::Proxy
                || other.network != NetworkMode::Proxy
                || self.net_rules.is_narrower_than(&other.net_rules))
            && self.limits.within(&other.limits)
            && self.isolation.at_least(other.isolation)
            && self.env.is_subset_of(&other.env)
            && other
                .extra_denied_syscalls
                .iter()
                .all(|s| self.extra_denied_syscalls.iter().any(|e| e.name == s.name))
            && protection::keeps_all(&self.requires, &other.requires)
    }
}

#[cfg(test)]
#[path = "capability_tests.rs"]
mod tests;
