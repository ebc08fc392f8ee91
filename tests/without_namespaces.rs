//! Hosts without user namespaces (or containers without CAP_SYS_ADMIN): Landlock and seccomp
//! still hold, the network stays closed, output is complete without a PID namespace, the gaps
//! are reported, and a required namespace is refused.
//!
//! Each protection is attempted from inside the sandbox and paired with the same action allowed
//! (under a wider profile, or outside the sandbox), as root and as uid 65534.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;
mod sandbox_common;
use common::*;
use sandbox_common::*;

/// Hosts without user namespaces (or containers without CAP_SYS_ADMIN): Landlock and seccomp
/// still hold, the gaps are reported, and a required namespace is refused.
#[test]
fn without_namespaces_landlock_and_seccomp_still_hold() {
    for u in users() {
        let s = Scratch::new(u);
        let run = |script: &str| {
            s.sbx(&[
                "run",
                "--no-policy",
                "--json",
                "--profile",
                "workspace",
                "--",
                "sh",
                "-c",
                script,
            ])
            .env("SBX_DISABLE_USERNS", "1")
            .output()
            .unwrap()
        };
        let secret = run("cat \"$HOME/.ssh/id_rsa\"");
        assert!(
            !text(&secret).contains("SENTINEL-SSH"),
            "{}: {}",
            s.label(),
            text(&secret)
        );
        let err = String::from_utf8_lossy(&secret.stderr);
        assert!(
            err.contains("warning: not fully enforced") && err.contains("mount-namespace"),
            "{}: {err}",
            s.label()
        );
        let notes = run("cat \"$HOME/notes.txt\"");
        assert!(
            stdout(&notes).contains("SENTINEL-NOTES"),
            "{}: siblings of the secret stay readable: {}",
            s.label(),
            text(&notes)
        );
        let outside = run("echo x > \"$HOME/out\"");
        assert!(
            !s.home.join("out").exists(),
            "{}: {}",
            s.label(),
            text(&outside)
        );
        let hooks = run("echo x > .git/hooks/pre-commit");
        assert!(
            !s.ws.join(".git/hooks/pre-commit").exists(),
            "{}: {}",
            s.label(),
            text(&hooks)
        );
        // Landlock only grants, so around a read-only `.git/hooks` the workspace root itself is
        // not writable (documented); its existing subdirectories are.
        std::fs::create_dir_all(s.ws.join("src")).unwrap();
        s.chown_all();
        let inside = run("echo x > src/new.txt && cat src/new.txt");
        assert!(
            stdout(&inside).starts_with("x\n"),
            "{}: {}",
            s.label(),
            text(&inside)
        );
        // No minimal /dev can be mounted: Landlock grants only the harmless devices. Root is
        // the user whose permissions would open another device, so the pair is root's.
        let has_loop = std::path::Path::new("/dev/loop-control").exists();
        if require(
            "/dev/loop-control (the loop driver), for the /dev check",
            has_loop,
        ) && u.is_none()
            && nix::unistd::geteuid().is_root()
        {
            let probe = "true 3</dev/loop-control && echo OPENED; true 3</dev/null && echo NULL";
            let dev = run(probe);
            assert!(
                !stdout(&dev).contains("OPENED") && stdout(&dev).contains("NULL"),
                "{}",
                text(&dev)
            );
            let outside = s.outside(probe);
            assert!(stdout(&outside).contains("OPENED"), "{}", text(&outside));
        }
        let seccomp = run(&syscall_probe("101", ", 0, 0, 0, 0"));
        assert!(
            stdout(&seccomp).starts_with(&format!("errno {}", libc::EPERM)),
            "{}: {}",
            s.label(),
            text(&seccomp)
        );
        let marker = format!("64{}3", std::process::id());
        let daemon = run(&format!(
            "setsid -f sleep {marker} </dev/null >/dev/null 2>&1; echo started"
        ));
        assert!(stdout(&daemon).contains("started"));
        assert!(
            !alive_with_arg(&marker),
            "{}: the subreaper left a daemon",
            s.label()
        );
        let strict = s.write_profile(
            "needs-ns",
            "extends = \"workspace\"\nrequires = [\"mount-namespace\"]\n",
        );
        let refused = s
            .sbx(&[
                "run",
                "--no-policy",
                "--profile",
                strict.to_str().unwrap(),
                "--",
                "true",
            ])
            .env("SBX_DISABLE_USERNS", "1")
            .output()
            .unwrap();
        assert_eq!(refused.status.code(), Some(125), "{}", text(&refused));
        assert!(
            String::from_utf8_lossy(&refused.stderr).contains("mount-namespace"),
            "{}",
            text(&refused)
        );
    }
}

