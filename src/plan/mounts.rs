//! The mount layout built in the sandbox's mount namespace: secrets hidden, read-only binds
//! inside writable trees, the private /tmp, /proc and a minimal /dev.
#![forbid(unsafe_code)]

use super::{DirLister, Namespaces};
use crate::capability::{CapabilitySet, Origin};
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
        /// The path hidden.
        target: PathBuf,
        /// Whether it is a directory.
        is_dir: bool,
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
fn writable_roots(caps: &CapabilitySet, tmp: &Path, fs: &dyn DirLister) -> Vec<PathBuf> {
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

/// Hide each denied read that exists, but in /proc and /dev, which are mounted afresh.
fn hide_steps(caps: &CapabilitySet, fs: &dyn DirLister) -> Vec<MountStep> {
    caps.fs
        .deny_read
        .iter()
        .filter(|d| {
            fs.exists(&d.path) && !d.path.starts_with("/proc") && !d.path.starts_with("/dev")
        })
        .map(|d| MountStep::Hide {
            target: d.path.clone(),
            is_dir: fs.is_dir(&d.path),
            origin: d.origin.clone(),
        })
        .collect()
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
) -> Vec<MountStep> {
    if !namespaces.mount {
        return Vec::new();
    }
    let tops = ungranted_top_dirs(caps, tmp, fs);
    // A secret inside a covered tree needs no mount of its own.
    let mut mounts: Vec<MountStep> = hide_steps(caps, fs)
        .into_iter()
        .filter(|m| !matches!(m, MountStep::Hide { target, .. } if tops.iter().any(|t| target.starts_with(t))))
        .collect();
    mounts.extend(tops.into_iter().map(|target| MountStep::Hide {
        target,
        is_dir: true,
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
    mounts
}
