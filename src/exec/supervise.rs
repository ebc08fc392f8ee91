//! Supervising a launched tree: relaying output, the timeout and its escalation, forwarded
//! signals and cancellation, then reaping and turning the init's messages into a result.
use super::fds::{ReadBuf, async_fd, pipe, pipe_unless, read_ready, readable, set_nonblocking};
use super::output::{Caps, Capture, deliver};
use super::prepare::Launch;
use super::relay::{PtyRelay, receive_ready, relay_pty};
use super::result::{ExecFailure, ProcessLimit};
use super::spare::Handover;
use super::terminal::Terminal;
use super::{EnforcementReport, RunError, RunRequest, RunResult, Stream};
use crate::enforce::messages::{ChildFds, MESSAGE_LEN, Message, MessageKind, Step};
use crate::plan::{LayerStatus, Rlimit};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::time::{Duration, Instant};
use tokio::io::unix::AsyncFd;

/// What became of one ready read from the command's stdout or stderr.
#[derive(PartialEq, Eq)]
enum Relayed {
    /// Passed on (or nothing was there yet): the pipe stays open.
    Open,
    /// The pipe has ended: every writer closed it.
    Ended,
    /// Nothing more is wanted (the reader it went to is gone): close the command's pipe.
    Refused,
}

/// Pass on one ready read from the command's stdout or stderr.
fn relay(
    ready: std::io::Result<tokio::io::unix::AsyncFdReadyGuard<'_, OwnedFd>>,
    buf: &mut ReadBuf,
    output: &mut super::Output,
    cap: &mut Capture,
    stream: Stream,
) -> Relayed {
    match read_ready(ready, buf) {
        Some([]) => Relayed::Ended,
        Some(b) => match deliver(output, cap, stream, b) {
            super::output::ControlFlow::Continue(()) => Relayed::Open,
            super::output::ControlFlow::Break(()) => Relayed::Refused,
        },
        None => Relayed::Open,
    }
}

