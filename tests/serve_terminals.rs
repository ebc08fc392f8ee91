//! `sbx serve` terminals end to end: a shell on a pseudo-terminal inside the sandbox keeps its
//! directory and variables across sends, answers prompts, takes a size and signals, is refused
//! writes outside the workspace (while the same write inside succeeds), is invisible to any
//! other owner, and leaves nothing behind when closed or when the session ends. No assertion
//! depends on timing: reads wait for marker text that only the shell's output contains.
#[path = "common/mod.rs"]
mod common;
#[path = "serve_common/mod.rs"]
mod serve_common;

use serde_json::{Value, json};
use serve_common::Server;

fn term_call(id: &str, tool: &str, input: Value, session: &str, agent: &str) -> Value {
    json!({"type": "call", "id": id, "tool": tool, "input": input, "session": session, "agent": agent})
}

/// The result of call `id`, answering an approval request with `answer`.
fn settle(s: &mut Server, id: &str, answer: &str) -> Value {
    loop {
        let v = s.next();
        if v["id"] != id {
            continue;
        }
        if v["type"] == "approval_request" {
            s.send(json!({"type": "approval", "id": id, "answer": answer}));
        }
        if v["type"] == "result" {
            return v;
        }
    }
}

/// Open a terminal for session s1 / agent a1 (approving the shell) and return its id.
fn open(s: &mut Server, id: &str) -> String {
    s.send(term_call(
        id,
        "terminal_open",
        json!({"rows": 30, "cols": 100}),
        "s1",
        "a1",
    ));
    let r = settle(s, id, "allow-once");
    assert_eq!(r["is_error"], false, "{r}");
    let t = r["job_id"]
        .as_str()
        .filter(|t| t.starts_with("term-"))
        .unwrap_or_else(|| panic!("no terminal id: {r}"))
        .to_string();
    // As a person at a terminal does, type once the shell has shown its first output (its
    // prompt): keys sent while it starts may meet a line discipline it has not set up yet.
    let mut first = String::new();
    for n in 0..30 {
        let input = json!({"terminal_id": t, "wait_ms": 20000});
        let r = tool(s, &format!("{id}-ready-{n}"), "terminal_read", input);
        first.push_str(r["content"].as_str().unwrap_or_default());
        if !first.is_empty() {
            return t;
        }
    }
    panic!("the shell printed nothing: {first}")
}

fn tool(s: &mut Server, id: &str, name: &str, input: Value) -> Value {
    s.send(term_call(id, name, input, "s1", "a1"));
    settle(s, id, "deny")
}

/// Type `line` and press enter.
fn type_line(s: &mut Server, t: &str, id: &str, line: &str) {
    let r = tool(
        s,
        id,
        "terminal_send",
        json!({"terminal_id": t, "text": line, "keys": ["enter"]}),
    );
    assert_eq!(r["is_error"], false, "{r}");
}

/// Read until the output holds `marker`; everything read on the way.
fn read_until(s: &mut Server, t: &str, id: &str, marker: &str) -> String {
    let mut seen = String::new();
    for n in 0..30 {
        let input = json!({"terminal_id": t, "wait_ms": 20000, "until": marker});
        let r = tool(s, &format!("{id}-{n}"), "terminal_read", input);
        assert_eq!(r["is_error"], false, "{r}");
        seen.push_str(r["content"].as_str().unwrap_or_default());
        if seen.contains(marker) {
            return seen;
        }
        assert_eq!(
            r["job_status"]["state"], "running",
            "the shell ended: {seen}"
        );
    }
    panic!("`{marker}` never came; read: {seen}");
}

#[test]
fn the_directory_and_variables_persist_across_sends() {
    let mut s = Server::start(&[]);
    let t = open(&mut s, "open");
    let ws = s.ws.path().to_string_lossy().into_owned();
    type_line(
        &mut s,
        &t,
        "s1",
        &format!("cd {ws} && mkdir -p sub && cd sub"),
    );
    type_line(&mut s, &t, "s2", "GREETING=persisted");
    type_line(&mut s, &t, "s3", "echo \"state\"-$GREETING-$(pwd)");
    read_until(&mut s, &t, "r", &format!("state-persisted-{ws}/sub"));
}

