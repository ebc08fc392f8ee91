//! The approval stage: ask the channel, honour only the scopes offered,
//! and fail closed on errors, panics and timeouts.
#![forbid(unsafe_code)]

use super::Pipeline;
use crate::pipeline::access::Access;
use crate::pipeline::approval::{ApprovalAnswer, ApprovalRequest, offered_scopes};
use crate::pipeline::call::ToolCall;
use crate::pipeline::decision::{Ruling, Stage};
use crate::pipeline::listener::TraceStep;

impl Pipeline {
    pub(super) async fn approve(
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
}
