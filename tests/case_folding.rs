//! A workspace on a file system that folds case beneath the kernel: a small FUSE pass-through
//! that finds names under any case (tests/casefold/cifs.py, as SMB shares and folders shared
//! from macOS do), with fusepy pinned in tests/casefold/requirements.txt and installed into a
//! virtual environment under the target directory on first use. There `.GIT/CONFIG` is a
//! dentry of its own that reaches the file of `.git/config` around its read-only mount, so
//! the run is refused; the same run in an ordinary directory goes ahead, and a profile that
//! accepts the file system knowingly runs with the write landing (the refusal is what
//! protects) and `protected-names: partial` in its report.
//!
//! Mounting needs root (/dev/fuse is root's here), so the tests run only as root; the runs
//! themselves are made as root and as uid 65534. fusermount and libfuse2 come from
//! Debian's `fuse3` and `libfuse2`, installed when missing. Without FUSE, Python or the
//! package indexes the test is skipped with the reason; under CI=true that is a failure. The
//! runs skip the permission gate (`--no-policy`): it already denies a literal `.GIT/CONFIG`
//! where it finds the directory folding case (src/pipeline/fold.rs), but not a name a
//! program computes, and what is tested here is the sandbox.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;
use common::venv::{ci, fuse_packages, manifest, python_with};
use common::{Scratch, users};
use sbx::host::NameCase;
use sbx::host::names::probe;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The virtual environment's python with fusepy, installing it when missing.
fn fuse_python() -> Result<PathBuf, String> {
    python_with(
        "casefold-venv",
        "tests/casefold/requirements.txt",
        "import fuse",
    )
}

/// Why FUSE cannot be mounted here, if it cannot.
fn fuse_missing() -> Option<String> {
    if !nix::unistd::geteuid().is_root() {
        return Some("mounting the FUSE file system needs root (/dev/fuse is root's)".into());
    }
    if std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/fuse")
        .is_err()
    {
        return Some("/dev/fuse cannot be opened".into());
    }
    fuse_packages().err()
}

/// The python that runs the fixture, or `None` (skipped, with the reason) when it cannot run.
fn python() -> Option<&'static PathBuf> {
    static PY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let r = PY.get_or_init(|| match fuse_missing() {
        Some(why) => Err(why),
        None => fuse_python(),
    });
    match r {
        Ok(p) => Some(p),
        Err(e) if ci() => panic!("CI=true and the case-folding FUSE file system cannot run: {e}"),
        Err(e) => {
            eprintln!("SKIP: the case-folding FUSE file system cannot run here ({e})");
            None
        }
    }
}

/// The fixture mounted over a backing directory, unmounted when dropped.
struct Folding {
    child: Child,
    mnt: PathBuf,
    /// The directory behind it, read to see a write at once (the mount's attributes are
    /// cached for a second, so a file grown through another name reads at its old size).
    backing: PathBuf,
    _dirs: [tempfile::TempDir; 2],
}

impl Folding {
    fn mount(python: &Path) -> Folding {
        let parent = std::env::temp_dir();
        Folding::mount_in(python, &parent)
    }

