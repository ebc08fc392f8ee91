//! `sbx serve` background jobs end to end: a `run_in_background` call answers at once with a
//! job id, the job tools read, list and kill it, and the job stays in the sandbox and dies
//! with its session. No assertion depends on timing: ordering is shown by marker files.
#[path = "serve_common/mod.rs"]
mod serve_common;

use serde_json::{Value, json};
use serve_common::{Server, assert_ran_to, call};
use std::path::Path;
use std::time::Duration;

/// A process that survives a kill would write its marker this long after starting.
const SURVIVOR_DELAY: &str = "3";

fn background(id: &str, command: &str) -> Value {
    let mut c = call(id, command);
    c["input"]["run_in_background"] = json!(true);
    c
}

fn job_call(id: &str, tool: &str, input: Value, session: &str) -> Value {
    json!({"type": "call", "id": id, "tool": tool, "input": input, "session": session, "agent": "a1"})
}

/// The result of call `id`, approving it once if the policy asks.
fn settle(s: &mut Server, id: &str) -> Value {
    loop {
        let v = s.next();
        if v["id"] != id {
            continue;
        }
        if v["type"] == "approval_request" {
            s.send(json!({"type": "approval", "id": id, "answer": "allow-once"}));
        }
        if v["type"] == "result" {
            return v;
        }
    }
}

/// Start `command` as a background job and return its id.
fn start(s: &mut Server, id: &str, command: &str) -> String {
    s.send(background(id, command));
    let r = settle(s, id);
    assert_eq!(r["is_error"], false, "{r}");
    assert_eq!(r["exit_code"], Value::Null, "{r}");
    let job = r["job_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no job id: {r}"))
        .to_string();
    assert_eq!(
        r["content"],
        format!(
            "started job {job} in the background; read its output with job_output, \
             stop it with job_kill"
        )
    );
    job
}

/// The text of a job tool result without its closing status line.
fn body(r: &Value) -> String {
    let c = r["content"].as_str().unwrap_or_default();
    c.rsplit_once('\n')
        .map(|(b, _)| format!("{b}\n"))
        .unwrap_or_default()
}

/// Read job `job` (waiting for each change) until `done` holds for the accumulated output
/// and the last result; returns both.
fn read_until(s: &mut Server, job: &str, done: impl Fn(&str, &Value) -> bool) -> (String, Value) {
    let mut text = String::new();
    for n in 0..60 {
        let id = format!("read-{job}-{n}");
        s.send(job_call(
            &id,
            "job_output",
            json!({"job_id": job, "wait_ms": 10000}),
            "s1",
        ));
        let r = settle(s, &id);
        assert_eq!(r["is_error"], false, "{r}");
        assert_eq!(r["job_id"], job, "{r}");
        text.push_str(&body(&r));
        if done(&text, &r) {
            return (text, r);
        }
    }
    panic!("job {job} never got there; output so far: {text:?}");
}

fn ended(_: &str, r: &Value) -> bool {
    r["job_status"]["state"] != "running"
}

#[test]
fn a_background_job_answers_at_once_and_its_output_waits_for_job_output() {
    let mut s = Server::start(&[]);
    let go = s.ws.path().join("go");
    // The job cannot finish before the test creates `go`, which it does only after the
    // result of the starting call has arrived.
    let job = start(
        &mut s,
        "bg",
        "echo first; while [ ! -e go ]; do sleep 0.05; done; echo second; echo oops >&2; exit 3",
    );
    assert_eq!(job, "job-1");
    let (text, r) = read_until(&mut s, &job, |t, _| t.contains("first"));
    assert_eq!(text, "first\n");
    assert_eq!(r["job_status"], json!({"state": "running"}), "{r}");
    assert!(
        r["content"]
            .as_str()
            .is_some_and(|c| c.ends_with("\n[still running]")),
        "{r}"
    );
    assert_eq!(r["exit_code"], Value::Null);

    s.send(job_call("list", "job_list", json!({}), "s1"));
    let r = settle(&mut s, "list");
    assert_eq!(r["jobs"][0]["job_id"], "job-1", "{r}");
    assert_eq!(r["jobs"][0]["status"]["state"], "running", "{r}");

    std::fs::write(&go, "").unwrap_or_else(|e| panic!("{e}"));
    let (text, r) = read_until(&mut s, &job, ended);
    assert_eq!(text, "second\noops\n");
    assert_eq!(r["job_status"], json!({"state": "exited", "exit_code": 3}));
    assert_eq!(r["exit_code"], 3);
    assert_ran_to(&r, 3);
    // Nothing was streamed as output of the starting call.
    assert!(
        !s.seen
            .iter()
            .any(|v| v["id"] == "bg" && (v["type"] == "stdout" || v["type"] == "stderr")),
        "background output was streamed"
    );

    // Read again: nothing new, still ended.
    s.send(job_call(
        "again",
        "job_output",
        json!({"job_id": job}),
        "s1",
    ));
    let r = settle(&mut s, "again");
    assert_eq!(r["content"], "[exit code: 3]");
}