#[test]
fn an_interactive_program_answers_a_prompt() {
    let mut s = Server::start(&[]);
    let t = open(&mut s, "open");
    type_line(
        &mut s,
        &t,
        "s1",
        // The prompt's text is not in the echo of the line typed (`$Q`), so that only the
        // prompt itself is waited for.
        "Q=name; read -p \"your $Q? \" N; echo \"hello\"-$N",
    );
    read_until(&mut s, &t, "r1", "your name? ");
    type_line(&mut s, &t, "s2", "terminal-user");
    read_until(&mut s, &t, "r2", "hello-terminal-user");
}

#[test]
fn a_write_outside_the_workspace_fails_inside_the_terminal_and_inside_succeeds() {
    let mut s = Server::start(&[]);
    let t = open(&mut s, "open");
    // Outside the workspace and the profile's private /tmp: the test's own scratch directory.
    let scratch = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let outside = scratch.join(format!("sbx-term-outside-{}", std::process::id()));
    let _ = std::fs::remove_file(&outside);
    let inside = s.ws.path().join("inside.txt");
    type_line(
        &mut s,
        &t,
        "s1",
        &format!(
            "echo x > {}; echo \"outside\"=$?; echo y > {}; echo \"inside\"=$?",
            outside.display(),
            inside.display()
        ),
    );
    let out = read_until(&mut s, &t, "r", "inside=");
    assert!(out.contains("inside=0"), "{out}");
    assert!(!out.contains("outside=0"), "{out}");
    assert!(
        !outside.exists(),
        "the terminal wrote outside the workspace"
    );
    assert_eq!(std::fs::read_to_string(&inside).unwrap_or_default(), "y\n");
}

#[test]
fn another_owner_gets_the_answer_for_an_unknown_id() {
    let mut s = Server::start(&[]);
    let t = open(&mut s, "open");
    let unknown = |s: &mut Server, id: &str, name: &str, session: &str, agent: &str, tid: &str| {
        s.send(term_call(
            id,
            name,
            json!({"terminal_id": tid}),
            session,
            agent,
        ));
        let r = settle(s, id, "deny");
        assert_eq!(r["is_error"], true, "{r}");
        r["content"].as_str().unwrap_or_default().to_string()
    };
    let missing = unknown(&mut s, "u0", "terminal_read", "s1", "a1", "term-999");
    assert_eq!(missing, "error: no terminal `term-999` in this session");
    let expect = format!("error: no terminal `{t}` in this session");
    for (i, (name, session, agent)) in [
        ("terminal_read", "s2", "a1"),
        ("terminal_close", "s2", "a1"),
        ("terminal_read", "s1", "a2"),
        ("terminal_close", "s1", "a2"),
    ]
    .into_iter()
    .enumerate()
    {
        assert_eq!(
            unknown(&mut s, &format!("u{}", i + 1), name, session, agent, &t),
            expect
        );
    }
    s.send(term_call("l2", "terminal_list", json!({}), "s2", "a1"));
    let r = settle(&mut s, "l2", "deny");
    assert_eq!(r["jobs"], json!([]), "{r}");
    // The owner still reaches it: the refusals were about the owner, not the terminal.
    type_line(&mut s, &t, "s1", "echo \"owner\"-reads");
    read_until(&mut s, &t, "r", "owner-reads");
    let r = tool(&mut s, "l1", "terminal_list", json!({}));
    assert_eq!(r["jobs"][0]["job_id"], t.as_str(), "{r}");
}

#[test]
fn resize_and_signal_reach_the_foreground() {
    let mut s = Server::start(&[]);
    let t = open(&mut s, "open");
    let r = tool(
        &mut s,
        "z",
        "terminal_resize",
        json!({"terminal_id": t, "rows": 41, "cols": 133}),
    );
    assert_eq!(r["is_error"], false, "{r}");
    type_line(&mut s, &t, "s1", "echo \"size\"-$(stty size)");
    read_until(&mut s, &t, "r1", "size-41 133");
    // The child prints once it runs, and by then it holds the terminal's foreground.
    type_line(
        &mut s,
        &t,
        "s2",
        "sh -c 'echo \"ready\"-fg; exec sleep 4321'",
    );
    read_until(&mut s, &t, "r2", "ready-fg");
    let r = tool(
        &mut s,
        "sig",
        "terminal_signal",
        json!({"terminal_id": t, "signal": "INT"}),
    );
    assert_eq!(r["is_error"], false, "{r}");
    // The shell is back: the sleep died of SIGINT (128 + 2).
    type_line(&mut s, &t, "s3", "echo \"after\"-$?");
    read_until(&mut s, &t, "r3", "after-130");
}

