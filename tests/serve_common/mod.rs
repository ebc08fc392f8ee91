//! The `sbx serve` test harness: spawn the built binary on a fresh workspace and talk
//! JSON lines to it.
#![allow(dead_code)]

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const POLICY: &str = r#"[policy]
allow = ["Bash(echo *)", "Bash(sleep *)", "Bash(printf *)"]
ask = ["Bash(touch *)"]
deny = ["Bash(rm *)"]
"#;

pub struct Server {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    events: mpsc::Receiver<Value>,
    pub seen: Vec<Value>,
    pub ws: tempfile::TempDir,
    _home: tempfile::TempDir,
}

impl Server {
    pub fn start(extra: &[&str]) -> Self {
        let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let policy = home.path().join("policy.toml");
        std::fs::write(&policy, POLICY).unwrap_or_else(|e| panic!("{e}"));
        let mut child = Command::new(env!("CARGO_BIN_EXE_sbx"))
            .arg("serve")
            .arg("--workspace")
            .arg(ws.path())
            .arg("--policy")
            .arg(&policy)
            .args(extra)
            .env("HOME", home.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn: {e}"));
        let stdout = child.stdout.take().unwrap_or_else(|| panic!("stdout"));
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("server wrote a non-JSON line ({e}): {line}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut s = Self {
            child,
            stdin,
            events: rx,
            seen: Vec::new(),
            ws,
            _home: home,
        };
        let ready = s.next();
        assert_eq!(ready["type"], "ready", "{ready}");
        assert_eq!(ready["protocol"], 1);
        s
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        let i = self
            .stdin
            .as_mut()
            .unwrap_or_else(|| panic!("stdin closed"));
        i.write_all(bytes).unwrap_or_else(|e| panic!("write: {e}"));
        i.flush().unwrap_or_else(|e| panic!("flush: {e}"));
    }

    pub fn send(&mut self, v: Value) {
        let mut line = serde_json::to_vec(&v).unwrap_or_else(|e| panic!("{e}"));
        line.push(b'\n');
        self.send_raw(&line);
    }

    pub fn next(&mut self) -> Value {
        let v = self
            .events
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("no event within 60 s; seen: {:#?}", self.seen));
        self.seen.push(v.clone());
        v
    }

    /// Events until (and including) the first that matches.
    pub fn until(&mut self, f: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut got = Vec::new();
        loop {
            let v = self.next();
            let done = f(&v);
            got.push(v);
            if done {
                return got;
            }
        }
    }

    pub fn result_of(&mut self, id: &str) -> (Vec<Value>, Value) {
        let mut evs = self.until(|v| v["type"] == "result" && v["id"] == id);
        let r = evs.pop().unwrap_or_default();
        (evs.into_iter().filter(|v| v["id"] == id).collect(), r)
    }
}

pub fn call(id: &str, command: &str) -> Value {
    json!({"type": "call", "id": id, "tool": "bash", "input": {"command": command}, "session": "s1", "agent": "a1"})
}

pub fn types(evs: &[Value]) -> Vec<String> {
    evs.iter()
        .map(|v| v["type"].as_str().unwrap_or("?").to_string())
        .collect()
}

/// A result of a command that ran to exit `code`: its content ends with the exit line and it
/// carries the enforcement report.
pub fn assert_ran_to(r: &Value, code: i32) {
    let tail = format!("[exit code: {code}]");
    assert!(
        r["content"].as_str().is_some_and(|c| c.ends_with(&tail)),
        "{r}"
    );
    assert!(r["enforcement"]["layers"].is_array(), "{r}");
}
