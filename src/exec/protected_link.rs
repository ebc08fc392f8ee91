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

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "test set-up fails loudly")]
    use super::*;
    use std::os::unix::fs::symlink;

    fn workspace(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("sbx-plink-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::canonicalize(d).unwrap()
    }

    #[test]
    fn a_link_re_pointed_on_the_way_is_what_changed_and_is_put_back_as_it_was() {
        let ws = workspace("hop");
        std::fs::create_dir_all(ws.join("real")).unwrap();
        std::fs::create_dir_all(ws.join("evil")).unwrap();
        symlink("real", ws.join("link2")).unwrap();
        symlink("link2", ws.join(".github")).unwrap();
        let l = ProtectedLink::read(&ws.join(".github"), &ws, "rule".into()).unwrap();
        assert!(l.changes(&ws).is_empty(), "nothing changed yet");
        std::fs::remove_file(ws.join("link2")).unwrap();
        symlink("evil", ws.join("link2")).unwrap();
        let found = l.changes(&ws);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, ws.join("link2"));
        assert_eq!(l.original_link(&ws.join("link2")), Some(Path::new("real")));
        std::fs::remove_dir_all(ws).unwrap();
    }

    #[test]
    fn a_directory_on_the_way_replaced_and_a_target_made_again_are_found() {
        let ws = workspace("dir");
        std::fs::create_dir_all(ws.join("config/github")).unwrap();
        symlink("config/github", ws.join(".github")).unwrap();
        let l = ProtectedLink::read(&ws.join(".github"), &ws, "rule".into()).unwrap();
        std::fs::rename(ws.join("config"), ws.join("config.old")).unwrap();
        std::fs::create_dir_all(ws.join("config/github")).unwrap();
        let found = l.changes(&ws);
        assert!(found.iter().any(|f| f.0 == ws.join("config")), "{found:?}");
        // The link's own text changed: that alone is reported.
        std::fs::remove_file(ws.join(".github")).unwrap();
        symlink("elsewhere", ws.join(".github")).unwrap();
        let found = l.changes(&ws);
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].0.clone(), found[0].1),
            (ws.join(".github"), "replaced")
        );
        std::fs::remove_dir_all(ws).unwrap();
    }
}
