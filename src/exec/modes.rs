//! The modes of the directories that hold protected paths: the workspace root, `.git`, and the
//! directory of each protected path that exists (`app` for `app/.envrc`). The mounts keep the
//! protected paths themselves, not these: a command could `chmod 777 .git` and leave it so,
//! and any local user could then put another `.git/config` in place after the run. So each
//! one's mode is recorded before the run, and write permission for group or others that the
//! run added is taken off again after it, and reported.
use super::protect::ProtectedPath;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Write permission for group and others.
const OTHERS_WRITE: u32 = 0o022;

/// A directory as it was before the run: its path, device, inode and mode.
struct Dir {
    path: PathBuf,
    dev: u64,
    ino: u64,
    mode: u32,
}

/// The directories recorded before a run.
pub(super) struct Modes(Vec<Dir>);

impl Modes {
    /// The workspace root where the profile protects anything there (`protects`), its `.git`
    /// where it protects git's files (`git`), and the directory of each path in `held` (inside
    /// the workspace), as they are now.
    pub(super) fn take<'a>(
        workspace: &Path,
        protects: bool,
        git: bool,
        held: impl Iterator<Item = &'a Path>,
    ) -> Self {
        if !protects {
            return Self(Vec::new());
        }
        let mut paths = vec![workspace.to_path_buf()];
        if git {
            paths.push(workspace.join(".git"));
        }
        for p in held {
            if let Some(d) = p.parent().filter(|d| d.starts_with(workspace)) {
                paths.push(d.to_path_buf());
            }
        }
        paths.sort();
        paths.dedup();
        let dirs = paths
            .into_iter()
            .filter_map(|path| {
                let m = super::walk::lstat(&path).ok().filter(|m| m.is_dir())?;
                Some(Dir {
                    dev: m.dev(),
                    ino: m.ino(),
                    mode: m.mode(),
                    path,
                })
            })
            .collect();
        Self(dirs)
    }

    /// Take off the write permission for group or others that the run gave each directory
    /// (the same directory still there), and report each one put back.
    pub(super) fn settle(&self) -> Vec<ProtectedPath> {
        self.0.iter().filter_map(Dir::settle).collect()
    }
}

impl Dir {
    fn settle(&self) -> Option<ProtectedPath> {
        let m = super::walk::lstat(&self.path).ok()?;
        let added = m.mode() & OTHERS_WRITE & !self.mode;
        if !m.is_dir() || (m.dev(), m.ino()) != (self.dev, self.ino) || added == 0 {
            return None;
        }
        let mode = m.mode() & 0o7777 & !added;
        let error = std::fs::set_permissions(&self.path, std::fs::Permissions::from_mode(mode))
            .err()
            .map(|e| format!("taking the write permission off again: {e}"));
        Some(ProtectedPath {
            path: self.path.clone(),
            change: format!(
                "made writable by group or others (mode {:o}; the write permission is taken off)",
                m.mode() & 0o7777
            ),
            rule: "a directory that holds protected paths".into(),
            quarantined: error.is_none().then(|| self.path.clone()),
            error,
        })
    }
}
