//! From a capability set and the host's features to a [`SandboxPlan`]: every Landlock rule,
//! the seccomp policy, namespaces, mounts, rlimits and environment, each with its origin.
//!
//! Pure: no syscalls here except what the [`DirLister`] answers (directory listings for
//! Landlock's "deny inside allow" expansion, and whether a writable tree's names fold case),
//! which the caller may precompute.
#![forbid(unsafe_code)]

mod cgroup;
mod fake;
mod fs;
mod landlock;
mod limits;
mod mounts;
mod names;
mod seccomp;
mod types;

pub use cgroup::{CgroupSetting, CgroupStep};
pub use fake::{FakeFs, capable_host};
pub use fs::{DirLister, RealFs};
pub use landlock::{EXEC, FsRight, LandlockPlan, LandlockRule, READ, WRITE};
pub use limits::{PID_MAX_MIN, Rlimit, RlimitStep};
pub use mounts::{COVERED_LINKS, MountStep};
pub use names::CaseFolded;
pub use seccomp::{BASE_DENIED_SYSCALLS, SeccompPlan};
pub use types::{
    HeldGrant, Layer, LayerStatus, Namespaces, PROXY_PORT, PlanError, ProxyBridge, ProxyPlan,
    SandboxPlan, TreeKill,
};

use crate::capability::{CapabilitySet, EnvFilter, NetworkMode, Protection};
use crate::host::{Availability, Host};
use std::path::Path;

/// What [`plan`] plans: a capability set (which carries everything the plan takes from the
/// profile, with its origins) on a host.
pub struct PlanInput<'a> {
    /// The capability set.
    pub caps: &'a CapabilitySet,
    /// What the host offers.
    pub host: &'a Host,
    /// The sandbox's temporary directory as the command sees it.
    pub tmp: &'a Path,
    /// Protected names found in the directories directly in the workspace (the names
    /// programs load where they start, as `exec` lists them before the run), each with the
    /// profile line that protects it at the root: held read-only as `deny_write` paths are,
    /// without pins, since the check after the run judges each by its name.
    pub below: &'a [crate::capability::PathEntry],
}

fn missing(p: Protection, reason: &str, fix: &str) -> Gap {
    (p, reason.to_string(), fix.to_string())
}

/// chmod, chown, xattrs and times are not Landlock rights: only read-only mounts refuse them.
fn metadata_layer(mount: bool, why_not: &str) -> Layer {
    Layer {
        name: "metadata".into(),
        status: if mount {
            LayerStatus::Enforced
        } else {
            LayerStatus::Partial
        },
        detail: if mount {
            "everything outside the writable set is mounted read-only; writable mounts are nosuid,nodev".into()
        } else {
            format!(
                "no mount namespace ({why_not}): chmod, chown, xattrs and times outside the writable set are limited only by file ownership"
            )
        },
    }
}

/// The network line of the report. `tcp_held`: Landlock denies TCP (but to the proxy's port).
fn network_layer(caps: &CapabilitySet, net_ns: bool, why_no_ns: &str, tcp_held: bool) -> Layer {
    let detail = match (caps.network, net_ns) {
        (NetworkMode::Host, _) => "host network (profile)".to_string(),
        (NetworkMode::Proxy, true) => format!(
            "private namespace with lo up; {} allowed host names through the proxy on 127.0.0.1:{PROXY_PORT}",
            caps.net_rules.allow.len()
        ),
        (NetworkMode::Proxy, false) if tcp_held => format!(
            "no namespace ({why_no_ns}); TCP only to the proxy's port (Landlock; a port rule holds for every address), UDP and raw inet sockets refused (seccomp)"
        ),
        (NetworkMode::Proxy, false) => format!(
            "no namespace ({why_no_ns}) and no Landlock TCP rules: a program that ignores the proxy variables reaches the network"
        ),
        (NetworkMode::None, true) => "empty network namespace".into(),
        (NetworkMode::Loopback, true) => "private namespace with lo up".into(),
        (NetworkMode::None, false) => {
            format!("no namespace ({why_no_ns}); TCP denied by Landlock, inet sockets by seccomp")
        }
        (NetworkMode::Loopback, false) => format!(
            "no namespace ({why_no_ns}); loopback cannot be isolated, so TCP is denied by Landlock and inet sockets by seccomp"
        ),
    };
    let status = match (caps.network, net_ns) {
        (NetworkMode::Host, _) | (_, true) => LayerStatus::Enforced,
        (NetworkMode::Proxy, false) if !tcp_held => LayerStatus::NotEnforced,
        (NetworkMode::None | NetworkMode::Loopback | NetworkMode::Proxy, false) => {
            LayerStatus::Partial
        }
    };
    Layer {
        name: "network".into(),
        status,
        detail,
    }
}

