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
    /// Make every mount read-only (recursively), except the `writable` trees, which keep their
    /// own flags and become `nosuid,nodev`. Landlock does not govern chmod, chown, xattrs or
    /// times; a read-only mount refuses them all (EROFS).
    ReadOnlyHost {
        /// The trees that stay writable.
        writable: Vec<PathBuf>,
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

/// The mount steps, in order; none without a mount namespace.
pub(super) fn mount_layout(
    caps: &CapabilitySet,
    namespaces: &Namespaces,
    tmp: &Path,
    fs: &dyn DirLister,
) -> Vec<MountStep> {
    // Mount layout.
    let mut mounts = Vec::new();
    let tmp = tmp.to_path_buf();
    if namespaces.mount {
        for d in &caps.fs.deny_read {
            if fs.exists(&d.path) && !d.path.starts_with("/proc") && !d.path.starts_with("/dev") {
                mounts.push(MountStep::Hide {
                    target: d.path.clone(),
                    is_dir: fs.is_dir(&d.path),
                    origin: d.origin.clone(),
                });
            }
        }
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
        let writable = writable_roots(caps, &tmp, fs);
        mounts.push(MountStep::ReadOnlyHost { writable });
        // After the hides, outer pins first, then the read-only binds: each later bind lands
        // inside the mounts before it.
        pins.sort_by_key(|(p, _)| p.components().count());
        mounts.extend(
            pins.into_iter()
                .map(|(target, origin)| MountStep::Pin { target, origin }),
        );
        mounts.extend(read_only);
        // The private tmp comes after hides and read-only binds: kept paths carry them along.
        if caps.isolation.private_tmp {
            let outer = outermost(
                caps.fs
                    .read
                    .iter()
                    .chain(&caps.fs.write)
                    .chain(&caps.fs.execute)
                    .filter(|e| e.path != tmp && e.path.starts_with(&tmp) && fs.exists(&e.path))
                    .map(|e| e.path.clone())
                    .collect(),
            );
            mounts.push(MountStep::Tmpfs {
                target: tmp.clone(),
                keep: outer,
                origin: Origin::builtin("isolation.private_tmp"),
            });
        }
        if namespaces.pid {
            mounts.push(MountStep::Proc);
        }
        if caps.isolation.minimal_dev {
            mounts.push(MountStep::MinimalDev);
        }
    }
    mounts
}
