//! `sbx check`: the decision and its trace, without running anything.
//!
//! Hooks, approval and the executor are not consulted: `check` reports what
//! the waterfall and the floor decide, which is what an approval would be
//! asked about.
#![forbid(unsafe_code)]

use super::call::ToolCall;
use super::decision::Decision;
use super::engine::Pipeline;
use super::exec::ProfileCaps;
use super::listener::{EnforcementOutlook, TraceStep};
use super::mode::Mode;
use crate::capability::CapabilitySet;
use crate::policy::Policy;
use serde::Serialize;
use std::sync::Arc;

/// The answer `sbx check --json` prints.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CheckReport {
    pub decision: Decision,
    pub reason: String,
    pub stage: &'static str,
    pub by: String,
    pub rule: Option<String>,
    pub source: Option<String>,
    pub tool: String,
    pub canonical: String,
    pub mode: Mode,
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
