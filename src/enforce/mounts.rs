//! The mount layout as a flat list of raw operations, compiled in the parent and replayed in
//! the sandbox init with plain syscalls.
use super::{EnforceError, cstr};
use crate::plan::MountStep;
use std::ffi::CString;
use std::path::{Path, PathBuf};

pub const MAX_SLOTS: usize = 48;

/// At most this many hidden directories are covered by copies of one shared tmpfs; the
/// rest get a tmpfs each.
const MAX_HIDDEN_COPIES: usize = 16;

/// One raw mount-namespace operation.
#[derive(Debug)]
pub enum Op {
    /// Stop mount propagation to and from the host.
    MakePrivate,
    /// Detach a recursive copy of `path` into `slot` (open_tree with OPEN_TREE_CLONE).
    Clone {
        path: CString,
        slot: usize,
    },
    Tmpfs {
        target: CString,
        data: CString,
    },
    Mkdir {
        path: CString,
    },
    /// A new directory with exactly `mode` (the umask does not apply).
    MkdirMode {
        path: CString,
        mode: libc::mode_t,
    },
    Touch {
        path: CString,
    },
    /// Attach the copy in `slot` at `target` (move_mount).
    Attach {
        slot: usize,
        target: CString,
    },
    BindSelf {
        path: CString,
    },
    BindFile {
        src: CString,
        target: CString,
    },
    /// Attach a copy of `src` at `target`, following a link at neither: a link pinned onto
    /// itself, or covered by a file.
    BindNoFollow {
        src: CString,
        target: CString,
    },
    /// Set mount attributes (`MOUNT_ATTR_*`) on the mounts at and beneath `path`.
    SetAttr {
        path: CString,
        attr: u64,
    },
    /// Clear mount attributes on the mounts at and beneath `path`.
    ClearAttr {
        path: CString,
        attr: u64,
    },
    Proc,
    Devpts,
    Symlink {
        target: CString,
        link: CString,
    },
    /// Write `data` to an existing file (a sysctl of the sandbox's own namespace).
    WriteFile {
        path: CString,
        data: CString,
    },
}

impl Op {
    /// The path the operation acts on, for an error that names it.
    pub fn path(&self) -> Option<&std::ffi::CStr> {
        match self {
            Op::Clone { path, .. }
            | Op::Mkdir { path }
            | Op::MkdirMode { path, .. }
            | Op::Touch { path }
            | Op::BindSelf { path }
            | Op::SetAttr { path, .. }
            | Op::ClearAttr { path, .. }
            | Op::WriteFile { path, .. } => Some(path),
            Op::Tmpfs { target, .. }
            | Op::Attach { target, .. }
            | Op::BindFile { target, .. }
            | Op::BindNoFollow { target, .. } => Some(target),
            Op::Symlink { link, .. } => Some(link),
            Op::MakePrivate | Op::Proc | Op::Devpts => None,
        }
    }
}

pub const MOUNT_ATTR_RDONLY: u64 = 0x1;
pub const MOUNT_ATTR_NOSUID: u64 = 0x2;
pub const MOUNT_ATTR_NODEV: u64 = 0x4;

fn read_only(path: CString) -> Op {
    Op::SetAttr {
        path,
        attr: MOUNT_ATTR_RDONLY,
    }
}

const DEVICES: &[&str] = &["null", "zero", "full", "random", "urandom", "tty"];

fn c(s: &str) -> CString {
    // Literal strings below never contain NUL.
    CString::new(s).unwrap_or_default()
}

fn mkdir_all(ops: &mut Vec<Op>, under: &Path, path: &Path) -> Result<(), EnforceError> {
    let mut cur = PathBuf::new();
    for comp in path.components() {
        cur.push(comp);
        if cur.starts_with(under) && cur != under {
            ops.push(Op::Mkdir { path: cstr(&cur)? });
        }
    }
    Ok(())
}

fn slot(next: &mut usize) -> Result<usize, EnforceError> {
    let s = *next;
    if s >= MAX_SLOTS {
        return Err(EnforceError::TooManyKept { max: MAX_SLOTS });
    }
    *next += 1;
    Ok(s)
}

