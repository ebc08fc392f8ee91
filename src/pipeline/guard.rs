//! Guards: every guard votes after pre-execute allowed; none can allow.
//!
//! [`Vote`] has no allow variant, so no guard and no ordering of guards can
//! turn a denial into permission. The fold is order-insensitive: the reported
//! denial is the smallest by (guard name, reason).
#![forbid(unsafe_code)]

use super::decision::{Ruling, Stage};
use super::listener::{CallContext, StageError, TraceStep};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A guard's vote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Vote {
    /// No objection.
    Abstain,
    /// Refuse, with the reason.
    Deny(String),
}

/// A stage that can only refuse: every guard is asked, and any denial stands.
pub trait Guard: Send + Sync {
    /// The guard's name, in traces.
    fn name(&self) -> &str;
    /// Vote on a call; an error or a panic denies it.
    fn vote(&self, cx: &CallContext<'_>) -> Result<Vote, StageError>;
}

/// Poll every guard. `None` when all abstain; otherwise the canonical denial.
pub fn poll_guards(
    guards: &[Arc<dyn Guard>],
    cx: &CallContext<'_>,
    budget: Duration,
    trace: &mut Vec<TraceStep>,
) -> Option<Ruling> {
    let mut denials: Vec<(String, String)> = Vec::new();
    for g in guards {
        let name = g.name().to_string();
        let start = Instant::now();
        let out = catch_unwind(AssertUnwindSafe(|| g.vote(cx)));
        let elapsed = start.elapsed();
        let vote = match out {
            Ok(Ok(v)) if elapsed <= budget => v,
            Ok(Ok(_)) => Vote::Deny(format!(
                "fail closed: guard `{name}` timed out after {} ms",
                elapsed.as_millis()
            )),
            Ok(Err(e)) => Vote::Deny(format!("fail closed: {e}")),
            Err(_) => Vote::Deny(format!("fail closed: guard `{name}` panicked")),
        };
        if let Vote::Deny(reason) = vote {
            denials.push((name, reason));
        }
    }
    denials.sort();
    for (name, reason) in &denials {
        trace.push(TraceStep {
            stage: "guard",
            by: name.clone(),
            outcome: "deny",
            detail: reason.clone(),
        });
    }
    denials
        .into_iter()
        .next()
        .map(|(name, reason)| Ruling::deny(Stage::Guard, &name, reason))
}
