//! The `--sandbox` rewrite: its quoting survives every NUL-free string when bash reads it,
//! and the rewritten command really runs inside the sandbox.
use proptest::prelude::*;
use sbx::hook::sandbox_command;
use serde_json::{Value, json};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A stand-in for sbx that prints its arguments, each followed by a NUL byte.
fn argv_printer(dir: &Path) -> PathBuf {
    let p = dir.join("print argv's");
    std::fs::write(
        &p,
        "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755))
        .unwrap_or_else(|e| panic!("{e}"));
    p
}

/// Run `line` with `bash -c` and split what the printer printed.
fn argv_through_bash(line: &str) -> Vec<String> {
    let out = Command::new("bash")
        .arg("-c")
        .arg(line)
        .output()
        .unwrap_or_else(|e| panic!("bash: {e}"));
    assert!(
        out.status.success(),
        "bash failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut v: Vec<String> = out
        .stdout
        .split(|b| *b == 0)
        .map(|a| String::from_utf8(a.to_vec()).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    assert_eq!(v.pop().as_deref(), Some(""), "output ends with a NUL");
    v
}

fn check(printer: &Path, profile: &str, workspace: &str, command: &str) {
    let line = sandbox_command(printer, profile, Path::new(workspace), command)
        .unwrap_or_else(|e| panic!("{e}"));
    let got = argv_through_bash(&line);
    let want = [
        "run",
        "--no-policy",
        "--profile",
        profile,
        "--workspace",
        workspace,
        "--",
        "bash",
        "-c",
        command,
    ];
    assert_eq!(got, want, "rewritten line: {line:?}");
}

const ADVERSARIAL: &[&str] = &[
    "",
    "'",
    "''",
    "'\\''",
    "\"",
    "echo 'a'\"b\"'c'",
    "$(touch /tmp/pwned) `id` ${HOME} $((1+1)) $'\\x41'",
    "a\nb\n\n'\n",
    "\\",
    "\\'",
    "!!; !$ ^x^y",
    "*?[a-z]{1,2}~",
    "; & | && || > < >> << <<< () {} #",
    "\t\r\x01\x07\x1b[31m\x7f",
    "é ü ∂ 漢字 🙂 \u{202e}",
    "cat <<'EOF'\n$x 'y'\nEOF",
];

#[test]
fn adversarial_commands_arrive_unchanged() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let printer = argv_printer(dir.path());
    for s in ADVERSARIAL {
        check(&printer, "work'space", "/tmp/it's a \"ws\"", s);
        check(&printer, s, s, s);
    }
    let high: String = (1u32..0x800).filter_map(char::from_u32).collect();
    check(&printer, "workspace", "/w", &high);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    #[test]
    fn any_nul_free_string_arrives_unchanged(
        cmd in "[^\u{0}]{0,200}",
        quoted in prop::collection::vec(prop::sample::select(vec!["'", "\\", "\"", "$", "`", "\n", "'\\''", "!"]), 0..20),
        profile in "[^\u{0}]{0,20}",
    ) {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let printer = argv_printer(dir.path());
        let cmd = format!("{cmd}{}", quoted.concat());
        check(&printer, &profile, "/ws", &cmd);
    }
}

#[test]
fn a_nul_byte_is_refused() {
    assert!(sandbox_command(Path::new("/sbx"), "p", Path::new("/w"), "a\0b").is_err());
}

/// A directory outside the workspace that the sandboxed command can see on the host.
fn outside_dir() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .or_else(|_| tempfile::tempdir())
        .unwrap_or_else(|e| panic!("{e}"))
}

fn hook_answer(workspace: &Path, home: &Path, event: &Value) -> Value {
    hook_with(&["--sandbox=rewrite"], workspace, home, event)
}

fn hook_with(args: &[&str], workspace: &Path, home: &Path, event: &Value) -> Value {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sbx"))
        .args(["hook", "claude-code"])
        .args(args)
        .env("HOME", home)
        .current_dir(workspace)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let bytes = serde_json::to_vec(event).unwrap_or_else(|e| panic!("{e}"));
    if let Some(mut i) = child.stdin.take() {
        i.write_all(&bytes).unwrap_or_else(|e| panic!("{e}"));
    }
    let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.status.code(), Some(0));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn the_rewritten_command_runs_inside_the_sandbox() {
    let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let outside = outside_dir();
    let target = outside.path().join("escaped");
    // The outside target comes out of a command substitution: a path the gate can read is denied by the
    // plan before anything runs, so only one it cannot know is left for the kernel to refuse.
    let command = format!(
        "echo 'in'\"side\" > inside.txt; T=$(printf %s '{}'); echo out > \"$T\"; echo \"outside-rc=$?\"; echo \"$(printf '%s' \"it's\")\"",
        target.display()
    );
    let event = json!({
        "session_id": "s", "transcript_path": "/x", "cwd": ws.path(),
        "permission_mode": "default", "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "write in and out", "timeout": 60000},
        "tool_use_id": "toolu_1",
    });
    let v = hook_answer(ws.path(), home.path(), &event);
    let h = &v["hookSpecificOutput"];
    assert_eq!(h["permissionDecision"], "ask", "no rule allows it: {v}");
    assert_eq!(
        h["updatedInput"]["description"], "write in and out",
        "other fields are kept"
    );
    assert_eq!(h["updatedInput"]["timeout"], 60000);
    let rewritten = h["updatedInput"]["command"]
        .as_str()
        .unwrap_or_else(|| panic!("no rewrite: {v}"));

    // What Claude Code's Bash tool does with the command: bash -c in the session's cwd.
    let out = Command::new("bash")
        .arg("-c")
        .arg(rewritten)
        .current_dir(ws.path())
        .env("HOME", home.path())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("inside.txt"))
            .ok()
            .as_deref(),
        Some("inside\n"),
        "the write inside the workspace succeeds"
    );
    assert!(
        !target.exists(),
        "the write outside the workspace must not reach the host"
    );
    assert!(stdout.contains("it's\n"), "quoting survived: {stdout}");
    if !outside.path().starts_with(std::env::temp_dir()) {
        assert!(
            !stdout.contains("outside-rc=0"),
            "the write outside the workspace fails inside the sandbox: {stdout}"
        );
    }

    // The same command without the rewrite does reach outside: the test can tell.
    let plain = Command::new("bash")
        .arg("-c")
        .arg(&command)
        .current_dir(ws.path())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(plain.status.success());
    assert!(target.exists(), "unsandboxed, the same write lands");
}

