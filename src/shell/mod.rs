//! Shell command analysis: what a Bash command string actually does.
//!
//! The string is parsed with `rable` (bash 5.3 grammar), split into simple
//! commands ("segments"), each unwrapped down to its leader and classified.
//! Anything not understood with certainty is [`Decision::Ask`]; see
//! `docs/shell-analysis.md` for the classes, the rules and the limits.
#![forbid(unsafe_code)]

mod brace_first;
mod classify;
mod commands;
mod evaluated;
mod exec_args;
mod extglob;
mod git;
mod git_config;
mod git_exec;
mod git_index;
mod git_outputs;
mod git_refs;
mod git_repos;
mod git_tracking;
pub(crate) mod glob_match;
mod globs;
mod leader;
mod limits;
mod paths;
mod project;
pub(crate) mod tables;
mod tree_links;
mod walk;
mod words;
mod writers;

pub use crate::decision::Decision;
use crate::workspace::WorkspaceContext;
use serde::Serialize;
use std::path::PathBuf;

pub use limits::{MAX_INPUT_BYTES, MAX_NESTING, PARSE_STACK_BYTES};
pub(crate) use paths::{canonical_prefix, names_descriptor, take_through_other};

/// What the analysis needs to know about where the command runs: the directory it starts in,
/// and the workspace context it works in (borrowed: one per pipeline, not one per call).
#[derive(Clone, Debug)]
pub struct ShellContext<'a> {
    /// The directory the command starts in (absolute).
    pub cwd: PathBuf,
    /// The workspace root, the home and the writable trees besides the workspace (absolute).
    pub workspace: &'a WorkspaceContext,
}

/// What kind of thing one simple command does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Class {
    /// Inspection that changes nothing (`ls`, `git diff`, `grep`).
    ReadOnly,
    /// Test and build runs of common toolchains (`cargo test`, `pytest`, `npm test`). They
    /// run project code (build scripts, test files, package scripts, configuration written in
    /// a programming language) that an earlier edit may have written, so they are asked
    /// about unless the sandbox confines them (sandbox-auto) or a rule allows them.
    BuildTest,
    /// Writes that all land inside the workspace or the writable set.
    WorkspaceWrite,
    /// Writes that land outside the workspace and the writable set.
    OutsideWrite,
    /// Writes to the safety floor: `.git` internals, CI workflows, `.env*`,
    /// `~/.ssh`, private keys, shell start-up files.
    FloorWrite,
    /// Writes the safety floor asks about rather than denies: `.git` internals other than
    /// hooks and config (`.git/info/exclude`, `.git/HEAD`), as the Write tool is judged.
    GuardedWrite,
    /// Deletes or irreversibly changes data or processes (`rm`, `git reset --hard`).
    Destructive,
    /// Runs with other privileges (`sudo`, `su`, `pkexec`).
    Privilege,
    /// Talks to the network (`curl`, `ssh`, `git push`).
    Network,
    /// Installs packages (`pip install`, `npm install`, `cargo install`).
    PackageInstall,
    /// An interpreter given code on the command line (`python -c`).
    InlineCode,
    /// Runs a project script or task whose content is not visible here
    /// (`npm run x`, `make`, `./script.sh`).
    ScriptRun,
    /// Changes configuration that affects later commands (`git config`).
    ConfigChange,
    /// Reads credentials or private keys.
    SecretRead,
    /// A program this analysis does not know.
    Unknown,
    /// Could not be understood with certainty.
    Opaque,
    /// Plainly malicious: download-and-execute, reverse shells, wiping
    /// the root or home directory, exfiltration of secrets.
    Malicious,
}

impl Class {
    /// A class that is a finding of the analysis, not a kind of work: a rule that allows the
    /// work by a wildcard does not lift it.
    pub fn is_finding(self) -> bool {
        match self {
            Class::OutsideWrite
            | Class::FloorWrite
            | Class::GuardedWrite
            | Class::SecretRead
            | Class::Opaque
            | Class::InlineCode
            | Class::Malicious => true,
            Class::ReadOnly
            | Class::BuildTest
            | Class::WorkspaceWrite
            | Class::Destructive
            | Class::Privilege
            | Class::Network
            | Class::PackageInstall
            | Class::ScriptRun
            | Class::ConfigChange
            | Class::Unknown => false,
        }
    }

