//! Spawn and supervise one sandboxed process tree: output relay with byte caps, timeout with
//! escalation, signal forwarding, exit status and resource usage.
mod below;
mod fds;
mod gitdirs;
mod gitindex;
mod gitscan;
mod identity;
mod kept;
#[cfg(test)]
mod kept_tests;
mod modes;
mod notices;
mod output;
mod prepare;
mod protect;
mod protected_link;
mod proxy;
mod pty_control;
mod quarantine;
mod relay;
mod request;
mod result;
mod spare;
mod stamp;
mod stdin;
mod store;
mod supervise;
mod term_filter;
mod terminal;
mod walk;

/// The errors of preparing a plan's enforcement and the setup steps a run's error names,
/// which [`RunError`] carries: enforce itself is crate-internal.
pub use crate::enforce::{
    EnforceError, landlock::LandlockError, messages::Step, seccomp::SeccompError,
};
pub use fds::ensure_standard_fds;
pub use output::{Output, OutputCallback, Stream, wanted};
pub use protect::ProtectedPath;
pub use pty_control::PtyControl;
pub use quarantine::quarantine_root;
pub use request::RunRequest;
pub use result::{EnforcementReport, ExecFailure, LimitReached, RunResult};
pub use term_filter::SCREEN_RESET;
pub use terminal::Terminal;

use crate::capability::CapabilitySet;
use crate::host::{Availability, Host};
use crate::lookups::Lookups;
use crate::plan::{self, PlanInput, RealFs, SandboxPlan};
use crate::profile::{Profile, ProfileError, RealFiles, Vars};
use crate::workspace::WorkspaceContext;
use prepare::cleanup;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;
use supervise::supervise;

/// A capability set and its plan, shared with the plans a sandbox keeps.
type Planned = (Arc<CapabilitySet>, Arc<SandboxPlan>);

/// ` at PATH` for an error that names one.
fn at(path: Option<&std::path::Path>) -> String {
    path.map(|p| format!(" at {}", p.display()))
        .unwrap_or_default()
}

