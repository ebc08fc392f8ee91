//! The mount layout built in the sandbox's mount namespace: secrets hidden, read-only binds
//! inside writable trees, the private /tmp, /proc and a minimal /dev.
#![forbid(unsafe_code)]

use super::{DirLister, HeldGrant, Namespaces, PlanError};
use crate::capability::{CapabilitySet, Origin, PathEntry};
use crate::links::{Follower, LinkError, Step};
use crate::pathset::under;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// One step of the mount layout built in the sandbox's mount namespace, in order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum MountStep {
    /// Replace `target` by an empty tmpfs, carrying `keep` (which must lie beneath it) over.
    Tmpfs {
        /// The directory replaced.
        target: PathBuf,
        /// Paths beneath it carried over.
        keep: Vec<PathBuf>,
        /// The profile line it comes from.
        origin: Origin,
    },
    /// A fresh procfs for the PID namespace, with /proc/sys read-only.
    Proc,
    /// A minimal /dev: null, zero, full, random, urandom, tty, a private devpts and /dev/shm.
    MinimalDev,
    /// Bind `target` onto itself, still writable. It is a directory between a writable root
    /// and a hidden or read-only path inside it (`.git` for `.git/hooks`, `dotfiles/config`
    /// for `~/.config/gh` when `~/.config -> dotfiles/config`), or a symbolic link inside a
    /// writable root that the path's name leads through: a mount point cannot be renamed,
    /// removed or replaced (EBUSY), so the path cannot be carried off with its parent, nor
    /// its name pointed elsewhere, and the next run find nothing to hide or protect there.
    Pin {
        /// The directory or link pinned.
        target: PathBuf,
        /// Whether it is a symbolic link, pinned itself rather than where it leads.
        link: bool,
        /// The profile line it comes from.
        origin: Origin,
    },
    /// Cover the symbolic link `target` (not where it leads) with a read-only /dev/null: a
    /// denied path leads through it to a tree holding a grant (a command can make such a link
    /// inside a writable tree: `ln -s .. config/gh`). The tree stays granted at its own path;
    /// the denied path leads to nothing, and the link cannot be changed during the run.
    CoverLink {
        /// The link covered, inside a writable tree.
        target: PathBuf,
        /// The denied path, as the profile names it.
        path: PathBuf,
        /// Where its links lead.
        real: PathBuf,
        /// The granted tree there.
        granted: PathBuf,
        /// The profile line it comes from.
        origin: Origin,
    },
    /// Make `target` read-only (recursively), by bind-mounting it onto itself.
    ReadOnly {
        /// The path made read-only.
        target: PathBuf,
        /// The profile line it comes from.
        origin: Origin,
    },
    /// Hide `target`: an empty read-only tmpfs over a directory, a read-only bind of
    /// /dev/null over a file.
    Hide {
        /// The path hidden, links followed.
        target: PathBuf,
        /// Whether it is a directory.
        is_dir: bool,
        /// The denied path as the profile names it, when a symbolic link on it leads to
        /// `target` (`~/.aws -> dotfiles/aws`).
        link: Option<PathBuf>,
        /// The profile line it comes from.
        origin: Origin,
    },
    /// Make every mount read-only and `nosuid` (recursively), except the `writable` trees,
    /// which keep their own flags and become `nosuid,nodev`. Landlock does not govern chmod,
    /// chown, xattrs or times; a read-only mount refuses them all (EROFS).
    ReadOnlyHost {
        /// The trees that stay writable.
        writable: Vec<PathBuf>,
        /// The host's tree is `nodev` too: the sandbox has a /dev of its own, so a device node
        /// elsewhere (a chroot's or container root's `dev`, one made by `mknod`) opens nothing.
        nodev: bool,
    },
}

