//! The init's setup steps in the new namespaces: mount operations, Landlock rules for the
//! file systems it mounted, and the loopback interface. Raw syscalls on prepared data only.
#![allow(clippy::missing_safety_doc)]

use super::messages::{MOUNT_OP, Step, errno, fail, or_fail, write_file};
use super::mounts::Op;
use libc::c_int;
use std::ffi::CStr;

/// `struct landlock_path_beneath_attr`, which the kernel declares packed.
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

pub(super) unsafe fn add_late_rules(
    ruleset: c_int,
    rules: &[super::landlock::LateRule],
    msgs: c_int,
) {
    const LANDLOCK_RULE_PATH_BENEATH: c_int = 1;
    for r in rules {
        // SAFETY: open/fstat/close on a prepared path; the attr lives on the stack.
        unsafe {
            let fd = libc::open(r.path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC);
            if fd < 0 {
                if r.required {
                    fail(msgs, Step::Landlock, errno());
                }
                continue;
            }
            let mut st: libc::stat = std::mem::zeroed();
            let is_dir =
                libc::fstat(fd, &mut st) == 0 && (st.st_mode & libc::S_IFMT) == libc::S_IFDIR;
            let access = if is_dir { r.dir_access } else { r.file_access };
            if access != 0 {
                let attr = PathBeneathAttr {
                    allowed_access: access,
                    parent_fd: fd,
                };
                or_fail!(
                    msgs,
                    Step::Landlock,
                    libc::syscall(
                        libc::SYS_landlock_add_rule,
                        ruleset,
                        LANDLOCK_RULE_PATH_BENEATH,
                        &raw const attr,
                        0u32
                    )
                );
            }
            libc::close(fd);
        }
    }
}

#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// Run the mount operations in order; the first failure is reported and the init exits.
pub(super) unsafe fn apply_mount_ops(ops: &[Op], slots: &mut [c_int], msgs: c_int) {
    use std::sync::atomic::Ordering::Relaxed;
    for (i, op) in ops.iter().enumerate() {
        // A failure names the operation, and so its path.
        MOUNT_OP.store(i32::try_from(i).unwrap_or(-1), Relaxed);
        // SAFETY: every pointer comes from a CString owned by `ops` or a literal.
        unsafe { apply_mount_op(op, slots, msgs) }
    }
    MOUNT_OP.store(-1, Relaxed);
}

unsafe fn apply_mount_op(op: &Op, slots: &mut [c_int], msgs: c_int) {
    let nosuid_nodev = libc::MS_NOSUID | libc::MS_NODEV;
    // SAFETY: the callers' pointers are NUL-terminated strings owned by `op` or literals.
    unsafe {
        match op {
            Op::MakePrivate => or_fail!(
                msgs,
                Step::MakePrivate,
                raw_mount(None, c"/", None, libc::MS_REC | libc::MS_PRIVATE, None)
            ),
            Op::Clone { path, slot } => slots[*slot] = clone_tree(path, msgs),
            Op::Tmpfs { target, data } => {
                let r = raw_mount(
                    Some(c"tmpfs"),
                    target,
                    Some(c"tmpfs"),
                    nosuid_nodev,
                    Some(data),
                );
                or_fail!(msgs, Step::Tmpfs, r);
            }
            Op::Mkdir { path } => {
                if libc::mkdir(path.as_ptr(), 0o755) < 0 && errno() != libc::EEXIST {
                    fail(msgs, Step::Mkdir, errno());
                }
            }
            Op::MkdirMode { path, mode } => {
                or_fail!(msgs, Step::Mkdir, libc::mkdir(path.as_ptr(), *mode));
                or_fail!(msgs, Step::Mkdir, libc::chmod(path.as_ptr(), *mode));
            }
            Op::Touch { path } => touch(path, msgs),
            Op::Attach { slot, target } => attach(slots[*slot], target, msgs),
            Op::BindSelf { path } => {
                let flags = libc::MS_BIND | libc::MS_REC;
                or_fail!(
                    msgs,
                    Step::Bind,
                    raw_mount(Some(path), path, None, flags, None)
                );
            }
            Op::BindFile { src, target } => {
                let r = raw_mount(Some(src), target, None, libc::MS_BIND, None);
                or_fail!(msgs, Step::Bind, r);
            }
            Op::BindNoFollow { src, target } => bind_no_follow(src, target, msgs),
            Op::SetAttr { path, attr } => set_attr(path, *attr, 0, msgs),
            Op::ClearAttr { path, attr } => set_attr(path, 0, *attr, msgs),
            Op::Proc => {
                let flags = nosuid_nodev | libc::MS_NOEXEC;
                let r = raw_mount(Some(c"proc"), c"/proc", Some(c"proc"), flags, None);
                or_fail!(msgs, Step::Proc, r);
            }
            Op::Devpts => {
                let flags = libc::MS_NOSUID | libc::MS_NOEXEC;
                let data = c"newinstance,ptmxmode=0666,mode=0620";
                let r = raw_mount(
                    Some(c"devpts"),
                    c"/dev/pts",
                    Some(c"devpts"),
                    flags,
                    Some(data),
                );
                or_fail!(msgs, Step::Devpts, r);
            }
            Op::WriteFile { path, data } => {
                or_fail!(msgs, Step::Proc, write_file(path, data.as_bytes()))
            }
            Op::Symlink { target, link } => or_fail!(
                msgs,
                Step::Symlink,
                libc::symlink(target.as_ptr(), link.as_ptr())
            ),
        }
    }
}

