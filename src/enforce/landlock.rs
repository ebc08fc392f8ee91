//! Build the Landlock ruleset in the parent; the child only calls `restrict_self`.
use crate::capability::Origin;
use crate::plan::{FsRight, LandlockPlan};
use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreatedAttr, Scope,
};
use std::path::PathBuf;

/// Why the Landlock ruleset could not be built (re-exported as
/// [`exec::LandlockError`](crate::exec::LandlockError)).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LandlockError {
    /// The `landlock` crate refused the ruleset.
    #[error("landlock ruleset: {source}")]
    Ruleset {
        /// Its error.
        #[source]
        source: landlock::RulesetError,
    },
    /// The plan has Landlock rules and the kernel has no Landlock.
    #[error("Landlock is not supported by this kernel")]
    Unsupported,
    /// A path the profile requires cannot be opened for its rule.
    #[error("{origin}: required path {path} cannot be opened: {source}")]
    RequiredPath {
        /// The path.
        path: PathBuf,
        /// The profile entry that requires it.
        origin: Origin,
        /// Why it cannot be opened.
        source: std::io::Error,
    },
}

fn abi(v: i32) -> ABI {
    match v {
        ..=1 => ABI::V1,
        2 => ABI::V2,
        3 => ABI::V3,
        4 => ABI::V4,
        5 => ABI::V5,
        _ => ABI::V6,
    }
}

fn rights(r: &[FsRight], abi: ABI) -> BitFlags<AccessFs> {
    let mut out = BitFlags::<AccessFs>::empty();
    for x in r {
        out |= match x {
            FsRight::Execute => AccessFs::Execute.into(),
            FsRight::ReadFile => AccessFs::ReadFile.into(),
            FsRight::ReadDir => AccessFs::ReadDir.into(),
            FsRight::WriteFile => AccessFs::WriteFile.into(),
            FsRight::Truncate => AccessFs::Truncate.into(),
            FsRight::Refer => AccessFs::Refer.into(),
            FsRight::IoctlDev => AccessFs::IoctlDev.into(),
            FsRight::MakeAndRemove => {
                AccessFs::RemoveDir
                    | AccessFs::RemoveFile
                    | AccessFs::MakeChar
                    | AccessFs::MakeDir
                    | AccessFs::MakeReg
                    | AccessFs::MakeSock
                    | AccessFs::MakeFifo
                    | AccessFs::MakeBlock
                    | AccessFs::MakeSym
            }
        };
    }
    out & AccessFs::from_all(abi)
}

/// A rule added inside the sandbox once its mounts exist.
#[derive(Debug)]
pub struct LateRule {
    pub path: std::ffi::CString,
    /// Rights when the path is a directory.
    pub dir_access: u64,
    /// Rights when it is a file (Landlock refuses directory rights on files).
    pub file_access: u64,
    pub required: bool,
}

/// The ruleset fd with the parent's rules added, and what is left for the child.
pub struct Built {
    pub ruleset: std::os::fd::OwnedFd,
    pub late: Vec<LateRule>,
    /// Optional paths that do not exist, for the report.
    pub skipped: Vec<PathBuf>,
}

/// Open every rule's path and add it. Optional missing paths are skipped and listed.
pub fn build(plan: &LandlockPlan) -> Result<Built, LandlockError> {
    let abi = abi(plan.abi);
    let map = |source| LandlockError::Ruleset { source };
    let mut rs = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .map_err(map)?;
    if plan.deny_tcp {
        rs = rs.handle_access(AccessNet::from_all(abi)).map_err(map)?;
    }
    let mut scopes = BitFlags::<Scope>::empty();
    if plan.scope_signals {
        scopes |= Scope::Signal;
    }
    if plan.scope_abstract_unix {
        scopes |= Scope::AbstractUnixSocket;
    }
    if !scopes.is_empty() {
        rs = rs.scope(scopes).map_err(map)?;
    }
    let mut created = rs.create().map_err(map)?;
    let mut skipped = Vec::new();
    let mut late = Vec::new();
    for rule in &plan.rules {
        if rule.after_mounts {
            let all = rights(&rule.rights, abi);
            late.push(LateRule {
                path: super::cstr(&rule.path).map_err(|_| LandlockError::RequiredPath {
                    path: rule.path.clone(),
                    origin: rule.origin.clone(),
                    source: std::io::Error::from(std::io::ErrorKind::InvalidInput),
                })?,
                dir_access: all.bits(),
                file_access: (all & AccessFs::from_file(abi)).bits(),
                required: rule.required,
            });
            continue;
        }
        let fd = match PathFd::new(&rule.path) {
            Ok(fd) => fd,
            Err(e) => {
                if rule.required {
                    return Err(LandlockError::RequiredPath {
                        path: rule.path.clone(),
                        origin: rule.origin.clone(),
                        source: std::io::Error::other(e.to_string()),
                    });
                }
                skipped.push(rule.path.clone());
                continue;
            }
        };
        // The open descriptor's own type: no second walk of the path.
        let is_dir = nix::sys::stat::fstat(std::os::fd::AsFd::as_fd(&fd))
            .is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFDIR);
        let mut access = rights(&rule.rights, abi);
        if !is_dir {
            access &= AccessFs::from_file(abi);
        }
        if access.is_empty() {
            continue;
        }
        created = created
            .add_rule(PathBeneath::new(fd, access))
            .map_err(map)?;
    }
    for port in &plan.tcp_connect {
        created = created
            .add_rule(landlock::NetPort::new(*port, AccessNet::ConnectTcp))
            .map_err(map)?;
    }
    let ruleset: Option<std::os::fd::OwnedFd> = created.into();
    let ruleset = ruleset.ok_or(LandlockError::Unsupported)?;
    Ok(Built {
        ruleset,
        late,
        skipped,
    })
}