/// The outermost existing writable trees that keep their host mount, in order: not the private
/// tmp (a fresh tmpfs, where a mount namespace holds one) nor /dev and /proc (mounted afresh).
pub(super) fn writable_roots(
    caps: &CapabilitySet,
    namespaces: &Namespaces,
    tmp: &Path,
    fs: &dyn DirLister,
) -> Vec<PathBuf> {
    let private_tmp = caps.isolation.private_tmp_in(namespaces.mount);
    let fresh = |p: &Path| {
        (private_tmp && p == tmp) || under(p, Path::new("/dev")) || under(p, Path::new("/proc"))
    };
    outermost(
        caps.fs
            .write
            .iter()
            .map(|e| e.path.clone())
            .filter(|p| !fresh(p) && fs.exists(p))
            .collect(),
    )
}

/// The paths that lie beneath no other, sorted, without repeats.
fn outermost(mut paths: Vec<PathBuf>) -> Vec<PathBuf> {
    paths.sort();
    paths.dedup();
    paths
        .iter()
        .filter(|p| !paths.iter().any(|q| q != *p && under(p, q)))
        .cloned()
        .collect()
}

/// What is at `p` as planning sees it, for following links.
fn step_at(fs: &dyn DirLister, p: &Path) -> Step {
    if !fs.exists(p) {
        Step::Missing
    } else if fs.is_symlink(p) {
        Step::Link(fs.read_link(p))
    } else {
        Step::Other
    }
}

/// The first tree the profile grants that lies at or beneath `real`.
fn grant_within<'a>(caps: &'a CapabilitySet, real: &Path) -> Option<&'a PathEntry> {
    let grants = caps.fs.read.iter().chain(&caps.fs.write);
    grants
        .chain(&caps.fs.execute)
        .find(|g| under(&g.path, real))
}

/// A path the layout keeps in place (a hidden or read-only path, a covered link), with the
/// links its denied path passes through on the way: all must stay as they are for the next run
/// to find it there again.
struct Held {
    target: PathBuf,
    links: Vec<PathBuf>,
    origin: Origin,
}

/// The hides and covered links, and what they keep in place.
#[derive(Default)]
struct Hides {
    steps: Vec<MountStep>,
    held: Vec<Held>,
}

/// The outermost writable root at or above `p`: anything strictly beneath it can be renamed.
fn outermost_root<'a>(caps: &'a CapabilitySet, p: &Path) -> Option<&'a Path> {
    caps.fs
        .write
        .iter()
        .map(|w| w.path.as_path())
        .filter(|w| under(p, w))
        // Each is `p` or above it: the shortest is the outermost.
        .min_by_key(|w| w.as_os_str().len())
}

/// Hide each denied read that exists where its links lead (a mount placed on a link would
/// follow it, or fail), but in /proc and /dev, which are mounted afresh. A dangling link hides
/// nothing; a link that cannot be followed is an error rather than a secret left in sight, and
/// so is one that leads to a tree holding a grant, unless a link on the way lies in a writable
/// tree (see [`cover_link`]).
fn hide_steps(caps: &CapabilitySet, fs: &dyn DirLister) -> Result<Hides, PlanError> {
    let fresh = |p: &Path| under(p, Path::new("/proc")) || under(p, Path::new("/dev"));
    let mut follower = Follower::new(|p: &Path| step_at(fs, p));
    let mut out = Hides::default();
    for d in caps.fs.deny_read.iter().filter(|d| !fresh(&d.path)) {
        if !fs.exists(&d.path) {
            let real = follower.real(&d.path).ok();
            if let Some(dir) = real.and_then(|r| blind_dir(caps, fs, &r.path)) {
                hide_blind(dir, follower.links().to_vec(), d, &mut out);
            }
            continue;
        }
        let real = match follower.real(&d.path) {
            Ok(r) if r.exists => r.path,
            // A dangling link, or a loop: the kernel reaches nothing there.
            Ok(_) | Err(LinkError::TooMany) => continue,
            Err(source) => {
                return Err(PlanError::Link {
                    path: d.path.clone(),
                    origin: d.origin.clone(),
                    source,
                });
            }
        };
        let links = follower.links().to_vec();
        let link = (real != d.path).then(|| d.path.clone());
        if let (Some(_), Some(g)) = (&link, grant_within(caps, &real)) {
            cover_link(caps, d, real, g, links, &mut out)?;
            continue;
        }
        let seen = out
            .steps
            .iter()
            .any(|m| matches!(m, MountStep::Hide { target, .. } if *target == real));
        if !fresh(&real) && !seen {
            out.held.push(Held {
                target: real.clone(),
                links,
                origin: d.origin.clone(),
            });
            out.steps.push(MountStep::Hide {
                is_dir: fs.is_dir(&real),
                target: real,
                link,
                origin: d.origin.clone(),
            });
        }
    }
    drop_nested(&mut out);
    Ok(out)
}

