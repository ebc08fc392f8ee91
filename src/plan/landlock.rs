//! Landlock: the rights sbx grants, the path rules for a capability set (granting around
//! denied trees, since Landlock can only add access), TCP denial and scopes.
#![forbid(unsafe_code)]

use super::{DirLister, Gap, Layer, LayerStatus, MountStep, Namespaces, PlanInput, missing};
use crate::capability::{CapabilitySet, NetworkMode, Origin, PathEntry, Protection};
use crate::host::{Availability, Host, LANDLOCK_ABI};
use crate::pathset::under;
use serde::Serialize;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Landlock filesystem rights, by name, grouped as sbx grants them.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum FsRight {
    /// Execute files.
    Execute,
    /// Read files.
    ReadFile,
    /// List directories.
    ReadDir,
    /// Write files.
    WriteFile,
    /// Truncate files.
    Truncate,
    /// Create, rename and remove entries of every kind.
    MakeAndRemove,
    /// Link or rename a file into another directory.
    Refer,
    /// ioctl on device files.
    IoctlDev,
}

/// The rights of a readable tree.
pub const READ: &[FsRight] = &[FsRight::ReadFile, FsRight::ReadDir];
/// The rights of a writable tree.
pub const WRITE: &[FsRight] = &[
    FsRight::WriteFile,
    FsRight::Truncate,
    FsRight::MakeAndRemove,
    FsRight::Refer,
    FsRight::IoctlDev,
];
/// The rights of an executable tree.
pub const EXEC: &[FsRight] = &[FsRight::Execute];

/// One Landlock path rule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct LandlockRule {
    /// The tree, as the sandboxed process sees it.
    pub path: PathBuf,
    /// What may be done beneath it.
    pub rights: Vec<FsRight>,
    /// A missing required path is a setup error; a missing optional path is skipped.
    pub required: bool,
    /// The profile line it comes from.
    pub origin: Origin,
    /// The path lies on a filesystem the sandbox mounts itself (private /tmp, /proc, /dev):
    /// the rule is added inside the sandbox after the mounts, since Landlock does not see
    /// through a mount to the directory it covers.
    pub after_mounts: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
/// The Landlock ruleset: file-system rules, TCP and scopes.
pub struct LandlockPlan {
    /// Highest ABI the rights are taken from.
    pub abi: i32,
    /// One rule per tree.
    pub rules: Vec<LandlockRule>,
    /// Deny all TCP bind and connect, except connecting to `tcp_connect`.
    pub deny_tcp: bool,
    /// TCP ports the command may connect to despite `deny_tcp`: the proxy's, on a host
    /// without network namespaces (set at launch, when the port is known).
    pub tcp_connect: Vec<u16>,
    /// No signals to processes outside the sandbox.
    pub scope_signals: bool,
    /// No connecting to abstract unix sockets outside the sandbox.
    pub scope_abstract_unix: bool,
}

fn rights_minus(a: &[FsRight], r: &[FsRight]) -> Vec<FsRight> {
    a.iter().copied().filter(|x| !r.contains(x)).collect()
}

/// Grant `rights` on `root`, but not `deny_rights` on the denied trees beneath it: grant the
/// reduced rights on `root` and the full rights on every sibling along the way to each denial.
fn grant_around(
    out: &mut Vec<LandlockRule>,
    root: &PathEntry,
    rights: &[FsRight],
    denials: &[&PathEntry],
    deny_rights: &[FsRight],
    fs: &dyn DirLister,
) {
    let inner: Vec<&PathEntry> = denials
        .iter()
        .copied()
        .filter(|d| d.path != root.path && under(&d.path, &root.path) && fs.exists(&d.path))
        .collect();
    if inner.is_empty() {
        out.push(LandlockRule {
            path: root.path.clone(),
            rights: rights.to_vec(),
            required: root.required,
            origin: root.origin.clone(),
            after_mounts: false,
        });
        return;
    }
    let reduced = rights_minus(rights, deny_rights);
    if !reduced.is_empty() {
        out.push(LandlockRule {
            path: root.path.clone(),
            rights: reduced,
            required: root.required,
            origin: root.origin.clone(),
            after_mounts: false,
        });
    }
    let removed: Vec<FsRight> = rights
        .iter()
        .copied()
        .filter(|x| deny_rights.contains(x))
        .collect();
    walk_around(out, &root.path, &removed, &inner, &root.origin, fs);
}

