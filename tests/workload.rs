//! Ordinary work must keep working: a list of everyday developer tasks (git, C/C++/Rust builds,
//! python with venv/pip/multiprocessing/sqlite, node and npm, /tmp and /dev/shm, ptys, ps and
//! /proc, loopback servers, unix sockets and flock, hundreds of processes and files, dozens of
//! threads, a few hundred MiB, reading /etc and home dotfiles) run inside the sandbox under each
//! built-in profile, as the test's user and as uid 65534.
//!
//! Each item is a few lines of `tests/workload/*.sh` that print `OK <item>` only when the result
//! was checked (the commit is in the log, the program printed its output, the module imports,
//! the server answered, ...). The test asserts that every expected `OK` line is there and prints
//! the whole output of a script that missed one.
//!
//! Everything is offline. Tools are looked for outside the sandbox first: a tool missing on a CI
//! host (`CI=true`) fails the test; elsewhere the items that need it are skipped with the reason
//! printed. A toolchain that the scenario user cannot reach (rustup's toolchain under root's
//! 0700 home, for uid 65534) is hard-linked into a world-readable directory under /var/tmp and
//! used from there; only when that cannot be done are its items skipped, with the reason.
//!
//! The permission gate in front of the sandbox is not what is measured here: the scripts run with
//! `--mode sandbox-auto`, which lets a fully enforced Bash call through, so what passes or fails
//! is what the kernel-enforced sandbox allows. (`floor_allows_writes_to_private_dev_shm` below
//! covers one gate decision that ordinary work runs into.)
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;
use common::*;
use std::os::unix::fs::PermissionsExt;
use std::sync::Mutex;

const STD_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// (script name, text, the items it proves).
const SCRIPTS: &[(&str, &str, &[&str])] = &[
    (
        "git",
        include_str!("workload/git.sh"),
        &[
            "git-commit",
            "git-status",
            "git-diff",
            "git-branch",
            "git-stash",
            "git-worktree",
            "git-clone",
            "git-stash-untracked",
            "git-clean",
        ],
    ),
    (
        "git-later",
        include_str!("workload/git-later.sh"),
        &["git-worktree-later"],
    ),
    ("git-ro", include_str!("workload/git-ro.sh"), &["git-read"]),
    (
        "cc",
        include_str!("workload/cc.sh"),
        &["gcc", "g++", "make"],
    ),
    (
        "rust",
        include_str!("workload/rust.sh"),
        &["rustc", "cargo-build", "cargo-test"],
    ),
    (
        "python",
        include_str!("workload/python.sh"),
        &["python-venv", "pip-local", "multiprocessing", "sqlite"],
    ),
    (
        "node",
        include_str!("workload/node.sh"),
        &["node", "npm-local-dep", "npm-test"],
    ),
    (
        "tmp",
        include_str!("workload/tmp.sh"),
        &["tmp-private", "tmp", "dev-shm"],
    ),
    (
        "pty",
        include_str!("workload/pty.sh"),
        &["pty", "pty-script"],
    ),
    (
        "proc",
        include_str!("workload/proc.sh"),
        &["ps", "proc-self"],
    ),
    (
        "net",
        include_str!("workload/net.sh"),
        &["loopback-tcp", "loopback-http"],
    ),
    (
        "ipc",
        include_str!("workload/ipc.sh"),
        &["unix-socket-ws", "flock-ws", "unix-socket-tmp", "flock-tmp"],
    ),
    (
        "limits",
        include_str!("workload/limits.sh"),
        &["processes", "open-files", "threads", "memory", "reserve"],
    ),
    (
        "etc",
        include_str!("workload/etc.sh"),
        &[
            "etc-users",
            "etc-hosts",
            "etc-certs",
            "etc-locale",
            "etc-timezone",
        ],
    ),
    ("home", include_str!("workload/home.sh"), &["home-dotfiles"]),
    (
        "java",
        include_str!("workload/java.sh"),
        &["java-compile", "java-source"],
    ),
    (
        "ci-caches",
        include_str!("workload/ci-caches.sh"),
        &["npm-cache", "pip-cache", "cargo-registry"],
    ),
];

