//! `sbx check`: the decision and its trace, without running anything.
//!
//! Policy hooks, approval and the executor are not consulted: `check` reports what
//! the waterfall and the floor decide, which is what an approval would be
//! asked about.
#![forbid(unsafe_code)]

use super::call::ToolCall;
use super::decision::{Decision, Wording};
use super::engine::{Decided, Pipeline};
use super::exec::ProfileCaps;
use super::listener::{EnforcementOutlook, TraceStep};
use crate::capability::CapabilitySet;
use crate::decision::Mode;
use crate::policy::Policy;
use crate::provenance::Provenance;
use serde::Serialize;
use std::fmt;
use std::sync::Arc;

/// `sbx check`'s view of a [`Ruling`](super::Ruling): its fields, the stage by name, and the
/// call, the mode and the trace it was decided with. `--json` prints it as it serialises;
/// the text form is its `Display`. Only [`CheckReport::new`] makes one, from a decision.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CheckReport {
    /// The decision.
    pub decision: Decision,
    /// Why.
    pub reason: String,
    /// The stage that decided, by name.
    pub stage: &'static str,
    /// The listener, guard, hook or floor entry that decided.
    pub by: String,
    /// The deciding rule as written.
    pub rule: Option<String>,
    /// Where that rule was written.
    pub source: Option<Provenance>,
    /// The tool called.
    pub tool: String,
    /// The call in one canonical line.
    pub canonical: String,
    /// The mode the call was decided in.
    pub mode: Mode,
    /// Each step of the waterfall.
    pub trace: Vec<TraceStep>,
    /// The ruling worded for the text form ([`Wording::Report`]).
    #[serde(skip)]
    text: String,
}

impl CheckReport {
    /// The view of the decision on `call`, decided in `mode`.
    pub fn new(call: &ToolCall, mode: Mode, decided: Decided) -> Self {
        let r = decided.ruling;
        let text = r.text(Wording::Report);
        Self {
            decision: r.decision,
            reason: r.reason,
            stage: r.stage.as_str(),
            by: r.by,
            rule: r.rule,
            source: r.source,
            tool: call.tool().to_string(),
            canonical: decided.canonical,
            mode,
            trace: decided.trace,
            text,
        }
    }
}

/// The text `sbx check` prints: the ruling as [`Ruling::text`](super::Ruling::text) words it
/// for a report, then the call.
impl fmt::Display for CheckReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}\n  call:   {}", self.text, self.canonical)
    }
}

/// Decide `call` under `policy`, `mode` and the profile's capability set.
pub fn check(
    call: &ToolCall,
    policy: Arc<Policy>,
    mode: Mode,
    profile: &CapabilitySet,
    outlook: EnforcementOutlook,
) -> CheckReport {
    let pipeline = Pipeline::builder(policy, ProfileCaps::new(profile.clone()))
        .mode(mode)
        .outlook(outlook)
        .build();
    CheckReport::new(call, mode, pipeline.decide(call))
}
