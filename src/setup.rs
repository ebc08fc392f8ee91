//! The composition root: every command loads its profile, sandbox and policy here, by one
//! road, and the adapters (`sbx run`, `check`, `explain`, `hook`, `serve`) only translate
//! their arguments into [`SetupOptions`].
//!
//! - [`sandbox`]: the profile named by `--profile`, bound to this host. All that
//!   `sbx run --no-policy` and `sbx explain` need.
//! - [`Loaded::load`]: that sandbox resolved for a workspace, and the merged policy: the
//!   built-in rules, the policy the profile brings ([`Profile::policy_sources`]), the user's,
//!   the project's and `--policy`. What the permission pipeline needs.
#![forbid(unsafe_code)]

use crate::exec::{Resolved, RunError, Sandbox};
use crate::host::Host;
use crate::pipeline::{EnforcementOutlook, PipelineBuilder, ProfileCaps};
use crate::plan::LayerStatus;
use crate::policy::{self, LoadOptions, Policy, PolicyError};
use crate::profile::{Profile, ProfileError};
use crate::workspace::WorkspaceContext;
use crate::{CapabilitySet, Pipeline};
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why a command could not load its profile or policy: `sbx hook` and `sbx serve` answer
/// deny with it, the CLI exits 125 (2 for `sbx check`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SetupError {
    /// The profile could not be loaded.
    #[error("profile: {0}")]
    Profile(#[from] ProfileError),
    /// The workspace could not be made canonical (it does not exist, or is not reachable).
    #[error("workspace {}: {source}", path.display())]
    Workspace {
        /// The workspace as given.
        path: PathBuf,
        /// Why it could not be made canonical.
        source: std::io::Error,
    },
    /// The profile could not be resolved for the workspace.
    #[error("sandbox: {0}")]
    Sandbox(#[from] RunError),
    /// A policy source could not be loaded, or its examples do not hold.
    #[error("policy: {0}")]
    Policy(#[from] PolicyError),
}

/// What `--profile`, `--policy` and `--workspace` name.
#[derive(Clone, Debug)]
pub struct SetupOptions {
    /// A built-in profile's name, or the path of a profile file.
    pub profile: String,
    /// An extra policy file (`--policy`); it must exist.
    pub policy: Option<PathBuf>,
    /// The workspace directory; made canonical on load.
    pub workspace: PathBuf,
}

/// Load the profile named by `--profile` (a built-in's name or a file's path) and bind it to
/// the detected host. Both in turn: a thread to detect the host meanwhile cost more than the
/// overlap saved (its stack, its own malloc arena and their first pages: a run's setup took
/// 1.1-1.45 ms with one against 0.8 ms without, by uprobes on both builds).
pub fn sandbox(profile: &str) -> Result<Sandbox, ProfileError> {
    let profile = Profile::load(profile)?;
    let mut sandbox = Sandbox::with_host(profile, Host::detect());
    // The profile is used as loaded: its plans can be found again by its texts.
    sandbox.store_plans();
    Ok(sandbox)
}

/// Where the commands of the workspace `path` work: its canonical root and the context built
/// there, the one way every command derives it.
pub fn workspace(path: &Path) -> Result<WorkspaceContext, SetupError> {
    let root = std::fs::canonicalize(path).map_err(|source| SetupError::Workspace {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(WorkspaceContext::of(&root))
}

/// A profile and policy resolved for one workspace.
pub struct Loaded {
    /// The profile bound to this host: what runs the commands.
    pub sandbox: Arc<Sandbox>,
    /// The merged policy the permission pipeline decides by.
    pub policy: Arc<Policy>,
    /// The profile's capability set for the workspace: the most any call may get.
    pub caps: CapabilitySet,
    /// What this host would enforce, planned on first use: only the sandbox-auto and
    /// bypass fast paths need it, and planning reads the file system.
    outlook: std::sync::OnceLock<EnforcementOutlook>,
    /// Where the commands work: the canonical workspace root, the home, and the profile's
    /// writable trees. Built here once; the policy, the pipeline and the resolution read it.
    pub workspace: WorkspaceContext,
    /// The resolution behind `caps`, for a run that follows at once ([`Sandbox::run_resolved`]);
    /// a caller that runs later lets it go and the run resolves afresh.
    pub resolved: Option<Resolved>,
}

impl Loaded {
    /// Load the profile, resolve it for the workspace and merge the policy sources
    /// (built-in, the profile's, user, project, `--policy`).
    pub fn load(opts: &SetupOptions) -> Result<Self, SetupError> {
        let context = workspace(&opts.workspace)?;
        let sandbox = sandbox(&opts.profile)?;
        let resolved = sandbox.resolve_in(&context)?;
        let caps = resolved.caps().clone();
        let workspace = context
            .with_writable(caps.writable_trees())
            .with_tmp(resolved.tmp().to_path_buf());
        let policy = load_policy(sandbox.profile(), opts.policy.clone(), &workspace)?;
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

/// The policy for a profile in a workspace: the built-in rules, the policy the profile
/// brings, the user's and the project's files, and `policy_file`.
fn load_policy(
    profile: &Profile,
    policy_file: Option<PathBuf>,
    workspace: &WorkspaceContext,
) -> Result<Policy, PolicyError> {
    let load = LoadOptions {
        profile: profile.policy_sources.clone(),
        policy_file,
        ..LoadOptions::default()
    };
    policy::load(workspace, &load)
}

/// What the executor will enforce here, from the plan's report. The plan is made from the
/// resolution the run will reuse, and kept with it.
fn outlook(
    sandbox: &Sandbox,
    workspace: &WorkspaceContext,
    resolved: Option<&Resolved>,
) -> EnforcementOutlook {
    let planned = match resolved {
        Some(r) => sandbox.plan_resolved(r).map(Cow::Borrowed),
        None => sandbox
            .plan_in(workspace, sandbox.host())
            .map(|(_, p)| Cow::Owned(p)),
    };
    match planned {
        Ok(plan) => {
            // Memory kept per process (RLIMIT_DATA) where no cgroup can bound the tree is how
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::SourceKind;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("sbx-setup-{name}-{}", std::process::id()));
        let made = std::fs::create_dir_all(dir.join("ws"));
        assert!(made.is_ok(), "{made:?}");
        dir
    }

    /// `(kind, file)` of every source the loaded policy's rules came from.
    fn sources(l: &Loaded) -> Vec<(SourceKind, String)> {
        let mut v: Vec<_> = l
            .policy
            .rules()
            .iter()
            .map(|r| (r.source.kind, r.source.file.clone()))
            .collect();
        v.dedup();
        v
    }

    #[test]
    fn a_profile_and_its_policy_load_by_one_road() {
        let dir = scratch("road");
        let file = dir.join("mine.toml");
        let text = "extends = \"ci\"\n[policy]\nask = [\"Bash(make *)\"]\n";
        assert!(std::fs::write(&file, text).is_ok());
        let load = |profile: &str| {
            Loaded::load(&SetupOptions {
                profile: profile.into(),
                policy: None,
                workspace: dir.join("ws"),
            })
        };
        let (builtin, mine) = (load("ci"), load(&file.display().to_string()));
        let _ = std::fs::remove_dir_all(&dir);
        let (Ok(builtin), Ok(mine)) = (builtin, mine) else {
            panic!("both load")
        };
        let shipped = (SourceKind::Profile, "ci".to_string());
        assert!(sources(&builtin).contains(&shipped));
        assert!(sources(&builtin).contains(&(SourceKind::Builtin, "sbx".to_string())));
        // A file extending `ci` brings `ci`'s shipped policy and its own table.
        assert!(sources(&mine).contains(&shipped));
        assert!(sources(&mine).contains(&(SourceKind::Profile, file.display().to_string())));
        assert!(
            !sources(&builtin)
                .iter()
                .any(|(_, f)| f.ends_with("mine.toml"))
        );
        // The sandbox and the capability set come from the same profile.
        assert_eq!(mine.sandbox.profile().name, file.display().to_string());
        assert_eq!(
            mine.caps,
            mine.sandbox
                .capabilities(&mine.workspace.root)
                .unwrap_or_else(|e| panic!("{e}"))
        );
    }

    #[test]
    fn what_cannot_be_loaded_says_what_and_why() {
        assert!(matches!(
            sandbox("no-such-profile"),
            Err(ProfileError::Unknown { .. })
        ));
        let missing = Loaded::load(&SetupOptions {
            profile: "workspace".into(),
            policy: None,
            workspace: PathBuf::from("/nonexistent-sbx-setup-ws"),
        });
        assert!(matches!(missing, Err(SetupError::Workspace { .. })));
        let dir = scratch("bad-policy");
        let bad = Loaded::load(&SetupOptions {
            profile: "workspace".into(),
            policy: Some(dir.join("missing-policy.toml")),
            workspace: dir.join("ws"),
        });
        let _ = std::fs::remove_dir_all(&dir);
        assert!(matches!(
            bad,
            Err(SetupError::Policy(PolicyError::Read { .. }))
        ));
    }
}
