//! Which mechanism keeps `memory` and `processes`, for each kind of host.
use super::*;
use crate::capability::{
    CapabilitySet, EnvFilter, FsCaps, Isolation, Limits, NetworkMode, Requirement,
};
use crate::host::{Availability, CgroupHost};
use std::path::Path;

fn caps(processes: u64) -> CapabilitySet {
    CapabilitySet {
        fs: FsCaps::default(),
        network: NetworkMode::None,
        net_rules: Default::default(),
        limits: Limits {
            memory_bytes: Some(64 << 20),
            processes: Some(processes),
            ..Limits::default()
        },
        isolation: Isolation::default(),
        env: EnvFilter::default(),
        extra_denied_syscalls: Vec::new(),
        requires: Vec::new(),
        origins: Default::default(),
    }
}

fn base(version: CgroupVersion, dir: &str) -> Option<CgroupBase> {
    Some(CgroupBase {
        version,
        dir: dir.into(),
        enable: false,
    })
}

fn host(euid: u32, cgroups: CgroupHost) -> Host {
    let mut h = Host::detect();
    h.euid = euid;
    h.pid_max_per_namespace = true;
    h.cgroups = cgroups;
    h
}

fn cgroups(version: CgroupVersion) -> CgroupHost {
    CgroupHost {
        memory: base(version, "/cg/memory"),
        pids: base(version, "/cg/pids"),
        swap_bounded: true,
        missing: Availability::Available,
    }
}

fn ns() -> Namespaces {
    Namespaces {
        user: false,
        mount: true,
        pid: true,
        net: true,
        ipc: true,
        uts: true,
    }
}

/// `(controllers in cgroups, rlimits, layers)` for a run.
fn plan_for(
    host: &Host,
    processes: u64,
    requires: &[Protection],
) -> (Vec<Controller>, Vec<Rlimit>, Vec<Layer>, Vec<Protection>) {
    let mut caps = caps(processes);
    caps.requires = requires
        .iter()
        .map(|p| Requirement {
            protection: *p,
            origin: Origin::builtin("test"),
        })
        .collect();
    let input = PlanInput {
        caps: &caps,
        host,
        tmp: Path::new("/tmp"),
        below: &[],
    };
    let (mut gaps, mut report) = (Vec::new(), Vec::new());
    let p = limits_plan(&input, &ns(), &mut gaps, &mut report);
    let controllers = p
        .cgroups
        .iter()
        .flat_map(|c| c.controllers.clone())
        .collect();
    let rlimits = p.rlimits.iter().map(|r| r.resource).collect();
    (
        controllers,
        rlimits,
        report,
        gaps.into_iter().map(|g| g.0).collect(),
    )
}

fn status(layers: &[Layer], name: &str) -> LayerStatus {
    layers
        .iter()
        .find(|l| l.name == name)
        .map_or(LayerStatus::NotEnforced, |l| l.status.clone())
}

#[test]
fn cgroup_v2_always_bounds_the_tree_and_no_rlimit_as_is_set() {
    for euid in [0, 1000] {
        let (c, r, layers, gaps) = plan_for(&host(euid, cgroups(CgroupVersion::V2)), 1024, &[]);
        assert_eq!(c, [Controller::Memory, Controller::Pids], "euid {euid}");
        assert!(
            !r.contains(&Rlimit::Data) && !r.contains(&Rlimit::Nproc),
            "{r:?}"
        );
        assert_eq!(status(&layers, "memory"), LayerStatus::Enforced);
        assert!(gaps.is_empty(), "{gaps:?}");
    }
}

#[test]
fn cgroup_v1_is_joined_when_required_or_for_root_below_pid_max() {
    let v1 = cgroups(CgroupVersion::V1);
    // Not required, processes kept for free: memory per process, reported partial.
    let (c, r, layers, gaps) = plan_for(&host(0, v1.clone()), 1024, &[]);
    assert!(c.is_empty(), "{c:?}");
    assert!(r.contains(&Rlimit::Data));
    assert_eq!(status(&layers, "memory"), LayerStatus::Partial);
    assert_eq!(status(&layers, "processes"), LayerStatus::Enforced);
    assert_eq!(gaps, [Protection::TreeLimits]);
    // Required: joined.
    let (c, r, _, gaps) = plan_for(&host(0, v1.clone()), 1024, &[Protection::TreeLimits]);
    assert_eq!(c, [Controller::Memory, Controller::Pids]);
    assert!(!r.contains(&Rlimit::Data) && gaps.is_empty());
    // Root below 301: only a pids cgroup keeps the limit, and memory comes along.
    let (c, _, _, _) = plan_for(&host(0, v1.clone()), 32, &[]);
    assert_eq!(c, [Controller::Memory, Controller::Pids]);
    // Not root: RLIMIT_NPROC keeps the limit; nothing is joined.
    let (c, r, _, _) = plan_for(&host(1000, v1), 32, &[]);
    assert!(c.is_empty() && r.contains(&Rlimit::Nproc) && r.contains(&Rlimit::Data));
}

#[test]
fn without_cgroups_root_below_pid_max_is_unbound_and_says_so() {
    let none = CgroupHost::none("no cgroups in this test");
    let (c, r, layers, gaps) = plan_for(&host(0, none.clone()), 32, &[]);
    assert!(c.is_empty() && r.contains(&Rlimit::Data) && !r.contains(&Rlimit::Nproc));
    assert_eq!(status(&layers, "processes"), LayerStatus::Partial);
    assert!(gaps.contains(&Protection::ProcessLimit) && gaps.contains(&Protection::TreeLimits));
    // Paired: 301 or more, the PID namespace's pid_max keeps it.
    let (_, _, layers, _) = plan_for(&host(0, none), 1024, &[]);
    assert_eq!(status(&layers, "processes"), LayerStatus::Enforced);
}