    /// The verdict this class gets by default.
    pub fn default_verdict(self) -> Decision {
        match self {
            Class::ReadOnly | Class::WorkspaceWrite => Decision::Allow,
            Class::BuildTest
            | Class::OutsideWrite
            | Class::GuardedWrite
            | Class::Destructive
            | Class::Privilege
            | Class::Network
            | Class::PackageInstall
            | Class::InlineCode
            | Class::ScriptRun
            | Class::ConfigChange
            | Class::SecretRead
            | Class::Unknown
            | Class::Opaque => Decision::Ask,
            Class::FloorWrite | Class::Malicious => Decision::Deny,
        }
    }
}

/// One simple command of a compound command line.
#[derive(Clone, Debug, Serialize)]
pub struct Segment {
    /// Canonical text, matched by permission patterns such as
    /// `Bash(git diff *)`: the leader and its arguments after quote removal
    /// and wrapper unwrapping, joined by single spaces. Words that are not
    /// literal keep their source form (`$HOME`, `"$(...)"` unquoted once).
    /// Redirections and leading assignments are not part of it.
    pub text: String,
    /// Words after quote removal, wrappers included.
    pub argv: Vec<String>,
    /// What kind of command it is.
    pub class: Class,
    /// The analysis's verdict on it.
    pub verdict: Decision,
    /// Why: the rule id in brackets, then a short explanation.
    pub reason: String,
    /// Absolute paths this segment may write (redirections, path arguments).
    pub writes: Vec<PathBuf>,
    /// Absolute paths its arguments and input redirections name (`~`, `~user`, `$HOME`,
    /// `..` and symlinks resolved; a glob by its directory): what it may read.
    pub reads: Vec<PathBuf>,
    /// Directories this segment reads recursively (`grep -r`, `rg`, `find`, `tar c`, `cp -r`,
    /// a glob too large to expand, ...): everything beneath them, hidden paths included when
    /// the command runs unsandboxed.
    pub trees: Vec<PathBuf>,
    /// Targets of the symbolic links this segment makes (`ln -s TARGET LINK`), resolved: the
    /// link neither reads nor writes them, but a later access through it in the same command
    /// lands there.
    pub links: Vec<PathBuf>,
    /// Glob patterns among the write targets (`> .git/hoo*/pre-commit`), absolute, one per
    /// brace alternative, their literal directories resolved: the shell expands them when it
    /// runs, so the gate compares them with every protected path they could become, made or
    /// not. Their existing matches are in `writes`.
    pub write_patterns: Vec<PathBuf>,
    /// Glob patterns among the paths read, as `write_patterns`; their matches are in `reads`.
    pub read_patterns: Vec<PathBuf>,
    /// What the analysis found that no wildcard rule may lift: a secret read, a write outside
    /// the writable set or to a protected path, an executing argument, a substitution, a parse
    /// error, an obfuscated leader, inline code. Empty when the segment is plain.
    pub findings: Vec<String>,
    /// Where the segment was found: empty at top level, otherwise the
    /// construct that runs it (`bash -c`, `$(...)`, `find -exec`, `xargs`, ...).
    pub via: String,
}

/// The verdict on a whole command line: the strictest of its segments.
#[derive(Clone, Debug, Serialize)]
pub struct Analysis {
    /// The simple commands, in order.
    pub segments: Vec<Segment>,
    /// The strictest verdict of the segments.
    pub verdict: Decision,
    /// Why.
    pub reason: String,
    /// Index into `segments` of the segment that decided, if any.
    pub deciding_segment: Option<usize>,
}

impl Analysis {
    /// Build the compound verdict: the strictest segment decides; on ties the
    /// first one does.
    pub(crate) fn from_segments(segments: Vec<Segment>) -> Analysis {
        let mut best: Option<usize> = None;
        for (i, seg) in segments.iter().enumerate() {
            let stricter = match best.and_then(|b| segments.get(b)) {
                None => true,
                Some(cur) => seg.verdict > cur.verdict,
            };
            if stricter {
                best = Some(i);
            }
        }
        match best.and_then(|b| segments.get(b).map(|s| (b, s))) {
            Some((i, seg)) => {
                let verdict = seg.verdict;
                let reason = format!("segment {} `{}`: {}", i + 1, seg.text, seg.reason);
                Analysis {
                    verdict,
                    reason,
                    deciding_segment: Some(i),
                    segments,
                }
            }
            None => Analysis {
                segments,
                verdict: Decision::Allow,
                reason: "[shell.empty] no command".into(),
                deciding_segment: None,
            },
        }
    }
}

/// Analyse a Bash command string. Never panics; anything not understood is Ask.
pub fn analyze(command: &str, ctx: &ShellContext) -> Analysis {
    limits::analyse_guarded(command, ctx)
}

#[cfg(test)]
mod tests;