/// A hidden path inside a hidden directory is hidden with it: its own mount would find
/// nothing to land on in the empty directory (`~/.local/state/sbx/quarantine` beneath
/// `~/.local/state/sbx`, a profile's `~/.config` above base's `~/.config/gh`).
fn drop_nested(out: &mut Hides) {
    let dirs: Vec<PathBuf> = out
        .steps
        .iter()
        .filter_map(|m| match m {
            MountStep::Hide {
                target,
                is_dir: true,
                ..
            } => Some(target.clone()),
            _ => None,
        })
        .collect();
    let inside = |t: &Path| dirs.iter().any(|d| d != t && under(t, d));
    out.steps
        .retain(|m| !matches!(m, MountStep::Hide { target, .. } if inside(target)));
    out.held.retain(|h| !inside(&h.target));
}

/// The directory in a writable tree that keeps planning from seeing `real`: its deepest
/// existing ancestor, when that cannot be searched. A command that owns it can make it so in
/// one run (`chmod 000 config`), for the next to find nothing to hide or protect beneath it,
/// and make it searchable again in that one; a mount over it keeps it as it is.
fn blind_dir(caps: &CapabilitySet, fs: &dyn DirLister, real: &Path) -> Option<PathBuf> {
    // Nothing above a path outside every writable tree lies inside one.
    let root = outermost_root(caps, real)?;
    let a = parents(real).find(|a| fs.exists(a))?;
    let inside = a != root && under(a, root);
    (inside && fs.is_dir(a) && !fs.searchable(a)).then(|| a.to_path_buf())
}

/// The directories above `p`, nearest first, each found by one byte search where `p` is
/// absolute and normal (`Path::ancestors` parses every component of each).
fn parents(p: &Path) -> impl Iterator<Item = &Path> {
    std::iter::successors(parent(p), |a| parent(a))
}

/// `p`'s parent, by one byte search where `p` is absolute and normal.
fn parent(p: &Path) -> Option<&Path> {
    match crate::pathset::split_last(p.as_os_str()) {
        Some((dir, _)) => Some(Path::new(dir)),
        None => p.parent(),
    }
}

/// Hide `dir`, which keeps planning from seeing whether the denied path `d` is there: an empty
/// directory in its place, so that its mode cannot be changed back during the run.
fn hide_blind(dir: PathBuf, links: Vec<PathBuf>, d: &PathEntry, out: &mut Hides) {
    let seen = |m: &MountStep| matches!(m, MountStep::Hide { target, .. } if *target == dir);
    if !out.steps.iter().any(seen) {
        out.held.push(Held {
            target: dir.clone(),
            links,
            origin: d.origin.clone(),
        });
        out.steps.push(MountStep::Hide {
            target: dir,
            is_dir: true,
            link: None,
            origin: d.origin.clone(),
        });
    }
}

