//! Tool metadata that the built-in listeners use and the audit line records.
#![forbid(unsafe_code)]

use serde::Serialize;

/// What kind of tool a call is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// Runs shell commands.
    Shell,
    /// Reads files.
    FileRead,
    /// Writes files.
    FileWrite,
    /// Reaches the network.
    Network,
    /// A tool of an MCP server.
    Mcp,
    /// A tool of the agent's harness that acts on nothing but its session.
    Harness,
    /// A tool sbx does not know.
    Unknown,
}

/// Facts about a tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ToolMeta {
    /// It changes nothing.
    pub read_only: bool,
    /// It writes files.
    pub write: bool,
    /// It can do anything (a shell, an unknown tool).
    pub dangerous: bool,
    /// It costs money or time (a web search).
    pub expensive: bool,
    /// What kind of tool it is.
    pub category: Category,
}

const fn meta(
    read_only: bool,
    write: bool,
    dangerous: bool,
    expensive: bool,
    category: Category,
) -> ToolMeta {
    ToolMeta {
        read_only,
        write,
        dangerous,
        expensive,
        category,
    }
}

/// Metadata for a tool by name. Unknown tools are dangerous and never read-only.
pub fn tool_meta(tool: &str) -> ToolMeta {
    match tool {
        "Bash" => meta(false, true, true, true, Category::Shell),
        "Read" | "Grep" | "Glob" | "LS" | "NotebookRead" => {
            meta(true, false, false, false, Category::FileRead)
        }
        "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => {
            meta(false, true, false, false, Category::FileWrite)
        }
        "WebFetch" | "WebSearch" => meta(true, false, false, true, Category::Network),
        t if t.starts_with("mcp__") => meta(false, false, true, false, Category::Mcp),
        t if super::access::HARNESS_TOOLS.contains(&t) => {
            meta(true, false, false, false, Category::Harness)
        }
        _ => meta(false, false, true, false, Category::Unknown),
    }
}
