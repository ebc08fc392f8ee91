//! seccomp: the baseline list of denied syscalls, and the seccomp part of the plan (socket
//! families, the profile's extra denials, clone3, x32 and 32-bit entry, ioctls).
#![forbid(unsafe_code)]

use super::{Gap, Layer, LayerStatus, Namespaces, PlanInput, missing};
use crate::capability::{NetworkMode, Origin, Protection};
use crate::host::Availability;
use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
/// The seccomp filter, before it is compiled to BPF.
pub struct SeccompPlan {
    /// Syscalls answered with EPERM.
    pub denied: Vec<String>,
    /// Extra syscalls denied by the profile, with where (`[name, origin]` pairs in JSON, as
    /// `sbx explain --json` has always printed them).
    pub extra: Vec<(String, Origin)>,
    /// `socket(2)` domains allowed; every other domain gets EAFNOSUPPORT.
    pub socket_families: Vec<String>,
    /// `AF_INET` and `AF_INET6` sockets must be streams (TCP); other types get EACCES. Set in
    /// `proxy` mode without a network namespace, where Landlock keeps TCP to the proxy's port
    /// and nothing else would keep UDP, ICMP or raw sockets from the host's network.
    pub inet_stream_only: bool,
    /// clone/unshare flags that create namespaces are refused.
    pub deny_namespace_clone: bool,
    /// clone3 answers ENOSYS so that libc falls back to clone, whose flags are inspectable.
    pub clone3_enosys: bool,
    /// The x32 ABI answers EPERM; 32-bit entry points kill the process.
    pub block_x32_and_i386: bool,
    /// ioctl requests answered with EPERM.
    pub deny_ioctls: Vec<String>,
    /// chmod, mknod and creating opens refuse the setuid and setgid bits (EPERM).
    pub deny_setid_modes: bool,
}

/// Syscalls every sandbox denies.
pub const BASE_DENIED_SYSCALLS: &[&str] = &[
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "setns",
    "unshare",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "acct",
    "quotactl",
    "quotactl_fd",
    "sethostname",
    "setdomainname",
    "iopl",
    "ioperm",
    "lookup_dcookie",
    "name_to_handle_at",
    "open_by_handle_at",
    "syslog",
    "vhangup",
    "nfsservctl",
    "uselib",
    "pidfd_getfd",
    "kcmp",
    "fanotify_init",
    "vmsplice",
];

/// The seccomp part of the plan, or `None` (with its gap and report line) when the host
/// has no seccomp.
pub(super) fn seccomp_plan(
    input: &PlanInput<'_>,
    namespaces: &Namespaces,
    gaps: &mut Vec<Gap>,
    report: &mut Vec<Layer>,
) -> Option<SeccompPlan> {
    let caps = input.caps;
    let host = input.host;
    // seccomp.
    if host.seccomp.ok() {
        let families: Vec<String> = match (caps.network, namespaces.net) {
            (NetworkMode::None, _) | (NetworkMode::Loopback, false) => vec!["AF_UNIX".into()],
            // Only the proxy's port is reachable, by Landlock; netlink would list the host's
            // interfaces.
            (NetworkMode::Proxy, false) => {
                vec!["AF_UNIX".into(), "AF_INET".into(), "AF_INET6".into()]
            }
            (NetworkMode::Loopback | NetworkMode::Proxy, true) | (NetworkMode::Host, _) => {
                vec![
                    "AF_UNIX".into(),
                    "AF_INET".into(),
                    "AF_INET6".into(),
                    "AF_NETLINK".into(),
                ]
            }
        };
        let inet_stream_only = caps.network == NetworkMode::Proxy && !namespaces.net;
        let mut denied: Vec<String> = BASE_DENIED_SYSCALLS.iter().map(|s| s.to_string()).collect();
        let extra: Vec<(String, Origin)> = caps
            .extra_denied_syscalls
            .iter()
            .map(|s| (s.name.clone(), s.origin.clone()))
            .collect();
        for (s, _) in &extra {
            if !denied.contains(s) {
                denied.push(s.clone());
            }
        }
        report.push(Layer {
            name: "seccomp".into(),
            status: LayerStatus::Enforced,
            detail: format!("{} syscalls denied; sockets: {}{}; clone3 ENOSYS; x32 and 32-bit entry blocked; TIOCSTI/TIOCLINUX denied; no setuid/setgid modes; personality: query, PER_LINUX(32), UNAME26 only", denied.len(), families.join(","), if inet_stream_only { " (inet: TCP only)" } else { "" }),
        });
        Some(SeccompPlan {
            denied,
            extra,
            socket_families: families,
            inet_stream_only,
            deny_namespace_clone: true,
            clone3_enosys: true,
            block_x32_and_i386: true,
            deny_ioctls: vec!["TIOCSTI".into(), "TIOCLINUX".into()],
            deny_setid_modes: true,
        })
    } else {
        if let Availability::Missing { reason, fix } = &host.seccomp {
            gaps.push(missing(Protection::Seccomp, reason, fix));
            report.push(Layer {
                name: "seccomp".into(),
                status: LayerStatus::NotEnforced,
                detail: reason.clone(),
            });
        }
        None
    }
}