/// Whether the stream stays open after `r`; a refused one's pipe is closed here, so that the
/// command's next write to it fails as it would into a pipe whose reader exited.
fn keep_open(r: Relayed, fd: &mut Option<AsyncFd<OwnedFd>>) -> bool {
    if r == Relayed::Refused {
        *fd = None;
    }
    r == Relayed::Open
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

/// The launched tree as supervision holds it: the init's pid and pidfd, the readable ends of
/// its output and message pipes, the terminal relay and the proxy.
struct Tree {
    pid: libc::pid_t,
    pid_fd: AsyncFd<OwnedFd>,
    out_fd: Option<AsyncFd<OwnedFd>>,
    err_fd: Option<AsyncFd<OwnedFd>>,
    msg_fd: AsyncFd<OwnedFd>,
    pty: PtyRelay,
    proxy: Option<super::proxy::RunProxy>,
    start: Instant,
}

/// Run the launch to its end. `record` is called once the init is on its way and before the
/// command may start: what it records is the state before the run.
pub(super) async fn supervise(
    p: &mut Launch,
    req: &mut RunRequest,
    record: &mut (dyn FnMut(&mut Launch) + Send),
) -> Result<RunResult, RunError> {
    let mut tree = launch(p, req, record)?;
    let mut caps = Caps {
        out: Capture::new(p.plan.output_bytes),
        err: Capture::new(p.plan.output_bytes),
        echo: Capture::new(p.plan.output_bytes),
        term: Default::default(),
    };
    let watched = watch(p, req, &mut tree, &mut caps).await;
    // The caller's terminal gets its modes back once nothing more is relayed to it.
    tree.pty.stop().await;
    let (status, ru) = reap(tree.pid, tree.pid_fd, watched.exited);
    let duration = tree.start.elapsed();
    let network = tree.proxy.map(super::proxy::RunProxy::finish);
    let mut result = result_of(p, &mut caps, &ru, watched.timed_out, duration, network);
    result.processes_full = watched.processes_full;
    apply_messages(
        &mut result,
        &watched.messages,
        status,
        &p.prepared.mount_ops,
    )?;
    if let Some(f) = &mut result.exec_failure
        && let Some(program) = req.argv.first()
    {
        f.program = program.to_string_lossy().into_owned();
    }
    result.find_limits_reached(p.timeout, &p.prepared.sized_tmpfs, p.plan.tmp_size);
    if let Some(cap) = p.plan.output_bytes {
        result.find_output_cut(cap);
    }
    Ok(result)
}

/// Make the pipes, clone the init with them, and keep sbx's ends.
/// Start the run's tree: hand the command to the spare made for it, or clone an init. Then
/// have the next run's spare made.
fn launch(
    p: &mut Launch,
    req: &mut RunRequest,
    record: &mut (dyn FnMut(&mut Launch) + Send),
) -> Result<Tree, RunError> {
    let tree = match p.handover.take() {
        Some(h) => {
            record(p);
            hand_over(h)
        }
        None => clone_init(p, req, record),
    }?;
    if let Some(next) = p.next_spare.take() {
        next.refill();
    }
    Ok(tree)
}

/// Send the command to a spare init, set up and waiting for it.
fn hand_over(h: Handover) -> Result<Tree, RunError> {
    let spawn_err = |source| RunError::Spawn { source };
    let (pid, fds) = h
        .init
        .take()
        .ok_or_else(|| spawn_err(std::io::Error::other("the spare init is gone")))?;
    let start = Instant::now();
    // An init that failed its setup has closed its end: its messages say why, as those of an
    // init cloned now would.
    let _ = std::io::Write::write_all(&mut std::fs::File::from(fds.command), &h.message);
    let mut tree = Tree {
        pid,
        pid_fd: async_fd(fds.pidfd).map_err(spawn_err)?,
        out_fd: Some(async_fd(fds.out).map_err(spawn_err)?),
        err_fd: Some(async_fd(fds.err).map_err(spawn_err)?),
        msg_fd: async_fd(fds.messages).map_err(spawn_err)?,
        pty: PtyRelay::new(None, None).map_err(spawn_err)?,
        proxy: None,
        start,
    };
    tree.pty.started();
    Ok(tree)
}

/// Clone an init for the run, with the pipes, the terminal and the proxy's bridge it uses.
/// The command starts once `record` is done, while the init sets the sandbox up meanwhile.
fn clone_init(
    p: &mut Launch,
    req: &mut RunRequest,
    record: &mut (dyn FnMut(&mut Launch) + Send),
) -> Result<Tree, RunError> {
    let spawn_err = |source| RunError::Spawn { source };
    let spawning = super::spare::SPAWNING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut pty = PtyRelay::new(req.terminal, req.pty_primary.take()).map_err(spawn_err)?;
    let on_pty = |on: fn(&Terminal) -> bool| req.terminal.as_ref().is_some_and(on);
    let (out_r, out_w) = pipe_unless(on_pty(|t| t.stdout)).map_err(spawn_err)?;
    let (err_r, err_w) = pipe_unless(on_pty(|t| t.stderr)).map_err(spawn_err)?;
    let (msg_r, msg_w) = pipe().map_err(spawn_err)?;
    let (go_r, go_w) = pipe().map_err(spawn_err)?;
    let start = Instant::now();
    let parent_pidfd = super::spare::own_pidfd();
    let raw_fd = |fd: &Option<OwnedFd>| fd.as_ref().map_or(-1, AsRawFd::as_raw_fd);
    let bridge = super::proxy::Bridge::new(p).map_err(spawn_err)?;
    let mut stdin =
        super::stdin::child_stdin(req.relay_stdin && !on_pty(|t| t.stdin)).map_err(spawn_err)?;
    if on_pty(|t| t.stdin) {
        stdin.fd = None;
    }
    let fds = ChildFds {
        stdin: raw_fd(&stdin.fd),
        stdout: raw_fd(&out_w),
        stderr: raw_fd(&err_w),
        ctty: -1,
        pty: pty.spec(),
        messages: msg_w.as_raw_fd(),
        proxy: bridge.as_ref().map_or(-1, super::proxy::Bridge::child_fd),
        parent: raw_fd(&parent_pidfd),
        stdin_feed: stdin.feed_fd(),
        sbx_ends: [
            raw_fd(&out_r),
            raw_fd(&err_r),
            msg_r.as_raw_fd(),
            -1,
            go_w.as_raw_fd(),
        ],
        command: -1,
        go: go_r.as_raw_fd(),
    };
    // SAFETY: everything the child uses is in `p.prepared` and `fds`, prepared above.
    let (pid, pidfd) =
        unsafe { crate::enforce::child::spawn(&mut p.prepared, fds) }.map_err(spawn_err)?;
    // SAFETY: CLONE_PIDFD gave us a new fd that nobody else owns.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd) };
    let stdin_fd = stdin.fd.take();
    drop((out_w, err_w, msg_w, go_r, parent_pidfd, stdin_fd));
    record(p);
    // An init that failed its setup is gone: its messages say why.
    let _ = std::io::Write::write_all(&mut std::fs::File::from(go_w), b"1");
    pty.started();
    stdin.start().map_err(spawn_err)?;
    let proxy = bridge
        .map(|b| b.start(req.net_approver.clone()))
        .transpose()
        .map_err(spawn_err)?;
    // Every end meant for the init alone is gone.
    drop(spawning);
    set_nonblocking(msg_r.as_raw_fd());
    Ok(Tree {
        pid,
        pid_fd: async_fd(pidfd).map_err(spawn_err)?,
        out_fd: out_r.map(async_fd).transpose().map_err(spawn_err)?,
        err_fd: err_r.map(async_fd).transpose().map_err(spawn_err)?,
        msg_fd: async_fd(msg_r).map_err(spawn_err)?,
        pty,
        proxy,
        start,
    })
}

/// What watching the tree found: whether the init exited (and can be reaped now), whether the
/// timeout fired, and the init's messages.
#[derive(Default)]
struct Watched {
    exited: bool,
    timed_out: bool,
    /// The processes in the tree's PID namespace when the timeout fired, at its limit.
    processes_full: Option<(u64, ProcessLimit)>,
    messages: Vec<Message>,
}

/// The escalation from a polite stop to SIGKILL: when SIGTERM went out, and whether SIGKILL
/// has.
struct Stop {
    pid: libc::pid_t,
    pid_ns: bool,
    term_sent: Option<Instant>,
    killed: bool,
}

impl Stop {
    fn signal(&self, sig: i32) {
        // SAFETY: pid is our child; while unreaped (pidfd open, not waited) it cannot be reused.
        unsafe { libc::kill(self.pid, sig) };
    }

    /// Pass `sig` on; it starts the grace period unless one has started.
    fn forward(&mut self, sig: i32) {
        self.signal(sig);
        self.term_sent.get_or_insert_with(Instant::now);
    }

    /// SIGTERM, and the grace period from now.
    fn terminate(&mut self) {
        self.signal(libc::SIGTERM);
        self.term_sent = Some(Instant::now());
    }

    /// SIGKILL once the grace period is over; without a PID namespace the init first gets
    /// SIGUSR2 to kill the descendants it adopted.
    async fn kill(&mut self) {
        self.killed = true;
        if !self.pid_ns {
            self.signal(libc::SIGUSR2);
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        self.signal(libc::SIGKILL);
    }
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

/// Relay output and the init's messages until both have ended and the init has exited (or has
/// reported the command's end and needs no waiting for), applying the timeout, forwarded
/// signals and cancellation on the way.
async fn watch(p: &Launch, req: &mut RunRequest, t: &mut Tree, caps: &mut Caps) -> Watched {
    let mut signals = forwarded_signals(req.forward_signals || t.pty.raw());
    let mut cancel = req.cancel.take();
    let mut buf = ReadBuf::new();
    let mut w = Watched::default();
    let (mut out_open, mut err_open, mut msg_open) = (t.out_fd.is_some(), t.err_fd.is_some(), true);
    let mut msg_buf: Vec<u8> = Vec::new();
    let mut stop = Stop {
        pid: t.pid,
        pid_ns: p.plan.namespaces.pid,
        term_sent: None,
        killed: false,
    };
    let deadline = p.timeout.map(|d| tokio::time::Instant::now() + d);
    // Once the init has reported the command's end (the tree is dead by then), its own exit,
    // which tears the namespaces down, need not be waited for, unless a cgroup must be
    // removed after it.
    let can_detach = p.prepared.cgroups.is_empty();
    let mut got_exit_msg = false;
    while out_open
        || err_open
        || t.pty.waiting()
        || (msg_open && !got_exit_msg)
        || !(w.exited || (got_exit_msg && can_detach))
    {
        let grace = stop
            .term_sent
            .map(|at| tokio::time::Instant::from_std(at + req.grace));
        tokio::select! {
            r = readable(t.out_fd.as_ref()), if out_open => {
                let r = relay(r, &mut buf, &mut req.output, &mut caps.out, Stream::Stdout);
                out_open = keep_open(r, &mut t.out_fd);
            }
            r = readable(t.err_fd.as_ref()), if err_open => {
                let r = relay(r, &mut buf, &mut req.output, &mut caps.err, Stream::Stderr);
                err_open = keep_open(r, &mut t.err_fd);
            }
            r = readable(t.pty.sock()), if t.pty.receiving() => {
                let got = receive_ready(r);
                t.pty.accept(got);
            }
            r = readable(t.pty.primary()), if t.pty.open => {
                t.pty.open = relay_pty(r, &mut buf, &mut req.output, caps, t.pty.sink);
            }
            r = t.msg_fd.readable(), if msg_open => match read_ready(r, &mut buf) {
                Some([]) => msg_open = false,
                Some(b) => got_exit_msg |= take_messages(&mut msg_buf, b, &mut w.messages),
                None => {}
            },
            r = t.pid_fd.readable(), if !w.exited => {
                if let Ok(mut g) = r {
                    g.clear_ready();
                    w.exited = true;
                }
            }
            _ = sleep_until(deadline), if !w.timed_out && !w.exited => {
                w.timed_out = true;
                w.processes_full = tree_process_limit(&p.plan).and_then(|l| at_limit(t.pid, l));
                stop.terminate();
            }
            _ = sleep_until(grace), if !stop.killed && !w.exited => stop.kill().await,
            sig = wait_signal(&mut signals), if !w.exited => stop.forward(sig),
            _ = async { if let Some(c) = cancel.as_mut() { let _ = c.await; } }, if cancel.is_some() && !w.exited => {
                cancel = None;
                stop.terminate();
            }
        }
        if w.exited || got_exit_msg {
            // The init has sent the primary end by now, or never will.
            t.pty.settle();
        }
        if w.exited && !stop.pid_ns && (out_open || err_open || t.pty.open) {
            let fds = (t.out_fd.as_ref(), t.err_fd.as_ref());
            let open = (&mut out_open, &mut err_open);
            drain_briefly(fds, open, &mut t.pty, &mut buf, &mut req.output, caps).await;
        }
    }
    w
}

/// The limit that bounds the tree's processes where no cgroup counts the forks it refuses:
/// the PID namespace's `pid_max`, or `RLIMIT_NPROC` counted in the run's user namespace.
fn tree_process_limit(plan: &crate::plan::SandboxPlan) -> Option<ProcessLimit> {
    if !plan.namespaces.pid || !plan.cgroups.is_empty() {
        return None;
    }
    if let Some(n) = plan.pid_max {
        return Some(ProcessLimit::PidMax(n));
    }
    let nproc = plan.rlimits.iter().find(|r| r.resource == Rlimit::Nproc)?;
    plan.namespaces
        .user
        .then_some(ProcessLimit::Nproc(nproc.value))
}

/// `(held, limit)` when the tasks (processes and threads) of the PID namespace of `init` fill
/// what `limit` lets it hold, within 1% (and 2): the tree was at its process limit. A fork
/// bomb held there runs until its timeout, and nothing else counts the forks the kernel
/// refused. Under `pid_max` the tree holds `pid_max - 1` tasks until the pids wrap, and
/// `pid_max - 300` after (the kernel reuses none below 300).
fn at_limit(init: libc::pid_t, limit: ProcessLimit) -> Option<(u64, ProcessLimit)> {
    let held = tasks_in_namespace(init)?;
    let room = match limit {
        ProcessLimit::PidMax(n) if held.wrapped => n.saturating_sub(300),
        ProcessLimit::PidMax(n) => n.saturating_sub(1),
        ProcessLimit::Nproc(n) => n,
    };
    (held.tasks + 2 + room / 100 >= room).then_some((held.tasks, limit))
}

/// What the PID namespace of a tree holds.
struct Held {
    /// Its tasks: processes (zombies included) and their threads, each of which takes a pid.
    tasks: u64,
    /// Its pids have wrapped: one above the last given out is still in use.
    wrapped: bool,
}

/// The tasks of the PID namespace of `init`, as the namespace's own `/proc` (the one the
/// sandbox mounts) lists them, else the processes the host's `/proc` places in it.
fn tasks_in_namespace(init: libc::pid_t) -> Option<Held> {
    let own = format!("/proc/{init}/root/proc");
    let last: Option<u64> = std::fs::read_to_string(format!("{own}/sys/kernel/ns_last_pid"))
        .ok()
        .and_then(|t| t.trim().parse().ok());
    let Some(last) = last else {
        let tasks = processes_in_namespace(init)?;
        return Some(Held {
            tasks,
            wrapped: false,
        });
    };
    let (mut tasks, mut highest) = (0u64, 0u64);
    for e in std::fs::read_dir(&own).ok()?.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u64>().ok()) else {
            continue;
        };
        let tids: Vec<u64> = std::fs::read_dir(e.path().join("task"))
            .map(|rd| {
                rd.flatten()
                    .filter_map(|t| t.file_name().to_str()?.parse().ok())
                    .collect()
            })
            .unwrap_or_default();
        tasks += u64::try_from(tids.len().max(1)).unwrap_or(1);
        highest = tids.into_iter().fold(highest.max(pid), u64::max);
    }
    Some(Held {
        tasks,
        wrapped: highest > last,
    })
}

/// The processes in the PID namespace of `init`, as the host's `/proc` lists them.
fn processes_in_namespace(init: libc::pid_t) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    let ns = std::fs::metadata(format!("/proc/{init}/ns/pid")).ok()?;
    let same = |m: std::fs::Metadata| m.ino() == ns.ino() && m.dev() == ns.dev();
    let held = std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .filter(|e| {
            e.file_name()
                .as_encoded_bytes()
                .iter()
                .all(u8::is_ascii_digit)
        })
        .filter(|e| std::fs::metadata(e.path().join("ns/pid")).is_ok_and(same))
        .count();
    u64::try_from(held).ok()
}

