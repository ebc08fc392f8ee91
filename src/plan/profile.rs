//! The plan of a loaded profile: its capability set planned with what the profile says beside
//! it (required protections, where extra syscalls and limits were set).
#![forbid(unsafe_code)]

use super::{DirLister, PlanError, PlanInput, SandboxPlan, plan};
use crate::capability::{CapabilitySet, Origin};
use crate::host::Host;
use crate::profile::Profile;
use std::collections::BTreeMap;
use std::path::Path;

/// The limits whose origin the plan records.
const LIMIT_KEYS: [&str; 7] = [
    "timeout",
    "output",
    "memory",
    "processes",
    "file_size",
    "cpu_time",
    "open_files",
];

/// Plan `caps`, resolved from `profile` (and perhaps narrowed), on `host`, with `fs` for the
/// directory listings; `tmp` is the sandbox's temporary directory as the command sees it.
/// With [`Profile::resolve_in`] and a fake file system this is the whole road from a profile
/// to its plan, without the machine.
pub fn for_profile(
    profile: &Profile,
    caps: &CapabilitySet,
    tmp: &Path,
    host: &Host,
    fs: &dyn DirLister,
) -> Result<SandboxPlan, PlanError> {
    let origins: BTreeMap<String, Origin> = LIMIT_KEYS
        .iter()
        .filter_map(|k| profile.limit_origin(k).map(|o| (k.to_string(), o)))
        .collect();
    plan(
        &PlanInput {
            caps,
            host,
            requires: &profile.requires,
            extra_syscall_origins: &profile.extra_denied_syscalls,
            limit_origins: &origins,
            tmp,
        },
        fs,
    )
}
