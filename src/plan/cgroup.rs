//! The cgroups made for one run: in which hierarchy, under which directory, and the limit
//! files written in them.
#![forbid(unsafe_code)]

use crate::capability::Origin;
use crate::host::{CgroupBase, CgroupVersion, Controller};
use serde::Serialize;
use std::path::PathBuf;

/// One limit file written in the run's cgroup.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct CgroupSetting {
    /// The cgroup file.
    pub file: String,
    /// The value written to it.
    pub value: String,
    /// A file the kernel may lack (swap accounting turned off): skipped when it does not exist.
    pub optional: bool,
    /// The profile line it comes from.
    pub origin: Origin,
}

/// The run's cgroup in one hierarchy: cgroup v2 has one for every controller, v1 one per
/// controller's hierarchy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct CgroupStep {
    /// The hierarchy's version.
    pub version: CgroupVersion,
    /// Where the run's cgroup is made.
    pub parent: PathBuf,
    /// The controllers it bounds.
    pub controllers: Vec<Controller>,
    /// cgroup v2: controllers enabled in the parent's `cgroup.subtree_control` first.
    pub enable: Vec<Controller>,
    /// Written in order once the cgroup exists.
    pub settings: Vec<CgroupSetting>,
}

impl CgroupStep {
    /// `name=value` for each setting, for the report.
    pub fn describe(&self) -> String {
        let v = match self.version {
            CgroupVersion::V1 => "v1",
            CgroupVersion::V2 => "v2",
        };
        let settings: Vec<String> = self
            .settings
            .iter()
            .map(|s| format!("{}={}", s.file, s.value))
            .collect();
        format!(
            "cgroup {v} under {} ({})",
            self.parent.display(),
            settings.join(", ")
        )
    }
}

fn setting(file: &str, value: u64, optional: bool, origin: &Origin) -> CgroupSetting {
    CgroupSetting {
        file: file.into(),
        value: value.to_string(),
        optional,
        origin: origin.clone(),
    }
}

/// The settings that bound `c` at `value` in a cgroup of `version`. Swap is bounded with memory:
/// none at all on v2, memory plus swap equal to memory on v1.
fn settings_for(
    c: Controller,
    version: CgroupVersion,
    value: u64,
    origin: &Origin,
) -> Vec<CgroupSetting> {
    match (c, version) {
        (Controller::Memory, CgroupVersion::V2) => vec![
            setting("memory.max", value, false, origin),
            setting("memory.swap.max", 0, true, origin),
        ],
        (Controller::Memory, CgroupVersion::V1) => vec![
            setting("memory.limit_in_bytes", value, false, origin),
            setting("memory.memsw.limit_in_bytes", value, true, origin),
        ],
        (Controller::Pids, _) => vec![setting("pids.max", value, false, origin)],
    }
}

/// The steps for the chosen controllers: `(controller, where, value, origin)`. Controllers on
/// cgroup v2 share one step; each v1 controller gets its own.
pub(super) fn cgroup_steps(chosen: &[(Controller, &CgroupBase, u64, Origin)]) -> Vec<CgroupStep> {
    let mut steps: Vec<CgroupStep> = Vec::new();
    for (c, base, value, origin) in chosen {
        let shared = base.version == CgroupVersion::V2;
        let i = match steps
            .iter()
            .position(|s| shared && s.version == base.version && s.parent == base.dir)
        {
            Some(i) => i,
            None => {
                steps.push(CgroupStep {
                    version: base.version,
                    parent: base.dir.clone(),
                    controllers: Vec::new(),
                    enable: Vec::new(),
                    settings: Vec::new(),
                });
                steps.len() - 1
            }
        };
        let step = &mut steps[i];
        step.controllers.push(*c);
        if base.enable {
            step.enable.push(*c);
        }
        step.settings
            .extend(settings_for(*c, base.version, *value, origin));
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base(version: CgroupVersion, dir: &str, enable: bool) -> CgroupBase {
        CgroupBase {
            version,
            dir: dir.into(),
            enable,
        }
    }

    #[test]
    fn v2_controllers_share_one_cgroup_and_v1_ones_get_one_each() {
        let o = Origin::builtin("test");
        let v2 = base(CgroupVersion::V2, "/sys/fs/cgroup/u.slice", true);
        let steps = cgroup_steps(&[
            (Controller::Memory, &v2, 64 << 20, o.clone()),
            (Controller::Pids, &v2, 32, o.clone()),
        ]);
        assert_eq!(steps.len(), 1, "{steps:?}");
        assert_eq!(steps[0].enable, [Controller::Memory, Controller::Pids]);
        let files: Vec<&str> = steps[0].settings.iter().map(|s| s.file.as_str()).collect();
        assert_eq!(files, ["memory.max", "memory.swap.max", "pids.max"]);
        assert_eq!(steps[0].settings[1].value, "0");

        let m = base(CgroupVersion::V1, "/sys/fs/cgroup/memory/a", false);
        let p = base(CgroupVersion::V1, "/sys/fs/cgroup/pids", false);
        let steps = cgroup_steps(&[
            (Controller::Memory, &m, 64 << 20, o.clone()),
            (Controller::Pids, &p, 32, o),
        ]);
        assert_eq!(steps.len(), 2, "{steps:?}");
        assert_eq!(steps[0].settings[1].file, "memory.memsw.limit_in_bytes");
        assert_eq!(steps[0].settings[1].value, (64u64 << 20).to_string());
        assert!(steps[0].settings[1].optional && !steps[0].settings[0].optional);
        assert!(
            steps[1].describe().contains("pids.max=32"),
            "{}",
            steps[1].describe()
        );
    }
}
