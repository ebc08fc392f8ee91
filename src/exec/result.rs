//! How a run ended: exit status, usage, output, and the enforcement report.
use crate::enforce::cgroup::TreeUsage;
use crate::plan::{Layer, LayerStatus};
use serde::Serialize;
use std::path::PathBuf;

/// What the kernel was asked to enforce, and what it did.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct EnforcementReport {
    /// Each layer, enforced, partial or not enforced, with why.
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
    /// The exit code, when the command exited.
    pub exit_code: Option<i32>,
    /// The signal that killed it, when one did.
    pub signal: Option<i32>,
    /// It was killed at its timeout.
    pub timed_out: bool,
    /// The command could not be executed: 126 not executable, 127 not found.
    pub exec_error: Option<i32>,
    /// Why the command could not be executed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exec_failure: Option<ExecFailure>,
    /// How long it ran.
    pub duration_ms: u64,
    /// Standard output was cut at its cap.
    pub stdout_truncated: bool,
    /// Standard error was cut at its cap.
    pub stderr_truncated: bool,
    /// Bytes written to standard output, past the cap included.
    pub stdout_bytes: u64,
    /// Bytes written to standard error, past the cap included.
    pub stderr_bytes: u64,
    /// Largest resident set of any process in the tree.
    pub peak_memory_bytes: u64,
    /// What the run's cgroups saw (peak memory of the whole tree, OOM kills, refused forks),
    /// when the run had any.
    pub tree: Option<TreeUsage>,
    /// The limits the run ran into, each with what happened.
    pub limits_reached: Vec<LimitReached>,
    /// User CPU time of the tree.
    pub cpu_user_ms: u64,
    /// System CPU time of the tree.
    pub cpu_system_ms: u64,
    /// What the kernel enforced.
    pub enforcement: EnforcementReport,
    /// Protected paths the command created or changed, each moved to quarantine.
    pub protected: Vec<crate::exec::ProtectedPath>,
    /// The profile says a protected change fails the run (`protected_change = "fail"`).
    pub protected_failed: bool,
    /// In `proxy` network mode: every connection the command asked the proxy for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<Vec<crate::proxy::NetRecord>>,
    #[serde(skip)]
    /// Standard output, when the request captured it.
    pub stdout: Vec<u8>,
    #[serde(skip)]
    /// Standard error, when the request captured it.
    pub stderr: Vec<u8>,
    /// Which sized private tmpfs mounts the init found full at the end, one bit each.
    #[serde(skip)]
    pub(crate) full_tmpfs_bits: u32,
    /// The processes the PID namespace held when the timeout fired and the limit they were
    /// at, when they were.
    #[serde(skip)]
    pub(crate) processes_full: Option<(u64, ProcessLimit)>,
}

/// Why `execve` failed for every candidate of the command.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct ExecFailure {
    /// The program as the command named it.
    pub program: String,
    /// The error number `execve` returned.
    pub errno: i32,
    /// What the error number means.
    pub reason: String,
}

impl ExecFailure {
    pub(super) fn new(program: &str, errno: i32) -> Self {
        Self {
            program: program.to_string(),
            errno,
            reason: nix::errno::Errno::from_raw(errno).desc().to_string(),
        }
    }
}

/// A limit the run ran into.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct LimitReached {
    /// The profile's key: `memory`, `processes`, `timeout`, `cpu_time`, `file_size`, `tmp_size`
    /// or `output`.
    pub limit: &'static str,
    /// What happened.
    pub detail: String,
}

fn bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 && n % (1 << 30) == 0 => format!("{} GiB", n >> 30),
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n => format!("{n} bytes"),
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A process limit kept without a cgroup, which counts none of the forks it refuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ProcessLimit {
    /// The PID namespace's own `pid_max`.
    PidMax(u64),
    /// `RLIMIT_NPROC`, counted in the run's user namespace.
    Nproc(u64),
}

impl std::fmt::Display for ProcessLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::PidMax(n) => write!(f, "the PID namespace's pid_max={n}"),
            Self::Nproc(n) => write!(f, "RLIMIT_NPROC={n} in the run's user namespace"),
        }
    }
}

impl RunResult {
    /// Fill [`RunResult::limits_reached`] from the exit, the signal and the cgroup readings.
    pub(super) fn find_limits_reached(
        &mut self,
        timeout: Option<std::time::Duration>,
        sized_tmpfs: &[std::ffi::CString],
        tmp_size: Option<u64>,
    ) {
        let mut v = Vec::new();
        for (i, path) in sized_tmpfs.iter().enumerate().take(31) {
            if self.full_tmpfs_bits & (1 << i) != 0 {
                let size = tmp_size.map_or(String::new(), |s| format!(" of {}", bytes(s)));
                v.push((
                    "tmp_size",
                    format!(
                        "{} filled up to the private tmpfs size{size}: writes past it fail with ENOSPC",
                        path.to_string_lossy()
                    ),
                ));
            }
        }
        if self.timed_out {
            let t = timeout.map_or(String::new(), |t| format!(" of {:.1} s", t.as_secs_f64()));
            v.push(("timeout", format!("the run exceeded its timeout{t}")));
        }
        if let Some((held, limit)) = self.processes_full {
            v.push((
                "processes",
                format!(
                    "the tree held {held} processes and threads when the timeout fired, at \
                     its limit ({limit}): forks past it fail"
                ),
            ));
        }
        if let Some(u) = &self.tree {
            let limit = u
                .memory_limit_bytes
                .map_or(String::new(), |m| format!(" of {}", bytes(m)));
            if u.oom_kills > 0 {
                let n = plural(u.oom_kills, "process", "processes");
                v.push((
                    "memory",
                    format!("the kernel killed {n} of the tree at its memory limit{limit}"),
                ));
            } else if u.oom_events > 0 {
                v.push((
                    "memory",
                    format!("the tree reached its memory limit{limit}; allocations failed"),
                ));
            }
            if u.pids_refused > 0 {
                let n = plural(u.pids_refused, "fork", "forks");
                let limit = u.pids_limit.map_or(String::new(), |m| format!(" of {m}"));
                v.push((
                    "processes",
                    format!("{n} refused at the tree's process limit{limit}"),
                ));
            }
        }
        match self.signal {
            Some(libc::SIGXCPU) => v.push((
                "cpu_time",
                "the command used up its CPU time (RLIMIT_CPU)".into(),
            )),
            Some(libc::SIGXFSZ) => v.push((
                "file_size",
                "the command wrote past its file size limit (RLIMIT_FSIZE)".into(),
            )),
            _ => {}
        }
        self.limits_reached = v
            .into_iter()
            .map(|(limit, detail)| LimitReached { limit, detail })
            .collect();
    }

    /// Add the output cap to [`RunResult::limits_reached`] when a stream was cut at it: what
    /// came past it is discarded, which the command's exit code does not say.
    pub(super) fn find_output_cut(&mut self, cap: u64) {
        for (cut, name, written) in [
            (self.stdout_truncated, "standard output", self.stdout_bytes),
            (self.stderr_truncated, "standard error", self.stderr_bytes),
        ] {
            if cut {
                self.limits_reached.push(LimitReached {
                    limit: "output",
                    detail: format!(
                        "{name} was cut at {} of {} written; the rest was discarded",
                        bytes(cap),
                        bytes(written)
                    ),
                });
            }
        }
    }

    /// The conventional exit code: the child's own, 128+N for signal N, 124 on timeout,
    /// 126 not executable, 127 not found, 122 when a protected change fails the run.
    pub fn code(&self) -> i32 {
        if self.protected_failed {
            122
        } else if self.timed_out {
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
