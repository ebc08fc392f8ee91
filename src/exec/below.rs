//! Protected names below the workspace root. Programs load some of them from whatever
//! directory they start in: direnv a `.envrc` when a shell enters it, dotenv a `.env`, an
//! agent its `.claude/` settings or `.mcp.json` when started there, an editor the `.vscode/`
//! of a folder opened alone. In each directory directly in the workspace, every such name that
//! the profile protects at the root is looked for before the run: one there is held read-only
//! like the root's ([`FirstLevel::below`], which planning turns into read-only binds), and one
//! made or replaced during the run goes to quarantine like one at the root. Under
//! `case_folding = "accept"` names are compared as a file system that folds case compares
//! them (`.ENVRC` is `.envrc` there).
use super::identity::Seen;
use super::walk::{self, Walk};
use crate::capability::{CapabilitySet, CaseFolding, Origin, PathEntry, loaded_where_started};
use crate::folded_names::matching_without_case;
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The last [`Below`] made by [`Below::shared`], with the set it was made of and the
/// workspace. The set is held, so no other set can be made at its address meanwhile: the
/// same address is the same set, and a session's calls (which share their kept plan's set)
/// compile the names once.
static LAST: Mutex<Option<Made>> = Mutex::new(None);

/// A [`Below`] with the set and workspace it was made for.
type Made = (Arc<CapabilitySet>, PathBuf, Arc<Below>);

/// The profile's protected names at the workspace root that are also protected one level
/// below it, each with the profile line that protects it.
pub(super) struct Below {
    names: Vec<(glob::Pattern, Origin)>,
    /// Names are compared without case (`case_folding = "accept"`).
    fold: bool,
}

/// The rule given for a link the check could not follow.
const UNFOLLOWED: &str = "a link the check after the run cannot follow";

/// What was found below the root: each path, what is there, and the rule.
pub(super) type Found = BTreeMap<PathBuf, (Seen, String)>;

impl Below {
    /// The names of `entries` (the profile's watched patterns) directly in `workspace`.
    pub(super) fn of(entries: &[PathEntry], workspace: &Path, folding: CaseFolding) -> Self {
        let root = format!("{}/", glob::Pattern::escape(&workspace.to_string_lossy()));
        let names = entries
            .iter()
            .filter_map(|e| {
                let text = e.path.to_string_lossy();
                let name = text
                    .strip_prefix(root.as_str())
                    .filter(|n| !n.contains('/'))?;
                let pattern = glob::Pattern::new(name).ok()?;
                Some((pattern, e.origin.clone()))
            })
            .collect();
        Self {
            names,
            fold: folding == CaseFolding::Accept,
        }
    }

    /// [`Below::of`] the set's watched patterns in `workspace`, made once for a set shared
    /// by many runs.
    pub(super) fn shared(caps: &Arc<CapabilitySet>, workspace: &Path) -> Arc<Below> {
        let mut last = LAST
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((c, w, below)) = last.as_ref()
            && Arc::ptr_eq(c, caps)
            && w.as_os_str() == workspace.as_os_str()
        {
            return Arc::clone(below);
        }
        let below = Arc::new(Below::of(&caps.fs.watch, workspace, caps.fs.case_folding));
        *last = Some((
            Arc::clone(caps),
            workspace.to_path_buf(),
            Arc::clone(&below),
        ));
        below
    }

    pub(super) fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The profile line that protects `name` one level down, if one does.
    fn rule(&self, name: &OsStr) -> Option<&Origin> {
        if !loaded_where_started(name, self.fold) {
            return None;
        }
        let matches = |p: &glob::Pattern| match (self.fold, name.to_str()) {
            (true, _) => !matching_without_case([name], p).is_empty(),
            (false, Some(n)) => p.matches(n),
            (false, None) => false,
        };
        self.names
            .iter()
            .find(|(p, _)| matches(p))
            .map(|(_, origin)| origin)
    }

    /// The protected names in the directories directly in the workspace that exist now, each
    /// with the profile line that protects it at the root, to be held read-only. A link is
    /// held where it leads when that is inside the workspace and no directory the link lies
    /// in (`.claude -> .` would hold its whole directory); one that dangles or leads outside
    /// is left to the check after the run.
    pub(super) fn existing(&self, walk: &Walk, workspace: &Path) -> Vec<PathEntry> {
        let mut out = Vec::new();
        for (dir, names) in &walk.first {
            for name in names {
                let Some(origin) = self.rule(name) else {
                    continue;
                };
                let path = dir.join(name);
                if walk.first_links.contains(&path) && !held_where_it_leads(&path, dir, workspace) {
                    continue;
                }
                out.push(PathEntry {
                    path,
                    required: false,
                    origin: Origin {
                        key: format!("{} (one level below the workspace)", origin.key).into(),
                        ..origin.clone()
                    },
                });
            }
        }
        out
    }

    /// Each protected name in the directories directly in the workspace, and each link
    /// there that the walk could not follow (what it leads to cannot be looked at).
    pub(super) fn found(&self, walk: &Walk) -> Found {
        let mut out = Found::new();
        if !self.names.is_empty() {
            for link in &walk.unfollowed {
                out.insert(link.clone(), (Seen::of(link), UNFOLLOWED.to_string()));
            }
        }
        for (dir, names) in &walk.first {
            for name in names {
                if let Some(rule) = self.rule(name) {
                    let path = dir.join(name);
                    out.insert(path.clone(), (Seen::of(&path), rule.to_string()));
                }
            }
        }
        out
    }
}

