//! The program is checked by running it: a small classic-BPF interpreter answers
//! every syscall number the way the kernel would, and the answer is compared with the plan.
#![expect(
    clippy::unwrap_used,
    reason = "a test fails loudly when a name or a compile is wrong"
)]
use super::*;

const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
const AUDIT_ARCH_I386: u32 = 0x4000_0003;
const EPERM: u32 = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;

/// `struct seccomp_data`: nr, arch, instruction pointer, six arguments.
fn data(arch: u32, nr: u32, args: [u64; 6]) -> Vec<u8> {
    let mut d = Vec::with_capacity(64);
    d.extend_from_slice(&nr.to_ne_bytes());
    d.extend_from_slice(&arch.to_ne_bytes());
    d.extend_from_slice(&0u64.to_ne_bytes());
    for a in args {
        d.extend_from_slice(&a.to_ne_bytes());
    }
    d
}

/// Run a classic BPF program over `seccomp_data`, as `seccomp(2)` does.
fn interpret(prog: &[sock_filter], data: &[u8]) -> u32 {
    let (mut a, mut x, mut pc) = (0u32, 0u32, 0usize);
    loop {
        let ins = &prog[pc];
        pc += 1;
        let k = ins.k;
        let src = if ins.code & 0x08 != 0 { x } else { k };
        match ins.code & 0x07 {
            0x00 => {
                // BPF_LD: only BPF_W | BPF_ABS is valid for seccomp.
                assert_eq!(ins.code, 0x20, "unexpected load {:#x}", ins.code);
                let o = k as usize;
                a = u32::from_ne_bytes([data[o], data[o + 1], data[o + 2], data[o + 3]]);
            }
            0x01 => x = k,
            0x04 => {
                a = match ins.code & 0xf0 {
                    0x00 => a.wrapping_add(src),
                    0x10 => a.wrapping_sub(src),
                    0x50 => a & src,
                    0x40 => a | src,
                    op => panic!("unexpected alu {op:#x}"),
                }
            }
            0x05 => {
                let jump = |c: bool| usize::from(if c { ins.jt } else { ins.jf });
                pc += match ins.code & 0xf0 {
                    0x00 => k as usize,
                    0x10 => jump(a == src),
                    0x20 => jump(a > src),
                    0x30 => jump(a >= src),
                    0x40 => jump(a & src != 0),
                    op => panic!("unexpected jump {op:#x}"),
                };
            }
            0x06 => return k,
            0x07 => {
                if ins.code == 0x07 {
                    x = a;
                } else {
                    a = x;
                }
            }
            0x02 | 0x03 => panic!("scratch memory is not used"),
            _ => unreachable!(),
        }
    }
}

fn plan() -> SeccompPlan {
    SeccompPlan {
        denied: ["ptrace", "mount", "io_uring_setup", "kexec_load", "unshare"]
            .map(String::from)
            .to_vec(),
        extra: Vec::new(),
        socket_families: vec!["AF_UNIX".into(), "AF_INET".into()],
        inet_stream_only: false,
        deny_namespace_clone: true,
        clone3_enosys: true,
        block_x32_and_i386: true,
        deny_ioctls: vec!["TIOCSTI".into(), "TIOCLINUX".into()],
        deny_setid_modes: true,
    }
}

fn answer(prog: &[sock_filter], name: &str, args: [u64; 6]) -> u32 {
    let nr = syscall_number(name).unwrap() as u32;
    interpret(prog, &data(AUDIT_ARCH_X86_64, nr, args))
}

#[test]
fn every_syscall_gets_the_plans_answer() {
    let p = plan();
    let prog = compile_plan(&p).unwrap();
    let denied: Vec<u32> = p
        .denied
        .iter()
        .map(|s| syscall_number(s).unwrap() as u32)
        .collect();
    let special = ["socket", "clone", "clone3", "ioctl", "openat2"]
        .map(|s| syscall_number(s).unwrap() as u32);
    for nr in 0..1024u32 {
        let got = interpret(&prog, &data(AUDIT_ARCH_X86_64, nr, [0; 6]));
        let want = if denied.contains(&nr) {
            EPERM
        } else if nr == special[0] {
            // socket(0, ...): family 0 is not in the allowed list.
            libc::SECCOMP_RET_ERRNO | libc::EAFNOSUPPORT as u32
        } else if nr == special[2] || nr == special[4] {
            // clone3 and openat2 carry their flags in structures: absent, callers fall back.
            libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32
        } else {
            libc::SECCOMP_RET_ALLOW
        };
        assert_eq!(got, want, "syscall {nr}");
    }
}

