//! Resource limits: the whole tree's memory and processes (a cgroup per run where sbx can make
//! one), the rlimits, and the fallbacks when no cgroup can be made.
#![forbid(unsafe_code)]

use super::cgroup::{CgroupStep, cgroup_steps};
use super::{Gap, Layer, LayerStatus, Namespaces, PlanInput, missing};
use crate::capability::{Origin, Protection};
use crate::host::{CgroupBase, CgroupVersion, Controller, Host};
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "UPPERCASE")]
/// A resource limit set with setrlimit.
pub enum Rlimit {
    /// RLIMIT_DATA: private writable memory per process (heap, anonymous mappings), the
    /// fallback for a memory cgroup. Not RLIMIT_AS, which also counts what programs only
    /// reserve (JVM heaps, V8's cages, WebAssembly memories) and fails them far below the budget.
    Data,
    /// RLIMIT_NPROC: processes of the user.
    Nproc,
    /// RLIMIT_FSIZE: largest file written.
    Fsize,
    /// RLIMIT_CPU: CPU seconds per process.
    Cpu,
    /// RLIMIT_NOFILE: open files per process.
    Nofile,
    /// RLIMIT_CORE: core dump size.
    Core,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
/// One resource limit.
pub struct RlimitStep {
    /// The resource.
    pub resource: Rlimit,
    /// Its soft and hard value.
    pub value: u64,
    /// The profile line it comes from.
    pub origin: Origin,
}

/// The smallest pid_max the kernel accepts (RESERVED_PIDS + 1).
pub const PID_MAX_MIN: u64 = 301;

/// The limits part of the plan.
pub(super) struct LimitsPlan {
    pub(super) rlimits: Vec<RlimitStep>,
    pub(super) cgroups: Vec<CgroupStep>,
    pub(super) pid_max: Option<u64>,
}

/// How the process limit binds the tree.
enum Processes<'a> {
    Unlimited,
    Cgroup(&'a CgroupBase, u64),
    /// The PID namespace's own pid_max (Linux 6.14+): free, but not below 301.
    PidMax(u64),
    /// RLIMIT_NPROC, which does not bind root.
    Nproc(u64),
    Nothing,
}

/// Whether the PID namespace's own pid_max (Linux 6.14+, free, but not below 301) can keep root's
/// process limit.
fn pid_max_binds(host: &Host, namespaces: &Namespaces, n: u64) -> bool {
    host.euid == 0 && namespaces.pid && host.pid_max_per_namespace && n >= PID_MAX_MIN
}

/// Whether the run joins its cgroups on cgroup v1, where each join waits for an RCU grace
/// period (milliseconds): when the profile requires tree limits, or when nothing else keeps
/// root's process limit. cgroup v2 costs nothing to join (`CLONE_INTO_CGROUP`) and is always used.
fn joins_v1(input: &PlanInput<'_>, namespaces: &Namespaces) -> bool {
    let host = input.host;
    let required = input
        .caps
        .requires
        .iter()
        .any(|r| r.protection == Protection::TreeLimits);
    let pids_on_v1 = host
        .cgroups
        .pids
        .as_ref()
        .is_some_and(|b| b.version == CgroupVersion::V1);
    let root_unbound = host.euid == 0
        && input
            .caps
            .limits
            .processes
            .is_some_and(|n| !pid_max_binds(host, namespaces, n));
    required || (pids_on_v1 && root_unbound)
}

/// `base` when the run uses it: always on cgroup v2, on v1 only when it joins v1 anyway.
fn usable(base: Option<&CgroupBase>, join_v1: bool) -> Option<&CgroupBase> {
    base.filter(|b| b.version == CgroupVersion::V2 || join_v1)
}

fn processes_via<'a>(
    host: &Host,
    namespaces: &Namespaces,
    limit: Option<u64>,
    pids: Option<&'a CgroupBase>,
) -> Processes<'a> {
    let Some(n) = limit else {
        return Processes::Unlimited;
    };
    match pids {
        Some(b) => Processes::Cgroup(b, n),
        None if pid_max_binds(host, namespaces, n) => Processes::PidMax(n),
        None if host.euid != 0 => Processes::Nproc(n),
        None => Processes::Nothing,
    }
}

