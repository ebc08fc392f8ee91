//! What this host can enforce, detected once and cheaply (no process is forked).
//!
//! Two raw syscalls live here, outside the enforce and exec layers that hold every other
//! `unsafe` block: asking the kernel for its Landlock ABI and whether it has seccomp
//! filtering. Both only ask (they restrict nothing and create nothing), and moving them into
//! `enforce` would make detection depend on the layer that consumes its result (`enforce`
//! reads [`Host`]), a cycle. Each block carries its `SAFETY` argument.
pub(crate) mod cgroup;
pub mod names;

pub use cgroup::{CgroupBase, CgroupHost, CgroupVersion, Controller};
pub use names::NameCase;
use serde::Serialize;

/// The Landlock ABI this code is written for; newer kernels are used up to it.
pub const LANDLOCK_ABI: i32 = 6;
/// The oldest Landlock ABI sbx uses at all (ABI 1 lacks file rename control).
pub const LANDLOCK_ABI_FLOOR: i32 = 2;

/// Whether a feature is there, and if not, why and how to fix it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Availability {
    /// It is there.
    Available,
    /// It is not.
    Missing {
        /// Why not.
        reason: String,
        /// How to make it available.
        fix: String,
    },
}

impl Availability {
    /// Whether it is there.
    pub fn ok(&self) -> bool {
        matches!(self, Availability::Available)
    }
}

/// The host's features as far as sbx cares.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Host {
    /// The effective user id sbx runs as.
    pub euid: u32,
    /// The effective group id.
    pub egid: u32,
    /// Landlock ABI version reported by the kernel, if Landlock is enabled.
    pub landlock_abi: Option<i32>,
    /// Landlock at the floor ABI or newer.
    pub landlock: Availability,
    /// Seccomp filtering.
    pub seccomp: Availability,
    /// Unprivileged user namespaces (only needed when not root).
    pub user_namespaces: Availability,
    /// Whether sbx can create mount, PID and network namespaces (as root, or in a user namespace).
    pub namespaces: Availability,
    /// Where a cgroup per run can bound the whole tree's memory and processes.
    pub cgroups: CgroupHost,
    /// Each PID namespace has its own pid_max (Linux 6.14 and later).
    pub pid_max_per_namespace: bool,
    /// sbx holds CAP_SETPCAP, so the command may clear its bounding set without a user
    /// namespace (root in a container may lack it).
    pub can_drop_bounding: bool,
}

/// Whether the running kernel's release is at least `major.minor`.
pub fn kernel_at_least(major: u32, minor: u32) -> bool {
    let Ok(uts) = nix::sys::utsname::uname() else {
        return false;
    };
    let rel = uts.release().to_string_lossy().into_owned();
    let mut it = rel
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|x| x.parse::<u32>().ok());
    let (a, b) = (it.next().unwrap_or(0), it.next().unwrap_or(0));
    (a, b) >= (major, minor)
}

/// Whether the kernel has seccomp filtering: `SECCOMP_GET_ACTION_AVAIL` (Linux 4.14+) for
/// the errno action, which every sbx filter uses.
fn seccomp_filter_supported() -> bool {
    const SECCOMP_GET_ACTION_AVAIL: libc::c_ulong = 2;
    let action: u32 = libc::SECCOMP_RET_ERRNO;
    // SAFETY: the kernel reads one u32 from `action`, which lives across the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            SECCOMP_GET_ACTION_AVAIL,
            0 as libc::c_ulong,
            &raw const action,
        )
    };
    r == 0
}

fn read_trim(p: &str) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
}

/// Query the kernel's Landlock ABI without restricting anything.
pub fn landlock_abi() -> Option<i32> {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: landlock_create_ruleset with a NULL attr, size 0 and the VERSION flag only returns
    // the ABI version number; it creates no object and touches no memory.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    (v > 0).then_some(v as i32)
}

fn userns_availability() -> Availability {
    if std::env::var_os("SBX_DISABLE_USERNS").is_some() {
        return Availability::Missing {
            reason: "user namespaces disabled by SBX_DISABLE_USERNS".into(),
            fix: "unset SBX_DISABLE_USERNS".into(),
        };
    }
    if read_trim("/proc/sys/kernel/unprivileged_userns_clone").as_deref() == Some("0") {
        return Availability::Missing {
            reason: "the sysctl kernel.unprivileged_userns_clone is 0".into(),
            fix: "sysctl -w kernel.unprivileged_userns_clone=1".into(),
        };
    }
    if read_trim("/proc/sys/user/max_user_namespaces").as_deref() == Some("0") {
        return Availability::Missing {
            reason: "the sysctl user.max_user_namespaces is 0".into(),
            fix: "sysctl -w user.max_user_namespaces=15000".into(),
        };
    }
    if read_trim("/proc/sys/kernel/apparmor_restrict_unprivileged_userns").as_deref() == Some("1") {
        return Availability::Missing {
            reason: "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1)".into(),
            fix: "install an AppArmor profile granting `userns` to the sbx binary, or sysctl -w kernel.apparmor_restrict_unprivileged_userns=0".into(),
        };
    }
    Availability::Available
}

impl Host {
    /// Detect the host's features. Reads a few files and makes one syscall.
    pub fn detect() -> Host {
        let euid = nix::unistd::geteuid().as_raw();
        let egid = nix::unistd::getegid().as_raw();
        let abi = landlock_abi();
        let landlock = match abi {
            Some(v) if v >= LANDLOCK_ABI_FLOOR => Availability::Available,
            Some(v) => Availability::Missing {
                reason: format!("Landlock ABI {v} is older than the required {LANDLOCK_ABI_FLOOR}"),
                fix: "upgrade to Linux 5.19 or newer".into(),
            },
            None => Availability::Missing {
                reason: "Landlock is not enabled in this kernel".into(),
                fix: "boot Linux 5.13+ with `lsm=landlock,...` on the command line (CONFIG_SECURITY_LANDLOCK=y)".into(),
            },
        };
        let seccomp = if seccomp_filter_supported() {
            Availability::Available
        } else {
            Availability::Missing {
                reason: "the kernel lacks seccomp filtering".into(),
                fix: "use a kernel built with CONFIG_SECCOMP_FILTER=y".into(),
            }
        };
        let user_namespaces = userns_availability();
        let namespaces = if euid == 0 && std::env::var_os("SBX_DISABLE_USERNS").is_none() {
            Availability::Available
        } else {
            user_namespaces.clone()
        };
        Host {
            euid,
            egid,
            landlock_abi: abi,
            landlock,
            seccomp,
            user_namespaces,
            namespaces,
            cgroups: cgroup::detect(),
            pid_max_per_namespace: kernel_at_least(6, 14),
            can_drop_bounding: caps::has_cap(
                None,
                caps::CapSet::Effective,
                caps::Capability::CAP_SETPCAP,
            )
            .unwrap_or(false),
        }
    }
}
