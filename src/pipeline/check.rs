//! `sbx check`: the decision and its trace, without running anything.
//!
//! Policy hooks, approval and the executor are not consulted: `check` reports what
//! the waterfall and the floor decide, which is what an approval would be
//! asked about.
#![forbid(unsafe_code)]

use super::call::ToolCall;
use super::decision::Decision;
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
}

impl CheckReport {
    /// The view of the decision on `call`, decided in `mode`.
    pub fn new(call: &ToolCall, mode: Mode, decided: Decided) -> Self {
        let r = decided.ruling;
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
        }
    }
}

/// The text `sbx check` prints: the decision and who made it, then one field a line.
impl fmt::Display for CheckReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (decision, by, stage) = (self.decision.as_str(), &self.by, self.stage);
        writeln!(f, "{decision} by {by} ({stage})")?;
        writeln!(f, "  reason: {}", self.reason)?;
        if let Some(r) = &self.rule {
            writeln!(f, "  rule:   {r}")?;
        }
        if let Some(s) = &self.source {
            writeln!(f, "  source: {s}")?;
        }
        write!(f, "  call:   {}", self.canonical)
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