fn walk_around(
    out: &mut Vec<LandlockRule>,
    dir: &Path,
    rights: &[FsRight],
    denials: &[&PathEntry],
    origin: &Origin,
    fs: &dyn DirLister,
) {
    // Children of `dir` that lead towards a denial.
    let mut toward: Vec<PathBuf> = Vec::new();
    for d in denials {
        if let Ok(rest) = d.path.strip_prefix(dir)
            && let Some(first) = rest.components().next()
        {
            let child = dir.join(first);
            if !toward.contains(&child) {
                toward.push(child);
            }
        }
    }
    for child in fs.list(dir) {
        // A rule on a link would be placed on where it leads: `~/keys -> .ssh` or
        // `~/self -> .` would grant the denied tree itself. What a link leads to is granted
        // by the rules that cover it, as for a path without a link.
        if !toward.contains(&child) && !fs.is_symlink(&child) {
            out.push(LandlockRule {
                path: child,
                rights: rights.to_vec(),
                required: false,
                origin: Origin {
                    key: format!("{}{AROUND}", origin.key).into(),
                    ..origin.clone()
                },
                after_mounts: false,
            });
        }
    }
    for child in toward {
        if denials.iter().any(|d| d.path == child) {
            continue;
        }
        if fs.is_dir(&child) {
            walk_around(out, &child, rights, denials, origin, fs);
        }
    }
}

/// Whether `path` lies on a tmpfs the sandbox mounts afresh (its private /tmp) and not in a
/// tree carried over into it: the host's file there is out of the sandbox's sight anyway.
fn on_fresh_tmpfs(path: &Path, mounts: &[MountStep]) -> bool {
    mounts.iter().any(|m| match m {
        MountStep::Tmpfs { target, keep, .. } => {
            under(path, target) && !keep.iter().any(|k| under(path, k))
        }
        MountStep::Hide { .. }
        | MountStep::Proc
        | MountStep::MinimalDev
        | MountStep::Pin { .. }
        | MountStep::CoverLink { .. }
        | MountStep::ReadOnly { .. }
        | MountStep::ReadOnlyHost { .. } => false,
    })
}

/// The paths mounted over (hidden) in the sandbox: no Landlock rules are needed around them.
fn hidden_by_mounts(mounts: &[MountStep]) -> HashSet<&Path> {
    mounts
        .iter()
        .filter_map(|m| match m {
            MountStep::Hide { target, .. } => Some(target.as_path()),
            MountStep::Tmpfs { .. }
            | MountStep::Proc
            | MountStep::MinimalDev
            | MountStep::Pin { .. }
            | MountStep::CoverLink { .. }
            | MountStep::ReadOnly { .. }
            | MountStep::ReadOnlyHost { .. } => None,
        })
        .collect()
}

