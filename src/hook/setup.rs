//! Loading what an adapter needs: the profile, its capability set, the merged policy,
//! and a pipeline built from them. Shared by `sbx hook` and `sbx serve`.
#![forbid(unsafe_code)]

use crate::exec::{Resolved, RunError, Sandbox};
use crate::pipeline::{EnforcementOutlook, PipelineBuilder, ProfileCaps};
use crate::plan::LayerStatus;
use crate::policy::{self, LoadOptions, Policy, PolicyEnv, PolicyError};
use crate::profile::{Profile, ProfileError};
use crate::{CapabilitySet, Pipeline};
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why an adapter could not load its profile or policy. Every variant becomes a denial.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SetupError {
    #[error("profile: {0}")]
    Profile(#[from] ProfileError),
    #[error("workspace {}: {source}", path.display())]
    Workspace {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("sandbox: {0}")]
    Sandbox(#[from] RunError),
    #[error("policy: {0}")]
    Policy(#[from] PolicyError),
}

/// What `--profile`, `--policy` and `--workspace` name.
#[derive(Clone, Debug)]
pub struct SetupOptions {
    pub profile: String,
    pub policy: Option<PathBuf>,
    pub workspace: PathBuf,
}

/// A profile and policy resolved for one workspace.
pub struct Loaded {
    pub sandbox: Arc<Sandbox>,
    pub policy: Arc<Policy>,
    pub caps: CapabilitySet,
    /// What this host would enforce, planned on first use: only the sandbox-auto and
    /// bypass fast paths need it, and planning reads the file system.
    outlook: std::sync::OnceLock<EnforcementOutlook>,
    /// Canonical workspace root.
    pub workspace: PathBuf,
    /// The resolution behind `caps`, for a run that follows at once ([`Sandbox::run_resolved`]);
    /// a caller that runs later lets it go and the run resolves afresh.
    pub resolved: Option<Resolved>,
}

impl Loaded {
    /// Load the profile, resolve it for the workspace and merge the policy sources
    /// (built-in, the profile's default policy, user, project, `--policy`).
    pub fn load(opts: &SetupOptions) -> Result<Self, SetupError> {
        let workspace =
            std::fs::canonicalize(&opts.workspace).map_err(|source| SetupError::Workspace {
                path: opts.workspace.clone(),
                source,
            })?;
        let profile = Profile::load(&opts.profile)?;
        let sandbox = Sandbox::new(profile);
        let resolved = sandbox.resolve(&workspace)?;
        let caps = resolved.caps().clone();
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute())
            .unwrap_or_else(|| PathBuf::from("/"));
        let env = PolicyEnv {
            workspace: workspace.clone(),
            home,
        };
        let load = LoadOptions {
            profile: policy::profile_policy(&opts.profile)
                .map(|t| (opts.profile.clone(), t.into())),
            inherited: chain_policies(sandbox.profile(), &opts.profile),
            policy_file: opts.policy.clone(),
            ..LoadOptions::default()
        };
        let policy = policy::load(&env, &load)?;
        Ok(Self {
            sandbox: Arc::new(sandbox),
            policy: Arc::new(policy),
            caps,
            outlook: std::sync::OnceLock::new(),
            workspace,
            resolved: Some(resolved),
        })
    }

    /// What the sandbox would enforce on this host (planned once, on first use).
    pub fn outlook(&self) -> EnforcementOutlook {
        self.outlook
            .get_or_init(|| outlook(&self.sandbox, &self.workspace, self.resolved.as_ref()))
            .clone()
    }

    /// A pipeline over this profile and policy, with the enforcement outlook of this host.
    pub fn pipeline(&self) -> PipelineBuilder {
        Pipeline::builder(self.policy.clone(), ProfileCaps::new(self.caps.clone()))
            .outlook(self.outlook())
    }
}

/// Every level of the profile's `extends` chain contributes its policy, base first: the
/// shipped default of the nearest built-in it extends, then each file's `[policy]` table.
fn chain_policies(profile: &Profile, name: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Some(base) = profile.builtin_base.as_deref().filter(|b| *b != name)
        && let Some(text) = policy::profile_policy(base)
    {
        out.push((base.to_string(), text.to_string()));
    }
    out.extend(profile.policy_sources.iter().cloned());
    out
}

/// What the executor will enforce here, from the plan's report. The plan is made from the
/// resolution the run will reuse, and kept with it.
fn outlook(sandbox: &Sandbox, workspace: &Path, resolved: Option<&Resolved>) -> EnforcementOutlook {
    let planned = match resolved {
        Some(r) => sandbox.plan_resolved(r).map(Cow::Borrowed),
        None => sandbox
            .plan_for(workspace, sandbox.host())
            .map(|(_, p)| Cow::Owned(p)),
    };
    match planned {
        Ok(plan) => {
            // Memory kept per process (RLIMIT_AS) where no cgroup can bound the tree is how
            // every run was bounded before cgroups: the report says `partial`, but it does not
            // make each command wait for an approval.
            let missing: Vec<String> = plan
                .report
                .iter()
                .filter(|l| l.status != LayerStatus::Enforced && l.name != "memory")
                .map(|l| format!("{}: {}", l.name, l.detail))
                .collect();
            EnforcementOutlook {
                fully_enforced: missing.is_empty(),
                missing,
            }
        }
        Err(e) => EnforcementOutlook {
            fully_enforced: false,
            missing: vec![e.to_string()],
        },
    }
}