/// Everything read-only but the writable trees: each is copied aside first (a detached copy
/// keeps its flags), the whole tree turns read-only, and the copies go back on top, `nosuid`
/// and `nodev`, so that a setuid or device file made there gives nothing.
fn read_only_host(
    ops: &mut Vec<Op>,
    next: &mut usize,
    writable: &[PathBuf],
    nodev: bool,
) -> Result<(), EnforceError> {
    let mut kept = Vec::with_capacity(writable.len());
    for w in writable {
        let s = slot(next)?;
        ops.push(Op::Clone {
            path: cstr(w)?,
            slot: s,
        });
        kept.push((w, s));
    }
    // The sandbox's own /dev and /proc are mounted after this, with their own flags.
    let nodev = if nodev { MOUNT_ATTR_NODEV } else { 0 };
    ops.push(Op::SetAttr {
        path: c("/"),
        attr: MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | nodev,
    });
    for (w, s) in kept {
        ops.push(Op::Attach {
            slot: s,
            target: cstr(w)?,
        });
        ops.push(Op::SetAttr {
            path: cstr(w)?,
            attr: MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
        });
    }
    Ok(())
}

/// tmpfs mount data: `mode`, and `size` when the plan bounds the private tmpfs mounts.
fn tmpfs_data(mode: &str, size: Option<u64>) -> CString {
    match size {
        Some(n) => c(&format!("mode={mode},size={n}")),
        None => c(&format!("mode={mode}")),
    }
}

/// The directories hidden by a tmpfs, in order, and how many copies of the first one cover
/// the others: a bind costs far less than a new file system, and copies only use the slots
/// the kept paths and devices leave (at most [`MAX_HIDDEN_COPIES`]).
fn hidden_dirs(steps: &[MountStep]) -> (Vec<&Path>, usize) {
    let mut hidden: Vec<&Path> = Vec::new();
    let mut other_slots = 0;
    for step in steps {
        match step {
            MountStep::Hide {
                target,
                is_dir: true,
                ..
            } if !hidden.contains(&target.as_path()) => hidden.push(target),
            MountStep::Tmpfs { keep, .. } => other_slots += keep.len(),
            MountStep::ReadOnlyHost { writable, .. } => other_slots += writable.len(),
            MountStep::MinimalDev => other_slots += DEVICES.len(),
            MountStep::Hide { .. }
            | MountStep::Pin { .. }
            | MountStep::CoverLink { .. }
            | MountStep::ReadOnly { .. }
            | MountStep::Proc => {}
        }
    }
    let shared = hidden
        .len()
        .saturating_sub(1)
        .min(MAX_HIDDEN_COPIES)
        .min(MAX_SLOTS.saturating_sub(other_slots));
    (hidden, shared)
}

/// One compilation: the ops so far, the next free slot, and the shared tmpfs that hidden
/// directories take copies of.
struct Compiler<'a> {
    ops: Vec<Op>,
    next: usize,
    /// Hidden directories, in order: the first gets the tmpfs, the next `shared` copies of it.
    hidden: Vec<&'a Path>,
    shared: usize,
    /// Copies taken and not yet attached, by the directory each is for.
    copies: Vec<(&'a Path, usize)>,
    /// The copies have been taken.
    cloned: bool,
    /// The trees the `ReadOnlyHost` step keeps writable, when there is one.
    host_writable: Option<&'a [PathBuf]>,
    pid_max: Option<u64>,
    tmp_size: Option<u64>,
}

impl<'a> Compiler<'a> {
    /// A hide outside the writable trees turns read-only with the whole tree later; one inside
    /// them (copied aside with its mounts) or with no such step needs its own remount.
    fn own_remount(&self, t: &Path) -> bool {
        self.host_writable
            .is_none_or(|w| w.iter().any(|w| t.starts_with(w)))
    }

    fn read_only_if_own(&mut self, target: &Path) -> Result<(), EnforceError> {
        if self.own_remount(target) {
            self.ops.push(read_only(cstr(target)?));
        }
        Ok(())
    }