/// The secrets that Landlock must keep out of read grants and of write grants: those no
/// mount hides (all of them without a mount namespace), and for reads also the hidden ones in
/// a home, where host programs replace files by rename and so detach the mount. Writes leave
/// those to the mount: a home the profile makes writable keeps its own rule.
fn denials<'a>(
    caps: &'a CapabilitySet,
    mounts: &[MountStep],
    fs: &dyn DirLister,
) -> (Vec<&'a PathEntry>, Vec<&'a PathEntry>) {
    let hidden = hidden_by_mounts(mounts);
    let under_home = |p: &Path| {
        caps.fs
            .homes
            .iter()
            .any(|h| h.as_os_str().len() > 1 && under(p, h))
    };
    // Where a home's secret links lead (`~/.ssh -> /srv/keys/ssh`), the host's programs
    // replace its files as they do in the home.
    let linked_from_home: HashSet<&Path> = mounts
        .iter()
        .filter_map(|m| match m {
            MountStep::Hide {
                target,
                link: Some(l),
                ..
            } if under_home(l) => Some(target.as_path()),
            MountStep::Hide { .. }
            | MountStep::Tmpfs { .. }
            | MountStep::Proc
            | MountStep::MinimalDev
            | MountStep::Pin { .. }
            | MountStep::CoverLink { .. }
            | MountStep::ReadOnly { .. }
            | MountStep::ReadOnlyHost { .. } => None,
        })
        .collect();
    let in_home =
        |p: &Path| (under_home(p) || linked_from_home.contains(p)) && !on_fresh_tmpfs(p, mounts);
    // A denied path that does not exist needs no rules (looked up once here, not once per
    // grant it lies under).
    let (mut reads, mut writes) = (Vec::new(), Vec::new());
    for d in &caps.fs.deny_read {
        let mounted = hidden.contains(d.path.as_path());
        if (mounted && !in_home(&d.path)) || !fs.exists(&d.path) {
            continue;
        }
        reads.push(d);
        if !mounted {
            writes.push(d);
        }
    }
    (reads, writes)
}

/// The rules of the set's read, execute and write grants, each granted around the denials
/// beneath it.
fn grant_rules(
    input: &PlanInput<'_>,
    namespaces: &Namespaces,
    mounts: &[MountStep],
    fs: &dyn DirLister,
) -> Vec<LandlockRule> {
    let caps = input.caps;
    let mut rules = Vec::new();
    let (mut deny_r, mut deny_r_for_writes) = denials(caps, mounts, fs);
    // Without a mount namespace there is no minimal /dev to mount: reads are granted around
    // the host's /dev instead, and the harmless devices are granted one by one.
    let host_dev_only = !namespaces.mount && caps.isolation.minimal_dev;
    let host_dev = PathEntry {
        path: PathBuf::from("/dev"),
        required: false,
        origin: Origin::builtin("isolation.minimal_dev (no mount namespace)"),
    };
    if host_dev_only {
        deny_r.push(&host_dev);
        deny_r_for_writes.push(&host_dev);
    }
    // With a mount namespace, read-only mounts keep deny_write (and the protected names one
    // level below the workspace); without one, go around.
    let deny_w: Vec<&PathEntry> = if namespaces.mount {
        Vec::new()
    } else {
        caps.fs.deny_write.iter().chain(input.below).collect()
    };
    let file_read_rights = [FsRight::ReadFile, FsRight::Execute];
    // Likewise a grant of /dev itself (strict reads it): only the devices remain.
    let host_dev_grant = |e: &&PathEntry| host_dev_only && under(&e.path, Path::new("/dev"));
    for e in caps.fs.read.iter().filter(|e| !host_dev_grant(e)) {
        grant_around(&mut rules, e, READ, &deny_r, &file_read_rights, fs);
    }
    for e in caps.fs.execute.iter().filter(|e| !host_dev_grant(e)) {
        grant_around(&mut rules, e, EXEC, &deny_r, &file_read_rights, fs);
    }
    for e in caps.fs.write.iter().filter(|e| !host_dev_grant(e)) {
        let mut denials = deny_w.clone();
        denials.extend(deny_r_for_writes.iter().copied());
        grant_around(&mut rules, e, WRITE, &denials, WRITE, fs);
    }
    rules
}