/// A denied path `d` whose links lead to `real`, a tree holding the grant `g`. When one of
/// those links lies in a writable tree, a command may have made it (`ln -s .. config/gh` in a
/// dotfiles workspace): refusing would stop every later run, so the last such link is covered
/// instead, and the denied path leads to nothing. When none does, the user made it, and the
/// run is refused with the names of both.
fn cover_link(
    caps: &CapabilitySet,
    d: &PathEntry,
    real: PathBuf,
    g: &PathEntry,
    links: Vec<PathBuf>,
    out: &mut Hides,
) -> Result<(), PlanError> {
    let inside = |l: &PathBuf| outermost_root(caps, l).is_some_and(|r| l != r);
    let Some(at) = links.iter().rposition(inside) else {
        return Err(PlanError::HoldsGrant(Box::new(HeldGrant {
            path: d.path.clone(),
            real,
            granted: g.path.clone(),
            origin: d.origin.clone(),
            granted_by: g.origin.clone(),
        })));
    };
    let target = links[at].clone();
    let seen = |m: &MountStep| matches!(m, MountStep::CoverLink { target: t, .. } if *t == target);
    if !out.steps.iter().any(seen) {
        out.held.push(Held {
            target: target.clone(),
            links: links[..at].to_vec(),
            origin: d.origin.clone(),
        });
        out.steps.push(MountStep::CoverLink {
            target,
            path: d.path.clone(),
            real,
            granted: g.path.clone(),
            origin: d.origin.clone(),
        });
    }
    Ok(())
}

/// Cover each top-level directory beneath which the profile grants nothing, and that holds
/// no grant, with an empty tmpfs: Landlock below ABI 9 does not govern `connect()` on a path
/// socket, so a socket the user's permissions allow in `/run` or `/var/tmp` would otherwise
/// be reachable from a profile that cannot even list those trees (`strict`). `/sys` holds no
/// sockets and stays as it is; /proc, /dev and the private tmp are mounted afresh anyway.
fn ungranted_top_dirs(caps: &CapabilitySet, tmp: &Path, fs: &dyn DirLister) -> Vec<PathBuf> {
    let grants: Vec<&Path> = caps
        .fs
        .read
        .iter()
        .chain(&caps.fs.write)
        .chain(&caps.fs.execute)
        .map(|e| e.path.as_path())
        .collect();
    let fresh = ["/proc", "/dev", "/sys"].map(Path::new);
    fs.list(Path::new("/"))
        .into_iter()
        .filter(|c| !fresh.contains(&c.as_path()) && c.as_path() != tmp)
        .filter(|c| !grants.iter().any(|g| under(g, c) || under(c, g)))
        .filter(|c| fs.is_dir(c) && !fs.is_symlink(c))
        .collect()
}

/// Pins that keep `held` where its denied path leads: each link on the way that lies in a
/// writable root, and the directories between the outermost such root and the links and the
/// path itself (which its own mount holds).
fn pins_for(caps: &CapabilitySet, fs: &dyn DirLister, held: &Held, pins: &mut Vec<MountStep>) {
    let mut add = |target: &Path, link: bool| {
        if !pins
            .iter()
            .any(|m| matches!(m, MountStep::Pin { target: t, .. } if t == target))
        {
            pins.push(MountStep::Pin {
                target: target.to_path_buf(),
                link,
                origin: held.origin.clone(),
            });
        }
    };
    let links = held.links.iter().map(|l| (l, true));
    for (p, link) in links.chain([(&held.target, false)]) {
        let Some(root) = outermost_root(caps, p) else {
            continue;
        };
        for a in parents(p) {
            if a == root || !under(a, root) {
                break;
            }
            if fs.is_dir(a) && !fs.is_symlink(a) {
                add(a, false);
            }
        }
        if link && p != root {
            add(p, true);
        }
    }
}