fn bash_event(cwd: &Path, command: &str) -> Value {
    json!({
        "session_id": "s", "transcript_path": "/x", "cwd": cwd,
        "permission_mode": "default", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": "toolu_1",
    })
}

/// Claude Code's default: the raw command is denied with the exact sandboxed command to run,
/// and that command, sent back unchanged, gets the raw command's own decision without any
/// rewrite. Nothing is left for a host that drops `updatedInput` to run unsandboxed.
#[test]
fn the_redirect_denies_the_raw_command_and_decides_exactly_the_sandboxed_one() {
    let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let outside = outside_dir();
    let target = outside.path().join("escaped");
    let command = format!(
        "echo in > inside.txt; T=$(printf %s '{}'); echo out > \"$T\"",
        target.display()
    );
    let (w, h) = (ws.path(), home.path());

    // The rewrite mode allows (or asks) with updatedInput: a host that drops it runs the raw
    // command. The redirect (the default for claude-code) denies the raw command instead.
    let rewrite = hook_with(&["--sandbox=rewrite"], w, h, &bash_event(w, &command));
    assert_eq!(
        rewrite["hookSpecificOutput"]["permissionDecision"], "ask",
        "{rewrite}"
    );
    assert!(
        rewrite["hookSpecificOutput"]["updatedInput"].is_object(),
        "{rewrite}"
    );
    for args in [&["--sandbox"][..], &["--sandbox=redirect"][..]] {
        let v = hook_with(args, w, h, &bash_event(w, &command));
        let o = &v["hookSpecificOutput"];
        assert_eq!(o["permissionDecision"], "deny", "{v}");
        assert!(o.get("updatedInput").is_none(), "{v}");
    }
    let v = hook_with(&["--sandbox"], w, h, &bash_event(w, &command));
    let reason = v["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap_or_default();
    let sandboxed = reason
        .split_once("unchanged: ")
        .map(|(_, c)| c.to_string())
        .unwrap_or_else(|| panic!("no command to run: {reason}"));
    assert!(
        sandboxed.contains(" run --no-policy --profile "),
        "{sandboxed}"
    );

    // Sent back unchanged, it is decided as the command it wraps (no rule allows it: ask),
    // with nothing rewritten.
    let v = hook_with(&["--sandbox"], w, h, &bash_event(w, &sandboxed));
    let o = &v["hookSpecificOutput"];
    assert_eq!(o["permissionDecision"], "ask", "{v}");
    assert!(o.get("updatedInput").is_none(), "{v}");
    // Changed in any way, it is a raw command again: denied.
    for tampered in [
        format!("{sandboxed}; echo out > '{}'", target.display()),
        sandboxed.replace("'workspace'", "'open'"),
    ] {
        let v = hook_with(&["--sandbox"], w, h, &bash_event(w, &tampered));
        assert_eq!(
            v["hookSpecificOutput"]["permissionDecision"], "deny",
            "{tampered}: {v}"
        );
    }
    // A command the gate denies stays denied in its sandboxed form.
    let bin = Path::new(env!("CARGO_BIN_EXE_sbx"));
    let canon = std::fs::canonicalize(w).unwrap_or_else(|e| panic!("{e}"));
    let form = |c: &str| sandbox_command(bin, "workspace", &canon, c).unwrap_or_default();
    assert_eq!(
        form(&command),
        sandboxed,
        "the hook names the form sandbox_command makes"
    );
    for c in ["cat ~/.netrc", &form("cat ~/.netrc")] {
        let v = hook_with(&["--sandbox"], w, h, &bash_event(w, c));
        let o = &v["hookSpecificOutput"];
        assert_eq!(o["permissionDecision"], "deny", "{v}");
        let why = o["permissionDecisionReason"].as_str().unwrap_or_default();
        assert!(
            why.contains("plan:deny-read"),
            "denied by the plan, not redirected: {v}"
        );
    }

    // What the host runs when the user approves: inside the sandbox.
    let out = Command::new("bash")
        .arg("-c")
        .arg(&sandboxed)
        .current_dir(w)
        .env("HOME", h)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        std::fs::read_to_string(w.join("inside.txt"))
            .ok()
            .as_deref(),
        Some("in\n")
    );
    assert!(
        !target.exists(),
        "the sandboxed command wrote outside: {out:?}"
    );
}
