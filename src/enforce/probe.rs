//! Questions to the kernel that restrict nothing: which Landlock ABI it speaks, whether it has
//! seccomp filtering. Host detection asks them; they live here because they are raw syscalls,
//! and `unsafe` stays in the enforce and exec layers.

/// Whether the kernel has seccomp filtering: `SECCOMP_GET_ACTION_AVAIL` (Linux 4.14+) for
/// the errno action, which every sbx filter uses.
pub(crate) fn seccomp_filter_supported() -> bool {
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

/// The kernel's Landlock ABI version, without restricting anything; `None` when Landlock is
/// not enabled.
pub(crate) fn landlock_abi() -> Option<i32> {
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