/// The read-only binds of the denied writes that exist beneath a writable root, and what
/// keeps them in place. A dangling link gets none: there is no file to hold, and the check
/// after the run moves one made there during it to quarantine. A directory that keeps planning
/// from seeing one ([`blind_dir`]) is made read-only itself.
fn read_only_steps(caps: &CapabilitySet, fs: &dyn DirLister) -> (Vec<MountStep>, Vec<Held>) {
    let mut follower = Follower::new(|p: &Path| step_at(fs, p));
    let (mut steps, mut held) = (Vec::new(), Vec::<Held>::new());
    for d in &caps.fs.deny_write {
        if outermost_root(caps, &d.path).is_none() {
            continue;
        }
        let Ok(real) = follower.real(&d.path) else {
            continue;
        };
        let (bind, target) = match (real.exists, blind_dir(caps, fs, &real.path)) {
            (true, _) => (d.path.clone(), real.path),
            (false, Some(dir)) => (dir.clone(), dir),
            (false, None) => continue,
        };
        if held.iter().any(|h| h.target == target) {
            continue;
        }
        held.push(Held {
            target,
            links: follower.links().to_vec(),
            origin: d.origin.clone(),
        });
        steps.push(MountStep::ReadOnly {
            target: bind,
            origin: d.origin.clone(),
        });
    }
    (steps, held)
}

/// The pins of every held path (outer first, so that each later bind lands inside the
/// mounts before it), then the read-only binds.
fn pin_and_read_only_steps(
    caps: &CapabilitySet,
    fs: &dyn DirLister,
    hidden: &[Held],
) -> Vec<MountStep> {
    let (read_only, protected) = read_only_steps(caps, fs);
    let mut pins = Vec::new();
    for h in hidden.iter().chain(&protected) {
        pins_for(caps, fs, h, &mut pins);
    }
    let depth = |m: &MountStep| match m {
        MountStep::Pin { target, .. } => target.components().count(),
        _ => 0,
    };
    pins.sort_by_key(depth);
    pins.extend(read_only);
    pins
}

/// The report's lines for the links covered, one each: each run's notices name them, since
/// the denied path is held by another mount than it asks for.
pub(super) fn covered_links_layers(mounts: &[MountStep]) -> Vec<super::Layer> {
    mounts
        .iter()
        .filter_map(|m| match m {
            MountStep::CoverLink {
                target,
                path,
                real,
                granted,
                origin,
            } => Some(format!(
                "{} ({origin}) leads through the symbolic link {} in a writable tree to {}, \
                 which holds {} that the profile grants: the link is covered by an empty file \
                 for this run; remove it, or point it at the secret's own directory or file",
                path.display(),
                target.display(),
                real.display(),
                granted.display()
            )),
            _ => None,
        })
        .map(|detail| super::Layer {
            name: COVERED_LINKS.into(),
            status: super::LayerStatus::Enforced,
            detail,
        })
        .collect()
}

/// The name of the report's line for covered links.
pub const COVERED_LINKS: &str = "covered-links";

/// The private tmp, carrying over the granted paths that lie beneath it.
fn private_tmp_step(caps: &CapabilitySet, tmp: &Path, fs: &dyn DirLister) -> MountStep {
    let outer = outermost(
        caps.fs
            .read
            .iter()
            .chain(&caps.fs.write)
            .chain(&caps.fs.execute)
            .filter(|e| e.path != tmp && under(&e.path, tmp) && fs.exists(&e.path))
            .map(|e| e.path.clone())
            .collect(),
    );
    MountStep::Tmpfs {
        target: tmp.to_path_buf(),
        keep: outer,
        origin: Origin::builtin("isolation.private_tmp"),
    }
}

/// The read-only binds of the protected names found one level below the workspace root
/// ([`super::PlanInput::below`]) that lie in a writable tree and in no path already read-only.
fn below_steps(caps: &CapabilitySet, below: &[PathEntry], mounts: &[MountStep]) -> Vec<MountStep> {
    let read_only: Vec<&Path> = mounts
        .iter()
        .filter_map(|m| match m {
            MountStep::ReadOnly { target, .. } => Some(target.as_path()),
            MountStep::Tmpfs { .. }
            | MountStep::Proc
            | MountStep::MinimalDev
            | MountStep::Pin { .. }
            | MountStep::CoverLink { .. }
            | MountStep::Hide { .. }
            | MountStep::ReadOnlyHost { .. } => None,
        })
        .collect();
    below
        .iter()
        .filter(|e| outermost_root(caps, &e.path).is_some())
        .filter(|e| !read_only.iter().any(|r| e.path.starts_with(r)))
        .map(|e| MountStep::ReadOnly {
            target: e.path.clone(),
            origin: e.origin.clone(),
        })
        .collect()
}