/// mount(2), with a null pointer for each argument that is `None`.
unsafe fn raw_mount(
    src: Option<&CStr>,
    target: &CStr,
    fstype: Option<&CStr>,
    flags: libc::c_ulong,
    data: Option<&CStr>,
) -> c_int {
    let ptr = |s: Option<&CStr>| s.map_or(std::ptr::null(), CStr::as_ptr);
    // SAFETY: each pointer is null or a NUL-terminated string that outlives the call.
    unsafe {
        libc::mount(
            ptr(src),
            target.as_ptr(),
            ptr(fstype),
            flags,
            ptr(data).cast(),
        )
    }
}

/// A detached recursive copy of the tree at `path` (open_tree with OPEN_TREE_CLONE): its fd.
unsafe fn clone_tree(path: &CStr, msgs: c_int) -> c_int {
    const OPEN_TREE_CLONE: libc::c_uint = 1;
    // SAFETY: a NUL-terminated path; `or_fail!` exits on failure.
    unsafe {
        let fd = libc::syscall(
            libc::SYS_open_tree,
            libc::AT_FDCWD,
            path.as_ptr(),
            OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint | libc::AT_RECURSIVE as libc::c_uint,
        ) as c_int;
        or_fail!(msgs, Step::CloneMount, fd);
        fd
    }
}

/// Attach the detached tree `fd` at `target` (move_mount), then close it.
unsafe fn attach(fd: c_int, target: &CStr, msgs: c_int) {
    // SAFETY: as `attach_as`.
    unsafe { attach_as(fd, target, Step::AttachMount, msgs) }
}

/// [`attach`], a failure reported as `step`. A link at `target` is mounted on, not followed
/// (no MOVE_MOUNT_T_SYMLINKS).
unsafe fn attach_as(fd: c_int, target: &CStr, step: Step, msgs: c_int) {
    const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 4;
    // SAFETY: a NUL-terminated path and an fd this process opened.
    unsafe {
        let r = libc::syscall(
            libc::SYS_move_mount,
            fd,
            c"".as_ptr(),
            libc::AT_FDCWD,
            target.as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH,
        );
        or_fail!(msgs, step, r);
        libc::close(fd);
    }
}

/// Attach a copy of `src` at `target` (open_tree, move_mount), a link at either not followed:
/// mount(2) would follow it, and a link is mounted on only by the new mount API.
unsafe fn bind_no_follow(src: &CStr, target: &CStr, msgs: c_int) {
    const OPEN_TREE_CLONE: libc::c_uint = 1;
    // SAFETY: NUL-terminated paths; `or_fail!` exits on failure; the fd is closed.
    unsafe {
        let flags = OPEN_TREE_CLONE
            | libc::O_CLOEXEC as libc::c_uint
            | libc::AT_SYMLINK_NOFOLLOW as libc::c_uint;
        let fd = libc::syscall(libc::SYS_open_tree, libc::AT_FDCWD, src.as_ptr(), flags) as c_int;
        or_fail!(msgs, Step::Bind, fd);
        attach_as(fd, target, Step::Bind, msgs);
    }
}

