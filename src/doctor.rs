//! `sbx doctor`: what this host can enforce, and how fully each built-in profile runs here.
use crate::cwd;
use crate::stdout::outln;
use sbx::host::{Availability, Host};
use sbx::plan::{Layer, LayerStatus};
use sbx::profile::BUILTIN_NAMES;
use sbx::workspace::WorkspaceContext;
use std::process::ExitCode;

pub fn doctor(json: bool) -> ExitCode {
    let host = Host::detect();
    // One context for every profile's plan.
    let ws = match sbx::setup::workspace(&cwd()) {
        Ok(ws) => ws,
        Err(e) => return ExitCode::from(crate::setup_error(e) as u8),
    };
    let profiles: Vec<serde_json::Value> = BUILTIN_NAMES
        .iter()
        .map(|name| {
            let (status, detail, fix) = profile_status(name, &host, &ws);
            serde_json::json!({"profile": name, "status": status, "detail": detail, "fix": fix})
        })
        .collect();
    if json {
        outln!(
            "{}",
            serde_json::json!({"host": host, "profiles": profiles})
        );
        return ExitCode::SUCCESS;
    }
    print_host(&host);
    outln!("profiles:");
    for p in &profiles {
        outln!(
            "  {:<14} {} {}",
            p["profile"].as_str().unwrap_or(""),
            p["status"].as_str().unwrap_or(""),
            p["detail"].as_str().unwrap_or("")
        );
        if let Some(f) = p["fix"].as_str().filter(|f| !f.is_empty()) {
            outln!("  {:<14} fix: {f}", "");
        }
    }
    ExitCode::SUCCESS
}

/// What would close a gap in `layer` here: the fix of the host feature behind it.
fn fix_for(host: &Host, layer: &str) -> Option<String> {
    let missing_fix = |a: &Availability| match a {
        Availability::Missing { fix, .. } => Some(fix.clone()),
        Availability::Available => None,
    };
    match layer {
        "landlock" => missing_fix(&host.landlock).or_else(|| {
            host.landlock_abi
                .is_some_and(|v| v < sbx::host::LANDLOCK_ABI)
                .then(|| {
                    format!(
                        "run Linux 6.12 or later for Landlock ABI {}",
                        sbx::host::LANDLOCK_ABI
                    )
                })
        }),
        "seccomp" => missing_fix(&host.seccomp),
        "memory" if host.cgroups.memory.is_some() => Some(
            "add `requires = [\"tree-limits\"]` to the profile (each run then joins cgroup v1), \
             or use a cgroup v2 host"
                .to_string(),
        ),
        "memory" | "processes" => missing_fix(&host.cgroups.missing),
        "protected-names" => Some(
            "work in a directory on a case-sensitive file system, or mount the share so that \
             the kernel folds names (cifs: `nocase`)"
                .to_string(),
        ),
        _ => missing_fix(&host.namespaces),
    }
}

/// `(status, detail, fix)` of a built-in profile on this host: `full`, `partial` with the
/// gaps and their fixes, `refused` when a required protection is missing, or `error`.
fn profile_status(name: &str, host: &Host, ws: &WorkspaceContext) -> (String, String, String) {
    let sb = match sbx::setup::sandbox(name) {
        Ok(sb) => sb,
        Err(e) => return ("error".to_string(), e.to_string(), String::new()),
    };
    let plan = match sb.plan_in(ws, host) {
        Ok((_, plan)) => plan,
        Err(e) => return ("refused".to_string(), e.to_string(), String::new()),
    };
    let open: Vec<&Layer> = plan
        .report
        .iter()
        .filter(|l| l.status != LayerStatus::Enforced)
        .collect();
    if open.is_empty() {
        return ("full".to_string(), String::new(), String::new());
    }
    let gaps: Vec<String> = open
        .iter()
        .map(|l| format!("{}: {}", l.name, l.detail))
        .collect();
    let mut fixes: Vec<String> = open.iter().filter_map(|l| fix_for(host, &l.name)).collect();
    fixes.sort();
    fixes.dedup();
    ("partial".to_string(), gaps.join("; "), fixes.join("; "))
}

/// Each host feature: there, or why not and the fix.
fn print_host(host: &Host) {
    let show = |name: &str, a: &Availability| match a {
        Availability::Available => outln!("  {name:<28} yes"),
        Availability::Missing { reason, fix } => {
            outln!("  {name:<28} no: {reason}\n  {:<28} fix: {fix}", "")
        }
    };
    outln!("host (euid {}):", host.euid);
    match host.landlock_abi {
        Some(v) => outln!(
            "  {:<28} ABI {v} (sbx uses up to {})",
            "landlock",
            sbx::host::LANDLOCK_ABI
        ),
        None => show("landlock", &host.landlock),
    }
    show("seccomp", &host.seccomp);
    show("unprivileged user namespaces", &host.user_namespaces);
    show("mount/pid/net namespaces", &host.namespaces);
    outln!("  {:<28} {}", "proxy network mode", proxy_mode(host));
    show_tree_limits(&host.cgroups);
}

/// How `proxy` profiles keep the command to the proxy on this host.
fn proxy_mode(host: &Host) -> String {
    if host.namespaces.ok() {
        return "own network namespace; the proxy is the only way out".into();
    }
    match host.landlock_abi {
        Some(v) if v >= 4 => "no network namespace: Landlock allows TCP only to the proxy's port, seccomp refuses UDP and raw sockets".into(),
        _ => "no network namespace and no Landlock TCP rules (ABI 4): the proxy can be bypassed".into(),
    }
}

/// Whether a cgroup per run can bound the whole tree, controller by controller.
fn show_tree_limits(cg: &sbx::host::CgroupHost) {
    use sbx::host::{CgroupVersion, Controller};
    for c in Controller::ALL {
        let what = match cg.base(c) {
            Some(b) => format!(
                "cgroup {} under {}{}",
                match b.version {
                    CgroupVersion::V1 => "v1",
                    CgroupVersion::V2 => "v2",
                },
                b.dir.display(),
                match (b.version, b.enable) {
                    (CgroupVersion::V2, true) => " (enabled in its subtree_control by the run)",
                    (CgroupVersion::V2, false) => "",
                    // Each join waits for an RCU grace period.
                    (CgroupVersion::V1, _) =>
                        " (joined only by profiles that require tree-limits, and for root's \
                         process limits below 301)",
                }
            ),
            None => "no cgroup: per-process rlimits only".into(),
        };
        outln!("  {:<28} {what}", format!("tree limit: {}", c.name()));
    }
    if cg.memory.is_some() && !cg.swap_bounded {
        outln!("  {:<28} swap is not accounted per cgroup here", "");
    }
    if let sbx::host::Availability::Missing { reason, fix } = &cg.missing {
        outln!("  {:<28} why: {reason}\n  {:<28} fix: {fix}", "", "");
    }
}
