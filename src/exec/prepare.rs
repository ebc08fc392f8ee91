//! Preparing one launch: a private `{tmp}` when there is no mount namespace, the
//! directories the profile creates, the plan, the command's environment and executable
//! candidates, and the enforcement prepared ahead of the fork.
use super::{RunError, RunRequest, Sandbox};
use crate::capability::CapabilitySet;
use crate::enforce::{CStrArray, EnforceError, ExecSpec, Prepared, cstr};
use crate::host::Host;
use crate::plan::SandboxPlan;
use crate::workspace::WorkspaceContext;
use std::collections::BTreeMap;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// One run's plan, its prepared enforcement, and what to clean up after it.
pub(super) struct Launch {
    /// The spare init this run hands its command to, if it has one; first, so that an unused
    /// one is killed before `prepared` removes its cgroups.
    pub(super) handover: Option<super::spare::Handover>,
    /// What the next run's spare is made from, once this run has started.
    pub(super) next_spare: Option<NextSpare>,
    /// Shared with the plans the sandbox keeps; copied before a change of its own.
    pub(super) plan: Arc<SandboxPlan>,
    pub(super) prepared: Prepared,
    pub(super) host_tmp: Option<PathBuf>,
    pub(super) timeout: Option<Duration>,
    /// The run's capability set: its protected patterns are checked after the run, names
    /// compared as its `case_folding` says, a change treated as its `protected_change` says.
    pub(super) caps: Arc<CapabilitySet>,
    /// The workspace's listing planning made, for the record before the run.
    pub(super) walk: Option<super::walk::Walk>,
    /// The trees the sandbox writes, where no quarantine may lie.
    pub(super) writable: Vec<PathBuf>,
    /// The proxy's port on the host's loopback, when there is no network namespace.
    pub(super) proxy_listener: Option<std::net::TcpListener>,
}

/// The plan, host and slot a run's successor's spare is made for.
pub(super) struct NextSpare {
    pub(super) plan: Arc<SandboxPlan>,
    pub(super) host: Host,
    pub(super) slot: super::spare::Slot,
}

impl NextSpare {
    pub(super) fn refill(self) {
        self.slot.refill(self.plan, self.host);
    }
}

impl Sandbox {
    pub(super) fn prepare(
        &self,
        req: &RunRequest,
        host: &Host,
        workspace: &Path,
        cwd: &Path,
        narrow: Option<&CapabilitySet>,
        resolved: Option<super::Resolved>,
    ) -> Result<Launch, RunError> {
        let host_tmp = if self.private_tmp(host, narrow) {
            None
        } else {
            Some(make_host_tmp()?)
        };
        let context = run_context(req, workspace);
        let vars = self.vars(&context, host, narrow, host_tmp.as_deref());
        let mut resolved = resolved;
        // A per-run `{tmp}` makes every run's variables new: no kept plan would ever match.
        let mut reuse = (req.keep_plan || self.stores) && host_tmp.is_none();
        for dir in self.profile.dirs_to_create(&vars) {
            if !dir.exists() {
                // The snapshot, or a kept plan, predates this directory: plan afresh.
                resolved = None;
                reuse = false;
                // A `+` entry is optional: one that cannot be made (a home whose cache
                // directory another user owns) is skipped and listed in `skipped_paths`.
                let _skipped = make_dir(&dir, true);
            }
        }
        // One look at each path for the kept plan's checks and the spare's.
        let looks = if reuse {
            super::stamp::Looks::with_room()
        } else {
            super::stamp::Looks::default()
        };
        let kept = reuse.then_some(&looks);
        let first = super::below::FirstLevel::new(workspace);
        let planned = self.plan_with_vars(&vars, host, narrow, resolved, kept, &first);
        let (caps, mut plan) = match planned {
            Ok(x) => x,
            Err(e) => {
                if let Some(d) = &host_tmp {
                    let _ = std::fs::remove_dir_all(d);
                }
                return Err(e);
            }
        };
        let spare_ok = reuse && self.spares_on() && spare_fits(req, &plan);
        let proxy_listener =
            super::proxy::host_port(&mut plan).map_err(|source| RunError::Spawn { source })?;
        let exec = exec_spec(req, &plan, cwd)?;
        let timeout = match (plan.timeout_ms.map(Duration::from_millis), req.timeout) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let taken = spare_ok
            .then(|| self.spare.take(&plan, &exec, &looks))
            .flatten();
        let (prepared, handover) = match taken {
            Some((prepared, h)) => (prepared, Some(h)),
            None => (Prepared::new(&plan, exec, host)?, None),
        };
        Ok(Launch {
            handover,
            next_spare: spare_ok.then(|| NextSpare {
                plan: plan.clone(),
                host: host.clone(),
                slot: self.spare.clone(),
            }),
            plan,
            prepared,
            host_tmp,
            timeout,
            writable: caps.fs.write.iter().map(|e| e.path.clone()).collect(),
            caps: Arc::clone(&caps),
            walk: first.into_walk(),
            proxy_listener,
        })
    }
}

