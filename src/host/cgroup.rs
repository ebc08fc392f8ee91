//! Where sbx can make a cgroup per run, to bound the whole tree's memory and processes.
//!
//! cgroup v2 is preferred: a per-run cgroup is made next to sbx's own (the kernel forbids
//! processes in a cgroup that hands controllers to children, so sbx's own cgroup cannot be the
//! parent), and the sandbox is cloned straight into it. Controllers that only a cgroup v1
//! hierarchy has are used there instead, with the per-run cgroup beneath sbx's own.
#![forbid(unsafe_code)]

use super::Availability;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// A cgroup controller sbx uses.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Controller {
    /// `memory`: bounds the tree's memory.
    Memory,
    /// `pids`: bounds the tree's processes.
    Pids,
}

impl Controller {
    /// Both controllers.
    pub const ALL: [Controller; 2] = [Controller::Memory, Controller::Pids];

    /// The controller's name in cgroup files.
    pub fn name(self) -> &'static str {
        match self {
            Controller::Memory => "memory",
            Controller::Pids => "pids",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
/// A cgroup hierarchy's version.
pub enum CgroupVersion {
    /// cgroup v1: one hierarchy per controller.
    V1,
    /// cgroup v2: one unified hierarchy.
    V2,
}

/// Where one controller can be used: the directory per-run cgroups are made in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct CgroupBase {
    /// The hierarchy's version.
    pub version: CgroupVersion,
    /// The directory per-run cgroups are made in.
    pub dir: PathBuf,
    /// cgroup v2: the controller must first be enabled in `dir`'s `cgroup.subtree_control`.
    pub enable: bool,
}

/// What the host's cgroups offer sbx.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct CgroupHost {
    /// Where the memory controller can be used.
    pub memory: Option<CgroupBase>,
    /// Where the pids controller can be used.
    pub pids: Option<CgroupBase>,
    /// Swap can be bounded too (`memory.swap.max`, `memory.memsw.limit_in_bytes`), or the host
    /// has no swap.
    pub swap_bounded: bool,
    /// Why memory or pids has no base, and the fix.
    pub missing: Availability,
}

impl CgroupHost {
    /// Where `c` can be used.
    pub fn base(&self, c: Controller) -> Option<&CgroupBase> {
        match c {
            Controller::Memory => self.memory.as_ref(),
            Controller::Pids => self.pids.as_ref(),
        }
    }

    /// No cgroup at all (tests, `explain` for another host).
    pub fn none(reason: &str) -> Self {
        Self {
            memory: None,
            pids: None,
            swap_bounded: false,
            missing: Availability::Missing {
                reason: reason.into(),
                fix: "none".into(),
            },
        }
    }
}

/// One cgroup file system from `/proc/self/mountinfo`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CgroupMount {
    /// `None` for cgroup v2, else the v1 hierarchy's controllers.
    pub(crate) v1: Option<Vec<String>>,
    /// The hierarchy's directory shown at the mount point.
    pub(crate) root: String,
    pub(crate) point: PathBuf,
}

/// The cgroup file systems in `mountinfo`, first mount of each hierarchy only.
pub(crate) fn parse_mountinfo(text: &str) -> Vec<CgroupMount> {
    let mut out: Vec<CgroupMount> = Vec::new();
    for line in text.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let f: Vec<&str> = left.split(' ').collect();
        let r: Vec<&str> = right.split(' ').collect();
        let (Some(root), Some(point), Some(fstype), Some(opts)) =
            (f.get(3), f.get(4), r.first(), r.get(2))
        else {
            continue;
        };
        let v1 = match *fstype {
            "cgroup2" => None,
            "cgroup" => Some(
                opts.split(',')
                    .filter(|o| Controller::ALL.iter().any(|c| c.name() == *o))
                    .map(String::from)
                    .collect(),
            ),
            _ => continue,
        };
        let m = CgroupMount {
            v1,
            root: unescape(root),
            point: PathBuf::from(unescape(point)),
        };
        if !out.iter().any(|o| o.v1 == m.v1) {
            out.push(m);
        }
    }
    out
}

