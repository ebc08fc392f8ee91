//! Approval over the protocol: an `approval_request` event, answered by an `approval`
//! request or denied when the time runs out.
#![forbid(unsafe_code)]

use super::protocol::Event;
use crate::pipeline::{
    ApprovalAnswer, ApprovalChannel, ApprovalRequest, BoxFuture, GrantScope, StageError,
};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// Approvals waiting for an answer, by call id, with the scopes offered.
pub(super) type Pending =
    Arc<Mutex<HashMap<String, (oneshot::Sender<ApprovalAnswer>, Vec<GrantScope>)>>>;

/// Approval over the protocol: an `approval_request` event, answered by an `approval` request.
pub(super) struct ProtocolApproval {
    pub(super) events: mpsc::UnboundedSender<Event>,
    pub(super) pending: Pending,
    pub(super) timeout: Duration,
}

impl ApprovalChannel for ProtocolApproval {
    fn ask<'a>(
        &'a self,
        req: &'a ApprovalRequest,
    ) -> BoxFuture<'a, Result<ApprovalAnswer, StageError>> {
        Box::pin(async move {
            let id = req.call.id().to_string();
            let (tx, rx) = oneshot::channel();
            if let Ok(mut p) = self.pending.lock() {
                p.insert(id.clone(), (tx, req.scopes.clone()));
            }
            let _closed = self.events.send(Event::ApprovalRequest {
                id: id.clone(),
                canonical: req.canonical.clone(),
                reason: req.reason.clone(),
                rule: req.rule.clone(),
                scopes: req.scopes.iter().map(ToString::to_string).collect(),
                timeout_ms: u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX),
            });
            let answer = match tokio::time::timeout(self.timeout, rx).await {
                Ok(Ok(a)) => a,
                Ok(Err(_)) => ApprovalAnswer::Deny(Some("cancelled before an answer".into())),
                Err(_) => ApprovalAnswer::Deny(Some(format!(
                    "no answer within {} ms",
                    self.timeout.as_millis()
                ))),
            };
            if let Ok(mut p) = self.pending.lock() {
                p.remove(&id);
            }
            Ok(answer)
        })
    }
}

/// The offered scope a client named (by its text), or the first offered one. A scope that
/// was not offered is passed on as given, and the pipeline denies it.
pub(super) fn scope_of(scope: Option<String>, offered: &[GrantScope]) -> GrantScope {
    match scope {
        None => offered
            .first()
            .cloned()
            .unwrap_or(GrantScope::Exact(String::new())),
        Some(s) => offered
            .iter()
            .find(|o| o.to_string() == s)
            .cloned()
            .unwrap_or(GrantScope::Exact(s)),
    }
}
