//! `sbx explain`: a profile's resolved plan, with the origin of every entry.
use crate::stdout::outln;
use crate::{cwd, setup_error};
use sbx::capability::{CapabilitySet, EnvFilter, Inherit, Origin};
use sbx::environment::SECRET_NAMES;
use sbx::plan::SandboxPlan;
use sbx::profile::Profile;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

pub fn explain(profile: &str, workspace: Option<PathBuf>, json: bool) -> ExitCode {
    let sb = match sbx::setup::sandbox(profile) {
        Ok(s) => s,
        Err(e) => return ExitCode::from(setup_error(e) as u8),
    };
    let ws = match sbx::setup::workspace(&workspace.unwrap_or_else(cwd)) {
        Ok(ws) => ws,
        Err(e) => return ExitCode::from(setup_error(e) as u8),
    };
    let (caps, plan) = match sb.plan_in(&ws, sb.host()) {
        Ok(x) => x,
        Err(e) => return ExitCode::from(setup_error(e) as u8),
    };
    let prof = sb.profile();
    if json {
        print_json(prof, &caps, &plan);
    } else {
        print_text(prof, &caps, &plan);
    }
    ExitCode::SUCCESS
}

/// Where a limit of the set was set (`origin`, of the profile key `k`), or that nothing sets it.
fn limit(origin: &Option<Origin>, k: &str) -> Origin {
    origin
        .clone()
        .unwrap_or_else(|| Origin::builtin(&format!("limits.{k} (unlimited)")))
}

/// One JSON object: the capability set, the plan, and where each setting came from.
fn print_json(prof: &Profile, caps: &CapabilitySet, plan: &SandboxPlan) {
    let isolation = isolation_origins(caps);
    let (o, so) = (&caps.limits.origins, &caps.origins);
    let origins = serde_json::json!({
        "network": so.network,
        "isolation": isolation,
        "environment": {
            "inherit": inherit_origin(caps),
            "pass": so.env_pass,
            "deny": so.env_deny,
            "set": so.env_set,
        },
        "limits": {
            "timeout": limit(&o.timeout_ms, "timeout"),
            "output": limit(&o.output_bytes, "output"),
        },
    });
    outln!(
        "{}",
        serde_json::json!({"profile": prof.name, "capabilities": caps, "plan": plan, "origins": origins})
    );
}

/// The plan as text, each entry with its origin.
fn print_text(prof: &Profile, caps: &CapabilitySet, plan: &SandboxPlan) {
    let isolation = isolation_origins(caps);
    outln!("profile {} ({})", prof.name, prof.description);
    outln!("namespaces: {:?}", plan.namespaces);
    outln!("  net from {}", network_origin(caps));
    outln!("isolation:");
    for (k, o) in &isolation {
        outln!("  {k:<20} {o}");
    }
    print_filesystem(caps, plan);
    print_kernel_filters_and_limits(caps, plan);
}

/// Landlock rules, mounts and protected paths.
fn print_filesystem(caps: &CapabilitySet, plan: &SandboxPlan) {
    outln!("filesystem (landlock):");
    if let Some(ll) = &plan.landlock {
        for r in &ll.rules {
            outln!(
                "  {:<40} {:<50} {}",
                r.path.display(),
                format!("{:?}", r.rights),
                r.origin
            );
        }
        outln!(
            "  tcp: {}; scopes: signals={} abstract-unix={}",
            if ll.deny_tcp { "denied" } else { "allowed" },
            ll.scope_signals,
            ll.scope_abstract_unix
        );
    }
    outln!("mounts:");
    for m in &plan.mounts {
        outln!("  {}", serde_json::to_string(m).unwrap_or_default());
    }
    outln!(
        "protected paths, checked after the run (new ones moved to {}):",
        sbx::exec::quarantine_root().display()
    );
    for w in &caps.fs.watch {
        outln!("  {:<40} {}", w.path.display(), w.origin);
    }
    outln!(
        "  a change makes the run: {:?} from {}",
        caps.fs.protected_change,
        shown(&caps.origins.protected_change)
    );
    outln!(
        "  a writable tree whose names fold case beneath the kernel: {:?} from {}",
        caps.fs.case_folding,
        shown(&caps.origins.case_folding)
    );
}