/// Whether the link at `link`, in `dir`, leads to something in `workspace` that does not
/// hold `dir`.
fn held_where_it_leads(link: &Path, dir: &Path, workspace: &Path) -> bool {
    std::fs::canonicalize(link)
        .is_ok_and(|real| real.starts_with(workspace) && !dir.starts_with(&real))
}

/// The workspace's first level, listed for one run on first use: planning holds the protected
/// names it finds there read-only, and the record before the run takes their files from the
/// same listing (a run lists the workspace's first level once before it starts).
pub(super) struct FirstLevel {
    workspace: PathBuf,
    walk: std::cell::OnceCell<Walk>,
}

impl FirstLevel {
    pub(super) fn new(workspace: &Path) -> Self {
        Self {
            workspace: workspace.to_path_buf(),
            walk: std::cell::OnceCell::new(),
        }
    }

    /// The protected names one level below the root that exist now, for `caps`; the workspace
    /// is listed only when the profile protects any.
    pub(super) fn below(&self, caps: &Arc<CapabilitySet>) -> Vec<PathEntry> {
        self.existing(&Below::shared(caps, &self.workspace))
    }

    /// [`FirstLevel::below`] for a set no other run shares.
    pub(super) fn below_of(&self, caps: &CapabilitySet) -> Vec<PathEntry> {
        self.existing(&Below::of(
            &caps.fs.watch,
            &self.workspace,
            caps.fs.case_folding,
        ))
    }

    fn existing(&self, below: &Below) -> Vec<PathEntry> {
        if below.is_empty() {
            return Vec::new();
        }
        below.existing(self.walk(), &self.workspace)
    }

    fn walk(&self) -> &Walk {
        self.walk.get_or_init(|| {
            let _scope = walk::Scope::enter(&self.workspace);
            Walk::of(&self.workspace)
        })
    }

    /// Take `walk` as this run's listing, when none was made yet.
    pub(super) fn adopt(&self, walk: Walk) {
        let _ = self.walk.set(walk);
    }

    /// The listing, if one was made.
    pub(super) fn into_walk(self) -> Option<Walk> {
        self.walk.into_inner()
    }
}

/// What is new, another file, or a file written through another name in `after` than in
/// `before`: path, change, rule.
pub(super) fn changes(before: &Found, after: Found) -> Vec<(PathBuf, &'static str, String)> {
    after
        .into_iter()
        .filter_map(|(path, (now, rule))| match before.get(&path) {
            None => Some((path, "created", rule)),
            Some((was, _)) => was.change(&now).map(|c| (path, c, rule)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "test set-up fails loudly")]
    use super::*;

    fn watched(ws: &Path, names: &[&str]) -> Vec<PathEntry> {
        let root = glob::Pattern::escape(&ws.to_string_lossy());
        names
            .iter()
            .map(|n| PathEntry {
                path: PathBuf::from(format!("{root}/{n}")),
                required: false,
                origin: Origin::builtin("filesystem.deny_write"),
            })
            .collect()
    }

    /// Under `case_folding = "accept"` a name under another case is the protected one;
    /// otherwise only its exact bytes are.
    #[test]
    fn names_under_another_case_are_protected_where_case_is_folded() {
        let ws = Path::new("/ws");
        let entries = watched(ws, &[".envrc", ".env*", ".claude"]);
        let folded = Below::of(&entries, ws, CaseFolding::Accept);
        let exact = Below::of(&entries, ws, CaseFolding::Refuse);
        for name in [".ENVRC", ".Env.Local", ".CLAUDE", ".envrc"] {
            assert!(folded.rule(name.as_ref()).is_some(), "{name}");
        }
        for name in ["NOTES.TXT", ".envrc2x", ".vscode"] {
            let protected = folded.rule(name.as_ref()).is_some();
            assert_eq!(protected, name == ".envrc2x", "{name}");
        }
        assert!(exact.rule(".ENVRC".as_ref()).is_none());
        assert!(exact.rule(".envrc".as_ref()).is_some());
    }

    /// Existing names are held; a link only where it leads inside the workspace, to no
    /// directory it lies in.
    #[test]
    fn existing_names_below_the_root_and_where_their_links_lead() {
        let t = tempfile::tempdir().unwrap();
        let ws = std::fs::canonicalize(t.path()).unwrap();
        let sub = ws.join("sub");
        std::fs::create_dir_all(sub.join(".vscode")).unwrap();
        std::fs::create_dir_all(ws.join("shared/claude")).unwrap();
        std::fs::write(sub.join(".envrc"), "").unwrap();
        std::fs::write(sub.join("notes.txt"), "").unwrap();
        std::os::unix::fs::symlink("../shared/claude", sub.join(".claude")).unwrap();
        std::os::unix::fs::symlink(".", ws.join("shared/.claude")).unwrap();
        std::os::unix::fs::symlink("/nonexistent", sub.join(".mcp.json")).unwrap();
        std::os::unix::fs::symlink("/etc", sub.join(".idea")).unwrap();
        let names = [
            ".envrc",
            ".claude",
            ".vscode",
            ".mcp.json",
            ".idea",
            "notes.txt",
        ];
        let below = Below::of(&watched(&ws, &names), &ws, CaseFolding::Refuse);
        let mut found: Vec<PathBuf> = below
            .existing(&Walk::of(&ws), &ws)
            .into_iter()
            .map(|e| e.path)
            .collect();
        found.sort();
        let expected = [".claude", ".envrc", ".vscode"].map(|n| sub.join(n));
        assert_eq!(found, expected);
    }
}
