//! Shell command analysis: what a Bash command string actually does.
//!
//! Interface stub: every command is Ask until the analyser lands.
#![forbid(unsafe_code)]

use serde::Serialize;
use std::path::PathBuf;

/// What the analysis needs to know about where the command runs.
#[derive(Clone, Debug, Default)]
pub struct ShellContext {
    /// The directory the command starts in (absolute).
    pub cwd: PathBuf,
    /// The workspace root (absolute).
    pub workspace: PathBuf,
    /// The user's home directory (absolute).
    pub home: PathBuf,
    /// The profile's writable trees besides the workspace (absolute).
    pub writable: Vec<PathBuf>,
}

/// The analyser's verdict, ordered so that the strictest is the greatest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Allow,
    Ask,
    Deny,
}

/// What kind of thing one simple command does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Class {
    /// Could not be understood with certainty.
    Opaque,
}

/// One simple command of a compound command line.
#[derive(Clone, Debug, Serialize)]
pub struct Segment {
    /// Canonical text: words after quote removal, joined by single spaces.
    pub text: String,
    /// Words after quote removal, wrappers included.
    pub argv: Vec<String>,
    pub class: Class,
    pub verdict: Verdict,
    pub reason: String,
    /// Absolute paths this segment may write (redirections, path arguments).
    pub writes: Vec<PathBuf>,
}

/// The verdict on a whole command line: the strictest of its segments.
#[derive(Clone, Debug, Serialize)]
pub struct Analysis {
    pub segments: Vec<Segment>,
    pub verdict: Verdict,
    pub reason: String,
    /// Index into `segments` of the segment that decided, if any.
    pub deciding_segment: Option<usize>,
}

/// Analyse a Bash command string. Never panics; anything not understood is Ask.
pub fn analyze(command: &str, _ctx: &ShellContext) -> Analysis {
    Analysis {
        segments: vec![Segment {
            text: command.to_string(),
            argv: vec![command.to_string()],
            class: Class::Opaque,
            verdict: Verdict::Ask,
            reason: "shell analysis not available".into(),
            writes: Vec::new(),
        }],
        verdict: Verdict::Ask,
        reason: "shell analysis not available".into(),
        deciding_segment: Some(0),
    }
}
