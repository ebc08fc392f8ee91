//! The plan of a loaded profile's capability set.
#![forbid(unsafe_code)]

use super::{DirLister, PlanError, PlanInput, SandboxPlan, plan};
use crate::capability::CapabilitySet;
use crate::host::Host;
use crate::profile::Profile;
use std::path::Path;

/// Plan `caps` on `host`, with `fs` for the directory listings; `tmp` is the sandbox's
/// temporary directory as the command sees it. With [`Profile::resolve_in`] and a fake file
/// system this is the whole road from a profile to its plan, without the machine.
///
/// The profile is not read: what the plan takes from it (required protections, extra
/// syscalls, where each limit was set) travels in `caps`, so a narrowed set plans with its
/// own. It stays in the signature for the executor's callers; [`plan`] is the same road.
pub fn for_profile(
    _profile: &Profile,
    caps: &CapabilitySet,
    tmp: &Path,
    host: &Host,
    fs: &dyn DirLister,
) -> Result<SandboxPlan, PlanError> {
    plan(&PlanInput { caps, host, tmp }, fs)
}
