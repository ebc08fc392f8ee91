//! A Python virtual environment under the target directory holding a test's pinned packages,
//! installed by the test itself (CI runs on a fresh clone).
use std::path::{Path, PathBuf};
use std::process::Command;

pub fn manifest() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The target directory this test binary was built into.
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest().join("target"))
}

pub fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

pub fn run_ok(cmd: &mut Command) -> Result<(), String> {
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

/// The python of the environment `name` under the target directory that runs `check` (an
/// import line), installing `requirements` (relative to the repository) when it does not.
pub fn python_with(name: &str, requirements: &str, check: &str) -> Result<PathBuf, String> {
    let venv = target_dir().join(name);
    let python = venv.join("bin/python");
    let have = |p: &Path| run_ok(Command::new(p).args(["-c", check])).is_ok();
    if python.exists() && have(&python) {
        return Ok(python);
    }
    run_ok(Command::new("python3").arg("-m").arg("venv").arg(&venv))?;
    run_ok(
        Command::new(venv.join("bin/pip"))
            .args(["install", "--quiet", "-r"])
            .arg(manifest().join(requirements)),
    )?;
    if have(&python) {
        Ok(python)
    } else {
        Err(format!("`{check}` fails after installing {requirements}"))
    }
}
