//! Metadata changes and host inodes do not outlive the run outside its writable set: chmod,
//! chown, xattrs and times fail on the read-only mounts (without a mount namespace the report
//! says that layer is partial, and protected paths still hold), kernel-wide /proc entries keep
//! their mode, a file or directory given on stdin is relayed rather than handed over, device
//! nodes and hidden files are not host inodes the command can change, setuid files cannot be made
//! and writable mounts are nosuid, and device nodes outside the sandbox's own /dev open nothing.
//! Each attempted from inside the sandbox and paired with the same action allowed (under a wider
//! profile, or outside the sandbox), as root and as uid 65534.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;
mod containment_common;
use common::*;
use containment_common::*;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

const EROFS: &str = "30";

/// Python that tries each metadata change on `$1` and prints `NAME ERRNO` (0 on success).
const META: &str = r#"python3 -c '
import os, sys
p = sys.argv[1]
ops = [("chmod", lambda: os.chmod(p, 0o600)),
       ("chown", lambda: os.chown(p, os.getuid(), os.getgid())),
       ("utime", lambda: os.utime(p, (1, 1))),
       ("xattr", lambda: os.setxattr(p, "user.sbx", b"1"))]
for name, f in ops:
    try:
        f(); print(name, 0)
    except OSError as e:
        print(name, e.errno)
' "#;

fn answers(out: &str) -> Vec<(String, String)> {
    out.lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(a, b)| (a.to_string(), b.trim().to_string()))
        .collect()
}

#[test]
fn metadata_outside_the_writable_set_cannot_change() {
    // Landlock does not govern chmod, chown, xattrs or times: the read-only mount does.
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        let target = s.home.join("meta-target");
        std::fs::write(&target, "x").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644)).unwrap();
        s.chown_all();
        let script = format!("{META}{}", target.display());
        let blocked = s.run("workspace", &script);
        let got = answers(&stdout(&blocked));
        assert_eq!(got.len(), 4, "{}: {}", s.label(), text(&blocked));
        for (op, errno) in &got {
            assert_eq!(errno, EROFS, "{} {op}: {}", s.label(), text(&blocked));
        }
        let meta = std::fs::metadata(&target).unwrap();
        assert_eq!(meta.mode() & 0o7777, 0o644, "{}", s.label());
        assert_ne!(meta.mtime(), 1, "{}", s.label());
        // Paired: where the profile writes, every change goes through.
        let allowed = s.run(wide.to_str().unwrap(), &script);
        let got = answers(&stdout(&allowed));
        assert_eq!(got.len(), 4, "{}: {}", s.label(), text(&allowed));
        for (op, errno) in &got {
            assert_eq!(errno, "0", "{} {op}: {}", s.label(), text(&allowed));
        }
        assert_eq!(std::fs::metadata(&target).unwrap().mtime(), 1);
    }
}

/// The sandbox's /proc is read-only: root's chmod on a kernel-wide entry such as
/// `/proc/version` would change its mode for every later proc mount on the host. Paired: the
/// entry is there and readable, and the same change on a workspace file goes through.
#[test]
fn kernel_wide_proc_entries_keep_their_mode() {
    for u in users() {
        let s = Scratch::new(u);
        std::fs::write(s.ws.join("own"), "x").unwrap();
        s.chown_all();
        let before = std::fs::metadata("/proc/version").unwrap().mode();
        for profile in ["workspace", "strict"] {
            let o = s.run(
                profile,
                &format!(
                    "head -c 5 /proc/version; echo; {META}/proc/version; {META}{}/own",
                    s.ws.display()
                ),
            );
            let out = stdout(&o);
            assert!(
                out.starts_with("Linux\n"),
                "{} {profile}: {}",
                s.label(),
                text(&o)
            );
            let got = answers(&out);
            let chmods: Vec<&str> = got
                .iter()
                .filter(|(op, _)| op == "chmod")
                .map(|(_, e)| e.as_str())
                .collect();
            assert_eq!(
                chmods,
                [EROFS, "0"],
                "{} {profile}: {}",
                s.label(),
                text(&o)
            );
            assert_eq!(std::fs::metadata("/proc/version").unwrap().mode(), before);
        }
    }
}

