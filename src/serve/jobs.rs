//! Background jobs of one `sbx serve` session: shell calls started with `run_in_background`,
//! running in the same sandbox as any other call, their output kept for the job tools.
//!
//! Unread output is kept per stream up to [`JOB_OUTPUT_BYTES`](super::JOB_OUTPUT_BYTES); past that the oldest unread
//! bytes are dropped, so a long-running job shows its latest output, and the next read says
//! how many bytes it lost. Jobs belong to the session that started them: dropping the
//! registry (or [`Jobs::close`]) kills every process tree still running.
#![forbid(unsafe_code)]

use super::protocol::{JobInfo, JobStatus};
use super::runs::{Owned, Runs};
use super::unread::Unread;
use crate::capability::CapabilitySet;
use crate::exec::{Output, RunRequest, RunResult, Sandbox, Stream};
use futures_util::FutureExt;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::{oneshot, watch};

/// The longest a `job_output` call waits for new output or the job's end.
pub const MAX_JOB_WAIT: Duration = Duration::from_secs(60);

/// Background jobs one session may have running at once; a start beyond it is refused.
pub const MAX_RUNNING_JOBS: usize = 16;

/// Ended jobs a session keeps for `job_output`; past it the oldest ended ones are forgotten.
pub const MAX_KEPT_JOBS: usize = 64;

/// Why a job tool could not act.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JobError {
    /// No such job, or it belongs to another agent session.
    #[error("no background job `{id}` in this session")]
    Unknown {
        /// The id asked for.
        id: String,
    },
    /// The session is ending: it starts no more jobs.
    #[error("the session is ending: no new background jobs")]
    Closed,
    /// The sandbox cannot start the command (a run would end with exit 125).
    #[error("cannot start the job: {message}")]
    Start {
        /// Why.
        message: String,
    },
    /// Too many jobs are running in this session.
    #[error("{max} background jobs are already running in this session; wait for one or kill one")]
    TooMany {
        /// How many may run at once.
        max: usize,
    },
}

struct JobState {
    status: JobStatus,
    stdout: Unread,
    stderr: Unread,
    enforcement: Option<serde_json::Value>,
    /// The agent session allowed to use the job tools on it; none until the start is reported.
    owner: Option<String>,
}

struct Job {
    id: String,
    command: String,
    state: Mutex<JobState>,
    /// Bumped on every chunk of output and at the end, to wake readers.
    changed: watch::Sender<u64>,
}

impl Job {
    fn state(&self) -> Option<MutexGuard<'_, JobState>> {
        self.state.lock().ok()
    }

    fn push(&self, stream: Stream, bytes: &[u8]) {
        if let Some(mut s) = self.state() {
            match stream {
                Stream::Stdout => s.stdout.push(bytes),
                Stream::Stderr => s.stderr.push(bytes),
            }
        }
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    fn end(&self, status: JobStatus, enforcement: Option<serde_json::Value>) {
        if let Some(mut s) = self.state() {
            s.status = status;
            s.enforcement = enforcement;
        }
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    fn info(&self) -> JobInfo {
        JobInfo {
            job_id: self.id.clone(),
            command: self.command.clone(),
            status: self
                .state()
                .map_or(JobStatus::Running, |s| s.status.clone()),
        }
    }

    /// Whether a read would return at once: unread output, or the job has ended.
    fn ended(&self) -> bool {
        self.state()
            .is_none_or(|s| !matches!(s.status, JobStatus::Running))
    }

    fn ready(&self) -> bool {
        self.state()
            .is_none_or(|s| !s.status.is_running() || !s.stdout.is_empty() || !s.stderr.is_empty())
    }

    fn read(&self) -> JobRead {
        let info = self.info();
        let ended = !info.status.is_running();
        let Some(mut s) = self.state() else {
            return JobRead {
                info,
                ..JobRead::default()
            };
        };
        let (stdout, out_dropped) = s.stdout.take(ended);
        let (stderr, err_dropped) = s.stderr.take(ended);
        JobRead {
            info,
            stdout,
            stderr,
            dropped: out_dropped + err_dropped,
            enforcement: s.enforcement.clone(),
        }
    }
}

/// One `job_output` read: what the job wrote since the last read, and its status.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JobRead {
    /// The job's id, command and status.
    pub info: JobInfo,
    /// Standard output not read before.
    pub stdout: String,
    /// Standard error not read before.
    pub stderr: String,
    /// Unread bytes dropped (oldest first) because a stream outgrew [`JOB_OUTPUT_BYTES`](super::JOB_OUTPUT_BYTES).
    pub dropped: u64,
    /// The sandbox's enforcement report, once the job has ended.
    pub enforcement: Option<serde_json::Value>,
}

impl Default for JobInfo {
    fn default() -> Self {
        Self {
            job_id: String::new(),
            command: String::new(),
            status: JobStatus::Running,
        }
    }
}

/// The background jobs of one session.
#[derive(Default)]
pub struct Jobs {
    runs: Runs<Job>,
}

impl Owned for Job {
    fn id(&self) -> &str {
        &self.id
    }
    fn owned_by(&self, owner: &str) -> bool {
        self.state()
            .is_some_and(|s| s.owner.as_deref() == Some(owner))
    }
    fn set_owner(&self, owner: &str) {
        if let Some(mut s) = self.state() {
            s.owner = Some(owner.to_string());
        }
    }
}