#[test]
fn setuid_and_setgid_modes_are_refused_and_others_pass() {
    let prog = compile_plan(&plan()).unwrap();
    let allow = libc::SECCOMP_RET_ALLOW;
    let creat = (libc::O_CREAT | libc::O_WRONLY) as u64;
    for (name, args) in [
        ("chmod", [0, 0o4755, 0, 0, 0, 0]),
        ("fchmod", [3, 0o2755, 0, 0, 0, 0]),
        ("fchmodat", [3, 0, 0o6755, 0, 0, 0]),
        ("fchmodat2", [3, 0, 0o4700, 0, 0, 0]),
        ("creat", [0, 0o4755, 0, 0, 0, 0]),
        ("mknodat", [3, 0, 0o104755, 0, 0, 0]),
        ("open", [0, creat, 0o4755, 0, 0, 0]),
        ("openat", [3, 0, creat, 0o2755, 0, 0]),
        ("openat", [3, 0, libc::O_TMPFILE as u64, 0o4755, 0, 0]),
    ] {
        assert_eq!(answer(&prog, name, args), EPERM, "{name} {args:?}");
    }
    for (name, args) in [
        ("chmod", [0, 0o1777, 0, 0, 0, 0]),
        ("fchmodat", [3, 0, 0o755, 0, 0, 0]),
        ("openat", [3, 0, creat, 0o644, 0, 0]),
        // Without O_CREAT the mode is not used, whatever it holds.
        ("openat", [3, 0, libc::O_RDONLY as u64, 0o4755, 0, 0]),
    ] {
        assert_eq!(answer(&prog, name, args), allow, "{name} {args:?}");
    }
}

#[test]
fn arguments_decide_clone_ioctl_and_socket() {
    let prog = compile_plan(&plan()).unwrap();
    let allow = libc::SECCOMP_RET_ALLOW;
    let newuser = libc::CLONE_NEWUSER as u64 | libc::SIGCHLD as u64;
    assert_eq!(answer(&prog, "clone", [newuser, 0, 0, 0, 0, 0]), EPERM);
    assert_eq!(answer(&prog, "clone", [0x80, 0, 0, 0, 0, 0]), EPERM);
    assert_eq!(
        answer(&prog, "clone", [libc::SIGCHLD as u64, 0, 0, 0, 0, 0]),
        allow
    );
    assert_eq!(
        answer(&prog, "ioctl", [0, libc::TIOCSTI, 0, 0, 0, 0]),
        EPERM
    );
    // The request is an unsigned int: high bits do not hide it.
    assert_eq!(
        answer(&prog, "ioctl", [0, libc::TIOCSTI | 1 << 32, 0, 0, 0, 0]),
        EPERM
    );
    assert_eq!(answer(&prog, "ioctl", [0, 0x541C, 0, 0, 0, 0]), EPERM);
    assert_eq!(
        answer(&prog, "ioctl", [0, libc::TIOCGWINSZ, 0, 0, 0, 0]),
        allow
    );
    let unix = libc::AF_UNIX as u64;
    let inet6 = libc::AF_INET6 as u64;
    assert_eq!(answer(&prog, "socket", [unix, 1, 0, 0, 0, 0]), allow);
    assert_eq!(
        answer(&prog, "socket", [inet6, 1, 0, 0, 0, 0]),
        libc::SECCOMP_RET_ERRNO | libc::EAFNOSUPPORT as u32
    );
}

#[test]
fn x32_numbers_and_foreign_arches_are_stopped() {
    let prog = compile_plan(&plan()).unwrap();
    let getpid = syscall_number("getpid").unwrap() as u32;
    assert_eq!(
        interpret(&prog, &data(AUDIT_ARCH_X86_64, getpid, [0; 6])),
        libc::SECCOMP_RET_ALLOW
    );
    assert_eq!(
        interpret(
            &prog,
            &data(AUDIT_ARCH_X86_64, 0x4000_0000 | getpid, [0; 6])
        ),
        EPERM
    );
    assert_eq!(
        interpret(&prog, &data(AUDIT_ARCH_I386, 20, [0; 6])),
        libc::SECCOMP_RET_KILL_PROCESS
    );
}

#[test]
fn unknown_names_are_errors() {
    let mut p = plan();
    p.denied.push("no_such_call".into());
    assert!(matches!(
        compile_plan(&p),
        Err(SeccompError::UnknownSyscall { name }) if name == "no_such_call"
    ));
}

#[test]
fn a_cached_program_is_the_compiled_one() {
    let p = plan();
    let key = |prog: &[sock_filter]| -> Vec<(u16, u8, u8, u32)> {
        prog.iter().map(|i| (i.code, i.jt, i.jf, i.k)).collect()
    };
    let fresh = key(&compile_plan(&p).unwrap());
    assert_eq!(key(&program_for(&p).unwrap()), fresh);
    assert_eq!(key(&program_for(&p).unwrap()), fresh);
    let mut other = plan();
    other.clone3_enosys = false;
    assert_ne!(key(&program_for(&other).unwrap()), fresh);
}

