//! A workspace that is a linked worktree (`git worktree add`, as coding agents make them for
//! parallel sessions): its `.git` is a file naming `REPO/worktrees/NAME`, where git keeps the
//! worktree's index and `HEAD`, while the objects, refs and logs it commits to are the
//! repository's, outside the workspace. A profile that lets a command write the workspace lets
//! it write those too, so that `git add` and `git commit` work there as in a repository of
//! its own; what git runs or obeys stays read-only as it does for the workspace's own `.git`:
//! the repository's `config` and `hooks` (not granted at all) and the worktree's `commondir`,
//! `gitdir` and `config.worktree`.
#![forbid(unsafe_code)]

use super::files::{FileKind, Files};
use super::resolve::normalize;
use crate::capability::{Origin, PathEntry};
use std::path::{Path, PathBuf};

/// The text a linked worktree's `commondir` holds: the repository two levels up.
const COMMONDIR: &str = "../..";

/// The repository's directories a commit in the worktree writes.
const SHARED: [&str; 3] = ["objects", "refs", "logs"];

/// The worktree's own files that steer git: where its repository is, where it is, and the
/// configuration git reads for it when `extensions.worktreeConfig` is on.
const HELD: [&str; 3] = ["commondir", "gitdir", "config.worktree"];

/// A workspace's linked worktree: its git directory and the repository's.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct LinkedWorktree {
    /// `REPO/worktrees/NAME`.
    gitdir: PathBuf,
    /// `REPO`.
    common: PathBuf,
}

/// The linked worktree `root` is, when its `.git` file names a git directory that is one as
/// git makes it: `REPO/worktrees/NAME` (neither a symbolic link), whose `commondir` says
/// `../..` and whose `gitdir` names this `.git` back.
pub(super) fn linked_worktree(root: &Path, files: &dyn Files) -> Option<LinkedWorktree> {
    let dot_git = root.join(".git");
    if files.kind(&dot_git) != Some(FileKind::File) {
        return None;
    }
    let text = files.read(&dot_git)?;
    let named = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    let gitdir = normalize(&root.join(named));
    let worktrees = gitdir.parent()?;
    let dir = |p: &Path| files.kind(p) == Some(FileKind::Dir);
    if worktrees.file_name()? != "worktrees" || !dir(&gitdir) || !dir(worktrees) {
        return None;
    }
    let line = |name: &str| files.read(&gitdir.join(name)).map(|t| t.trim().to_string());
    let back = line("gitdir").map(|b| normalize(&gitdir.join(b)));
    if line("commondir").as_deref() != Some(COMMONDIR) || back.as_deref() != Some(&dot_git) {
        return None;
    }
    let common = worktrees.parent()?.to_path_buf();
    dir(&common).then_some(LinkedWorktree { gitdir, common })
}

impl LinkedWorktree {
    /// What a command may write: the worktree's git directory and the repository's objects,
    /// refs and logs that exist. Nothing when the repository turns `extensions.worktreeConfig`
    /// on and the worktree has no `config.worktree` yet: one the command made there would be
    /// read by git outside the sandbox, and nothing after the run looks outside the workspace.
    pub(super) fn writable(&self, files: &dyn Files) -> Vec<PathEntry> {
        let own_config = self.gitdir.join("config.worktree");
        if files.kind(&own_config).is_none() && self.worktree_config_on(files) {
            return Vec::new();
        }
        let dir = |p: &PathBuf| files.kind(p) == Some(FileKind::Dir);
        std::iter::once(self.gitdir.clone())
            .chain(SHARED.iter().map(|d| self.common.join(d)))
            .filter(dir)
            .map(entry)
            .collect()
    }

    /// What stays read-only inside what [`LinkedWorktree::writable`] grants.
    pub(super) fn held(&self, files: &dyn Files) -> Vec<PathEntry> {
        HELD.iter()
            .map(|f| self.gitdir.join(f))
            .filter(|p| files.kind(p).is_some())
            .map(entry)
            .collect()
    }

    fn worktree_config_on(&self, files: &dyn Files) -> bool {
        let Some(text) = files.read(&self.common.join("config")) else {
            return false;
        };
        // A config not understood is taken to turn it on.
        crate::gitconfig::entries(&text).is_none_or(|entries| {
            entries.iter().any(|e| {
                e.section == "extensions"
                    && e.key == "worktreeconfig"
                    && !matches!(
                        e.value.to_ascii_lowercase().as_str(),
                        "false" | "no" | "off" | "0"
                    )
            })
        })
    }
}

fn entry(path: PathBuf) -> PathEntry {
    PathEntry {
        path,
        required: false,
        origin: Origin::builtin("linked worktree"),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::plan::FakeFs;

    fn repo(config: &str) -> FakeFs {
        FakeFs::new()
            .dir("/r/.git/objects")
            .dir("/r/.git/refs")
            .dir("/r/.git/logs")
            .dir("/r/.git/worktrees/wt")
            .file("/r/.git/config", config)
            .file("/r/.git/worktrees/wt/commondir", "../..\n")
            .file("/r/.git/worktrees/wt/gitdir", "/w/wt/.git\n")
            .file("/w/wt/.git", "gitdir: /r/.git/worktrees/wt\n")
    }

    fn paths(v: Vec<PathEntry>) -> Vec<PathBuf> {
        v.into_iter().map(|e| e.path).collect()
    }

    #[test]
    fn a_linked_worktree_writes_its_git_directory_and_the_shared_objects_refs_and_logs() {
        let fs = repo("[core]\n\tbare = false\n");
        let wt = linked_worktree(Path::new("/w/wt"), &fs).unwrap();
        let granted = [
            "/r/.git/worktrees/wt",
            "/r/.git/objects",
            "/r/.git/refs",
            "/r/.git/logs",
        ];
        assert_eq!(paths(wt.writable(&fs)), granted.map(PathBuf::from));
        let held = [
            "/r/.git/worktrees/wt/commondir",
            "/r/.git/worktrees/wt/gitdir",
        ];
        assert_eq!(paths(wt.held(&fs)), held.map(PathBuf::from));
    }

    #[test]
    fn only_a_worktree_as_git_makes_it_counts() {
        // Its gitdir names another worktree's `.git`.
        let fs = repo("").file("/r/.git/worktrees/wt/gitdir", "/elsewhere/.git\n");
        assert_eq!(linked_worktree(Path::new("/w/wt"), &fs), None);
        let fs = repo("").file("/r/.git/worktrees/wt/commondir", "/x\n");
        assert_eq!(linked_worktree(Path::new("/w/wt"), &fs), None);
        // A repository of its own.
        let fs = FakeFs::new().dir("/w/wt/.git");
        assert_eq!(linked_worktree(Path::new("/w/wt"), &fs), None);
    }

    #[test]
    fn worktree_config_on_and_no_config_worktree_grants_nothing() {
        let fs = repo("[extensions]\n\tworktreeConfig = true\n");
        let wt = linked_worktree(Path::new("/w/wt"), &fs).unwrap();
        assert!(wt.writable(&fs).is_empty());
        let fs = fs.file("/r/.git/worktrees/wt/config.worktree", "[core]\n");
        assert_eq!(wt.writable(&fs).len(), 4);
        assert_eq!(wt.held(&fs).len(), 3);
    }
}
