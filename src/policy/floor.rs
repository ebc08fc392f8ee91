//! The safety floor: a minimum decision for direct writes that no rule can lift.
//!
//! The floor sits under the policy, not in it: the pipeline combines its
//! answer with the policy's by "strictest wins", so an allow rule, a mode or
//! a session grant never takes a floor ask or deny away.
#![forbid(unsafe_code)]

use crate::decision::Decision;
use crate::workspace::WorkspaceContext;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Why the floor raised a call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FloorHit {
    /// Ask or deny.
    pub decision: Decision,
    /// A stable name for the floor entry, e.g. `floor:git-hooks`.
    pub rule: &'static str,
    /// Why the path is sensitive.
    pub reason: String,
    /// The path.
    pub path: PathBuf,
}

/// Shell start-up files: the same list the shell analysis uses.
use crate::shell::tables::RC_FILES;

const SYSTEM_TREES: &[&str] = &[
    "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/boot", "/sys", "/proc", "/dev",
];

/// Writes under /dev that ordinary work makes: the null sink, the standard streams, the
/// terminal, and the sandbox's private /dev/shm.
fn ordinary_device(path: &Path) -> bool {
    ["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"]
        .iter()
        .any(|d| path == Path::new(d))
        || path.starts_with("/dev/shm")
        || path.starts_with("/dev/fd")
        || path.starts_with("/dev/pts")
}

fn name_of(p: &Path) -> &str {
    p.file_name().and_then(|n| n.to_str()).unwrap_or("")
}

fn has_component(p: &Path, name: &str) -> bool {
    p.components().any(|c| c.as_os_str() == name)
}

/// The floor's verdict on one absolute, normalized write target.
pub fn floor_for_write(path: &Path, workspace: &WorkspaceContext) -> Option<FloorHit> {
    let (decision, rule, reason) = malicious(path, workspace)
        .map(|(rule, reason)| (Decision::Deny, rule, reason))
        .or_else(|| risky(path, workspace).map(|(rule, reason)| (Decision::Ask, rule, reason)))?;
    Some(FloorHit {
        decision,
        rule,
        reason: format!("{reason}: {}", path.display()),
        path: path.to_path_buf(),
    })
}

/// Plainly malicious writes, denied: git hooks, authorized keys, the home's shell start-up
/// files, system directories.
fn malicious(path: &Path, workspace: &WorkspaceContext) -> Option<(&'static str, &'static str)> {
    let in_home = |rel: &str| path.starts_with(workspace.home.join(rel));
    if path
        .ancestors()
        .any(|a| name_of(a) == "hooks" && a.parent().is_some_and(|p| name_of(p) == ".git"))
    {
        return Some(("floor:git-hooks", "write to git hooks"));
    }
    if in_home(".ssh/authorized_keys") || in_home(".ssh/authorized_keys2") {
        return Some(("floor:ssh-authorized-keys", "write to ssh authorized keys"));
    }
    if path.parent() == Some(workspace.home.as_path()) && RC_FILES.contains(&name_of(path))
        || in_home(".config/fish/config.fish")
    {
        return Some(("floor:shell-rc", "write to a shell startup file"));
    }
    if SYSTEM_TREES.iter().any(|t| path.starts_with(t)) && !ordinary_device(path) {
        return Some(("floor:system", "write to a system directory"));
    }
    None
}

/// Risky writes, asked about at least: git internals, CI workflows, environment files, ssh
/// keys, shell start-up files anywhere, sbx's policy files, anything outside the workspace
/// and the writable set.
fn risky(path: &Path, workspace: &WorkspaceContext) -> Option<(&'static str, &'static str)> {
    let in_home = |rel: &str| path.starts_with(workspace.home.join(rel));
    let name = name_of(path);
    if has_component(path, ".git") {
        return Some(("floor:git-internals", "write inside .git"));
    }
    if path
        .ancestors()
        .any(|a| name_of(a) == "workflows" && a.parent().is_some_and(|p| name_of(p) == ".github"))
    {
        return Some(("floor:ci-workflows", "write to CI workflows"));
    }
    if name == ".env" || name.starts_with(".env.") {
        return Some(("floor:dotenv", "write to an environment file"));
    }
    if in_home(".ssh")
        || name.starts_with("id_rsa")
        || name.starts_with("id_ed25519")
        || name.starts_with("id_ecdsa")
    {
        return Some(("floor:ssh", "write to ssh keys or config"));
    }
    if RC_FILES.contains(&name) {
        return Some(("floor:shell-rc", "write to a shell startup file"));
    }
    if path.starts_with(workspace.root.join(".sbx")) || in_home(".config/sbx") {
        return Some(("floor:policy-files", "write to sbx policy files"));
    }
    let inside = path.starts_with(&workspace.root)
        || workspace.writable.iter().any(|w| path.starts_with(w))
        || ordinary_device(path);
    (!inside).then_some((
        "floor:outside-workspace",
        "write outside the workspace and writable set",
    ))
}

/// The strictest floor verdict over several write targets.
pub fn floor_for_writes<'a>(
    paths: impl IntoIterator<Item = &'a PathBuf>,
    workspace: &WorkspaceContext,
) -> Option<FloorHit> {
    let mut worst: Option<FloorHit> = None;
    for p in paths {
        if let Some(h) = floor_for_write(p, workspace) {
            let stricter = worst
                .as_ref()
                .is_none_or(|w| (h.decision, h.rule, &h.path) > (w.decision, w.rule, &w.path));
            if stricter {
                worst = Some(h);
            }
        }
    }
    worst
}

/// True for credentials and policy files: write-tier tools touching them are never auto-approved by a mode.
pub fn is_sensitive(path: &Path, workspace: &WorkspaceContext) -> bool {
    floor_for_write(path, workspace).is_some_and(|h| h.rule != "floor:outside-workspace")
}
