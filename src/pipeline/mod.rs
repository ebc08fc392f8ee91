//! The permission pipeline: every call passes here before the executor.
//!
//! ToolCall -> Access -> pre-execute waterfall -> floor -> hooks -> approval
//! -> guards -> execute (wrappers, executor) -> post-execute -> observers.
//! See `docs/policy.md` for the order and semantics of each stage.
#![forbid(unsafe_code)]

mod access;
mod approval;
mod audit;
mod builder;
mod call;
mod check;
mod decision;
mod engine;
mod exec;
mod fake;
mod fold;
mod guard;
mod listener;
mod listeners;
mod observer;
mod policy_hooks;
mod post;
mod result;
mod sandbox_refusal;
mod stage_error;
mod tool;
mod wrappers;

pub use crate::decision::Mode;
pub use access::{Access, AccessError, BashAccess, extract, resolve_path, url_host};
pub use approval::{
    ApprovalAnswer, ApprovalChannel, ApprovalRequest, BoxFuture, CallbackApproval, GrantScope,
    SessionGrants, grant_key, offered_scopes,
};
pub use audit::{AUDIT_VERSION, AuditLog, AuditRecord};
pub use builder::PipelineBuilder;
pub use call::{Caller, ToolCall};
pub use check::{CheckReport, check};
pub use decision::{Decision, Ruling, Stage, Wording};
pub use engine::{Decided, Pipeline};
pub use exec::{
    EnforcedCaps, ExecError, ExecOutcome, ExecRequest, Executor, NoExecutor, ProfileCaps,
};
pub use fake::FakeExecutor;
pub use guard::{Guard, Vote, poll_guards};
pub use listener::{
    CallContext, EnforcementOutlook, Listener, Next, StageError, TraceStep, ask_listeners,
};
pub use listeners::{
    AskFallback, ManagedDeny, ModeFastPath, PlanModeGate, ReadOnlyFastPath, RuleSet,
    SessionGrantListener, default_listeners,
};
pub use observer::Observer;
pub use policy_hooks::{
    CommandPolicyHook, PolicyHook, PolicyHookAnswer, PolicyHookVote, ask_policy_hooks,
    parse_policy_hook_output, policy_hook_input,
};
pub use post::{PostAction, PostHandler, apply_post};
pub use result::{CallResult, ExecSummary, PolicyHookRewrite};
pub use sandbox_refusal::{
    SandboxRefusal, ordinary_device, sandbox_refusal, sandbox_refused_link, sandbox_refused_read,
    sandbox_refused_tree, sandbox_refused_write,
};
pub use tool::{Category, ToolMeta, tool_meta};
pub use wrappers::{ExecNext, ExecWrapper, Metrics, MetricsWrapper, Retry, Timeout};
