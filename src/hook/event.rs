//! The events harnesses send to a hook, and their translation into pipeline calls.
//!
//! Claude Code and Codex name tools as the pipeline does (`Bash`, `Read`, `Edit`,
//! `mcp__server__tool`); Gemini CLI uses its own names, mapped here one to one.
#![forbid(unsafe_code)]

use crate::pipeline::{Caller, ToolCall};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::path::PathBuf;

/// The largest event `sbx hook` reads; a larger one is denied without being parsed.
pub const MAX_EVENT_BYTES: u64 = 64 * 1024 * 1024;

/// Which harness is speaking.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Harness {
    /// Claude Code.
    ClaudeCode,
    /// Codex CLI.
    Codex,
    /// Gemini CLI.
    Gemini,
}

impl Harness {
    /// The harness's name on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Harness::ClaudeCode => "claude-code",
            Harness::Codex => "codex",
            Harness::Gemini => "gemini",
        }
    }

    /// The harness's name for its shell tool.
    pub fn shell_tool(self) -> &'static str {
        match self {
            Harness::ClaudeCode | Harness::Codex => "Bash",
            Harness::Gemini => "run_shell_command",
        }
    }
}

/// Why an event could not be understood. Each becomes a denial naming the cause.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EventError {
    #[error("no event on stdin")]
    /// Standard input was empty.
    Empty,
    #[error("event larger than {limit} bytes")]
    /// The event is larger than the limit.
    TooLarge {
        /// The limit in bytes.
        limit: u64,
    },
    #[error("cannot read the event: {0}")]
    /// Standard input could not be read.
    Read(#[from] std::io::Error),
    #[error("malformed event JSON: {0}")]
    /// The event is not JSON of the expected shape.
    Json(#[from] serde_json::Error),
    #[error("event has no `{field}`")]
    /// A field the call needs is missing.
    Missing {
        /// The field.
        field: &'static str,
    },
    #[error("`tool_input` of {tool} is not an object")]
    /// The tool's input is not a JSON object.
    InputNotObject {
        /// The tool.
        tool: String,
    },
}

/// One hook event as the harness sends it. Unknown fields are accepted and ignored.
#[derive(Clone, Debug, Deserialize)]
pub struct HookEvent {
    #[serde(default)]
    /// The harness's session.
    pub session_id: String,
    #[serde(default)]
    /// The session's transcript file.
    pub transcript_path: Option<String>,
    #[serde(default)]
    /// The directory the agent works in.
    pub cwd: Option<PathBuf>,
    #[serde(default)]
    /// The harness's own permission mode.
    pub permission_mode: Option<String>,
    #[serde(default)]
    /// `PreToolUse`, `BeforeTool`, ...
    pub hook_event_name: Option<String>,
    #[serde(default)]
    /// The tool called.
    pub tool_name: Option<String>,
    #[serde(default)]
    /// Its input.
    pub tool_input: Option<Value>,
    #[serde(default)]
    /// The call's id.
    pub tool_use_id: Option<String>,
    /// PostToolUse (Claude Code, Codex) or AfterTool (Gemini CLI).
    #[serde(default, alias = "tool_output")]
    pub tool_response: Option<Value>,
    #[serde(default)]
    /// The agent within the session.
    pub agent_id: Option<String>,
}

impl HookEvent {
    /// Read at most [`MAX_EVENT_BYTES`] and parse. Never reads past the limit.
    pub fn read(mut input: impl std::io::Read) -> Result<Self, EventError> {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(
            &mut std::io::Read::take(&mut input, MAX_EVENT_BYTES + 1),
            &mut buf,
        )?;
        if buf.len() as u64 > MAX_EVENT_BYTES {
            return Err(EventError::TooLarge {
                limit: MAX_EVENT_BYTES,
            });
        }
        Self::parse(&buf)
    }

    /// Parse an event already read.
    pub fn parse(bytes: &[u8]) -> Result<Self, EventError> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(EventError::Empty);
        }
        Ok(serde_json::from_slice(bytes)?)
    }

    /// The tool's name; an error when the event has none.
    pub fn tool_name(&self) -> Result<&str, EventError> {
        self.tool_name
            .as_deref()
            .filter(|t| !t.is_empty())
            .ok_or(EventError::Missing { field: "tool_name" })
    }

    /// The tool's input; an error when it is missing or not an object.
    pub fn tool_input(&self) -> Result<&Map<String, Value>, EventError> {
        let input = self.tool_input.as_ref().ok_or(EventError::Missing {
            field: "tool_input",
        })?;
        input.as_object().ok_or_else(|| EventError::InputNotObject {
            tool: self.tool_name.clone().unwrap_or_default(),
        })
    }

    /// The pipeline calls this event stands for: one, or one per file of a Codex patch.
    pub fn calls(&self, harness: Harness, cwd: PathBuf) -> Result<Vec<ToolCall>, EventError> {
        let tool = self.tool_name()?;
        let input = self.tool_input()?;
        let id = self.tool_use_id.clone().unwrap_or_default();
        let caller = Caller {
            session: self.session_id.clone(),
            agent: self
                .agent_id
                .clone()
                .unwrap_or_else(|| harness.as_str().to_string()),
        };
        let mk = |tool: &str, input: Value| ToolCall::new(&id, tool, input, caller.clone(), &cwd);
        let calls = match (harness, tool) {
            (Harness::Gemini, _) => vec![gemini_call(tool, input, &mk)],
            (Harness::Codex, "apply_patch") => {
                let patch = input
                    .get("command")
                    .or_else(|| input.get("patch"))
                    .or_else(|| input.get("input"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let files = patch_files(patch);
                if files.is_empty() {
                    vec![mk(tool, Value::Object(input.clone()))]
                } else {
                    files
                        .iter()
                        .map(|f| mk("Edit", json!({ "file_path": f })))
                        .collect()
                }
            }
            (Harness::ClaudeCode | Harness::Codex, _) => {
                vec![mk(tool, Value::Object(input.clone()))]
            }
        };
        Ok(calls)
    }
}

/// A Gemini CLI tool call in the pipeline's vocabulary. Unknown tools keep their name.
fn gemini_call(
    tool: &str,
    input: &Map<String, Value>,
    mk: &dyn Fn(&str, Value) -> ToolCall,
) -> ToolCall {
    let s = |k: &str| input.get(k).cloned().unwrap_or(Value::Null);
    let path = || {
        input
            .get("file_path")
            .or_else(|| input.get("absolute_path"))
            .or_else(|| input.get("path"))
            .cloned()
            .unwrap_or(Value::Null)
    };
    match tool {
        "run_shell_command" => {
            let mut m = Map::new();
            m.insert("command".into(), s("command"));
            // Gemini CLI names the directory `dir_path`; its earlier versions `directory`.
            if let Some(d) = input.get("dir_path").or_else(|| input.get("directory")) {
                m.insert("workdir".into(), d.clone());
            }
            mk("Bash", Value::Object(m))
        }
        "read_file" | "read_many_files" => mk("Read", json!({ "file_path": path() })),
        "write_file" => mk(
            "Write",
            json!({ "file_path": path(), "content": s("content") }),
        ),
        "replace" => mk(
            "Edit",
            json!({ "file_path": path(), "old_string": s("old_string"), "new_string": s("new_string") }),
        ),
        "glob" => mk(
            "Glob",
            json!({ "pattern": s("pattern"), "path": s("path") }),
        ),
        "search_file_content" | "grep_search" => mk(
            "Grep",
            json!({ "pattern": s("pattern"), "path": s("path") }),
        ),
        "list_directory" => mk("LS", json!({ "path": path() })),
        "web_fetch" => {
            let prompt = input.get("prompt").and_then(Value::as_str).unwrap_or("");
            let url = prompt
                .split_whitespace()
                .find(|w| w.starts_with("http://") || w.starts_with("https://"))
                .unwrap_or("");
            mk("WebFetch", json!({ "url": url, "prompt": prompt }))
        }
        "google_web_search" => mk("WebSearch", json!({ "query": s("query") })),
        _ => mk(tool, Value::Object(input.clone())),
    }
}

/// The files a Codex `apply_patch` envelope adds, updates, deletes or moves to.
pub fn patch_files(patch: &str) -> Vec<String> {
    const MARKS: [&str; 4] = [
        "*** Add File: ",
        "*** Update File: ",
        "*** Delete File: ",
        "*** Move to: ",
    ];
    patch
        .lines()
        .filter_map(|l| MARKS.iter().find_map(|m| l.strip_prefix(m)))
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_fields_are_ignored_and_empty_is_an_error() {
        let e = HookEvent::parse(
            br#"{"tool_name":"Read","tool_input":{"file_path":"/a"},"new_field":[1]}"#,
        );
        assert!(matches!(e, Ok(ref ev) if ev.tool_name.as_deref() == Some("Read")));
        assert!(matches!(HookEvent::parse(b" \n"), Err(EventError::Empty)));
        assert!(matches!(HookEvent::parse(b"{"), Err(EventError::Json(_))));
    }

    #[test]
    fn an_oversized_event_is_refused_without_reading_it_all() {
        use std::io::Read;
        let mut src = std::io::repeat(b' ').take(MAX_EVENT_BYTES * 4);
        assert!(matches!(
            HookEvent::read(&mut src),
            Err(EventError::TooLarge { .. })
        ));
        let mut rest = Vec::new();
        let left = src.read_to_end(&mut rest).unwrap_or_default() as u64;
        assert_eq!(
            left,
            MAX_EVENT_BYTES * 3 - 1,
            "stopped one byte past the limit"
        );
    }

    #[test]
    fn codex_patch_becomes_one_edit_per_file() {
        let p = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-x\n+y\n*** Add File: b.txt\n+hi\n*** End Patch\n";
        assert_eq!(patch_files(p), vec!["src/a.rs", "b.txt"]);
    }

    #[test]
    fn gemini_shell_maps_to_bash() {
        let ev = HookEvent::parse(
            br#"{"tool_name":"run_shell_command","tool_input":{"command":"ls","directory":"sub"}}"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let calls = ev
            .calls(Harness::Gemini, "/w".into())
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(calls[0].tool(), "Bash");
        assert_eq!(
            calls[0].input(),
            &json!({"command": "ls", "workdir": "sub"})
        );
        let ev = HookEvent::parse(
            br#"{"tool_name":"run_shell_command","tool_input":{"command":"ls","dir_path":"/root/.ssh"}}"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let calls = ev
            .calls(Harness::Gemini, "/w".into())
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            calls[0].input(),
            &json!({"command": "ls", "workdir": "/root/.ssh"})
        );
    }
}
