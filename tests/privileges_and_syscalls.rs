//! No privilege is kept or regained, and dangerous syscalls are refused: the seccomp filter's
//! errno, no capabilities (as root too), `unshare -r` and setuid binaries gain nothing, TIOCSTI
//! is refused.
//!
//! Each protection is attempted from inside the sandbox and paired with the same action allowed
//! (under a wider profile, or outside the sandbox), as root and as uid 65534.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;
mod sandbox_common;
use common::*;
use sandbox_common::*;

#[test]
fn denied_syscalls_answer_with_the_filter_errno() {
    // (syscall number, args, errno inside) paired with the same call outside, which differs.
    let cases: &[(&str, &str, i32, &str)] = &[
        ("101", ", 0, 0, 0, 0", libc::EPERM, "ptrace(PTRACE_TRACEME)"),
        (
            "425",
            ", 1, ctypes.create_string_buffer(120)",
            libc::EPERM,
            "io_uring_setup",
        ),
        ("0x40000027", "", libc::EPERM, "x32 getpid"),
        ("435", ", 0, 0", libc::ENOSYS, "clone3"),
        ("272", ", 0x10000000", libc::EPERM, "unshare(CLONE_NEWUSER)"),
        (
            "165",
            ", b\"none\", b\"/tmp\", b\"tmpfs\", 0, 0",
            libc::EPERM,
            "mount",
        ),
        ("170", ", b\"evil\", 4", libc::EPERM, "sethostname"),
        ("250", ", 0, 0, 0", libc::EPERM, "keyctl"),
        (
            "135",
            ", 0x0040000",
            libc::EPERM,
            "personality(ADDR_NO_RANDOMIZE)",
        ),
        (
            "135",
            ", 0x0400000",
            libc::EPERM,
            "personality(READ_IMPLIES_EXEC)",
        ),
    ];
    for u in users() {
        let s = Scratch::new(u);
        for (nr, args, want, what) in cases {
            let inside = s.run("workspace", &syscall_probe(nr, args));
            let got = format!("errno {want}");
            assert!(
                stdout(&inside).trim() == got,
                "{} {what}: inside gave {:?}, want {got}",
                s.label(),
                text(&inside)
            );
            // The pair runs outside the sandbox in throwaway namespaces, so that mount and
            // sethostname succeed there without touching the host.
            let outside = s.outside(&format!("unshare -rmu {}", syscall_probe(nr, args)));
            assert!(
                stdout(&outside).trim() != got,
                "{} {what}: outside gives the same answer {:?}, so the test proves nothing",
                s.label(),
                text(&outside)
            );
        }
    }
}

/// The personalities that change no protection of the process's memory stay allowed: the
/// query (`personality(0xffffffff)`, which programs make to read theirs) and `linux32`.
/// Their twins, which turn ASLR off or make reads executable, are in the test above.
#[test]
fn personality_queries_and_linux32_are_allowed() {
    for u in users() {
        let s = Scratch::new(u);
        let query = s.run("workspace", &syscall_probe("135", ", 0xffffffff"));
        assert_eq!(
            stdout(&query).trim(),
            "errno 0",
            "{}: {}",
            s.label(),
            text(&query)
        );
        let linux32 = s.run("workspace", "setarch linux32 uname -m");
        assert_eq!(
            stdout(&linux32).trim(),
            "i686",
            "{}: {}",
            s.label(),
            text(&linux32)
        );
        let aslr = s.run("workspace", "setarch -R true");
        assert_ne!(
            aslr.status.code(),
            Some(0),
            "{}: {}",
            s.label(),
            text(&aslr)
        );
    }
}

#[test]
fn unshare_cannot_regain_capabilities() {
    for u in users() {
        let s = Scratch::new(u);
        let blocked = s.run("workspace", "unshare -r id -u && echo REGAINED");
        assert!(
            !stdout(&blocked).contains("REGAINED")
                && text(&blocked).contains("Operation not permitted"),
            "{}: {}",
            s.label(),
            text(&blocked)
        );
        let allowed = s.outside("unshare -r id -u && echo REGAINED");
        assert!(
            stdout(&allowed).contains("REGAINED"),
            "{}: {}",
            s.label(),
            text(&allowed)
        );
    }
}

