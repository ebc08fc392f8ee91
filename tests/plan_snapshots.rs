//! Each built-in profile's whole road, profile -> capability set -> plan, computed against a
//! fake machine (a file system in memory, a host that offers everything) and compared whole
//! with the plan checked in under `tests/data/plans/`. A change to a profile, to resolution or
//! to planning shows in review as a change to these files: `SBX_BLESS=1 cargo test --test
//! plan_snapshots` writes them afresh.
use sbx::WorkspaceContext;
use sbx::capability::{CapabilitySet, DeniedSyscall, Origin, Protection, Requirement};
use sbx::host::{Availability, Host};
use sbx::plan::{FakeFs, PlanError, PlanInput, capable_host, plan};
use sbx::profile::{BUILTIN_NAMES, Profile, Vars};
use std::path::{Path, PathBuf};

const HOME: &str = "/home/user";
const WORKSPACE: &str = "/home/user/project";

/// A small Debian-like machine: a merged /usr, a home with credentials in it, and a git
/// repository as the workspace, with a hooks directory named by its config.
fn machine() -> FakeFs {
    FakeFs::new()
        .file("/usr/bin/sh", "")
        .file("/usr/bin/git", "")
        .dir("/usr/lib/x86_64-linux-gnu")
        .dir("/usr/lib64")
        .symlink("/bin", "usr/bin")
        .symlink("/sbin", "usr/sbin")
        .symlink("/lib", "usr/lib")
        .symlink("/lib64", "usr/lib64")
        .dir("/usr/sbin")
        .file("/etc/passwd", "")
        .file("/etc/group", "")
        .file("/etc/shadow", "")
        .file("/etc/hosts", "")
        .file("/etc/resolv.conf", "")
        .dir("/etc/ssl/certs")
        .file("/etc/ssh/ssh_config", "")
        .file("/etc/ssh/ssh_host_ed25519_key", "")
        .file("/etc/ssh/ssh_host_ed25519_key.pub", "")
        .dir("/proc")
        .file("/dev/null", "")
        .dir("/tmp")
        .dir("/var/tmp")
        .dir("/run/user/1000")
        .file(&format!("{HOME}/.ssh/id_ed25519"), "")
        .file(&format!("{HOME}/.aws/credentials"), "")
        .file(&format!("{HOME}/.config/gh/hosts.yml"), "")
        .file(&format!("{HOME}/.gitconfig"), "[user]\n\tname = u\n")
        .dir(&format!("{HOME}/.cargo/registry"))
        .dir(&format!("{HOME}/.cache"))
        .file(&format!("{HOME}/notes.txt"), "")
        .file(
            &format!("{WORKSPACE}/.git/config"),
            "[core]\n\thooksPath = .githooks\n",
        )
        .file(&format!("{WORKSPACE}/.git/HEAD"), "ref: refs/heads/main\n")
        .dir(&format!("{WORKSPACE}/.git/hooks"))
        .dir(&format!("{WORKSPACE}/.git/modules/sub/hooks"))
        .file(&format!("{WORKSPACE}/.git/modules/sub/config"), "")
        .dir(&format!("{WORKSPACE}/.githooks"))
        .file(&format!("{WORKSPACE}/.github/workflows/ci.yml"), "")
        .file(&format!("{WORKSPACE}/.env"), "")
        .file(&format!("{WORKSPACE}/.env.local"), "")
        .file(&format!("{WORKSPACE}/src/main.rs"), "")
}

fn vars() -> Vars {
    Vars {
        workspace: WorkspaceContext::new(WORKSPACE, HOME),
        // The capable host gives every run a private /tmp.
        tmp: "/tmp".into(),
    }
}

/// The capable host with user namespaces blocked (as Ubuntu 24.04's AppArmor does): no
/// namespace at all, so no private `/tmp` either.
fn host_without_namespaces() -> Host {
    let blocked = Availability::Missing {
        reason: "blocked by the test".into(),
        fix: "none".into(),
    };
    Host {
        user_namespaces: blocked.clone(),
        namespaces: blocked,
        ..capable_host(1000)
    }
}

/// The capability set and plan of a built-in profile on the fake machine, as the checked-in
/// text: pretty JSON ending in a newline.
fn snapshot(name: &str) -> String {
    render(name, &capable_host(1000), "/tmp", "capable_host(1000)")
}

fn render(name: &str, host: &Host, tmp: &str, host_name: &str) -> String {
    let profile = Profile::load(name).unwrap_or_else(|e| panic!("{name}: {e}"));
    let fs = machine().dir(tmp);
    let vars = Vars {
        tmp: tmp.into(),
        ..vars()
    };
    let caps = profile
        .resolve_in(&vars, &fs)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let input = PlanInput {
        caps: &caps,
        host,
        tmp: &vars.tmp,
        below: &[],
    };
    let plan = plan(&input, &fs).unwrap_or_else(|e| panic!("{name}: {e}"));
    let doc = serde_json::json!({
        "profile": name,
        "machine": format!("tests/plan_snapshots.rs: machine(), {host_name}"),
        "capabilities": caps,
        "plan": plan,
    });
    serde_json::to_string_pretty(&doc).unwrap_or_else(|e| panic!("{name}: {e}")) + "\n"
}

fn path_of(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/plans")
        .join(format!("{name}.json"))
}

