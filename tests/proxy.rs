//! The `proxy` network mode, end to end: loopback fixture servers stand in for allowed and
//! refused hosts, named through a hosts file that only the proxy reads. Every refusal is
//! paired with the same fixture reached under a wider rule.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Scratch, text, users};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;

/// A loopback HTTP server answering every request with `body`; returns its port.
fn fixture(ip: &str, body: Vec<u8>) -> u16 {
    serve(TcpListener::bind((ip, 0)).unwrap(), body)
}

/// Answer every request on `l` with `body`, on threads of their own; returns the port.
fn serve(l: TcpListener, body: Vec<u8>) -> u16 {
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            let body = body.clone();
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let mut b = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut b) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&b[..n]),
                    }
                }
                let h = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = s.write_all(h.as_bytes());
                let _ = s.write_all(&body);
            });
        }
    });
    port
}

const BODY: &str = "SENTINEL-PROXY-FIXTURE-5e1d";

struct Setup {
    s: Scratch,
    /// The fixture on 127.0.0.1.
    port: u16,
    /// A second fixture on 127.0.0.2.
    port2: u16,
}

/// Names in the hosts file: allowed/other/a.wild/blocked.wild -> 127.0.0.1, priv -> 127.0.0.2,
/// meta -> the cloud metadata address, meta6 -> the same as a v4-mapped v6 address.
fn setup(user: Option<u32>) -> Setup {
    let s = Scratch::new(user);
    let port = fixture("127.0.0.1", BODY.as_bytes().to_vec());
    let port2 = fixture("127.0.0.2", BODY.as_bytes().to_vec());
    s.write_profile(
        "hosts",
        "127.0.0.1 allowed.test other.test a.wild.test blocked.wild.test\n127.0.0.2 priv.test\n169.254.169.254 meta.test\n::ffff:169.254.169.254 meta6.test\n",
    );
    Setup { s, port, port2 }
}

impl Setup {
    fn profile(&self, name: &str, network: &str) -> String {
        let hosts = self.s.root.path().join("hosts.toml");
        let text = format!(
            "extends = \"workspace\"\n[network]\nmode = \"proxy\"\nhosts = \"{}\"\n{network}\n",
            hosts.display()
        );
        self.s.write_profile(name, &text).display().to_string()
    }

    /// The narrow profile most refusals are checked under.
    fn narrow(&self) -> String {
        self.profile(
            "narrow",
            "allow = [\"allowed.test\", \"*.wild.test\", \"priv.test\", \"meta.test\", \"meta6.test\"]\ndeny = [\"blocked.wild.test\"]\nprivate = [\"127.0.0.1/32\"]",
        )
    }

    /// Wider: more names, no deny, the second fixture's address.
    fn wide(&self) -> String {
        self.profile(
            "wide",
            "allow = [\"allowed.test\", \"other.test\", \"*.wild.test\", \"priv.test\"]\nprivate = [\"127.0.0.1/32\", \"127.0.0.2/32\"]",
        )
    }

    /// Run `script` with `--json`: its stdout before the report, and the report.
    fn run(&self, profile: &str, script: &str) -> (String, serde_json::Value, String) {
        let out = self.s.json_command(profile, script).output().unwrap();
        let all = String::from_utf8_lossy(&out.stdout).into_owned();
        let (before, last) = all
            .trim_end()
            .rsplit_once('\n')
            .unwrap_or(("", all.trim_end()));
        let report: serde_json::Value = serde_json::from_str(last)
            .unwrap_or_else(|e| panic!("{}: no report ({e}): {}", self.s.label(), text(&out)));
        (before.to_string(), report, text(&out))
    }
}

/// The report's network records for `host`.
fn records<'a>(report: &'a serde_json::Value, host: &str) -> Vec<&'a serde_json::Value> {
    report["network"]
        .as_array()
        .map(|v| v.iter().filter(|r| r["host"] == host).collect())
        .unwrap_or_default()
}

