//! A session makes each next call's sandbox ahead of it (a spare init, set up and waiting for
//! its command). A call started that way is as confined as one whose init is cloned for it,
//! and in namespaces nothing ran in before: what the previous call left in its private `/tmp`
//! and `/dev/shm`, or a process it left behind, is not there. An unused spare goes with the
//! session. As root and as uid 65534.
//!
//! Which road a call took is seen from inside: a spare init is cloned by sbx's `sbx-spares`
//! thread and keeps its name (`/proc/1/comm` in the sandbox's own PID namespace), while the
//! first call of a session has an init cloned for it, whose name is sbx's.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;
use common::session::{Session, eventually, spares_of};
use common::*;
use std::sync::Mutex;

/// One scenario at a time: a scratch directory made beside another's changes that one's plan
/// (its home's parent gains an entry to grant around), and the spare made for it goes unused.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

const PROBE: &str = r#"
printf 'init=%s\n' "$(cat /proc/1/comm)"
sleeper() { grep -qs '31\.0[7]' /proc/[0-9]*/cmdline; }
[ -e /tmp/left-behind ] && echo tmp-seen
[ -e /dev/shm/left-behind ] && echo shm-seen
sleeper && echo process-seen
cat "$HOME/.ssh/id_rsa" 2>/dev/null && echo secret-read
touch "$HOME/written" 2>/dev/null && echo home-written
touch ./ws-written && echo ws-ok
touch /tmp/left-behind /dev/shm/left-behind && echo marks-made
(sleep 31.07 >/dev/null 2>&1 &)
for i in 1 2 3 4 5 6 7 8 9 10; do sleeper && echo sleeper-runs && break; sleep 0.1; done
echo done
"#;

#[test]
fn a_call_started_in_a_spare_is_confined_and_fresh() {
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    for user in users() {
        let s = Scratch::new(user);
        std::fs::write(s.ws.join("probe.sh"), PROBE).unwrap();
        s.chown_all();
        let mut serve = Session::start(&s, "Bash(sh ./probe.sh)");
        let pid = serve.child.id();
        let mut inits = Vec::new();
        for id in ["1", "2", "3", "4"] {
            // From the second call on, once the spare is made (a call that comes sooner
            // takes the ordinary road).
            if id != "1" {
                assert!(eventually(|| spares_of(pid).len() == 1), "{}", s.label());
            }
            let out = serve.call(id, "sh ./probe.sh");
            let label = format!("{} call {id}: {out}", s.label());
            for done in ["ws-ok", "marks-made", "sleeper-runs", "done"] {
                assert!(out.contains(done), "{label}");
            }
            for leak in [
                "tmp-seen",
                "shm-seen",
                "process-seen",
                "secret-read",
                "home-written",
            ] {
                assert!(!out.contains(leak), "{label}");
            }
            inits.push(
                out.lines()
                    .find_map(|l| l.strip_prefix("init="))
                    .unwrap()
                    .to_string(),
            );
        }
        // The first call's init was cloned for it; the later ones were made ahead.
        assert_ne!(inits[0], "sbx-spares", "{}: {inits:?}", s.label());
        assert!(
            inits[1..].iter().all(|i| i == "sbx-spares"),
            "{}: {inits:?}",
            s.label()
        );
    }
}

#[test]
fn an_unused_spare_goes_with_its_session() {
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    for user in users() {
        let s = Scratch::new(user);
        std::fs::write(s.ws.join("probe.sh"), "echo ok\n").unwrap();
        s.chown_all();
        let mut serve = Session::start(&s, "Bash(sh ./probe.sh)");
        let pid = serve.child.id();
        assert!(serve.call("1", "sh ./probe.sh").contains("ok"));
        assert!(eventually(|| spares_of(pid).len() == 1), "{}", s.label());
        let spare = spares_of(pid)[0];
        drop(serve);
        let gone = eventually(|| !std::path::Path::new(&format!("/proc/{spare}")).exists());
        assert!(gone, "{}: spare {spare} outlived its session", s.label());
    }
}

/// A spare holds its mounts on the files that were at their paths when it was made. One whose
/// protected directory the host replaced in between (a rename, as editors and git do) would
/// leave the new one writable: it is not used, and the call gets a sandbox made now.
#[test]
fn a_spare_whose_paths_were_replaced_is_not_used() {
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let probe = "touch .git/hooks/pre-commit 2>/dev/null && echo hook-written\n\
                 touch ./plain && echo ws-ok\n";
    for user in users() {
        let s = Scratch::new(user);
        let hooks = s.ws.join(".git/hooks");
        let outs = across_a_host_change(&s, probe, "hook-written", || {
            // The host replaces the hooks directory while the spare waits.
            std::fs::rename(&hooks, s.ws.join(".git/hooks-old")).unwrap();
            std::fs::create_dir(&hooks).unwrap();
        });
        for out in &outs {
            assert!(out.contains("ws-ok"), "{}: {out}", s.label());
        }
    }
}

/// What `/proc/1/comm` says in a call's output (which road it took).
fn init_of(out: &str) -> Option<&str> {
    out.lines().find_map(|l| l.strip_prefix("init="))
}

