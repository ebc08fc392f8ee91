//! Policy hooks as configured in a policy (`[[policy.hooks]]`).
#![forbid(unsafe_code)]

use super::rule::RuleSource;
use serde::Serialize;

/// Default time a policy hook may take before it counts as failed (and denies).
pub const DEFAULT_POLICY_HOOK_TIMEOUT_MS: u64 = 5_000;

/// A program that receives the call as JSON on stdin and answers allow / ask / deny.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PolicyHookSpec {
    /// argv; the first word is the program.
    pub command: Vec<String>,
    /// How long it may take before the call is denied.
    pub timeout_ms: u64,
    /// Where it was configured.
    pub source: RuleSource,
}