fn decision(report: &serde_json::Value, host: &str) -> (String, String) {
    let r = records(report, host);
    assert_eq!(r.len(), 1, "one record for {host}: {report}");
    (
        r[0]["decision"].as_str().unwrap().to_string(),
        r[0]["rule"].as_str().unwrap().to_string(),
    )
}

fn curl(url: &str) -> String {
    format!("curl -sS --max-time 20 {url}; echo")
}

#[test]
fn an_allowed_name_is_reached_over_http_and_through_a_connect_tunnel() {
    for user in users() {
        let t = setup(user);
        let narrow = t.narrow();
        let url = format!("http://allowed.test:{}/x", t.port);
        let script = format!("{} ; curl -sS -p --max-time 20 {url}; echo", curl(&url));
        let (out, rep, all) = t.run(&narrow, &script);
        assert_eq!(out.matches(BODY).count(), 2, "{}: {all}", t.s.label());
        let recs = records(&rep, "allowed.test");
        let protocols: Vec<&str> = recs
            .iter()
            .map(|r| r["protocol"].as_str().unwrap())
            .collect();
        assert_eq!(protocols, ["http", "connect"], "{rep}");
        for r in recs {
            assert_eq!(r["decision"], "allow");
            assert_eq!(r["port"], t.port);
            assert!(
                r["rule"]
                    .as_str()
                    .unwrap()
                    .contains("network.allow allowed.test"),
                "{r}"
            );
            assert_eq!(r["address"], format!("127.0.0.1:{}", t.port));
            assert!(r["bytes_up"].as_u64().unwrap() > 0, "{r}");
            assert!(
                r["bytes_down"].as_u64().unwrap() >= BODY.len() as u64,
                "{r}"
            );
        }
    }
}

#[test]
fn a_name_not_listed_is_refused_and_reached_once_listed() {
    for user in users() {
        let t = setup(user);
        let script = curl(&format!("http://other.test:{}/", t.port));
        let (out, rep, all) = t.run(&t.narrow(), &script);
        assert!(!out.contains(BODY), "{}: {all}", t.s.label());
        assert_eq!(
            decision(&rep, "other.test"),
            ("deny".into(), "not in network.allow".into())
        );
        let (out, rep, all) = t.run(&t.wide(), &script);
        assert!(out.contains(BODY), "{}: {all}", t.s.label());
        assert_eq!(decision(&rep, "other.test").0, "allow");
    }
}

#[test]
fn a_denied_subdomain_under_an_allowed_wildcard_is_refused() {
    for user in users() {
        let t = setup(user);
        let script = format!(
            "{} ; {}",
            curl(&format!("http://a.wild.test:{}/", t.port)),
            curl(&format!("http://blocked.wild.test:{}/", t.port))
        );
        let (out, rep, all) = t.run(&t.narrow(), &script);
        assert_eq!(out.matches(BODY).count(), 1, "{}: {all}", t.s.label());
        assert_eq!(decision(&rep, "a.wild.test").0, "allow");
        let (d, rule) = decision(&rep, "blocked.wild.test");
        assert_eq!(d, "deny");
        assert!(rule.starts_with("network.deny blocked.wild.test"), "{rule}");
        let (out, _, all) = t.run(&t.wide(), &script);
        assert_eq!(out.matches(BODY).count(), 2, "{}: {all}", t.s.label());
    }
}

#[test]
fn an_allowed_name_that_resolves_to_a_private_address_is_refused_unless_listed() {
    for user in users() {
        let t = setup(user);
        let script = curl(&format!("http://priv.test:{}/", t.port2));
        let (out, rep, all) = t.run(&t.narrow(), &script);
        assert!(!out.contains(BODY), "{}: {all}", t.s.label());
        let (d, rule) = decision(&rep, "priv.test");
        assert_eq!(d, "deny");
        assert!(rule.contains("loopback address 127.0.0.2"), "{rule}");
        let (out, rep, all) = t.run(&t.wide(), &script);
        assert!(out.contains(BODY), "{}: {all}", t.s.label());
        assert_eq!(decision(&rep, "priv.test").0, "allow");
    }
}

