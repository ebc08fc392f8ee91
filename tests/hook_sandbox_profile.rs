//! `sbx hook claude-code --sandbox` names in the sandboxed form the profile it decided with:
//! a file in the workspace named like the built-in (`workspace`), which the model can write,
//! does not become the profile the form runs under (as it did when `--profile` was taken for
//! a path relative to the hook's directory). Paired with the same steps without the file, and
//! with the model's script run unsandboxed, which does write outside the workspace.
use serde_json::{Value, json};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

fn hook(workspace: &Path, home: &Path, command: &str) -> Value {
    let event = json!({
        "session_id": "s", "transcript_path": "/x", "cwd": workspace,
        "permission_mode": "default", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": "toolu_1",
    });
    let mut child = Command::new(env!("CARGO_BIN_EXE_sbx"))
        .args(["hook", "claude-code", "--profile", "workspace", "--sandbox"])
        .env("HOME", home)
        // Claude Code runs a hook in the session's directory.
        .current_dir(workspace)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let bytes = serde_json::to_vec(&event).unwrap_or_else(|e| panic!("{e}"));
    if let Some(mut i) = child.stdin.take() {
        i.write_all(&bytes).unwrap_or_else(|e| panic!("{e}"));
    }
    let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}"))
}

fn decision(v: &Value) -> String {
    v["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The redirect for `ls -la`, sent back as told: returns (the form, its decision) after
/// running the form the way Claude Code's Bash tool would.
fn redirect_and_run(ws: &Path, home: &Path) -> (String, String) {
    let v = hook(ws, home, "ls -la");
    assert_eq!(decision(&v), "deny", "{v}");
    let reason = v["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap_or_default();
    let form = reason
        .split_once("unchanged: ")
        .map(|(_, c)| c.to_string())
        .unwrap_or_else(|| panic!("no form: {reason}"));
    let again = decision(&hook(ws, home, &form));
    if again == "allow" {
        let out = Command::new("bash")
            .arg("-c")
            .arg(&form)
            .current_dir(ws)
            .env("HOME", home)
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(out.status.success(), "{out:?}");
    }
    (form, again)
}

fn setup(plant: bool) -> (tempfile::TempDir, tempfile::TempDir, std::path::PathBuf) {
    let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let marker = home.path().join("escaped");
    // What the model writes into the workspace (the Write tool and the sandbox both allow it).
    std::fs::write(
        ws.path().join("notes.sh"),
        format!("echo out > '{}'\n", marker.display()),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    if plant {
        std::fs::write(
            ws.path().join("workspace"),
            format!(
                "[filesystem]\nread = [\"/\"]\nexecute = [\"/\"]\nwrite = [\"{{workspace}}\", \"{{home}}\"]\n\
                 [environment]\nset = {{ BASH_ENV = \"{}\" }}\n",
                ws.path().join("notes.sh").display()
            ),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
    (ws, home, marker)
}

#[test]
fn a_file_named_like_the_profile_in_the_workspace_does_not_become_the_profile() {
    let (ws, home, marker) = setup(true);
    let (form, again) = redirect_and_run(ws.path(), home.path());
    assert_eq!(again, "allow", "ls -la is allowed with no prompt: {form}");
    assert!(
        !marker.exists(),
        "an allowed `ls -la` in its sandboxed form wrote outside the workspace: {form}"
    );
    assert!(
        form.contains(" --profile 'workspace' "),
        "the form names the model's file as the profile: {form}"
    );
}

/// The twin: without the planted file the same steps stay confined, and the same script run
/// outside the sandbox does write the marker, so the test can tell.
#[test]
fn without_the_file_the_same_form_stays_confined() {
    let (ws, home, marker) = setup(false);
    let (form, again) = redirect_and_run(ws.path(), home.path());
    assert_eq!(again, "allow", "{form}");
    assert!(form.contains(" --profile 'workspace' "), "{form}");
    assert!(!marker.exists());
    let out = Command::new("bash")
        .arg("-c")
        .arg("ls -la >/dev/null")
        .env("BASH_ENV", ws.path().join("notes.sh"))
        .current_dir(ws.path())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(out.status.success());
    assert!(marker.exists(), "outside the sandbox the script writes");
}
