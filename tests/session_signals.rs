//! `sbx serve` and `sbx mcp` stopped by SIGTERM end the way they end when stdin closes: no
//! further call is read, every call and background job is killed (whole trees), each run's
//! check after it is done (a protected file a background job made in the workspace goes to
//! quarantine), the in-flight call's result is written (event and audit line), the spare
//! sandbox and every cgroup of the session are removed, and sbx exits 143. The twins close
//! stdin instead (status 0), or close it and send SIGTERM at once, as agent hosts do (0 or
//! 143, whichever sbx saw first). Before each end the test sees the job's files in the
//! workspace: what moves them is the check. As root and as uid 65534.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;
use common::session::{Session, eventually, spares_of};
use common::*;
use serde_json::{Value, json};
use std::ffi::{OsStr, OsString};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, ExitStatus, Stdio};
use std::time::Duration;

/// A process limit under which root's runs get cgroups (cgroup v1 too), so that their
/// removal is seen.
const LIMITS: &str = "extends = \"workspace\"\n[limits]\nprocesses = 64\n";

/// A background job that makes files that other programs run later, then waits. `MARK` is
/// its sleep's argument, which no other process has.
const JOB: &str = "echo direnv-payload > .envrc\nmkdir -p .vscode\necho '{}' > .vscode/tasks.json\nexec sleep MARK\n";

/// A call still running when the session ends.
const CALL: &str = "echo started\nexec sleep MARK\n";

const ALLOW: &[&str] = &["Bash(bash job.sh)", "Bash(bash call.sh)"];

/// How the test ends the session.
#[derive(Clone, Copy, Debug, PartialEq)]
enum End {
    /// SIGTERM with stdin open, and another one 20 ms later (most likely while the session
    /// ends; sbx is not reaped before the test waits for it, so the pid is still its own).
    Sigterm,
    /// stdin closed.
    Stdin,
    /// stdin closed, then SIGTERM at once (as agent hosts stop their servers).
    StdinThenSigterm,
}

impl End {
    fn apply(self, pid: u32, stdin: &mut Option<ChildStdin>) {
        let term = || {
            let pid = nix::unistd::Pid::from_raw(pid as i32);
            nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
        };
        match self {
            End::Sigterm => {
                term();
                std::thread::sleep(Duration::from_millis(20));
                term();
            }
            End::Stdin => drop(stdin.take()),
            End::StdinThenSigterm => {
                drop(stdin.take());
                term();
            }
        }
    }

    /// The exit statuses it may end with: 143 when the signal came first, 0 for stdin.
    fn codes(self) -> &'static [i32] {
        match self {
            End::Sigterm => &[143],
            End::Stdin => &[0],
            End::StdinThenSigterm => &[0, 143],
        }
    }
}

/// A workspace with the job and the call, and the marks of their processes.
struct Scenario {
    s: Scratch,
    job_mark: String,
    call_mark: String,
    audit: PathBuf,
}

impl Scenario {
    /// `tag` tells this scenario's processes from every other test's.
    fn new(user: Option<u32>, tag: &str) -> Self {
        let s = Scratch::new(user);
        let base = format!("61.{}{tag}", std::process::id());
        let (job_mark, call_mark) = (format!("{base}1"), format!("{base}2"));
        std::fs::write(s.ws.join("job.sh"), JOB.replace("MARK", &job_mark)).unwrap();
        std::fs::write(s.ws.join("call.sh"), CALL.replace("MARK", &call_mark)).unwrap();
        s.chown_all();
        let audit = s.home.join("audit.jsonl");
        Self {
            s,
            job_mark,
            call_mark,
            audit,
        }
    }

    /// `--profile` (with a process limit) and `--audit`.
    fn args(&self) -> Vec<OsString> {
        let profile = self.s.write_profile("limits", LIMITS);
        let mut v: Vec<OsString> = vec!["--profile".into(), profile.into()];
        v.extend(["--audit".into(), self.audit.clone().into()]);
        v
    }

    /// The job runs and has made its files (before the call starts: the call's own check
    /// then takes them as there before).
    fn job_running(&self) {
        let label = self.s.label();
        assert!(eventually(|| running(&self.job_mark)), "{label}: no job");
        for f in [".envrc", ".vscode/tasks.json"] {
            assert!(self.s.ws.join(f).exists(), "{label}: the job made no {f}");
        }
    }

