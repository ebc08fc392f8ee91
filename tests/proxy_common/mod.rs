//! What the proxy tests share: loopback fixture servers, a hosts file naming them, profiles
//! that allow them narrowly and widely, and readers for the report's network records.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use super::common::{Scratch, text};
use std::io::{Read, Write};
use std::net::TcpListener;

/// A loopback HTTP server answering every request with `body`; returns its port.
pub fn fixture(ip: &str, body: Vec<u8>) -> u16 {
    serve(TcpListener::bind((ip, 0)).unwrap(), body)
}

/// Answer every request on `l` with `body`, on threads of their own; returns the port.
pub fn serve(l: TcpListener, body: Vec<u8>) -> u16 {
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
                let mut reply = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                )
                .into_bytes();
                reply.extend_from_slice(&body);
                let _ = s.write_all(&reply);
            });
        }
    });
    port
}

pub const BODY: &str = "SENTINEL-PROXY-FIXTURE-5e1d";

pub struct Setup {
    pub s: Scratch,
    /// The fixture on 127.0.0.1.
    pub port: u16,
    /// A second fixture on 127.0.0.2.
    pub port2: u16,
}

/// Names in the hosts file: allowed/other/a.wild/blocked.wild -> 127.0.0.1, priv -> 127.0.0.2,
/// meta -> the cloud metadata address, meta6 -> the same as a v4-mapped v6 address.
pub fn setup(user: Option<u32>) -> Setup {
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
    pub fn profile(&self, name: &str, network: &str) -> String {
        let hosts = self.s.root.path().join("hosts.toml");
        let text = format!(
            "extends = \"workspace\"\n[network]\nmode = \"proxy\"\nhosts = \"{}\"\n{network}\n",
            hosts.display()
        );
        self.s.write_profile(name, &text).display().to_string()
    }

    /// The narrow profile most refusals are checked under.
    pub fn narrow(&self) -> String {
        self.profile(
            "narrow",
            "allow = [\"allowed.test\", \"*.wild.test\", \"priv.test\", \"meta.test\", \"meta6.test\"]\ndeny = [\"blocked.wild.test\"]\nprivate = [\"127.0.0.1/32\"]",
        )
    }

    /// Wider: more names, no deny, the second fixture's address.
    pub fn wide(&self) -> String {
        self.profile(
            "wide",
            "allow = [\"allowed.test\", \"other.test\", \"*.wild.test\", \"priv.test\"]\nprivate = [\"127.0.0.1/32\", \"127.0.0.2/32\"]",
        )
    }

    /// Run `script` with `--json`: its stdout before the report, and the report.
    pub fn run(&self, profile: &str, script: &str) -> (String, serde_json::Value, String) {
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
pub fn records<'a>(report: &'a serde_json::Value, host: &str) -> Vec<&'a serde_json::Value> {
    report["network"]
        .as_array()
        .map(|v| v.iter().filter(|r| r["host"] == host).collect())
        .unwrap_or_default()
}

pub fn decision(report: &serde_json::Value, host: &str) -> (String, String) {
    let r = records(report, host);
    assert_eq!(r.len(), 1, "one record for {host}: {report}");
    (
        r[0]["decision"].as_str().unwrap().to_string(),
        r[0]["rule"].as_str().unwrap().to_string(),
    )
}

pub fn curl(url: &str) -> String {
    format!("curl -sS --max-time 20 {url}; echo")
}
