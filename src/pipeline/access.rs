//! Access extraction: what a call touches.
//!
//! Paths are made absolute against the call's cwd and walked as the kernel walks them: each
//! symbolic link in an existing component is followed before a later `..` applies, so that
//! a link into `.git/hooks` or out of the workspace is judged by its target.
#![forbid(unsafe_code)]

use super::call::ToolCall;
use crate::decision::Decision;
use crate::policy::{PathFamily, Target};
use crate::shell::{self, Analysis, ShellContext};
use crate::workspace::WorkspaceContext;
use std::path::{Path, PathBuf};

/// What a Bash call runs.
#[derive(Clone, Debug)]
pub struct BashAccess {
    /// The command string as the model wrote it.
    pub command: String,
    /// The directory it runs in.
    pub workdir: PathBuf,
    /// The timeout the call asks for.
    pub timeout_ms: Option<u64>,
    /// Whether it asks to run as a background job.
    pub background: bool,
    /// The shell analysis: segments, their classes, paths read and written.
    pub analysis: Analysis,
}

impl BashAccess {
    /// Every segment judged harmless by the analyser and nothing written.
    pub fn read_only(&self) -> bool {
        self.analysis.verdict == Decision::Allow
            && !self.analysis.segments.is_empty()
            && self
                .analysis
                .segments
                .iter()
                .all(|s| s.verdict == Decision::Allow && s.writes.is_empty())
    }

    /// Paths written by the command (redirections, path arguments), as the analyser reports them.
    pub fn writes(&self) -> impl Iterator<Item = &PathBuf> {
        self.analysis.segments.iter().flat_map(|s| s.writes.iter())
    }

    /// Paths the command's arguments and input redirections name, as the analyser resolved them.
    pub fn reads(&self) -> impl Iterator<Item = &PathBuf> {
        self.analysis.segments.iter().flat_map(|s| s.reads.iter())
    }
}

/// What a call touches.
#[derive(Clone, Debug)]
pub enum Access {
    /// A shell command (Bash).
    Bash(BashAccess),
    /// Read, Grep, Glob, LS.
    Read {
        /// The files named.
        paths: Vec<PathBuf>,
        /// Directories the tool walks (Grep, Glob): everything beneath them is read.
        trees: Vec<PathBuf>,
    },
    /// Write, Edit, MultiEdit, NotebookEdit.
    Write {
        /// The files written.
        paths: Vec<PathBuf>,
    },
    /// A URL fetched (WebFetch).
    WebFetch {
        /// The URL as given.
        url: String,
        /// Its host, lower-case without a trailing dot.
        host: String,
    },
    /// A web search.
    WebSearch {
        /// What is searched for.
        query: String,
    },
    /// A tool of an MCP server (`mcp__server__tool`).
    Mcp {
        /// The server's name.
        server: String,
        /// The tool's name on that server.
        tool: String,
    },
    /// A tool of the agent's own harness that touches nothing on the host: its to-do list, a
    /// sub-agent (whose own calls come through the gate), a question to the user, the output of
    /// a shell it started ([`HARNESS_TOOLS`]).
    Harness,
    /// A tool sbx does not know: never allowed by default.
    Unknown,
}

/// The harnesses' own tools that act on nothing but the agent's session, by the names Claude
/// Code, Gemini CLI and Codex give them: allowed as read-only, unless a rule says otherwise.
pub const HARNESS_TOOLS: &[&str] = &[
    "TodoWrite",
    "TodoRead",
    "Task",
    "Agent",
    "BashOutput",
    "KillShell",
    "KillBash",
    "ExitPlanMode",
    "AskUserQuestion",
    // Not `SlashCommand` or `Skill`: a command's or skill's file may run shell lines (`!`)
    // as it loads, or grant tools, which no hook sees.
    "write_todos",
    "update_plan",
];

