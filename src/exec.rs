//! Spawn and supervise one sandboxed process tree: output relay with byte caps, timeout with
//! escalation, signal forwarding, exit status and resource usage.
use crate::capability::{CapabilitySet, NetworkMode};
use crate::enforce::netns::PendingNet;
use crate::enforce::report::{ChildFds, MESSAGE_LEN, Message, MessageKind, Step};
use crate::enforce::{CStrArray, EnforceError, ExecSpec, Prepared, cstr};
use crate::host::{Availability, Host};
use crate::plan::{self, Layer, LayerStatus, PlanInput, RealFs, SandboxPlan};
use crate::profile::{Profile, ProfileError, Vars};
use serde::Serialize;
use std::collections::BTreeMap;
use std::ffi::{CString, OsString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::io::unix::AsyncFd;

/// Why a run could not start. The CLI maps every variant to exit code 125.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    #[error(transparent)]
    Profile(#[from] ProfileError),
    #[error(transparent)]
    Plan(#[from] plan::PlanError),
    #[error(transparent)]
    Enforce(#[from] EnforceError),
    #[error("workspace {path}: {source}")]
    Workspace {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no command given")]
    NoCommand,
    #[error("sandbox setup failed while {}: {}", step.describe(), std::io::Error::from_raw_os_error(*errno))]
    Setup { step: Step, errno: i32 },
    #[error("cannot start the sandbox: {source}")]
    Spawn { source: std::io::Error },
}

/// Which stream a chunk of output came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Stream {
    Stdout,
    Stderr,
}

/// Receives output chunks as they arrive.
pub type OutputCallback = Box<dyn FnMut(Stream, &[u8]) + Send>;

/// Where the command's output goes.
pub enum Output {
    /// Written to this process's stdout and stderr as it arrives.
    Inherit,
    /// Kept in [`RunResult::stdout`] and [`RunResult::stderr`].
    Collect,
    /// Handed to a callback as it arrives.
    Callback(OutputCallback),
}

/// One call to run.
pub struct RunRequest {
    pub argv: Vec<OsString>,
    /// Where the caller is; the command starts here when it lies inside the workspace.
    pub cwd: PathBuf,
    pub workspace: PathBuf,
    /// The caller's environment, filtered by the profile.
    pub env: Vec<(OsString, OsString)>,
    /// Overrides the profile's timeout when smaller (or when the profile has none).
    pub timeout: Option<Duration>,
    /// How long a command has between SIGTERM and SIGKILL.
    pub grace: Duration,
    pub output: Output,
    /// Forward SIGINT, SIGTERM, SIGHUP and SIGQUIT received by this process.
    pub forward_signals: bool,
    /// Resolves when the caller wants the call cancelled.
    pub cancel: Option<tokio::sync::oneshot::Receiver<()>>,
}

impl RunRequest {
    /// A request with the current directory as workspace, collected output, and no environment.
    pub fn new<I, S>(argv: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        Self {
            argv: argv.into_iter().map(Into::into).collect(),
            workspace: cwd.clone(),
            cwd,
            env: Vec::new(),
            timeout: None,
            grace: Duration::from_secs(2),
            output: Output::Collect,
            forward_signals: false,
            cancel: None,
        }
    }
}

/// What the kernel was asked to enforce, and what it did.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct EnforcementReport {
    pub layers: Vec<Layer>,
    /// Optional paths that did not exist and got no rule.
    pub skipped_paths: Vec<PathBuf>,
}

impl EnforcementReport {
    /// Layers that are not fully enforced.
    pub fn gaps(&self) -> Vec<&Layer> {
        self.layers
            .iter()
            .filter(|l| l.status != LayerStatus::Enforced)
            .collect()
    }
}

/// How a sandboxed command ended.
#[derive(Clone, Debug, Serialize)]
pub struct RunResult {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    /// The command could not be executed: 126 not executable, 127 not found.
    pub exec_error: Option<i32>,
    pub duration_ms: u64,
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    pub stdout_bytes: u64,
    pub stderr_bytes: u64,
    /// Largest resident set of any process in the tree.
    pub peak_memory_bytes: u64,
    pub cpu_user_ms: u64,
    pub cpu_system_ms: u64,
    pub enforcement: EnforcementReport,
    #[serde(skip)]
    pub stdout: Vec<u8>,
    #[serde(skip)]
    pub stderr: Vec<u8>,
}

impl RunResult {
    /// The conventional exit code: the child's own, 128+N for signal N, 124 on timeout,
    /// 126 not executable, 127 not found.
    pub fn code(&self) -> i32 {
        if self.timed_out {
            124
        } else if let Some(e) = self.exec_error {
            e
        } else if let Some(s) = self.signal {
            128 + s
        } else {
            self.exit_code.unwrap_or(125)
        }
    }
}

/// A profile bound to a host, ready to run commands.
pub struct Sandbox {
    profile: Profile,
    host: Host,
}

fn home_dir() -> PathBuf {
    if let Some(h) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        return PathBuf::from(h);
    }
    nix::unistd::User::from_uid(nix::unistd::geteuid())
        .ok()
        .flatten()
        .map_or_else(|| PathBuf::from("/"), |u| u.dir)
}

fn env_allowed(name: &[u8], pass: &[String]) -> bool {
    pass.iter().any(|p| match p.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix.as_bytes()),
        None => name == p.as_bytes(),
    })
}

