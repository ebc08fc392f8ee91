//! Deadlines on the stages that run caller-supplied code: the pre-execute
//! waterfall and the guards. A stage that does not answer in time denies. The stages run on
//! worker threads kept for the next call.
#![forbid(unsafe_code)]

use super::{Decided, Pipeline};
use crate::pipeline::access::Access;
use crate::pipeline::call::ToolCall;
use crate::pipeline::decision::{Ruling, Stage};
use crate::pipeline::guard::poll_guards;
use crate::pipeline::listener::TraceStep;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

/// A job for a stage worker.
type Job = Box<dyn FnOnce() + Send>;

/// The stage workers waiting for a job, each by the sender of its own queue.
static IDLE: Mutex<Vec<mpsc::Sender<Job>>> = Mutex::new(Vec::new());

/// How many idle workers are kept; one more that finishes its job ends.
const IDLE_MAX: usize = 2;

/// Give `job` to an idle worker, or to a new one when none is idle: a worker still busy with
/// a stage (a hung one among them) never delays another call's stage. `false` when no thread
/// could be started.
fn dispatch(job: Job) -> bool {
    let idle = IDLE.lock().ok().and_then(|mut v| v.pop());
    let job = match idle {
        Some(tx) => match tx.send(job) {
            Ok(()) => return true,
            Err(mpsc::SendError(job)) => job,
        },
        None => job,
    };
    let (tx, rx) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("sbx-stage".into())
        .spawn(move || work(job, &tx, &rx))
        .is_ok()
}

/// A worker's life: run a job, offer itself for the next, wait for it. It ends when its job
/// panics (the call waiting for it sees its answer dropped) or when enough others are idle.
fn work(first: Job, tx: &mpsc::Sender<Job>, rx: &mpsc::Receiver<Job>) {
    let mut job = first;
    loop {
        if catch_unwind(AssertUnwindSafe(job)).is_err() {
            return;
        }
        match IDLE.lock() {
            Ok(mut idle) if idle.len() < IDLE_MAX => idle.push(tx.clone()),
            Ok(_) | Err(_) => return,
        }
        match rx.recv() {
            Ok(next) => job = next,
            Err(_) => return,
        }
    }
}

impl Pipeline {
    /// Run `work` on a stage worker and wait at most `budget` for it. A stage that hangs
    /// cannot be interrupted, but it can no longer hold the call: it is denied (fail closed),
    /// and its worker is left to finish on its own, serving no other call until then. Workers
    /// are kept between calls, so that a call does not pay for starting a thread.
    async fn bounded<T: Send + 'static>(
        budget: Duration,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Option<T> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        if !dispatch(Box::new(move || {
            let _ = tx.send(work());
        })) {
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