    /// Mounted in `parent`, over a backing directory there, both open to every user.
    fn mount_in(python: &Path, parent: &Path) -> Folding {
        let dir = || {
            let d = tempfile::tempdir_in(parent).unwrap();
            std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
            d
        };
        let (backing, mnt) = (dir(), dir());
        let child = Command::new(python)
            .arg(manifest().join("tests/casefold/cifs.py"))
            .arg(backing.path())
            .arg(mnt.path())
            .spawn()
            .unwrap();
        let path = mnt.path().to_path_buf();
        let f = Folding {
            child,
            mnt: path.clone(),
            backing: backing.path().to_path_buf(),
            _dirs: [backing, mnt],
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while !mounted(&path) {
            assert!(
                Instant::now() < deadline,
                "the FUSE file system did not mount"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        f
    }
}

fn mounted(p: &Path) -> bool {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let p = p.to_string_lossy();
    info.lines()
        .any(|l| l.split(' ').nth(4) == Some(&*p) && l.contains(" fuse"))
}

impl Drop for Folding {
    fn drop(&mut self) {
        let _ = Command::new("fusermount").arg("-u").arg(&self.mnt).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const CONFIG: &str = "[core]\n\tbare = false\n";
/// Written through a case variant: git on the host would run it at the next commit.
const ATTACK: &str =
    "mkdir -p .GIT && printf '[core]\\n\\tfsmonitor = /tmp/evil\\n' >> .GIT/CONFIG && echo WROTE";

/// A repository-like workspace in `dir`.
fn workspace(dir: &Path) -> PathBuf {
    let ws = dir.join("ws");
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::write(ws.join(".git/config"), CONFIG).unwrap();
    std::fs::write(ws.join("README"), "hello\n").unwrap();
    ws
}

fn text(o: &Output) -> String {
    format!(
        "{}\nstdout: {}\nstderr: {}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The probe: beneath the kernel on the fixture, exact on the directory behind it.
#[test]
fn the_probe_tells_folding_beneath_the_kernel_from_exact_names() {
    let Some(py) = python() else { return };
    let fold = Folding::mount(py);
    let ws = workspace(&fold.mnt);
    // The fixture does fold: the variant reaches the file.
    assert_eq!(
        std::fs::read_to_string(ws.join(".GIT/CONFIG")).unwrap(),
        CONFIG
    );
    let verdict = probe(&ws.join(".git/config"));
    assert!(
        matches!(&verdict, NameCase::FoldedBeneath { fs } if fs.starts_with("fuse")),
        "{verdict:?}"
    );
    let plain = tempfile::tempdir().unwrap();
    let ws = workspace(plain.path());
    assert_eq!(probe(&ws.join(".git/config")), NameCase::Exact);
    assert_eq!(probe(&ws.join(".git")), NameCase::Exact);
}

/// The attack refused there, the same run going ahead in an ordinary directory, and, accepted
/// knowingly, the write landing in `.git/config` during the run with the report saying
/// `partial`, and undone by the check after it. As root and
/// as uid 65534 (the FUSE file system is mounted by root for both, `allow_other`).
#[test]
fn a_run_on_a_file_system_folding_case_beneath_the_kernel_is_refused() {
    let Some(py) = python() else { return };
    for u in users() {
        let s = Scratch::new(u);
        std::fs::write(s.ws.join(".git/config"), CONFIG).unwrap();
        s.chown_all();
        let allowed = s.json_command("workspace", ATTACK).output().unwrap();
        assert_eq!(
            allowed.status.code(),
            Some(0),
            "{}: {}",
            s.label(),
            text(&allowed)
        );
        assert!(String::from_utf8_lossy(&allowed.stdout).contains("WROTE"));
        let config = std::fs::read_to_string(s.ws.join(".git/config")).unwrap();
        assert_eq!(config, CONFIG, "{}", s.label());

        let fold = Folding::mount_in(py, s.root.path());
        let ws = workspace(&fold.mnt);
        if let Some(uid) = u {
            let status = Command::new("chown")
                .arg("-R")
                .arg(format!("{uid}:{uid}"))
                .arg(&ws)
                .status();
            assert!(status.unwrap().success());
        }
        let behind = fold.backing.join("ws/.git/config");
        let refused = s
            .json_command("workspace", ATTACK)
            .current_dir(&ws)
            .output()
            .unwrap();
        assert_eq!(
            refused.status.code(),
            Some(125),
            "{}: {}",
            s.label(),
            text(&refused)
        );
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(
            stderr.contains("(fuse)") && stderr.contains("case_folding = \"accept\""),
            "{}: {}",
            s.label(),
            text(&refused)
        );
        assert!(!String::from_utf8_lossy(&refused.stdout).contains("WROTE"));
        assert_eq!(std::fs::read_to_string(&behind).unwrap(), CONFIG);

        let toml = "extends = \"workspace\"\n[filesystem]\ncase_folding = \"accept\"\n";
        let accept = s.write_profile("accept", toml);
        let ran = s
            .json_command(accept.to_str().unwrap(), ATTACK)
            .current_dir(&ws)
            .output()
            .unwrap();
        assert_eq!(ran.status.code(), Some(0), "{}: {}", s.label(), text(&ran));
        // The mount did not hold (the command wrote around it), but the check after the run
        // read the config git would run programs from and moved it to quarantine.
        assert!(
            String::from_utf8_lossy(&ran.stdout).contains("WROTE"),
            "{}: the mount held after all: {}",
            s.label(),
            text(&ran)
        );
        assert!(!behind.exists(), "{}: {}", s.label(), text(&ran));
        assert!(
            text(&ran).contains("git config with keys that run programs"),
            "{}: {}",
            s.label(),
            text(&ran)
        );
        assert_eq!(
            names_status(&ran),
            "partial",
            "{}: {}",
            s.label(),
            text(&ran)
        );
    }
}

/// Under `case_folding = "accept"`, on the folding file system, a protected name made under
/// another case (`.ENVRC` at the root, `app/.ENVRC` and `app/.Claude/` one level down) is
/// what direnv and agents later find as the protected one: the check after the run compares
/// names as the file system does and moves them to quarantine. Paired: `NOTES.TXT` and
/// `app/NOTES.TXT` made in the same run stay. As root and as uid 65534.
#[test]
fn names_made_under_another_case_are_checked_as_the_protected_ones() {
    let Some(py) = python() else { return };
    let script = "echo EVIL > .ENVRC; echo EVIL > app/.ENVRC; \
                  mkdir app/.Claude && echo EVIL > app/.Claude/settings.json; \
                  echo ok > NOTES.TXT; echo ok > app/NOTES.TXT; echo DONE";
    for u in users() {
        let s = Scratch::new(u);
        let fold = Folding::mount_in(py, s.root.path());
        let ws = workspace(&fold.mnt);
        std::fs::create_dir_all(ws.join("app")).unwrap();
        if let Some(uid) = u {
            let status = Command::new("chown")
                .arg("-R")
                .arg(format!("{uid}:{uid}"))
                .arg(&ws)
                .status();
            assert!(status.unwrap().success());
        }
        let toml = "extends = \"workspace\"\n[filesystem]\ncase_folding = \"accept\"\n";
        let accept = s.write_profile("accept", toml);
        let ran = s
            .json_command(accept.to_str().unwrap(), script)
            .current_dir(&ws)
            .output()
            .unwrap();
        assert!(
            String::from_utf8_lossy(&ran.stdout).contains("DONE"),
            "{}: {}",
            s.label(),
            text(&ran)
        );
        let behind = fold.backing.join("ws");
        for p in [".ENVRC", "app/.ENVRC", "app/.Claude"] {
            assert!(
                behind.join(p).symlink_metadata().is_err(),
                "{} {p} stayed: {}",
                s.label(),
                text(&ran)
            );
        }
        for p in ["NOTES.TXT", "app/NOTES.TXT"] {
            assert!(behind.join(p).exists(), "{} {p}: {}", s.label(), text(&ran));
        }
    }
}

/// The status of the report's `protected-names` line.
fn names_status(o: &Output) -> String {
    let stdout = String::from_utf8_lossy(&o.stdout);
    let last = stdout.lines().last().unwrap_or_default();
    let result: serde_json::Value = serde_json::from_str(last).unwrap();
    let layers = result["enforcement"]["layers"].as_array().cloned();
    let line = layers
        .unwrap_or_default()
        .into_iter()
        .find(|l| l["name"] == "protected-names");
    line.map(|l| l["status"].as_str().unwrap_or_default().to_string())
        .unwrap_or_default()
}

/// `sbx doctor` in such a workspace says the built-ins are refused there, and why.
#[test]
fn doctor_names_the_refusal() {
    let Some(py) = python() else { return };
    let fold = Folding::mount(py);
    let ws = workspace(&fold.mnt);
    let out = Command::new(env!("CARGO_BIN_EXE_sbx"))
        .arg("doctor")
        .current_dir(&ws)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("workspace "));
    let line = line.unwrap_or_else(|| panic!("{stdout}"));
    assert!(line.contains("refused") && line.contains("fuse"), "{line}");
}
