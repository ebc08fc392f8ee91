//! `sbx explain`: a profile's resolved plan, with the origin of every entry.
use crate::{cwd, setup_error};
use sbx::exec::Sandbox;
use sbx::host::Host;
use sbx::profile::Profile;
use std::path::PathBuf;
use std::process::ExitCode;

pub fn explain(profile: &str, workspace: Option<PathBuf>, json: bool) -> ExitCode {
    let p = match Profile::load(profile) {
        Ok(p) => p,
        Err(e) => return ExitCode::from(setup_error(e) as u8),
    };
    let host = Host::detect();
    let ws = workspace.unwrap_or_else(cwd);
    let ws = std::fs::canonicalize(&ws).unwrap_or(ws);
    let sb = Sandbox::with_host(p, host.clone());
    let (caps, plan) = match sb.plan_for(&ws, &host) {
        Ok(x) => x,
        Err(e) => return ExitCode::from(setup_error(e) as u8),
    };
    if json {
        println!(
            "{}",
            serde_json::json!({"profile": sb.profile().name, "capabilities": caps, "plan": plan})
        );
        return ExitCode::SUCCESS;
    }
    println!(
        "profile {} ({})",
        sb.profile().name,
        sb.profile().description
    );
    println!("namespaces: {:?}", plan.namespaces);
    println!("filesystem (landlock):");
    if let Some(ll) = &plan.landlock {
        for r in &ll.rules {
            println!(
                "  {:<40} {:<50} {}",
                r.path.display(),
                format!("{:?}", r.rights),
                r.origin
            );
        }
        println!(
            "  tcp: {}; scopes: signals={} abstract-unix={}",
            if ll.deny_tcp { "denied" } else { "allowed" },
            ll.scope_signals,
            ll.scope_abstract_unix
        );
    }
    println!("mounts:");
    for m in &plan.mounts {
        println!("  {}", serde_json::to_string(m).unwrap_or_default());
    }
    if let Some(s) = &plan.seccomp {
        println!("seccomp: EPERM for {}", s.denied.join(" "));
        for (name, o) in &s.extra {
            println!("  extra {name} from {o}");
        }
        println!(
            "  sockets allowed: {}; clone3 -> ENOSYS; namespace clone flags refused; x32 blocked; ioctls denied: {}",
            s.socket_families.join(","),
            s.deny_ioctls.join(",")
        );
    }
    println!("network: {:?}", plan.network);
    println!("limits:");
    for r in &plan.rlimits {
        println!("  {:?} = {} from {}", r.resource, r.value, r.origin);
    }
    println!(
        "  timeout_ms = {:?}, output_bytes = {:?}, pids cgroup = {:?}",
        plan.timeout_ms, plan.output_bytes, plan.cgroup_pids_max
    );
    println!(
        "environment: cleared; pass {}; set {:?}",
        plan.env_pass.join(" "),
        plan.env_set
    );
    println!("report:");
    for l in &plan.report {
        println!("  {:<16} {:?} {}", l.name, l.status, l.detail);
    }
    ExitCode::SUCCESS
}