/// Whether a run of `req` under `plan` can start in a spare: one with nothing but pipes (no
/// terminal, no stdin relayed, no proxy, whose bridge is made per run).
fn spare_fits(req: &RunRequest, plan: &SandboxPlan) -> bool {
    req.terminal.is_none() && req.pty_primary.is_none() && !req.relay_stdin && plan.proxy.is_none()
}

/// The command's environment (what the plan keeps of the caller's, then its fixed values),
/// the paths to try for its executable (a `PATH` search done here, before the fork), its
/// arguments and its directory, as C strings.
fn exec_spec(req: &RunRequest, plan: &SandboxPlan, cwd: &Path) -> Result<ExecSpec, RunError> {
    let mut env: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    for (k, v) in &req.env {
        if plan.env.keeps_var(k.as_bytes(), v.as_bytes()) {
            env.insert(k.as_bytes().to_vec(), v.as_bytes().to_vec());
        }
    }
    for (k, v) in &plan.env.set {
        env.insert(k.as_bytes().to_vec(), v.as_bytes().to_vec());
    }
    if let (Some(path), Some(ll)) = (env.get_mut(b"PATH".as_slice()), &plan.landlock) {
        *path = executable_path(path, ll);
    }
    let path_var = env
        .get(b"PATH".as_slice())
        .cloned()
        .unwrap_or_else(|| b"/usr/local/bin:/usr/bin:/bin".to_vec());
    let argv0 = req.argv.first().ok_or(RunError::NoCommand)?;
    let candidates: Vec<CString> = if argv0.as_bytes().contains(&b'/') {
        vec![cstr(Path::new(argv0))?]
    } else {
        path_var
            .split(|b| *b == b':')
            .filter(|d| !d.is_empty())
            .filter_map(|d| {
                let mut p = d.to_vec();
                p.push(b'/');
                p.extend_from_slice(argv0.as_bytes());
                CString::new(p).ok()
            })
            .collect()
    };
    let argv = req
        .argv
        .iter()
        .map(|a| {
            CString::new(a.as_bytes()).map_err(|_| EnforceError::Nul {
                path: PathBuf::from(a),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let envp = env
        .into_iter()
        .filter_map(|(mut k, v)| {
            k.push(b'=');
            k.extend_from_slice(&v);
            CString::new(k).ok()
        })
        .collect();
    Ok(ExecSpec {
        candidates: CStrArray::new(candidates),
        argv: CStrArray::new(argv),
        envp: CStrArray::new(envp),
        cwd: cstr(cwd)?,
    })
}

/// `path` (a `PATH` value) without the absolute directories in which Landlock lets the
/// command execute nothing: a shell takes the first file of a name it finds there and stops
/// at EACCES (under `strict`, a caller's PATH starting with `~/.pyenv/shims` made `python3`
/// fail with `Permission denied` although `/usr/bin/python3` runs).
fn executable_path(path: &[u8], ll: &crate::plan::LandlockPlan) -> Vec<u8> {
    let covered = |dir: &Path| {
        ll.rules
            .iter()
            .any(|r| r.rights.contains(&crate::plan::FsRight::Execute) && dir.starts_with(&r.path))
    };
    // A link (`/bin` to `/usr/bin`) runs what lies where it leads.
    let runs_in = |dir: &[u8]| {
        let dir = Path::new(std::ffi::OsStr::from_bytes(dir));
        !dir.is_absolute()
            || covered(dir)
            || std::fs::canonicalize(dir).is_ok_and(|real| covered(&real))
    };
    let kept: Vec<&[u8]> = path.split(|b| *b == b':').filter(|d| runs_in(d)).collect();
    kept.join(&b':')
}

static CALL_SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A new private directory for `{tmp}` when no mount namespace can give a private `/tmp`.
/// `create_dir` fails on an existing name, so another user cannot plant one in advance.
fn make_host_tmp() -> Result<PathBuf, RunError> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let dir = std::env::temp_dir().join(format!(
        "sbx-{}-{}-{}-{nanos}",
        nix::unistd::geteuid(),
        std::process::id(),
        CALL_SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    make_dir(&dir, false)?;
    Ok(dir)
}

/// Remove what earlier runs of this user left of their `{tmp}` when they were killed
/// (SIGKILL of sbx gives it no chance to): a directory `sbx-UID-PID-...` of this user whose
/// sbx process is gone. One whose PID is alive (perhaps reused) is left alone.
fn remove_stale_host_tmps() {
    use std::os::unix::fs::MetadataExt;
    let uid = nix::unistd::geteuid();
    let prefix = format!("sbx-{uid}-");
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(&prefix)) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<i32>().ok()) else {
            continue;
        };
        let gone = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None)
            == Err(nix::errno::Errno::ESRCH);
        let ours = e
            .metadata()
            .is_ok_and(|m| m.is_dir() && m.uid() == uid.as_raw());
        if gone && ours && pid > 0 {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// A `0700` directory (with its parents when `recursive`).
fn make_dir(dir: &Path, recursive: bool) -> Result<(), RunError> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(recursive)
        .mode(0o700)
        .create(dir)
        .map_err(|source| RunError::Workspace {
            path: dir.to_path_buf(),
            source,
        })
}

/// After the run: its `{tmp}` removed, and what killed runs of this user left (off the path
/// to the command's start).
pub(super) fn cleanup(p: &Launch) {
    if let Some(dir) = &p.host_tmp {
        let _ = std::fs::remove_dir_all(dir);
        remove_stale_host_tmps();
    }
}

/// The run's workspace context: the request's when its root is this (canonical) workspace,
/// else derived from the workspace. The home the command is given is one it may take for its
/// own: its secrets are hidden too. One already among the homes is not looked at again.
fn run_context(req: &RunRequest, workspace: &Path) -> WorkspaceContext {
    let mut context = if req.context.root == workspace {
        req.context.clone()
    } else {
        WorkspaceContext::of(workspace)
    };
    if let Some((_, h)) = req.env.iter().find(|(k, _)| k == "HOME")
        && !context.homes().any(|known| known == Path::new(h))
        && Path::new(h).is_dir()
    {
        context.add_home(Path::new(h));
    }
    context
}

#[cfg(test)]
mod tests {
    use super::{RunRequest, run_context};
    use crate::workspace::WorkspaceContext;
    use std::path::{Path, PathBuf};

    /// A run takes the context its caller has for the same workspace, as it is; for another
    /// root it derives one, as a run given only a path does.
    #[test]
    fn a_run_takes_the_callers_context_for_its_workspace_only() {
        let given = WorkspaceContext::new("/sbx-ws", "/sbx-given-home")
            .with_writable([PathBuf::from("/sbx-tree")]);
        let req = RunRequest::new(["true"], given.clone());
        assert_eq!(req.context.root, Path::new("/sbx-ws"));
        assert_eq!(run_context(&req, Path::new("/sbx-ws")), given);
        let derived = run_context(&req, Path::new("/sbx-other"));
        assert_eq!(derived, WorkspaceContext::of(Path::new("/sbx-other")));
        assert_ne!(derived.home, given.home);
    }
}