/// A file given on stdin is relayed, not handed over: through `/proc/self/fd/0` the command
/// cannot change the host file's mode or times, and a directory on stdin opens nothing the
/// plan hides; the command still reads the file's content. Paired: the same file passed as a
/// path the profile makes writable changes.
#[test]
fn stdin_is_no_way_to_host_files() {
    for u in users() {
        let s = Scratch::new(u);
        let target = s.home.join("stdin-target");
        std::fs::write(&target, "content\n").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::write(s.home.join(".netrc"), "SECRET\n").unwrap();
        s.chown_all();
        let script = "chmod 777 /proc/self/fd/0; touch -d @1 /proc/self/fd/0; cat; \
                      cat /proc/self/fd/0/.netrc 2>/dev/null";
        let mut c = s.command("workspace", script);
        c.stdin(std::fs::File::open(&target).unwrap());
        let o = c.output().unwrap();
        assert_eq!(stdout(&o), "content\n", "{}: {}", s.label(), text(&o));
        let meta = std::fs::metadata(&target).unwrap();
        assert_eq!(meta.mode() & 0o7777, 0o644, "{}", s.label());
        assert_ne!(meta.mtime(), 1, "{}", s.label());
        let mut c = s.command("workspace", "cat /proc/self/fd/0/.netrc");
        c.stdin(std::fs::File::open(&s.home).unwrap());
        let o = c.output().unwrap();
        assert!(
            !stdout(&o).contains("SECRET"),
            "{}: {}",
            s.label(),
            text(&o)
        );
        // Paired: the workspace is writable, so the same change by path goes through.
        let inside = s.ws.join("stdin-target");
        std::fs::write(&inside, "x").unwrap();
        s.chown_all();
        let o = s.run(
            "workspace",
            "chmod 777 stdin-target; touch -d @1 stdin-target",
        );
        assert_eq!(o.status.code(), Some(0), "{}: {}", s.label(), text(&o));
        assert_eq!(
            std::fs::metadata(&inside).unwrap().mtime(),
            1,
            "{}",
            s.label()
        );
    }
}

#[test]
fn device_nodes_and_hidden_files_are_not_host_inodes_the_command_can_change() {
    for u in users() {
        let s = Scratch::new(u);
        std::fs::write(s.home.join(".netrc"), "SENTINEL-NETRC\n").unwrap();
        std::fs::write(s.ws.join("mine"), "x").unwrap();
        s.chown_all();
        let null_before = std::fs::metadata("/dev/null").unwrap().mode();
        let script = format!("{META}/dev/null; {META}\"$HOME/.netrc\"; {META}\"$PWD/mine\"",);
        let out = s.run("workspace", &script);
        let got = answers(&stdout(&out));
        assert_eq!(got.len(), 12, "{}: {}", s.label(), text(&out));
        // /dev/null and the file bound over the secret: read-only binds.
        for (op, errno) in &got[..8] {
            if op == "chmod" || op == "chown" || op == "utime" {
                assert_eq!(errno, EROFS, "{} {op}: {}", s.label(), text(&out));
            }
        }
        // Paired, in the same run: the workspace file's metadata changes.
        for (op, errno) in &got[8..] {
            assert_eq!(errno, "0", "{} {op}: {}", s.label(), text(&out));
        }
        assert_eq!(std::fs::metadata("/dev/null").unwrap().mode(), null_before);
        let netrc = std::fs::metadata(s.home.join(".netrc")).unwrap();
        assert_eq!(netrc.mode() & 0o777, 0o644, "{}", s.label());
    }
}

