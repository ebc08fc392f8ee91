//! Wrappers around the executor: timeout, retry (only for failures to start) and metrics.
//!
//! A wrapper sees the request by shared reference and reaches the executor
//! through [`ExecNext::run`], which takes no request: it may change how a call
//! is cancelled or retried, never what runs.
#![forbid(unsafe_code)]

use super::approval::BoxFuture;
use super::exec::{EnforcedCaps, ExecError, ExecOutcome, ExecRequest, Executor};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Wraps each run of the executor: timeout, retry, metrics. It sees the request but cannot change it.
pub trait ExecWrapper: Send + Sync {
    /// Proceed with `next` (perhaps more than once, or not at all).
    fn wrap<'a>(
        &'a self,
        req: &'a ExecRequest,
        next: ExecNext<'a>,
    ) -> BoxFuture<'a, Result<ExecOutcome, ExecError>>;
}

/// The rest of the wrapper chain, bound to the one request and capability set.
#[derive(Clone, Copy)]
pub struct ExecNext<'a> {
    wrappers: &'a [Arc<dyn ExecWrapper>],
    executor: &'a dyn Executor,
    req: &'a ExecRequest,
    caps: &'a EnforcedCaps,
}

impl<'a> ExecNext<'a> {
    pub(crate) fn new(
        wrappers: &'a [Arc<dyn ExecWrapper>],
        executor: &'a dyn Executor,
        req: &'a ExecRequest,
        caps: &'a EnforcedCaps,
    ) -> Self {
        Self {
            wrappers,
            executor,
            req,
            caps,
        }
    }

    /// Hand the request to the rest of the chain (may be called again to retry).
    pub fn proceed(self) -> BoxFuture<'a, Result<ExecOutcome, ExecError>> {
        match self.wrappers.split_first() {
            Some((w, rest)) => w.wrap(
                self.req,
                ExecNext {
                    wrappers: rest,
                    ..self
                },
            ),
            None => self.executor.execute(self.req, self.caps),
        }
    }
}

/// Cancel the run (by dropping it) after a fixed time, or the request's own timeout if shorter.
pub struct Timeout(pub Duration);

impl ExecWrapper for Timeout {
    fn wrap<'a>(
        &'a self,
        req: &'a ExecRequest,
        next: ExecNext<'a>,
    ) -> BoxFuture<'a, Result<ExecOutcome, ExecError>> {
        let limit = req.timeout.map_or(self.0, |t| t.min(self.0));
        Box::pin(async move {
            match tokio::time::timeout(limit, next.proceed()).await {
                Ok(r) => r,
                Err(_) => Err(ExecError::TimedOut {
                    after_ms: u64::try_from(limit.as_millis()).unwrap_or(u64::MAX),
                }),
            }
        })
    }
}

/// Retry a run that failed to start, never one that ran.
pub struct Retry {
    /// Runs tried at most.
    pub attempts: u32,
    /// The wait between tries.
    pub backoff: Duration,
}

impl ExecWrapper for Retry {
    fn wrap<'a>(
        &'a self,
        _req: &'a ExecRequest,
        next: ExecNext<'a>,
    ) -> BoxFuture<'a, Result<ExecOutcome, ExecError>> {
        Box::pin(async move {
            let mut tries = 1;
            loop {
                match next.proceed().await {
                    Err(ExecError::Spawn { .. }) if tries < self.attempts.max(1) => {
                        tries += 1;
                        tokio::time::sleep(self.backoff).await;
                    }
                    other => return other,
                }
            }
        })
    }
}

/// Counts and total time of runs.
#[derive(Debug, Default)]
pub struct Metrics {
    /// Runs started.
    pub runs: AtomicU64,
    /// Runs that ended in an error.
    pub failures: AtomicU64,
    /// Time spent in runs, in microseconds.
    pub total_micros: AtomicU64,
}

/// Record every run in shared [`Metrics`].
pub struct MetricsWrapper(pub Arc<Metrics>);

impl ExecWrapper for MetricsWrapper {
    fn wrap<'a>(
        &'a self,
        _req: &'a ExecRequest,
        next: ExecNext<'a>,
    ) -> BoxFuture<'a, Result<ExecOutcome, ExecError>> {
        Box::pin(async move {
            let start = Instant::now();
            let r = next.proceed().await;
            let m = &self.0;
            m.runs.fetch_add(1, Ordering::Relaxed);
            if r.is_err() {
                m.failures.fetch_add(1, Ordering::Relaxed);
            }
            let us = u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX);
            m.total_micros.fetch_add(us, Ordering::Relaxed);
            r
        })
    }
}