/// `TMPDIR` names `tmp`. A profile's own `TMPDIR` is kept only where `/tmp` is the run's
/// private tmpfs; elsewhere `tmp` is a fresh directory of this run and nothing else will do.
fn set_tmpdir(env: &mut EnvFilter, caps: &CapabilitySet, namespaces: &Namespaces, tmp: &Path) {
    let tmp = tmp.display().to_string();
    if caps.isolation.private_tmp_in(namespaces.mount) {
        env.set.entry("TMPDIR".into()).or_insert(tmp);
    } else {
        env.set.insert("TMPDIR".into(), tmp);
    }
}

/// The variables that point programs at the proxy on `port` of loopback.
pub fn proxy_env(port: u16) -> Vec<(String, String)> {
    let http = format!("http://127.0.0.1:{port}");
    let socks = format!("socks5h://127.0.0.1:{port}");
    let mut out = Vec::new();
    for (k, v) in [
        ("HTTP_PROXY", http.as_str()),
        ("HTTPS_PROXY", http.as_str()),
        ("ALL_PROXY", socks.as_str()),
        ("NO_PROXY", "localhost,127.0.0.1,::1"),
    ] {
        out.push((k.to_string(), v.to_string()));
        out.push((k.to_ascii_lowercase(), v.to_string()));
    }
    out
}

/// A protection this host cannot give: which, why, and how to give it.
type Gap = (Protection, String, String);

/// Why there are no namespaces, and the fix; empty when there are.
fn namespace_gap(host: &Host) -> (String, String) {
    match &host.namespaces {
        Availability::Available => (String::new(), String::new()),
        Availability::Missing { reason, fix } => (reason.clone(), fix.clone()),
    }
}

/// The namespaces the command gets; each one the host cannot give is a gap.
fn namespaces(
    caps: &CapabilitySet,
    host: &Host,
    why: &(String, String),
    gaps: &mut Vec<Gap>,
) -> Namespaces {
    let ns_ok = host.namespaces.ok();
    let use_userns = ns_ok && host.euid != 0;
    if !ns_ok {
        for p in [
            Protection::UserNamespace,
            Protection::MountNamespace,
            Protection::PidNamespace,
            Protection::NetworkNamespace,
        ] {
            gaps.push(missing(p, &why.0, &why.1));
        }
    } else if !use_userns {
        gaps.push(missing(
            Protection::UserNamespace,
            "not needed as root",
            "none needed",
        ));
    }
    Namespaces {
        user: use_userns,
        mount: ns_ok,
        pid: ns_ok && caps.isolation.pid,
        net: ns_ok && caps.network != NetworkMode::Host,
        ipc: ns_ok && caps.isolation.ipc,
        uts: ns_ok,
    }
}

/// The report's namespace lines: mount, metadata, PID and network. `tcp_held`: Landlock denies
/// TCP (but to the proxy's port).
fn namespace_layers(
    caps: &CapabilitySet,
    namespaces: &Namespaces,
    ns_ok: bool,
    why_not: &str,
    tcp_held: bool,
) -> [Layer; 4] {
    let ns_layer = |name: &str, on: bool, why_off: &str| Layer {
        name: name.into(),
        status: if on {
            LayerStatus::Enforced
        } else {
            LayerStatus::NotEnforced
        },
        detail: if on { "private".into() } else { why_off.into() },
    };
    let pid_off = if ns_ok {
        "disabled by the profile"
    } else {
        why_not
    };
    [
        ns_layer("mount-namespace", namespaces.mount, why_not),
        metadata_layer(namespaces.mount, why_not),
        ns_layer("pid-namespace", namespaces.pid, pid_off),
        network_layer(caps, namespaces.net, why_not, tcp_held),
    ]
}

/// How the tree dies with the command, and its line of the report.
fn process_tree(namespaces: &Namespaces) -> (TreeKill, Layer) {
    if namespaces.pid {
        let layer = Layer {
            name: "process-tree".into(),
            status: LayerStatus::Enforced,
            detail: "PID namespace: the tree dies with its init".into(),
        };
        (TreeKill::PidNamespace, layer)
    } else {
        let layer = Layer {
            name: "process-tree".into(),
            status: LayerStatus::Partial,
            detail: "subreaper kills collected descendants; a SIGKILL of sbx may leave orphans"
                .into(),
        };
        (TreeKill::Subreaper, layer)
    }
}