fn survivor_marker(s: &Server, name: &str) -> std::path::PathBuf {
    s.ws.path().join(name)
}

fn assert_no_survivor(marker: &Path) {
    std::thread::sleep(Duration::from_secs(4));
    assert!(
        !marker.exists(),
        "a process of the killed job survived: {}",
        marker.display()
    );
}

#[test]
fn job_kill_kills_the_whole_tree_including_a_new_session() {
    let mut s = Server::start(&[]);
    // Paired: a setsid'd process in a job can write its marker when nothing kills it.
    let ok = survivor_marker(&s, "written");
    let job = start(
        &mut s,
        "pair",
        &format!("setsid -w sh -c 'echo alive > {}'", ok.display()),
    );
    let (_, r) = read_until(&mut s, &job, ended);
    assert_eq!(r["exit_code"], 0, "{r}");
    assert!(ok.exists(), "the paired job could not write its marker");

    let marker = survivor_marker(&s, "survivor");
    let job = start(
        &mut s,
        "tree",
        &format!(
            "setsid sh -c 'sleep {SURVIVOR_DELAY}; echo alive > {}' & echo started; sleep 1000",
            marker.display()
        ),
    );
    read_until(&mut s, &job, |t, _| t.contains("started"));
    s.send(job_call("kill", "job_kill", json!({"job_id": job}), "s1"));
    let r = settle(&mut s, "kill");
    assert_eq!(r["is_error"], false, "{r}");
    assert_eq!(r["job_status"]["state"], "killed", "{r}");
    let code = 128 + r["signal"].as_i64().unwrap_or(0);
    assert_eq!(
        r["content"],
        format!("killed job {job}\n[exit code: {code}]"),
        "{r}"
    );
    s.send(job_call("kill2", "job_kill", json!({"job_id": job}), "s1"));
    let r = settle(&mut s, "kill2");
    assert_eq!(
        r["content"],
        format!("job {job} had already ended\n[exit code: {code}]")
    );
    assert_no_survivor(&marker);
}

#[test]
fn a_cancel_request_with_a_job_id_kills_the_job() {
    let mut s = Server::start(&[]);
    let job = start(&mut s, "bg", "echo started; sleep 1000");
    read_until(&mut s, &job, |t, _| t.contains("started"));
    s.send(json!({"type": "cancel", "id": job}));
    let (_, r) = read_until(&mut s, &job, ended);
    assert_eq!(r["job_status"]["state"], "killed", "{r}");
}

#[test]
fn closing_stdin_kills_every_background_job() {
    let mut s = Server::start(&[]);
    let marker = survivor_marker(&s, "survivor");
    let job = start(
        &mut s,
        "bg",
        &format!(
            "(sleep {SURVIVOR_DELAY}; echo alive > '{}') & setsid sh -c 'sleep {SURVIVOR_DELAY}; echo alive >> {}' & echo go; sleep 1000",
            marker.display(),
            marker.display()
        ),
    );
    read_until(&mut s, &job, |t, _| t.contains("go"));
    drop(s.stdin.take());
    let status = s.child.wait().unwrap_or_else(|e| panic!("{e}"));
    assert!(status.success(), "{status:?}");
    assert_no_survivor(&marker);
}

#[test]
fn a_background_job_still_times_out() {
    let mut s = Server::start(&[]);
    let mut c = background("bg", "sleep 1000");
    c["input"]["timeout_ms"] = json!(300);
    s.send(c);
    let r = settle(&mut s, "bg");
    let job = r["job_id"].as_str().unwrap_or_default().to_string();
    let (_, r) = read_until(&mut s, &job, ended);
    assert_eq!(r["job_status"], json!({"state": "timed_out"}), "{r}");
    assert_eq!(r["exit_code"], 124);
    // The job's stderr ends with the limit it ran into, as `sbx run` prints it.
    assert_eq!(
        r["content"],
        "sbx: limit reached: timeout: the run exceeded its timeout of 0.3 s\n[exit code: 124]"
    );
}

