//! Ways around the `proxy` network mode that a review found, each attempted from inside the
//! sandbox and paired with the same action done outside or allowed, so that it cannot pass for
//! the wrong reason: an MPTCP socket (a stream Landlock's TCP rules do not govern) without
//! namespaces, and a second request on a forwarded plain-HTTP connection.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod proxy_common;

use common::{require, text, users};
use proxy_common::{BODY, setup};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

/// Connect with `socket(AF_INET, SOCK_STREAM, proto)` to 127.0.0.1:port and print the reply.
fn connect_script(proto: u32, port: u16) -> String {
    format!(
        "/usr/bin/python3 -c 'import socket\ns=socket.socket(socket.AF_INET,socket.SOCK_STREAM,{proto})\ns.settimeout(10)\ns.connect((\"127.0.0.1\",{port}))\ns.sendall(b\"GET / HTTP/1.0\\r\\n\\r\\n\")\nb=b\"\"\nwhile True:\n  d=s.recv(65536)\n  if not d: break\n  b+=d\nprint(b.decode())'"
    )
}

/// Without namespaces, "Landlock's TCP rules let the command connect to that port and no
/// other": an MPTCP socket (SOCK_STREAM, IPPROTO_MPTCP), which seccomp lets through as a
/// stream and Landlock does not restrict, reaches a loopback port that is not the proxy's.
#[test]
fn without_namespaces_an_mptcp_socket_reaches_no_port_but_the_proxys() {
    let mptcp =
        std::fs::read_to_string("/proc/sys/net/mptcp/enabled").is_ok_and(|s| s.trim() == "1");
    if !require("MPTCP enabled (net.mptcp.enabled=1)", mptcp) {
        return;
    }
    for user in users() {
        let t = setup(user);
        let narrow = t.narrow();
        // Outside the sandbox, the same MPTCP connection reaches the fixture.
        let o = t.s.outside(&connect_script(262, t.port));
        assert!(text(&o).contains(BODY), "outside: {}", text(&o));
        // Plain TCP is refused inside (Landlock).
        let o =
            t.s.json_command(&narrow, &connect_script(6, t.port))
                .env("SBX_DISABLE_USERNS", "1")
                .output()
                .unwrap();
        assert!(
            !text(&o).contains(BODY),
            "{}: tcp: {}",
            t.s.label(),
            text(&o)
        );
        let o =
            t.s.json_command(&narrow, &connect_script(262, t.port))
                .env("SBX_DISABLE_USERNS", "1")
                .output()
                .unwrap();
        assert!(
            !text(&o).contains(BODY),
            "{}: MPTCP reached 127.0.0.1:{} past Landlock: {}",
            t.s.label(),
            t.port,
            text(&o)
        );
    }
}

/// A keep-alive server on 127.0.0.1 that answers every request head on a connection and
/// keeps the request lines it saw.
fn keep_alive_fixture() -> (u16, Arc<Mutex<Vec<String>>>) {
    let l = TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = l.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(s) = s else { continue };
            let log = log.clone();
            std::thread::spawn(move || {
                let mut w = s.try_clone().unwrap();
                let mut r = BufReader::new(s);
                loop {
                    let mut first = String::new();
                    if r.read_line(&mut first).unwrap_or(0) == 0 {
                        return;
                    }
                    log.lock().unwrap().push(first.trim().to_string());
                    loop {
                        let mut l = String::new();
                        if r.read_line(&mut l).unwrap_or(0) == 0 || l == "\r\n" {
                            break;
                        }
                    }
                    let body = "ok\n";
                    let reply = format!(
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if w.write_all(reply.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (port, seen)
}

/// "forwards plain http:// requests one per client connection": a second request written on
/// the same connection, with its own Host and an absolute target naming a host the profile
/// does not allow, does not reach the upstream.
#[test]
fn a_second_request_on_a_forwarded_connection_is_not_relayed() {
    for user in users() {
        let t = setup(user);
        let (port, seen) = keep_alive_fixture();
        let profile = t.profile(
            "ka",
            &format!("allow = [\"allowed.test:{port}\"]\nprivate = [\"127.0.0.1/32\"]"),
        );
        let script = format!(
            "/usr/bin/python3 -c 'import socket\ns=socket.create_connection((\"127.0.0.1\",3128),timeout=5)\ns.sendall(b\"GET http://allowed.test:{port}/first HTTP/1.1\\r\\nHost: x\\r\\n\\r\\nGET http://forbidden.example/second HTTP/1.1\\r\\nHost: forbidden.example\\r\\n\\r\\n\")\ntry:\n  while s.recv(65536): pass\nexcept Exception: pass'"
        );
        let (_, _, all) = t.run(&profile, &script);
        let seen = seen.lock().unwrap().clone();
        assert!(
            seen.iter().any(|l| l.contains("/first")),
            "{}: the first request is forwarded: {seen:?} {all}",
            t.s.label()
        );
        assert!(
            !seen.iter().any(|l| l.contains("forbidden.example")),
            "{}: a second, unchecked request reached the upstream: {seen:?}",
            t.s.label()
        );
    }
}
