//! The approval stage: ask the channel, honour only the scopes offered,
//! and fail closed on errors, panics and timeouts.
#![forbid(unsafe_code)]

use super::Pipeline;
use crate::pipeline::access::Access;
use crate::pipeline::approval::{ApprovalAnswer, ApprovalRequest, GrantScope, offered_scopes};
use crate::pipeline::call::ToolCall;
use crate::pipeline::decision::{Decision, Ruling, Stage};
use crate::pipeline::listener::TraceStep;
use crate::pipeline::stage_error::StageError;

/// The channel's answer: `None` when it timed out, `Some(Err)` when it panicked.
type Answer = Option<std::thread::Result<Result<ApprovalAnswer, StageError>>>;

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
            asked,
            scopes: scopes.clone(),
        };
        let fut = std::panic::AssertUnwindSafe(channel.ask(&req));
        let answer = match self.approval_timeout {
            Some(t) => tokio::time::timeout(t, futures_util::FutureExt::catch_unwind(fut))
                .await
                .ok(),
            None => Some(futures_util::FutureExt::catch_unwind(fut).await),
        };
        let ruling = self.answered(call, answer, &scopes);
        trace.push(TraceStep {
            stage: "approval",
            by: "approval".into(),
            outcome: if ruling.decision == Decision::Allow {
                "allow"
            } else {
                "deny"
            },
            detail: ruling.reason.clone(),
        });
        ruling
    }

    /// The ruling an answer makes: an allow for the session only in a scope that was
    /// offered (and remembered then); a refusal, an error, a panic or a timeout denies.
    fn answered(&self, call: &ToolCall, answer: Answer, scopes: &[GrantScope]) -> Ruling {
        let deny = |why: String| Ruling::deny(Stage::Approval, "approval", why);
        match answer {
            Some(Ok(Ok(ApprovalAnswer::AllowOnce))) => {
                Ruling::allow(Stage::Approval, "approval", "approved once")
            }
            Some(Ok(Ok(ApprovalAnswer::AllowForSession(scope)))) if scopes.contains(&scope) => {
                self.grants.grant(&call.caller().session, scope.clone());
                Ruling::allow(
                    Stage::Approval,
                    "approval",
                    format!("approved for this session: {scope}"),
                )
            }
            Some(Ok(Ok(ApprovalAnswer::AllowForSession(scope)))) => {
                deny(format!("fail closed: scope `{scope}` was not offered"))
            }
            Some(Ok(Ok(ApprovalAnswer::Deny(reason)))) => {
                deny(reason.unwrap_or_else(|| "refused by the user".into()))
            }
            Some(Ok(Err(e))) => deny(format!("fail closed: {e}")),
            Some(Err(_)) => deny("fail closed: approval channel panicked".into()),
            None => deny("fail closed: approval timed out".into()),
        }
    }
}
