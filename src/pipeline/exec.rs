//! The executor interface and the capability set it may receive.
//!
//! [`EnforcedCaps`] can only be made from the profile's set and only narrowed
//! (by intersection) afterwards: nothing in the pipeline can hand the executor
//! a set larger than the profile's.
#![forbid(unsafe_code)]

use super::approval::BoxFuture;
use crate::capability::CapabilitySet;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The capability set the profile resolved to. The pipeline only ever reads it.
#[derive(Clone, Debug)]
pub struct ProfileCaps(Arc<CapabilitySet>);

impl ProfileCaps {
    /// The profile's set, shared.
    pub fn new(set: CapabilitySet) -> Self {
        Self(Arc::new(set))
    }

    /// The set.
    pub fn get(&self) -> &CapabilitySet {
        &self.0
    }
}

/// The set handed to the executor: the profile's, or a subset of it. Shared: a call that
/// no stage narrowed hands the executor the profile's own set, not a copy.
#[derive(Clone, Debug, PartialEq)]
pub struct EnforcedCaps(Arc<CapabilitySet>);

impl EnforcedCaps {
    /// Exactly the profile's set.
    pub fn from_profile(profile: &ProfileCaps) -> Self {
        Self(Arc::clone(&profile.0))
    }

    /// This set intersected with `other`: never larger than before.
    #[must_use]
    pub fn narrow(&self, other: &CapabilitySet) -> Self {
        Self(Arc::new(self.0.intersect(other)))
    }

    /// The set.
    pub fn get(&self) -> &CapabilitySet {
        &self.0
    }

    /// The set, shared.
    pub fn shared(&self) -> &Arc<CapabilitySet> {
        &self.0
    }
}

/// What to run. Wrappers receive it by shared reference: they cannot change it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ExecRequest {
    /// The call's id.
    pub call_id: String,
    /// The tool called.
    pub tool: String,
    /// The frozen input of the call.
    pub input: serde_json::Value,
    /// For Bash, `["bash", "-c", command]`; empty for tools the executor runs by name.
    pub argv: Vec<String>,
    /// The directory the command starts in.
    pub cwd: PathBuf,
    /// Variables set for the command (on top of what the profile keeps).
    pub env: BTreeMap<String, String>,
    /// The call's timeout; the profile's still applies.
    pub timeout: Option<Duration>,
    /// Start it as a background job instead of running it to its end.
    pub background: bool,
}

/// What a run produced.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ExecOutcome {
    /// The exit code, when the command exited.
    pub exit_status: Option<i32>,
    /// The signal that killed it, when one did.
    pub signal: Option<i32>,
    /// Capped by the executor.
    pub stdout: String,
    /// Its standard error, capped by the executor.
    pub stderr: String,
    /// Whether either stream was cut at its cap.
    pub truncated: bool,
    /// Killed because the call's or the profile's time ran out.
    pub timed_out: bool,
    /// How long it ran.
    pub duration: Duration,
    /// The executor's enforcement report for this run.
    pub enforcement: serde_json::Value,
    /// Set when the command was started in the background instead of run to its end: the
    /// job that now holds it. `exit_status` is then absent and the call is not an error.
    pub job: Option<String>,
    /// In `proxy` network mode: every connection the command asked for, allowed or refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<Vec<crate::proxy::NetRecord>>,
}

/// Why nothing (or nothing complete) ran.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExecError {
    /// The process could not be started: the only error a retry wrapper retries.
    #[error("could not start: {message}")]
    Spawn {
        /// Why.
        message: String,
    },
    #[error("timed out after {after_ms} ms")]
    /// The run was killed at its timeout.
    TimedOut {
        /// The timeout.
        after_ms: u64,
    },
    #[error("tool `{tool}` is not run by this executor")]
    /// The executor does not run this tool.
    Unsupported {
        /// The tool.
        tool: String,
    },
    #[error("{message}")]
    /// The run failed for another reason.
    Failed {
        /// What happened.
        message: String,
    },
}

/// The sandboxed executor. Dropping the future must cancel the run (kill the process tree).
pub trait Executor: Send + Sync {
    /// Run `req` within `caps`. Dropping the future kills the process tree.
    fn execute<'a>(
        &'a self,
        req: &'a ExecRequest,
        caps: &'a EnforcedCaps,
    ) -> BoxFuture<'a, Result<ExecOutcome, ExecError>>;
}

/// An executor that refuses everything: for checks that must never run anything.
pub struct NoExecutor;

impl Executor for NoExecutor {
    fn execute<'a>(
        &'a self,
        req: &'a ExecRequest,
        _caps: &'a EnforcedCaps,
    ) -> BoxFuture<'a, Result<ExecOutcome, ExecError>> {
        Box::pin(async move {
            Err(ExecError::Unsupported {
                tool: req.tool.clone(),
            })
        })
    }
}