/// The mount steps, in order; none without a mount namespace.
pub(super) fn mount_layout(
    caps: &CapabilitySet,
    namespaces: &Namespaces,
    input: &super::PlanInput<'_>,
    fs: &dyn DirLister,
) -> Result<Vec<MountStep>, PlanError> {
    if !namespaces.mount {
        return Ok(Vec::new());
    }
    let tmp = input.tmp;
    let tops = ungranted_top_dirs(caps, tmp, fs);
    let hides = hide_steps(caps, fs)?;
    // A secret inside a covered tree needs no mount of its own.
    let mut mounts: Vec<MountStep> = hides
        .steps
        .into_iter()
        .filter(|m| !matches!(m, MountStep::Hide { target, .. } if tops.iter().any(|t| under(target, t))))
        .collect();
    mounts.extend(tops.into_iter().map(|target| MountStep::Hide {
        target,
        is_dir: true,
        link: None,
        origin: Origin::builtin("filesystem.read (nothing granted beneath)"),
    }));
    mounts.push(MountStep::ReadOnlyHost {
        writable: writable_roots(caps, namespaces, tmp, fs),
        nodev: caps.isolation.minimal_dev,
    });
    // After the hides: the pins and read-only binds, then those one level down.
    mounts.extend(pin_and_read_only_steps(caps, fs, &hides.held));
    mounts.extend(below_steps(caps, input.below, &mounts));
    // The private tmp comes after hides and read-only binds: kept paths carry them along.
    if caps.isolation.private_tmp_in(namespaces.mount) {
        mounts.push(private_tmp_step(caps, tmp, fs));
    }
    if namespaces.pid {
        mounts.push(MountStep::Proc);
    }
    if caps.isolation.minimal_dev {
        mounts.push(MountStep::MinimalDev);
    }
    Ok(mounts)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::plan::FakeFs;

    fn entry(p: &str) -> PathEntry {
        PathEntry {
            path: PathBuf::from(p),
            required: false,
            origin: Origin::builtin("test"),
        }
    }

    fn caps(deny: &[&str]) -> CapabilitySet {
        use crate::capability::{EnvFilter, FsCaps, Isolation, Limits, NetworkMode};
        CapabilitySet {
            fs: FsCaps {
                read: vec![entry("/")],
                write: vec![entry("/h/ws")],
                deny_read: deny.iter().map(|p| entry(p)).collect(),
                ..FsCaps::default()
            },
            network: NetworkMode::None,
            net_rules: crate::capability::NetRules::default(),
            limits: Limits::default(),
            isolation: Isolation::default(),
            env: EnvFilter::default(),
            extra_denied_syscalls: Vec::new(),
            requires: Vec::new(),
            origins: Default::default(),
        }
    }

    fn hides(steps: &[MountStep]) -> Vec<(String, Option<String>)> {
        let s = |p: &Path| p.display().to_string();
        steps
            .iter()
            .filter_map(|m| match m {
                MountStep::Hide { target, link, .. } => Some((s(target), link.as_deref().map(s))),
                _ => None,
            })
            .collect()
    }

    /// Denied paths behind links are hidden where the links lead, once each; a dangling link
    /// hides nothing; a link to a granted tree or one that cannot be read is an error.
    #[test]
    fn hides_are_placed_where_links_lead() {
        let fs = FakeFs::new()
            .dir("/h/ws")
            .file("/h/dot/aws/credentials", "")
            .file("/h/dot/config/gh/hosts.yml", "")
            .file("/h/dot/netrc", "")
            .file("/h/.pgpass", "")
            .symlink("/h/.aws", "dot/aws")
            .symlink("/h/.config", "/h/dot/config")
            .symlink("/h/.netrc", "dot/netrc")
            .symlink("/h/.kube", "dot/kube");
        let deny = [
            "/h/.aws",
            "/h/.config/gh",
            "/h/.netrc",
            "/h/.kube",
            "/h/.pgpass",
            "/h/dot/aws",
        ];
        let steps = hide_steps(&caps(&deny), &fs).unwrap().steps;
        let some = |s: &str| Some(s.to_string());
        assert_eq!(
            hides(&steps),
            [
                ("/h/dot/aws".into(), some("/h/.aws")),
                ("/h/dot/config/gh".into(), some("/h/.config/gh")),
                ("/h/dot/netrc".into(), some("/h/.netrc")),
                ("/h/.pgpass".into(), None),
            ]
        );
        let to_ws = fs.clone().symlink("/h/.ssh", "ws");
        let err = hide_steps(&caps(&["/h/.ssh"]), &to_ws).err().unwrap();
        assert!(
            matches!(err, PlanError::HoldsGrant(ref h) if h.granted == Path::new("/h/ws")),
            "{err}"
        );
        struct Unreadable(FakeFs);
        impl DirLister for Unreadable {
            fn list(&self, d: &Path) -> Vec<PathBuf> {
                self.0.list(d)
            }
            fn is_dir(&self, p: &Path) -> bool {
                self.0.is_dir(p)
            }
            fn exists(&self, p: &Path) -> bool {
                DirLister::exists(&self.0, p)
            }
            fn is_symlink(&self, p: &Path) -> bool {
                self.0.is_symlink(p)
            }
            fn read_link(&self, _: &Path) -> Option<PathBuf> {
                None
            }
            fn name_case(&self, p: &Path) -> crate::host::NameCase {
                self.0.name_case(p)
            }
            fn name_case_in(&self, d: &Path) -> crate::host::NameCase {
                self.0.name_case_in(d)
            }
        }
        let err = hide_steps(&caps(&["/h/.aws"]), &Unreadable(fs))
            .err()
            .unwrap();
        assert!(matches!(err, PlanError::Link { .. }), "{err}");
    }

    fn read_only(steps: &[MountStep]) -> Vec<&Path> {
        steps
            .iter()
            .filter_map(|m| match m {
                MountStep::ReadOnly { target, .. } => Some(target.as_path()),
                _ => None,
            })
            .collect()
    }

    fn pins(steps: &[MountStep]) -> Vec<(String, bool)> {
        steps
            .iter()
            .filter_map(|m| match m {
                MountStep::Pin { target, link, .. } => Some((target.display().to_string(), *link)),
                _ => None,
            })
            .collect()
    }

    /// A hidden path inside a hidden directory gets no mount of its own, in either order:
    /// the empty directory hides it, and its mount would find nothing to land on.
    #[test]
    fn a_denial_inside_a_hidden_directory_is_hidden_with_it() {
        let fs = FakeFs::new()
            .file("/h/.local/state/sbx/quarantine/1/x", "")
            .file("/h/.config/gh/hosts.yml", "");
        let outer_first = ["/h/.local/state/sbx", "/h/.local/state/sbx/quarantine"];
        let inner_first = ["/h/.config/gh", "/h/.config"];
        for (list, outer) in [(outer_first, outer_first[0]), (inner_first, inner_first[1])] {
            let found = hide_steps(&caps(&list), &fs).unwrap();
            let targets: Vec<String> = hides(&found.steps).into_iter().map(|(t, _)| t).collect();
            assert_eq!(targets, [outer.to_string()]);
            assert_eq!(found.held.len(), 1);
        }
    }

    /// In a dotfiles workspace, the directories above each hidden secret and the links on the
    /// way to it are pinned, outer first; a link made there to the workspace is covered; a
    /// link made outside the writable trees to it is still an error.
    #[test]
    fn what_lies_in_a_writable_tree_on_the_way_to_a_secret_is_pinned() {
        let fs = FakeFs::new()
            .file("/h/ws/config/gh/hosts.yml", "")
            .file("/h/ws/store/npmrc", "")
            .dir("/h/ws/aws")
            .symlink("/h/.config", "ws/config")
            .symlink("/h/.aws", "ws/aws")
            .symlink("/h/ws/config/npm", "../store")
            .symlink("/h/.npmrc", ".config/npm/npmrc");
        let c = caps(&["/h/.config/gh", "/h/.aws", "/h/.npmrc"]);
        let hides = hide_steps(&c, &fs).unwrap();
        let steps = pin_and_read_only_steps(&c, &fs, &hides.held);
        let pin = |p: &str, link: bool| (p.to_string(), link);
        assert_eq!(
            pins(&steps),
            [
                pin("/h/ws/config", false),
                pin("/h/ws/store", false),
                pin("/h/ws/config/npm", true)
            ]
        );
        let made = fs.clone().symlink("/h/ws/aws/dot", "..");
        let c = caps(&["/h/.aws/dot"]);
        let hides = hide_steps(&c, &made).unwrap();
        assert!(
            matches!(&hides.steps[..], [MountStep::CoverLink { target, granted, .. }]
                if target == Path::new("/h/ws/aws/dot") && granted == Path::new("/h/ws")),
            "{:?}",
            hides.steps
        );
        let steps = pin_and_read_only_steps(&c, &made, &hides.held);
        assert_eq!(pins(&steps), [pin("/h/ws/aws", false)]);
        let outside = fs.symlink("/h/.kube", "ws");
        let err = hide_steps(&caps(&["/h/.kube"]), &outside).err().unwrap();
        assert!(matches!(err, PlanError::HoldsGrant(_)), "{err}");
    }

    /// The protected names found one level down are made read-only after the binds of the
    /// root's, without pins; one inside a path already read-only, or outside every writable
    /// tree, gets none.
    #[test]
    fn protected_names_one_level_down_are_read_only_without_pins() {
        let fs = FakeFs::new()
            .file("/h/ws/sub/.envrc", "")
            .file("/h/ws/.vscode/sub/.envrc", "")
            .dir("/h/ws/.vscode");
        let mut c = caps(&[]);
        c.fs.deny_write = vec![entry("/h/ws/.vscode")];
        let below = [
            entry("/h/ws/sub/.envrc"),
            entry("/h/ws/.vscode/sub/.envrc"),
            entry("/h/elsewhere/.envrc"),
        ];
        let host = crate::plan::capable_host(1000);
        let input = crate::plan::PlanInput {
            caps: &c,
            host: &host,
            tmp: Path::new("/tmp"),
            below: &below,
        };
        let ns = Namespaces {
            user: true,
            mount: true,
            pid: true,
            net: true,
            ipc: true,
            uts: true,
        };
        let steps = mount_layout(&c, &ns, &input, &fs).unwrap();
        let read_only = read_only(&steps);
        assert_eq!(
            read_only,
            [Path::new("/h/ws/.vscode"), Path::new("/h/ws/sub/.envrc")]
        );
        assert!(pins(&steps).is_empty(), "{steps:?}");
    }

    /// A protected link that leads nowhere gets no read-only bind; one that leads somewhere
    /// gets it, with its target's parent and the link pinned.
    #[test]
    fn a_dangling_protected_link_gets_no_read_only_bind() {
        let fs = FakeFs::new()
            .dir("/h/ws/sub/claude")
            .symlink("/h/ws/.claude", "sub/claude")
            .symlink("/h/ws/.envrc", ".envrc.local");
        let mut c = caps(&[]);
        c.fs.deny_write = vec![entry("/h/ws/.claude"), entry("/h/ws/.envrc")];
        let steps = pin_and_read_only_steps(&c, &fs, &[]);
        let read_only = read_only(&steps);
        assert_eq!(read_only, [Path::new("/h/ws/.claude")]);
        let pin = |p: &str, link: bool| (p.to_string(), link);
        assert_eq!(
            pins(&steps),
            [pin("/h/ws/.claude", true), pin("/h/ws/sub", false)]
        );
    }
}
