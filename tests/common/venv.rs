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

/// Installs Debian `packages` with apt-get (refreshing the package lists once if the first
/// try fails, as on a fresh machine) when `present` says they are missing. Needs root.
pub fn debian_packages(packages: &[&str], present: impl Fn() -> bool) -> Result<(), String> {
    if present() {
        return Ok(());
    }
    if !nix::unistd::geteuid().is_root() {
        return Err(format!("installing {packages:?} needs root"));
    }
    let install = |()| {
        run_ok(
            Command::new("apt-get")
                .args(["install", "-y", "-qq", "--no-install-recommends"])
                .args(packages)
                .env("DEBIAN_FRONTEND", "noninteractive"),
        )
    };
    install(())
        .or_else(|_| run_ok(Command::new("apt-get").args(["update", "-qq"])).and_then(install))?;
    if present() {
        Ok(())
    } else {
        Err(format!("{packages:?} are installed but still missing"))
    }
}

/// fusermount and libfuse2 (which fusepy loads), from Debian's `fuse3` and `libfuse2`.
pub fn fuse_packages() -> Result<(), String> {
    let present = || {
        Command::new("fusermount").arg("-V").output().is_ok()
            && run_ok(Command::new("dpkg").args(["-s", "libfuse2"])).is_ok()
    };
    debian_packages(&["fuse3", "libfuse2"], present)
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
