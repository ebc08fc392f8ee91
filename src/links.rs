//! Where a path's symbolic links lead, as the kernel follows them. Resolving a profile (which
//! the gate judges by) and planning the mounts (which the kernel applies) both ask it, each of
//! its own view of the file system, so that a secret behind a link (`~/.aws -> dotfiles/aws`,
//! `~/.config -> dotfiles/config`) is denied at the file it names by both.
#![forbid(unsafe_code)]

use crate::pathset::PathMap;
use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

/// How many links one path may pass through: the kernel's limit, past which it answers ELOOP.
pub const MAX_LINKS: usize = 40;

/// What is at one path, not following a final link.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Nothing: no link can lie beneath it either.
    Missing,
    /// A symbolic link with this text; `None` when the text could not be read.
    Link(Option<PathBuf>),
    /// A file, directory or anything else that is no link.
    Other,
}

/// A path with every link in it followed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Real {
    /// The path, absolute and normal, without links in the part that exists.
    pub path: PathBuf,
    /// Whether anything is at it.
    pub exists: bool,
}

/// Why a path's links could not be followed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LinkError {
    /// More links than the kernel follows (a loop, most likely): the kernel reaches nothing.
    #[error("it passes through more than {MAX_LINKS} symbolic links (a loop)")]
    TooMany,
    /// The link's text could not be read.
    #[error("the symbolic link {} cannot be read", link.display())]
    Unreadable {
        /// The link.
        link: PathBuf,
    },
}

/// Follows links through `ask`, remembering where each directory on the way leads: the
/// denied paths of a profile share a few directories (the home, `~/.config`).
pub struct Follower<F: FnMut(&Path) -> Step> {
    ask: F,
    /// Each directory followed, with the links it passed through.
    dirs: PathMap<(Real, Vec<PathBuf>)>,
    /// The links the current path passed through.
    trail: Vec<PathBuf>,
}

impl<F: FnMut(&Path) -> Step> Follower<F> {
    /// A follower asking `ask` what is at each path.
    pub fn new(ask: F) -> Self {
        Self {
            ask,
            dirs: PathMap::default(),
            trail: Vec::new(),
        }
    }

    /// `path` (absolute and normal) with every link in it followed, the last one included.
    pub fn real(&mut self, path: &Path) -> Result<Real, LinkError> {
        let mut hops = 0;
        self.trail.clear();
        self.real_counted(path, &mut hops)
    }

    /// `path` (absolute, with `.` and `..` as written) walked from the root one component at
    /// a time, as the kernel walks it: each existing link is followed before the next
    /// component applies, so a `..` after a link climbs from where the link led
    /// (`~/.config/../x` is `x` beside the directory `~/.config` names). Past the first
    /// missing component nothing is asked and `..` folds lexically. The last component's link
    /// is followed too; [`Follower::resolve_split`] also gives the name itself.
    pub fn resolve(&mut self, path: &Path) -> Result<Real, LinkError> {
        self.resolve_split(path).map(|(_, real)| real)
    }

    /// [`Follower::resolve`], with the path's last name as the kernel finds it without
    /// following it (what `rm`, `mv` or `ln -s` act on): its directory resolved, the name
    /// joined. The two are one path when the last name is no link.
    pub fn resolve_split(&mut self, path: &Path) -> Result<(Real, Real), LinkError> {
        let mut hops = 0;
        self.trail.clear();
        let root = Real {
            path: PathBuf::from("/"),
            exists: true,
        };
        let last = match path.components().next_back() {
            Some(Component::Normal(n)) => Some(n),
            Some(_) | None => None,
        };
        let Some(name) = last else {
            let real = self.walk(root, path, &mut hops)?;
            return Ok((real.clone(), real));
        };
        let dir = self.walk(root, path.parent().unwrap_or(Path::new("/")), &mut hops)?;
        let here = dir.path.join(name);
        let (dir_exists, links_before) = (dir.exists, self.trail.len());
        let real = self.step(dir, name, &mut hops)?;
        // A link is there even when it leads nowhere.
        let named = Real {
            path: here,
            exists: dir_exists && (real.exists || self.trail.len() > links_before),
        };
        Ok((named, real))
    }