/// The seccomp filter, network, limits, environment and the enforcement report.
fn print_kernel_filters_and_limits(caps: &CapabilitySet, plan: &SandboxPlan) {
    let o = &caps.limits.origins;
    if let Some(s) = &plan.seccomp {
        outln!("seccomp: EPERM for {}", s.denied.join(" "));
        for (name, o) in &s.extra {
            outln!("  extra {name} from {o}");
        }
        outln!(
            "  sockets allowed: {}; clone3 -> ENOSYS; namespace clone flags refused; x32 blocked; ioctls denied: {}; setuid/setgid modes refused: {}",
            s.socket_families.join(","),
            s.deny_ioctls.join(","),
            s.deny_setid_modes
        );
    }
    outln!("network: {:?} from {}", plan.network, network_origin(caps));
    if let Some(px) = &plan.proxy {
        show_proxy(px);
    }
    outln!("limits:");
    for r in &plan.rlimits {
        outln!("  {:?} = {} from {}", r.resource, r.value, r.origin);
    }
    outln!(
        "  timeout_ms = {:?} from {}",
        plan.timeout_ms,
        limit(&o.timeout_ms, "timeout")
    );
    outln!(
        "  output_bytes = {:?} from {}",
        plan.output_bytes,
        limit(&o.output_bytes, "output")
    );
    for step in &plan.cgroups {
        outln!("  {}", step.describe());
    }
    if let Some(n) = plan.pid_max {
        outln!("  pid_max = {n} (the PID namespace's own)");
    }
    // The set's tmpfs size comes from `tmp_size`, or else is half of `memory`, from there.
    let tmp_origin = match &o.tmp_bytes {
        Some(t) if t.key.as_ref() == "limits.tmp_size" => t.to_string(),
        _ => format!("half of {}", limit(&o.memory_bytes, "memory")),
    };
    outln!("  tmpfs size = {:?} from {tmp_origin}", plan.tmp_size);
    print_env(caps, &plan.env);
    outln!("report:");
    for l in &plan.report {
        outln!("  {:<16} {:?} {}", l.name, l.status, l.detail);
    }
}

/// Every isolation switch with where its value came from: a profile line, or the default.
fn isolation_origins(caps: &CapabilitySet) -> BTreeMap<&'static str, Origin> {
    [
        "pid",
        "ipc",
        "scope_signals",
        "scope_abstract_unix",
        "private_tmp",
        "minimal_dev",
    ]
    .into_iter()
    .map(|k| {
        let o = (caps.origins.isolation.get(k))
            .cloned()
            .unwrap_or_else(|| Origin::builtin(&format!("isolation.{k} (default: true)")));
        (k, o)
    })
    .collect()
}

/// Where the network mode was set.
fn network_origin(caps: &CapabilitySet) -> String {
    shown(&caps.origins.network)
}

/// An origin as text, or that the set carries none (a set made without a profile).
fn shown(o: &Option<Origin>) -> String {
    o.as_ref()
        .map_or_else(|| "sbx (no origin recorded)".into(), ToString::to_string)
}

fn inherit_origin(caps: &CapabilitySet) -> Origin {
    caps.origins.env_inherit.clone().unwrap_or_else(|| {
        Origin::builtin(&format!(
            "environment.inherit (default: {})",
            Inherit::default().as_str()
        ))
    })
}

/// The environment rules in the order they apply: deny, pass, the inherit mode with the
/// built-in secret names, then fixed values.
fn print_env(caps: &CapabilitySet, env: &EnvFilter) {
    let from = |o: Option<&Origin>| o.map(ToString::to_string).unwrap_or_default();
    outln!(
        "environment: inherit = {} from {}",
        env.inherit.as_str(),
        inherit_origin(caps)
    );
    for name in &env.deny {
        let o = caps.origins.env_deny.get(name);
        outln!("  deny {name:<20} {}", from(o));
    }
    for name in &env.pass {
        let o = caps.origins.env_pass.get(name);
        outln!("  pass {name:<20} {}", from(o));
    }
    match env.inherit {
        Inherit::AllButSecrets => {
            outln!("  then the caller's other variables, except secret-shaped names (built in):");
            for (pattern, reason) in SECRET_NAMES {
                outln!("    drop {pattern:<24} {reason}");
            }
        }
        Inherit::None => outln!("  nothing else of the caller's"),
    }
    for (name, value) in &env.set {
        let o = caps.origins.env_set.get(name);
        outln!(
            "  set  {name}={value} {}",
            o.map_or_else(|| "sbx (the run)".into(), ToString::to_string)
        );
    }
}

/// The proxy's bridge, rules and limits, each rule with its origin.
fn show_proxy(px: &sbx::plan::ProxyPlan) {
    match px.bridge {
        sbx::plan::ProxyBridge::Namespace { port } => {
            outln!("  proxy on 127.0.0.1:{port} inside the sandbox's network namespace")
        }
        sbx::plan::ProxyBridge::HostLoopback => outln!(
            "  proxy on a port of the host's loopback chosen at launch; Landlock allows TCP to it only"
        ),
    }
    for (what, list) in [("allow", &px.rules.allow), ("deny", &px.rules.deny)] {
        for r in list {
            outln!("  {what:<8} {:<40} {}", r.text(), r.origin);
        }
    }
    for p in &px.rules.private {
        outln!("  private  {:<40} {}", p.range.to_string(), p.origin);
    }
    if let Some(h) = &px.rules.hosts {
        outln!("  hosts file {}", h.display());
    }
    outln!(
        "  limits: connections {:?}, bytes {:?}",
        px.rules.max_connections,
        px.rules.max_bytes
    );
}