    fn step(&mut self, step: &'a MountStep) -> Result<(), EnforceError> {
        match step {
            MountStep::Tmpfs { target, keep, .. } => self.tmpfs(target, keep)?,
            MountStep::Hide { target, is_dir, .. } => self.hide(target, *is_dir)?,
            MountStep::ReadOnlyHost { writable, nodev } => {
                read_only_host(&mut self.ops, &mut self.next, writable, *nodev)?;
            }
            MountStep::Pin {
                target,
                link: false,
                ..
            } => self.ops.push(Op::BindSelf {
                path: cstr(target)?,
            }),
            MountStep::Pin {
                target, link: true, ..
            } => self.ops.push(Op::BindNoFollow {
                src: cstr(target)?,
                target: cstr(target)?,
            }),
            MountStep::CoverLink { target, .. } => {
                self.ops.push(Op::BindNoFollow {
                    src: c("/dev/null"),
                    target: cstr(target)?,
                });
                // Read-only, so that root's chmod inside cannot reach the host's /dev/null.
                self.read_only_if_own(target)?;
            }
            MountStep::ReadOnly { target, .. } => {
                self.ops.push(Op::BindSelf {
                    path: cstr(target)?,
                });
                self.ops.push(read_only(cstr(target)?));
            }
            MountStep::Proc => self.proc(),
            MountStep::MinimalDev => self.minimal_dev()?,
        }
        Ok(())
    }

    /// A private tmpfs at `target`, with the `keep` paths beneath it copied aside first and
    /// attached again on top.
    fn tmpfs(&mut self, target: &Path, keep: &[PathBuf]) -> Result<(), EnforceError> {
        let mut kept = Vec::new();
        for k in keep {
            let s = slot(&mut self.next)?;
            self.ops.push(Op::Clone {
                path: cstr(k)?,
                slot: s,
            });
            kept.push((k, s, k.is_dir()));
        }
        self.ops.push(Op::Tmpfs {
            target: cstr(target)?,
            data: tmpfs_data("1777", self.tmp_size),
        });
        for (k, s, is_dir) in kept {
            if is_dir {
                mkdir_all(&mut self.ops, target, k)?;
            } else {
                if let Some(parent) = k.parent() {
                    mkdir_all(&mut self.ops, target, parent)?;
                }
                self.ops.push(Op::Touch { path: cstr(k)? });
            }
            self.ops.push(Op::Attach {
                slot: s,
                target: cstr(k)?,
            });
        }
        Ok(())
    }

    /// Hide `target`: with a copy of the shared tmpfs taken for it, a new empty tmpfs over a
    /// directory, or a bind of /dev/null over a file.
    fn hide(&mut self, target: &Path, is_dir: bool) -> Result<(), EnforceError> {
        if let Some(i) = self.copies.iter().position(|(p, _)| *p == target) {
            let (_, s) = self.copies.remove(i);
            self.ops.push(Op::Attach {
                slot: s,
                target: cstr(target)?,
            });
            self.read_only_if_own(target)
        } else if is_dir {
            self.hide_dir(target)
        } else {
            // Read-only, so that root's chmod inside cannot reach the host's /dev/null.
            self.ops.push(Op::BindFile {
                src: c("/dev/null"),
                target: cstr(target)?,
            });
            self.read_only_if_own(target)
        }
    }

    /// An empty read-only tmpfs over `target`; the first one is the source of the copies,
    /// taken right away.
    fn hide_dir(&mut self, target: &Path) -> Result<(), EnforceError> {
        self.ops.push(Op::Tmpfs {
            target: cstr(target)?,
            data: c("mode=0,size=4k"),
        });
        let source = self.hidden.first() == Some(&target) && !self.cloned;
        // The source of copies is read-only before it is copied: copies keep it.
        if source || self.own_remount(target) {
            self.ops.push(read_only(cstr(target)?));
        }
        if source {
            self.cloned = true;
            for other in self.hidden.iter().skip(1).take(self.shared) {
                let s = slot(&mut self.next)?;
                self.ops.push(Op::Clone {
                    path: cstr(target)?,
                    slot: s,
                });
                self.copies.push((other, s));
            }
        }
        Ok(())
    }

