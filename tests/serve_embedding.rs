//! examples/harness.rs builds and runs: one call allowed, one asked and approved, one denied.
use std::path::PathBuf;
use std::process::Command;

fn example_binary() -> PathBuf {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_sbx"));
    let dir = bin.parent().unwrap_or_else(|| panic!("no parent"));
    let exe = dir.join("examples").join("harness");
    if !exe.exists() {
        // `cargo test --test serve_embedding` alone does not build examples.
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "--example", "harness"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .unwrap_or_else(|e| panic!("cargo build --example harness: {e}"));
        assert!(status.success());
    }
    exe
}

#[test]
fn harness_example_runs_three_calls() {
    let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let out = Command::new(example_binary())
        .arg(ws.path())
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
        stdout.contains("result 1 allow by Bash(echo *)"),
        "{stdout}"
    );
    assert!(stdout.contains("\"hello from the sandbox\\n\""), "{stdout}");
    assert!(
        stdout.contains("ask    Bash(touch approved.txt) (matched Bash(touch *)) -> approved once"),
        "{stdout}"
    );
    assert!(stdout.contains("result 2 allow by approval"), "{stdout}");
    assert!(stdout.contains("result 3 deny by Bash(rm *)"), "{stdout}");
    assert!(stdout.contains("approved.txt exists: true"), "{stdout}");
    assert!(ws.path().join("approved.txt").exists());
}
