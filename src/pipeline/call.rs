//! A tool call: frozen once built.
#![forbid(unsafe_code)]

use serde::Serialize;
use std::path::{Path, PathBuf};

/// Who is calling: the session and the agent within it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Caller {
    /// The harness session.
    pub session: String,
    /// The agent within the session.
    pub agent: String,
}

/// One call. Fields are private: once built (and logged), identity and input cannot change.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolCall {
    id: String,
    tool: String,
    input: serde_json::Value,
    caller: Caller,
    cwd: PathBuf,
}

impl ToolCall {
    /// A call of `tool` with `input`, made by `caller` in `cwd`.
    pub fn new(
        id: impl Into<String>,
        tool: impl Into<String>,
        input: serde_json::Value,
        caller: Caller,
        cwd: impl Into<PathBuf>,
    ) -> Self {
        Self {
            id: id.into(),
            tool: tool.into(),
            input,
            caller,
            cwd: cwd.into(),
        }
    }

    /// A Bash call with the given command.
    pub fn bash(
        id: impl Into<String>,
        command: &str,
        caller: Caller,
        cwd: impl Into<PathBuf>,
    ) -> Self {
        Self::new(
            id,
            "Bash",
            serde_json::json!({ "command": command }),
            caller,
            cwd,
        )
    }

    /// The call's id, unique within its session.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The tool's name.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The frozen input.
    pub fn input(&self) -> &serde_json::Value {
        &self.input
    }

    /// Who made the call.
    pub fn caller(&self) -> &Caller {
        &self.caller
    }

    /// The directory the call is made from.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }
}
