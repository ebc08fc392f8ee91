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
    assert!(stdout.contains("from-a-job\n[exit code: 0]"), "{stdout}");
    assert!(
        ws.path().join("made-by-python").exists(),
        "the approved call ran"
    );
}