/// The list for the profiles that write the workspace.
const WRITE_LIST: &[&str] = &[
    "git",
    "git-later",
    "cc",
    "rust",
    "python",
    "node",
    "tmp",
    "pty",
    "proc",
    "net",
    "ipc",
    "limits",
    "etc",
    "home",
    "java",
];

/// The list for `read-only`: nothing here writes the workspace.
const READ_LIST: &[&str] = &["git-ro", "tmp", "pty", "proc", "etc", "home"];

/// Which tools (looked for outside the sandbox) each item needs.
fn tools_of(item: &str) -> &'static [&'static str] {
    match item {
        i if i.starts_with("git") => &["git"],
        "gcc" => &["gcc"],
        "g++" => &["g++"],
        "make" => &["make", "gcc"],
        "rustc" | "cargo-build" | "cargo-test" | "cargo-registry" => &["rust"],
        "node" | "loopback-http" => &["node"],
        "npm-local-dep" | "npm-test" => &["node", "npm"],
        "npm-cache" => &["node", "npm"],
        "ps" => &["ps"],
        "pty-script" => &["script", "python3"],
        i if i.starts_with("java") => &["javac"],
        _ => &["python3"],
    }
}

/// Items that fail under a profile by design, with the reason. Everything else must work.
fn expected_to_fail(profile: &str, item: &str, rust_bin: &str) -> Option<&'static str> {
    let system = ["/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/"];
    match (profile, item) {
        // strict reads only /usr, a curated /etc, /proc, /dev and the workspace: not the home.
        ("strict", "home-dotfiles") => Some("strict does not read the home directory"),
        // A toolchain installed in a home directory (rustup's ~/.rustup) is outside strict's
        // read set; one under /usr is inside it and must work.
        ("strict", "rustc" | "cargo-build" | "cargo-test")
            if !system.iter().any(|d| rust_bin.starts_with(d)) =>
        {
            Some("the rust toolchain lives outside strict's read set")
        }
        // strict's network mode is `none`: no inet sockets at all, not even on loopback
        // (socket(AF_INET) fails with EAFNOSUPPORT). Unix sockets still work.
        ("strict", "loopback-tcp" | "loopback-http") => {
            Some("strict has no network, not even loopback")
        }
        _ => None,
    }
}

/// The limits script counts processes against RLIMIT_NPROC, which is per user across the host:
/// run it one at a time so that two profiles' children do not add up.
static LIMITS: Mutex<()> = Mutex::new(());

struct Env {
    s: Scratch,
    /// Tools found usable by the scenario user outside the sandbox.
    tools: Vec<&'static str>,
    rust_bin: String,
}

fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The toolchain's bin directory, as seen by the test's own environment (rustup's proxies in
/// ~/.cargo/bin need a rustup home, which the scenario's scratch home does not have and uid
/// 65534 cannot reach; the toolchain's own binaries do not).
fn rust_bin() -> Option<String> {
    let o = std::process::Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .ok()?;
    let root = String::from_utf8_lossy(&o.stdout).trim().to_string();
    (o.status.success() && !root.is_empty()).then(|| format!("{root}/bin"))
}

/// A toolchain the scenario user cannot reach (rustup's, under root's 0700 home, for uid 65534)
/// is linked file by file into a world-readable directory: hard links, so nothing is copied, and
/// what is tested is the sandbox, not the toolchain directory's permissions. The directory is
/// named after the toolchain and reused by later runs. `None` when that cannot be done (not
/// root, or another file system).
fn linked_rust_bin(bin: &str) -> Option<String> {
    static LINKED: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    LINKED
        .get_or_init(|| {
            if !nix::unistd::geteuid().is_root() {
                return None;
            }
            let sysroot = std::path::Path::new(bin).parent()?;
            let name = sysroot.file_name()?.to_string_lossy().into_owned();
            let dst = std::path::PathBuf::from(format!("/var/tmp/sbx-test-toolchain-{name}"));
            let usable = |d: &std::path::Path| {
                std::process::Command::new(d.join("bin/rustc"))
                    .arg("--version")
                    .output()
                    .is_ok_and(|o| o.status.success())
            };
            if !usable(&dst) {
                let _ = std::fs::remove_dir_all(&dst);
                let tmp = dst.with_extension(format!("tmp{}", std::process::id()));
                let ok = std::process::Command::new("cp")
                    .arg("-al")
                    .arg(sysroot)
                    .arg(&tmp)
                    .status()
                    .is_ok_and(|s| s.success());
                if !ok || std::fs::rename(&tmp, &dst).is_err() {
                    let _ = std::fs::remove_dir_all(&tmp);
                    return None;
                }
            }
            std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(0o755)).ok()?;
            Some(dst.join("bin").display().to_string())
        })
        .clone()
}

