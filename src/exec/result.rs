//! How a run ended: exit status, usage, output, and the enforcement report.
use crate::plan::{Layer, LayerStatus};
use serde::Serialize;
use std::path::PathBuf;

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
    /// Protected paths the command created or changed, each moved to quarantine.
    pub protected: Vec<crate::exec::ProtectedPath>,
    /// The profile says a protected change fails the run (`protected_change = "fail"`).
    pub protected_failed: bool,
    #[serde(skip)]
    pub stdout: Vec<u8>,
    #[serde(skip)]
    pub stderr: Vec<u8>,
}

impl RunResult {
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
