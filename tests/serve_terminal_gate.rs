//! Only `terminal_open` opens a terminal, and always on the shell the gate decided (`bash -i`):
//! a `Bash` call carrying a `terminal` object, or a `terminal_open` naming its own `command`
//! (`git log`, allowed as a one-shot call, whose pager runs `!command`), opens none. Paired
//! with `terminal_open` allowed by policy, which opens one.
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

/// Send the calls to a fresh `sbx serve` and return the `result` event of each, in order.
fn serve_results(calls: &[Value], args: &[&str]) -> Vec<Value> {
    let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_sbx"))
        .args(["serve", "--workspace"])
        .arg(ws.path())
        .args(args)
        .env("HOME", home.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut input = child.stdin.take().unwrap_or_else(|| panic!("stdin"));
    let mut lines = BufReader::new(child.stdout.take().unwrap_or_else(|| panic!("stdout"))).lines();
    let mut results = Vec::new();
    for call in calls {
        writeln!(input, "{call}").unwrap_or_else(|e| panic!("{e}"));
        input.flush().unwrap_or_else(|e| panic!("{e}"));
        loop {
            let line = lines
                .next()
                .unwrap_or_else(|| panic!("serve ended"))
                .unwrap_or_else(|e| panic!("{e}"));
            let ev: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}"));
            if ev["type"] == "approval_request" {
                let deny = json!({"type": "approval", "id": ev["id"], "answer": "deny"});
                writeln!(input, "{deny}").unwrap_or_else(|e| panic!("{e}"));
                input.flush().unwrap_or_else(|e| panic!("{e}"));
            }
            if ev["type"] == "result" && ev["id"] == call["id"] {
                results.push(ev);
                break;
            }
        }
    }
    drop(input);
    let _ = child.wait();
    results
}

fn call(id: &str, tool: &str, input: Value) -> Value {
    json!({"type": "call", "id": id, "tool": tool, "input": input, "session": "s", "agent": "a"})
}

fn opened_terminal(r: &Value) -> bool {
    r["job_id"].as_str().is_some_and(|j| j.starts_with("term-"))
}

#[test]
fn a_bash_call_with_a_terminal_object_does_not_open_a_terminal() {
    let r = serve_results(
        &[
            // The user refuses the shell when asked.
            call("1", "terminal_open", json!({})),
            call(
                "2",
                "Bash",
                json!({"command": "git log", "terminal": {"rows": 10, "cols": 80}}),
            ),
        ],
        &[],
    );
    assert_eq!(r[0]["decision"], "deny", "{}", r[0]);
    assert!(!opened_terminal(&r[0]), "{}", r[0]);
    assert!(
        !opened_terminal(&r[1]),
        "a Bash call decided as a one-shot `git log` opened a terminal: {}",
        r[1]
    );
}

/// The twin: a terminal the policy allows is opened by terminal_open, so the check above can
/// tell an opened terminal from none.
#[test]
fn terminal_open_allowed_by_policy_opens_a_terminal() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let policy = dir.path().join("policy.toml");
    std::fs::write(&policy, "[policy]\nallow = [\"Bash(bash -i)\"]\n")
        .unwrap_or_else(|e| panic!("{e}"));
    let p = policy.to_string_lossy().into_owned();
    let r = serve_results(
        &[
            call("1", "terminal_open", json!({})),
            call("2", "Bash", json!({"command": "git log"})),
        ],
        &["--policy", &p],
    );
    assert!(opened_terminal(&r[0]), "{}", r[0]);
    assert!(!opened_terminal(&r[1]), "{}", r[1]);
}

/// `terminal_open` copies every input key over the call it decides, `command` included: the
/// shell the user refused as `bash -i` opens as an allowed `git log` (its pager runs
/// `!command`). `sbx mcp` forwards the model's `terminal_open` arguments unchanged, so the
/// model can do this itself.
#[test]
fn terminal_open_cannot_name_its_own_command() {
    let r = serve_results(
        &[
            call("1", "terminal_open", json!({})),
            call(
                "2",
                "terminal_open",
                json!({"command": "git log", "rows": 10, "cols": 80}),
            ),
        ],
        &[],
    );
    assert_eq!(r[0]["decision"], "deny", "{}", r[0]);
    assert!(
        !opened_terminal(&r[1]),
        "terminal_open with a `command` of its own opened a terminal: {}",
        r[1]
    );
}