/// Why a run could not start. The CLI maps every variant to exit code 125.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    #[error(transparent)]
    /// The profile could not be resolved.
    Profile(#[from] ProfileError),
    #[error(transparent)]
    /// The host cannot give a protection the profile requires.
    Plan(#[from] plan::PlanError),
    #[error(transparent)]
    /// The enforcement could not be prepared.
    Enforce(#[from] EnforceError),
    #[error("workspace {path}: {source}")]
    /// The workspace is missing or not a directory.
    Workspace {
        /// The workspace as given.
        path: PathBuf,
        /// Why it cannot be used.
        source: std::io::Error,
    },
    #[error("no command given")]
    /// The request has no argv.
    NoCommand,
    #[error("sandbox setup failed while {}{}: {}", step.describe(), at(path.as_deref()), std::io::Error::from_raw_os_error(*errno))]
    /// A step of the sandbox's setup failed in the child.
    Setup {
        /// The step.
        step: Step,
        /// The path it acted on, when it names one (a mount operation's).
        path: Option<PathBuf>,
        /// The error number it failed with.
        errno: i32,
    },
    #[error("cannot start the sandbox: {source}")]
    /// The child could not be started.
    Spawn {
        /// Why.
        source: std::io::Error,
    },
}

/// A profile bound to a host, ready to run commands.
pub struct Sandbox {
    profile: Profile,
    host: Host,
    /// Tells this sandbox's [`Resolved`] snapshots from another's.
    id: u64,
    /// Plans kept for the runs that follow (see [`kept`]).
    kept: kept::Kept,
    /// Whether each run with a kept plan has the next one's sandbox made ahead (see [`spare`]).
    spares: std::sync::atomic::AtomicBool,
    /// The sandbox made ahead, if any.
    spare: spare::Slot,
    /// Whether plans are kept between processes too (see [`store`]).
    stores: bool,
}

fn next_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// The profile's capability set resolved for one workspace by [`Sandbox::resolve`]: a snapshot
/// of the file system at that moment (globs expanded, paths looked up). Handed to
/// [`Sandbox::run_resolved`] right after, it spares the run a second resolution. A run given
/// no snapshot, or one taken by another sandbox or for other variables, resolves afresh; a
/// snapshot is used once. The plan made from it, when someone asked for it first (the gate's
/// enforcement outlook), goes with it, so the run does not plan twice.
pub struct Resolved {
    sandbox: u64,
    vars: Vars,
    caps: CapabilitySet,
    plan: std::sync::OnceLock<SandboxPlan>,
    /// The workspace's listing that plan was made with, for the run's record before it.
    walk: std::sync::OnceLock<walk::Walk>,
}

impl Resolved {
    /// The capability set.
    pub fn caps(&self) -> &CapabilitySet {
        &self.caps
    }

    /// `{tmp}` as the resolution took it.
    pub fn tmp(&self) -> &Path {
        &self.vars.tmp
    }
}

impl Sandbox {
    /// Bind a loaded profile to the detected host.
    pub fn new(profile: Profile) -> Self {
        Self {
            profile,
            host: Host::detect(),
            id: next_id(),
            kept: kept::Kept::default(),
            spares: false.into(),
            spare: spare::Slot::default(),
            stores: false,
        }
    }

    /// Bind a profile to a host detected or described by the caller (tests, `explain`, a
    /// loader that detects the host while the profile loads).
    pub fn with_host(profile: Profile, host: Host) -> Self {
        Self {
            profile,
            host,
            id: next_id(),
            kept: kept::Kept::default(),
            spares: false.into(),
            spare: spare::Slot::default(),
            stores: false,
        }
    }

    /// Have every run with a kept plan make the next run's sandbox ahead of it, for a session
    /// that runs one call after another: the next call with the same plan then starts in a
    /// sandbox already set up (fresh namespaces all the same, one per call). The spare is an
    /// idle init process, killed when unused, when older than 30 seconds, or with sbx.
    pub fn make_spares(&self) {
        self.spares
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// End what [`Sandbox::make_spares`] started: no more spares are made, and the one made
    /// ahead is killed and its cgroups removed (after the one being made, if any, is done).
    /// Blocks while that takes; a session calls it as it ends, after its last run.
    pub fn end_spares(&self) {
        self.spares
            .store(false, std::sync::atomic::Ordering::Relaxed);
        self.spare.clear();
    }

    /// Keep plans between processes as well (see [`store`]), for a caller that loaded the
    /// profile with [`Profile::load`] and changes nothing in it: a plan is found again by the
    /// texts the profile was loaded from.
    ///
    /// Nothing changes where the store cannot be used (see [`store::Store::usable`]): a run
    /// then plans without writing down its questions, as a one-shot run does.
    pub fn store_plans(&mut self) {
        self.stores = store::Store::usable(&self.host);
    }

    fn spares_on(&self) -> bool {
        self.spares.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The profile.
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// The host it runs on.
    pub fn host(&self) -> &Host {
        &self.host
    }

    /// Whether runs on `host`, narrowed by `narrow` when given, get a private `/tmp` mounted in
    /// their own namespace: decided by the isolation the run gets, the profile's switches
    /// (resolved ahead of the variables they decide) with those the narrowing sets, as the
    /// intersection of their sets has them.
    pub fn private_tmp(&self, host: &Host, narrow: Option<&CapabilitySet>) -> bool {
        let own = self.profile.resolve_isolation();
        narrow
            .map_or(own, |n| own.stricter(n.isolation))
            .private_tmp_in(host.namespaces.ok())
    }

    /// The variables for `workspace` (its writable trees left out: the resolution makes
    /// them), for a run narrowed by `narrow` when given. Without a private `/tmp`, `{tmp}` is
    /// a fresh directory per run (`host_tmp`), or a placeholder when only planning.
    pub fn vars(
        &self,
        workspace: &WorkspaceContext,
        host: &Host,
        narrow: Option<&CapabilitySet>,
        host_tmp: Option<&Path>,
    ) -> Vars {
        let tmp = if self.private_tmp(host, narrow) {
            PathBuf::from("/tmp")
        } else {
            host_tmp.map_or_else(|| std::env::temp_dir().join("sbx-RUN"), Path::to_path_buf)
        };
        Vars {
            workspace: WorkspaceContext {
                writable: Vec::new(),
                ..workspace.clone()
            },
            tmp,
        }
    }

    /// Resolve the capability set for a workspace.
    pub fn capabilities(&self, workspace: &Path) -> Result<CapabilitySet, RunError> {
        Ok(self.resolve(workspace)?.caps)
    }

    /// Resolve the capability set for a workspace, as a snapshot a run may reuse.
    pub fn resolve(&self, workspace: &Path) -> Result<Resolved, RunError> {
        self.resolve_in(&WorkspaceContext::of(workspace))
    }

    /// Resolve the capability set where `workspace` says, as a snapshot a run in the same
    /// workspace may reuse.
    pub fn resolve_in(&self, workspace: &WorkspaceContext) -> Result<Resolved, RunError> {
        let vars = self.vars(workspace, &self.host, None, None);
        if self.stores
            && let Some(r) = self.resolve_planned(&vars)
        {
            return Ok(r);
        }
        let caps = self.profile.resolve(&vars)?;
        Ok(Resolved {
            sandbox: self.id,
            vars,
            caps,
            plan: std::sync::OnceLock::new(),
            walk: std::sync::OnceLock::new(),
        })
    }

    /// A snapshot for a sandbox that keeps plans between processes: resolved and planned at
    /// once, or found in the store, with the plan going with it; `None` when no plan can be
    /// made (a required protection missing), for the caller to resolve alone.
    fn resolve_planned(&self, vars: &Vars) -> Option<Resolved> {
        let looks = stamp::Looks::with_room();
        let first = below::FirstLevel::new(&vars.workspace.root);
        let (caps, plan) = self
            .plan_kept(vars, &self.host, None, &looks, &first)
            .ok()?;
        let walk = std::sync::OnceLock::new();
        if let Some(w) = first.into_walk() {
            let _ = walk.set(w);
        }
        Some(Resolved {
            sandbox: self.id,
            vars: vars.clone(),
            caps: Arc::unwrap_or_clone(caps),
            plan: std::sync::OnceLock::from(Arc::unwrap_or_clone(plan)),
            walk,
        })
    }

    /// The plan for a snapshot this sandbox took, made once and kept with the snapshot for
    /// the run that follows.
    pub fn plan_resolved<'r>(&self, r: &'r Resolved) -> Result<&'r SandboxPlan, RunError> {
        if let Some(p) = r.plan.get() {
            return Ok(p);
        }
        let first = below::FirstLevel::new(&r.vars.workspace.root);
        let plan = self.plan_caps(&r.caps, &r.vars, &self.host, &first, &RealFs::default())?;
        if let Some(w) = first.into_walk() {
            let _ = r.walk.set(w);
        }
        Ok(r.plan.get_or_init(|| plan))
    }

    /// Compute the plan for a workspace on `host` without touching the kernel.
    pub fn plan_for(
        &self,
        workspace: &Path,
        host: &Host,
    ) -> Result<(CapabilitySet, SandboxPlan), RunError> {
        self.plan_in(&WorkspaceContext::of(workspace), host)
    }

    /// [`Sandbox::plan_for`] where `workspace` says, for a caller that has the context.
    pub fn plan_in(
        &self,
        workspace: &WorkspaceContext,
        host: &Host,
    ) -> Result<(CapabilitySet, SandboxPlan), RunError> {
        let vars = self.vars(workspace, host, None, None);
        let first = below::FirstLevel::new(&vars.workspace.root);
        let (caps, plan) = self.plan_with_vars(&vars, host, None, None, None, &first)?;
        Ok((Arc::unwrap_or_clone(caps), Arc::unwrap_or_clone(plan)))
    }

    /// `narrow`, when given, is intersected with the profile's set: it can only take away.
    /// `resolved` is used when it is this sandbox's, for the same variables. Without it, and
    /// when `reuse` gives the call's looks, a kept plan for the same inputs is used while it
    /// still holds. `first` is the workspace's first level as this run sees it.
    fn plan_with_vars(
        &self,
        vars: &Vars,
        host: &Host,
        narrow: Option<&CapabilitySet>,
        resolved: Option<Resolved>,
        reuse: Option<&stamp::Looks>,
        first: &below::FirstLevel,
    ) -> Result<Planned, RunError> {
        let resolved = resolved.filter(|r| r.sandbox == self.id && r.vars.resolves_as(vars));
        // Resolving and planning right after look at the same paths: once each.
        let looks = Rc::new(Lookups::default());
        let mut caps = match resolved {
            Some(r) => {
                if narrow.is_none()
                    && *host == self.host
                    && let Some(plan) = r.plan.into_inner()
                {
                    if let Some(w) = r.walk.into_inner() {
                        first.adopt(w);
                    }
                    return Ok((Arc::new(r.caps), Arc::new(plan)));
                }
                r.caps
            }
            None => match reuse {
                Some(looks) => return self.plan_kept(vars, host, narrow, looks, first),
                None => self
                    .profile
                    .resolve_in(vars, &RealFiles::sharing(Rc::clone(&looks)))?,
            },
        };
        if let Some(n) = narrow {
            caps = caps.intersect(n);
        }
        let plan = self.plan_caps(&caps, vars, host, first, &RealFs::sharing(looks))?;
        Ok((Arc::new(caps), Arc::new(plan)))
    }

    /// The kept plan for these inputs while the file system still answers as it did when it
    /// was made (as `looks` saw it); else a fresh one, kept for the next run, after which
    /// `looks` starts afresh: later checks judge the moment that plan was made in, or after.
    /// A kept plan also holds only while the protected names below the workspace root are
    /// the ones it holds read-only (`first` lists them).
    fn plan_kept(
        &self,
        vars: &Vars,
        host: &Host,
        narrow: Option<&CapabilitySet>,
        looks: &stamp::Looks,
        first: &below::FirstLevel,
    ) -> Result<Planned, RunError> {
        let same_below = self
            .kept
            .entry(vars, host, narrow)
            .is_none_or(|e| first.below(&e.caps) == e.below);
        if same_below && let Some(hit) = self.kept.find(vars, host, narrow, looks) {
            return Ok(hit);
        }
        let inputs = kept::Inputs {
            vars: vars.clone(),
            host: host.clone(),
            narrow: narrow.cloned(),
        };
        let stored = self.stored(&inputs);
        if let Some((store, id)) = &stored
            && let Some(hit) = self.plan_stored(store, id, inputs.clone(), looks, first)
        {
            return Ok(hit);
        }
        looks.forget();
        let machine = kept::Recorder::default();
        let mut caps = self.profile.resolve_in(vars, &machine)?;
        if let Some(n) = narrow {
            caps = caps.intersect(n);
        }
        let caps = Arc::new(caps);
        let below = first.below(&caps);
        let input = PlanInput {
            caps: &caps,
            host,
            tmp: &vars.tmp,
            below: &below,
        };
        let plan = Arc::new(plan::plan(&input, &machine)?);
        let entry = kept::Entry {
            inputs,
            caps: caps.clone(),
            plan: plan.clone(),
            asked: machine.into_asked(),
            below,
            settled: Default::default(),
        };
        if let Some((store, id)) = &stored {
            store.save(id, &entry, false);
        }
        self.kept.keep(entry);
        Ok((caps, plan))
    }

    /// The plan store and this plan's name in it, when this sandbox keeps plans there.
    fn stored(&self, inputs: &kept::Inputs) -> Option<(store::Store, String)> {
        if !self.stores {
            return None;
        }
        let id = store::Store::id(&self.profile.digest, inputs)?;
        let s = store::Store::open(&inputs.host)?;
        Some((s, id))
    }

    /// The stored plan for `inputs`, while it holds as a kept one does. A check that had to
    /// ask questions again and confirmed their answers anew stores it again, so that the next
    /// run asks fewer.
    fn plan_stored(
        &self,
        store: &store::Store,
        id: &str,
        inputs: kept::Inputs,
        looks: &stamp::Looks,
        first: &below::FirstLevel,
    ) -> Option<Planned> {
        let r = store.load(id, &inputs)?;
        if first.below(&r.caps) != r.below {
            return None;
        }
        let settled = r.summary.settled();
        if settled && r.summary.holds(looks) {
            return Some((r.caps, r.plan));
        }
        let entry = kept::Entry {
            asked: r.asked()?,
            inputs,
            caps: r.caps,
            plan: r.plan,
            below: r.below,
            settled: Default::default(),
        };
        let changed = entry.asked.recheck(looks)?;
        if changed || !settled {
            store.save(id, &entry, !changed);
        }
        let hit = (entry.caps.clone(), entry.plan.clone());
        self.kept.keep(entry);
        Some(hit)
    }

    fn plan_caps(
        &self,
        caps: &CapabilitySet,
        vars: &Vars,
        host: &Host,
        first: &below::FirstLevel,
        fs: &RealFs,
    ) -> Result<SandboxPlan, RunError> {
        let below = first.below_of(caps);
        let input = PlanInput {
            caps,
            host,
            tmp: &vars.tmp,
            below: &below,
        };
        Ok(plan::plan(&input, fs)?)
    }

    /// Prepare `req` as [`Sandbox::run`] would, and start nothing: an error is the one `run`
    /// would return before the command starts (a bad workspace, a required path or protection
    /// missing). For callers that answer before the run ends, such as background jobs, which
    /// then hand the result to [`Sandbox::run_prepared`].
    pub fn prepare_run(
        &self,
        req: &RunRequest,
        narrow: Option<&Arc<CapabilitySet>>,
    ) -> Result<PreparedRun, RunError> {
        self.prepare_resolved(req, narrow, None)
    }

    fn prepare_resolved(
        &self,
        req: &RunRequest,
        narrow: Option<&Arc<CapabilitySet>>,
        resolved: Option<Resolved>,
    ) -> Result<PreparedRun, RunError> {
        let (workspace, cwd) = places(req)?;
        let host = self.host.clone();
        let launch = self.prepare(req, &host, &workspace, &cwd, narrow.map(|n| &**n), resolved)?;
        Ok(PreparedRun {
            launch,
            sandbox: self.id,
            narrow: narrow.cloned(),
            workspace,
            cwd,
            host,
        })
    }

    /// Run one command under the profile. `narrow`, when given, can only shrink what the
    /// profile grants (it is intersected with the profile's set).
    pub async fn run(
        &self,
        req: RunRequest,
        narrow: Option<&Arc<CapabilitySet>>,
    ) -> Result<RunResult, RunError> {
        self.run_resolved(req, narrow, None).await
    }

    /// [`Sandbox::run`] with the snapshot [`Sandbox::resolve`] just took for this workspace.
    pub async fn run_resolved(
        &self,
        req: RunRequest,
        narrow: Option<&Arc<CapabilitySet>>,
        resolved: Option<Resolved>,
    ) -> Result<RunResult, RunError> {
        let first = self.prepare_resolved(&req, narrow, resolved)?;
        self.run_prepared(first, req).await
    }

    /// Run what [`Sandbox::prepare_run`] prepared for `req` (its command, environment and
    /// narrowing are the prepared ones). A launch prepared by another sandbox is not used: the
    /// run prepares afresh, with the same narrowing.
    pub async fn run_prepared(
        &self,
        first: PreparedRun,
        mut req: RunRequest,
    ) -> Result<RunResult, RunError> {
        let mut p = if first.sandbox == self.id {
            first
        } else {
            let narrow = first.narrow.clone();
            drop(first);
            self.prepare_run(&req, narrow.as_ref())?
        };
        // The protected state is recorded while the init sets the sandbox up, before the
        // command starts; a launch planned again after a refused namespace keeps the first.
        let workspace = p.workspace.clone();
        let mut watch = None;
        let mut record = |l: &mut prepare::Launch| {
            if watch.is_none() {
                watch = Some(protect::Watch::take(
                    &workspace,
                    &l.writable,
                    &l.caps,
                    l.walk.take(),
                ));
            }
        };
        loop {
            match supervise(&mut p.launch, &mut req, &mut record).await {
                Ok(mut result) => {
                    let Some(watch) = watch.take() else {
                        unreachable!("a command starts only after its record is taken")
                    };
                    result.protected = watch.settle();
                    result.protected_failed = watch.fails_run(&result.protected);
                    return Ok(result);
                }
                Err(RunError::Spawn { source })
                    if p.launch.plan.namespaces.user
                        && matches!(
                            source.raw_os_error(),
                            Some(
                                libc::EPERM
                                    | libc::ENOSPC
                                    | libc::EUSERS
                                    | libc::EINVAL
                                    | libc::EACCES
                            )
                        ) =>
                {
                    // The cheap checks said yes but the kernel said no: plan again without namespaces.
                    let reason = format!("creating a user namespace failed: {source}");
                    let fix = "allow unprivileged user namespaces (see `sbx doctor`)".to_string();
                    let mut host = p.host.clone();
                    host.user_namespaces = Availability::Missing {
                        reason: reason.clone(),
                        fix: fix.clone(),
                    };
                    host.namespaces = Availability::Missing { reason, fix };
                    let narrow = p.narrow.clone();
                    let n = narrow.as_deref();
                    let launch = self.prepare(&req, &host, &p.workspace, &p.cwd, n, None)?;
                    // The replaced launch cleans up as it drops.
                    p = PreparedRun {
                        launch,
                        sandbox: self.id,
                        narrow,
                        workspace: p.workspace.clone(),
                        cwd: p.cwd.clone(),
                        host,
                    };
                }
                other => return other,
            }
        }
    }
}

/// A launch prepared by [`Sandbox::prepare_run`]: the plan, the enforcement prepared ahead of
/// the fork, and what to clean up (done when it drops).
pub struct PreparedRun {
    launch: prepare::Launch,
    sandbox: u64,
    narrow: Option<Arc<CapabilitySet>>,
    workspace: PathBuf,
    cwd: PathBuf,
    host: Host,
}

impl Drop for PreparedRun {
    fn drop(&mut self) {
        cleanup(&self.launch);
    }
}

/// The canonical workspace, and the directory to start in: the request's, when it lies
/// inside the workspace, else the workspace.
fn places(req: &RunRequest) -> Result<(PathBuf, PathBuf), RunError> {
    let root = &req.context.root;
    let workspace = std::fs::canonicalize(root).map_err(|source| RunError::Workspace {
        path: root.clone(),
        source,
    })?;
    // A request that starts in its workspace (as most do) resolves one path, not the same twice.
    let cwd = if req.cwd == *root {
        Some(workspace.clone())
    } else {
        std::fs::canonicalize(&req.cwd).ok()
    };
    let cwd = cwd
        .filter(|c| c.starts_with(&workspace))
        .unwrap_or_else(|| workspace.clone());
    Ok((workspace, cwd))
}
