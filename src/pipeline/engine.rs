//! The pipeline: one path for every call, from the `call` event to the observers.
#![forbid(unsafe_code)]

use super::access::{Access, AccessEnv, extract};
use super::approval::{
    ApprovalAnswer, ApprovalChannel, ApprovalRequest, SessionGrants, offered_scopes,
};
use super::call::ToolCall;
use super::decision::{Decision, Ruling, Stage};
use super::exec::{EnforcedCaps, ExecError, ExecRequest, Executor, ProfileCaps};
use super::guard::{Guard, run_guards};
use super::hooks::{Hook, run_hooks};
use super::listener::{CallContext, EnforcementOutlook, Listener, TraceStep, run_waterfall};
use super::mode::Mode;
use super::observer::{Observer, notify_call, notify_result};
use super::post::{PostHandler, run_post};
use super::result::{CallResult, ExecSummary, HookRewrite};
use super::tool::tool_meta;
use super::wrappers::{ExecNext, ExecWrapper};
use crate::policy::{FloorEnv, Policy, floor_for_writes};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The pre-approval decision on a call, without running anything.
#[derive(Clone, Debug)]
pub struct Decided {
    pub access: Option<Access>,
    pub canonical: String,
    pub ruling: Ruling,
    pub trace: Vec<TraceStep>,
}

/// A configured pipeline. Cloning is cheap (shared parts are behind `Arc`).
#[derive(Clone)]
pub struct Pipeline {
    pub(super) policy: Arc<Policy>,
    pub(super) mode: Mode,
    pub(super) profile: ProfileCaps,
    pub(super) floor: FloorEnv,
    pub(super) outlook: EnforcementOutlook,
    pub(super) listeners: Vec<Arc<dyn Listener>>,
    pub(super) guards: Vec<Arc<dyn Guard>>,
    pub(super) hooks: Vec<Arc<dyn Hook>>,
    pub(super) approval: Option<Arc<dyn ApprovalChannel>>,
    pub(super) executor: Arc<dyn Executor>,
    pub(super) wrappers: Vec<Arc<dyn ExecWrapper>>,
    pub(super) post: Vec<Arc<dyn PostHandler>>,
    pub(super) observers: Vec<Arc<dyn Observer>>,
    pub(super) grants: Arc<SessionGrants>,
    pub(super) listener_budget: Duration,
    pub(super) guard_budget: Duration,
    pub(super) approval_timeout: Option<Duration>,
    /// Derived from `floor` when the pipeline is built; read on every call.
    pub(super) access_env: AccessEnv,
}

impl Pipeline {
    pub fn mode(&self) -> Mode {
        self.mode
    }

    pub fn grants(&self) -> &SessionGrants {
        &self.grants
    }

    fn access_env(&self) -> &AccessEnv {
        &self.access_env
    }

