//! Supervising a launched tree: relaying output, the timeout and its escalation, forwarded
//! signals and cancellation, then reaping and turning the init's report into a result.
use super::fds::{ReadBuf, async_fd, pipe, read_ready, set_nonblocking};
use super::output::{Capture, deliver};
use super::prepare::Launch;
use super::{EnforcementReport, RunError, RunRequest, RunResult, Stream};
use crate::enforce::report::{ChildFds, MESSAGE_LEN, Message, MessageKind, Step};
use crate::plan::LayerStatus;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

/// Pass on one ready read from the command's stdout or stderr; `false` once the pipe has ended.
fn relay(
    ready: std::io::Result<tokio::io::unix::AsyncFdReadyGuard<'_, OwnedFd>>,
    buf: &mut ReadBuf,
    output: &mut super::Output,
    cap: &mut Capture,
    stream: Stream,
) -> bool {
    match read_ready(ready, buf) {
        Some([]) => false,
        Some(b) => {
            deliver(output, cap, stream, b);
            true
        }
        None => true,
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

pub(super) async fn supervise(p: &mut Launch, req: &mut RunRequest) -> Result<RunResult, RunError> {
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
    let mut buf = ReadBuf::new();
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
    let can_detach = p.prepared.cgroups.is_empty();
    let mut got_exit_msg = false;
    while out_open
        || err_open
        || (rep_open && !got_exit_msg)
        || !(exited || (got_exit_msg && can_detach))
    {
        let grace_deadline = term_sent.map(|t| tokio::time::Instant::from_std(t + req.grace));
        tokio::select! {
            r = out_fd.readable(), if out_open => {
                out_open = relay(r, &mut buf, &mut req.output, &mut out_cap, Stream::Stdout);
            }
            r = err_fd.readable(), if err_open => {
                err_open = relay(r, &mut buf, &mut req.output, &mut err_cap, Stream::Stderr);
            }
            r = rep_fd.readable(), if rep_open => match read_ready(r, &mut buf) {
                Some([]) => rep_open = false,
                Some(b) => {
                    rep_buf.extend_from_slice(b);
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
            // A descendant that escaped the subreaper may hold the pipes open: read what is
            // there until both end, but stop waiting for the end shortly. (Dropping the pipes
            // at once lost output still in them when the init's exit was seen first.)
            let grace = tokio::time::Instant::now() + Duration::from_millis(50);
            while out_open || err_open {
                tokio::select! {
                    r = out_fd.readable(), if out_open => {
                        out_open = relay(r, &mut buf, &mut req.output, &mut out_cap, Stream::Stdout);
                    }
                    r = err_fd.readable(), if err_open => {
                        err_open = relay(r, &mut buf, &mut req.output, &mut err_cap, Stream::Stderr);
                    }
                    _ = tokio::time::sleep_until(grace) => {
                        out_open = false;
                        err_open = false;
                    }
                }
            }
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
        tree: (!p.prepared.cgroups.is_empty()).then(|| p.prepared.cgroups.usage()),
        limits_reached: Vec::new(),
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
        // The init itself was killed (timeout escalation, the OOM killer, or sbx's SIGKILL).
        if libc::WIFSIGNALED(status) {
            result.signal = Some(libc::WTERMSIG(status));
        } else if libc::WIFEXITED(status) {
            result.exit_code = Some(libc::WEXITSTATUS(status));
        }
    }
    result.find_limits_reached(p.timeout);
    Ok(result)
}
