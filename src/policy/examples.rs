//! Verifying a policy's own examples at load time.
#![forbid(unsafe_code)]

use super::bash;
use super::error::{Location, PolicyError};
use super::load::PolicySource;
use super::set::Policy;
use crate::decision::Decision;
use crate::shell::{self, ShellContext};
use crate::workspace::WorkspaceContext;
use std::path::PathBuf;

/// Where examples are judged: a workspace and a home that do not exist, so that an example
/// means the same wherever its source loads, whatever files the workspace holds.
pub fn workspace() -> WorkspaceContext {
    WorkspaceContext::new(
        "/nonexistent-sbx-examples/workspace",
        "/nonexistent-sbx-examples/home",
    )
}

/// The decision the rules and the shell analysis give a command in default mode
/// (no floor, no grants, no hooks), with a short explanation.
pub fn command_decision(policy: &Policy, command: &str) -> (Decision, String) {
    // Nothing but the workspace is writable here, so that an example means the same under
    // every profile.
    let workspace = WorkspaceContext::new(&policy.workspace().root, &policy.workspace().home);
    let ctx = ShellContext {
        cwd: workspace.root.clone(),
        workspace: &workspace,
    };
    let analysis = shell::analyze(command, &ctx);
    if let Some(r) = bash::evaluate(policy, &analysis, crate::decision::Mode::Default) {
        let why = match r.rule {
            Some(rule) => rule.describe(),
            None => r.reason,
        };
        return (r.decision, why);
    }
    match analysis.verdict {
        Decision::Allow => (Decision::Allow, "read-only by shell analysis".into()),
        Decision::Ask | Decision::Deny => (Decision::Ask, "no rule matched".into()),
    }
}

/// Fail unless every example of `source` gets its expected decision from `policy`.
pub fn verify(source: &PolicySource, policy: &Policy) -> Result<(), PolicyError> {
    for ex in &source.examples {
        let (actual, why) = command_decision(policy, &ex.command);
        if actual != ex.expected {
            return Err(PolicyError::Example {
                at: Location {
                    file: PathBuf::from(&source.file),
                    line: ex.line,
                },
                command: ex.command.clone(),
                expected: ex.expected.as_str(),
                actual: actual.as_str(),
                why,
            });
        }
    }
    Ok(())
}