    fn context<'a>(&'a self, call: &'a ToolCall, access: &'a Access) -> CallContext<'a> {
        CallContext {
            call,
            access,
            meta: tool_meta(call.tool()),
            mode: self.mode,
            policy: &self.policy,
            floor: &self.floor,
            profile: self.profile.get(),
            outlook: &self.outlook,
            grants: &self.grants,
        }
    }

    /// Extraction, the waterfall and the floor: the decision before hooks, approval and guards.
    pub fn decide(&self, call: &ToolCall) -> Decided {
        let access = match extract(call, self.access_env()) {
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
        let (mut ruling, mut trace) = run_waterfall(&self.listeners, &cx, self.listener_budget);
        if let Some(hit) = floor_for_writes(access.writes(), &self.floor) {
            trace.push(TraceStep {
                stage: "floor",
                by: hit.rule.into(),
                outcome: hit.decision.as_str(),
                detail: hit.reason.clone(),
            });
            if hit.decision > ruling.decision {
                ruling = Ruling::new(hit.decision, Stage::Floor, hit.rule, hit.reason);
                ruling.rule = Some(hit.rule.to_string());
                ruling.source = Some("floor".into());
            }
        }
        let canonical = access.canonical(call);
        Decided {
            access: Some(access),
            canonical,
            ruling,
            trace,
        }
    }

    /// Run one call through every stage. Never fails: every outcome is a [`CallResult`].
    /// Run `work` on its own thread and wait at most `budget` for it. A stage that hangs
    /// cannot be interrupted, but it can no longer hold the call: it is denied (fail closed),
    /// and the thread is left to finish on its own.
    async fn bounded<T: Send + 'static>(
        budget: Duration,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Option<T> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let spawned = std::thread::Builder::new()
            .name("sbx-stage".into())
            .spawn(move || {
                let _ = tx.send(work());
            });
        if spawned.is_err() {
            return None;
        }
        match tokio::time::timeout(budget, rx).await {
            Ok(Ok(v)) => Some(v),
            Ok(Err(_)) | Err(_) => None,
        }
    }

    /// [`Pipeline::decide`] with a deadline: every listener's budget, plus one for the rest.
    async fn decide_bounded(&self, call: &Arc<ToolCall>) -> Decided {
        if self.listeners.is_empty() {
            return self.decide(call);
        }
        let budget = self
            .listener_budget
            .saturating_mul(u32::try_from(self.listeners.len() + 1).unwrap_or(u32::MAX));
        let (p, c) = (self.clone(), Arc::clone(call));
        match Self::bounded(budget, move || p.decide(&c)).await {
            Some(d) => d,
            None => Decided {
                access: None,
                canonical: format!("{}({})", call.tool(), call.input()),
                ruling: Ruling::deny(
                    Stage::Listener,
                    "timeout",
                    format!("the pre-execute stage did not answer within {budget:?}"),
                ),
                trace: Vec::new(),
            },
        }
    }

    /// The guards with a deadline; a guard that hangs denies.
    async fn guards_bounded(
        &self,
        call: &Arc<ToolCall>,
        access: &Access,
        trace: &mut Vec<TraceStep>,
    ) -> Option<Ruling> {
        if self.guards.is_empty() {
            return None;
        }
        let budget = self
            .guard_budget
            .saturating_mul(u32::try_from(self.guards.len() + 1).unwrap_or(u32::MAX));
        let (p, c, a) = (self.clone(), Arc::clone(call), access.clone());
        let out = Self::bounded(budget, move || {
            let cx = p.context(&c, &a);
            let mut t = Vec::new();
            let r = run_guards(&p.guards, &cx, p.guard_budget, &mut t);
            (r, t)
        })
        .await;
        match out {
            Some((r, t)) => {
                trace.extend(t);
                r
            }
            None => Some(Ruling::deny(
                Stage::Guard,
                "timeout",
                format!("the guards did not answer within {budget:?}"),
            )),
        }
    }

    pub async fn run(&self, call: ToolCall) -> CallResult {
        let start = Instant::now();
        let call = Arc::new(call);
        notify_call(&self.observers, &call);
        let Decided {
            access,
            canonical,
            mut ruling,
            mut trace,
        } = self.decide_bounded(&call).await;
        let mut rewrites = Vec::new();

        if let Some(access) = access
            .as_ref()
            .filter(|_| ruling.decision != Decision::Deny)
        {
            // Hooks: strictest wins; an allow only settles the default ask.
            let votes = run_hooks(&self.hooks, &call).await;
            for v in &votes {
                trace.push(TraceStep {
                    stage: "hook",
                    by: v.hook.clone(),
                    outcome: v.decision.map_or("none", |d| d.as_str()),
                    detail: v.reason.clone(),
                });
                if let Some(u) = &v.updated_input {
                    rewrites.push(HookRewrite {
                        hook: v.hook.clone(),
                        updated_input: u.clone(),
                    });
                }
            }
            if let Some(top) = votes.first().filter(|v| v.decision.is_some()) {
                let d = top.decision.unwrap_or(Decision::Ask);
                let lifts_default = d == Decision::Allow
                    && ruling.decision == Decision::Ask
                    && ruling.stage == Stage::Default
                    && votes
                        .iter()
                        .all(|v| v.decision.is_none_or(|x| x == Decision::Allow));
                if d > ruling.decision || lifts_default {
                    let reason = if top.reason.is_empty() {
                        format!("hook answered {}", d.as_str())
                    } else {
                        top.reason.clone()
                    };
                    ruling = Ruling::new(d, Stage::Hook, &top.hook, reason);
                    ruling.rule = Some(top.hook.clone());
                    ruling.source = top.source.clone();
                }
            }

            if ruling.decision == Decision::Ask {
                ruling = self
                    .approve(&call, access, &canonical, ruling, &mut trace)
                    .await;
            }
            if ruling.decision == Decision::Allow {
                if let Some(denial) = self.guards_bounded(&call, access, &mut trace).await {
                    ruling = denial;
                }
            }
        }

        let meta = tool_meta(call.tool());
        let mut result = CallResult {
            call_id: call.id().to_string(),
            tool: call.tool().to_string(),
            canonical,
            meta,
            is_error: true,
            content: String::new(),
            value: serde_json::Value::Null,
            ruling: ruling.clone(),
            trace,
            exec: None,
            hook_rewrites: rewrites,
            post: Vec::new(),
            duration: Duration::ZERO,
        };
        match (ruling.decision, access.as_ref()) {
            (Decision::Allow, Some(access)) => {
                self.execute(&call, access, &ruling, &mut result).await
            }
            (Decision::Allow | Decision::Ask | Decision::Deny, _) => {
                result.content = ruling.denial_text();
                result.value = serde_json::json!({ "error": result.content });
            }
        }
        run_post(&self.post, &call, &mut result);
        result.duration = start.elapsed();
        notify_result(&self.observers, &call, &result);
        result
    }

    async fn approve(
        &self,
        call: &ToolCall,
        access: &Access,
        canonical: &str,
        asked: Ruling,
        trace: &mut Vec<TraceStep>,
    ) -> Ruling {
        let Some(channel) = &self.approval else {
            let mut r = Ruling::deny(
                Stage::Approval,
                "approval",
                format!("approval needed but no approval channel: {}", asked.reason),
            );
            r.rule = asked.rule.clone();
            r.source = asked.source.clone();
            return r;
        };
        let scopes = offered_scopes(call, access);
        let req = ApprovalRequest {
            call: call.clone(),
            canonical: canonical.to_string(),
            reason: asked.reason.clone(),
            rule: asked.rule.clone(),
            scopes: scopes.clone(),
        };
        let fut = std::panic::AssertUnwindSafe(channel.ask(&req));
        let answer = match self.approval_timeout {
            Some(t) => tokio::time::timeout(t, futures_util::FutureExt::catch_unwind(fut))
                .await
                .ok(),
            None => Some(futures_util::FutureExt::catch_unwind(fut).await),
        };
        let (ruling, outcome) = match answer {
            Some(Ok(Ok(ApprovalAnswer::AllowOnce))) => (
                Ruling::allow(Stage::Approval, "approval", "approved once"),
                "allow",
            ),
            Some(Ok(Ok(ApprovalAnswer::AllowForSession(scope)))) if scopes.contains(&scope) => {
                self.grants.grant(&call.caller().session, scope.clone());
                (
                    Ruling::allow(
                        Stage::Approval,
                        "approval",
                        format!("approved for this session: {scope}"),
                    ),
                    "allow",
                )
            }
            Some(Ok(Ok(ApprovalAnswer::AllowForSession(scope)))) => (
                Ruling::deny(
                    Stage::Approval,
                    "approval",
                    format!("fail closed: scope `{scope}` was not offered"),
                ),
                "deny",
            ),
            Some(Ok(Ok(ApprovalAnswer::Deny(reason)))) => (
                Ruling::deny(
                    Stage::Approval,
                    "approval",
                    reason.unwrap_or_else(|| "refused by the user".into()),
                ),
                "deny",
            ),
            Some(Ok(Err(e))) => (
                Ruling::deny(Stage::Approval, "approval", format!("fail closed: {e}")),
                "deny",
            ),
            Some(Err(_)) => (
                Ruling::deny(
                    Stage::Approval,
                    "approval",
                    "fail closed: approval channel panicked",
                ),
                "deny",
            ),
            None => (
                Ruling::deny(
                    Stage::Approval,
                    "approval",
                    "fail closed: approval timed out",
                ),
                "deny",
            ),
        };
        trace.push(TraceStep {
            stage: "approval",
            by: "approval".into(),
            outcome,
            detail: ruling.reason.clone(),
        });
        ruling
    }

    async fn execute(
        &self,
        call: &ToolCall,
        access: &Access,
        ruling: &Ruling,
        result: &mut CallResult,
    ) {
        let mut caps = EnforcedCaps::from_profile(&self.profile);
        if let Some(n) = &ruling.narrow {
            caps = caps.narrow(n);
        }
        let (argv, cwd, timeout, background) = match access {
            Access::Bash(b) => (
                vec!["bash".to_string(), "-c".to_string(), b.command.clone()],
                b.workdir.clone(),
                b.timeout_ms.map(Duration::from_millis),
                b.background,
            ),
            Access::Read { .. }
            | Access::Write { .. }
            | Access::WebFetch { .. }
            | Access::WebSearch { .. }
            | Access::Mcp { .. }
            | Access::Unknown => (Vec::new(), call.cwd().to_path_buf(), None, false),
        };
        let req = ExecRequest {
            call_id: call.id().to_string(),
            tool: call.tool().to_string(),
            input: call.input().clone(),
            argv,
            cwd,
            env: BTreeMap::new(),
            timeout,
            background,
        };
        let fut = ExecNext::new(&self.wrappers, self.executor.as_ref(), &req, &caps).run();
        let out = futures_util::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(fut))
            .await
            .unwrap_or_else(|_| {
                Err(ExecError::Failed {
                    message: "executor panicked".into(),
                })
            });
        match out {
            Ok(o) => {
                let failed = o.job.is_none() && o.exit_status != Some(0);
                result.is_error = failed;
                result.content = if o.stderr.is_empty() {
                    o.stdout.clone()
                } else {
                    format!("{}{}", o.stdout, o.stderr)
                };
                result.value = serde_json::json!({
                    "exit_status": o.exit_status,
                    "signal": o.signal,
                    "stdout": o.stdout,
                    "stderr": o.stderr,
                    "truncated": o.truncated,
                });
                if let (Some(job), Some(v)) = (&o.job, result.value.as_object_mut()) {
                    v.insert("job_id".into(), job.clone().into());
                }
                result.exec = Some(ExecSummary {
                    exit_status: o.exit_status,
                    signal: o.signal,
                    duration_ms: u64::try_from(o.duration.as_millis()).unwrap_or(u64::MAX),
                    truncated: o.truncated,
                    enforcement: o.enforcement,
                    job: o.job,
                });
            }
            Err(e) => {
                result.is_error = true;
                result.content = format!("error: {e}");
                result.value = serde_json::json!({ "error": result.content });
            }
        }
    }
}