/// Open `/dev/null` on any of fds 0, 1, 2 that is closed, so that the pipes sbx creates can
/// never take those numbers (the command's stdout would then be the pipe's other end, or
/// closed at exec). Call it first thing in a program that may be started with them closed.
pub fn ensure_standard_fds() {
    for fd in 0..3 {
        // SAFETY: F_GETFD only queries; open returns the lowest free number, which is `fd`
        // when it is closed; that fd is meant to stay open for the life of the process.
        unsafe {
            if libc::fcntl(fd, libc::F_GETFD) == -1 {
                libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
            }
        }
    }
}

fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: pipe2 fills two fds on success.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both fds were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn set_nonblocking(fd: RawFd) {
    // SAFETY: fcntl on an fd we own.
    unsafe {
        let fl = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK);
    }
}

/// Read from a pipe tokio reported readable: `Some(n)` bytes, `Some(0)` when it is closed
/// (or failed), `None` when nothing was there after all.
fn read_ready(
    ready: std::io::Result<tokio::io::unix::AsyncFdReadyGuard<'_, OwnedFd>>,
    buf: &mut [u8],
) -> Option<usize> {
    let Ok(mut guard) = ready else { return Some(0) };
    match read_some(guard.get_inner().as_raw_fd(), buf) {
        Ok(n) => Some(n),
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
            guard.clear_ready();
            None
        }
        Err(_) => Some(0),
    }
}