fn status_of(r: &RunResult) -> JobStatus {
    if r.timed_out {
        JobStatus::TimedOut
    } else if let Some(signal) = r.signal {
        JobStatus::Killed { signal }
    } else {
        JobStatus::Exited {
            exit_code: r.code(),
        }
    }
}

impl Jobs {
    /// Start `run` in `sandbox`, narrowed to `caps`, and return the new job's id at once.
    pub fn start(
        &self,
        sandbox: Arc<Sandbox>,
        mut run: RunRequest,
        caps: Arc<CapabilitySet>,
        command: String,
    ) -> Result<String, JobError> {
        // Answer a launch that cannot work now, rather than report a started job that failed;
        // the job then runs what was prepared here.
        let prepared = sandbox
            .prepare_run(&run, Some(&caps))
            .map_err(|e| JobError::Start {
                message: e.to_string(),
            })?;
        let mut reg = self.runs.lock().ok_or(JobError::Closed)?;
        if reg.closed {
            return Err(JobError::Closed);
        }
        let running = reg.entries.iter().filter(|e| !e.run.ended()).count();
        if running >= MAX_RUNNING_JOBS {
            return Err(JobError::TooMany {
                max: MAX_RUNNING_JOBS,
            });
        }
        let ended = reg.entries.len() - running;
        if ended >= MAX_KEPT_JOBS
            && let Some(i) = reg.entries.iter().position(|e| e.run.ended())
        {
            reg.entries.remove(i);
        }
        reg.started += 1;
        let job = Arc::new(Job {
            id: format!("job-{}", reg.started),
            command,
            state: Mutex::new(JobState {
                status: JobStatus::Running,
                stdout: Unread::default(),
                stderr: Unread::default(),
                enforcement: None,
                owner: None,
            }),
            changed: watch::channel(0).0,
        });
        let (cancel, cancelled) = oneshot::channel();
        let sink = job.clone();
        run.output = Output::Callback(Box::new(move |stream, bytes| {
            sink.push(stream, bytes);
            std::ops::ControlFlow::Continue(())
        }));
        run.cancel = Some(cancelled);
        let held = job.clone();
        let task = tokio::spawn(async move {
            let ran = std::panic::AssertUnwindSafe(sandbox.run_prepared(prepared, run))
                .catch_unwind()
                .await;
            match ran {
                Ok(Ok(r)) => {
                    for n in r.notices() {
                        held.push(Stream::Stderr, format!("sbx: {n}\n").as_bytes());
                    }
                    held.end(status_of(&r), serde_json::to_value(&r.enforcement).ok());
                }
                Ok(Err(e)) => held.end(
                    JobStatus::Failed {
                        message: e.to_string(),
                    },
                    None,
                ),
                Err(_) => held.end(
                    JobStatus::Failed {
                        message: "the sandbox panicked".into(),
                    },
                    None,
                ),
            }
        });
        let id = job.id.clone();
        reg.push(job, cancel, task);
        Ok(id)
    }

    /// Let the agent session `owner` use the job tools on job `id`.
    pub fn set_owner(&self, id: &str, owner: &str) {
        self.runs.set_owner(id, owner);
    }

    /// The job `id`; with `owner`, only when that agent session owns it.
    fn find(&self, id: &str, owner: Option<&str>) -> Result<Arc<Job>, JobError> {
        self.runs
            .find(id, owner)
            .ok_or_else(|| JobError::Unknown { id: id.to_string() })
    }

    /// The jobs `owner` may see, oldest first.
    pub fn list(&self, owner: &str) -> Vec<JobInfo> {
        self.runs.owned(owner).iter().map(|j| j.info()).collect()
    }

    /// Output since the last read and the status. When there is neither new output nor an
    /// end yet, wait up to `wait` (at most [`MAX_JOB_WAIT`]) for one, or until `stop`.
    pub async fn read(
        &self,
        id: &str,
        owner: &str,
        wait: Duration,
        stop: impl Future<Output = ()>,
    ) -> Result<JobRead, JobError> {
        let job = self.find(id, Some(owner))?;
        let mut changed = job.changed.subscribe();
        if !job.ready() {
            tokio::select! {
                _ = tokio::time::timeout(wait.min(MAX_JOB_WAIT), changed.changed()) => {}
                () = stop => {}
            }
        }
        Ok(job.read())
    }

    /// Signal the job `id` to die (any owner: the client's `cancel` request). False when
    /// there is no such job.
    pub fn signal_kill(&self, id: &str) -> bool {
        self.runs.stop(id)
    }

    /// Kill the job `id` of `owner` and wait until its process tree is gone, or until `stop`.
    /// Says whether it was still running, and how it stands now.
    pub async fn kill(
        &self,
        id: &str,
        owner: &str,
        stop: impl Future<Output = ()>,
    ) -> Result<(bool, JobInfo), JobError> {
        let job = self.find(id, Some(owner))?;
        let mut changed = job.changed.subscribe();
        let was_running = job.info().status.is_running();
        self.signal_kill(id);
        let ended = async {
            while job.info().status.is_running() {
                if changed.changed().await.is_err() {
                    break;
                }
            }
        };
        tokio::select! {
            () = ended => {}
            () = stop => {}
        }
        Ok((was_running, job.info()))
    }

    /// Start no more jobs and kill every running one (the session is ending).
    pub fn close(&self) {
        self.runs.close();
    }

    /// Wait until every job's run has returned (after [`Jobs::close`]: until every tree is gone).
    pub async fn wait_all(&self) {
        self.runs.wait_all().await;
    }
}
