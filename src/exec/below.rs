//! Protected names below the workspace root. Programs load some of them from whatever
//! directory they start in: direnv a `.envrc` when a shell enters it, dotenv a `.env`, an
//! agent its `.claude/` settings or `.mcp.json` when started there, an editor the `.vscode/`
//! of a folder opened alone. The mounts hold the root's. In each directory directly in the
//! workspace, every such name that the profile protects at the root is looked for before and
//! after the run; one made or replaced during it goes to quarantine like one at the root.
use super::identity::{FileKey, Links};
use super::walk::Walk;
use crate::capability::PathEntry;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Names that programs load from the directory they start in. CI systems' files and hook
/// managers' are read at the repository's root only, and git's are the git scan's.
const LOADED_WHERE_STARTED: &[&str] = &[
    ".envrc",
    ".claude",
    ".mcp.json",
    ".gemini",
    ".codex",
    ".cursor",
    ".vscode",
    ".idea",
    ".zed",
    ".helix",
    ".nvim.lua",
    ".exrc",
    ".nvimrc",
    ".devcontainer",
    ".devcontainer.json",
    ".aider.conf.yml",
    ".continue",
    ".windsurf",
    ".kiro",
    ".roo",
    "opencode.json",
    "opencode.jsonc",
    ".opencode",
    ".qwen",
    "crush.json",
    ".crush.json",
    ".amazonq",
    ".junie",
];

/// Whether programs load `name` from the directory they start in (dotenv's `.env` and its
/// variants too).
fn loaded_where_started(name: &str) -> bool {
    LOADED_WHERE_STARTED.contains(&name) || name.starts_with(".env")
}

/// The profile's protected names at the workspace root that are also protected one level
/// below it, each with the profile line that protects it.
pub(super) struct Below {
    names: Vec<(glob::Pattern, String)>,
}

/// The rule given for a link the check could not follow.
const UNFOLLOWED: &str = "a link the check after the run cannot follow";

/// What was found below the root: each path, its file, and the rule.
pub(super) type Found = BTreeMap<PathBuf, (Option<FileKey>, String)>;

impl Below {
    pub(super) fn of(entries: &[PathEntry], workspace: &Path) -> Self {
        let root = format!("{}/", glob::Pattern::escape(&workspace.to_string_lossy()));
        let names = entries
            .iter()
            .filter_map(|e| {
                let text = e.path.to_string_lossy();
                let name = text.strip_prefix(root.as_str())?;
                let pattern = glob::Pattern::new(name)
                    .ok()
                    .filter(|_| !name.contains('/'))?;
                Some((pattern, e.origin.to_string()))
            })
            .collect();
        Self { names }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    fn rule(&self, name: &str) -> Option<&str> {
        if !loaded_where_started(name) {
            return None;
        }
        self.names
            .iter()
            .find(|(p, _)| p.matches(name))
            .map(|(_, rule)| rule.as_str())
    }

    /// Each protected name in the directories directly in the workspace, and each link
    /// there that the walk could not follow (what it leads to cannot be looked at).
    pub(super) fn found(&self, walk: &Walk) -> Found {
        let mut out = Found::new();
        if !self.names.is_empty() {
            for link in &walk.unfollowed {
                let file = FileKey::of(link, Links::Keep);
                out.insert(link.clone(), (file, UNFOLLOWED.to_string()));
            }
        }
        for (dir, names) in &walk.first {
            for name in names {
                if let Some(rule) = name.to_str().and_then(|n| self.rule(n)) {
                    let path = dir.join(name);
                    let file = FileKey::of(&path, Links::Keep);
                    out.insert(path, (file, rule.to_string()));
                }
            }
        }
        out
    }
}

/// What is new or another file in `after` than in `before`: path, change, rule.
pub(super) fn changes(before: &Found, after: Found) -> Vec<(PathBuf, &'static str, String)> {
    after
        .into_iter()
        .filter_map(|(path, (file, rule))| match before.get(&path) {
            None => Some((path, "created", rule)),
            Some((was, _)) if *was != file => Some((path, "replaced", rule)),
            Some(_) => None,
        })
        .collect()
}