    /// The links the last [`Follower::real`] passed through, in order, each where it lies
    /// with the links above it followed: what must stay as it is for the path to lead where
    /// it led.
    pub fn links(&self) -> &[PathBuf] {
        &self.trail
    }

    fn real_counted(&mut self, path: &Path, hops: &mut usize) -> Result<Real, LinkError> {
        let Some((parent, name)) = parent_and_name(path) else {
            return Ok(Real {
                path: path.to_path_buf(),
                exists: true,
            });
        };
        if let Some((dir, links)) = self.dirs.get(parent) {
            self.trail.extend(links.iter().cloned());
            // The common case, a name in a directory followed before: no copy of it.
            let (here, exists) = (crate::pathset::child(&dir.path, name), dir.exists);
            return match exists.then(|| (self.ask)(&here)) {
                Some(Step::Link(Some(text))) => {
                    let dir = self.dirs[parent].0.clone();
                    self.through(dir, here, &text, hops)
                }
                None | Some(Step::Missing) => Ok(Real {
                    path: here,
                    exists: false,
                }),
                Some(Step::Other) => Ok(Real {
                    path: here,
                    exists: true,
                }),
                Some(Step::Link(None)) => Err(LinkError::Unreadable { link: here }),
            };
        }
        let start = self.trail.len();
        let d = self.real_counted(Path::new(parent), hops)?;
        let links = self.trail[start..].to_vec();
        self.dirs.insert(parent.to_os_string(), (d.clone(), links));
        self.step(d, name, hops)
    }

    /// `dir` (followed already) joined with `name`, a link there followed.
    fn step(&mut self, dir: Real, name: &OsStr, hops: &mut usize) -> Result<Real, LinkError> {
        let here = crate::pathset::child(&dir.path, name);
        if !dir.exists {
            return Ok(Real {
                path: here,
                exists: false,
            });
        }
        match (self.ask)(&here) {
            Step::Missing => Ok(Real {
                path: here,
                exists: false,
            }),
            Step::Other => Ok(Real {
                path: here,
                exists: true,
            }),
            Step::Link(None) => Err(LinkError::Unreadable { link: here }),
            Step::Link(Some(text)) => self.through(dir, here, &text, hops),
        }
    }

    /// The link at `here`, in `dir`, with this text, followed.
    fn through(
        &mut self,
        dir: Real,
        here: PathBuf,
        text: &Path,
        hops: &mut usize,
    ) -> Result<Real, LinkError> {
        self.trail.push(here);
        *hops += 1;
        if *hops > MAX_LINKS {
            return Err(LinkError::TooMany);
        }
        self.walk(dir, text, hops)
    }

    /// `text` (a link's, relative to `dir` unless absolute) followed component by component:
    /// a `..` after a link climbs from where the link led, as the kernel does.
    fn walk(&mut self, dir: Real, text: &Path, hops: &mut usize) -> Result<Real, LinkError> {
        let mut cur = dir;
        for c in text.components() {
            cur = match c {
                Component::RootDir | Component::Prefix(_) => Real {
                    path: PathBuf::from("/"),
                    exists: true,
                },
                Component::CurDir => cur,
                Component::ParentDir => Real {
                    path: cur.path.parent().unwrap_or(Path::new("/")).to_path_buf(),
                    exists: cur.exists,
                },
                Component::Normal(n) => self.step(cur, n, hops)?,
            };
        }
        Ok(cur)
    }
}