    /// A fresh procfs with the namespace's pid_max set.
    fn proc(&mut self) {
        self.ops.push(Op::Proc);
        if let Some(n) = self.pid_max {
            // Before /proc/sys turns read-only; the value is this namespace's own.
            self.ops.push(Op::WriteFile {
                path: c("/proc/sys/kernel/pid_max"),
                data: c(&(n + 1).to_string()),
            });
        }
        // The command turns the whole /proc read-only (`Prepared::proc_read_only`), /proc/sys
        // with it, once it has written its own OOM score there.
    }

    /// A tmpfs /dev with the harmless devices copied from the host's, a private devpts,
    /// /dev/shm and the fd links.
    fn minimal_dev(&mut self) -> Result<(), EnforceError> {
        let mut kept = Vec::new();
        for d in DEVICES {
            let p = format!("/dev/{d}");
            if Path::new(&p).exists() {
                let s = slot(&mut self.next)?;
                self.ops.push(Op::Clone {
                    path: c(&p),
                    slot: s,
                });
                kept.push((p, s));
            }
        }
        self.ops.push(Op::Tmpfs {
            target: c("/dev"),
            data: tmpfs_data("0755", self.tmp_size),
        });
        for (p, s) in kept {
            self.ops.push(Op::Touch { path: c(&p) });
            self.ops.push(Op::Attach {
                slot: s,
                target: c(&p),
            });
            // Copied from the host tree after it turned `nodev`: each device is a mount of
            // its own, which alone opens devices again (it stays read-only).
            self.ops.push(Op::ClearAttr {
                path: c(&p),
                attr: MOUNT_ATTR_NODEV,
            });
        }
        self.dev_entries();
        Ok(())
    }

    /// The entries of the minimal /dev that are not device files.
    fn dev_entries(&mut self) {
        self.ops.push(Op::Mkdir {
            path: c("/dev/pts"),
        });
        self.ops.push(Op::Devpts);
        self.ops.push(Op::Symlink {
            target: c("pts/ptmx"),
            link: c("/dev/ptmx"),
        });
        // A sticky world-writable directory on the /dev tmpfs: one file system less to
        // create than a tmpfs of its own, and as private.
        self.ops.push(Op::MkdirMode {
            path: c("/dev/shm"),
            mode: 0o1777,
        });
        for (t, l) in [
            ("/proc/self/fd", "/dev/fd"),
            ("/proc/self/fd/0", "/dev/stdin"),
            ("/proc/self/fd/1", "/dev/stdout"),
            ("/proc/self/fd/2", "/dev/stderr"),
        ] {
            self.ops.push(Op::Symlink {
                target: c(t),
                link: c(l),
            });
        }
    }
}