#[test]
fn without_namespaces_the_network_stays_closed() {
    // No network namespace to give: seccomp allows only unix sockets, so TCP and UDP fail at
    // socket() with EAFNOSUPPORT (Landlock's TCP rules stand behind that). Paired with workspace-net (host
    // network) in the same fallback.
    let tcp_port = tcp_hello_server();
    for u in users() {
        let s = Scratch::new(u);
        let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let udp_port = udp.local_addr().unwrap().port();
        let probe = format!(
            "{}; python3 -c 'import socket,sys; socket.socket(socket.AF_INET,socket.SOCK_DGRAM).sendto((\"UDP-\"+sys.argv[1]).encode(),(\"127.0.0.1\",{udp_port})); print(\"SENT\")' \"$0\"",
            tcp_probe(tcp_port)
        );
        let run = |profile: &str, tag: &str| {
            s.command(profile, &probe)
                .arg(tag)
                .env("SBX_DISABLE_USERNS", "1")
                .output()
                .unwrap()
        };
        let blocked = run("workspace", "BLOCKED");
        assert!(
            !stdout(&blocked).contains("CONNECTED")
                && !stdout(&blocked).contains("SENT")
                && text(&blocked).contains("Address family not supported"),
            "{}: {}",
            s.label(),
            text(&blocked)
        );
        let allowed = run("workspace-net", "ALLOWED");
        assert!(
            stdout(&allowed).contains("CONNECTED HELLO-TCP") && stdout(&allowed).contains("SENT"),
            "{}: {}",
            s.label(),
            text(&allowed)
        );
        let mut buf = [0u8; 64];
        udp.set_read_timeout(Some(std::time::Duration::from_secs(3)))
            .unwrap();
        let (n, _) = udp.recv_from(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"UDP-ALLOWED", "{}", s.label());
        udp.set_nonblocking(true).unwrap();
        assert!(
            udp.recv_from(&mut buf).is_err(),
            "{}: a datagram from the confined run arrived",
            s.label()
        );
    }
}

#[test]
fn output_is_complete_without_a_pid_namespace() {
    // Without a PID namespace sbx stops waiting shortly for pipes a stray descendant may hold;
    // what is already in them must still be delivered. The race (the init's exit seen before
    // the last read) is rare, so this repeats the run; it cannot fail when the output is whole.
    for u in users() {
        let s = Scratch::new(u);
        let p = s.write_profile(
            "nopid",
            "extends = \"workspace\"\n[isolation]\npid = false\n",
        );
        for _ in 0..40 {
            let o = s.run(
                p.to_str().unwrap(),
                "echo first; head -c 50000 /dev/zero | tr '\\0' x; echo; echo last >&2",
            );
            let out = stdout(&o);
            assert_eq!(out.len(), "first\n".len() + 50000 + 1, "{}", s.label());
            assert!(text(&o).contains("last"), "{}: {}", s.label(), text(&o));
        }
    }
}

/// Without a mount namespace the home's secrets are kept out by Landlock alone, and Landlock
/// places a rule on where a link leads: a link in the home to a secret (`keys -> .ssh`) or to
/// the home itself (`self -> .`) gets no rule of its own.
#[test]
fn without_namespaces_links_in_the_home_do_not_grant_its_secrets() {
    for u in users() {
        let s = Scratch::new(u);
        std::os::unix::fs::symlink(".ssh", s.home.join("keys")).unwrap();
        std::os::unix::fs::symlink(".", s.home.join("self")).unwrap();
        s.chown_all();
        for path in [".ssh/id_rsa", "keys/id_rsa", "self/.ssh/id_rsa"] {
            let out = without_userns(&s, &["cat", &format!("{}/{path}", s.home.display())]);
            assert!(
                !text(&out).contains("SENTINEL-SSH"),
                "{} {path}: {}",
                s.label(),
                text(&out)
            );
        }
        // Paired: a file beside the secrets, through the same link, is read.
        let out = without_userns(
            &s,
            &["cat", &format!("{}/self/notes.txt", s.home.display())],
        );
        assert!(
            text(&out).contains("SENTINEL-NOTES"),
            "{}: {}",
            s.label(),
            text(&out)
        );
    }
}

/// `argv` under `workspace` with no user namespaces, the gate skipped.
fn without_userns(s: &Scratch, argv: &[&str]) -> std::process::Output {
    s.sbx(&["run", "--no-policy", "--profile", "workspace", "--"])
        .args(argv)
        .env("SBX_DISABLE_USERNS", "1")
        .output()
        .unwrap()
}