/// The metadata address is never connected to, so the pairing is the reason: the refusal
/// names the metadata range, found before any connection was tried.
#[test]
fn the_metadata_address_is_refused_also_as_a_v4_mapped_address() {
    for user in users() {
        let t = setup(user);
        let script = format!(
            "{} ; {}",
            curl("http://meta.test/latest/meta-data/"),
            curl("http://meta6.test/latest/meta-data/")
        );
        let (_, rep, _) = t.run(&t.narrow(), &script);
        for host in ["meta.test", "meta6.test"] {
            let (d, rule) = decision(&rep, host);
            assert_eq!(d, "deny", "{host}");
            assert!(
                rule.starts_with("cloud-metadata address 169.254.169.254"),
                "{host}: {rule}"
            );
        }
    }
}

#[test]
fn an_ip_literal_is_refused_and_the_same_fixture_is_reached_by_name() {
    for user in users() {
        let t = setup(user);
        let script = format!(
            "curl -sS --max-time 20 --noproxy '' http://127.0.0.1:{p}/; echo; {}",
            curl(&format!("http://allowed.test:{}/", t.port)),
            p = t.port
        );
        let (out, rep, all) = t.run(&t.narrow(), &script);
        assert_eq!(out.matches(BODY).count(), 1, "{}: {all}", t.s.label());
        let (d, rule) = decision(&rep, "127.0.0.1");
        assert_eq!(d, "deny");
        assert!(rule.starts_with("ip-literal"), "{rule}");
    }
}

#[test]
fn a_program_that_ignores_the_proxy_variables_cannot_connect() {
    for user in users() {
        let t = setup(user);
        let py = format!(
            "import socket\ntry:\n    s = socket.create_connection(('127.0.0.1', {}), timeout=10)\n    s.sendall(b'GET / HTTP/1.0\\r\\n\\r\\n')\n    print(s.recv(4096).decode())\nexcept OSError as e:\n    print('refused', e)\n",
            t.port
        );
        let script = format!(
            "python3 -c \"$PY\"; curl -sS --max-time 10 --noproxy '*' http://127.0.0.1:{}/; echo",
            t.port
        );
        let mut c = t.s.json_command(&t.narrow(), &script);
        c.env("PY", &py);
        let out = c.output().unwrap();
        assert!(
            !text(&out).contains(BODY),
            "{}: {}",
            t.s.label(),
            text(&out)
        );
        // Paired: the same program reaches the fixture under the host's network.
        let mut c = t.s.command("workspace-net", &script);
        c.env("PY", &py);
        let out = c.output().unwrap();
        assert_eq!(
            text(&out).matches(BODY).count(),
            2,
            "{}: {}",
            t.s.label(),
            text(&out)
        );
    }
}

#[test]
fn socks5_with_host_names_follows_the_same_rules() {
    for user in users() {
        let t = setup(user);
        let socks = |h: &str| {
            format!(
                "curl -sS --max-time 20 --socks5-hostname 127.0.0.1:3128 http://{h}:{}/; echo",
                t.port
            )
        };
        let script = format!("{}; {}", socks("allowed.test"), socks("other.test"));
        let (out, rep, all) = t.run(&t.narrow(), &script);
        assert_eq!(out.matches(BODY).count(), 1, "{}: {all}", t.s.label());
        assert_eq!(records(&rep, "allowed.test")[0]["protocol"], "socks5");
        assert_eq!(decision(&rep, "allowed.test").0, "allow");
        assert_eq!(decision(&rep, "other.test").0, "deny");
        let (out, _, all) = t.run(&t.wide(), &script);
        assert_eq!(out.matches(BODY).count(), 2, "{}: {all}", t.s.label());
    }
}