fn setup(user: Option<u32>, precreate_caches: bool) -> Env {
    let s = Scratch::new(user);
    // Non-secret dotfiles the home script reads.
    std::fs::create_dir_all(s.home.join(".config/wl")).unwrap();
    std::fs::write(
        s.home.join(".gitconfig"),
        "[wl]\n\tmarker = home-gitconfig\n",
    )
    .unwrap();
    std::fs::write(s.home.join(".config/wl/settings"), "wl-setting\n").unwrap();
    std::fs::write(s.home.join(".bashrc"), "# wl-bashrc\n").unwrap();
    if precreate_caches {
        for d in [".npm", ".cache", ".cargo/registry", ".cargo/git"] {
            std::fs::create_dir_all(s.home.join(d)).unwrap();
        }
    }
    let wl = s.ws.join(".wl");
    std::fs::create_dir_all(&wl).unwrap();
    for (name, text, _) in SCRIPTS {
        std::fs::write(wl.join(format!("{name}.sh")), text).unwrap();
    }
    s.chown_all();

    // Which tools the scenario user can run, outside the sandbox.
    let mut tools = Vec::new();
    for t in [
        "git", "gcc", "g++", "make", "python3", "node", "npm", "ps", "script",
    ] {
        let o = s.outside(&format!("PATH={STD_PATH}; command -v {t} >/dev/null"));
        if require(&format!("tool `{t}`"), o.status.success()) {
            tools.push(t);
        }
    }
    // A JDK is not among what the tests install: its items run where one is there.
    let javac = s.outside(&format!("PATH={STD_PATH}; command -v javac >/dev/null"));
    if javac.status.success() {
        tools.push("javac");
    }
    let mut rb = String::new();
    match rust_bin() {
        None => {
            require("tool `rustc`/`cargo`", false);
        }
        Some(bin) => {
            let usable = |bin: &str| {
                let q = sh_quote(bin);
                s.outside(&format!(
                    "PATH={q}:{STD_PATH}; {q}/rustc --version && {q}/cargo --version"
                ))
            };
            let mut o = usable(&bin);
            let mut bin = bin;
            if !o.status.success()
                && let Some(linked) = linked_rust_bin(&bin)
            {
                o = usable(&linked);
                bin = linked;
            }
            if o.status.success() {
                tools.push("rust");
                rb = bin;
            } else {
                eprintln!(
                    "SKIP rust items for {}: the toolchain in {bin} is not usable by this user even \
                     outside the sandbox (its own file permissions): {}",
                    s.label(),
                    text(&o).trim()
                );
            }
        }
    }

    // The workspace is a git repository made outside the sandbox, as a real checkout would be.
    let o = s.outside(
        "git -c init.defaultBranch=main init -q && \
         git -c user.name=t -c user.email=t@e commit -q --allow-empty -m init",
    );
    if tools.contains(&"git") {
        assert!(o.status.success(), "git init: {}", text(&o));
    }
    Env {
        s,
        tools,
        rust_bin: rb,
    }
}

