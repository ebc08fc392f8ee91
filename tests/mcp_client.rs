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
mod common;
use common::venv::{ci, manifest, python_with};
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// The virtual environment's python with the pinned SDK, installing it when missing.
fn client_python() -> Result<PathBuf, String> {
    python_with(
        "mcp-venv",
        "tests/mcp/requirements.txt",
        "import mcp, jsonschema",
    )
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
