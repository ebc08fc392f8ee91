//! What the gate's end-to-end tests share: `sbx check --json` and `sbx hook claude-code` run
//! on the scratch workspace for their JSON answer, and a command's standard error as text.
#![allow(dead_code, clippy::unwrap_used)]

use super::common::{Scratch, stdout, text};
use serde_json::{Value, json};
use std::io::Write;
use std::process::{Output, Stdio};

pub fn check_json(s: &Scratch, args: &[&str]) -> Value {
    let mut all = vec!["check", "--json"];
    all.extend_from_slice(args);
    let o = s.sbx(&all).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

pub fn hook(s: &Scratch, args: &[&str], tool: &str, input: Value) -> Value {
    let event = json!({
        "session_id": "s1", "transcript_path": "/nonexistent/t.jsonl", "cwd": s.ws,
        "permission_mode": "default", "hook_event_name": "PreToolUse",
        "tool_name": tool, "tool_input": input, "tool_use_id": "t1",
    });
    let mut all = vec!["hook", "claude-code"];
    all.extend_from_slice(args);
    let mut child = s
        .sbx(&all)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(event.to_string().as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    serde_json::from_str::<Value>(&stdout(&o)).unwrap()["hookSpecificOutput"].clone()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