/// Run the scripts of `list` under `profile`; return the failures (empty when all is well).
fn run_list(env: &Env, profile: &str, list: &[&str]) -> Vec<String> {
    let s = &env.s;
    // strict allows 256 processes: ask for 200 there. (RLIMIT_NPROC counts every task of the
    // real uid on the host, so as root on a busy host this can fail: reported, not hidden.)
    let procs = if profile == "strict" { 200 } else { 300 };
    let envsh = format!(
        "WL_RUST_BIN={}\nWL_PROCS={procs}\n",
        sh_quote(&env.rust_bin)
    );
    let p = s.ws.join(".wl/env.sh");
    std::fs::write(&p, envsh).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();

    let mut failures = Vec::new();
    for name in list {
        let (_, _, items) = SCRIPTS.iter().find(|(n, _, _)| n == name).unwrap();
        let wanted: Vec<&str> = items
            .iter()
            .copied()
            .filter(|i| {
                let missing: Vec<_> = tools_of(i)
                    .iter()
                    .filter(|t| !env.tools.contains(t))
                    .collect();
                if !missing.is_empty() {
                    eprintln!(
                        "SKIP {i} under {profile} as {}: needs {missing:?}",
                        s.label()
                    );
                }
                missing.is_empty()
            })
            .collect();
        if wanted.is_empty() {
            continue;
        }
        let _guard = (*name == "limits").then(|| LIMITS.lock().unwrap_or_else(|e| e.into_inner()));
        let out = s
            .sbx(&[
                "run",
                "--profile",
                profile,
                "--mode",
                "sandbox-auto",
                "--",
                "sh",
                "-c",
                &format!(". .wl/env.sh; . .wl/{name}.sh"),
            ])
            .output()
            .unwrap();
        let out_text = stdout(&out);
        let ok = |i: &str| out_text.lines().any(|l| l == format!("OK {i}"));
        let mut bad = Vec::new();
        for i in &wanted {
            match (ok(i), expected_to_fail(profile, i, &env.rust_bin)) {
                (true, None) | (false, Some(_)) => {}
                (false, None) => bad.push(format!("{i} did not work")),
                (true, Some(why)) => bad.push(format!("{i} worked, but should not ({why})")),
            }
        }
        if !bad.is_empty() {
            failures.push(format!(
                "--- {name}.sh under {profile} as {} (exit {:?}): {}\n{}",
                s.label(),
                out.status.code(),
                bad.join("; "),
                text(&out)
            ));
        }
    }
    failures
}

fn check_profile(profile: &str, list: &[&str]) {
    let mut failures = Vec::new();
    for u in users() {
        let env = setup(u, false);
        failures.extend(run_list(&env, profile, list));
    }
    assert!(
        failures.is_empty(),
        "ordinary work failed under {profile}:\n{}",
        failures.join("\n")
    );
}

#[test]
fn workload_under_workspace() {
    check_profile("workspace", WRITE_LIST);
}

#[test]
fn workload_under_workspace_net() {
    check_profile("workspace-net", WRITE_LIST);
}

#[test]
fn workload_under_ci() {
    check_profile("ci", WRITE_LIST);
}

#[test]
fn workload_under_strict() {
    check_profile("strict", WRITE_LIST);
}

#[test]
fn workload_under_read_only() {
    check_profile("read-only", READ_LIST);
}

/// Under `read-only` a write into the workspace fails; the same write works under `workspace`.
#[test]
fn read_only_refuses_workspace_writes_that_workspace_allows() {
    for u in users() {
        let s = Scratch::new(u);
        let write = "printf written > probe.txt && cat probe.txt";
        let run = |profile: &str| {
            s.sbx(&[
                "run",
                "--profile",
                profile,
                "--mode",
                "sandbox-auto",
                "--",
                "sh",
                "-c",
                write,
            ])
            .output()
            .unwrap()
        };
        let ro = run("read-only");
        assert_ne!(ro.status.code(), Some(0), "{}: {}", s.label(), text(&ro));
        assert!(!s.ws.join("probe.txt").exists(), "{}", s.label());
        let ws = run("workspace");
        assert_eq!(ws.status.code(), Some(0), "{}: {}", s.label(), text(&ws));
        assert_eq!(stdout(&ws), "written", "{}", s.label());
        assert!(s.ws.join("probe.txt").exists(), "{}", s.label());
        // The private tmp is read-only's writable set, through the gate as well.
        let tmp = s
            .sbx(&[
                "run",
                "--profile",
                "read-only",
                "--",
                "sh",
                "-c",
                "printf t > /tmp/p && cat /tmp/p",
            ])
            .output()
            .unwrap();
        assert_eq!(tmp.status.code(), Some(0), "{}: {}", s.label(), text(&tmp));
        assert_eq!(stdout(&tmp), "t", "{}", s.label());
    }
}

