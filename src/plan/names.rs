//! Protected names on a file system that folds case where the kernel does not see it.
//!
//! Read-only paths inside writable trees are held by a mount on their exact name, and names
//! that do not exist yet are checked after the run by their exact bytes (without case, once
//! the profile accepts such a file system). On a file system that finds `.GIT/CONFIG` as
//! `.git/config` while the kernel makes a dentry of its own for each variant
//! ([`NameCase::FoldedBeneath`]), the mount does not hold. Each writable tree holding
//! protected paths is probed once per plan, on one existing name: a protected file when there
//! is one (a directory can keep one dentry for every variant where its files do not), else a
//! protected directory, else any entry of the tree. Where case matters that is one `lstat`.
#![forbid(unsafe_code)]

use super::{DirLister, Layer, LayerStatus, PlanError};
use crate::capability::{CapabilitySet, CaseFolding};
use crate::host::NameCase;
use crate::host::names::flip_case;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// A writable tree on a file system that folds case beneath the kernel.
#[derive(Debug, PartialEq, Eq, Serialize)]
pub struct CaseFolded {
    /// The writable tree.
    pub root: PathBuf,
    /// The file system's type.
    pub fs: String,
    /// The protected name probed, when one exists (else an entry of the tree was).
    pub entry: Option<PathBuf>,
}

impl CaseFolded {
    /// What the file system found, for the error.
    pub fn example(&self) -> String {
        match &self.entry {
            Some(e) => format!(": {} reaches {}", variant_of(e).display(), e.display()),
            None => String::new(),
        }
    }
}

/// How names fold in `root`, when the profile protects anything beneath it.
fn probe_root(
    caps: &CapabilitySet,
    root: &Path,
    fs: &dyn DirLister,
) -> Option<(NameCase, PathBuf)> {
    let protected: Vec<&Path> = caps
        .fs
        .deny_write
        .iter()
        .map(|d| d.path.as_path())
        .filter(|p| p.starts_with(root) && *p != root)
        .collect();
    if protected.is_empty() {
        return None;
    }
    let named = |p: &Path| p.file_name().and_then(flip_case).is_some();
    let existing: Vec<&Path> = protected
        .into_iter()
        .filter(|p| named(p) && fs.exists(p))
        .collect();
    let file = existing.iter().find(|p| !fs.is_dir(p));
    Some(match file.or(existing.first()) {
        Some(p) => (fs.name_case(p), p.to_path_buf()),
        // Nothing protected exists yet: whatever is there tells, a name made during the run
        // would fold the same way.
        None => (fs.name_case_in(root), root.to_path_buf()),
    })
}

/// `entry` with the case of its last name flipped.
fn variant_of(entry: &Path) -> PathBuf {
    match (entry.parent(), entry.file_name().and_then(flip_case)) {
        (Some(dir), Some(name)) => dir.join(name),
        _ => entry.to_path_buf(),
    }
}

/// Probe each writable tree (`roots`) that holds protected paths. A tree that folds beneath
/// the kernel refuses the plan, unless the profile accepts it (`case_folding = "accept"`),
/// which the report then names `partial`. Trees the kernel folds are reported too: there the
/// mounts hold.
pub(super) fn validate_names(
    caps: &CapabilitySet,
    roots: &[PathBuf],
    fs: &dyn DirLister,
    report: &mut Vec<Layer>,
) -> Result<(), PlanError> {
    let mut accepted: Vec<CaseFolded> = Vec::new();
    let mut by_kernel: Vec<&Path> = Vec::new();
    for root in roots {
        let Some((case, probed)) = probe_root(caps, root, fs) else {
            continue;
        };
        match case {
            NameCase::Exact | NameCase::Untold => {}
            NameCase::FoldedByKernel => by_kernel.push(root),
            NameCase::FoldedBeneath { fs } => {
                let folded = CaseFolded {
                    root: root.clone(),
                    fs,
                    entry: (probed != *root).then_some(probed),
                };
                match caps.fs.case_folding {
                    CaseFolding::Refuse => return Err(PlanError::CaseFolded(Box::new(folded))),
                    CaseFolding::Accept => accepted.push(folded),
                }
            }
        }
    }
    if let Some(layer) = names_layer(&accepted, &by_kernel) {
        report.push(layer);
    }
    Ok(())
}