/// Every number below 1024 against the plan's answer, for a plan whose denied list is long
/// enough that the search needs jumps longer than eight bits.
#[test]
fn a_long_list_keeps_every_answer() {
    let mut p = plan();
    let all: Vec<String> = (0..460)
        .filter_map(|n| syscalls::Sysno::new(n).map(|s| s.name().to_string()))
        .filter(|n| !["socket", "clone", "clone3", "ioctl", "getpid"].contains(&n.as_str()))
        .collect();
    p.denied = all.clone();
    let prog = compile_plan(&p).unwrap();
    assert!(prog.len() > 300, "{} instructions", prog.len());
    let denied: Vec<u32> = all
        .iter()
        .map(|s| syscall_number(s).unwrap() as u32)
        .collect();
    for nr in 0..1024u32 {
        let got = interpret(&prog, &data(AUDIT_ARCH_X86_64, nr, [0; 6]));
        let want = if denied.contains(&nr) {
            EPERM
        } else if nr == syscall_number("socket").unwrap() as u32 {
            libc::SECCOMP_RET_ERRNO | libc::EAFNOSUPPORT as u32
        } else if nr == syscall_number("clone3").unwrap() as u32 {
            libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32
        } else {
            libc::SECCOMP_RET_ALLOW
        };
        assert_eq!(got, want, "syscall {nr}");
    }
    // The argument rules still decide inside the long program.
    let newnet = libc::CLONE_NEWNET as u64;
    assert_eq!(answer(&prog, "clone", [newnet, 0, 0, 0, 0, 0]), EPERM);
    assert_eq!(
        answer(&prog, "clone", [libc::SIGCHLD as u64, 0, 0, 0, 0, 0]),
        libc::SECCOMP_RET_ALLOW
    );
    assert_eq!(
        answer(&prog, "ioctl", [0, libc::TIOCSTI, 0, 0, 0, 0]),
        EPERM
    );
}

#[test]
fn an_outright_denial_beats_an_argument_rule() {
    let mut p = plan();
    p.denied
        .extend(["clone", "ioctl", "socket", "clone3"].map(String::from));
    let prog = compile_plan(&p).unwrap();
    for name in ["clone", "ioctl", "socket", "clone3"] {
        assert_eq!(
            answer(&prog, name, [libc::SIGCHLD as u64, 0, 0, 0, 0, 0]),
            EPERM,
            "{name}"
        );
    }
}

#[test]
fn no_family_refuses_every_socket_and_repeats_change_nothing() {
    let mut p = plan();
    p.socket_families = Vec::new();
    let prog = compile_plan(&p).unwrap();
    let refused = libc::SECCOMP_RET_ERRNO | libc::EAFNOSUPPORT as u32;
    for fam in [libc::AF_UNIX, libc::AF_INET, libc::AF_INET6, 0] {
        assert_eq!(
            answer(&prog, "socket", [fam as u64, 1, 0, 0, 0, 0]),
            refused
        );
    }
    let mut p = plan();
    p.socket_families = vec!["AF_UNIX".into(); 300];
    p.deny_ioctls = vec!["TIOCSTI".into(); 300];
    let prog = compile_plan(&p).unwrap();
    assert_eq!(
        answer(&prog, "socket", [libc::AF_UNIX as u64, 1, 0, 0, 0, 0]),
        libc::SECCOMP_RET_ALLOW
    );
    assert_eq!(
        answer(&prog, "socket", [libc::AF_INET as u64, 1, 0, 0, 0, 0]),
        refused
    );
    assert_eq!(
        answer(&prog, "ioctl", [0, libc::TIOCSTI, 0, 0, 0, 0]),
        EPERM
    );
    assert_eq!(
        answer(&prog, "ioctl", [0, libc::TIOCGWINSZ, 0, 0, 0, 0]),
        libc::SECCOMP_RET_ALLOW
    );
}

#[test]
fn inet_sockets_can_be_held_to_streams() {
    let eacces = libc::SECCOMP_RET_ERRNO | libc::EACCES as u32;
    let eafnosupport = libc::SECCOMP_RET_ERRNO | libc::EAFNOSUPPORT as u32;
    let allow = libc::SECCOMP_RET_ALLOW;
    let (inet, inet6, unix) = (
        libc::AF_INET as u64,
        libc::AF_INET6 as u64,
        libc::AF_UNIX as u64,
    );
    let stream = (libc::SOCK_STREAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK) as u64;
    let dgram = libc::SOCK_DGRAM as u64;
    let raw = libc::SOCK_RAW as u64;
    let netlink = libc::AF_NETLINK as u64;
    let mut p = plan();
    p.socket_families.push("AF_INET6".into());
    for (held, refused) in [(true, eacces), (false, allow)] {
        p.inet_stream_only = held;
        let prog = compile_plan(&p).unwrap();
        for (family, ty, want) in [
            (inet, stream, allow),
            (inet6, stream, allow),
            (inet, dgram, refused),
            (inet6, raw, refused),
            (unix, dgram, allow),
            (netlink, raw, eafnosupport),
        ] {
            let got = answer(&prog, "socket", [family, ty, 0, 0, 0, 0]);
            assert_eq!(got, want, "held {held}: socket({family}, {ty:#x})");
        }
    }
}
