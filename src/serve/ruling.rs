//! A ruling as the `decision` and `result` events of `sbx serve` carry it: the one
//! conversion from a [`Ruling`] to the events' fields, whose wire form is pinned
//! (`docs/protocol.md`, `sbx serve --schema`).
#![forbid(unsafe_code)]

use super::protocol::Event;
use crate::pipeline::Ruling;

/// Who decides the calls a session answers itself, before and beside the pipeline (the stages
/// [`Stage::Input`](crate::pipeline::Stage::Input), `Jobs` and `Terminals`): their rulings
/// name no rule and no source.
pub(super) const SESSION: &str = "sbx";

/// A ruling's fields in their wire text, for every call: the pipeline's calls and those the
/// session answers itself (job and terminal tools, an input that does not fit its tool), whose
/// rulings are made by [`SESSION`].
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