#[test]
fn root_without_cap_setpcap_still_runs_with_its_capabilities_dropped() {
    // Root in a container may lack CAP_SETPCAP: the bounding set then cannot be cleared, but
    // the run must go on with every other set empty and no_new_privs, and say so.
    if !nix::unistd::geteuid().is_root() {
        eprintln!("SKIP: needs root, to drop CAP_SETPCAP from sbx");
        return;
    }
    let s = Scratch::new(None);
    let probe = "grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status";
    let run = |wrap: &[&str]| {
        let mut c = std::process::Command::new(wrap.first().copied().unwrap_or("env"));
        c.args(wrap.iter().skip(1))
            .arg(sbx_bin())
            .args([
                "run",
                "--no-policy",
                "--json",
                "--profile",
                "workspace",
                "--",
                "sh",
                "-c",
                probe,
            ])
            .current_dir(&s.ws)
            .env("HOME", &s.home)
            .stdin(std::process::Stdio::null());
        c.output().unwrap()
    };
    let field = |o: &std::process::Output, name: &str| {
        stdout(o)
            .lines()
            .find(|l| l.starts_with(name))
            .map(|l| l.split_whitespace().last().unwrap_or("").to_string())
            .unwrap_or_default()
    };
    let limited = run(&["setpriv", "--bounding-set", "-setpcap"]);
    assert_eq!(limited.status.code(), Some(0), "{}", text(&limited));
    assert_eq!(
        field(&limited, "CapEff:"),
        "0000000000000000",
        "{}",
        text(&limited)
    );
    assert_eq!(
        field(&limited, "CapPrm:"),
        "0000000000000000",
        "{}",
        text(&limited)
    );
    assert_ne!(
        field(&limited, "CapBnd:"),
        "0000000000000000",
        "{}",
        text(&limited)
    );
    assert!(
        stdout(&limited).contains("the bounding set cannot be cleared"),
        "{}",
        text(&limited)
    );
    // Paired: with CAP_SETPCAP the same run clears the bounding set too.
    let full = run(&[]);
    assert_eq!(
        field(&full, "CapBnd:"),
        "0000000000000000",
        "{}",
        text(&full)
    );
    assert!(
        stdout(&full).contains("bounding set cleared"),
        "{}",
        text(&full)
    );
}

#[test]
fn capabilities_are_all_dropped() {
    for u in users() {
        let s = Scratch::new(u);
        let o = s.run("workspace", "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status; grep NoNewPrivs /proc/self/status");
        let t = stdout(&o);
        for line in t.lines().filter(|l| l.starts_with("Cap")) {
            assert!(line.ends_with("0000000000000000"), "{}: {line}", s.label());
        }
        assert!(t.contains("NoNewPrivs:\t1"), "{}: {t}", s.label());
        if u.is_none() && nix::unistd::geteuid().is_root() {
            let outside = s.outside("grep CapEff /proc/self/status");
            assert!(
                !stdout(&outside).ends_with("0000000000000000\n"),
                "root outside should have capabilities"
            );
        }
    }
}

#[test]
fn setuid_binary_does_not_regain_privilege() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("SKIP: needs root to create a setuid binary");
        return;
    }
    let s = Scratch::new(Some(NOBODY));
    let suid = s.ws.join("suid-id");
    std::fs::copy("/usr/bin/id", &suid).unwrap();
    std::os::unix::fs::chown(&suid, Some(0), Some(0)).unwrap();
    std::fs::set_permissions(&suid, std::os::unix::fs::PermissionsExt::from_mode(0o4755)).unwrap();
    let inside = s.run("workspace", "./suid-id -u");
    assert_eq!(stdout(&inside).trim(), "65534", "{}", text(&inside));
    let outside = s.outside("./suid-id -u");
    assert_eq!(
        stdout(&outside).trim(),
        "0",
        "outside, the setuid bit must work: {}",
        text(&outside)
    );
}

#[test]
fn tiocsti_is_refused() {
    for u in users() {
        let s = Scratch::new(u);
        let probe = "python3 -c 'import fcntl,termios,errno\ntry:\n  fcntl.ioctl(0, termios.TIOCSTI, b\"x\"); print(\"errno 0\")\nexcept OSError as e: print(\"errno\", e.errno)'";
        let inside = s.run("workspace", probe);
        assert_eq!(
            stdout(&inside).trim(),
            format!("errno {}", libc::EPERM),
            "{}: {}",
            s.label(),
            text(&inside)
        );
        let outside = s.outside(probe);
        assert_ne!(
            stdout(&outside).trim(),
            format!("errno {}", libc::EPERM),
            "{}",
            text(&outside)
        );
    }
}