/// mountinfo escapes space, tab, newline and backslash as octal.
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c == '\\' {
            let oct: String = it.by_ref().take(3).collect();
            match u8::from_str_radix(&oct, 8) {
                Ok(b) => out.push(b as char),
                Err(_) => {
                    out.push('\\');
                    out.push_str(&oct);
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `/proc/self/cgroup`: `(controllers, path)` per line; cgroup v2 has no controllers.
pub(crate) fn parse_proc_cgroup(text: &str) -> Vec<(Vec<String>, String)> {
    text.lines()
        .filter_map(|l| {
            let mut it = l.splitn(3, ':');
            let (_, ctrls, path) = (it.next()?, it.next()?, it.next()?);
            let ctrls = ctrls
                .split(',')
                .filter(|c| !c.is_empty())
                .map(String::from)
                .collect();
            Some((ctrls, path.to_string()))
        })
        .collect()
}

/// The directory of cgroup `path` (as `/proc/self/cgroup` names it) under mount `m`.
pub(crate) fn cgroup_dir(m: &CgroupMount, path: &str) -> PathBuf {
    let rel = if m.root == "/" {
        path
    } else {
        path.strip_prefix(m.root.as_str()).unwrap_or(path)
    };
    let rel = rel.trim_start_matches('/');
    if rel.is_empty() {
        m.point.clone()
    } else {
        m.point.join(rel)
    }
}

fn writable(p: &Path) -> bool {
    nix::unistd::access(p, nix::unistd::AccessFlags::W_OK).is_ok()
}

/// A small kernel file in one `read` (std's `read_to_string` starts with 32 bytes when the size
/// is unknown, as it is for proc and cgroup files).
fn read_small(p: &Path) -> String {
    use std::io::Read;
    let mut s = String::with_capacity(16 * 1024);
    if let Ok(mut f) = std::fs::File::open(p) {
        let _ = f.read_to_string(&mut s);
    }
    s
}

fn words(p: &Path) -> Vec<String> {
    read_small(p).split_whitespace().map(String::from).collect()
}

/// The controllers a cgroup v2 directory can give per-run children, with whether each must be
/// enabled first, or why none can.
fn v2_offer(base: &Path) -> Result<Vec<(Controller, bool)>, String> {
    let available = words(&base.join("cgroup.controllers"));
    if !Controller::ALL
        .iter()
        .any(|c| available.iter().any(|a| a == c.name()))
    {
        return Ok(Vec::new());
    }
    if !writable(base) || !writable(&base.join("cgroup.procs")) {
        return Err(format!(
            "{} is not writable by this user (no delegated cgroup v2 subtree)",
            base.display()
        ));
    }
    let enabled = words(&base.join("cgroup.subtree_control"));
    // Only the root cgroup may hold processes and hand controllers to children at once.
    let is_root = !base.join("cgroup.type").exists();
    let can_enable = writable(&base.join("cgroup.subtree_control"))
        && (is_root || words(&base.join("cgroup.procs")).is_empty());
    let mut offer = Vec::new();
    for c in Controller::ALL {
        if enabled.iter().any(|e| e == c.name()) {
            offer.push((c, false));
        } else if can_enable && available.iter().any(|e| e == c.name()) {
            offer.push((c, true));
        }
    }
    Ok(offer)
}

/// Whether swap is bounded along with memory in `base`, or there is no swap to bound.
fn swap_bounded(base: &CgroupBase) -> bool {
    let accounted = match base.version {
        CgroupVersion::V1 => base.dir.join("memory.memsw.limit_in_bytes").exists(),
        // The root cgroup has no memory.swap.* files; its children do unless swap accounting
        // is off, which is rare.
        CgroupVersion::V2 => {
            base.dir.join("memory.swap.max").exists() || !base.dir.join("cgroup.type").exists()
        }
    };
    accounted || read_small(Path::new("/proc/swaps")).lines().count() <= 1
}

/// The cgroup v2 bases: the parent of sbx's own cgroup (or the root, when sbx is in it), for
/// each controller it offers.
fn v2_bases(
    mounts: &[CgroupMount],
    own: &[(Vec<String>, String)],
) -> Result<Vec<(Controller, CgroupBase)>, String> {
    let v2 = mounts.iter().find(|m| m.v1.is_none());
    let path = own.iter().find(|(c, _)| c.is_empty()).map(|(_, p)| p);
    let (Some(m), Some(path)) = (v2, path) else {
        return Ok(Vec::new());
    };
    if !super::kernel_at_least(5, 7) {
        return Err("cgroup v2 is used from Linux 5.7 (CLONE_INTO_CGROUP)".into());
    }
    let own_dir = cgroup_dir(m, path);
    let base = match own_dir.parent() {
        Some(parent) if own_dir != m.point => parent.to_path_buf(),
        _ => own_dir,
    };
    let offer = v2_offer(&base)?;
    Ok(offer
        .into_iter()
        .map(|(c, enable)| {
            let dir = base.clone();
            let version = CgroupVersion::V2;
            (
                c,
                CgroupBase {
                    version,
                    dir,
                    enable,
                },
            )
        })
        .collect())
}

/// The cgroup v1 base for `c`: sbx's own cgroup in that controller's hierarchy.
fn v1_base(
    c: Controller,
    mounts: &[CgroupMount],
    own: &[(Vec<String>, String)],
) -> Result<CgroupBase, String> {
    let has = |v: &[String]| v.iter().any(|x| x == c.name());
    let hier = mounts.iter().find(|m| m.v1.as_deref().is_some_and(has));
    let path = own.iter().find(|(ctrls, _)| has(ctrls)).map(|(_, p)| p);
    let (Some(m), Some(path)) = (hier, path) else {
        return Err(format!("no {} controller is mounted", c.name()));
    };
    let dir = cgroup_dir(m, path);
    if !writable(&dir) {
        return Err(format!(
            "the cgroup v1 {} directory {} is not writable by this user",
            c.name(),
            dir.display()
        ));
    }
    let version = CgroupVersion::V1;
    Ok(CgroupBase {
        version,
        dir,
        enable: false,
    })
}

/// Detect where per-run cgroups can be made: cgroup v2 first, v1 for controllers v2 lacks.
/// Reads mountinfo, `/proc/self/cgroup` and a few cgroup files.
pub fn detect() -> CgroupHost {
    let mounts = parse_mountinfo(&read_small(Path::new("/proc/self/mountinfo")));
    let own = parse_proc_cgroup(&read_small(Path::new("/proc/self/cgroup")));
    let mut reasons: Vec<String> = Vec::new();
    let mut bases = v2_bases(&mounts, &own).unwrap_or_else(|e| {
        reasons.push(e);
        Vec::new()
    });
    for c in Controller::ALL {
        if !bases.iter().any(|(b, _)| *b == c) {
            match v1_base(c, &mounts, &own) {
                Ok(b) => bases.push((c, b)),
                Err(e) => reasons.push(e),
            }
        }
    }
    assemble(bases, reasons)
}

fn assemble(bases: Vec<(Controller, CgroupBase)>, reasons: Vec<String>) -> CgroupHost {
    let get = |c: Controller| bases.iter().find(|(b, _)| *b == c).map(|(_, b)| b.clone());
    let memory = get(Controller::Memory);
    let pids = get(Controller::Pids);
    let missing = if memory.is_some() && pids.is_some() {
        Availability::Available
    } else {
        Availability::Missing {
            reason: reasons.join("; "),
            fix: "run as root, or in a delegated cgroup v2 subtree with the memory and pids \
                  controllers (`systemd-run --user --scope -p Delegate=yes ...`)"
                .into(),
        }
    };
    CgroupHost {
        swap_bounded: memory.as_ref().is_some_and(swap_bounded),
        memory,
        pids,
        missing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HYBRID: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    #[test]
    fn mountinfo_gives_each_hierarchy_once() {
        let m = parse_mountinfo(HYBRID);
        assert_eq!(m.len(), 3, "{m:?}");
        assert_eq!(m[0].v1, Some(vec!["memory".to_string()]));
        assert_eq!(m[2].v1, None);
        assert_eq!(m[2].point, PathBuf::from("/sys/fs/cgroup/unified"));
        let again = format!("{HYBRID}50 31 0:32 / /mnt/mem\\040x rw - cgroup cgroup rw,memory\n");
        assert_eq!(parse_mountinfo(&again).len(), 3);
        assert_eq!(unescape("/mnt/mem\\040x"), "/mnt/mem x");
    }

    #[test]
    fn own_cgroup_maps_to_a_directory_under_the_mount() {
        let own = parse_proc_cgroup("4:memory:/a/b\n8:pids:/\n0::/user.slice/s.scope\n");
        assert_eq!(own[0], (vec!["memory".to_string()], "/a/b".to_string()));
        assert_eq!(own[2].0, Vec::<String>::new());
        let m = CgroupMount {
            v1: None,
            root: "/".into(),
            point: "/sys/fs/cgroup".into(),
        };
        assert_eq!(cgroup_dir(&m, "/"), PathBuf::from("/sys/fs/cgroup"));
        assert_eq!(
            cgroup_dir(&m, "/u/s.scope"),
            PathBuf::from("/sys/fs/cgroup/u/s.scope")
        );
        // A mount of a subtree (a container's view) strips the subtree's own path.
        let sub = CgroupMount {
            v1: Some(vec!["memory".into()]),
            root: "/docker/abc".into(),
            point: "/sys/fs/cgroup/memory".into(),
        };
        assert_eq!(
            cgroup_dir(&sub, "/docker/abc/x"),
            PathBuf::from("/sys/fs/cgroup/memory/x")
        );
    }

    #[test]
    fn missing_controllers_are_named_with_the_fix() {
        let host = assemble(
            vec![(
                Controller::Pids,
                CgroupBase {
                    version: CgroupVersion::V1,
                    dir: "/sys/fs/cgroup/pids".into(),
                    enable: false,
                },
            )],
            vec!["the cgroup v1 memory directory /m is not writable by this user".into()],
        );
        assert!(host.memory.is_none() && host.pids.is_some());
        assert!(!host.swap_bounded);
        match host.missing {
            Availability::Missing { reason, fix } => {
                assert!(reason.contains("/m is not writable"), "{reason}");
                assert!(fix.contains("Delegate=yes"), "{fix}");
            }
            Availability::Available => panic!("memory is missing"),
        }
    }
}
