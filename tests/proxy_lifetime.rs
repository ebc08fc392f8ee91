//! The `proxy` network mode without namespaces, and the proxy's end: nothing of it outlives
//! the run, also when sbx is SIGKILLed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod proxy_common;

use common::{text, users};
use proxy_common::{BODY, curl, setup};
use std::io::Read;
use std::path::PathBuf;

/// Opens a UDP socket: prints `UDP-OPEN`, or `UDP-REFUSED` and the errno.
const UDP_PROBE: &str = "python3 -c 'import socket\ntry:\n    socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n    print(\"UDP-OPEN\")\nexcept OSError as e:\n    print(\"UDP-REFUSED\", e.errno)'";

/// Without a network namespace the proxy listens on the host's loopback: Landlock lets the
/// command connect to that port only, seccomp refuses UDP, and the port closes when the run
/// ends, also when sbx is killed.
#[test]
fn without_namespaces_only_the_proxys_port_is_reachable_and_it_closes_with_sbx() {
    for user in users() {
        let t = setup(user);
        let narrow = t.narrow();
        // Without a mount namespace the workspace root takes no new entries: use a directory.
        std::fs::create_dir(t.s.ws.join("out")).unwrap();
        t.s.chown_all();
        let portfile: PathBuf = t.s.ws.join("out/proxy-url");
        let script = format!(
            "echo $HTTP_PROXY > {pf}; {}; curl -sS --max-time 10 --noproxy '*' http://127.0.0.1:{}/; echo; {UDP_PROBE}; sleep 60",
            curl(&format!("http://allowed.test:{}/", t.port)),
            t.port,
            pf = portfile.display()
        );
        let mut c = t.s.json_command(&narrow, &script);
        c.env("SBX_DISABLE_USERNS", "1")
            .stdout(std::process::Stdio::piped());
        let mut child = c.spawn().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut seen = Vec::new();
        let mut b = [0u8; 4096];
        // The two curls and the probe have answered when three lines are out.
        while seen.iter().filter(|&&c| c == b'\n').count() < 3 {
            let n = stdout.read(&mut b).unwrap();
            assert!(n > 0, "sbx ended early: {}", String::from_utf8_lossy(&seen));
            seen.extend_from_slice(&b[..n]);
        }
        let seen = String::from_utf8_lossy(&seen).into_owned();
        assert_eq!(seen.matches(BODY).count(), 1, "{}: {seen}", t.s.label());
        assert!(seen.contains("UDP-REFUSED 13"), "{}: {seen}", t.s.label());
        let mut open = t.s.command("workspace-net", UDP_PROBE);
        open.env("SBX_DISABLE_USERNS", "1");
        let open = text(&open.output().unwrap());
        assert!(
            open.contains("UDP-OPEN"),
            "paired under workspace-net: {open}"
        );
        let url = std::fs::read_to_string(&portfile).unwrap();
        let port: u16 = url.trim().rsplit(':').next().unwrap().parse().unwrap();
        assert_ne!(port, 3128, "the host loopback port is chosen at launch");
        assert!(
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok(),
            "proxy up during the run"
        );
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(
            std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
            "{}: the proxy outlived sbx",
            t.s.label()
        );
    }
}

/// Processes whose network namespace is `ns` (as `readlink /proc/PID/ns/net` shows it).
fn processes_in(ns: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if std::fs::read_link(e.path().join("ns/net")).is_ok_and(|l| l.to_string_lossy() == ns) {
            out.push(name);
        }
    }
    out
}

/// With a network namespace, the proxy's port lives in the sandbox's namespace and its
/// server in sbx: once sbx is SIGKILLed, no process is left in that namespace.
#[test]
fn after_sbx_is_killed_nothing_is_left_in_the_sandboxs_namespace() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("SKIP: reading other users' namespaces needs root");
        return;
    }
    for user in users() {
        let t = setup(user);
        let script = format!(
            "readlink /proc/self/ns/net; {}; sleep 60",
            curl(&format!("http://allowed.test:{}/", t.port))
        );
        let mut c = t.s.command(&t.narrow(), &script);
        c.stdout(std::process::Stdio::piped());
        let mut child = c.spawn().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut seen = Vec::new();
        let mut b = [0u8; 4096];
        while seen.iter().filter(|&&c| c == b'\n').count() < 2 {
            let n = stdout.read(&mut b).unwrap();
            assert!(n > 0, "sbx ended early: {}", String::from_utf8_lossy(&seen));
            seen.extend_from_slice(&b[..n]);
        }
        let seen = String::from_utf8_lossy(&seen).into_owned();
        assert!(seen.contains(BODY), "{}: {seen}", t.s.label());
        let ns = seen.lines().next().unwrap().to_string();
        assert!(ns.starts_with("net:["), "{ns}");
        assert!(!processes_in(&ns).is_empty(), "the run is in {ns}");
        child.kill().unwrap();
        child.wait().unwrap();
        // The init dies of its parent-death signal, the kernel then ends the namespace's
        // processes; wait for that without a clock: each check rereads /proc.
        let mut left = processes_in(&ns);
        for _ in 0..10_000 {
            if left.is_empty() {
                break;
            }
            std::thread::yield_now();
            left = processes_in(&ns);
        }
        assert!(left.is_empty(), "{}: left in {ns}: {left:?}", t.s.label());
    }
}
