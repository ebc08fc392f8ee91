//! A protected path that is a symbolic link (`.github -> config/github`). The mount holds the
//! file it leads to at the start, where it is; the kernel cannot keep a command from changing
//! the way there: re-pointing another link on it (`.github -> link2 -> real`,
//! `ln -sfn evil link2`), or moving a directory on it away and putting another (or a link) in
//! its place. So the way is recorded before the run, every path of the workspace the
//! resolution passed through with the file at it, and compared after it.
use super::identity::{FileKey, Links};
use crate::links::{Follower, Step};
use std::path::{Path, PathBuf};

/// One path the link's resolution passed through, inside the workspace.
struct Hop {
    path: PathBuf,
    file: Option<FileKey>,
    /// Its text, when it was a link.
    text: Option<PathBuf>,
}

pub(super) struct ProtectedLink {
    pub(super) link: PathBuf,
    pub(super) text: PathBuf,
    /// Where the link led at the start, links on the way resolved.
    target: PathBuf,
    file: Option<FileKey>,
    way: Vec<Hop>,
    rule: String,
}

/// What is at `path`, for the follower.
fn step(path: &Path) -> Step {
    match std::fs::symlink_metadata(path) {
        Err(_) => Step::Missing,
        Ok(m) if m.file_type().is_symlink() => Step::Link(std::fs::read_link(path).ok()),
        Ok(_) => Step::Other,
    }
}

impl ProtectedLink {
    /// The link at `link` and its way through `workspace`; `None` when it is no link.
    pub(super) fn read(link: &Path, workspace: &Path, rule: String) -> Option<Self> {
        let text = std::fs::read_link(link).ok()?;
        let mut way = Vec::new();
        let real = Follower::new(|p: &Path| {
            let s = step(p);
            if p.starts_with(workspace) && p != workspace && p != link {
                let text = match &s {
                    Step::Link(t) => t.clone(),
                    Step::Missing | Step::Other => None,
                };
                way.push(Hop {
                    path: p.to_path_buf(),
                    file: FileKey::of(p, Links::Keep),
                    text,
                });
            }
            s
        })
        .real(link)
        .ok()?;
        Some(Self {
            link: link.to_path_buf(),
            file: FileKey::of(link, Links::Follow),
            text,
            target: real.path,
            way,
            rule,
        })
    }

    /// What changed since the start: the link itself; else each path on its way that is
    /// another file now; else the file it leads to (inside the workspace, where the command
    /// could have made the new one).
    pub(super) fn changes(&self, workspace: &Path) -> Vec<(PathBuf, &'static str, String)> {
        let found = |p: &Path, what| (p.to_path_buf(), what, self.rule.clone());
        if std::fs::read_link(&self.link).ok().as_ref() != Some(&self.text) {
            return vec![found(&self.link, "replaced")];
        }
        let way: Vec<_> = self
            .way
            .iter()
            .filter(|h| FileKey::of(&h.path, Links::Keep) != h.file)
            .map(|h| match h.file {
                None => found(&h.path, "made on the way to a protected link's target"),
                Some(_) => found(&h.path, "on the way to a protected link's target, replaced"),
            })
            .collect();
        if !way.is_empty() {
            return way;
        }
        let retargeted = FileKey::of(&self.link, Links::Follow) != self.file;
        if retargeted && self.target.starts_with(workspace) {
            return vec![found(&self.target, "link target replaced")];
        }
        Vec::new()
    }

    /// The text of the link that was at `path` (the protected link, or one on its way).
    pub(super) fn original_link(&self, path: &Path) -> Option<&Path> {
        if path == self.link {
            return Some(&self.text);
        }
        self.way
            .iter()
            .find(|h| h.path == path)
            .and_then(|h| h.text.as_deref())
    }
}
