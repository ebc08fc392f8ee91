//! The mount layout built in the sandbox's mount namespace: secrets hidden, read-only binds
//! inside writable trees, the private /tmp, /proc and a minimal /dev.
#![forbid(unsafe_code)]

use super::{DirLister, HeldGrant, Namespaces, PlanError};
use crate::capability::{CapabilitySet, Origin, PathEntry};
use crate::links::{Follower, LinkError, Step};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// One step of the mount layout built in the sandbox's mount namespace, in order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
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
    /// and a read-only path inside it (`.git` for `.git/hooks`): a mount point cannot be
    /// renamed or removed (EBUSY), so the read-only path cannot be carried off with its parent
    /// and the parent replaced by a writable copy.
    Pin {
        /// The directory pinned.
        target: PathBuf,
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
        #[serde(skip_serializing_if = "Option::is_none")]
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
/// tmp (a fresh tmpfs) nor /dev and /proc (mounted afresh).
pub(super) fn writable_roots(caps: &CapabilitySet, tmp: &Path, fs: &dyn DirLister) -> Vec<PathBuf> {
    let fresh = |p: &Path| {
        (caps.isolation.private_tmp && p == tmp) || p.starts_with("/dev") || p.starts_with("/proc")
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
        .filter(|p| !paths.iter().any(|q| q != *p && p.starts_with(q)))
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
        .find(|g| g.path.starts_with(real))
}

/// Hide each denied read that exists where its links lead (a mount placed on a link would
/// follow it, or fail), but in /proc and /dev, which are mounted afresh. A dangling link hides
/// nothing; a link that cannot be followed, or that leads to a tree holding a grant, is an
/// error rather than a secret left in sight.
fn hide_steps(caps: &CapabilitySet, fs: &dyn DirLister) -> Result<Vec<MountStep>, PlanError> {
    let fresh = |p: &Path| p.starts_with("/proc") || p.starts_with("/dev");
    let mut follower = Follower::new(|p: &Path| step_at(fs, p));
    let mut out: Vec<MountStep> = Vec::new();
    for d in caps.fs.deny_read.iter().filter(|d| !fresh(&d.path)) {
        if !fs.exists(&d.path) {
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
        let link = (real != d.path).then(|| d.path.clone());
        if let (Some(_), Some(g)) = (&link, grant_within(caps, &real)) {
            return Err(PlanError::HoldsGrant(Box::new(HeldGrant {
                path: d.path.clone(),
                real,
                granted: g.path.clone(),
                origin: d.origin.clone(),
                granted_by: g.origin.clone(),
            })));
        }
        let seen = out
            .iter()
            .any(|m| matches!(m, MountStep::Hide { target, .. } if *target == real));
        if !fresh(&real) && !seen {
            out.push(MountStep::Hide {
                is_dir: fs.is_dir(&real),
                target: real,
                link,
                origin: d.origin.clone(),
            });
        }
    }
    Ok(out)
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
        .filter(|c| !grants.iter().any(|g| g.starts_with(c) || c.starts_with(g)))
        .filter(|c| fs.is_dir(c) && !fs.is_symlink(c))
        .collect()
}

/// For each denied write that exists beneath a writable root: pins on the directories between
/// the outermost such root and it (outer first), then the read-only bind of the path itself.
fn pin_and_read_only_steps(caps: &CapabilitySet, fs: &dyn DirLister) -> Vec<MountStep> {
    let mut pins: Vec<(PathBuf, Origin)> = Vec::new();
    let mut read_only = Vec::new();
    for d in &caps.fs.deny_write {
        if !fs.exists(&d.path) {
            continue;
        }
        // The outermost writable root: anything beneath it can be renamed.
        let Some(root) = caps
            .fs
            .write
            .iter()
            .map(|w| &w.path)
            .filter(|w| d.path.starts_with(w))
            .min_by_key(|w| w.components().count())
        else {
            continue;
        };
        for a in d.path.ancestors().skip(1) {
            if a == root.as_path() || !a.starts_with(root) {
                break;
            }
            if fs.is_dir(a) && !fs.is_symlink(a) && !pins.iter().any(|(p, _)| p == a) {
                pins.push((a.to_path_buf(), d.origin.clone()));
            }
        }
        read_only.push(MountStep::ReadOnly {
            target: d.path.clone(),
            origin: d.origin.clone(),
        });
    }
    // Outer pins first, then the read-only binds: each later bind lands inside the mounts
    // before it.
    pins.sort_by_key(|(p, _)| p.components().count());
    let mut steps: Vec<MountStep> = pins
        .into_iter()
        .map(|(target, origin)| MountStep::Pin { target, origin })
        .collect();
    steps.extend(read_only);
    steps
}

/// The private tmp, carrying over the granted paths that lie beneath it.
fn private_tmp_step(caps: &CapabilitySet, tmp: &Path, fs: &dyn DirLister) -> MountStep {
    let outer = outermost(
        caps.fs
            .read
            .iter()
            .chain(&caps.fs.write)
            .chain(&caps.fs.execute)
            .filter(|e| e.path != tmp && e.path.starts_with(tmp) && fs.exists(&e.path))
            .map(|e| e.path.clone())
            .collect(),
    );
    MountStep::Tmpfs {
        target: tmp.to_path_buf(),
        keep: outer,
        origin: Origin::builtin("isolation.private_tmp"),
    }
}

/// The mount steps, in order; none without a mount namespace.
pub(super) fn mount_layout(
    caps: &CapabilitySet,
    namespaces: &Namespaces,
    tmp: &Path,
    fs: &dyn DirLister,
) -> Result<Vec<MountStep>, PlanError> {
    if !namespaces.mount {
        return Ok(Vec::new());
    }
    let tops = ungranted_top_dirs(caps, tmp, fs);
    // A secret inside a covered tree needs no mount of its own.
    let mut mounts: Vec<MountStep> = hide_steps(caps, fs)?
        .into_iter()
        .filter(|m| !matches!(m, MountStep::Hide { target, .. } if tops.iter().any(|t| target.starts_with(t))))
        .collect();
    mounts.extend(tops.into_iter().map(|target| MountStep::Hide {
        target,
        is_dir: true,
        link: None,
        origin: Origin::builtin("filesystem.read (nothing granted beneath)"),
    }));
    mounts.push(MountStep::ReadOnlyHost {
        writable: writable_roots(caps, tmp, fs),
        nodev: caps.isolation.minimal_dev,
    });
    // After the hides: the pins and read-only binds.
    mounts.extend(pin_and_read_only_steps(caps, fs));
    // The private tmp comes after hides and read-only binds: kept paths carry them along.
    if caps.isolation.private_tmp {
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
            net_rules: crate::proxy::NetRules::default(),
            limits: Limits::default(),
            isolation: Isolation::default(),
            env: EnvFilter::default(),
            extra_denied_syscalls: Vec::new(),
            requires: Vec::new(),
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
        let steps = hide_steps(&caps(&deny), &fs).unwrap();
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
        let err = hide_steps(&caps(&["/h/.ssh"]), &to_ws).unwrap_err();
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
        let err = hide_steps(&caps(&["/h/.aws"]), &Unreadable(fs)).unwrap_err();
        assert!(matches!(err, PlanError::Link { .. }), "{err}");
    }
}
