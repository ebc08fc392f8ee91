//! `sbx mcp` driven by a real MCP client: the official Python SDK, pinned in
//! tests/mcp/requirements.txt and installed into a virtual environment under the target
//! directory on first use. The client lists the tools, runs calls (allowed, failing, denied,
//! a write outside the workspace next to the same write inside), an unknown tool, a
//! background job and a terminal that another owner cannot reach, approvals asked through
//! elicitation (accepted, declined, and refused for a client that cannot ask), and checks that every result's
//! `structuredContent` is valid against the tool's `outputSchema`. Once with the 2025
//! `initialize` handshake and once with the current protocol version.
//!
//! Without Python or the package index the test is skipped with the reason; under CI=true that
//! is a failure.
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn manifest() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The target directory this test binary was built into.
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest().join("target"))
}

fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

fn run_ok(cmd: &mut Command) -> Result<(), String> {
    let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    Err(format!(
        "{cmd:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    ))
}

/// The virtual environment's python with the pinned SDK, installing it when missing.
fn client_python() -> Result<PathBuf, String> {
    let venv = target_dir().join("mcp-venv");
    let python = venv.join("bin/python");
    let requirements = manifest().join("tests/mcp/requirements.txt");
    let have = |p: &Path| run_ok(Command::new(p).args(["-c", "import mcp, jsonschema"])).is_ok();
    if python.exists() && have(&python) {
        return Ok(python);
    }
    run_ok(Command::new("python3").arg("-m").arg("venv").arg(&venv))?;
    run_ok(
        Command::new(venv.join("bin/pip"))
            .args(["install", "--quiet", "-r"])
            .arg(&requirements),
    )?;
    if have(&python) {
        Ok(python)
    } else {
        Err("the MCP SDK did not import after installing".into())
    }
}

fn python() -> Option<&'static PathBuf> {
    static PY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match PY.get_or_init(client_python) {
        Ok(p) => Some(p),
        Err(e) if ci() => panic!("CI=true and the MCP client could not be installed: {e}"),
        Err(e) => {
            eprintln!("SKIP: the MCP Python SDK could not be installed ({e})");
            None
        }
    }
}

const POLICY: &str = r#"[policy]
allow = ["Bash(echo *)", "Bash(sleep *)", "Bash(printf *)", "Bash(head *)", "Bash(tr *)", "Bash(bash -i)"]
ask = ["Bash(touch *)"]
deny = ["Bash(rm *)"]
"#;

fn drive(mode: &str, version: &str) {
    let Some(py) = python() else { return };
    let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let policy = home.path().join("policy.toml");
    std::fs::write(&policy, POLICY).unwrap_or_else(|e| panic!("{e}"));
    let out = Command::new(py)
        .arg(manifest().join("tests/mcp/client.py"))
        .arg(env!("CARGO_BIN_EXE_sbx"))
        .arg(ws.path())
        .arg(&policy)
        .arg(home.path())
        .args([mode, version])
        .output()
        .unwrap_or_else(|e| panic!("client: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "client failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let last = stdout.lines().last().unwrap_or_default();
    let summary: serde_json::Value =
        serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(summary["protocol"], version, "{summary}");
    assert!(
        summary["validated_results"].as_u64().unwrap_or(0) >= 10,
        "{summary}"
    );
}

#[test]
fn a_2025_client_uses_the_initialize_handshake() {
    drive("legacy", "2025-11-25");
}

#[test]
fn a_current_client_uses_discovery() {
    drive("auto", "2026-07-28");
}