/// `python3 -c OPENAT2 PATH MODE` creates PATH with `openat2(2)` and exits with its errno
/// (0 when made). The umask is cleared so that the mode is the one asked for.
const OPENAT2: &str = "import ctypes,os,sys,struct
libc=ctypes.CDLL(None,use_errno=True)
os.umask(0)
how=struct.pack(\"QQQ\",os.O_CREAT|os.O_WRONLY,int(sys.argv[2],8),0)
r=libc.syscall(437,-100,sys.argv[1].encode(),how,len(how))
sys.exit(0 if r>=0 else ctypes.get_errno())";

#[test]
fn setuid_files_cannot_be_made_and_writable_mounts_are_nosuid() {
    // openat2 carries its mode in a structure seccomp cannot read: it is not there at all.
    let script = format!(
        "cp /bin/true ./t && chmod 4755 ./t; echo chmod=$?; \
         python3 -c 'import os; os.open(\"c\", os.O_CREAT | os.O_WRONLY, 0o2755)' 2>/dev/null; echo creat=$?; \
         python3 -c '{OPENAT2}' o2 0o4755; echo openat2=$?; \
         chmod 0755 ./t; echo plain=$?; \
         grep \" $PWD \" /proc/self/mountinfo"
    );
    for u in users() {
        let s = Scratch::new(u);
        let out = s.run("workspace", &script);
        let o = stdout(&out);
        assert!(o.contains("chmod=1"), "{}: {}", s.label(), text(&out));
        assert!(o.contains("creat=1"), "{}: {}", s.label(), text(&out));
        assert!(o.contains("openat2=38"), "{}: {}", s.label(), text(&out));
        assert!(!s.ws.join("o2").exists(), "{}", s.label());
        // Paired, in the same run: a plain mode is fine.
        assert!(o.contains("plain=0"), "{}: {}", s.label(), text(&out));
        let mount = o.lines().find(|l| l.contains(" - ")).unwrap_or_default();
        assert!(
            mount.contains("nosuid") && mount.contains("nodev"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert_eq!(
            std::fs::metadata(s.ws.join("t")).unwrap().mode() & 0o7000,
            0,
            "{}",
            s.label()
        );
        // Paired: outside the sandbox the same user makes the same files setuid.
        let outside = s.outside(&format!(
            "chmod 4755 ./t && python3 -c '{OPENAT2}' o2 0o4755 && echo done"
        ));
        assert!(stdout(&outside).contains("done"), "{}", text(&outside));
        let o2 = std::fs::metadata(s.ws.join("o2")).unwrap().mode();
        assert_eq!(o2 & 0o7000, 0o4000, "{}", s.label());
        assert_eq!(
            std::fs::metadata(s.ws.join("t")).unwrap().mode() & 0o7000,
            0o4000
        );
    }
}

#[test]
fn device_nodes_outside_the_sandboxs_dev_open_nothing() {
    // A chroot's or container root's `dev`, or a node made by `mknod`: the read-only host
    // tree is `nodev` where the sandbox has a /dev of its own.
    if !nix::unistd::geteuid().is_root() {
        eprintln!("skipped: making a device node needs root");
        return;
    }
    for u in users() {
        let s = Scratch::new(u);
        let node = s.root.path().join("null-node");
        let made = std::process::Command::new("mknod")
            .args(["-m", "666"])
            .arg(&node)
            .args(["c", "1", "3"])
            .status()
            .unwrap();
        assert!(made.success());
        let host_dev = s.write_profile(
            "host-dev",
            "extends = \"workspace\"\n[isolation]\nminimal_dev = false\n",
        );
        let script = format!(
            "head -c1 {} >/dev/null; echo node=$?; head -c1 /dev/zero >/dev/null; echo own=$?",
            node.display()
        );
        let out = s.run("workspace", &script);
        assert!(
            stdout(&out).contains("node=1"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        // Paired, in the same run: the sandbox's own /dev works.
        assert!(
            stdout(&out).contains("own=0"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        // Paired: with the host's /dev, device files on the host tree open.
        let wide = s.run(host_dev.to_str().unwrap(), &script);
        assert!(
            stdout(&wide).contains("node=0"),
            "{}: {}",
            s.label(),
            text(&wide)
        );
    }
}

#[test]
fn without_a_mount_namespace_the_report_says_metadata_is_partial_and_protected_paths_hold() {
    for u in users() {
        let s = Scratch::new(u);
        let run = |ns_off: bool| {
            let mut c = s.json_command("workspace", "echo x > .envrc");
            if ns_off {
                c.env("SBX_DISABLE_USERNS", "1");
            }
            c.output().unwrap()
        };
        let layer = |o: &std::process::Output| {
            let last = stdout(o).lines().last().unwrap_or_default().to_string();
            let v: serde_json::Value = serde_json::from_str(&last).unwrap();
            v["enforcement"]["layers"]
                .as_array()
                .unwrap()
                .iter()
                .find(|l| l["name"] == "metadata")
                .map(|l| l["status"].as_str().unwrap_or_default().to_string())
        };
        let fallback = run(true);
        assert_eq!(
            layer(&fallback).as_deref(),
            Some("partial"),
            "{}",
            text(&fallback)
        );
        assert!(
            !s.ws.join(".envrc").exists(),
            "{}: {}",
            s.label(),
            text(&fallback)
        );
        // Paired: with namespaces the same layer is enforced.
        let full = run(false);
        assert_eq!(layer(&full).as_deref(), Some("enforced"), "{}", text(&full));
    }
}