/// Whether a process with this exact command line runs anywhere on the host.
fn running(cmdline: &str) -> bool {
    std::fs::read_dir("/proc")
        .unwrap_or_else(|e| panic!("{e}"))
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .any(|c| {
            let argv: Vec<&[u8]> = c.split(|b| *b == 0).filter(|a| !a.is_empty()).collect();
            argv.join(&b' ') == cmdline.as_bytes()
        })
}

/// Wait until a process with this command line runs (a backgrounded command execs a moment
/// after the shell has moved on).
fn wait_for(cmdline: &str) {
    for _ in 0..600 {
        if running(cmdline) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("`{cmdline}` did not start");
}

#[test]
fn nothing_survives_close_or_the_session_end() {
    let mut s = Server::start(&[]);
    let tag = std::process::id() % 100_000;
    let (a, b) = (format!("sleep 71{tag:05}"), format!("sleep 72{tag:05}"));
    let t1 = open(&mut s, "o1");
    let t2 = open(&mut s, "o2");
    type_line(
        &mut s,
        &t1,
        "s1",
        &format!("setsid {a} & echo \"started\"-one"),
    );
    read_until(&mut s, &t1, "r1", "started-one");
    type_line(
        &mut s,
        &t2,
        "s2",
        &format!("setsid {b} & echo \"started\"-two"),
    );
    read_until(&mut s, &t2, "r2", "started-two");
    // The backgrounded sleeps exec a moment after the echo: wait until both are there.
    wait_for(&a);
    wait_for(&b);
    let r = tool(&mut s, "c1", "terminal_close", json!({"terminal_id": t1}));
    assert_eq!(r["is_error"], false, "{r}");
    assert!(
        r["content"]
            .as_str()
            .is_some_and(|c| c.contains("[exit code: ")),
        "{r}"
    );
    assert!(!running(&a), "a process outlived terminal_close");
    assert!(running(&b), "closing one terminal touched another");
    let r = tool(
        &mut s,
        "c2",
        "terminal_send",
        json!({"terminal_id": t1, "text": "x"}),
    );
    assert_eq!(r["is_error"], true, "{r}");
    drop(s.stdin.take());
    let status = s.child.wait().unwrap_or_else(|e| panic!("{e}"));
    assert!(status.success(), "{status}");
    assert!(!running(&b), "a process outlived the session");
}

#[test]
fn a_denied_shell_opens_no_terminal() {
    let mut s = Server::start(&[]);
    s.send(term_call("open", "terminal_open", json!({}), "s1", "a1"));
    let r = settle(&mut s, "open", "deny");
    assert_eq!(r["is_error"], true, "{r}");
    assert_eq!(r["decision"], "deny", "{r}");
    let r = tool(&mut s, "l", "terminal_list", json!({}));
    assert_eq!(r["jobs"], json!([]), "{r}");
    // The same call approved opens one.
    let t = open(&mut s, "open2");
    let r = tool(&mut s, "l2", "terminal_list", json!({}));
    assert_eq!(r["jobs"][0]["job_id"], t.as_str(), "{r}");
}

#[test]
fn an_idle_terminal_is_closed_with_its_whole_tree() {
    let mut s = Server::start(&["--terminal-idle", "1"]);
    let tag = std::process::id() % 100_000;
    let daemon = format!("sleep 73{tag:05}");
    let t = open(&mut s, "open");
    type_line(
        &mut s,
        &t,
        "s1",
        &format!("setsid {daemon} & echo \"started\"-idle"),
    );
    read_until(&mut s, &t, "r1", "started-idle");
    wait_for(&daemon);
    // Listing does not count as use: poll until the terminal has been closed for idleness.
    let mut status = Value::Null;
    for n in 0..600 {
        let r = tool(&mut s, &format!("l{n}"), "terminal_list", json!({}));
        status = r["jobs"][0]["status"].clone();
        if status["state"] != "running" {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_ne!(
        status["state"], "running",
        "the idle terminal was not closed"
    );
    assert!(!running(&daemon), "a process outlived the idle terminal");
    // The session goes on: a new terminal works.
    let t2 = open(&mut s, "open2");
    type_line(&mut s, &t2, "s2", "echo \"still\"-here");
    read_until(&mut s, &t2, "r2", "still-here");
}

/// A terminal of `sbx serve` run as `user` (root, and uid 65534 when the tests run as root):
/// a write to the user's own home fails inside the terminal, while the same write as the same
/// user outside the sandbox lands, and a write inside the workspace succeeds in the terminal.
#[test]
fn a_terminal_confines_every_user() {
    use std::io::{BufRead, BufReader, Write};
    for user in common::users() {
        let sc = common::Scratch::new(user);
        eprintln!("terminal confinement as {}", sc.label());
        let policy = sc.write_profile("policy", "[policy]\nallow = [\"Bash(bash -i)\"]\n");
        let ws = sc.ws.to_string_lossy().into_owned();
        let mut child = sc
            .sbx(&[
                "serve",
                "--workspace",
                &ws,
                "--policy",
                &policy.to_string_lossy(),
            ])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"));
        let mut input = child.stdin.take().unwrap_or_else(|| panic!("stdin"));
        let mut lines =
            BufReader::new(child.stdout.take().unwrap_or_else(|| panic!("stdout"))).lines();
        let mut call = |id: &str, tool: &str, args: Value| -> Value {
            let req = json!({"type": "call", "id": id, "tool": tool, "input": args, "session": "s", "agent": "a"});
            writeln!(input, "{req}").unwrap_or_else(|e| panic!("{e}"));
            loop {
                let line = lines
                    .next()
                    .and_then(Result::ok)
                    .unwrap_or_else(|| panic!("server ended"));
                let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}"));
                if v["id"] == id && v["type"] == "result" {
                    return v;
                }
            }
        };
        let r = call("open", "terminal_open", json!({}));
        let t = r["job_id"]
            .as_str()
            .unwrap_or_else(|| panic!("{} {r}", sc.label()))
            .to_string();
        let home = sc.home.join("from-terminal");
        let line = format!(
            "echo x > {}; echo y > inside.txt; echo \"done\"-$?",
            home.display()
        );
        call(
            "send",
            "terminal_send",
            json!({"terminal_id": t, "text": line, "keys": ["enter"]}),
        );
        let mut seen = String::new();
        for n in 0..30 {
            let r = call(
                &format!("r{n}"),
                "terminal_read",
                json!({"terminal_id": t, "wait_ms": 20000, "until": "done-"}),
            );
            seen.push_str(r["content"].as_str().unwrap_or_default());
            if seen.contains("done-") {
                break;
            }
        }
        assert!(seen.contains("done-0"), "{}: {seen}", sc.label());
        assert!(
            !home.exists(),
            "{}: the terminal wrote to the home: {seen}",
            sc.label()
        );
        assert_eq!(
            std::fs::read_to_string(sc.ws.join("inside.txt")).unwrap_or_default(),
            "y\n",
            "{}",
            sc.label()
        );
        let out = sc.outside(&format!("echo x > {}", home.display()));
        assert!(
            out.status.success() && home.exists(),
            "{}: unsandboxed, the write lands",
            sc.label()
        );
        drop(input);
        let status = child.wait().unwrap_or_else(|e| panic!("{e}"));
        assert!(status.success(), "{}: {status}", sc.label());
    }
}

/// A protected path the terminal's shell made is moved to quarantine when the terminal ends,
/// and the close says so, as a job's output does. Paired: a plain file made beside it stays
/// and is not named.
#[test]
fn the_close_names_what_the_terminal_left_in_quarantine() {
    let mut s = Server::start(&[]);
    let t = open(&mut s, "open");
    type_line(
        &mut s,
        &t,
        "s1",
        "echo x > .envrc; echo y > notes.txt; echo \"made\"=$?",
    );
    read_until(&mut s, &t, "r", "made=0");
    let r = tool(&mut s, "c", "terminal_close", json!({"terminal_id": t}));
    let content = r["content"].as_str().unwrap_or_default();
    assert!(
        content.contains("sbx: protected path") && content.contains(".envrc"),
        "{r}"
    );
    assert!(!content.contains("notes.txt"), "{r}");
    assert!(!s.ws.path().join(".envrc").exists());
    assert!(s.ws.path().join("notes.txt").exists());
}
