//! The words every stage of the permission stack shares: a [`Decision`] (allow, ask, deny,
//! ordered so that the strictest wins) and the permission [`Mode`] calls are decided in. They
//! sit below `policy` and `pipeline`, which both use them.
#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};

/// Ordered so that the strictest is the greatest: combine with [`Decision::strictest`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Run it.
    Allow,
    /// Run it only if someone approves.
    Ask,
    /// Refuse it.
    Deny,
}

impl Decision {
    /// The lattice join: strictest wins.
    #[must_use]
    pub fn strictest(self, other: Self) -> Self {
        self.max(other)
    }

    /// `allow`, `ask` or `deny`.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        }
    }

    /// The decision [`Decision::as_str`] names.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "allow" => Some(Decision::Allow),
            "ask" => Some(Decision::Ask),
            "deny" => Some(Decision::Deny),
            _ => None,
        }
    }
}

/// How much the built-in listeners approve without asking.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Every write, edit and non-read-only command is denied.
    Plan,
    /// Rules, then read-only fast path, then ask.
    #[default]
    Default,
    /// Edits inside the workspace are allowed.
    AcceptEdits,
    /// A Bash call that will run fully enforced is allowed (never past a deny or ask rule).
    SandboxAuto,
    /// Allow what the rules do not deny or ask; still sandboxed and under the floor.
    Bypass,
}

impl Mode {
    /// The mode a policy or `--mode` names.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "default" => Some(Mode::Default),
            "plan" => Some(Mode::Plan),
            "accept-edits" | "acceptEdits" => Some(Mode::AcceptEdits),
            "sandbox-auto" => Some(Mode::SandboxAuto),
            "bypass" | "bypassPermissions" => Some(Mode::Bypass),
            _ => None,
        }
    }

    /// The mode's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Default => "default",
            Mode::Plan => "plan",
            Mode::AcceptEdits => "accept-edits",
            Mode::SandboxAuto => "sandbox-auto",
            Mode::Bypass => "bypass",
        }
    }

    /// A project's own policy may only tighten the mode.
    pub fn project_may_set(self) -> bool {
        match self {
            Mode::Default | Mode::Plan => true,
            Mode::AcceptEdits | Mode::SandboxAuto | Mode::Bypass => false,
        }
    }
}