#[test]
fn the_connection_limit_refuses_the_connection_past_it() {
    for user in users() {
        let t = setup(user);
        let one = t.profile(
            "one",
            "allow = [\"allowed.test\"]\nprivate = [\"127.0.0.1/32\"]\nconnections = 1",
        );
        let two = t.profile(
            "two",
            "allow = [\"allowed.test\"]\nprivate = [\"127.0.0.1/32\"]\nconnections = 2",
        );
        let url = format!("http://allowed.test:{}/", t.port);
        let script = format!("{} ; {}", curl(&url), curl(&url));
        let (out, rep, all) = t.run(&one, &script);
        assert_eq!(out.matches(BODY).count(), 1, "{}: {all}", t.s.label());
        let recs = records(&rep, "allowed.test");
        assert_eq!(recs[1]["decision"], "deny", "{rep}");
        assert!(
            recs[1]["rule"]
                .as_str()
                .unwrap()
                .contains("network.connections"),
            "{rep}"
        );
        let (out, _, all) = t.run(&two, &script);
        assert_eq!(out.matches(BODY).count(), 2, "{}: {all}", t.s.label());
    }
}

#[test]
fn the_byte_limit_cuts_a_download_short() {
    for user in users() {
        let t = setup(user);
        let big = fixture("127.0.0.1", vec![b'x'; 4 << 20]);
        let small = t.profile(
            "small",
            "allow = [\"allowed.test\"]\nprivate = [\"127.0.0.1/32\"]\nbytes = \"1MiB\"",
        );
        let large = t.profile(
            "large",
            "allow = [\"allowed.test\"]\nprivate = [\"127.0.0.1/32\"]\nbytes = \"8MiB\"",
        );
        let script = format!("curl -sS --max-time 20 http://allowed.test:{big}/ | wc -c");
        let (out, rep, all) = t.run(&small, &script);
        let got: u64 = out.trim().parse().unwrap_or(u64::MAX);
        assert!(got < 1 << 20, "{}: {got} bytes: {all}", t.s.label());
        let (_, rule) = decision(&rep, "allowed.test");
        assert!(rule.contains("network.bytes limit reached"), "{rule}");
        let (out, _, all) = t.run(&large, &script);
        assert_eq!(
            out.trim(),
            (4u64 << 20).to_string(),
            "{}: {all}",
            t.s.label()
        );
    }
}

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

