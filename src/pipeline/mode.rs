//! Permission modes.
#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};

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