#[test]
fn every_builtin_profile_plans_as_checked_in() {
    let bless = std::env::var_os("SBX_BLESS").is_some_and(|v| v == "1");
    let mut differ = Vec::new();
    let degraded = render(
        "workspace",
        &host_without_namespaces(),
        // Without a mount namespace `{tmp}` is a fresh directory per run.
        "/tmp/sbx-run",
        "host_without_namespaces()",
    );
    // `base`, the common base of the others, can be named as well.
    let cases = BUILTIN_NAMES
        .iter()
        .chain(&["base"])
        .map(|name| (name.to_string(), snapshot(name)))
        .chain([("workspace-without-namespaces".to_string(), degraded)]);
    for (name, got) in cases {
        let path = path_of(&name);
        if bless {
            std::fs::create_dir_all(path.parent().unwrap_or(Path::new(".")))
                .and_then(|()| std::fs::write(&path, &got))
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            continue;
        }
        let want = std::fs::read_to_string(&path).unwrap_or_default();
        if got != want {
            let line = got
                .lines()
                .zip(want.lines())
                .position(|(a, b)| a != b)
                .unwrap_or_else(|| got.lines().count().min(want.lines().count()));
            eprintln!(
                "{}: differs from line {}:\n  got:  {}\n  want: {}",
                path.display(),
                line + 1,
                got.lines().nth(line).unwrap_or("(end)"),
                want.lines().nth(line).unwrap_or("(end)"),
            );
            differ.push(name);
        }
    }
    assert!(
        differ.is_empty(),
        "plans differ from the checked-in ones for {differ:?}; review the change and run \
         `SBX_BLESS=1 cargo test --test plan_snapshots` to accept it"
    );
}

/// The snapshots can fail: another machine gives another plan, and it is compared whole.
#[test]
fn the_snapshot_depends_on_the_machine_and_the_profile() {
    let a = snapshot("workspace");
    assert_eq!(a, snapshot("workspace"), "planning is deterministic");
    assert_ne!(a, snapshot("strict"));
    let profile = Profile::load("workspace").unwrap_or_else(|e| panic!("{e}"));
    let bare = FakeFs::new().dir(WORKSPACE).dir(HOME).dir("/tmp");
    let caps = profile
        .resolve_in(&vars(), &bare)
        .unwrap_or_else(|e| panic!("{e}"));
    let full = profile
        .resolve_in(&vars(), &machine())
        .unwrap_or_else(|e| panic!("{e}"));
    // The hooks directory the repository's config names is kept read-only only where it exists.
    let hooks = Path::new(WORKSPACE).join(".githooks");
    assert!(full.fs.deny_write.iter().any(|e| e.path == hooks));
    assert!(!caps.fs.deny_write.iter().any(|e| e.path == hooks));
}

/// What the plan takes from the profile travels in the capability set: a set narrowed with
/// one more required protection and one more denied syscall plans with them.
#[test]
fn the_plan_takes_requirements_and_syscalls_from_the_capability_set() {
    let profile = Profile::load("workspace").unwrap_or_else(|e| panic!("{e}"));
    let fs = machine();
    let mut caps = profile
        .resolve_in(&vars(), &fs)
        .unwrap_or_else(|e| panic!("{e}"));
    let host = host_without_namespaces();
    let origin = Origin::builtin("narrowed");
    let plan_on = |caps: &CapabilitySet| {
        let input = PlanInput {
            caps,
            host: &host,
            tmp: Path::new("/tmp"),
            below: &[],
        };
        plan(&input, &fs)
    };
    // Paired: without the requirement the same host plans, and chown is not denied.
    let before = plan_on(&caps).unwrap_or_else(|e| panic!("{e}"));
    let seccomp = before.seccomp.unwrap_or_else(|| panic!("no seccomp"));
    assert!(!seccomp.denied.contains(&"chown".to_string()));
    caps.extra_denied_syscalls.push(DeniedSyscall {
        name: "chown".into(),
        origin: origin.clone(),
    });
    let seccomp = plan_on(&caps)
        .unwrap_or_else(|e| panic!("{e}"))
        .seccomp
        .unwrap_or_else(|| panic!("no seccomp"));
    assert!(seccomp.denied.contains(&"chown".to_string()));
    assert_eq!(
        seccomp.extra.last(),
        Some(&("chown".to_string(), origin.clone()))
    );
    caps.requires.push(Requirement {
        protection: Protection::NetworkNamespace,
        origin,
    });
    match plan_on(&caps) {
        Err(PlanError::Missing { protection, .. }) => assert_eq!(protection, "network-namespace"),
        other => panic!("planned without a required network namespace: {other:?}"),
    }
}

/// `TMPDIR` is the run's `{tmp}`: a profile's own value is kept where `/tmp` is the run's
/// private tmpfs, and replaced where `{tmp}` is a fresh directory on the host's `/tmp`.
#[test]
fn tmpdir_is_the_profiles_only_where_tmp_is_private() {
    let profile = Profile::load("workspace").unwrap_or_else(|e| panic!("{e}"));
    let fs = machine().dir("/tmp/sbx-run");
    let mut caps = profile
        .resolve_in(&vars(), &fs)
        .unwrap_or_else(|e| panic!("{e}"));
    caps.env.set.insert("TMPDIR".into(), "/var/tmp".into());
    let tmpdir = |host: &Host, tmp: &str| {
        let input = PlanInput {
            caps: &caps,
            host,
            tmp: Path::new(tmp),
            below: &[],
        };
        let plan = plan(&input, &fs).unwrap_or_else(|e| panic!("{e}"));
        plan.env.set.get("TMPDIR").cloned()
    };
    assert_eq!(
        tmpdir(&capable_host(1000), "/tmp").as_deref(),
        Some("/var/tmp")
    );
    assert_eq!(
        tmpdir(&host_without_namespaces(), "/tmp/sbx-run").as_deref(),
        Some("/tmp/sbx-run")
    );
}