/// Compile the plan's mount steps. `tmp_size` bounds the tmpfs of `/tmp` and of `/dev` (which
/// holds `/dev/shm`). Hidden directories share one empty read-only tmpfs: the first gets it,
/// and copies of that mount, taken right away, cover the others at their turn.
pub fn compile(
    steps: &[MountStep],
    pid_max: Option<u64>,
    tmp_size: Option<u64>,
) -> Result<Vec<Op>, EnforceError> {
    let (hidden, shared) = hidden_dirs(steps);
    let host_writable = steps.iter().find_map(|s| match s {
        MountStep::ReadOnlyHost { writable, .. } => Some(writable.as_slice()),
        _ => None,
    });
    let mut cx = Compiler {
        ops: vec![Op::MakePrivate],
        next: 0,
        hidden,
        shared,
        copies: Vec::with_capacity(shared),
        cloned: false,
        host_writable,
        pid_max,
        tmp_size,
    };
    for step in steps {
        cx.step(step)?;
    }
    Ok(cx.ops)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capability::Origin;

    fn hide(p: &str, is_dir: bool) -> MountStep {
        MountStep::Hide {
            target: PathBuf::from(p),
            is_dir,
            link: None,
            origin: Origin::builtin("test"),
        }
    }

    #[test]
    fn hidden_directories_share_one_tmpfs() {
        let steps = [
            hide("/run/user", true),
            hide("/etc/shadow", false),
            hide("/run/dbus", true),
            hide("/sys/fs/cgroup", true),
        ];
        let ops = compile(&steps, None, None).unwrap_or_default();
        let tmpfs = ops.iter().filter(|o| matches!(o, Op::Tmpfs { .. })).count();
        let clones = ops.iter().filter(|o| matches!(o, Op::Clone { .. })).count();
        let attached: Vec<&CString> = ops
            .iter()
            .filter_map(|o| match o {
                Op::Attach { target, .. } => Some(target),
                _ => None,
            })
            .collect();
        let read_only = ops
            .iter()
            .filter(|o| matches!(o, Op::SetAttr { .. }))
            .count();
        assert_eq!(tmpfs, 1, "{ops:?}");
        assert_eq!(clones, 2, "{ops:?}");
        assert_eq!(attached, [&c("/run/dbus"), &c("/sys/fs/cgroup")], "{ops:?}");
        assert_eq!(read_only, 4, "every hidden path is read-only: {ops:?}");
        assert!(
            ops.iter()
                .any(|o| matches!(o, Op::BindFile { target, .. } if *target == c("/etc/shadow"))),
            "{ops:?}"
        );
    }

    /// With the whole tree made read-only afterwards, only the hides inside a writable tree
    /// (which is copied aside with them) and the source of the shared copies are remounted
    /// read-only one by one; the rest turn read-only with the tree.
    #[test]
    fn hides_outside_the_writable_trees_turn_read_only_with_the_tree() {
        let steps = [
            hide("/run/user", true),
            hide("/etc/shadow", false),
            hide("/ws/.env", false),
            hide("/run/dbus", true),
            hide("/ws/secrets", true),
            MountStep::ReadOnlyHost {
                writable: vec![PathBuf::from("/ws")],
                nodev: true,
            },
        ];
        let ops = compile(&steps, None, None).unwrap_or_default();
        let remounted: Vec<&CString> = ops
            .iter()
            .filter_map(|o| match o {
                Op::SetAttr { path, attr } if *attr & MOUNT_ATTR_RDONLY != 0 => Some(path),
                _ => None,
            })
            .collect();
        assert_eq!(
            remounted,
            [&c("/run/user"), &c("/ws/.env"), &c("/ws/secrets"), &c("/")],
            "{ops:?}"
        );
        // The tree's remount comes after every hide, before the writable copies return.
        let last_hide = ops
            .iter()
            .rposition(|o| matches!(o, Op::Attach { target, .. } if *target == c("/ws/secrets")))
            .unwrap_or(usize::MAX);
        let whole = ops
            .iter()
            .position(|o| matches!(o, Op::SetAttr { path, .. } if *path == c("/")))
            .unwrap_or(0);
        assert!(last_hide < whole, "{ops:?}");
        // The host tree is nosuid and nodev as well; the writable copies nosuid,nodev alone.
        assert!(ops.iter().any(|o| matches!(o, Op::SetAttr { path, attr }
            if *path == c("/") && *attr == MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)));
    }

    #[test]
    fn kept_paths_and_devices_come_before_copies_and_duplicates_are_covered_once() {
        let keep: Vec<PathBuf> = (0..40)
            .map(|i| PathBuf::from(format!("/tmp/k{i}")))
            .collect();
        let mut steps = vec![MountStep::Tmpfs {
            target: PathBuf::from("/tmp"),
            keep,
            origin: Origin::builtin("test"),
        }];
        for i in 0..6 {
            steps.push(hide(&format!("/h{i}"), true));
        }
        steps.push(hide("/h0", true));
        steps.push(MountStep::MinimalDev);
        // 40 kept paths + up to 6 devices leave 2 slots: two copies, the rest get a tmpfs.
        let ops = match compile(&steps, None, None) {
            Ok(ops) => ops,
            Err(e) => panic!("{e}"),
        };
        let hidden_tmpfs = ops
            .iter()
            .filter(|o| matches!(o, Op::Tmpfs { data, .. } if data.as_bytes() == b"mode=0,size=4k"))
            .count();
        let attached = ops
            .iter()
            .filter(
                |o| matches!(o, Op::Attach { target, .. } if target.as_bytes().starts_with(b"/h")),
            )
            .count();
        assert_eq!(attached, 2, "{ops:?}");
        // /h0 twice, /h3../h5 without a copy.
        assert_eq!(hidden_tmpfs, 5, "{ops:?}");
    }
}