/// Where a limit was set; `limits.KEY` of sbx for a set made without origins.
fn limit_origin(origin: &Option<Origin>, key: &str) -> Origin {
    origin
        .clone()
        .unwrap_or_else(|| Origin::builtin(&format!("limits.{key}")))
}

pub(super) fn limits_plan(
    input: &PlanInput<'_>,
    namespaces: &Namespaces,
    gaps: &mut Vec<Gap>,
    report: &mut Vec<Layer>,
) -> LimitsPlan {
    let host = input.host;
    let l = &input.caps.limits;
    let origins = &l.origins;
    let join_v1 = joins_v1(input, namespaces);
    let memory = usable(host.cgroups.memory.as_ref(), join_v1).zip(l.memory_bytes);
    let pids = usable(host.cgroups.pids.as_ref(), join_v1);
    let processes = processes_via(host, namespaces, l.processes, pids);
    let mut chosen = Vec::new();
    if let Some((base, v)) = memory {
        chosen.push((
            Controller::Memory,
            base,
            v,
            limit_origin(&origins.memory_bytes, "memory"),
        ));
    }
    if let Processes::Cgroup(base, v) = processes {
        chosen.push((
            Controller::Pids,
            base,
            v,
            limit_origin(&origins.processes, "processes"),
        ));
    }
    let cgroups = cgroup_steps(&chosen);
    let rlimits = rlimit_steps(
        input,
        memory.is_none(),
        matches!(processes, Processes::Nproc(_)),
    );
    report.push(memory_layer(
        input,
        &cgroups,
        &rlimits,
        memory.is_some(),
        gaps,
    ));
    report.push(processes_layer(
        input, &cgroups, &processes, namespaces, gaps,
    ));
    report.push(Layer {
        name: "limits".into(),
        status: LayerStatus::Enforced,
        detail: format!(
            "rlimits {}",
            rlimits
                .iter()
                .map(|r| format!("{:?}={}", r.resource, r.value))
                .collect::<Vec<_>>()
                .join(" ")
        ),
    });
    LimitsPlan {
        rlimits,
        cgroups,
        pid_max: match processes {
            Processes::PidMax(n) => Some(n),
            _ => None,
        },
    }
}

/// The rlimits: RLIMIT_DATA and RLIMIT_NPROC only as fallbacks for a missing cgroup.
fn rlimit_steps(input: &PlanInput<'_>, memory_as: bool, nproc: bool) -> Vec<RlimitStep> {
    let l = &input.caps.limits;
    let o = &l.origins;
    let mut rlimits = Vec::new();
    let mut push = |r: Rlimit, v: Option<u64>, origin: &Option<Origin>, k: &str| {
        if let Some(value) = v {
            rlimits.push(RlimitStep {
                resource: r,
                value,
                origin: limit_origin(origin, k),
            });
        }
    };
    let memory = l.memory_bytes.filter(|_| memory_as);
    push(Rlimit::Data, memory, &o.memory_bytes, "memory");
    let processes = l.processes.filter(|_| nproc);
    push(Rlimit::Nproc, processes, &o.processes, "processes");
    push(
        Rlimit::Fsize,
        l.file_size_bytes,
        &o.file_size_bytes,
        "file_size",
    );
    push(Rlimit::Cpu, l.cpu_seconds, &o.cpu_seconds, "cpu_time");
    push(Rlimit::Nofile, l.open_files, &o.open_files, "open_files");
    rlimits.push(RlimitStep {
        resource: Rlimit::Core,
        value: 0,
        origin: Origin::builtin("no core dumps"),
    });
    rlimits
}

fn step_for(cgroups: &[CgroupStep], c: Controller) -> Option<&CgroupStep> {
    cgroups.iter().find(|s| s.controllers.contains(&c))
}