    /// The call runs too, and sbx `pid` holds a spare: its pid, and the session's cgroups.
    fn call_running(&self, pid: u32) -> (u32, Vec<PathBuf>) {
        let label = self.s.label();
        assert!(eventually(|| running(&self.call_mark)), "{label}: no call");
        assert!(
            eventually(|| spares_of(pid).len() == 1),
            "{label}: no spare"
        );
        let made = cgroups_of(pid);
        if self.s.user.is_none() && made.is_empty() {
            eprintln!("NOTE: {label}: the runs got no cgroup here; their removal is not seen");
        }
        (spares_of(pid)[0], made)
    }

    /// After sbx `pid` ended: what the job made is in quarantine, nothing of the session is
    /// left, the call's result is in the audit log, and the status is the end's. What is not
    /// so, every item of it.
    fn ended(&self, pid: u32, end: End, status: ExitStatus, spare: u32) -> Vec<String> {
        let mut wrong = Vec::new();
        for f in [".envrc", ".vscode/tasks.json"] {
            if self.s.ws.join(f).exists() {
                wrong.push(format!("{f} stayed in the workspace"));
            }
        }
        let q = quarantine(&self.s.home);
        let kept = q.map(|q| std::fs::read_to_string(q.join("0001-.envrc")).unwrap_or_default());
        if kept.as_deref() != Some("direnv-payload\n") {
            wrong.push(format!(".envrc is not in quarantine: {kept:?}"));
        }
        for (what, mark) in [("job", &self.job_mark), ("call", &self.call_mark)] {
            if running(mark) {
                wrong.push(format!("the {what} survived"));
            }
        }
        if Path::new(&format!("/proc/{spare}")).exists() {
            wrong.push("the spare survived".into());
        }
        let left = cgroups_of(pid);
        if !left.is_empty() {
            wrong.push(format!("cgroups stayed: {left:?}"));
        }
        let audit = std::fs::read_to_string(&self.audit).unwrap_or_default();
        if !audit_has_result(&audit, "bash call.sh") {
            wrong.push("no audit line for the call's result".into());
        }
        if !status.code().is_some_and(|c| end.codes().contains(&c)) {
            wrong.push(format!(
                "exit status {status}, not one of {:?}",
                end.codes()
            ));
        }
        wrong
    }
}

fn serve_until_end(user: Option<u32>, tag: &str, end: End) {
    let sc = Scenario::new(user, tag);
    let args = sc.args();
    let extra: Vec<&OsStr> = args.iter().map(OsString::as_os_str).collect();
    let mut serve = Session::start_with(&sc.s, ALLOW, &extra);
    let pid = serve.child.id();
    let mut job =
        json!({"type": "call", "id": "job", "tool": "bash", "input": {"command": "bash job.sh"}});
    job["input"]["run_in_background"] = json!(true);
    serve.send(&job);
    let (_, r) = until_result(&mut serve, "job");
    assert!(r["job_id"].is_string(), "{r}");
    sc.job_running();
    serve.send(&json!({"type": "call", "id": "call", "tool": "bash", "input": {"command": "bash call.sh"}}));
    let (spare, made) = sc.call_running(pid);
    eprintln!("{}: cgroups of the session: {made:?}", sc.s.label());
    end.apply(pid, &mut serve.child.stdin);
    let rest = serve.rest();
    let status = serve.child.wait().unwrap();
    let mut wrong = sc.ended(pid, end, status, spare);
    if !rest
        .iter()
        .any(|e| e["type"] == "result" && e["id"] == "call")
    {
        wrong.push(format!("no result event for the call: {rest:?}"));
    }
    assert!(wrong.is_empty(), "{} ({end:?}): {wrong:#?}", sc.s.label());
}

/// Events up to the result of call `id`, and that result.
fn until_result(serve: &mut Session, id: &str) -> (Vec<Value>, Value) {
    let mut seen = Vec::new();
    loop {
        let ev = serve.next();
        if ev["type"] == "result" && ev["id"] == id {
            return (seen, ev);
        }
        seen.push(ev);
    }
}

#[test]
fn sigterm_ends_a_serve_session_with_its_runs_checked() {
    for (i, user) in users().into_iter().enumerate() {
        serve_until_end(user, &format!("1{i}"), End::Sigterm);
    }
}

#[test]
fn closing_stdin_ends_a_serve_session_with_its_runs_checked() {
    for (i, user) in users().into_iter().enumerate() {
        serve_until_end(user, &format!("2{i}"), End::Stdin);
    }
}

/// `sbx mcp` spoken to in JSON-RPC lines.
struct Mcp {
    child: Child,
    out: BufReader<ChildStdout>,
}