/// Why a call's input could not be understood (the call is denied).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AccessError {
    #[error("{tool}: missing or invalid `{field}` in input")]
    /// A field of the input is missing or has the wrong type.
    Field {
        /// The tool called.
        tool: String,
        /// The field.
        field: &'static str,
    },
    #[error(
        "{tool}: `{path}` goes through an open file descriptor or another process's directory: where it lands is only known when it runs"
    )]
    /// A path through `/proc/self/fd`, `/dev/fd`, or another process's `cwd` or `root`.
    Descriptor {
        /// The tool called.
        tool: String,
        /// The path.
        path: String,
    },
    #[error("{tool}: invalid URL `{url}`: {reason}")]
    /// A URL that does not parse.
    Url {
        /// The tool called.
        tool: String,
        /// The URL as given.
        url: String,
        /// Why it does not parse.
        reason: String,
    },
}

fn str_field<'a>(call: &'a ToolCall, field: &'static str) -> Result<&'a str, AccessError> {
    call.input()
        .get(field)
        .and_then(|v| v.as_str())
        .ok_or_else(|| AccessError::Field {
            tool: call.tool().to_string(),
            field,
        })
}

fn opt_str<'a>(call: &'a ToolCall, field: &str) -> Option<&'a str> {
    call.input().get(field).and_then(|v| v.as_str())
}

/// `p` (with `~` expanded) made absolute against `cwd` and walked as the kernel walks it:
/// links in existing components followed, each before the `..` after it.
pub fn resolve_path(cwd: &Path, p: &Path, home: &Path) -> PathBuf {
    let p = match p.strip_prefix("~") {
        Ok(rest) if p.to_string_lossy().starts_with('~') => home.join(rest),
        Ok(_) | Err(_) => p.to_path_buf(),
    };
    let joined = if p.is_absolute() { p } else { cwd.join(p) };
    shell::canonical_prefix(&joined, cwd)
}

fn path_field(
    call: &ToolCall,
    field: &'static str,
    workspace: &WorkspaceContext,
) -> Result<PathBuf, AccessError> {
    let raw = str_field(call, field)?;
    // The tools read in the harness's process: its descriptors are not the ones here.
    if shell::names_descriptor(raw) {
        return Err(AccessError::Descriptor {
            tool: call.tool().to_string(),
            path: raw.to_string(),
        });
    }
    if raw.is_empty() {
        return Err(AccessError::Field {
            tool: call.tool().to_string(),
            field,
        });
    }
    crate::shell::take_through_other();
    let path = resolve_path(call.cwd(), Path::new(raw), &workspace.home);
    // A link on the way to another process's directory (`ws/l -> /proc`) lands where that
    // process stands when the tool runs.
    if crate::shell::take_through_other() {
        return Err(AccessError::Descriptor {
            tool: call.tool().to_string(),
            path: raw.to_string(),
        });
    }
    Ok(path)
}

/// The literal directory a glob pattern starts in, when it names one: an absolute or
/// home-relative pattern, one that climbs out (`../../root/.ssh/*`), or a relative one with a
/// directory part, which may pass through a link (`h/.ssh/*` with `h` a link to the home).
fn pattern_dir(pattern: &str) -> Option<String> {
    let cut_at = pattern.find(['*', '?', '[', '{']).unwrap_or(pattern.len());
    let anchored = pattern.starts_with('/') || pattern.starts_with('~') || pattern.contains("..");
    if !anchored && !pattern.get(..cut_at)?.contains('/') {
        return None;
    }
    let cut = pattern.find(['*', '?', '[', '{']).unwrap_or(pattern.len());
    let prefix = pattern.get(..cut)?;
    Some(match prefix.rfind('/') {
        Some(0) => "/".to_string(),
        Some(i) if cut < pattern.len() => prefix.get(..i)?.to_string(),
        Some(_) | None => prefix.to_string(),
    })
}

