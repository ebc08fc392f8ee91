//! `sbx check`: the decision and its trace, without running anything.
//!
//! Policy hooks, approval and the executor are not consulted: `check` reports what
//! the waterfall and the floor decide, which is what an approval would be
//! asked about.
#![forbid(unsafe_code)]

use super::call::ToolCall;
use super::decision::Decision;
use super::engine::Pipeline;
use super::exec::ProfileCaps;
use super::listener::{EnforcementOutlook, TraceStep};
use crate::capability::CapabilitySet;
use crate::decision::Mode;
use crate::policy::Policy;
use serde::Serialize;
use std::sync::Arc;

/// The answer `sbx check --json` prints.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CheckReport {
    /// The decision.
    pub decision: Decision,
    /// Why.
    pub reason: String,
    /// The stage that decided.
    pub stage: &'static str,
    /// The listener, guard, hook or floor entry that decided.
    pub by: String,
    /// The deciding rule as written.
    pub rule: Option<String>,
    /// Where that rule was written.
    pub source: Option<crate::provenance::Provenance>,
    /// The tool called.
    pub tool: String,
    /// The call in one canonical line.
    pub canonical: String,
    /// The mode the call was decided in.
    pub mode: Mode,
    /// Each step of the waterfall.
    pub trace: Vec<TraceStep>,
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
    let d = pipeline.decide(call);
    CheckReport {
        decision: d.ruling.decision,
        reason: d.ruling.reason,
        stage: d.ruling.stage.as_str(),
        by: d.ruling.by,
        rule: d.ruling.rule,
        source: d.ruling.source,
        tool: call.tool().to_string(),
        canonical: d.canonical,
        mode,
        trace: d.trace,
    }
}
