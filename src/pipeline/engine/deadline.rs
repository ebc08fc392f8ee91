//! Deadlines on the stages that run caller-supplied code: the pre-execute
//! waterfall and the guards. A stage that does not answer in time denies.
#![forbid(unsafe_code)]

use super::{Decided, Pipeline};
use crate::pipeline::access::Access;
use crate::pipeline::call::ToolCall;
use crate::pipeline::decision::{Ruling, Stage};
use crate::pipeline::guard::poll_guards;
use crate::pipeline::listener::TraceStep;
use std::sync::Arc;
use std::time::Duration;

impl Pipeline {
    /// Run `work` on its own thread and wait at most `budget` for it. A stage that hangs
    /// cannot be interrupted, but it can no longer hold the call: it is denied (fail closed),
    /// and the thread is left to finish on its own.
    async fn bounded<T: Send + 'static>(
        budget: Duration,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Option<T> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let spawned = std::thread::Builder::new()
            .name("sbx-stage".into())
            .spawn(move || {
                let _ = tx.send(work());
            });
        if spawned.is_err() {
            return None;
        }
        match tokio::time::timeout(budget, rx).await {
            Ok(Ok(v)) => Some(v),
            Ok(Err(_)) | Err(_) => None,
        }
    }

    /// [`Pipeline::decide`] with a deadline: every listener's budget, plus one for the rest.
    pub(super) async fn decide_bounded(&self, call: &Arc<ToolCall>) -> Decided {
        if self.listeners.is_empty() {
            return self.decide(call);
        }
        let budget = self
            .listener_budget
            .saturating_mul(u32::try_from(self.listeners.len() + 1).unwrap_or(u32::MAX));
        let (p, c) = (self.clone(), Arc::clone(call));
        match Self::bounded(budget, move || p.decide(&c)).await {
            Some(d) => d,
            None => Decided {
                access: None,
                canonical: format!("{}({})", call.tool(), call.input()),
                ruling: Ruling::deny(
                    Stage::Listener,
                    "timeout",
                    format!("the pre-execute stage did not answer within {budget:?}"),
                ),
                trace: Vec::new(),
            },
        }
    }

    /// The guards with a deadline; a guard that hangs denies.
    pub(super) async fn guards_bounded(
        &self,
        call: &Arc<ToolCall>,
        access: &Access,
        trace: &mut Vec<TraceStep>,
    ) -> Option<Ruling> {
        if self.guards.is_empty() {
            return None;
        }
        let budget = self
            .guard_budget
            .saturating_mul(u32::try_from(self.guards.len() + 1).unwrap_or(u32::MAX));
        let (p, c, a) = (self.clone(), Arc::clone(call), access.clone());
        let out = Self::bounded(budget, move || {
            let cx = p.context(&c, &a);
            let mut t = Vec::new();
            let r = poll_guards(&p.guards, &cx, p.guard_budget, &mut t);
            (r, t)
        })
        .await;
        match out {
            Some((r, t)) => {
                trace.extend(t);
                r
            }
            None => Some(Ruling::deny(
                Stage::Guard,
                "timeout",
                format!("the guards did not answer within {budget:?}"),
            )),
        }
    }
}