/// Host of a URL, lower-cased, without a trailing dot.
pub fn url_host(tool: &str, url: &str) -> Result<String, AccessError> {
    let bad = |reason: String| AccessError::Url {
        tool: tool.to_string(),
        url: url.to_string(),
        reason,
    };
    let parsed = url::Url::parse(url).map_err(|e| bad(e.to_string()))?;
    let host = match parsed.host() {
        Some(url::Host::Domain(d)) => d.trim_end_matches('.').to_ascii_lowercase(),
        Some(url::Host::Ipv4(a)) => a.to_string(),
        Some(url::Host::Ipv6(a)) => a.to_string(),
        None => return Err(bad("no host".into())),
    };
    Ok(host)
}

/// Turn a call into what it touches.
pub fn extract(call: &ToolCall, workspace: &WorkspaceContext) -> Result<Access, AccessError> {
    let tool = call.tool();
    match tool {
        "Bash" => {
            let command = str_field(call, "command")?.to_string();
            let workdir = opt_str(call, "workdir")
                .map(|w| resolve_path(call.cwd(), Path::new(w), &workspace.home))
                .unwrap_or_else(|| resolve_path(Path::new("/"), call.cwd(), &workspace.home));
            let timeout_ms = call.input().get("timeout").and_then(|v| v.as_u64());
            let background = call
                .input()
                .get("run_in_background")
                .and_then(|v| v.as_bool())
                .unwrap_or(false);
            let ctx = ShellContext {
                cwd: workdir.clone(),
                workspace,
            };
            let analysis = shell::analyze(&command, &ctx);
            Ok(Access::Bash(BashAccess {
                command,
                workdir,
                timeout_ms,
                background,
                analysis,
            }))
        }
        "Read" => Ok(Access::Read {
            paths: vec![path_field(call, "file_path", workspace)?],
            trees: Vec::new(),
        }),
        "Grep" | "Glob" | "LS" => {
            let p = opt_str(call, "path").unwrap_or(".");
            let mut paths = vec![resolve_path(call.cwd(), Path::new(p), &workspace.home)];
            // A Glob pattern that names its own directory (`~/.ssh/*`, `/etc/**`, `h/.ssh/*`)
            // reads there.
            if let Some(dir) = opt_str(call, "pattern").and_then(pattern_dir) {
                let base = resolve_path(call.cwd(), Path::new(p), &workspace.home);
                paths.push(resolve_path(&base, Path::new(&dir), &workspace.home));
            }
            // Grep and Glob walk their directories; LS lists one.
            let trees = if tool == "LS" {
                Vec::new()
            } else {
                paths.clone()
            };
            Ok(Access::Read { paths, trees })
        }
        "Write" | "Edit" | "MultiEdit" => Ok(Access::Write {
            paths: vec![path_field(call, "file_path", workspace)?],
        }),
        "NotebookEdit" => Ok(Access::Write {
            paths: vec![path_field(call, "notebook_path", workspace)?],
        }),
        "NotebookRead" => Ok(Access::Read {
            paths: vec![path_field(call, "notebook_path", workspace)?],
            trees: Vec::new(),
        }),
        t if HARNESS_TOOLS.contains(&t) => Ok(Access::Harness),
        "WebFetch" => {
            let url = str_field(call, "url")?.to_string();
            let host = url_host(tool, &url)?;
            Ok(Access::WebFetch { url, host })
        }
        "WebSearch" => Ok(Access::WebSearch {
            query: str_field(call, "query")?.to_string(),
        }),
        t => match t.strip_prefix("mcp__").and_then(|r| r.split_once("__")) {
            Some((server, name)) if !server.is_empty() && !name.is_empty() => Ok(Access::Mcp {
                server: server.to_string(),
                tool: name.to_string(),
            }),
            Some(_) | None => Ok(Access::Unknown),
        },
    }
}