#[test]
fn the_report_says_how_the_proxy_is_reached() {
    for user in users() {
        let t = setup(user);
        let (_, rep, _) = t.run(&t.narrow(), "true");
        let net = rep["enforcement"]["layers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["name"] == "network")
            .unwrap()
            .clone();
        assert_eq!(net["status"], "enforced", "{net}");
        assert!(
            net["detail"]
                .as_str()
                .unwrap()
                .contains("proxy on 127.0.0.1:3128"),
            "{net}"
        );
        let out =
            t.s.json_command(&t.narrow(), "true")
                .env("SBX_DISABLE_USERNS", "1")
                .output()
                .unwrap();
        let all = String::from_utf8_lossy(&out.stdout).into_owned();
        let rep: serde_json::Value =
            serde_json::from_str(all.trim_end().lines().last().unwrap()).unwrap();
        let net = rep["enforcement"]["layers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["name"] == "network")
            .unwrap()
            .clone();
        assert_eq!(net["status"], "partial", "{net}");
        assert!(
            net["detail"].as_str().unwrap().contains("Landlock"),
            "{net}"
        );
        let doctor = |disable: bool| {
            let mut c = t.s.sbx(&["doctor"]);
            if disable {
                c.env("SBX_DISABLE_USERNS", "1");
            }
            let out = text(&c.output().unwrap());
            out.lines()
                .find(|l| l.contains("proxy network mode"))
                .unwrap_or_else(|| panic!("no proxy line: {out}"))
                .to_string()
        };
        let with = doctor(false);
        assert!(with.contains("own network namespace"), "{with}");
        let without = doctor(true);
        assert!(
            without.contains("Landlock allows TCP only to the proxy's port"),
            "{without}"
        );
    }
}

/// `sbx serve` under `profile` with an audit log, as the scenario's user.
struct Serve {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
}

impl Serve {
    fn start(t: &Setup, profile: &str, audit: &std::path::Path) -> Serve {
        let policy =
            t.s.write_profile("policy", "[policy]\nallow = [\"Bash(curl *)\"]\n");
        let mut c = t.s.sbx(&[
            "serve",
            "--profile",
            profile,
            "--policy",
            policy.to_str().unwrap(),
            "--audit",
            audit.to_str().unwrap(),
            "--workspace",
            t.s.ws.to_str().unwrap(),
        ]);
        c.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        if t.s.user.is_some() {
            // The audit log is created by the server, as the scenario's user.
            std::os::unix::fs::chown(t.s.root.path(), t.s.user, t.s.user).unwrap();
        }
        let mut child = c.spawn().unwrap();
        let stdin = child.stdin.take();
        let lines = std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().unwrap()));
        Serve {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, v: serde_json::Value) {
        writeln!(self.stdin.as_mut().unwrap(), "{v}").unwrap();
    }

    fn call(&mut self, id: &str, command: &str) {
        self.send(serde_json::json!({"type": "call", "id": id, "tool": "bash",
            "input": {"command": command}, "session": "s1", "agent": "a1"}));
    }

    /// The next event of one of `types`.
    fn next(&mut self, types: &[&str]) -> serde_json::Value {
        loop {
            let line = self.lines.next().expect("serve ended").unwrap();
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            if types.iter().any(|t| v["type"] == *t) {
                return v;
            }
        }
    }

    fn end(mut self) {
        drop(self.stdin.take());
        self.child.wait().unwrap();
    }
}

/// `sbx serve` with an audit log: the result's record lists the proxy's connections.
#[test]
fn the_audit_log_records_every_connection() {
    for user in users() {
        let t = setup(user);
        let audit = t.s.root.path().join("audit.jsonl");
        let mut srv = Serve::start(&t, &t.narrow(), &audit);
        srv.call(
            "c1",
            &format!(
                "curl -sS --max-time 20 http://allowed.test:{p}/ http://blocked.wild.test:{p}/",
                p = t.port
            ),
        );
        let result = srv.next(&["result"]);
        srv.end();
        assert!(
            result["content"].as_str().unwrap().contains(BODY),
            "{result}"
        );
        let log = std::fs::read_to_string(&audit).unwrap();
        let rec: serde_json::Value = log
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .find(|r| r["event"] == "result")
            .unwrap_or_else(|| panic!("no result record: {log}"));
        let net = rec["network"].as_array().unwrap_or_else(|| panic!("{rec}"));
        let got: Vec<(&str, &str)> = net
            .iter()
            .map(|r| (r["host"].as_str().unwrap(), r["decision"].as_str().unwrap()))
            .collect();
        // A denied name is refused outright, never asked about.
        assert_eq!(
            got,
            [("allowed.test", "allow"), ("blocked.wild.test", "deny")],
            "{rec}"
        );
        assert!(
            net[0]["bytes_down"].as_u64().unwrap() >= BODY.len() as u64,
            "{rec}"
        );
    }
}

/// In `sbx serve`, a name the profile does not list becomes an approval request: allowed
/// once, denied, allowed for the session (then not asked again).
#[test]
fn serve_asks_about_an_unlisted_host() {
    for user in users() {
        let t = setup(user);
        let audit = t.s.root.path().join("audit.jsonl");
        let mut srv = Serve::start(&t, &t.narrow(), &audit);
        let cmd = curl(&format!("http://other.test:{}/", t.port));
        let mut answered = Vec::new();
        for (id, answer) in [
            ("c1", "allow-once"),
            ("c2", "deny"),
            ("c3", "allow-for-session"),
        ] {
            srv.call(id, &cmd);
            let req = srv.next(&["approval_request", "result"]);
            assert_eq!(req["type"], "approval_request", "{}: {req}", t.s.label());
            assert_eq!(
                req["canonical"],
                format!("Network(other.test:{})", t.port),
                "{req}"
            );
            assert!(
                req["id"]
                    .as_str()
                    .unwrap()
                    .starts_with(&format!("{id}#net")),
                "{req}"
            );
            srv.send(serde_json::json!({"type": "approval", "id": req["id"], "answer": answer}));
            let result = srv.next(&["result"]);
            answered.push(result["content"].as_str().unwrap().contains(BODY));
        }
        assert_eq!(answered, [true, false, true], "{}", t.s.label());
        srv.call("c4", &cmd);
        let result = srv.next(&["approval_request", "result"]);
        assert_eq!(
            result["type"], "result",
            "asked again after allow-for-session: {result}"
        );
        assert!(
            result["content"].as_str().unwrap().contains(BODY),
            "{result}"
        );
        srv.end();
    }
}

/// The built-in `workspace-registries` profile, with its names pointed at a loopback fixture
/// on port 443 by a hosts file (a profile that extends it): a listed registry is reached over
/// a CONNECT tunnel, the same fixture under an unlisted name or another port is not.
#[test]
fn workspace_registries_reaches_the_registries_and_nothing_else() {
    let Ok(l) = TcpListener::bind(("127.0.0.1", 443)) else {
        eprintln!("SKIP: cannot bind 127.0.0.1:443 for the registry fixture");
        return;
    };
    let p443 = serve(l, BODY.as_bytes().to_vec());
    let port = fixture("127.0.0.1", BODY.as_bytes().to_vec());
    for user in users() {
        let s = Scratch::new(user);
        s.write_profile("hosts", "127.0.0.1 pypi.org static.crates.io example.com\n");
        let hosts = s.root.path().join("hosts.toml");
        let prof = s.write_profile(
            "reg",
            &format!(
                "extends = \"workspace-registries\"\n[network]\nhosts = \"{}\"\nprivate = [\"127.0.0.1/32\"]\n",
                hosts.display()
            ),
        );
        let tunnel = |h: &str, p: u16| format!("curl -sS -p --max-time 20 http://{h}:{p}/; echo");
        let script = format!(
            "{}; {}; {}; {}",
            tunnel("pypi.org", p443),
            tunnel("static.crates.io", p443),
            tunnel("example.com", p443),
            tunnel("pypi.org", port)
        );
        let out = s
            .json_command(prof.to_str().unwrap(), &script)
            .output()
            .unwrap();
        let all = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(
            all.matches(BODY).count(),
            2,
            "{}: {}",
            s.label(),
            text(&out)
        );
        let rep: serde_json::Value =
            serde_json::from_str(all.trim_end().lines().last().unwrap()).unwrap();
        let d: Vec<(String, u64, String)> = rep["network"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["host"].as_str().unwrap().into(),
                    r["port"].as_u64().unwrap(),
                    r["decision"].as_str().unwrap().into(),
                )
            })
            .collect();
        assert_eq!(
            d,
            [
                ("pypi.org".into(), 443, "allow".into()),
                ("static.crates.io".into(), 443, "allow".into()),
                ("example.com".into(), 443, "deny".into()),
                ("pypi.org".into(), u64::from(port), "deny".into()),
            ],
            "{rep}"
        );
    }
}

#[test]
fn explain_lists_the_registries_with_their_origins() {
    let out = std::process::Command::new(common::sbx_bin())
        .args(["explain", "--profile", "workspace-registries"])
        .output()
        .unwrap();
    let t = text(&out);
    for name in [
        "index.crates.io:443",
        "registry.npmjs.org:443",
        "pypi.org:443",
        "proxy.golang.org:443",
        "repo.maven.apache.org:443",
        "github.com:443",
    ] {
        let line = t
            .lines()
            .find(|l| l.contains(&format!(" {name} ")))
            .unwrap_or_else(|| panic!("{name} missing: {t}"));
        assert!(line.contains("builtin:workspace-registries:"), "{line}");
    }
}
