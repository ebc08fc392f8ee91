//! The `proxy` network mode under `sbx serve`: connections in the audit log, and host names
//! the profile does not list asked about over the protocol.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod proxy_common;

use common::users;
use proxy_common::{BODY, Setup, curl, setup};
use std::io::Write;

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
        let mut rules = Vec::new();
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
            // The result event names who decided.
            rules.push(
                result["network"][0]["rule"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            );
        }
        assert_eq!(answered, [true, false, true], "{}", t.s.label());
        let by_client = [
            "allowed once by the client",
            "denied by the client",
            "allowed for the session by the client",
        ];
        for (rule, want) in rules.iter().zip(by_client) {
            assert!(rule.contains(want), "{rule:?} lacks {want:?}");
        }
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
