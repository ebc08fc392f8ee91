//! The pre-execute waterfall: ordered listeners, first decision wins.
//!
//! Each listener gets the call and `next`; it returns a ruling or passes on by
//! returning `next.decide(cx)`. A listener that panics, errors, or makes the
//! waterfall overrun its time budget denies the call, whatever the listeners
//! around it return (fail closed).
#![forbid(unsafe_code)]

use super::access::Access;
use super::approval::SessionGrants;
use super::call::ToolCall;
use super::decision::{Ruling, Stage};
pub use super::stage_error::StageError;
use super::tool::ToolMeta;
use crate::capability::CapabilitySet;
use crate::decision::Mode;
use crate::policy::Policy;
use crate::workspace::WorkspaceContext;
use serde::Serialize;
use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the executor will enforce for this profile on this host (from the enforcement report).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct EnforcementOutlook {
    /// Every protection the profile asks for will be in force.
    pub fully_enforced: bool,
    /// Protections the profile requires that the host cannot give.
    pub missing: Vec<String>,
}

/// Everything a listener or guard may look at. Nothing in it is mutable.
pub struct CallContext<'a> {
    /// The call.
    pub call: &'a ToolCall,
    /// What it touches.
    pub access: &'a Access,
    /// Facts about its tool.
    pub meta: ToolMeta,
    /// The permission mode.
    pub mode: Mode,
    /// The merged policy.
    pub policy: &'a Policy,
    /// Where the call works: the workspace, the home and the writable trees the safety floor
    /// and the fast paths judge paths against.
    pub workspace: &'a WorkspaceContext,
    /// The profile's capability set, read-only.
    pub profile: &'a CapabilitySet,
    /// What this host enforces.
    pub outlook: &'a EnforcementOutlook,
    /// Approvals given for sessions.
    pub grants: &'a SessionGrants,
}

/// One step of the waterfall, for traces.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TraceStep {
    /// The stage's name.
    pub stage: &'static str,
    /// Who spoke at this step.
    pub by: String,
    /// `allow`, `ask`, `deny`, `pass` or `failed`.
    pub outcome: &'static str,
    /// What it said.
    pub detail: String,
}

/// A pre-execute listener.
pub trait Listener: Send + Sync {
    /// The listener's name, in traces.
    fn name(&self) -> &str;
    /// Return a ruling, or `next.decide(cx)` to pass on.
    fn on_call(&self, cx: &CallContext<'_>, next: Next<'_>) -> Result<Ruling, StageError>;
}

struct State {
    failure: Option<StageError>,
    trace: Vec<TraceStep>,
}

/// The rest of the waterfall.
pub struct Next<'a> {
    rest: &'a [Arc<dyn Listener>],
    state: &'a RefCell<State>,
}

impl Next<'_> {
    /// Let the remaining listeners decide. With none left, the answer is ask.
    pub fn decide(self, cx: &CallContext<'_>) -> Result<Ruling, StageError> {
        let Some((first, rest)) = self.rest.split_first() else {
            return Ok(Ruling::ask(
                Stage::Default,
                "default",
                "no listener decided",
            ));
        };
        let next = Next {
            rest,
            state: self.state,
        };
        let name = first.name().to_string();
        let out = catch_unwind(AssertUnwindSafe(|| first.on_call(cx, next)));
        let mut st = self.state.borrow_mut();
        match out {
            Ok(Ok(r)) => {
                let outcome = if r.by == name {
                    r.decision.as_str()
                } else {
                    "pass"
                };
                st.trace.push(TraceStep {
                    stage: "pre-execute",
                    by: name,
                    outcome,
                    detail: if outcome == "pass" {
                        String::new()
                    } else {
                        r.reason.clone()
                    },
                });
                Ok(r)
            }
            Ok(Err(e)) => {
                st.failure.get_or_insert(e.clone());
                Err(e)
            }
            Err(_) => {
                let e = StageError::Panicked {
                    stage: "listener",
                    name,
                };
                st.failure.get_or_insert(e.clone());
                Err(e)
            }
        }
    }
}

/// Ask the listeners, in order. Returns the ruling (a denial on any failure) and the trace, first listener first.
pub fn ask_listeners(
    listeners: &[Arc<dyn Listener>],
    cx: &CallContext<'_>,
    budget: Duration,
) -> (Ruling, Vec<TraceStep>) {
    let state = RefCell::new(State {
        failure: None,
        trace: Vec::new(),
    });
    let start = Instant::now();
    let out = Next {
        rest: listeners,
        state: &state,
    }
    .decide(cx);
    let elapsed = start.elapsed();
    let State { failure, mut trace } = state.into_inner();
    trace.reverse();
    let failure = failure.or(out.as_ref().err().cloned()).or_else(|| {
        (elapsed > budget).then(|| StageError::TimedOut {
            stage: "pre-execute",
            name: "waterfall".into(),
            after_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
        })
    });
    match (failure, out) {
        (Some(e), _) | (None, Err(e)) => {
            let by = match &e {
                StageError::Failed { name, .. }
                | StageError::Panicked { name, .. }
                | StageError::TimedOut { name, .. } => name.clone(),
            };
            trace.push(TraceStep {
                stage: "pre-execute",
                by: by.clone(),
                outcome: "failed",
                detail: e.to_string(),
            });
            (
                Ruling::deny(Stage::Listener, &by, format!("fail closed: {e}")),
                trace,
            )
        }
        (None, Ok(r)) => (r, trace),
    }
}
