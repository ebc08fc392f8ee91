//! The pipeline: one path for every call, from the `call` event to the observers.
#![forbid(unsafe_code)]

mod approve;
mod deadline;
mod execute;

use super::access::{Access, extract};
use super::approval::{ApprovalChannel, SessionGrants};
use super::call::ToolCall;
use super::decision::{Decision, Ruling, Stage, Wording};
use super::exec::{Executor, ProfileCaps};
use super::guard::Guard;
use super::listener::{CallContext, EnforcementOutlook, Listener, TraceStep, ask_listeners};
use super::observer::{Observer, notify_call, notify_result};
use super::policy_hooks::{PolicyHook, PolicyHookVote, ask_policy_hooks};
use super::post::{PostHandler, apply_post};
use super::result::{CallResult, PolicyHookRewrite};
use super::sandbox_refusal::sandbox_refusal;
use super::tool::tool_meta;
use super::wrappers::ExecWrapper;
use crate::decision::Mode;
use crate::policy::{Policy, floor_for_writes};
use crate::provenance::Provenance;
use crate::workspace::WorkspaceContext;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The pre-approval decision on a call, without running anything.
#[derive(Clone, Debug)]
pub struct Decided {
    /// What the call touches; `None` when its input could not be understood.
    pub access: Option<Access>,
    /// The call in one canonical line.
    pub canonical: String,
    /// The decision, with who made it and why.
    pub ruling: Ruling,
    /// Each step of the waterfall.
    pub trace: Vec<TraceStep>,
}

/// A configured pipeline. Cloning is cheap (shared parts are behind `Arc`).
#[derive(Clone)]
pub struct Pipeline {
    pub(super) policy: Arc<Policy>,
    pub(super) mode: Mode,
    pub(super) profile: ProfileCaps,
    /// The policy's workspace context with the profile's writable trees: what the floor, the
    /// fast paths and access extraction judge paths against.
    pub(super) workspace: WorkspaceContext,
    pub(super) outlook: EnforcementOutlook,
    pub(super) listeners: Vec<Arc<dyn Listener>>,
    pub(super) guards: Vec<Arc<dyn Guard>>,
    pub(super) hooks: Vec<Arc<dyn PolicyHook>>,
    pub(super) approval: Option<Arc<dyn ApprovalChannel>>,
    pub(super) executor: Arc<dyn Executor>,
    pub(super) wrappers: Vec<Arc<dyn ExecWrapper>>,
    pub(super) post: Vec<Arc<dyn PostHandler>>,
    pub(super) observers: Vec<Arc<dyn Observer>>,
    pub(super) grants: Arc<SessionGrants>,
    pub(super) listener_budget: Duration,
    pub(super) guard_budget: Duration,
    pub(super) approval_timeout: Option<Duration>,
}

impl Pipeline {
    /// The permission mode calls are decided in.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The approvals given for sessions so far.
    pub fn grants(&self) -> &SessionGrants {
        &self.grants
    }