impl Mcp {
    fn start(sc: &Scenario) -> Self {
        let policy =
            sc.s.write_profile("policy", &format!("[policy]\nallow = {ALLOW:?}\n"));
        let mut cmd = sc.s.sbx(&["mcp", "--workspace"]);
        cmd.arg(&sc.s.ws)
            .arg("--policy")
            .arg(&policy)
            .args(sc.args());
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let mut me = Self { child, out };
        me.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}));
        assert!(me.answer(1)["result"]["protocolVersion"].is_string());
        me.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        me
    }

    fn send(&mut self, v: &Value) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    }

    fn bash(&mut self, id: u64, command: &str, background: bool) {
        let args = json!({"command": command, "run_in_background": background});
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "bash", "arguments": args}}));
    }

    /// The answer to request `id`.
    fn answer(&mut self, id: u64) -> Value {
        loop {
            let mut line = String::new();
            assert!(self.out.read_line(&mut line).unwrap() > 0, "sbx mcp ended");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return v;
            }
        }
    }
}

fn mcp_until_end(user: Option<u32>, tag: &str, end: End) {
    let sc = Scenario::new(user, tag);
    let mut mcp = Mcp::start(&sc);
    let pid = mcp.child.id();
    mcp.bash(2, "bash job.sh", true);
    let r = mcp.answer(2);
    assert_eq!(r["result"]["isError"], false, "{r}");
    sc.job_running();
    mcp.bash(3, "bash call.sh", false);
    let (spare, _) = sc.call_running(pid);
    end.apply(pid, &mut mcp.child.stdin);
    // Whatever else it writes, sbx closes its stdout as it exits.
    let mut rest = String::new();
    let _ = std::io::Read::read_to_string(&mut mcp.out, &mut rest);
    let status = mcp.child.wait().unwrap();
    let wrong = sc.ended(pid, end, status, spare);
    assert!(wrong.is_empty(), "{} ({end:?}): {wrong:#?}", sc.s.label());
}

#[test]
fn sigterm_ends_an_mcp_session_with_its_runs_checked() {
    for (i, user) in users().into_iter().enumerate() {
        mcp_until_end(user, &format!("3{i}"), End::Sigterm);
    }
}

#[test]
fn closing_stdin_ends_an_mcp_session_with_its_runs_checked() {
    for (i, user) in users().into_iter().enumerate() {
        mcp_until_end(user, &format!("4{i}"), End::Stdin);
    }
}

/// Whether a process whose command line holds `sleep MARK` is alive.
fn running(mark: &str) -> bool {
    let want = format!("sleep\0{mark}");
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        String::from_utf8_lossy(&cmdline).contains(&want)
    })
}

/// The cgroup directories sbx process `pid` made (named `sbx-PID-START-N`), at any depth.
fn cgroups_of(pid: u32) -> Vec<PathBuf> {
    fn walk(dir: &Path, prefix: &str, depth: u32, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if !e.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            if e.file_name().to_string_lossy().starts_with(prefix) {
                out.push(p);
            } else if depth > 0 {
                walk(&p, prefix, depth - 1, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(
        Path::new("/sys/fs/cgroup"),
        &format!("sbx-{pid}-"),
        6,
        &mut out,
    );
    out
}

/// The one quarantine directory under `home`, if any.
fn quarantine(home: &Path) -> Option<PathBuf> {
    let root = home.join(".local/state/sbx/quarantine");
    let mut runs: Vec<PathBuf> = std::fs::read_dir(root)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .collect();
    runs.sort();
    runs.pop()
}

/// Whether the audit log has a result line for the call of `command`.
fn audit_has_result(audit: &str, command: &str) -> bool {
    let lines: Vec<Value> = audit
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let ids: Vec<&Value> = lines
        .iter()
        .filter(|l| l["event"] == "call" && l["input"]["command"] == command)
        .map(|l| &l["call_id"])
        .collect();
    lines
        .iter()
        .any(|l| l["event"] == "result" && ids.contains(&&l["call_id"]))
}

#[test]
fn closing_stdin_then_sigterm_ends_a_serve_session_with_its_runs_checked() {
    for (i, user) in users().into_iter().enumerate() {
        serve_until_end(user, &format!("5{i}"), End::StdinThenSigterm);
    }
}

#[test]
fn closing_stdin_then_sigterm_ends_an_mcp_session_with_its_runs_checked() {
    for (i, user) in users().into_iter().enumerate() {
        mcp_until_end(user, &format!("6{i}"), End::StdinThenSigterm);
    }
}
