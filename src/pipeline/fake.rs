//! A fake executor for tests and examples: records what it was given, runs nothing.
#![forbid(unsafe_code)]

use super::approval::BoxFuture;
use super::exec::{EnforcedCaps, ExecError, ExecOutcome, ExecRequest, Executor};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// Records every request and capability set; answers with a fixed outcome.
#[derive(Debug, Default)]
pub struct FakeExecutor {
    /// Every request and capability set given, in order.
    pub calls: Mutex<Vec<(ExecRequest, EnforcedCaps)>>,
    /// Fail to start this many times before succeeding.
    pub spawn_failures: AtomicU32,
    /// Exit status of every run.
    pub exit_status: i32,
    /// Sleep this long before answering.
    pub delay: Option<Duration>,
    /// The standard output every run returns.
    pub stdout: String,
}

impl FakeExecutor {
    /// An executor whose every run exits 0 printing `stdout`.
    pub fn ok(stdout: &str) -> Self {
        Self {
            stdout: stdout.to_string(),
            ..Self::default()
        }
    }

    /// How many runs it was asked for.
    pub fn runs(&self) -> usize {
        self.calls.lock().map(|c| c.len()).unwrap_or(0)
    }
}

impl Executor for FakeExecutor {
    fn execute<'a>(
        &'a self,
        req: &'a ExecRequest,
        caps: &'a EnforcedCaps,
    ) -> BoxFuture<'a, Result<ExecOutcome, ExecError>> {
        Box::pin(async move {
            if let Ok(mut c) = self.calls.lock() {
                c.push((req.clone(), caps.clone()));
            }
            if self.spawn_failures.load(Ordering::SeqCst) > 0 {
                self.spawn_failures.fetch_sub(1, Ordering::SeqCst);
                return Err(ExecError::Spawn {
                    message: "fake spawn failure".into(),
                });
            }
            if let Some(d) = self.delay {
                tokio::time::sleep(d).await;
            }
            Ok(ExecOutcome {
                exit_status: Some(self.exit_status),
                stdout: self.stdout.clone(),
                duration: self.delay.unwrap_or_default(),
                enforcement: serde_json::json!({ "fake": true }),
                ..ExecOutcome::default()
            })
        })
    }
}
