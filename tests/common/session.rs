//! A `sbx serve` session run as the scratch's user, called with JSON lines.
use super::Scratch;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdout, Stdio};

/// One `sbx serve` session.
pub struct Session {
    pub child: Child,
    out: BufReader<ChildStdout>,
}

impl Session {
    /// A session in `s`'s workspace whose policy allows `allow`.
    pub fn start(s: &Scratch, allow: &str) -> Self {
        Self::start_with(s, &[allow], &[])
    }

    /// A session whose policy allows each of `allow`, with more arguments to `sbx serve`.
    pub fn start_with(s: &Scratch, allow: &[&str], extra: &[&std::ffi::OsStr]) -> Self {
        let policy = s.write_profile("policy", &format!("[policy]\nallow = {allow:?}\n"));
        let mut cmd = s.sbx(&["serve", "--workspace"]);
        cmd.arg(&s.ws).arg("--policy").arg(&policy).args(extra);
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let mut me = Self { child, out };
        assert_eq!(me.next()["type"], "ready");
        me
    }

    pub fn next(&mut self) -> Value {
        let mut line = String::new();
        assert!(self.out.read_line(&mut line).unwrap() > 0, "serve ended");
        serde_json::from_str(&line).unwrap()
    }

    /// Send one request line.
    pub fn send(&mut self, request: &Value) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{request}").unwrap();
        stdin.flush().unwrap();
    }

    /// Every event until sbx closes its stdout.
    pub fn rest(&mut self) -> Vec<Value> {
        let mut out = Vec::new();
        let mut line = String::new();
        while self.out.read_line(&mut line).unwrap() > 0 {
            out.push(serde_json::from_str(&line).unwrap());
            line.clear();
        }
        out
    }

    /// The content of the call's result, which must not be an error.
    pub fn call(&mut self, id: &str, command: &str) -> String {
        let (content, ev) = self.call_result(id, command);
        assert_eq!(ev["is_error"], false, "{ev}");
        content
    }

    /// The content of the call's result, and the result.
    pub fn call_result(&mut self, id: &str, command: &str) -> (String, Value) {
        let call = json!({"type": "call", "id": id, "tool": "bash", "input": {"command": command}});
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{call}").unwrap();
        stdin.flush().unwrap();
        loop {
            let ev = self.next();
            if ev["type"] == "result" && ev["id"] == id {
                let content = ev["content"].as_str().unwrap_or_default().to_string();
                return (content, ev);
            }
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// The pids of the spare inits sbx process `pid` holds (cloned by its `sbx-spares` thread).
pub fn spares_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(p) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
        let Some((name, rest)) = stat.split_once(") ") else {
            continue;
        };
        let ppid = rest.split(' ').nth(1).and_then(|x| x.parse::<u32>().ok());
        if name.ends_with("(sbx-spares") && ppid == Some(pid) {
            out.push(p);
        }
    }
    out
}

/// Poll `f` until it holds, for at most thirty seconds (a spare is made on a thread of its
/// own after a call has started).
pub fn eventually(f: impl Fn() -> bool) -> bool {
    let end = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::time::Instant::now() < end {
        if f() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    f()
}