/// A link that an earlier run left in the workspace (`cfg -> ~/.bashrc`) gets no rule of its
/// own either: Landlock would place it on the home's file and make it writable.
#[test]
fn without_namespaces_a_link_in_the_workspace_does_not_make_its_target_writable() {
    for u in users() {
        let s = Scratch::new(u);
        std::fs::write(s.home.join(".bashrc"), "orig\n").unwrap();
        std::fs::write(s.ws.join("notes.txt"), "orig\n").unwrap();
        std::os::unix::fs::symlink(s.home.join(".bashrc"), s.ws.join("cfg")).unwrap();
        std::os::unix::fs::symlink("notes.txt", s.ws.join("notes-link")).unwrap();
        s.chown_all();
        let bashrc = s.home.join(".bashrc");
        let script = format!(
            "echo EVIL >> cfg; echo EVIL >> {}; echo ok >> notes-link && echo WROTE",
            bashrc.display()
        );
        let out = without_userns(&s, &["sh", "-c", &script]);
        assert_eq!(
            std::fs::read_to_string(&bashrc).unwrap(),
            "orig\n",
            "{}: {}",
            s.label(),
            text(&out)
        );
        // Paired: a link to a workspace file is written through.
        assert!(
            stdout(&out).contains("WROTE"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert_eq!(
            std::fs::read_to_string(s.ws.join("notes.txt")).unwrap(),
            "orig\nok\n"
        );
    }
}

/// Without a mount namespace a protected name one level below the root is kept by Landlock
/// rules around it, as the root's are: appending to `app/.envrc` fails, appending to
/// `app/notes.txt` beside it does not (new entries directly in `app` are refused too, as at
/// the root; documented). Paired: under a profile without protected paths both land.
#[test]
fn without_namespaces_protected_names_one_level_down_stay_read_only() {
    let script =
        "echo evil >> app/.envrc && echo WROTE-ENVRC; echo more >> app/notes.txt && echo NOTES";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        std::fs::create_dir_all(s.ws.join("app")).unwrap();
        std::fs::write(s.ws.join("app/.envrc"), "export A=1\n").unwrap();
        std::fs::write(s.ws.join("app/notes.txt"), "notes\n").unwrap();
        s.chown_all();
        let run = |profile: &str| {
            s.command(profile, script)
                .env("SBX_DISABLE_USERNS", "1")
                .output()
                .unwrap()
        };
        let blocked = run("workspace");
        assert!(
            stdout(&blocked).contains("NOTES") && !stdout(&blocked).contains("WROTE-ENVRC"),
            "{}: {}",
            s.label(),
            text(&blocked)
        );
        let envrc = std::fs::read_to_string(s.ws.join("app/.envrc")).unwrap();
        assert_eq!(envrc, "export A=1\n", "{}", s.label());
        let allowed = run(wide.to_str().unwrap());
        assert!(
            stdout(&allowed).contains("NOTES") && stdout(&allowed).contains("WROTE-ENVRC"),
            "{}: {}",
            s.label(),
            text(&allowed)
        );
    }
}

/// Without a mount namespace `{tmp}` is a directory of the host's `/tmp` per run, which a
/// killed sbx leaves: the next run of that user removes each one whose sbx is gone, and
/// leaves one whose sbx (here: this test) still runs.
#[test]
fn without_namespaces_what_a_killed_run_left_in_tmp_is_removed() {
    for u in users() {
        let s = Scratch::new(u);
        let uid = u.unwrap_or(0);
        let mut dead = std::process::Command::new("true").spawn().unwrap();
        let dead_pid = dead.id();
        dead.wait().unwrap();
        let tmp = std::env::temp_dir();
        let stale = tmp.join(format!("sbx-{uid}-{dead_pid}-0-123"));
        let live = tmp.join(format!("sbx-{uid}-{}-0-123", std::process::id()));
        for d in [&stale, &live] {
            std::fs::create_dir_all(d).unwrap();
            std::fs::write(d.join("left"), "x").unwrap();
            if let Some(id) = u {
                std::os::unix::fs::chown(d, Some(id), Some(id)).unwrap();
                std::os::unix::fs::chown(d.join("left"), Some(id), Some(id)).unwrap();
            }
        }
        let out = without_userns(&s, &["true"]);
        assert_eq!(out.status.code(), Some(0), "{}: {}", s.label(), text(&out));
        assert!(!stale.exists(), "{}: {}", s.label(), stale.display());
        assert!(live.join("left").exists(), "{}", s.label());
        std::fs::remove_dir_all(&live).unwrap();
    }
}
