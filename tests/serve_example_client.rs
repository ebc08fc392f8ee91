//! The Python example client (standard library only) drives a real `sbx serve`.
use std::process::Command;

#[test]
fn python_client_runs_allowed_asked_denied_and_background_calls() {
    if Command::new("python3").arg("--version").output().is_err() {
        panic!("python3 is needed to exercise examples/client.py");
    }
    let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let policy = home.path().join("policy.toml");
    std::fs::write(
        &policy,
        "[policy]\nallow = [\"Bash(echo *)\"]\nask = [\"Bash(touch *)\"]\ndeny = [\"Bash(rm *)\"]\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let out = Command::new("python3")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/client.py"))
        .args(["--sbx", env!("CARGO_BIN_EXE_sbx"), "--approve", "once"])
        .args(["--run", "echo from-python"])
        .args(["--run", "touch made-by-python"])
        .args(["--run", "rm -rf made-by-python"])
        .args(["--background", "echo from-a-job"])
        .arg("--")
        .arg("--workspace")
        .arg(ws.path())
        .arg("--policy")
        .arg(&policy)
        .env("HOME", home.path())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "stdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("[call-1] allow by Bash(echo *) (file:"),
        "{stdout}"
    );
    assert!(
        stdout.contains("[call-1] stdout: from-python\n"),
        "{stdout}"
    );
    assert!(stdout.contains("from-python\n[exit code: 0]"), "{stdout}");
    assert!(
        stdout.contains("[call-2] approval requested: matched Bash(touch *) -> allow-once"),
        "{stdout}"
    );
    assert!(
        stdout.contains("[call-2] result (allow):\n[exit code: 0]"),
        "{stdout}"
    );
    assert!(stdout.contains("[call-3] deny by Bash(rm *)"), "{stdout}");
    assert!(
        stdout.contains("[call-3] result (deny):\ndenied: "),
        "{stdout}"
    );
    assert!(
        stdout.contains("[call-4] result (allow):\nstarted job job-1 in the background"),
        "{stdout}"
    );
    // The job's output comes with whichever read finds it, while running or at its end;
    // the last read reports the end.
    let reads = job_reads(&stdout);
    assert!(
        reads.iter().any(|(text, _)| text.contains("from-a-job")),
        "{stdout}"
    );
    assert_eq!(
        reads.last().map(|(_, end)| end.as_str()),
        Some("[exit code: 0]"),
        "{stdout}"
    );
    assert!(
        ws.path().join("made-by-python").exists(),
        "the approved call ran"
    );
}

/// Each `[read-N] result` block the client printed: its text and its closing status line.
fn job_reads(stdout: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in stdout.lines() {
        let is_header = line
            .strip_prefix("[read-")
            .and_then(|r| r.strip_suffix("] result (allow):"))
            .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()));
        if is_header {
            current = Some(String::new());
        } else if let Some(text) = current.as_mut() {
            if line.starts_with("[exit code: ") || line == "[still running]" {
                out.push((std::mem::take(text), line.to_string()));
                current = None;
            } else {
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    out
}