/// `path`'s parent and last name, by one byte search where `path` is absolute and normal.
fn parent_and_name(path: &Path) -> Option<(&OsStr, &OsStr)> {
    crate::pathset::split_last(path.as_os_str())
        .or_else(|| Some((path.parent()?.as_os_str(), path.file_name()?)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Real links in a temporary directory, followed as the kernel does (`canonicalize`).
    #[test]
    fn links_are_followed_as_the_kernel_follows_them() {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap();
        let r = |p: &str| root.join(p);
        std::fs::create_dir_all(r("dot/aws")).unwrap();
        std::fs::create_dir_all(r("dot/config/gh")).unwrap();
        std::fs::create_dir_all(r("h")).unwrap();
        std::fs::write(r("dot/netrc"), "").unwrap();
        let link = |target: &str, at: &str| std::os::unix::fs::symlink(target, r(at)).unwrap();
        link("../dot/aws", "h/.aws");
        link(r("dot/config").to_str().unwrap(), "h/.config");
        link("../dot/netrc", "h/.netrc");
        link(".aws/../netrc", "h/.twisted");
        link("../dot/nowhere", "h/.dangling");
        link("loop-b", "h/loop-a");
        link("loop-a", "h/loop-b");
        let mut f = Follower::new(|p: &Path| match p.symlink_metadata() {
            Err(_) => Step::Missing,
            Ok(m) if m.file_type().is_symlink() => Step::Link(std::fs::read_link(p).ok()),
            Ok(_) => Step::Other,
        });
        for p in ["h/.aws", "h/.config/gh", "h/.netrc", "h/.twisted", "h"] {
            let real = f.real(&r(p)).unwrap();
            assert_eq!(real.path, std::fs::canonicalize(r(p)).unwrap(), "{p}");
            assert!(real.exists, "{p}");
        }
        let dangling = f.real(&r("h/.dangling")).unwrap();
        assert_eq!((dangling.path, dangling.exists), (r("dot/nowhere"), false));
        let below = f.real(&r("h/.config/none/x")).unwrap();
        assert_eq!((below.path, below.exists), (r("dot/config/none/x"), false));
        // The links passed, each where it lies, also when the directory above was followed
        // before.
        f.real(&r("h/.twisted")).unwrap();
        assert_eq!(f.links(), [r("h/.twisted"), r("h/.aws")]);
        f.real(&r("h/.config/gh")).unwrap();
        assert_eq!(f.links(), [r("h/.config")]);
        assert_eq!(f.real(&r("h/loop-a/x")), Err(LinkError::TooMany));
    }

    /// A `..` after a link climbs from where the link led, as `canonicalize` (the kernel)
    /// does, not from the link; the name itself is given beside, unfollowed.
    #[test]
    fn a_dotdot_after_a_link_climbs_from_its_target() {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap();
        let r = |p: &str| root.join(p);
        std::fs::create_dir_all(r("h/dots/config")).unwrap();
        std::fs::create_dir_all(r("ws")).unwrap();
        std::fs::write(r("h/dots/.netrc"), "").unwrap();
        std::fs::write(r("h/.netrc"), "").unwrap();
        std::os::unix::fs::symlink(r("h/dots/config"), r("h/.config")).unwrap();
        std::os::unix::fs::symlink(r("h"), r("ws/home")).unwrap();
        let mut f = Follower::new(|p: &Path| match p.symlink_metadata() {
            Err(_) => Step::Missing,
            Ok(m) if m.file_type().is_symlink() => Step::Link(std::fs::read_link(p).ok()),
            Ok(_) => Step::Other,
        });
        for p in [
            "h/.config/../.netrc",
            "ws/home/../h/.netrc",
            "ws/./home/dots/../.netrc",
        ] {
            let real = f.resolve(&r(p)).unwrap();
            assert_eq!(real.path, std::fs::canonicalize(r(p)).unwrap(), "{p}");
            assert!(real.exists, "{p}");
        }
        // Past the first missing name, lexical.
        let past = f.resolve(&r("h/none/../.config/../x")).unwrap();
        assert_eq!((past.path, past.exists), (r("h/x"), false));
        let (named, real) = f.resolve_split(&r("ws/home")).unwrap();
        assert_eq!((named.path, real.path), (r("ws/home"), r("h")));
        assert!(named.exists && real.exists);
    }

    /// With no link on the way, one question per name up to the first missing one and none
    /// for `.` and `..`; a name a later `..` undoes is asked too, since it may be a link.
    #[test]
    fn a_path_without_links_asks_once_per_existing_name() {
        let mut asked = Vec::new();
        let mut f = Follower::new(|p: &Path| {
            asked.push(p.to_path_buf());
            if p.starts_with("/w/gone") {
                Step::Missing
            } else {
                Step::Other
            }
        });
        let real = f.resolve(Path::new("/w/src/../gone/a/../b")).unwrap();
        assert_eq!(
            (real.path.as_path(), real.exists),
            (Path::new("/w/gone/b"), false)
        );
        drop(f);
        assert_eq!(
            asked,
            [Path::new("/w"), Path::new("/w/src"), Path::new("/w/gone")]
        );
    }
}
