//! Post-execute handlers: accept, replace the content, replace the value, or block.
#![forbid(unsafe_code)]

use super::call::ToolCall;
use super::result::CallResult;
use super::stage_error::StageError;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

/// What a handler does with a result.
#[derive(Clone, Debug, PartialEq)]
pub enum PostAction {
    /// Keep the result as it is.
    Accept,
    /// Replace the text shown to the model.
    ReplaceContent(String),
    /// Replace the structured value.
    ReplaceValue(serde_json::Value),
    /// Turn the result into an error result with this reason.
    Block(String),
}

/// Sees a result before the observers and may replace it or block it.
pub trait PostHandler: Send + Sync {
    /// The handler's name, in traces.
    fn name(&self) -> &str;
    /// What to do with `result`; an error blocks it.
    fn handle(&self, call: &ToolCall, result: &CallResult) -> Result<PostAction, StageError>;
}

/// Apply the handlers in order; each sees the result as changed by those before it.
/// A handler that fails or panics blocks the result.
pub fn apply_post(handlers: &[Arc<dyn PostHandler>], call: &ToolCall, result: &mut CallResult) {
    for h in handlers {
        let name = h.name().to_string();
        let action = match catch_unwind(AssertUnwindSafe(|| h.handle(call, result))) {
            Ok(Ok(a)) => a,
            Ok(Err(e)) => PostAction::Block(format!("fail closed: {e}")),
            Err(_) => PostAction::Block(format!(
                "fail closed: post-execute handler `{name}` panicked"
            )),
        };
        match action {
            PostAction::Accept => {}
            PostAction::ReplaceContent(c) => {
                result.content = c;
                result.post.push(format!("{name}: replaced content"));
            }
            PostAction::ReplaceValue(v) => {
                result.value = v;
                result.post.push(format!("{name}: replaced value"));
            }
            PostAction::Block(reason) => {
                result.is_error = true;
                result.content = format!("blocked: {reason} ({name})");
                result.value = serde_json::json!({ "error": result.content });
                result.post.push(format!("{name}: blocked"));
            }
        }
    }
}