fn tree_gap(host: &Host) -> (String, String) {
    match &host.cgroups.missing {
        crate::host::Availability::Missing { reason, fix } => (reason.clone(), fix.clone()),
        crate::host::Availability::Available => ("no cgroup".into(), "none".into()),
    }
}

fn memory_layer(
    input: &PlanInput<'_>,
    cgroups: &[CgroupStep],
    rlimits: &[RlimitStep],
    in_cgroup: bool,
    gaps: &mut Vec<Gap>,
) -> Layer {
    let host = input.host;
    let (status, detail) = match (
        input.caps.limits.memory_bytes,
        step_for(cgroups, Controller::Memory),
    ) {
        (None, _) => (LayerStatus::Enforced, "unlimited (profile)".to_string()),
        (Some(_), Some(step)) if in_cgroup => {
            let swap = if host.cgroups.swap_bounded {
                "swap included"
            } else {
                "swap NOT included: the kernel does not account swap per cgroup"
            };
            let status = if host.cgroups.swap_bounded {
                LayerStatus::Enforced
            } else {
                LayerStatus::Partial
            };
            (status, format!("whole tree, {swap}: {}", step.describe()))
        }
        (Some(_), _) => {
            let (reason, fix) = match &host.cgroups.memory {
                Some(b) => (
                    format!(
                        "the memory controller is on cgroup v1 only ({}), where joining waits \
                         for an RCU grace period on every run (milliseconds), so it is used \
                         only when the profile requires tree-limits",
                        b.dir.display()
                    ),
                    "add `requires = [\"tree-limits\"]` to the profile, or use a cgroup v2 host"
                        .to_string(),
                ),
                None => tree_gap(host),
            };
            gaps.push(missing(Protection::TreeLimits, &reason, &fix));
            let value = rlimits
                .iter()
                .find(|r| r.resource == Rlimit::Data)
                .map_or(0, |r| r.value);
            (
                LayerStatus::Partial,
                format!("RLIMIT_DATA={value} per process, not the whole tree: {reason}"),
            )
        }
    };
    Layer {
        name: "memory".into(),
        status,
        detail,
    }
}

fn processes_layer(
    input: &PlanInput<'_>,
    cgroups: &[CgroupStep],
    processes: &Processes<'_>,
    namespaces: &Namespaces,
    gaps: &mut Vec<Gap>,
) -> Layer {
    let (status, detail) = match processes {
        Processes::Unlimited => (LayerStatus::Enforced, "unlimited (profile)".to_string()),
        Processes::Cgroup(..) => match step_for(cgroups, Controller::Pids) {
            Some(step) => (
                LayerStatus::Enforced,
                format!("whole tree: {}", step.describe()),
            ),
            None => (LayerStatus::Partial, "no pids cgroup step".to_string()),
        },
        Processes::PidMax(n) => (
            LayerStatus::Enforced,
            format!("whole tree: the PID namespace's pid_max={n}"),
        ),
        Processes::Nproc(n) if namespaces.user => (
            LayerStatus::Enforced,
            format!("whole tree: RLIMIT_NPROC={n}, counted in the run's own user namespace"),
        ),
        Processes::Nproc(n) => (
            LayerStatus::Enforced,
            format!("RLIMIT_NPROC={n}, counting every process of this user on the host"),
        ),
        Processes::Nothing => {
            let (reason, fix) = tree_gap(input.host);
            gaps.push(missing(
                Protection::ProcessLimit,
                "RLIMIT_NPROC does not bind root and no pids cgroup is writable",
                "mount the pids cgroup controller",
            ));
            gaps.push(missing(Protection::TreeLimits, &reason, &fix));
            (
                LayerStatus::Partial,
                format!("nothing binds root: {reason}"),
            )
        }
    };
    Layer {
        name: "processes".into(),
        status,
        detail,
    }
}

#[cfg(test)]
#[path = "limits_tests.rs"]
mod tests;