/// Devices: the whole minimal /dev, or the few harmless host devices; and /proc, or only
/// the command's own entry where /proc is the host's.
fn device_and_proc_rules(caps: &CapabilitySet, namespaces: &Namespaces) -> Vec<LandlockRule> {
    let dev_paths: &[&str] = if namespaces.mount && caps.isolation.minimal_dev {
        &["/dev"]
    } else {
        &[
            "/dev/null",
            "/dev/zero",
            "/dev/full",
            "/dev/random",
            "/dev/urandom",
            "/dev/tty",
            "/dev/ptmx",
            "/dev/pts",
            "/dev/shm",
        ]
    };
    let rule = |path: &str, rights: Vec<FsRight>, origin: &str| LandlockRule {
        path: PathBuf::from(path),
        rights,
        required: false,
        origin: Origin::builtin(origin),
        after_mounts: false,
    };
    let mut rules: Vec<LandlockRule> = dev_paths
        .iter()
        .map(|p| rule(p, [READ, WRITE].concat(), "devices"))
        .collect();
    let proc = if namespaces.pid {
        "/proc"
    } else {
        "/proc/self"
    };
    rules.push(rule(proc, READ.to_vec(), "proc"));
    rules
}

/// Mark the rules on file systems the sandbox mounts itself, added after the mounts.
fn mark_after_mounts(rules: &mut [LandlockRule], mounts: &[MountStep]) {
    let mut mounted: Vec<PathBuf> = Vec::new();
    for m in mounts {
        match m {
            MountStep::Tmpfs { target, .. } => mounted.push(target.clone()),
            MountStep::Proc => mounted.push(PathBuf::from("/proc")),
            MountStep::MinimalDev => mounted.push(PathBuf::from("/dev")),
            MountStep::Pin { .. }
            | MountStep::ReadOnly { .. }
            | MountStep::Hide { .. }
            | MountStep::CoverLink { .. }
            | MountStep::ReadOnlyHost { .. } => {}
        }
    }
    for r in rules {
        r.after_mounts = mounted.iter().any(|m| under(&r.path, m));
    }
}

/// The gaps of an ABI older than TCP rules (4) or scopes (6).
fn abi_gaps(abi: i32, gaps: &mut Vec<Gap>) {
    if abi < 4 {
        gaps.push(missing(
            Protection::LandlockNetwork,
            &format!("Landlock ABI {abi} lacks TCP rules (needs 4)"),
            "upgrade to Linux 6.7 or newer",
        ));
    }
    if abi < 6 {
        gaps.push(missing(
            Protection::LandlockScope,
            &format!("Landlock ABI {abi} lacks scopes (needs 6)"),
            "upgrade to Linux 6.12 or newer",
        ));
    }
}

/// The report's Landlock line.
fn landlock_layer(abi: i32, n_rules: usize, deny_tcp: bool, scope_ok: bool) -> Layer {
    Layer {
        name: "landlock".into(),
        status: if abi >= LANDLOCK_ABI {
            LayerStatus::Enforced
        } else {
            LayerStatus::Partial
        },
        detail: format!(
            "ABI {abi} (written for {LANDLOCK_ABI}); {n_rules} path rules; tcp {}; scopes {}",
            if deny_tcp { "denied" } else { "unrestricted" },
            if scope_ok {
                "signal+abstract-unix"
            } else {
                "unavailable"
            }
        ),
    }
}

/// Without Landlock: every Landlock protection is a gap, and the report says why.
fn no_landlock(host: &Host, gaps: &mut Vec<Gap>, report: &mut Vec<Layer>) {
    if let Availability::Missing { reason, fix } = &host.landlock {
        for p in [
            Protection::Landlock,
            Protection::LandlockNetwork,
            Protection::LandlockScope,
        ] {
            gaps.push(missing(p, reason, fix));
        }
        report.push(Layer {
            name: "landlock".into(),
            status: LayerStatus::NotEnforced,
            detail: reason.clone(),
        });
    }
}

const AROUND: &str = " (around a denial)";

