//! Helpers for tests that run the built `sbx` binary, as root and as uid 65534.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::{PermissionsExt, chown, lchown};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

pub mod session;
pub mod venv;

pub const NOBODY: u32 = 65534;

static BIN_DIR: OnceLock<PathBuf> = OnceLock::new();

/// Removes this test process's copy of the binary as the process exits.
extern "C" fn remove_bin_dir() {
    if let Some(dir) = BIN_DIR.get() {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// Copies left by test processes that are gone (killed before their exit handler ran).
fn remove_stale_bin_dirs() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let pid = name.to_str().and_then(|n| n.strip_prefix("sbx-test-bin-"));
        if pid.is_some_and(|p| !Path::new("/proc").join(p).exists()) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// A copy of the binary in a directory every user can enter, removed when the test process
/// exits.
pub fn sbx_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        remove_stale_bin_dirs();
        let dir = std::env::temp_dir().join(format!("sbx-test-bin-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        if BIN_DIR.set(dir.clone()).is_ok() {
            // SAFETY: registers a plain function with no captured state.
            unsafe { libc::atexit(remove_bin_dir) };
        }
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let dst = dir.join("sbx");
        // Copied by another process: a write descriptor in this one would be inherited by a
        // child another test forks meanwhile, and executing the copy would fail (ETXTBSY).
        let copied = Command::new("cp")
            .arg(env!("CARGO_BIN_EXE_sbx"))
            .arg(&dst)
            .status()
            .unwrap();
        assert!(copied.success(), "copying the binary failed");
        std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(0o755)).unwrap();
        dst
    })
}

/// Whether this host has what the enforcement tests exercise. Under `CI=true` a missing
/// feature fails the test; elsewhere the test is skipped with the reason printed.
pub fn kernel_ready() -> bool {
    let host = sbx::host::Host::detect();
    require(
        "Landlock ABI 6 (Linux 6.12+)",
        host.landlock_abi.is_some_and(|v| v >= 6),
    ) && require("seccomp filtering", host.seccomp.ok())
        && require("unprivileged user namespaces", host.user_namespaces.ok())
}

/// Who runs the scenario: the test's own user, and uid 65534 when the test runs as root.
/// Empty (the test is skipped, with the reason printed) when the kernel lacks a feature.
pub fn users() -> Vec<Option<u32>> {
    if !kernel_ready() {
        return Vec::new();
    }
    let mut v = vec![None];
    if nix::unistd::geteuid().is_root() {
        v.push(Some(NOBODY));
    }
    v
}

/// Whether a kernel feature is there; under CI a missing one fails the test, elsewhere it is
/// skipped with the reason printed.
pub fn require(feature: &str, present: bool) -> bool {
    if present {
        return true;
    }
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("required kernel feature missing on this CI host: {feature}");
    }
    eprintln!("SKIP: {feature} is not available on this host");
    false
}

/// A scratch area: a workspace and a home directory, owned by `user`.
pub struct Scratch {
    pub root: tempfile::TempDir,
    pub ws: PathBuf,
    pub home: PathBuf,
    pub user: Option<u32>,
}

/// A run whose workspace holds its home puts what it moves to quarantine in
/// `/var/tmp/sbx-quarantine-<uid>`, outside the scratch tree: the runs of this tree are
/// removed from there with it, so that the tests leave nothing behind.
impl Drop for Scratch {
    fn drop(&mut self) {
        let root = self.root.path().to_string_lossy().into_owned();
        let uids = [Some(0), self.user].into_iter().flatten();
        for q in uids.map(|u| PathBuf::from(format!("/var/tmp/sbx-quarantine-{u}"))) {
            let Ok(runs) = std::fs::read_dir(&q) else {
                continue;
            };
            for run in runs.flatten().map(|e| e.path()) {
                let manifest = std::fs::read_to_string(run.join("MANIFEST")).unwrap_or_default();
                let first = manifest.lines().next().unwrap_or_default();
                let ours = first
                    .strip_prefix("workspace\t")
                    .is_some_and(|w| w == root || w.starts_with(&format!("{root}/")));
                if ours {
                    let _ = std::fs::remove_dir_all(&run);
                }
            }
        }
    }
}

