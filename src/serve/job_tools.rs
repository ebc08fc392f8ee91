//! The job tools `job_output`, `job_kill` and `job_list`: sbx's own tools over the session's
//! background jobs. The session answers them without the pipeline: they run no command and
//! reach only jobs that the same agent session started on this connection.
#![forbid(unsafe_code)]

use super::jobs::{JobRead, Jobs};
use super::protocol::{Event, JobInfo, JobStatus};
use super::ruling::{RulingFields, SESSION};
use crate::pipeline::{Ruling, Stage};
use crate::tools::render_job_output;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::future::Future;
use std::time::{Duration, Instant};

/// A job tool, by its served name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum JobTool {
    Output,
    Kill,
    List,
}

impl JobTool {
    pub(super) fn parse(tool: &str) -> Option<Self> {
        match tool {
            "job_output" => Some(Self::Output),
            "job_kill" => Some(Self::Kill),
            "job_list" => Some(Self::List),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Output => "job_output",
            Self::Kill => "job_kill",
            Self::List => "job_list",
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OutputInput {
    job_id: String,
    #[serde(default)]
    wait_ms: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KillInput {
    job_id: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListInput {}

/// The ruling on a job tool call: the session allows it, since job tools act only on its own
/// background jobs.
pub(super) fn ruling() -> Ruling {
    Ruling::allow(
        Stage::Jobs,
        SESSION,
        "job tools act only on this session's own background jobs",
    )
}

/// What a job tool call produced, before it becomes a `result` event.
#[derive(Default)]
pub(super) struct Answer {
    pub(super) is_error: bool,
    pub(super) content: String,
    pub(super) status: Option<JobStatus>,
    pub(super) job_id: Option<String>,
    pub(super) truncated: bool,
    pub(super) enforcement: Option<Value>,
    pub(super) jobs: Option<Vec<JobInfo>>,
}

impl Answer {
    pub(super) fn error(message: impl std::fmt::Display) -> Self {
        Self {
            is_error: true,
            content: format!("error: {message}"),
            ..Self::default()
        }
    }

    /// The `result` event of call `id`, answered under `ruling` (a deny when the call was
    /// refused before anything ran).
    pub(super) fn into_event(self, id: String, took: Duration, ruling: &Ruling) -> Event {
        let (exit_code, signal) = match &self.status {
            Some(JobStatus::Exited { exit_code }) => (Some(*exit_code), None),
            Some(JobStatus::TimedOut) => (Some(124), None),
            Some(JobStatus::Killed { signal }) => (None, Some(*signal)),
            Some(JobStatus::Running | JobStatus::Failed { .. }) | None => (None, None),
        };
        let (decision, stage, reason, rule, source) = RulingFields::from(ruling).for_result();
        Event::Result {
            id,
            decision,
            stage,
            reason,
            rule,
            source,
            is_error: self.is_error,
            exit_code,
            signal,
            timed_out: matches!(self.status, Some(JobStatus::TimedOut)),
            truncated: self.truncated,
            duration_ms: u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
            content: self.content,
            enforcement: self.enforcement,
            network: None,
            job_id: self.job_id,
            job_status: self.status,
            jobs: self.jobs,
        }
    }
}

fn input_of<T: serde::de::DeserializeOwned>(
    tool: JobTool,
    input: Map<String, Value>,
) -> Result<T, String> {
    serde_json::from_value(Value::Object(input))
        .map_err(|e| format!("invalid input for {}: {e}", tool.name()))
}

/// A failed start is told before the closing line.
fn failure_note(status: &JobStatus) -> Option<String> {
    match status {
        JobStatus::Failed { message } => Some(format!("could not start: {message}\n")),
        JobStatus::Running
        | JobStatus::Exited { .. }
        | JobStatus::Killed { .. }
        | JobStatus::TimedOut => None,
    }
}

fn output_answer(r: JobRead) -> Answer {
    let mut text = r.stdout;
    text.push_str(&r.stderr);
    if let Some(note) = failure_note(&r.info.status) {
        text.push_str(&note);
    }
    Answer {
        content: render_job_output(&text, r.dropped, r.info.status.code()),
        truncated: r.dropped > 0,
        enforcement: r.enforcement,
        job_id: Some(r.info.job_id),
        status: Some(r.info.status),
        ..Answer::default()
    }
}

fn kill_answer(was_running: bool, info: JobInfo) -> Answer {
    let what = if was_running {
        format!("killed job {}", info.job_id)
    } else {
        format!("job {} had already ended", info.job_id)
    };
    let note = failure_note(&info.status).unwrap_or_default();
    Answer {
        content: render_job_output(&format!("{what}\n{note}"), 0, info.status.code()),
        job_id: Some(info.job_id),
        status: Some(info.status),
        ..Answer::default()
    }
}

fn list_answer(jobs: Vec<JobInfo>) -> Answer {
    let content = if jobs.is_empty() {
        "no background jobs".to_string()
    } else {
        jobs.iter()
            .map(|j| {
                let state = match j.status.code() {
                    Some(c) => format!("exit code {c}"),
                    None => "running".to_string(),
                };
                format!("{}  [{state}]  {}", j.job_id, j.command)
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    Answer {
        content,
        jobs: Some(jobs),
        ..Answer::default()
    }
}

/// Answer the job tool call `id` for the agent session `owner`. `stop` ends a wait early
/// (the call was cancelled, or the session is ending).
pub(super) async fn answer(
    jobs: &Jobs,
    tool: JobTool,
    id: String,
    input: Map<String, Value>,
    owner: &str,
    stop: impl Future<Output = ()>,
) -> Event {
    let start = Instant::now();
    let answer = match tool {
        JobTool::Output => match input_of::<OutputInput>(tool, input) {
            Ok(i) => {
                let wait = Duration::from_millis(i.wait_ms);
                match jobs.read(&i.job_id, owner, wait, stop).await {
                    Ok(r) => output_answer(r),
                    Err(e) => Answer::error(e),
                }
            }
            Err(e) => Answer::error(e),
        },
        JobTool::Kill => match input_of::<KillInput>(tool, input) {
            Ok(i) => match jobs.kill(&i.job_id, owner, stop).await {
                Ok((was_running, info)) => kill_answer(was_running, info),
                Err(e) => Answer::error(e),
            },
            Err(e) => Answer::error(e),
        },
        JobTool::List => match input_of::<ListInput>(tool, input) {
            Ok(ListInput {}) => list_answer(jobs.list(owner)),
            Err(e) => Answer::error(e),
        },
    };
    answer.into_event(id, start.elapsed(), &ruling())
}