/// The signals sbx passes on to the tree, when it forwards them.
fn forwarded_signals(on: bool) -> Option<Vec<(i32, tokio::signal::unix::Signal)>> {
    use tokio::signal::unix::{SignalKind, signal};
    if !on {
        return None;
    }
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
}

/// Reap the init, now or (when it is still tearing its namespaces down) in the background:
/// its wait status and usage, zero when not reaped yet.
fn reap(
    pid: libc::pid_t,
    pid_fd: tokio::io::unix::AsyncFd<OwnedFd>,
    exited: bool,
) -> (libc::c_int, libc::rusage) {
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
    (status, ru)
}

/// The result as supervision saw it, before the init's messages are read.
fn result_of(
    p: &mut Launch,
    caps: &mut Caps,
    ru: &libc::rusage,
    timed_out: bool,
    duration: Duration,
    network: Option<Vec<crate::proxy::NetRecord>>,
) -> RunResult {
    RunResult {
        exit_code: None,
        signal: None,
        timed_out,
        exec_error: None,
        exec_failure: None,
        duration_ms: duration.as_millis() as u64,
        stdout_truncated: caps.out.truncated,
        stderr_truncated: caps.err.truncated,
        stdout_bytes: caps.out.bytes,
        stderr_bytes: caps.err.bytes,
        peak_memory_bytes: (ru.ru_maxrss.max(0) as u64) * 1024,
        tree: (!p.prepared.cgroups.is_empty()).then(|| p.prepared.cgroups.usage()),
        limits_reached: Vec::new(),
        cpu_user_ms: (ru.ru_utime.tv_sec as u64) * 1000 + (ru.ru_utime.tv_usec as u64) / 1000,
        cpu_system_ms: (ru.ru_stime.tv_sec as u64) * 1000 + (ru.ru_stime.tv_usec as u64) / 1000,
        enforcement: EnforcementReport {
            layers: p.plan.report.clone(),
            // Moved, not copied: a built-in profile skips some hundreds of missing paths.
            skipped_paths: std::mem::take(&mut p.prepared.landlock_skipped),
        },
        protected: Vec::new(),
        protected_failed: false,
        network,
        stdout: std::mem::take(&mut caps.out.kept),
        stderr: std::mem::take(&mut caps.err.kept),
        full_tmpfs_bits: 0,
        processes_full: None,
    }
}