/// An empty file at `path`, a mount point for a file.
unsafe fn touch(path: &CStr, msgs: c_int) {
    // SAFETY: a NUL-terminated path; the fd is closed.
    unsafe {
        let flags = libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC;
        let fd = libc::open(path.as_ptr(), flags, 0o644);
        or_fail!(msgs, Step::Touch, fd);
        libc::close(fd);
    }
}

/// Set mount attributes `attr` on the mounts at and beneath `path` (mount_setattr).
pub(super) unsafe fn set_attr(path: &CStr, set: u64, clear: u64, msgs: c_int) {
    let attr = MountAttr {
        attr_set: set,
        attr_clr: clear,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: a NUL-terminated path; the attr lives on the stack, its size given.
    unsafe {
        let r = libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path.as_ptr(),
            libc::AT_RECURSIVE,
            &raw const attr,
            std::mem::size_of::<MountAttr>(),
        );
        or_fail!(msgs, Step::ReadOnly, r);
    }
}

/// Bring `lo` up in the current network namespace: 0, or -1 with errno set. Async-signal-safe:
/// a socket, two ioctls, a close.
fn bring_up_lo() -> c_int {
    // SAFETY: a zeroed ifreq with a NUL-terminated name is valid for SIOC[GS]IFFLAGS; the
    // socket is closed on every path.
    unsafe {
        let s = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if s < 0 {
            return -1;
        }
        let mut ifr: libc::ifreq = std::mem::zeroed();
        ifr.ifr_name[0] = b'l' as libc::c_char;
        ifr.ifr_name[1] = b'o' as libc::c_char;
        let mut r = libc::ioctl(s, libc::SIOCGIFFLAGS, &mut ifr);
        if r == 0 {
            ifr.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
            r = libc::ioctl(s, libc::SIOCSIFFLAGS, &ifr);
        }
        let err = errno();
        libc::close(s);
        if r < 0 {
            *libc::__errno_location() = err;
            return -1;
        }
        0
    }
}

pub(super) unsafe fn loopback_up(msgs: c_int) {
    // SAFETY: `or_fail!` reports and exits on failure; see `bring_up_lo`.
    unsafe { or_fail!(msgs, Step::Loopback, bring_up_lo()) }
}

/// Control-message space for one fd, aligned as `struct cmsghdr` needs.
#[repr(C, align(8))]
struct CmsgBuf([u8; 64]);

/// Open the proxy's listening socket on `127.0.0.1:port` of the sandbox's network namespace
/// and send it to sbx over `chan` (SCM_RIGHTS), then close both here. Async-signal-safe:
/// socket calls and a sendmsg on stack buffers.
pub(super) unsafe fn hand_over_listener(port: u16, chan: c_int, msgs: c_int) {
    // SAFETY: plain socket syscalls; every buffer lives on this stack frame, and the
    // control message is built inside `cmsg` with the libc macros.
    unsafe {
        let s = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        or_fail!(msgs, Step::Proxy, s);
        let addr = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: port.to_be(),
            sin_addr: libc::in_addr {
                s_addr: u32::from_be_bytes([127, 0, 0, 1]).to_be(),
            },
            sin_zero: [0; 8],
        };
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        or_fail!(
            msgs,
            Step::Proxy,
            libc::bind(s, (&raw const addr).cast(), len)
        );
        or_fail!(msgs, Step::Proxy, libc::listen(s, 1024));
        let mut byte = [b'P'];
        let mut iov = libc::iovec {
            iov_base: byte.as_mut_ptr().cast(),
            iov_len: 1,
        };
        let mut cmsg = CmsgBuf([0; 64]);
        let space = libc::CMSG_SPACE(std::mem::size_of::<c_int>() as u32) as usize;
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cmsg.0.as_mut_ptr().cast();
        msg.msg_controllen = space;
        let hdr = libc::CMSG_FIRSTHDR(&msg);
        (*hdr).cmsg_level = libc::SOL_SOCKET;
        (*hdr).cmsg_type = libc::SCM_RIGHTS;
        (*hdr).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<c_int>() as u32) as usize;
        std::ptr::write_unaligned(libc::CMSG_DATA(hdr).cast::<c_int>(), s);
        or_fail!(msgs, Step::Proxy, libc::sendmsg(chan, &msg, 0) as c_int);
        libc::close(s);
        libc::close(chan);
    }
}