#[test]
fn a_background_job_cannot_write_outside_the_workspace() {
    let outside =
        tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap_or_else(|e| panic!("{e}"));
    let mut s = Server::start(&[]);
    let blocked = outside.path().join("escaped");
    // Out of a command substitution: a target the gate can read is denied by the plan before anything
    // runs; this one is left for the kernel.
    let job = start(
        &mut s,
        "out",
        &format!("T=$(printf %s '{}'); echo no > \"$T\"", blocked.display()),
    );
    let (_, r) = read_until(&mut s, &job, ended);
    assert_ne!(r["exit_code"], 0, "{r}");
    assert!(
        !blocked.exists(),
        "a background job wrote outside the workspace"
    );
    // Paired: the same write inside the workspace succeeds.
    let allowed = s.ws.path().join("inside");
    let job = start(&mut s, "in", &format!("echo yes > '{}'", allowed.display()));
    let (_, r) = read_until(&mut s, &job, ended);
    assert_eq!(r["exit_code"], 0, "{r}");
    assert_eq!(
        std::fs::read_to_string(&allowed).unwrap_or_default(),
        "yes\n"
    );
}

#[test]
fn job_tools_refuse_unknown_ids_bad_input_and_other_sessions_jobs() {
    let mut s = Server::start(&[]);
    let error = |s: &mut Server, id: &str, tool: &str, input: Value, session: &str| {
        s.send(job_call(id, tool, input, session));
        let r = settle(s, id);
        assert_eq!(r["is_error"], true, "{r}");
        r["content"].as_str().unwrap_or_default().to_string()
    };
    let unknown = "error: no background job `job-42` in this session";
    assert_eq!(
        error(&mut s, "1", "job_output", json!({"job_id": "job-42"}), "s1"),
        unknown
    );
    assert_eq!(
        error(&mut s, "2", "job_kill", json!({"job_id": "job-42"}), "s1"),
        unknown
    );
    let bad = error(&mut s, "3", "job_output", json!({"job": "job-1"}), "s1");
    assert!(
        bad.starts_with("error: invalid input for job_output"),
        "{bad}"
    );

    // A job of agent session s1 is unknown to session s2.
    let job = start(&mut s, "bg", "echo started; sleep 1000");
    assert_eq!(
        error(&mut s, "4", "job_kill", json!({"job_id": job}), "s2"),
        format!("error: no background job `{job}` in this session")
    );
    s.send(job_call("5", "job_list", json!({}), "s2"));
    let r = settle(&mut s, "5");
    assert_eq!(r["jobs"], json!([]), "{r}");
    assert_eq!(r["content"], "no background jobs");
    // The session goes on, and the job is still there for s1.
    let (text, _) = read_until(&mut s, &job, |t, _| t.contains("started"));
    assert_eq!(text, "started\n");
}

#[test]
fn a_session_runs_at_most_sixteen_jobs_at_once() {
    let mut s = Server::start(&[]);
    let mut jobs = Vec::new();
    for n in 0..16 {
        jobs.push(start(&mut s, &format!("j{n}"), "sleep 1000"));
    }
    s.send(background("j16", "sleep 1000"));
    let r = settle(&mut s, "j16");
    assert_eq!(r["is_error"], true, "{r}");
    assert_eq!(r["job_id"], Value::Null, "{r}");
    assert!(
        r["content"]
            .as_str()
            .is_some_and(|c| c.contains("16 background jobs are already running")),
        "{r}"
    );
    // Paired: once one ends, the same start is accepted.
    s.send(job_call("k", "job_kill", json!({"job_id": jobs[0]}), "s1"));
    let r = settle(&mut s, "k");
    assert_eq!(r["is_error"], false, "{r}");
    assert_ne!(r["job_status"]["state"], "running", "{r}");
    let again = start(&mut s, "j17", "sleep 1000");
    assert_eq!(again, "job-17");
}

#[test]
fn a_job_the_sandbox_cannot_start_is_an_error_result_not_a_started_job() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let profile = |name: &str, path: &str| {
        let p = dir.path().join(name);
        let text = format!("extends = \"workspace\"\n[filesystem]\nread = [\"{path}\"]\n");
        std::fs::write(&p, text).unwrap_or_else(|e| panic!("{e}"));
        p.display().to_string()
    };
    let missing = "/nonexistent-sbx-required-path";
    // Paired: the same path marked optional starts.
    let good = profile("good.toml", &format!("?{missing}"));
    let mut s = Server::start(&["--profile", &good]);
    let job = start(&mut s, "ok", "true");
    assert_eq!(job, "job-1");

    let bad = profile("bad.toml", missing);
    let mut s = Server::start(&["--profile", &bad]);
    s.send(background("bg", "true"));
    let r = settle(&mut s, "bg");
    assert_eq!(r["is_error"], true, "{r}");
    assert_eq!(r["job_id"], Value::Null, "{r}");
    let content = r["content"].as_str().unwrap_or_default();
    assert!(
        content.contains("cannot start the job") && content.contains(missing),
        "{r}"
    );
}