/// One call, a change the host makes while the spare waits, and two calls after it: the
/// change must not weaken the call after it (`refused` never in its output), whether it ran
/// in a sandbox made now or, for the third call, in a spare made after the change. The three
/// outputs.
fn across_a_host_change(s: &Scratch, probe: &str, refused: &str, change: impl Fn()) -> [String; 3] {
    let script = format!("printf 'init=%s\\n' \"$(cat /proc/1/comm)\"\n{probe}echo end\n");
    std::fs::write(s.ws.join("probe.sh"), script).unwrap();
    s.chown_all();
    let mut serve = Session::start(s, "Bash(sh ./probe.sh)");
    let pid = serve.child.id();
    let first = serve.call("1", "sh ./probe.sh");
    assert!(eventually(|| spares_of(pid).len() == 1), "{}", s.label());
    change();
    s.chown_all();
    let second = serve.call("2", "sh ./probe.sh");
    assert!(eventually(|| spares_of(pid).len() == 1), "{}", s.label());
    let third = serve.call("3", "sh ./probe.sh");
    for out in [&first, &second, &third] {
        assert!(!out.contains(refused), "{}: {out}", s.label());
    }
    assert_ne!(
        init_of(&second),
        Some("sbx-spares"),
        "{}: {second}",
        s.label()
    );
    assert_eq!(
        init_of(&third),
        Some("sbx-spares"),
        "{}: {third}",
        s.label()
    );
    [first, second, third]
}

/// A secret reached through a link (dotfiles kept elsewhere) is hidden where the link leads;
/// the host saving the target by rename while the spare waits leaves the spare's mount on the
/// old file, so the spare is not used.
#[test]
fn a_spare_whose_hidden_link_target_was_replaced_is_not_used() {
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    for user in users() {
        let s = Scratch::new(user);
        std::fs::create_dir_all(s.home.join("dotfiles")).unwrap();
        std::fs::write(
            s.home.join("dotfiles/netrc"),
            "machine a password OLD-7c1\n",
        )
        .unwrap();
        std::os::unix::fs::symlink("dotfiles/netrc", s.home.join(".netrc")).unwrap();
        let netrc = s.home.join("dotfiles/netrc");
        across_a_host_change(&s, "cat \"$HOME/.netrc\" 2>/dev/null\n", "password", || {
            let new = s.home.join("dotfiles/.netrc.new");
            std::fs::write(&new, "machine a password NEW-7c1\n").unwrap();
            std::fs::rename(&new, &netrc).unwrap();
        });
    }
}

/// A protected directory the host removes and makes again (its inode number may well come
/// back) is not taken for the one the spare's read-only mount was on.
#[test]
fn a_spare_whose_protected_directory_was_made_again_is_not_used() {
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    for user in users() {
        let s = Scratch::new(user);
        let hooks = s.ws.join(".git/hooks");
        let probe = "touch .git/hooks/pre-commit 2>/dev/null && echo hook-written\n";
        across_a_host_change(&s, probe, "hook-written", || {
            std::fs::remove_dir_all(&hooks).unwrap();
            std::fs::create_dir(&hooks).unwrap();
        });
    }
}

/// A file system the host unmounts while the spare waits stays in the spare's copy of the
/// mount table: the spare is not used, and the next call does not see it. Root mounts it.
#[test]
fn a_spare_made_before_a_host_unmount_is_not_used() {
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !nix::unistd::geteuid().is_root() {
        eprintln!("skipped: mounting a tmpfs needs root");
        return;
    }
    for user in users() {
        let s = Scratch::new(user);
        let vault = s.ws.parent().unwrap().join("vault");
        std::fs::create_dir(&vault).unwrap();
        let mount = |args: &[&str]| {
            let ok = std::process::Command::new(args[0])
                .args(&args[1..])
                .status()
                .unwrap();
            assert!(ok.success(), "{args:?}");
        };
        let v = vault.to_str().unwrap().to_string();
        mount(&["mount", "-t", "tmpfs", "tmpfs", &v]);
        std::fs::write(vault.join("data"), "VAULT-DATA-3e9\n").unwrap();
        std::fs::set_permissions(&vault, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        std::fs::set_permissions(
            vault.join("data"),
            std::os::unix::fs::PermissionsExt::from_mode(0o644),
        )
        .unwrap();
        let probe = format!("printf 'init=%s\\n' \"$(cat /proc/1/comm)\"\ncat {v}/data\n");
        std::fs::write(s.ws.join("probe.sh"), probe).unwrap();
        s.chown_all();
        let mut serve = Session::start(&s, "Bash(sh ./probe.sh)");
        let pid = serve.child.id();
        assert!(
            serve.call("1", "sh ./probe.sh").contains("VAULT-DATA"),
            "{}",
            s.label()
        );
        // Its twin: with nothing changed, the spare is used and sees the mount too.
        assert!(eventually(|| spares_of(pid).len() == 1), "{}", s.label());
        let second = serve.call("2", "sh ./probe.sh");
        assert!(second.contains("VAULT-DATA"), "{}: {second}", s.label());
        assert_eq!(
            init_of(&second),
            Some("sbx-spares"),
            "{}: {second}",
            s.label()
        );
        assert!(eventually(|| spares_of(pid).len() == 1), "{}", s.label());
        mount(&["umount", &v]);
        let (third, result) = serve.call_result("3", "sh ./probe.sh");
        assert!(!third.contains("VAULT-DATA"), "{}: {third}", s.label());
        assert_eq!(result["exit_code"], 1, "{}: {third}", s.label());
        assert_ne!(
            init_of(&third),
            Some("sbx-spares"),
            "{}: {third}",
            s.label()
        );
    }
}