    fn context<'a>(&'a self, call: &'a ToolCall, access: &'a Access) -> CallContext<'a> {
        CallContext {
            call,
            access,
            meta: tool_meta(call.tool()),
            mode: self.mode,
            policy: &self.policy,
            workspace: &self.workspace,
            profile: self.profile.get(),
            outlook: &self.outlook,
            grants: &self.grants,
        }
    }

    /// Extraction, the waterfall and the floor: the decision before hooks, approval and guards.
    pub fn decide(&self, call: &ToolCall) -> Decided {
        let access = match extract(call, &self.workspace) {
            Ok(a) => a,
            Err(e) => {
                return Decided {
                    access: None,
                    canonical: format!("{}({})", call.tool(), call.input()),
                    ruling: Ruling::deny(Stage::Extraction, "extraction", e.to_string()),
                    trace: Vec::new(),
                };
            }
        };
        let cx = self.context(call, &access);
        let (mut ruling, mut trace) = ask_listeners(&self.listeners, &cx, self.listener_budget);
        self.under_floor_and_plan(&access, &mut ruling, &mut trace);
        let canonical = access.canonical(call);
        Decided {
            access: Some(access),
            canonical,
            ruling,
            trace,
        }
    }

    /// The floor raises the waterfall's ruling (strictest wins); the plan then denies what
    /// the kernel would refuse or undo, in every mode.
    fn under_floor_and_plan(
        &self,
        access: &Access,
        ruling: &mut Ruling,
        trace: &mut Vec<TraceStep>,
    ) {
        if let Some(hit) = floor_for_writes(access.writes(), &self.workspace) {
            trace.push(TraceStep {
                stage: "floor",
                by: hit.rule.into(),
                outcome: hit.decision.as_str(),
                detail: hit.reason.clone(),
            });
            if hit.decision > ruling.decision {
                *ruling = Ruling::new(hit.decision, Stage::Floor, hit.rule, hit.reason);
                ruling.rule = Some(hit.rule.to_string());
                ruling.source = Some(Provenance::Sbx("floor"));
            }
        }
        if let Some(refusal) = sandbox_refusal(access, self.profile.get(), self.confined(access)) {
            trace.push(TraceStep {
                stage: "plan",
                by: refusal.rule.into(),
                outcome: Decision::Deny.as_str(),
                detail: refusal.reason.clone(),
            });
            // A deny rule keeps its own report; the floor's verdict gives way to the sandbox's
            // refusal, which names the profile line.
            if ruling.decision < Decision::Deny || ruling.stage == Stage::Floor {
                *ruling = Ruling::deny(Stage::SandboxRefusal, refusal.rule, refusal.reason);
                ruling.rule = Some(refusal.rule.to_string());
                ruling.source = Some(
                    refusal
                        .origin
                        .map_or(Provenance::Sbx("plan"), Provenance::Profile),
                );
            }
        }
    }

    /// The call is a shell command that sandbox-auto or bypass runs in the sandbox with every
    /// protection in force: the kernel hides what the plan hides from it.
    fn confined(&self, access: &Access) -> bool {
        matches!(access, Access::Bash(_))
            && matches!(self.mode, Mode::SandboxAuto | Mode::Bypass)
            && self.outlook.fully_enforced
            && self.outlook.missing.is_empty()
    }

    /// Submit one call to every stage, and to the executor when they allow it. Never fails:
    /// every outcome is a [`CallResult`].
    pub async fn submit(&self, call: ToolCall) -> CallResult {
        self.submit_observed(call, |_| {}).await
    }

    /// [`Pipeline::submit`], handing `decided` the ruling before policy hooks, approval and
    /// guards as soon as it is made: what [`Pipeline::decide`] answers, without deciding twice.
    pub async fn submit_observed(
        &self,
        call: ToolCall,
        decided: impl FnOnce(&Ruling) + Send,
    ) -> CallResult {
        let start = Instant::now();
        let call = Arc::new(call);
        notify_call(&self.observers, &call);
        let Decided {
            access,
            canonical,
            mut ruling,
            mut trace,
        } = self.decide_bounded(&call).await;
        decided(&ruling);
        let mut rewrites = Vec::new();
        if let Some(access) = access
            .as_ref()
            .filter(|_| ruling.decision != Decision::Deny)
        {
            let votes = ask_policy_hooks(&self.hooks, &call).await;
            rewrites = policy_hook_trace(&votes, &mut trace);
            ruling = policy_hooks_ruling(&votes, ruling);
            if ruling.decision == Decision::Ask {
                ruling = self
                    .approve(&call, access, &canonical, ruling, &mut trace)
                    .await;
            }
            if ruling.decision == Decision::Allow
                && let Some(denial) = self.guards_bounded(&call, access, &mut trace).await
            {
                ruling = denial;
            }
        }
        let mut result = unexecuted(&call, canonical, ruling.clone(), trace, rewrites);
        if let (Decision::Allow, Some(access)) = (ruling.decision, access.as_ref()) {
            self.execute(&call, access, &ruling, &mut result).await;
        }
        apply_post(&self.post, &call, &mut result);
        result.duration = start.elapsed();
        notify_result(&self.observers, &call, &result);
        result
    }
}

/// Each policy hook's vote in the trace; the inputs hooks would rewrite, recorded (never
/// applied: the input is frozen).
fn policy_hook_trace(
    votes: &[PolicyHookVote],
    trace: &mut Vec<TraceStep>,
) -> Vec<PolicyHookRewrite> {
    let mut rewrites = Vec::new();
    for v in votes {
        trace.push(TraceStep {
            stage: "hook",
            by: v.hook.clone(),
            outcome: v.decision.map_or("none", |d| d.as_str()),
            detail: v.reason.clone(),
        });
        if let Some(u) = &v.updated_input {
            rewrites.push(PolicyHookRewrite {
                hook: v.hook.clone(),
                updated_input: u.clone(),
            });
        }
    }
    rewrites
}

/// The ruling after the policy hooks: strictest wins; an allow only settles the default ask,
/// and only when every hook that answered allowed.
fn policy_hooks_ruling(votes: &[PolicyHookVote], ruling: Ruling) -> Ruling {
    let Some(top) = votes.first().filter(|v| v.decision.is_some()) else {
        return ruling;
    };
    let d = top.decision.unwrap_or(Decision::Ask);
    let lifts_default = d == Decision::Allow
        && ruling.decision == Decision::Ask
        && ruling.stage == Stage::Default
        && votes
            .iter()
            .all(|v| v.decision.is_none_or(|x| x == Decision::Allow));
    if d <= ruling.decision && !lifts_default {
        return ruling;
    }
    let reason = if top.reason.is_empty() {
        format!("hook answered {}", d.as_str())
    } else {
        top.reason.clone()
    };
    let mut hooked = Ruling::new(d, Stage::PolicyHook, &top.hook, reason);
    hooked.rule = Some(top.hook.clone());
    hooked.source = top.source.clone();
    hooked
}

/// The result of a call before it runs: an error result with the denial text, which the
/// executor replaces when the call is allowed.
fn unexecuted(
    call: &ToolCall,
    canonical: String,
    ruling: Ruling,
    trace: Vec<TraceStep>,
    rewrites: Vec<PolicyHookRewrite>,
) -> CallResult {
    let content = ruling.text(Wording::Denial);
    CallResult {
        call_id: call.id().to_string(),
        tool: call.tool().to_string(),
        canonical,
        meta: tool_meta(call.tool()),
        is_error: true,
        value: serde_json::json!({ "error": content }),
        content,
        ruling,
        trace,
        exec: None,
        hook_rewrites: rewrites,
        post: Vec::new(),
        duration: Duration::ZERO,
    }
}