/// Fold the init's messages into `result`: a setup failure is the run's error, naming the
/// path of the mount operation in `ops` that failed; the command's exit, or the init's own
/// `status` when the init was killed before it could report it.
fn apply_messages(
    result: &mut RunResult,
    messages: &[Message],
    status: libc::c_int,
    ops: &[crate::enforce::mounts::Op],
) -> Result<(), RunError> {
    let mut got_exit = false;
    let mut failed_op = None;
    for m in messages {
        match MessageKind::from_u32(m.kind) {
            Some(MessageKind::FailedOp) => failed_op = usize::try_from(m.value).ok(),
            Some(MessageKind::SetupFailed) => return Err(setup_error(m, failed_op, ops)),
            Some(MessageKind::ExecFailed) => {
                result.exec_error = Some(if m.value == libc::ENOENT { 127 } else { 126 });
                result.exec_failure = Some(ExecFailure::new("", m.value));
            }
            Some(MessageKind::Usage) => {
                let v = m.value.max(0) as u64;
                match m.step {
                    0 => result.peak_memory_bytes = v * 1024,
                    1 => result.cpu_user_ms = v,
                    2 => result.cpu_system_ms = v,
                    _ => result.full_tmpfs_bits = v as u32,
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
        // The init itself was killed (timeout escalation, the OOM killer, or sbx's SIGKILL).
        if libc::WIFSIGNALED(status) {
            result.signal = Some(libc::WTERMSIG(status));
        } else if libc::WIFEXITED(status) {
            result.exit_code = Some(libc::WEXITSTATUS(status));
        }
    }
    Ok(())
}

/// The error of a setup step that failed (`m`), naming the path of the mount operation
/// `failed_op` of `ops` when the init said which one it was.
fn setup_error(
    m: &Message,
    failed_op: Option<usize>,
    ops: &[crate::enforce::mounts::Op],
) -> RunError {
    let path = failed_op.and_then(|i| ops.get(i)).and_then(|o| o.path());
    RunError::Setup {
        step: Step::from_u32(m.step).unwrap_or(Step::Signals),
        path: path.map(|p| std::path::PathBuf::from(std::ffi::OsStr::from_bytes(p.to_bytes()))),
        errno: m.value,
    }
}

/// Whole messages from the init's message pipe (`read` added to what was pending); true when
/// one says the command has exited.
fn take_messages(pending: &mut Vec<u8>, read: &[u8], messages: &mut Vec<Message>) -> bool {
    pending.extend_from_slice(read);
    let mut exited = false;
    while pending.len() >= MESSAGE_LEN {
        let m: Vec<u8> = pending.drain(..MESSAGE_LEN).collect();
        let w = |i: usize| u32::from_ne_bytes([m[i], m[i + 1], m[i + 2], m[i + 3]]);
        let m = Message {
            kind: w(0),
            step: w(4),
            value: w(8) as i32,
        };
        exited |= MessageKind::from_u32(m.kind) == Some(MessageKind::Exited);
        messages.push(m);
    }
    exited
}

/// After the init's exit without a PID namespace, a descendant that escaped the subreaper may
/// hold the pipes open: read what is there until both end, but stop waiting for the end
/// shortly. (Dropping the pipes at once lost output still in them when the init's exit was
/// seen first.)
async fn drain_briefly(
    (out_fd, err_fd): (Option<&AsyncFd<OwnedFd>>, Option<&AsyncFd<OwnedFd>>),
    (out_open, err_open): (&mut bool, &mut bool),
    pty: &mut PtyRelay,
    buf: &mut ReadBuf,
    output: &mut super::Output,
    caps: &mut Caps,
) {
    let grace = tokio::time::Instant::now() + Duration::from_millis(50);
    while *out_open || *err_open || pty.open {
        tokio::select! {
            r = readable(out_fd), if *out_open => {
                *out_open = relay(r, buf, output, &mut caps.out, Stream::Stdout) == Relayed::Open;
            }
            r = readable(err_fd), if *err_open => {
                *err_open = relay(r, buf, output, &mut caps.err, Stream::Stderr) == Relayed::Open;
            }
            r = readable(pty.primary()), if pty.open => {
                pty.open = relay_pty(r, buf, output, caps, pty.sink);
            }
            _ = tokio::time::sleep_until(grace) => {
                *out_open = false;
                *err_open = false;
                pty.open = false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::enforce::mounts::Op;

    /// A mount operation that fails is named by its path; a step that is no mount operation
    /// names none.
    #[test]
    fn a_failed_mount_operation_names_its_path() {
        let ops = [Op::BindSelf {
            path: c"/ws/.claude".to_owned(),
        }];
        let m = Message {
            kind: MessageKind::SetupFailed as u32,
            step: Step::Bind as u32,
            value: libc::ENOENT,
        };
        let text = setup_error(&m, Some(0), &ops).to_string();
        assert_eq!(
            text,
            "sandbox setup failed while bind-mounting a path at /ws/.claude: No such file or \
             directory (os error 2)"
        );
        let text = setup_error(&m, None, &ops).to_string();
        assert!(
            text.starts_with("sandbox setup failed while bind-mounting a path: "),
            "{text}"
        );
    }
}