impl Access {
    /// The targets non-Bash rules are matched against.
    pub fn targets<'a>(&'a self, tool: &'a str) -> Vec<Target<'a>> {
        match self {
            Access::Bash(b) => b
                .analysis
                .segments
                .iter()
                .map(|s| Target::Command(&s.text))
                .collect(),
            Access::Read { paths, .. } => paths
                .iter()
                .map(|p| Target::Path {
                    tool,
                    family: PathFamily::Read,
                    path: p,
                })
                .collect(),
            Access::Write { paths } => paths
                .iter()
                .map(|p| Target::Path {
                    tool,
                    family: PathFamily::Edit,
                    path: p,
                })
                .collect(),
            Access::WebFetch { host, .. } => vec![Target::Domain { tool, host }],
            Access::WebSearch { .. } | Access::Harness | Access::Unknown => {
                vec![Target::Tool(tool)]
            }
            Access::Mcp { server, tool: t } => vec![Target::Mcp { server, tool: t }],
        }
    }

    /// Paths written directly (file tools and shell redirections).
    pub fn writes(&self) -> Vec<&PathBuf> {
        match self {
            Access::Bash(b) => b.writes().collect(),
            Access::Write { paths } => paths.iter().collect(),
            Access::Read { .. }
            | Access::WebFetch { .. }
            | Access::WebSearch { .. }
            | Access::Mcp { .. }
            | Access::Harness
            | Access::Unknown => Vec::new(),
        }
    }

    /// The exact canonical form of the call: what a session grant is scoped to.
    pub fn canonical(&self, call: &ToolCall) -> String {
        let list = |paths: &[PathBuf]| {
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self {
            Access::Bash(b) => format!("Bash({})", b.command.trim()),
            Access::Read { paths, .. } | Access::Write { paths } => {
                format!("{}({})", call.tool(), list(paths))
            }
            Access::WebFetch { url, .. } => format!("WebFetch({url})"),
            Access::WebSearch { query } => format!("WebSearch({query})"),
            Access::Mcp { .. } | Access::Harness | Access::Unknown => {
                format!("{}({})", call.tool(), call.input())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_normalization() {
        let p = resolve_path(
            Path::new("/nonexistent-sbx/w/sub"),
            Path::new("../a/./b/../c"),
            Path::new("/h"),
        );
        assert_eq!(p, PathBuf::from("/nonexistent-sbx/w/a/c"));
        let h = resolve_path(
            Path::new("/x"),
            Path::new("~/.ssh/id_rsa"),
            Path::new("/nonexistent-home"),
        );
        assert_eq!(h, PathBuf::from("/nonexistent-home/.ssh/id_rsa"));
    }

    /// The Read and Write tools' paths take the same walk as Bash's: `..` after a link climbs
    /// from its target.
    #[test]
    fn a_dotdot_after_a_link_climbs_from_its_target() -> std::io::Result<()> {
        let root = tempfile::tempdir()?;
        let base = root.path().canonicalize()?;
        let (ws, home) = (base.join("ws"), base.join("home"));
        std::fs::create_dir_all(home.join("dots/cfg"))?;
        std::fs::create_dir_all(&ws)?;
        std::os::unix::fs::symlink(home.join("dots/cfg"), home.join(".cfg"))?;
        std::os::unix::fs::symlink(&home, ws.join("h"))?;
        let at = |p: &str| resolve_path(&ws, Path::new(p), &home);
        assert_eq!(at("~/.cfg/../.netrc"), home.join("dots/.netrc"));
        assert_eq!(at("h/../home/.netrc"), home.join(".netrc"));
        assert_eq!(at("h/../x"), base.join("x"));
        Ok(())
    }

    #[test]
    fn a_glob_pattern_reads_its_literal_directory() {
        assert_eq!(pattern_dir("~/.ssh/*").as_deref(), Some("~/.ssh"));
        assert_eq!(pattern_dir("/etc/**/shadow").as_deref(), Some("/etc"));
        assert_eq!(pattern_dir("/*").as_deref(), Some("/"));
        assert_eq!(pattern_dir("/etc/shadow").as_deref(), Some("/etc/shadow"));
        assert_eq!(pattern_dir("src/**/*.rs").as_deref(), Some("src"));
        assert_eq!(pattern_dir("h/.ssh/*").as_deref(), Some("h/.ssh"));
        assert_eq!(pattern_dir("**/*.rs"), None);
    }
}
