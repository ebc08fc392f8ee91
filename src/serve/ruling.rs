//! A ruling as the `decision` and `result` events of `sbx serve` carry it: the one
//! conversion from a [`Ruling`] to the events' fields, whose wire form is pinned
//! (`docs/protocol.md`, `sbx serve --schema`).
#![forbid(unsafe_code)]

use super::protocol::Event;
use crate::decision::Decision;
use crate::pipeline::Ruling;

/// A ruling's fields in their wire text. The pipeline's calls get them from their [`Ruling`];
/// the calls sbx answers itself (job and terminal tools, an input that does not fit its tool)
/// from [`RulingFields::own`], since their stages (`jobs`, `terminals`, `input`) are not
/// pipeline stages.
pub(super) struct RulingFields {
    decision: String,
    stage: String,
    by: String,
    reason: String,
    rule: Option<String>,
    source: Option<String>,
}

impl From<&Ruling> for RulingFields {
    fn from(r: &Ruling) -> Self {
        Self {
            decision: r.decision.as_str().into(),
            stage: r.stage.as_str().into(),
            by: r.by.clone(),
            reason: r.reason.clone(),
            rule: r.rule.clone(),
            source: r.source.as_ref().map(ToString::to_string),
        }
    }
}

impl RulingFields {
    /// A call sbx answers itself: `decision` by `sbx`, with no rule; `(stage, reason)` say
    /// which part of sbx and why.
    pub(super) fn own(decision: Decision, (stage, reason): (&str, &str)) -> Self {
        Self {
            decision: decision.as_str().into(),
            stage: stage.into(),
            by: "sbx".into(),
            reason: reason.into(),
            rule: None,
            source: None,
        }
    }

    /// The fields a `result` event carries, in its order: decision, stage, reason, rule and
    /// source (who decided is the `decision` event's).
    pub(super) fn for_result(self) -> (String, String, String, Option<String>, Option<String>) {
        (
            self.decision,
            self.stage,
            self.reason,
            self.rule,
            self.source,
        )
    }

    /// The `decision` event of call `id`: the ruling before approval.
    pub(super) fn decision_event(self, id: String) -> Event {
        Event::Decision {
            id,
            decision: self.decision,
            stage: self.stage,
            by: self.by,
            reason: self.reason,
            rule: self.rule,
            source: self.source,
        }
    }
}
