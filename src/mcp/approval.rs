//! Approval of an `ask` through MCP elicitation. On a 2025 connection the server asks the
//! client with an `elicitation/create` request while the call waits; on the current protocol,
//! which has no server-to-client requests, the call answers `input_required` with the same
//! form and the client retries it with the user's answer. A client that cannot ask gets the
//! call refused with the reason.
#![forbid(unsafe_code)]

use crate::serve::{ApprovalReply, Request};
use rmcp::RoleServer;
use rmcp::model::{
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
    InputRequest, InputRequests, InputRequiredResult, InputResponses, ProtocolVersion,
};
use rmcp::service::{ElicitationError, RequestContext};
use schemars::JsonSchema;
use serde::Deserialize;
use std::time::Duration;

/// The key of sbx's one input request in an `input_required` result.
const APPROVAL_KEY: &str = "sbx-approval";

/// The answer form shown when a call needs approval: accepting allows the call.
#[derive(Debug, Default, Deserialize, JsonSchema)]
struct ApprovalForm {
    /// Also allow calls like this one for the rest of the session.
    #[serde(default)]
    remember_for_session: bool,
}

rmcp::elicit_safe!(ApprovalForm);

fn reply(id: &str, answer: ApprovalReply, reason: Option<String>) -> Request {
    Request::Approval {
        id: id.to_string(),
        answer,
        scope: None,
        reason,
    }
}

/// The session's denial of call `id`, with the reason the model sees.
pub(super) fn deny(id: &str, why: String) -> Request {
    reply(id, ApprovalReply::Deny, Some(why))
}

fn cannot_ask(reason: &str) -> String {
    format!(
        "needs approval ({reason}), and this MCP client cannot ask the user \
         (it does not support elicitation)"
    )
}

fn message(canonical: &str, reason: &str) -> String {
    format!("sbx: allow `{canonical}`?\n{reason}")
}

/// Whether the call came on the current (stateless) protocol.
pub(super) fn is_modern(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.protocol_version()
        .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28)
}

/// Ask a 2025 client while the call waits.
pub(super) async fn ask_now(
    ctx: &RequestContext<RoleServer>,
    timeout: Duration,
    id: &str,
    canonical: &str,
    reason: &str,
) -> Request {
    let asked = ctx
        .peer
        .elicit_with_timeout::<ApprovalForm>(message(canonical, reason), Some(timeout))
        .await;
    match asked {
        Ok(Some(f)) if f.remember_for_session => reply(id, ApprovalReply::AllowForSession, None),
        Ok(_) => reply(id, ApprovalReply::AllowOnce, None),
        Err(ElicitationError::UserDeclined | ElicitationError::UserCancelled) => {
            deny(id, "the user declined".into())
        }
        Err(ElicitationError::CapabilityNotSupported) => deny(id, cannot_ask(reason)),
        Err(e) => deny(id, format!("needs approval ({reason}); asking failed: {e}")),
    }
}

/// The `input_required` answer for a current client, or why it cannot be asked.
pub(super) fn ask_later(
    ctx: &RequestContext<RoleServer>,
    id: &str,
    canonical: &str,
    reason: &str,
) -> Result<InputRequiredResult, String> {
    let can = ctx
        .client_capabilities()
        .is_some_and(|c| c.elicitation.is_some());
    if !can {
        return Err(cannot_ask(reason));
    }
    let schema = ElicitationSchema::from_type::<ApprovalForm>()
        .map_err(|e| format!("needs approval ({reason}); asking failed: {e}"))?;
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: message(canonical, reason),
        requested_schema: schema,
    };
    let mut requests = InputRequests::new();
    requests.insert(
        APPROVAL_KEY.into(),
        InputRequest::Elicitation(ElicitRequest::new(params)),
    );
    Ok(InputRequiredResult::new(
        Some(requests),
        Some(id.to_string()),
    ))
}

/// The session's approval from the client's answer to [`ask_later`].
pub(super) fn answer_of(id: &str, responses: Option<&InputResponses>) -> Request {
    let Some(v) = responses.and_then(|r| r.get(APPROVAL_KEY)) else {
        return deny(id, "the client retried without an answer".into());
    };
    let Ok(r) = serde_json::from_value::<ElicitResult>(v.clone()) else {
        return deny(id, "the client's answer could not be read".into());
    };
    // Anything but an explicit accept (decline, cancel, a future action) denies.
    match r.action {
        ElicitationAction::Accept => {
            // As on the 2025 protocol, where the SDK checks the form: an accept whose content
            // does not fill the form is no approval.
            let form = r
                .content
                .and_then(|c| serde_json::from_value::<ApprovalForm>(c).ok());
            let Some(form) = form else {
                return deny(
                    id,
                    "the client's answer does not fill the approval form".into(),
                );
            };
            let answer = if form.remember_for_session {
                ApprovalReply::AllowForSession
            } else {
                ApprovalReply::AllowOnce
            };
            reply(id, answer, None)
        }
        _ => deny(id, "the user declined".into()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn answer(v: serde_json::Value) -> Request {
        let r: InputResponses =
            serde_json::from_value(serde_json::json!({ APPROVAL_KEY: v })).unwrap();
        answer_of("c1", Some(&r))
    }

    fn approved(r: &Request) -> Option<ApprovalReply> {
        match r {
            Request::Approval { answer, .. } => Some(*answer),
            _ => None,
        }
    }

    /// Only an accept that fills the form approves; the same as the SDK's check on 2025.
    #[test]
    fn an_accept_approves_only_with_a_filled_form() {
        let once = answer(serde_json::json!({"action": "accept", "content": {}}));
        assert_eq!(approved(&once), Some(ApprovalReply::AllowOnce));
        let session = answer(
            serde_json::json!({"action": "accept", "content": {"remember_for_session": true}}),
        );
        assert_eq!(approved(&session), Some(ApprovalReply::AllowForSession));
        for bad in [
            serde_json::json!({"action": "accept"}),
            serde_json::json!({"action": "accept", "content": {"remember_for_session": "yes"}}),
            serde_json::json!({"action": "decline"}),
            serde_json::json!({"action": "cancel"}),
        ] {
            assert_eq!(
                approved(&answer(bad.clone())),
                Some(ApprovalReply::Deny),
                "{bad}"
            );
        }
    }
}
