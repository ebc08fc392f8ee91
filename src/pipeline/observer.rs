//! Observers see every call and every result, denials included; they cannot change them.
#![forbid(unsafe_code)]

use super::call::ToolCall;
use super::result::CallResult;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

/// Sees every call and every result, denials included (audit log, metrics).
pub trait Observer: Send + Sync {
    /// The call, before anything runs.
    fn on_call(&self, call: &ToolCall);
    /// The final result.
    fn on_result(&self, call: &ToolCall, result: &CallResult);
}

/// Notify every observer; a panicking observer is ignored (it cannot change the result).
pub fn notify_call(observers: &[Arc<dyn Observer>], call: &ToolCall) {
    for o in observers {
        let _ignored = catch_unwind(AssertUnwindSafe(|| o.on_call(call)));
    }
}

pub fn notify_result(observers: &[Arc<dyn Observer>], call: &ToolCall, result: &CallResult) {
    for o in observers {
        let _ignored = catch_unwind(AssertUnwindSafe(|| o.on_result(call, result)));
    }
}
