//! `sbx serve` end to end: a transcript with allowed, asked, denied, cancelled and
//! timed-out calls, malformed and oversized lines, and stdin closing mid-run.
#[path = "serve_common/mod.rs"]
mod serve_common;

use serde_json::{Value, json};
use serve_common::{Server, assert_ran_to, call, types};
use std::time::{Duration, Instant};

#[test]
fn transcript() {
    let mut s = Server::start(&["--approval-timeout", "2", "--max-line-bytes", "4096"]);

    // Allowed: decision, output, result.
    s.send(call("a", "echo hello; echo oops >&2; exit 3"));
    let (evs, r) = s.result_of("a");
    assert_eq!(evs[0]["type"], "decision");
    assert_eq!(evs[0]["decision"], "allow");
    assert_eq!(evs[0]["rule"], "Bash(echo *)");
    assert!(
        evs[0]["source"]
            .as_str()
            .is_some_and(|x| x.contains("policy.toml")),
        "{}",
        evs[0]
    );
    let out: String = evs
        .iter()
        .filter(|v| v["type"] == "stdout")
        .filter_map(|v| v["data"].as_str())
        .collect();
    let err: String = evs
        .iter()
        .filter(|v| v["type"] == "stderr")
        .filter_map(|v| v["data"].as_str())
        .collect();
    assert_eq!(out, "hello\n");
    assert_eq!(err, "oops\n");
    assert_eq!(r["decision"], "allow");
    assert_eq!(r["exit_code"], 3);
    assert_eq!(r["is_error"], true);
    assert_ran_to(&r, 3);

    // Asked and approved once: the command runs, in the workspace.
    s.send(call("b", "touch approved.txt"));
    let evs = s.until(|v| v["type"] == "approval_request");
    let d = evs
        .iter()
        .find(|v| v["type"] == "decision" && v["id"] == "b")
        .cloned()
        .unwrap_or_default();
    assert_eq!(d["decision"], "ask", "{d}");
    let req = evs.last().cloned().unwrap_or_default();
    assert_eq!(req["id"], "b");
    assert_eq!(req["rule"], "Bash(touch *)");
    assert_eq!(req["timeout_ms"], 2000);
    s.send(json!({"type": "approval", "id": "b", "answer": "allow-once"}));
    let (_, r) = s.result_of("b");
    assert_eq!(r["decision"], "allow", "{r}");
    assert_eq!(r["exit_code"], 0, "{r}");
    assert!(s.ws.path().join("approved.txt").exists());

    // Denied by rule: no process, an error result.
    s.send(call("c", "rm -rf /"));
    let (evs, r) = s.result_of("c");
    assert_eq!(types(&evs), vec!["decision"]);
    assert_eq!(evs[0]["decision"], "deny");
    assert_eq!(r["decision"], "deny");
    assert_eq!(r["is_error"], true);
    assert_eq!(r["exit_code"], Value::Null);
    assert!(
        r["content"]
            .as_str()
            .is_some_and(|c| c.starts_with("denied: ")),
        "{r}"
    );

    // Malformed and oversized lines: error events, and the session goes on.
    s.send_raw(b"{not json\n");
    let e = s.until(|v| v["type"] == "error").pop().unwrap_or_default();
    assert!(
        e["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("malformed request")),
        "{e}"
    );
    s.send(json!({"type": "call", "id": "x", "tool": "bash", "input": {}, "bogus": 1}));
    let e = s.until(|v| v["type"] == "error").pop().unwrap_or_default();
    assert_eq!(
        e["id"], "x",
        "the id of a bad request is echoed when readable"
    );
    let mut big = vec![b'x'; 1024 * 1024];
    big.push(b'\n');
    s.send_raw(&big);
    let e = s.until(|v| v["type"] == "error").pop().unwrap_or_default();
    assert_eq!(
        e["message"],
        "request line of 1048576 bytes refused: the limit is 4096 bytes"
    );

    // Unanswered approval: denied after the timeout.
    s.send(call("t", "touch never.txt"));
    let (_, r) = s.result_of("t");
    assert_eq!(r["decision"], "deny");
    assert!(
        r["reason"]
            .as_str()
            .is_some_and(|x| x.contains("no answer within 2000 ms")),
        "{r}"
    );
    assert!(!s.ws.path().join("never.txt").exists());

    // Cancel a running call: it ends promptly with a signal.
    s.send(call("d", "echo started; sleep 30"));
    s.until(|v| v["type"] == "stdout" && v["id"] == "d");
    let t = Instant::now();
    s.send(json!({"type": "cancel", "id": "d"}));
    let (_, r) = s.result_of("d");
    assert!(
        t.elapsed() < Duration::from_secs(15),
        "cancel took {:?}",
        t.elapsed()
    );
    assert_ne!(r["exit_code"], 0, "{r}");

    // Unknown id for cancel and approval: error events.
    s.send(json!({"type": "cancel", "id": "nope"}));
    let e = s.until(|v| v["type"] == "error").pop().unwrap_or_default();
    assert_eq!(
        e,
        json!({"type": "error", "id": "nope", "message": "no call in flight or job with this id"})
    );

    // Concurrent calls: the short one finishes while the long one runs.
    s.send(call("long", "echo long; sleep 30"));
    s.until(|v| v["type"] == "stdout" && v["id"] == "long");
    s.send(call("short", "printf done"));
    let (_, r) = s.result_of("short");
    assert_eq!(r["exit_code"], 0);

    // Closing stdin ends the long call and the server.
    let t = Instant::now();
    drop(s.stdin.take());
    let (_, r) = s.result_of("long");
    assert_ne!(r["exit_code"], 0, "{r}");
    let status = s.child.wait().unwrap_or_else(|e| panic!("{e}"));
    assert!(status.success(), "{status:?}");
    assert!(
        t.elapsed() < Duration::from_secs(15),
        "shutdown took {:?}",
        t.elapsed()
    );
}

#[test]
fn closing_stdin_kills_the_process_tree() {
    let mut s = Server::start(&[]);
    let marker = s.ws.path().join("survivor");
    // A background child that would write the marker after 3 s if it survived.
    s.send(call(
        "bg",
        &format!(
            "echo go; (sleep 3; echo alive > '{}') & sleep 30",
            marker.display()
        ),
    ));
    s.until(|v| v["type"] == "stdout" && v["id"] == "bg");
    drop(s.stdin.take());
    let (_, r) = s.result_of("bg");
    assert_eq!(r["type"], "result");
    let status = s.child.wait().unwrap_or_else(|e| panic!("{e}"));
    assert!(status.success());
    std::thread::sleep(Duration::from_secs(4));
    assert!(!marker.exists(), "a process of the cancelled call survived");
}

#[test]
fn allow_for_session_is_remembered_for_that_session_only() {
    // No rule matches `mkdir`: the default is ask, which a session grant settles.
    let mut s = Server::start(&[]);
    s.send(call("1", "mkdir -p sub"));
    s.until(|v| v["type"] == "approval_request");
    s.send(json!({"type": "approval", "id": "1", "answer": "allow-for-session"}));
    let (_, r) = s.result_of("1");
    assert_eq!(r["decision"], "allow", "{r}");
    assert_eq!(r["exit_code"], 0, "{r}");
    s.send(call("2", "mkdir -p sub"));
    let (evs, r) = s.result_of("2");
    assert!(
        !types(&evs).contains(&"approval_request".to_string()),
        "{evs:?}"
    );
    assert_eq!(evs[0]["decision"], "allow", "{evs:?}");
    assert_eq!(evs[0]["stage"], "session-grant", "{evs:?}");
    assert_eq!(r["decision"], "allow", "{r}");
    let mut other = call("3", "mkdir -p sub");
    other["session"] = json!("s2");
    s.send(other);
    s.until(|v| v["type"] == "approval_request" && v["id"] == "3");
    s.send(json!({"type": "approval", "id": "3", "answer": "deny", "reason": "not now"}));
    let (_, r) = s.result_of("3");
    assert_eq!(r["decision"], "deny");
    assert_eq!(r["reason"], "not now");
}

/// A served tool's input that does not fit its schema (a size past the bound, a timeout of the
/// wrong type, an unknown field, a `workdir` outside the workspace) is refused before anything
/// runs; the same calls with fitting inputs run.
#[test]
fn inputs_that_do_not_fit_the_tool_are_refused() {
    let mut s = Server::start(&[]);
    std::fs::create_dir(s.ws.path().join("sub")).unwrap_or_else(|e| panic!("{e}"));
    let refused = [
        json!({"tool": "terminal_open", "input": {"rows": 65535, "cols": 65535}}),
        json!({"tool": "terminal_open", "input": {"rows": 0}}),
        json!({"tool": "terminal_resize", "input": {"terminal_id": "term-1", "rows": 30, "cols": 100000}}),
        json!({"tool": "bash", "input": {"command": "pwd", "timeout_ms": "9000"}}),
        json!({"tool": "bash", "input": {"command": "pwd", "timeout_ms": -5}}),
        json!({"tool": "bash", "input": {"command": "pwd", "run_in_background": "yes"}}),
        json!({"tool": "bash", "input": {"command": "pwd", "extra": 1}}),
        json!({"tool": "bash", "input": {"command": "pwd", "workdir": "/etc"}}),
        json!({"tool": "bash", "input": {"command": "pwd", "workdir": "../.."}}),
        json!({"tool": "bash", "input": {"command": "pwd", "workdir": "missing"}}),
    ];
    for (i, c) in refused.iter().enumerate() {
        let id = format!("r{i}");
        let mut req = c.clone();
        req["type"] = "call".into();
        req["id"] = id.clone().into();
        s.send(req);
        let (evs, r) = s.result_of(&id);
        assert_eq!(types(&evs), ["decision"], "{c}: {evs:?}");
        assert_eq!(r["decision"], "deny", "{c}: {r}");
        assert_eq!(r["is_error"], true, "{c}: {r}");
        assert!(
            r["content"]
                .as_str()
                .is_some_and(|t| t.contains("invalid input")),
            "{c}: {r}"
        );
    }
    // The fitting twins run.
    let mut ok = call("w", "pwd");
    ok["input"]["workdir"] = "sub".into();
    ok["input"]["timeout_ms"] = 9000.into();
    s.send(ok);
    let (evs, r) = s.result_of("w");
    assert_ran_to(&r, 0);
    let out: String = evs.iter().filter_map(|v| v["data"].as_str()).collect();
    assert!(out.trim_end().ends_with("/sub"), "{out}");
    // Terminals of fitting sizes open and resize in tests/serve_terminals.rs.
}

/// A command longer than the kernel takes in one argument (`bash -c` gets it whole), once
/// approved, fails to execute, and the result says why instead of a bare exit 126.
#[test]
fn an_approved_command_too_long_to_execute_says_why() {
    let mut s = Server::start(&["--approval-timeout", "20"]);
    let long = format!("echo {}", "a".repeat(140 * 1024));
    s.send(call("long", &long));
    s.until(|v| v["type"] == "approval_request");
    s.send(json!({"type": "approval", "id": "long", "answer": "allow-once"}));
    let (_, r) = s.result_of("long");
    assert_eq!(r["exit_code"], 126, "{r}");
    let content = r["content"].as_str().unwrap_or_default();
    assert!(
        content
            .contains("Argument list too long: the kernel takes at most 128 KiB in one argument"),
        "{content}"
    );
    // Paired: the same command under the limit runs.
    s.send(call("short", &format!("echo {}", "a".repeat(100 * 1024))));
    s.until(|v| v["type"] == "approval_request" || (v["type"] == "result" && v["id"] == "short"));
    if s.seen
        .last()
        .is_some_and(|v| v["type"] == "approval_request")
    {
        s.send(json!({"type": "approval", "id": "short", "answer": "allow-once"}));
    }
    let (_, r) = s.result_of("short");
    assert_eq!(r["exit_code"], 0, "{r}");
}