impl Scratch {
    pub fn new(user: Option<u32>) -> Scratch {
        // Not under /tmp: the sandbox's private /tmp would hide a home directory there.
        let root = tempfile::Builder::new()
            .prefix("sbx-t")
            .tempdir_in("/var/tmp")
            .unwrap();
        std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let ws = root.path().join("ws");
        let home = root.path().join("home");
        std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::write(home.join(".ssh/id_rsa"), "SENTINEL-SSH-KEY-7f3a\n").unwrap();
        std::fs::write(home.join("notes.txt"), "SENTINEL-NOTES-91b2\n").unwrap();
        let s = Scratch {
            root,
            ws,
            home,
            user,
        };
        s.chown_all();
        s
    }

    /// Give every file under the scratch root to the scenario's user.
    pub fn chown_all(&self) {
        if let Some(uid) = self.user {
            fn walk(p: &Path, uid: u32) {
                // A link is followed; a dangling one (a test's own) is given itself.
                if chown(p, Some(uid), Some(uid)).is_err() {
                    lchown(p, Some(uid), Some(uid)).unwrap();
                }
                if p.is_dir() && !p.is_symlink() {
                    for e in std::fs::read_dir(p).unwrap() {
                        walk(&e.unwrap().path(), uid);
                    }
                }
            }
            walk(&self.ws, uid);
            walk(&self.home, uid);
        }
    }

    pub fn write_profile(&self, name: &str, text: &str) -> PathBuf {
        let p = self.root.path().join(format!("{name}.toml"));
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        p
    }

    /// A command that runs `sbx` with the scenario's user, workspace and home.
    pub fn sbx(&self, args: &[&str]) -> Command {
        let mut c = self.sbx_unswitched(args);
        if let Some(uid) = self.user {
            // std drops supplementary groups itself when switching from root.
            c.uid(uid).gid(uid);
        }
        c
    }

    /// [`Scratch::sbx`] as the test's own user, for a test that switches users itself.
    pub fn sbx_unswitched(&self, args: &[&str]) -> Command {
        let mut c = Command::new(sbx_bin());
        c.args(args)
            .current_dir(&self.ws)
            .env_clear()
            .env("HOME", &self.home)
            .env(
                "PATH",
                "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            )
            .env("LANG", "C.UTF-8");
        c.stdin(Stdio::null());
        c
    }

    /// `sh -c script` under `profile`, ready for more arguments or environment.
    pub fn command(&self, profile: &str, script: &str) -> Command {
        // The kernel is under test here, not the permission pipeline.
        self.sbx(&[
            "run",
            "--no-policy",
            "--profile",
            profile,
            "--",
            "sh",
            "-c",
            script,
        ])
    }

    /// `sh -c script` under `profile` with `--json`: the report is stdout's last line.
    pub fn json_command(&self, profile: &str, script: &str) -> Command {
        self.sbx(&[
            "run",
            "--no-policy",
            "--json",
            "--profile",
            profile,
            "--",
            "sh",
            "-c",
            script,
        ])
    }

    /// Run `sh -c script` under `profile`.
    pub fn run(&self, profile: &str, script: &str) -> Output {
        self.command(profile, script).output().unwrap()
    }

    /// Run `sh -c script` outside any sandbox, as the scenario's user.
    pub fn outside(&self, script: &str) -> Output {
        let mut c = Command::new("sh");
        c.args(["-c", script])
            .current_dir(&self.ws)
            .env("HOME", &self.home)
            .stdin(Stdio::null());
        if let Some(uid) = self.user {
            c.uid(uid).gid(uid);
        }
        c.output().unwrap()
    }

    pub fn label(&self) -> String {
        match self.user {
            Some(u) => format!("uid {u}"),
            None => format!("uid {}", nix::unistd::geteuid()),
        }
    }
}

pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
