//! Resource limits: the rlimits from the profile, and how the process limit is kept when
//! RLIMIT_NPROC does not bind (a PID namespace's pid_max, or a pids cgroup).
#![forbid(unsafe_code)]

use super::{Layer, LayerStatus, Namespaces, PlanInput, missing};
use crate::capability::Origin;
use crate::profile::Protection;
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Rlimit {
    As,
    Nproc,
    Fsize,
    Cpu,
    Nofile,
    Core,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RlimitStep {
    pub resource: Rlimit,
    pub value: u64,
    pub origin: Origin,
}

/// The smallest pid_max the kernel accepts (RESERVED_PIDS + 1).
pub const PID_MAX_MIN: u64 = 301;

/// The limits part of the plan: `(rlimits, cgroup_pids_max, pid_max)`.
pub(super) fn limits_plan(
    input: &PlanInput<'_>,
    namespaces: &Namespaces,
    gaps: &mut Vec<(Protection, String, String)>,
    report: &mut Vec<Layer>,
) -> (Vec<RlimitStep>, Option<u64>, Option<u64>) {
    let caps = input.caps;
    let host = input.host;
    // Limits.
    let l = &caps.limits;
    let mut rlimits = Vec::new();
    let lim_origin = |k: &str| {
        input
            .limit_origins
            .get(k)
            .cloned()
            .unwrap_or_else(|| Origin::builtin(&format!("limits.{k}")))
    };
    let mut push = |r: Rlimit, v: Option<u64>, k: &str| {
        if let Some(value) = v {
            rlimits.push(RlimitStep {
                resource: r,
                value,
                origin: lim_origin(k),
            });
        }
    };
    push(Rlimit::As, l.memory_bytes, "memory");
    push(Rlimit::Nproc, l.processes, "processes");
    push(Rlimit::Fsize, l.file_size_bytes, "file_size");
    push(Rlimit::Cpu, l.cpu_seconds, "cpu_time");
    push(Rlimit::Nofile, l.open_files, "open_files");
    rlimits.push(RlimitStep {
        resource: Rlimit::Core,
        value: 0,
        origin: Origin::builtin("no core dumps"),
    });
    // RLIMIT_NPROC does not bind uid 0. For root, a PID namespace's own pid_max (Linux 6.14+)
    // caps how many processes can exist in it, at no cost; it cannot go below 301, so smaller
    // limits use a pids cgroup, whose attach is slow on cgroup v1.
    let pid_max = if host.euid == 0 && namespaces.pid && host.pid_max_per_namespace {
        l.processes.filter(|n| *n >= PID_MAX_MIN)
    } else {
        None
    };
    let cgroup_pids_max = if host.euid == 0 && pid_max.is_none() {
        l.processes.filter(|_| host.pids_cgroup.is_some())
    } else {
        None
    };
    let nproc_binds = host.euid != 0 || cgroup_pids_max.is_some() || pid_max.is_some();
    if l.processes.is_some() && !nproc_binds {
        gaps.push(missing(
            Protection::ProcessLimit,
            "RLIMIT_NPROC does not bind root and no pids cgroup is writable",
            "mount the pids cgroup controller",
        ));
    }
    report.push(Layer {
        name: "limits".into(),
        status: if nproc_binds || l.processes.is_none() {
            LayerStatus::Enforced
        } else {
            LayerStatus::Partial
        },
        detail: format!(
            "rlimits {}; processes via {}",
            rlimits
                .iter()
                .map(|r| format!("{:?}={}", r.resource, r.value))
                .collect::<Vec<_>>()
                .join(" "),
            if pid_max.is_some() {
                "the PID namespace's pid_max"
            } else if cgroup_pids_max.is_some() {
                "pids cgroup"
            } else if host.euid != 0 {
                "RLIMIT_NPROC"
            } else {
                "nothing (root)"
            }
        ),
    });
    (rlimits, cgroup_pids_max, pid_max)
}