/// The report's line for protected names, when any tree folds case.
fn names_layer(accepted: &[CaseFolded], by_kernel: &[&Path]) -> Option<Layer> {
    let list = |v: Vec<String>| v.join(", ");
    if !accepted.is_empty() {
        let trees = list(
            accepted
                .iter()
                .map(|f| format!("{} ({})", f.root.display(), f.fs))
                .collect(),
        );
        return Some(Layer {
            name: "protected-names".into(),
            status: LayerStatus::Partial,
            detail: format!(
                "names fold case beneath the kernel in {trees} (filesystem.case_folding = \"accept\"): a case variant of a read-only path is written around its mount, and the protected names made during the run are checked after it without case"
            ),
        });
    }
    (!by_kernel.is_empty()).then(|| Layer {
        name: "protected-names".into(),
        status: LayerStatus::Enforced,
        detail: format!(
            "the kernel folds case in {}: every case variant of a read-only path reaches its mount",
            list(by_kernel.iter().map(|p| p.display().to_string()).collect())
        ),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::capability::{Origin, PathEntry};
    use crate::plan::FakeFs;

    fn entry(p: &str) -> PathEntry {
        PathEntry {
            path: PathBuf::from(p),
            required: false,
            origin: Origin::builtin("test"),
        }
    }

    fn caps(deny_write: &[&str], case_folding: CaseFolding) -> CapabilitySet {
        use crate::capability::{EnvFilter, FsCaps, Isolation, Limits, NetworkMode};
        CapabilitySet {
            fs: FsCaps {
                write: vec![entry("/ws")],
                deny_write: deny_write.iter().map(|p| entry(p)).collect(),
                case_folding,
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

    /// Asks which name is probed, and answers as the fake's folding says.
    struct Probed(FakeFs, std::cell::RefCell<Vec<PathBuf>>);
    impl DirLister for Probed {
        fn list(&self, d: &Path) -> Vec<PathBuf> {
            self.0.list(d)
        }
        fn is_dir(&self, p: &Path) -> bool {
            self.0.is_dir(p)
        }
        fn exists(&self, p: &Path) -> bool {
            DirLister::exists(&self.0, p)
        }
        fn read_link(&self, p: &Path) -> Option<PathBuf> {
            DirLister::read_link(&self.0, p)
        }
        fn name_case(&self, p: &Path) -> NameCase {
            self.1.borrow_mut().push(p.to_path_buf());
            self.0.name_case(p)
        }
        fn name_case_in(&self, d: &Path) -> NameCase {
            self.1.borrow_mut().push(d.join("*"));
            self.0.name_case_in(d)
        }
    }

    fn probed(fs: FakeFs, c: &CapabilitySet) -> (Result<Vec<Layer>, PlanError>, Vec<PathBuf>) {
        let fs = Probed(fs, Default::default());
        let mut report = Vec::new();
        let r = validate_names(c, &[PathBuf::from("/ws")], &fs, &mut report).map(|()| report);
        (r, fs.1.into_inner())
    }

    const PROTECTED: [&str; 3] = ["/ws/.git/hooks", "/ws/.git/config", "/ws/.envrc"];

    /// One probe per tree, on a protected file first, then a protected directory, then any
    /// entry; none where nothing is protected or nothing has a name to flip.
    #[test]
    fn the_name_probed() {
        let c = caps(&PROTECTED, CaseFolding::Refuse);
        let full = FakeFs::new()
            .dir("/ws/.git/hooks")
            .file("/ws/.git/config", "");
        assert_eq!(probed(full, &c).1, [PathBuf::from("/ws/.git/config")]);
        let dirs = FakeFs::new().dir("/ws/.git/hooks");
        assert_eq!(probed(dirs, &c).1, [PathBuf::from("/ws/.git/hooks")]);
        let other = FakeFs::new().file("/ws/1", "").file("/ws/src", "");
        assert_eq!(probed(other.clone(), &c).1, [PathBuf::from("/ws/*")]);
        let unprotected = caps(&["/elsewhere/.envrc"], CaseFolding::Refuse);
        assert!(probed(other, &unprotected).1.is_empty());
        // An entry of the tree tells when no protected name exists; none with a letter
        // cannot.
        let folding = |f: FakeFs| f.names("/ws", NameCase::FoldedBeneath { fs: "9p".into() });
        let other = folding(FakeFs::new().file("/ws/1", "").file("/ws/src", ""));
        let err = probed(other, &c).0.unwrap_err().to_string();
        assert!(err.starts_with("/ws is on a file system (9p) that finds a name under another case while the kernel does not fold it. "), "{err}");
        let nameless = folding(FakeFs::new().file("/ws/1", ""));
        assert!(probed(nameless, &c).0.unwrap().is_empty());
    }

    /// Folding beneath the kernel refuses the plan, naming the tree, the file system and the
    /// variant; accepted, it is a partial line; the kernel's own folding is enforced; exact
    /// names add no line.
    #[test]
    fn verdicts_in_the_plan() {
        let fs = |case: NameCase| FakeFs::new().file("/ws/.git/config", "").names("/ws", case);
        let beneath = NameCase::FoldedBeneath { fs: "fuse".into() };
        let refuse = caps(&PROTECTED, CaseFolding::Refuse);
        let err = probed(fs(beneath.clone()), &refuse).0.unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("/ws is on a file system (fuse)") && text.contains("/ws/.git/CONFIG"),
            "{text}"
        );
        assert!(text.contains("case_folding = \"accept\""), "{text}");
        let accept = caps(&PROTECTED, CaseFolding::Accept);
        let layers = probed(fs(beneath), &accept).0.unwrap();
        assert_eq!(layers.len(), 1);
        assert_eq!(layers[0].status, LayerStatus::Partial);
        assert!(layers[0].detail.contains("/ws (fuse)"), "{:?}", layers[0]);
        let kernel = probed(fs(NameCase::FoldedByKernel), &refuse).0.unwrap();
        assert_eq!(kernel[0].status, LayerStatus::Enforced);
        assert!(probed(fs(NameCase::Exact), &refuse).0.unwrap().is_empty());
        assert!(probed(fs(NameCase::Untold), &refuse).0.unwrap().is_empty());
    }
}
