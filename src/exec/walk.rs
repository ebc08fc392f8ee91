//! The workspace's directories as the checks after a run look at them, listed once per check:
//! the root and the directories directly in it are read, their subdirectories named. The git
//! scan looks for `.git` entries down to two levels; the protected names that programs load
//! from the directory they start in are looked for one level down.
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Directories not searched: they hold packages by the thousand, or are git's own.
pub(super) const SKIP: &[&str] = &["node_modules", ".git"];

/// One listing of the workspace.
pub(super) struct Walk {
    /// Each directory directly in the workspace (not a link, not skipped), with the names
    /// in it.
    pub(super) first: Vec<(PathBuf, Vec<OsString>)>,
    /// The directories directly in those.
    pub(super) second: Vec<PathBuf>,
}

impl Walk {
    pub(super) fn of(workspace: &Path) -> Self {
        let mut first = Vec::new();
        let mut second = Vec::new();
        for dir in listed(workspace).dirs {
            let l = listed(&dir);
            second.extend(l.dirs);
            first.push((dir, l.names));
        }
        Self { first, second }
    }

    /// The `.git` paths to look at, existing or not: at the root and two levels below it.
    pub(super) fn dot_gits(&self, workspace: &Path) -> Vec<PathBuf> {
        std::iter::once(workspace)
            .chain(self.first.iter().map(|(d, _)| d.as_path()))
            .chain(self.second.iter().map(PathBuf::as_path))
            .map(|d| d.join(".git"))
            .collect()
    }
}

/// The names in a directory, and the real directories among them that are not skipped.
struct Listed {
    names: Vec<OsString>,
    dirs: Vec<PathBuf>,
}

fn listed(dir: &Path) -> Listed {
    let mut out = Listed {
        names: Vec::new(),
        dirs: Vec::new(),
    };
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.filter_map(Result::ok) {
        let name = e.file_name();
        let skip = SKIP.iter().any(|s| name == *s);
        if !skip && e.file_type().is_ok_and(|t| t.is_dir()) {
            out.dirs.push(e.path());
        }
        out.names.push(name);
    }
    out
}
