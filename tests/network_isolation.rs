//! The host's network is out of reach: loopback TCP and UDP, abstract and path unix sockets.
//!
//! Each protection is attempted from inside the sandbox and paired with the same action allowed
//! (under a wider profile, or outside the sandbox), as root and as uid 65534.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;
mod sandbox_common;
use common::*;
use sandbox_common::*;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

#[test]
fn tcp_to_host_loopback_is_unreachable() {
    let port = tcp_hello_server();
    for u in users() {
        let s = Scratch::new(u);
        for profile in ["workspace", "strict", "read-only"] {
            let blocked = s.run(profile, &tcp_probe(port));
            assert!(
                !stdout(&blocked).contains("CONNECTED"),
                "{} {profile}: {}",
                s.label(),
                text(&blocked)
            );
        }
        let allowed = s.run("workspace-net", &tcp_probe(port));
        assert!(
            stdout(&allowed).contains("CONNECTED HELLO-TCP"),
            "{}: {}",
            s.label(),
            text(&allowed)
        );
    }
}

#[test]
fn udp_to_host_loopback_does_not_arrive() {
    for u in users() {
        let s = Scratch::new(u);
        let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.set_read_timeout(Some(std::time::Duration::from_secs(3)))
            .unwrap();
        let port = sock.local_addr().unwrap().port();
        let send = format!(
            "python3 -c 'import socket; socket.socket(socket.AF_INET,socket.SOCK_DGRAM).sendto(b\"UDP-SENTINEL\",(\"127.0.0.1\",{port}))'"
        );
        s.run("workspace", &send);
        s.run("read-only", &send);
        s.run("strict", &send);
        let allowed = s.run("workspace-net", &send);
        assert_eq!(allowed.status.code(), Some(0), "{}", text(&allowed));
        let mut buf = [0u8; 64];
        let (n, _) = sock.recv_from(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"UDP-SENTINEL");
        // Only the host-network datagram arrived: nothing else is queued.
        sock.set_nonblocking(true).unwrap();
        assert!(
            sock.recv_from(&mut buf).is_err(),
            "{}: a sandboxed datagram arrived",
            s.label()
        );
    }
}

#[test]
fn abstract_unix_socket_outside_is_unreachable() {
    use std::os::linux::net::SocketAddrExt;
    let name = format!("sbx-test-abstract-{}", std::process::id());
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let listener = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
    std::thread::spawn(move || {
        for c in listener.incoming().flatten() {
            let mut c = c;
            let _ = std::io::Write::write_all(&mut c, b"HELLO-UNIX");
        }
    });
    let probe = format!(
        "python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect(\"\\0{name}\"); print(\"CONNECTED\", s.recv(16).decode())'"
    );
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        // workspace-net shares the host network namespace: only Landlock's scope stops this.
        for profile in ["workspace", "workspace-net"] {
            let blocked = s.run(profile, &probe);
            assert!(
                !stdout(&blocked).contains("CONNECTED"),
                "{} {profile}: {}",
                s.label(),
                text(&blocked)
            );
        }
        let allowed = s.run(wide.to_str().unwrap(), &probe);
        assert!(
            stdout(&allowed).contains("CONNECTED HELLO-UNIX"),
            "{}: {}",
            s.label(),
            text(&allowed)
        );
    }
}

/// A listener on a path socket that anyone may connect to, in a new directory under `parent`,
/// answering `HELLO-PATH`; and the probe that prints `CONNECTED HELLO-PATH` when it gets through.
fn path_socket_in(parent: &Path) -> (tempfile::TempDir, String) {
    let dir = tempfile::Builder::new()
        .prefix("sbx-sock")
        .tempdir_in(parent)
        .unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let path = dir.path().join("s.sock");
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::thread::spawn(move || {
        for c in listener.incoming().flatten() {
            let mut c = c;
            let _ = std::io::Write::write_all(&mut c, b"HELLO-PATH");
        }
    });
    let probe = format!(
        "python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect(\"{}\"); print(\"CONNECTED\", s.recv(16).decode())'",
        path.display()
    );
    (dir, probe)
}

/// Landlock below ABI 9 does not govern `connect()` on a path socket: under `strict`, which
/// grants nothing in `/run` or `/var`, a socket there that the user's permissions allow is out
/// of reach because those trees are covered in the sandbox. Paired: `workspace`, which reads
/// them, reaches the same socket (a limit docs/sandbox.md names).
#[test]
fn path_unix_sockets_in_trees_strict_grants_nothing_in_are_unreachable() {
    // Top-level trees: the scratch workspace lies under /var/tmp, which keeps /var in sight.
    // `/srv` is in the file-system hierarchy standard but not on every host; `/run` always is.
    let parents = ["/run", "/srv"]
        .into_iter()
        .filter(|p| Path::new(p).is_dir());
    for parent in parents {
        let (_dir, probe) = path_socket_in(Path::new(parent));
        for u in users() {
            let s = Scratch::new(u);
            let blocked = s.run("strict", &probe);
            assert!(
                !stdout(&blocked).contains("CONNECTED") && text(&blocked).contains("Error"),
                "{} {parent}: {}",
                s.label(),
                text(&blocked)
            );
            let allowed = s.run("workspace", &probe);
            assert!(
                stdout(&allowed).contains("CONNECTED HELLO-PATH"),
                "{} {parent}: {}",
                s.label(),
                text(&allowed)
            );
        }
    }
}

#[test]
fn path_unix_socket_in_host_tmp_is_unreachable() {
    let (_dir, probe) = path_socket_in(&std::env::temp_dir());
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        let blocked = s.run("workspace", &probe);
        assert!(
            !stdout(&blocked).contains("CONNECTED"),
            "{}: {}",
            s.label(),
            text(&blocked)
        );
        let allowed = s.run(wide.to_str().unwrap(), &probe);
        assert!(
            stdout(&allowed).contains("CONNECTED HELLO-PATH"),
            "{}: {}",
            s.label(),
            text(&allowed)
        );
    }
}