fn read_some(fd: RawFd, buf: &mut [u8]) -> std::io::Result<usize> {
    // SAFETY: reading into a live buffer.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// One run's plan, its prepared enforcement, and what to clean up after it.
struct Launch {
    plan: SandboxPlan,
    prepared: Prepared,
    host_tmp: Option<PathBuf>,
    timeout: Option<Duration>,
}

impl Sandbox {
    /// Bind a loaded profile to the detected host.
    pub fn new(profile: Profile) -> Self {
        Self {
            profile,
            host: Host::detect(),
        }
    }

    /// Bind a profile to an explicit host description (tests, `explain`).
    pub fn with_host(profile: Profile, host: Host) -> Self {
        Self { profile, host }
    }

    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    pub fn host(&self) -> &Host {
        &self.host
    }

    /// Whether runs on `host` get a private `/tmp` mounted in their own namespace.
    pub fn private_tmp(&self, host: &Host) -> bool {
        host.namespaces.ok() && self.profile.isolation.private_tmp
    }

    /// The variables for `workspace`. Without a private `/tmp`, `{tmp}` is a fresh directory
    /// per run (`host_tmp`), or a placeholder when only planning.
    pub fn vars(&self, workspace: &Path, host: &Host, host_tmp: Option<&Path>) -> Vars {
        let tmp = if self.private_tmp(host) {
            PathBuf::from("/tmp")
        } else {
            host_tmp.map_or_else(|| std::env::temp_dir().join("sbx-RUN"), Path::to_path_buf)
        };
        Vars {
            workspace: workspace.to_path_buf(),
            home: home_dir(),
            tmp,
        }
    }

    /// Resolve the capability set for a workspace.
    pub fn capabilities(&self, workspace: &Path) -> Result<CapabilitySet, RunError> {
        Ok(self
            .profile
            .resolve(&self.vars(workspace, &self.host, None))?)
    }

    /// Compute the plan for a workspace on `host` without touching the kernel.
    pub fn plan_for(
        &self,
        workspace: &Path,
        host: &Host,
    ) -> Result<(CapabilitySet, SandboxPlan), RunError> {
        self.plan_with_tmp(workspace, host, None, None)
    }

    /// `narrow`, when given, is intersected with the profile's set: it can only take away.
    fn plan_with_tmp(
        &self,
        workspace: &Path,
        host: &Host,
        host_tmp: Option<&Path>,
        narrow: Option<&CapabilitySet>,
    ) -> Result<(CapabilitySet, SandboxPlan), RunError> {
        let vars = self.vars(workspace, host, host_tmp);
        let mut caps = self.profile.resolve(&vars)?;
        if let Some(n) = narrow {
            caps = caps.intersect(n);
        }
        let origins: BTreeMap<String, crate::capability::Origin> = [
            "timeout",
            "output",
            "memory",
            "processes",
            "file_size",
            "cpu_time",
            "open_files",
        ]
        .iter()
        .filter_map(|k| self.profile.limit_origin(k).map(|o| (k.to_string(), o)))
        .collect();
        let plan = plan::plan(
            &PlanInput {
                caps: &caps,
                host,
                requires: &self.profile.requires,
                extra_syscall_origins: &self.profile.extra_denied_syscalls,
                limit_origins: &origins,
                tmp: &vars.tmp,
            },
            &RealFs::default(),
        )?;
        Ok((caps, plan))
    }

    fn prepare(
        &self,
        req: &RunRequest,
        host: &Host,
        workspace: &Path,
        cwd: &Path,
        caps: Option<&CapabilitySet>,
    ) -> Result<Launch, RunError> {
        let host_tmp = if self.private_tmp(host) {
            None
        } else {
            Some(make_host_tmp()?)
        };
        let vars = self.vars(workspace, host, host_tmp.as_deref());
        for dir in self.profile.dirs_to_create(&vars) {
            use std::os::unix::fs::DirBuilderExt;
            if !dir.exists() {
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(&dir)
                    .map_err(|source| RunError::Workspace {
                        path: dir.clone(),
                        source,
                    })?;
            }
        }
        let (_, mut plan) = match self.plan_with_tmp(workspace, host, host_tmp.as_deref(), caps) {
            Ok(x) => x,
            Err(e) => {
                if let Some(d) = &host_tmp {
                    let _ = std::fs::remove_dir_all(d);
                }
                return Err(e);
            }
        };
        if let Some(dir) = &host_tmp {
            plan.env_set
                .insert("TMPDIR".into(), dir.display().to_string());
        }
        // Environment: cleared, then the pass list, then fixed values.
        let mut env: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
        for (k, v) in &req.env {
            if env_allowed(k.as_bytes(), &plan.env_pass) {
                env.insert(k.as_bytes().to_vec(), v.as_bytes().to_vec());
            }
        }
        for (k, v) in &plan.env_set {
            env.insert(k.as_bytes().to_vec(), v.as_bytes().to_vec());
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
        let exec = ExecSpec {
            candidates,
            argv: CStrArray::new(argv),
            envp: CStrArray::new(envp),
            cwd: cstr(cwd)?,
        };
        let timeout = match (plan.timeout_ms.map(Duration::from_millis), req.timeout) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let prepared = Prepared::new(&plan, exec, host)?;
        Ok(Launch {
            plan,
            prepared,
            host_tmp,
            timeout,
        })
    }

    /// Run one command under the profile. `narrow`, when given, can only shrink what the
    /// profile grants (it is intersected with the profile's set).
    pub async fn run(
        &self,
        mut req: RunRequest,
        narrow: Option<&CapabilitySet>,
    ) -> Result<RunResult, RunError> {
        // Root needs no user namespace, so its network namespace can be made on another core
        // while this one plans.
        let network = narrow.map_or(self.profile.network.0, |n| {
            self.profile.network.0.min(n.network)
        });
        let mut pending =
            (self.host.euid == 0 && self.host.namespaces.ok() && network != NetworkMode::Host)
                .then(|| PendingNet::start(network == NetworkMode::Loopback))
                .flatten();
        let workspace =
            std::fs::canonicalize(&req.workspace).map_err(|source| RunError::Workspace {
                path: req.workspace.clone(),
                source,
            })?;
        let cwd = std::fs::canonicalize(&req.cwd)
            .ok()
            .filter(|c| c.starts_with(&workspace))
            .unwrap_or_else(|| workspace.clone());
        let mut host = self.host.clone();
        loop {
            let mut p = self.prepare(&req, &host, &workspace, &cwd, narrow)?;
            if let Some(net) = pending.take().and_then(PendingNet::finish) {
                p.prepared.adopt_net_namespace(&p.plan, net);
            }
            match supervise(&mut p, &mut req).await {
                Err(RunError::Spawn { source })
                    if p.plan.namespaces.user
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
                    host.user_namespaces = Availability::Missing {
                        reason: reason.clone(),
                        fix: fix.clone(),
                    };
                    host.namespaces = Availability::Missing { reason, fix };
                    cleanup(&p);
                }
                other => {
                    cleanup(&p);
                    return other;
                }
            }
        }
    }
}

static CALL_SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A new private directory for `{tmp}` when no mount namespace can give a private `/tmp`.
/// `create_dir` fails on an existing name, so another user cannot plant one in advance.
fn make_host_tmp() -> Result<PathBuf, RunError> {
    use std::os::unix::fs::DirBuilderExt;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let dir = std::env::temp_dir().join(format!(
        "sbx-{}-{}-{}-{nanos}",
        nix::unistd::geteuid(),
        std::process::id(),
        CALL_SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .map_err(|source| RunError::Workspace {
            path: dir.clone(),
            source,
        })?;
    Ok(dir)
}

fn cleanup(p: &Launch) {
    if let Some(dir) = &p.host_tmp {
        let _ = std::fs::remove_dir_all(dir);
    }
}

struct Capture {
    limit: u64,
    bytes: u64,
    truncated: bool,
    kept: Vec<u8>,
}

impl Capture {
    fn new(limit: Option<u64>) -> Self {
        Self {
            limit: limit.unwrap_or(u64::MAX),
            bytes: 0,
            truncated: false,
            kept: Vec::new(),
        }
    }
    /// The part of `chunk` that fits under the cap.
    fn admit<'a>(&mut self, chunk: &'a [u8]) -> &'a [u8] {
        let room = self.limit.saturating_sub(self.bytes);
        self.bytes += chunk.len() as u64;
        if (chunk.len() as u64) > room {
            self.truncated = true;
            &chunk[..room as usize]
        } else {
            chunk
        }
    }
}

fn deliver(output: &mut Output, cap: &mut Capture, stream: Stream, chunk: &[u8]) {
    use std::io::Write;
    let part = cap.admit(chunk);
    if part.is_empty() {
        return;
    }
    match output {
        Output::Inherit => {
            let _ = match stream {
                Stream::Stdout => std::io::stdout()
                    .write_all(part)
                    .and_then(|()| std::io::stdout().flush()),
                Stream::Stderr => std::io::stderr().write_all(part),
            };
        }
        Output::Collect => cap.kept.extend_from_slice(part),
        Output::Callback(f) => f(stream, part),
    }
}

async fn wait_signal(streams: &mut Option<Vec<(i32, tokio::signal::unix::Signal)>>) -> i32 {
    match streams {
        Some(v) if !v.is_empty() => {
            let futs = v.iter_mut().map(|(n, s)| {
                let n = *n;
                Box::pin(async move {
                    s.recv().await;
                    n
                })
            });
            futures_select_all(futs).await
        }
        _ => std::future::pending().await,
    }
}

async fn futures_select_all<F: std::future::Future<Output = i32> + Unpin>(
    futs: impl Iterator<Item = F>,
) -> i32 {
    let mut futs: Vec<F> = futs.collect();
    std::future::poll_fn(move |cx| {
        for f in futs.iter_mut() {
            if let std::task::Poll::Ready(v) = std::pin::Pin::new(f).poll(cx) {
                return std::task::Poll::Ready(v);
            }
        }
        std::task::Poll::Pending
    })
    .await
}

fn async_fd(fd: OwnedFd) -> std::io::Result<AsyncFd<OwnedFd>> {
    // SAFETY: the fd is owned by the AsyncFd from here on and is not closed elsewhere.
    unsafe { AsyncFd::register(fd) }.map_err(|e| std::io::Error::other(e.to_string()))
}

async fn supervise(p: &mut Launch, req: &mut RunRequest) -> Result<RunResult, RunError> {
    let spawn_err = |source| RunError::Spawn { source };
    let (out_r, out_w) = pipe().map_err(spawn_err)?;
    let (err_r, err_w) = pipe().map_err(spawn_err)?;
    let (rep_r, rep_w) = pipe().map_err(spawn_err)?;
    let start = Instant::now();
    // SAFETY: pidfd_open on our own pid returns a new fd (or -1), owned below.
    let parent_pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, libc::getpid(), 0) } as RawFd;
    // SAFETY: when non-negative, the fd was just created and is owned by nobody else.
    let parent_pidfd = (parent_pidfd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(parent_pidfd) });
    let fds = ChildFds {
        stdout: out_w.as_raw_fd(),
        stderr: err_w.as_raw_fd(),
        report: rep_w.as_raw_fd(),
        parent: parent_pidfd.as_ref().map_or(-1, AsRawFd::as_raw_fd),
    };
    // SAFETY: everything the child uses is in `p.prepared` and `fds`, prepared above.
    let (pid, pidfd) =
        unsafe { crate::enforce::child::spawn(&mut p.prepared, fds) }.map_err(spawn_err)?;
    // SAFETY: CLONE_PIDFD gave us a new fd that nobody else owns.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd) };
    drop((out_w, err_w, rep_w, parent_pidfd));
    for fd in [&out_r, &err_r, &rep_r] {
        set_nonblocking(fd.as_raw_fd());
    }
    let spawn_io = |source| RunError::Spawn { source };
    let out_fd = async_fd(out_r).map_err(spawn_io)?;
    let err_fd = async_fd(err_r).map_err(spawn_io)?;
    let rep_fd = async_fd(rep_r).map_err(spawn_io)?;
    let pid_fd = async_fd(pidfd).map_err(spawn_io)?;

    let mut signals = if req.forward_signals {
        use tokio::signal::unix::{SignalKind, signal};
        let mut v = Vec::new();
        for (n, k) in [
            (libc::SIGINT, SignalKind::interrupt()),
            (libc::SIGTERM, SignalKind::terminate()),
            (libc::SIGHUP, SignalKind::hangup()),
            (libc::SIGQUIT, SignalKind::quit()),
        ] {
            if let Ok(s) = signal(k) {
                v.push((n, s));
            }
        }
        Some(v)
    } else {
        None
    };
    let mut cancel = req.cancel.take();
    let mut out_cap = Capture::new(p.plan.output_bytes);
    let mut err_cap = Capture::new(p.plan.output_bytes);
    let mut buf = vec![0u8; 64 * 1024];
    let mut out_open = true;
    let mut err_open = true;
    let mut rep_open = true;
    let mut exited = false;
    let mut messages: Vec<Message> = Vec::new();
    let mut rep_buf: Vec<u8> = Vec::new();
    let mut timed_out = false;
    let mut term_sent: Option<Instant> = None;
    let mut killed = false;
    let deadline = p.timeout.map(|t| tokio::time::Instant::now() + t);
    let pid_ns = p.plan.namespaces.pid;
    let kill = |sig: i32| {
        // SAFETY: pid is our child; while unreaped (pidfd open, not waited) it cannot be reused.
        unsafe { libc::kill(pid, sig) };
    };

    // Once the init has reported the command's end (the tree is dead by then), its own exit,
    // which tears the namespaces down, need not be waited for, unless a cgroup must be
    // removed after it.
    let can_detach = p.prepared.cgroup_dir.is_none();
    let mut got_exit_msg = false;
    while out_open
        || err_open
        || (rep_open && !got_exit_msg)
        || !(exited || (got_exit_msg && can_detach))
    {
        let grace_deadline = term_sent.map(|t| tokio::time::Instant::from_std(t + req.grace));
        tokio::select! {
            r = out_fd.readable(), if out_open => match read_ready(r, &mut buf) {
                Some(0) => out_open = false,
                Some(n) => deliver(&mut req.output, &mut out_cap, Stream::Stdout, &buf[..n]),
                None => {}
            },
            r = err_fd.readable(), if err_open => match read_ready(r, &mut buf) {
                Some(0) => err_open = false,
                Some(n) => deliver(&mut req.output, &mut err_cap, Stream::Stderr, &buf[..n]),
                None => {}
            },
            r = rep_fd.readable(), if rep_open => match read_ready(r, &mut buf) {
                Some(0) => rep_open = false,
                Some(n) => {
                    rep_buf.extend_from_slice(&buf[..n]);
                    while rep_buf.len() >= MESSAGE_LEN {
                        let m: Vec<u8> = rep_buf.drain(..MESSAGE_LEN).collect();
                        let w = |i: usize| u32::from_ne_bytes([m[i], m[i + 1], m[i + 2], m[i + 3]]);
                        let m = Message { kind: w(0), step: w(4), value: w(8) as i32 };
                        got_exit_msg |= MessageKind::from_u32(m.kind) == Some(MessageKind::Exited);
                        messages.push(m);
                    }
                }
                None => {}
            },
            r = pid_fd.readable(), if !exited => {
                if let Ok(mut g) = r {
                    g.clear_ready();
                    exited = true;
                }
            }
            _ = async { match deadline { Some(d) => tokio::time::sleep_until(d).await, None => std::future::pending().await } }, if !timed_out && !exited => {
                timed_out = true;
                kill(libc::SIGTERM);
                term_sent = Some(Instant::now());
            }
            _ = async { match grace_deadline { Some(d) => tokio::time::sleep_until(d).await, None => std::future::pending().await } }, if !killed && !exited => {
                killed = true;
                if !pid_ns {
                    kill(libc::SIGUSR2);
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                kill(libc::SIGKILL);
            }
            sig = wait_signal(&mut signals), if !exited => {
                kill(sig);
                if term_sent.is_none() {
                    term_sent = Some(Instant::now());
                }
            }
            _ = async { match cancel.as_mut() { Some(c) => { let _ = c.await; } None => std::future::pending().await } }, if cancel.is_some() && !exited => {
                cancel = None;
                kill(libc::SIGTERM);
                term_sent = Some(Instant::now());
            }
        }
        if exited && !pid_ns && (out_open || err_open) {
            // A descendant that escaped the subreaper may hold the pipes: stop waiting shortly.
            tokio::time::sleep(Duration::from_millis(50)).await;
            out_open = false;
            err_open = false;
        }
    }
    // Reap the init, now or (when it is still tearing its namespaces down) in the background.
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain data filled by the kernel.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if exited {
        // SAFETY: pid is our child, exited (pidfd readable).
        unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    } else {
        tokio::spawn(async move {
            let _ = pid_fd.readable().await;
            let mut st: libc::c_int = 0;
            // SAFETY: pid is our child and nobody else reaps it.
            unsafe { libc::waitpid(pid, &mut st, 0) };
        });
    }
    let duration = start.elapsed();

    let mut result = RunResult {
        exit_code: None,
        signal: None,
        timed_out,
        exec_error: None,
        duration_ms: duration.as_millis() as u64,
        stdout_truncated: out_cap.truncated,
        stderr_truncated: err_cap.truncated,
        stdout_bytes: out_cap.bytes,
        stderr_bytes: err_cap.bytes,
        peak_memory_bytes: (ru.ru_maxrss.max(0) as u64) * 1024,
        cpu_user_ms: (ru.ru_utime.tv_sec as u64) * 1000 + (ru.ru_utime.tv_usec as u64) / 1000,
        cpu_system_ms: (ru.ru_stime.tv_sec as u64) * 1000 + (ru.ru_stime.tv_usec as u64) / 1000,
        enforcement: EnforcementReport {
            layers: p.plan.report.clone(),
            skipped_paths: p.prepared.landlock_skipped.clone(),
        },
        stdout: std::mem::take(&mut out_cap.kept),
        stderr: std::mem::take(&mut err_cap.kept),
    };
    let mut got_exit = false;
    for m in &messages {
        match MessageKind::from_u32(m.kind) {
            Some(MessageKind::SetupFailed) => {
                let step = Step::from_u32(m.step).unwrap_or(Step::Signals);
                return Err(RunError::Setup {
                    step,
                    errno: m.value,
                });
            }
            Some(MessageKind::ExecFailed) => {
                result.exec_error = Some(if m.value == libc::ENOENT { 127 } else { 126 });
            }
            Some(MessageKind::Usage) => {
                let v = m.value.max(0) as u64;
                match m.step {
                    0 => result.peak_memory_bytes = v * 1024,
                    1 => result.cpu_user_ms = v,
                    _ => result.cpu_system_ms = v,
                }
            }
            Some(MessageKind::Landlock) => {
                if let Some(l) = result
                    .enforcement
                    .layers
                    .iter_mut()
                    .find(|l| l.name == "landlock")
                {
                    match m.value {
                        0 => {}
                        1 => l.status = LayerStatus::Partial,
                        _ => l.status = LayerStatus::NotEnforced,
                    }
                }
            }
            Some(MessageKind::Exited) => {
                got_exit = true;
                let st = m.value;
                if libc::WIFEXITED(st) {
                    result.exit_code = Some(libc::WEXITSTATUS(st));
                } else if libc::WIFSIGNALED(st) {
                    result.signal = Some(libc::WTERMSIG(st));
                }
            }
            None => {}
        }
    }
    if !got_exit {
        // The init itself was killed (timeout escalation, or sbx's SIGKILL).
        if libc::WIFSIGNALED(status) {
            result.signal = Some(libc::WTERMSIG(status));
        } else if libc::WIFEXITED(status) {
            result.exit_code = Some(libc::WEXITSTATUS(status));
        }
    }
    Ok(result)
}