fn check_ci_caches(precreate: bool) {
    let mut failures = Vec::new();
    for u in users() {
        let env = setup(u, precreate);
        failures.extend(run_list(&env, "ci", &["ci-caches"]));
    }
    assert!(
        failures.is_empty(),
        "tool caches in the home directory failed under ci ({} cache directories):\n{}",
        if precreate {
            "existing"
        } else {
            "fresh home, no"
        },
        failures.join("\n")
    );
}

/// Under `ci`, npm, pip and cargo write their caches in the home directory, which already has
/// the cache directories (a runner that has used the tools before).
#[test]
fn ci_tool_caches_in_home_with_existing_cache_dirs() {
    check_ci_caches(true);
}

/// The same in a fresh home where `~/.npm`, `~/.cache` and `~/.cargo/registry` do not exist yet:
/// the tools create them on first use.
#[test]
fn ci_tool_caches_in_a_fresh_home() {
    check_ci_caches(false);
}

/// A plain `sh -c 'echo x > /dev/shm/f'` (the default mode, as a user would run it) reaches the
/// sandbox: /dev/shm is the sandbox's own private tmpfs, not a system directory.
#[test]
fn floor_allows_writes_to_private_dev_shm() {
    for u in users() {
        let s = Scratch::new(u);
        let o = s.run("workspace", "echo shm-ok > /dev/shm/f && cat /dev/shm/f");
        assert_eq!(stdout(&o), "shm-ok\n", "{}: {}", s.label(), text(&o));
    }
}

/// The caller's rustup and cargo homes (variables, not the scratch home) reach the command: a
/// crate is built and run through rustup's proxies under `workspace` and `ci`. Paired: the same
/// file-system grants without the caller's environment (`inherit = "none"`) leave the proxy
/// without a toolchain. As root, whose rustup installation this is.
#[test]
fn cargo_through_rustup_proxies_with_the_callers_homes() {
    let proxies = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".cargo")))
        .map(|c| c.join("bin"));
    let rustup_home = std::env::var_os("RUSTUP_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".rustup")));
    let (Some(bin), Some(rustup_home)) = (proxies, rustup_home) else {
        require("a rustup installation", false);
        return;
    };
    if !require("rustup's proxies", bin.join("rustup").exists()) || users().is_empty() {
        return;
    }
    let s = Scratch::new(None);
    let cleared = s.write_profile(
        "cleared",
        "extends = \"workspace\"\n[environment]\ninherit = \"none\"\n",
    );
    let script = "rm -rf hello && cargo new -q --vcs none hello && cd hello && cargo run -q";
    let run = |profile: &str| {
        s.command(profile, script)
            .env("PATH", format!("{}:{STD_PATH}", bin.display()))
            .env("RUSTUP_HOME", &rustup_home)
            .env("CARGO_HOME", bin.parent().unwrap())
            .output()
            .unwrap()
    };
    for profile in ["workspace", "ci"] {
        let o = run(profile);
        assert_eq!(stdout(&o), "Hello, world!\n", "{profile}: {}", text(&o));
    }
    let o = run(cleared.to_str().unwrap());
    assert!(
        !o.status.success() && text(&o).contains("rustup"),
        "without RUSTUP_HOME the proxy found a toolchain: {}",
        text(&o)
    );
}
