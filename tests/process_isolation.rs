//! The command sees and reaches only its own processes and devices: no signals out, `/proc`
//! shows only the sandbox, `/proc/sys` and cgroup files are out of reach, `/dev` is minimal,
//! inherited file descriptors are closed.
//!
//! Each protection is attempted from inside the sandbox and paired with the same action allowed
//! (under a wider profile, or outside the sandbox), as root and as uid 65534.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;
mod sandbox_common;
use common::*;
use sandbox_common::*;

#[test]
fn processes_outside_cannot_be_signalled() {
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        let mut victim = std::process::Command::new("sleep");
        victim.arg("300");
        if let Some(uid) = u {
            std::os::unix::process::CommandExt::uid(&mut victim, uid);
        }
        let mut victim = victim.spawn().unwrap();
        let pid = victim.id();
        // By kill(2), and by a pidfd.
        let script = format!(
            "kill -0 {pid} && echo SIGNALLED; python3 -c 'import os,signal; signal.pidfd_send_signal(os.pidfd_open({pid}), 0); print(\"PIDFD\")'"
        );
        let blocked = s.run("workspace", &script);
        assert!(
            !stdout(&blocked).contains("SIGNALLED") && !stdout(&blocked).contains("PIDFD"),
            "{}: {}",
            s.label(),
            text(&blocked)
        );
        // Without a PID namespace, Landlock's signal scope alone still refuses.
        let scoped = s.write_profile(
            "scoped",
            &WIDE.replace("scope_signals = false", "scope_signals = true"),
        );
        let blocked2 = s.run(scoped.to_str().unwrap(), &script);
        assert!(
            !stdout(&blocked2).contains("SIGNALLED") && !stdout(&blocked2).contains("PIDFD"),
            "{}: {}",
            s.label(),
            text(&blocked2)
        );
        let allowed = s.run(wide.to_str().unwrap(), &script);
        assert!(
            stdout(&allowed).contains("SIGNALLED") && stdout(&allowed).contains("PIDFD"),
            "{}: {}",
            s.label(),
            text(&allowed)
        );
        victim.kill().unwrap();
        victim.wait().unwrap();
    }
}

#[test]
fn inherited_file_descriptors_are_closed() {
    for u in users() {
        let s = Scratch::new(u);
        std::fs::write(s.ws.join("fdsecret"), "FD-SENTINEL\n").unwrap();
        s.chown_all();
        let bin = sbx_bin().display().to_string();
        let inside = s.outside(&format!(
            "exec 7<fdsecret; {bin} run --no-policy --profile workspace -- sh -c 'cat <&7'"
        ));
        assert!(
            !text(&inside).contains("FD-SENTINEL"),
            "{}: {}",
            s.label(),
            text(&inside)
        );
        let outside = s.outside("exec 7<fdsecret; sh -c 'cat <&7'");
        assert!(stdout(&outside).contains("FD-SENTINEL"));
    }
}

#[test]
fn dev_has_no_block_or_memory_devices() {
    let host_block: Vec<String> = std::fs::read_dir("/dev")
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| {
            n.starts_with("vd")
                || n.starts_with("sd")
                || n.starts_with("nvme")
                || n == "mem"
                || n == "kmsg"
        })
        .collect();
    assert!(
        !host_block.is_empty(),
        "the host should have block or memory devices to hide"
    );
    for u in users() {
        let s = Scratch::new(u);
        let o = s.run("workspace", "ls /dev");
        let listing = stdout(&o);
        for d in &host_block {
            assert!(
                !listing.lines().any(|l| l == d),
                "{}: /dev/{d} visible",
                s.label()
            );
        }
        for d in [
            "null", "zero", "full", "random", "urandom", "tty", "pts", "ptmx", "shm",
        ] {
            assert!(
                listing.lines().any(|l| l == d),
                "{}: /dev/{d} missing: {listing}",
                s.label()
            );
        }
    }
}

#[test]
fn proc_shows_only_the_sandbox() {
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        // A process outside, as the same user and (for root) without capabilities, so that
        // the same user outside any sandbox may read its environment through /proc.
        let marker = format!("SBXPROC{}x", std::process::id());
        let mut outside = std::process::Command::new("setpriv");
        if u.is_none() && nix::unistd::geteuid().is_root() {
            outside.args(["--bounding-set", "-all"]);
        }
        outside
            .args(["sleep", "300"])
            .env("SBX_MARK", &marker)
            .stdin(std::process::Stdio::null());
        if let Some(uid) = u {
            use std::os::unix::process::CommandExt;
            outside.uid(uid).gid(uid);
        }
        let mut outside = outside.spawn().unwrap();
        let probe = format!(
            "ls /proc | grep -c '^[0-9]'; cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c '^SBX_MARK={marker}$'"
        );
        let counts = |o: &std::process::Output| -> Vec<usize> {
            stdout(o)
                .lines()
                .map(|l| l.trim().parse().unwrap_or(999))
                .collect()
        };
        let inside = s.run("workspace", &probe);
        let no_pid_ns = s.run(wide.to_str().unwrap(), &probe);
        let unconfined = s.outside(&probe);
        let _ = outside.kill();
        let _ = outside.wait();
        let (inside, no_pid_ns, unconfined) =
            (counts(&inside), counts(&no_pid_ns), counts(&unconfined));
        assert_eq!(inside.len(), 2, "{}: {inside:?}", s.label());
        assert!(
            inside[0] < 10,
            "{}: {} processes visible",
            s.label(),
            inside[0]
        );
        assert_eq!(
            inside[1],
            0,
            "{}: an outside environment was read",
            s.label()
        );
        // Without the PID namespace the host's processes are listed, but Landlock still keeps
        // their /proc files out of reach (ptrace access is confined to the domain).
        assert!(no_pid_ns[0] > inside[0], "{}: {no_pid_ns:?}", s.label());
        assert_eq!(no_pid_ns[1], 0, "{}: {no_pid_ns:?}", s.label());
        // Paired: the same probe outside any sandbox reads the marker.
        assert!(unconfined[1] >= 1, "{}: {unconfined:?}", s.label());
    }
}

#[test]
fn proc_sys_and_cgroup_files_are_out_of_reach() {
    for u in users() {
        let s = Scratch::new(u);
        let o = s.run(
            "workspace",
            "echo 1 > /proc/sys/kernel/ns_last_pid; ls -A /sys/fs/cgroup | wc -l",
        );
        let t = text(&o);
        assert!(
            t.contains("Read-only file system"),
            "{}: /proc/sys must be read-only: {t}",
            s.label()
        );
        let visible: usize = stdout(&o).trim().parse().unwrap_or(usize::MAX);
        assert_eq!(visible, 0, "{}: cgroup files visible: {t}", s.label());
        let outside = std::fs::read_dir("/sys/fs/cgroup").unwrap().count();
        assert!(outside > 0, "the host has cgroup files to hide");
    }
}

/// The UTS namespace keeps the host's name, which the host's `/etc/hosts` resolves: programs
/// that look their own host up (Java's `InetAddress.getLocalHost`, Python's
/// `gethostbyname(gethostname())`, `hostname -f`) answer inside as they do outside.
#[test]
fn the_hostname_resolves_inside_as_outside() {
    let script =
        "n=$(hostname) && echo name=$n && getent hosts \"$n\" >/dev/null; echo resolved=$?";
    for u in users() {
        let s = Scratch::new(u);
        let inside = stdout(&s.run("workspace", script));
        let outside = stdout(&s.outside(script));
        assert!(inside.contains("name="), "{}: {inside}", s.label());
        assert_eq!(inside, outside, "{}", s.label());
    }
}
