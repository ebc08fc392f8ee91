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
                reason: req.asked.reason.clone(),
                rule: req.asked.rule.clone(),
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

/// Approval of host names a `proxy` profile does not list: an `approval_request` whose id is
/// the call's with `#net` and a number, answered like any other. `allow-for-session` is
/// remembered for that host and port for the rest of the session.
pub(super) struct NetApproval {
    pub(super) events: mpsc::UnboundedSender<Event>,
    pub(super) pending: Pending,
    pub(super) timeout: Duration,
    /// `host:port` allowed for the session.
    pub(super) allowed: Mutex<std::collections::HashSet<String>>,
    pub(super) seq: std::sync::atomic::AtomicU64,
}

/// Drops a pending approval's entry.
struct Forget<'a> {
    pending: &'a Pending,
    id: String,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        if let Ok(mut p) = self.pending.lock() {
            p.remove(&self.id);
        }
    }
}

impl NetApproval {
    /// The proxy's approver for the call `call_id`.
    pub(super) fn for_call(self: &Arc<Self>, call_id: &str) -> crate::proxy::Approver {
        let me = self.clone();
        let call = call_id.to_string();
        Arc::new(move |host: String, port: u16| {
            let me = me.clone();
            let call = call.clone();
            Box::pin(async move { me.ask(&call, &host, port).await })
        })
    }

    async fn ask(&self, call: &str, host: &str, port: u16) -> crate::proxy::HostAnswer {
        use crate::proxy::HostAnswer;
        let key = format!("{host}:{port}");
        if self.allowed.lock().is_ok_and(|a| a.contains(&key)) {
            return HostAnswer::Allow(format!("{key} allowed for the session by the client"));
        }
        let n = self.seq.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        let id = format!("{call}#net{n}");
        let scope = GrantScope::Exact(format!("Network({key})"));
        let (tx, rx) = oneshot::channel();
        if let Ok(mut p) = self.pending.lock() {
            p.insert(id.clone(), (tx, vec![scope.clone()]));
        }
        // Removed however this ends, also when the run ends first and drops this future.
        let _pending = Forget {
            pending: &self.pending,
            id: id.clone(),
        };
        let _closed = self.events.send(Event::ApprovalRequest {
            id,
            canonical: scope.to_string(),
            reason: format!("{key}: {}", crate::proxy::UNLISTED),
            rule: None,
            scopes: vec![scope.to_string()],
            timeout_ms: u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX),
        });
        match tokio::time::timeout(self.timeout, rx).await {
            Ok(Ok(ApprovalAnswer::AllowOnce)) => {
                HostAnswer::Allow(format!("{key} allowed once by the client"))
            }
            Ok(Ok(ApprovalAnswer::AllowForSession(_))) => {
                if let Ok(mut a) = self.allowed.lock() {
                    a.insert(key.clone());
                }
                HostAnswer::Allow(format!("{key} allowed for the session by the client"))
            }
            Ok(Ok(ApprovalAnswer::Deny(reason))) => HostAnswer::Deny(format!(
                "denied by the client{}",
                reason.map(|r| format!(": {r}")).unwrap_or_default()
            )),
            Ok(Err(_)) => HostAnswer::Deny("cancelled before an answer".into()),
            Err(_) => HostAnswer::Deny(format!("no answer within {} ms", self.timeout.as_millis())),
        }
    }
}