/// One rule per path among those granted around denials: the read and the execute grant of
/// `/` walk around the same secrets, and each rule costs the sandbox an open, a stat, a
/// `landlock_add_rule` and a close. Rights are joined; the first rule's origin stays. Rules
/// written in a profile keep their own entry and origin.
fn merge_around(rules: Vec<LandlockRule>) -> Vec<LandlockRule> {
    let mut out: Vec<LandlockRule> = Vec::with_capacity(rules.len());
    let mut seen: std::collections::HashMap<(PathBuf, bool), usize> = Default::default();
    for r in rules {
        if !r.origin.key.ends_with(AROUND) {
            out.push(r);
            continue;
        }
        match seen.get(&(r.path.clone(), r.after_mounts)) {
            Some(&i) => {
                let kept = &mut out[i];
                for right in r.rights {
                    if !kept.rights.contains(&right) {
                        kept.rights.push(right);
                    }
                }
                kept.required |= r.required;
            }
            None => {
                seen.insert((r.path.clone(), r.after_mounts), out.len());
                out.push(r);
            }
        }
    }
    out
}

/// The Landlock part of the plan, or `None` (with its gaps and report line) when the host
/// has no Landlock.
pub(super) fn landlock_plan(
    input: &PlanInput<'_>,
    namespaces: &Namespaces,
    mounts: &[MountStep],
    fs: &dyn DirLister,
    gaps: &mut Vec<Gap>,
    report: &mut Vec<Layer>,
) -> Option<LandlockPlan> {
    let (caps, host) = (input.caps, input.host);
    if !host.landlock.ok() {
        no_landlock(host, gaps, report);
        return None;
    }
    let abi = host.landlock_abi.unwrap_or(0).min(LANDLOCK_ABI);
    let mut rules = grant_rules(input, namespaces, mounts, fs);
    rules.extend(device_and_proc_rules(caps, namespaces));
    mark_after_mounts(&mut rules, mounts);
    let rules = merge_around(rules);
    let scope_ok = abi >= 6;
    let deny_tcp = abi >= 4
        && (caps.network == NetworkMode::None
            || (matches!(caps.network, NetworkMode::Loopback | NetworkMode::Proxy)
                && !namespaces.net));
    abi_gaps(abi, gaps);
    let held = !caps.fs.deny_write.is_empty() || !input.below.is_empty();
    if !namespaces.mount && held {
        report.push(Layer {
            name: "deny-write".into(),
            status: LayerStatus::Partial,
            detail: "no mount namespace: read-only paths inside writable trees are kept by Landlock rules around them, so their parent directories (e.g. the workspace root) accept no new entries".into(),
        });
    }
    report.push(landlock_layer(abi, rules.len(), deny_tcp, scope_ok));
    Some(LandlockPlan {
        abi,
        rules,
        deny_tcp,
        tcp_connect: Vec::new(),
        scope_signals: scope_ok && caps.isolation.scope_signals,
        scope_abstract_unix: scope_ok && caps.isolation.scope_abstract_unix,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(path: &str, rights: &[FsRight], key: &str) -> LandlockRule {
        LandlockRule {
            path: PathBuf::from(path),
            rights: rights.to_vec(),
            required: false,
            origin: Origin::builtin(key),
            after_mounts: false,
        }
    }

    /// Rules granted around denials on one path become one, with both rights; rules a
    /// profile wrote keep their own entries and origins.
    #[test]
    fn rules_around_denials_are_merged_per_path() {
        let around = |k: &str| format!("{k}{AROUND}");
        let rules = vec![
            rule("/etc", &[FsRight::ReadFile], &around("filesystem.read")),
            rule("/usr", &[FsRight::ReadFile], "filesystem.read"),
            rule("/etc", &[FsRight::Execute], &around("filesystem.execute")),
            rule("/usr", &[FsRight::Execute], "filesystem.execute"),
        ];
        let merged = merge_around(rules);
        assert_eq!(merged.len(), 3);
        assert_eq!(merged[0].path, PathBuf::from("/etc"));
        assert_eq!(merged[0].rights, [FsRight::ReadFile, FsRight::Execute]);
        assert_eq!(&*merged[0].origin.key, around("filesystem.read"));
        assert!(merged[1..].iter().all(|r| r.path == Path::new("/usr")));
    }
}