/// The report's line for capabilities, which are always dropped.
fn capabilities_layer(host: &Host, namespaces: &Namespaces) -> Layer {
    Layer {
        name: "capabilities".into(),
        status: LayerStatus::Enforced,
        detail: if host.can_drop_bounding || namespaces.user {
            "all sets empty, bounding set cleared, no_new_privs".into()
        } else {
            "all sets empty, no_new_privs (the bounding set cannot be cleared without privilege; nothing can be gained at exec)".into()
        },
    }
}

/// The first protection the set requires that is a gap here, as the error. A user namespace
/// is not needed as root, so its gap there refuses nothing.
fn refuse_missing(caps: &CapabilitySet, host: &Host, gaps: &[Gap]) -> Result<(), PlanError> {
    for r in &caps.requires {
        let p = &r.protection;
        if let Some((_, reason, fix)) = gaps.iter().find(|(g, _, _)| g == p) {
            if *p == Protection::UserNamespace && host.euid == 0 && host.namespaces.ok() {
                continue;
            }
            return Err(PlanError::Missing {
                protection: p.name(),
                reason: reason.clone(),
                fix: fix.clone(),
            });
        }
    }
    Ok(())
}

/// The proxy of `proxy` mode: in the network namespace, or on the host's loopback.
fn proxy_plan(caps: &CapabilitySet, namespaces: &Namespaces) -> Option<ProxyPlan> {
    (caps.network == NetworkMode::Proxy).then(|| ProxyPlan {
        bridge: if namespaces.net {
            ProxyBridge::Namespace { port: PROXY_PORT }
        } else {
            ProxyBridge::HostLoopback
        },
        rules: caps.net_rules.clone(),
    })
}

/// The command's environment: the set's, `TMPDIR`, and the proxy variables when the proxy is
/// on the namespace's loopback (a host port is known only at launch).
fn command_env(
    caps: &CapabilitySet,
    namespaces: &Namespaces,
    tmp: &Path,
    proxy: bool,
) -> EnvFilter {
    let mut env = caps.env.clone();
    set_tmpdir(&mut env, caps, namespaces, tmp);
    if namespaces.net && proxy {
        env.set.extend(proxy_env(PROXY_PORT));
    }
    env
}

/// Compute the plan. Fails only when a required protection is missing.
pub fn plan(input: &PlanInput<'_>, fs: &dyn DirLister) -> Result<SandboxPlan, PlanError> {
    let (caps, host) = (input.caps, input.host);
    let mut report: Vec<Layer> = Vec::new();
    let mut gaps: Vec<Gap> = Vec::new();
    let ns_why = namespace_gap(host);
    let namespaces = namespaces(caps, host, &ns_why, &mut gaps);
    let mounts = mounts::mount_layout(caps, &namespaces, input, fs)?;
    let roots = mounts::writable_roots(caps, &namespaces, input.tmp, fs);
    names::validate_names(caps, &roots, fs, &mut report)?;
    report.extend(mounts::covered_links_layers(&mounts));
    let landlock = landlock::landlock_plan(input, &namespaces, &mounts, fs, &mut gaps, &mut report);
    let seccomp = seccomp::seccomp_plan(input, &namespaces, &mut gaps, &mut report);
    let tcp_held = landlock.as_ref().is_some_and(|l| l.deny_tcp);
    let ns_ok = host.namespaces.ok();
    report.extend(namespace_layers(
        caps,
        &namespaces,
        ns_ok,
        &ns_why.0,
        tcp_held,
    ));
    let limits = limits::limits_plan(input, &namespaces, &mut gaps, &mut report);
    let (tree_kill, tree_layer) = process_tree(&namespaces);
    report.push(tree_layer);
    report.push(capabilities_layer(host, &namespaces));
    refuse_missing(caps, host, &gaps)?;
    let proxy = proxy_plan(caps, &namespaces);
    let env = command_env(caps, &namespaces, input.tmp, proxy.is_some());
    let l = &caps.limits;
    Ok(SandboxPlan {
        mounts,
        landlock,
        seccomp,
        rlimits: limits.rlimits,
        cgroups: limits.cgroups,
        pid_max: limits.pid_max,
        tmp_size: l.tmp_bytes.filter(|_| namespaces.mount),
        network: caps.network,
        proxy,
        tree_kill,
        env,
        timeout_ms: l.timeout_ms,
        output_bytes: l.output_bytes,
        report,
        namespaces,
    })
}

#[cfg(test)]
mod proxy_tests;
