//! `sbx run` keeps its plan for the next run in a store of plans, and a later run uses it only
//! while the file system answers as it did and only when sbx itself wrote it: a secret that
//! appears between two runs is hidden in the next, a record copied from a wider profile's or
//! changed by anyone is not used, and no sandboxed command can see the store or reach the key
//! its records are signed with; as root and as uid 65534. The directories are left to settle
//! first, so that the stored plan's questions are answered by their directories' stamps.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;
mod containment_common;
mod sandbox_common;
use common::*;
use containment_common::WIDE;
use sandbox_common::syscall_probe;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const AWS: &str = "SENTINEL-STORE-AWS-2c8e";
const GH: &str = "SENTINEL-STORE-GH-7a41";
const PLAIN: &str = "SENTINEL-STORE-PLAIN-e05b";
/// The built-in profiles.
const PROFILES: [&str; 6] = [
    "workspace",
    "workspace-net",
    "workspace-registries",
    "ci",
    "strict",
    "read-only",
];

/// A store of plans of the scratch tree's own, owned by its user.
fn store_of(s: &Scratch) -> PathBuf {
    let dir = s.root.path().join("plans");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    if let Some(uid) = s.user {
        std::os::unix::fs::chown(&dir, Some(uid), Some(uid)).unwrap();
    }
    dir
}

/// `sh -c script` under `profile`, keeping plans in `store`.
fn run_with(s: &Scratch, store: &Path, profile: &str, script: &str) -> Output {
    let mut c: Command = s.command(profile, script);
    c.env("SBX_PLAN_STORE", store).output().unwrap()
}

/// The output of `c`, which must end: a run that waits forever (on a FIFO, say) is killed after
/// a minute and fails the test.
fn ends(c: &mut Command) -> Output {
    let child = c
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output().unwrap()));
    match rx.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(out) => out,
        Err(_) => {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
            panic!("the run did not end");
        }
    }
}

/// The records in `store`, by name, with their bytes.
fn records(store: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(store)
        .unwrap()
        .flatten()
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(e.path()).unwrap())
        })
        .collect();
    v.sort();
    v
}

/// Runs `script` under `profile` until its record has settled: a pause lets the directories'
/// change times fall behind the stamps' margin, the later runs confirm the answers, and then a
/// run leaves the record as it found it, which only a run that used the stored plan does.
/// Other tests change directories the plan asked about meanwhile (`/var/tmp`): a run that
/// confirms an answer anew writes the record again, and the next one is tried after a pause.
/// Returns the record's name.
fn settle(s: &Scratch, store: &Path, profile: &str, script: &str) -> String {
    let before: Vec<String> = records(store).into_iter().map(|(n, _)| n).collect();
    let mut settled = false;
    for _ in 0..8 {
        run_with(s, store, profile, script);
        std::thread::sleep(std::time::Duration::from_millis(1200));
        run_with(s, store, profile, script);
        let then = records(store);
        run_with(s, store, profile, script);
        if records(store) == then {
            settled = true;
            break;
        }
    }
    assert!(settled, "{}: the record never settled", s.label());
    let made: Vec<String> = records(store)
        .into_iter()
        .map(|(n, _)| n)
        .filter(|n| !before.contains(n))
        .collect();
    assert_eq!(made.len(), 1, "{}: records made: {made:?}", s.label());
    made[0].clone()
}

#[test]
fn a_secret_made_between_two_runs_is_hidden_in_the_next_though_the_plan_was_stored() {
    for user in users() {
        let s = Scratch::new(user);
        let store = store_of(&s);
        let read = "for f in .aws/credentials .config/gh/hosts.yml later.txt; do \
                    cat \"$HOME/$f\" 2>/dev/null; echo \"|$f\"; done\n";
        std::fs::write(s.ws.join("read.sh"), read).unwrap();
        std::fs::create_dir_all(s.home.join(".config")).unwrap();
        s.chown_all();
        let name = settle(&s, &store, "workspace", "sh ./read.sh");
        let stored = records(&store);
        std::fs::create_dir_all(s.home.join(".aws")).unwrap();
        std::fs::write(s.home.join(".aws/credentials"), AWS).unwrap();
        std::fs::create_dir_all(s.home.join(".config/gh")).unwrap();
        std::fs::write(s.home.join(".config/gh/hosts.yml"), GH).unwrap();
        std::fs::write(s.home.join("later.txt"), PLAIN).unwrap();
        s.chown_all();
        let outside = stdout(&s.outside("sh ./read.sh"));
        for sentinel in [AWS, GH, PLAIN] {
            assert!(outside.contains(sentinel), "{}: {outside}", s.label());
        }
        let out = stdout(&run_with(&s, &store, "workspace", "sh ./read.sh"));
        assert!(out.contains(PLAIN), "{}: {out}", s.label());
        for secret in [AWS, GH] {
            assert!(!out.contains(secret), "{}: {out}", s.label());
        }
        // The run planned afresh and stored the new plan in place of the old.
        let now = records(&store);
        // So does a run through the permission gate, which plans as it loads.
        let mut gated = s.sbx(&["run", "--profile", "workspace", "--", "sh", "./read.sh"]);
        let out = stdout(&gated.env("SBX_PLAN_STORE", &store).output().unwrap());
        assert!(out.contains(PLAIN), "{}: {out}", s.label());
        for secret in [AWS, GH] {
            assert!(!out.contains(secret), "{}: {out}", s.label());
        }
        assert_eq!(now.len(), 1, "{}", s.label());
        assert_eq!(now[0].0, name, "{}", s.label());
        assert_ne!(now, stored, "{}: the stale record was kept", s.label());
    }
}

#[test]
fn a_record_sbx_did_not_write_for_this_plan_is_not_used() {
    for user in users() {
        let s = Scratch::new(user);
        let store = store_of(&s);
        let wide = s.write_profile("wide", WIDE);
        let write = "echo x > \"$HOME/out\"";
        let narrow = settle(&s, &store, "workspace", write);
        assert!(!s.home.join("out").exists(), "{}", s.label());
        let widened = settle(&s, &store, wide.to_str().unwrap(), "true");
        // A wider profile's record, signed for its own name, put in place of the narrow one.
        std::fs::copy(store.join(&widened), store.join(&narrow)).unwrap();
        let blocked = run_with(&s, &store, "workspace", write);
        assert_ne!(blocked.status.code(), Some(0), "{}", s.label());
        assert!(!s.home.join("out").exists(), "{}: wrote home", s.label());
        // Its own record with one byte of what its code vouches for changed.
        run_with(&s, &store, "workspace", write);
        let mut bytes = std::fs::read(store.join(&narrow)).unwrap();
        bytes[40] ^= 1;
        std::fs::write(store.join(&narrow), &bytes).unwrap();
        let blocked = run_with(&s, &store, "workspace", write);
        assert_ne!(blocked.status.code(), Some(0), "{}", s.label());
        assert!(!s.home.join("out").exists(), "{}: wrote home", s.label());
        assert_ne!(
            std::fs::read(store.join(&narrow)).unwrap(),
            bytes,
            "{}: the changed record was kept",
            s.label()
        );
        // The same write under the wide profile, whose record it is, goes through.
        let allowed = run_with(&s, &store, wide.to_str().unwrap(), write);
        assert_eq!(allowed.status.code(), Some(0), "{}", s.label());
        assert!(s.home.join("out").exists(), "{}", s.label());
    }
}

/// The questions part of a record is read only when a stamp moved; the head's code vouches
/// for it by its digest. Here it is replaced by an empty question list (which, believed, would
/// let the stale plan hold whatever changed) as a secret appears: the secret stays hidden.
#[test]
fn a_record_whose_questions_were_replaced_is_not_believed() {
    for user in users() {
        let s = Scratch::new(user);
        let store = store_of(&s);
        let read = "cat \"$HOME/.config/gh/hosts.yml\" 2>&1; echo \"|done\"";
        std::fs::create_dir_all(s.home.join(".config")).unwrap();
        s.chown_all();
        let name = settle(&s, &store, "workspace", read);
        let mut bytes = std::fs::read(store.join(&name)).unwrap();
        let head = u32::from_le_bytes(bytes[32..36].try_into().unwrap()) as usize;
        // An array of two empty arrays: no questions, none confirmed.
        bytes.truncate(36 + head);
        bytes.extend_from_slice(&[0x92, 0x90, 0x90]);
        std::fs::write(store.join(&name), &bytes).unwrap();
        std::fs::create_dir_all(s.home.join(".config/gh")).unwrap();
        std::fs::write(s.home.join(".config/gh/hosts.yml"), GH).unwrap();
        s.chown_all();
        let outside = stdout(&s.outside(read));
        assert!(outside.contains(GH), "{}: {outside}", s.label());
        let out = stdout(&run_with(&s, &store, "workspace", read));
        assert!(out.contains("|done"), "{}: {out}", s.label());
        assert!(!out.contains(GH), "{}: {out}", s.label());
    }
}

#[test]
fn no_sandboxed_command_sees_the_store_or_reaches_the_key_of_its_records() {
    for user in users() {
        let s = Scratch::new(user);
        let uid = user.unwrap_or_else(|| nix::unistd::geteuid().as_raw());
        let default = format!("/dev/shm/sbx-plans-{uid}");
        // keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0): the user's keyring.
        let script = format!(
            "ls -d {default} 2>&1; {}",
            syscall_probe("250", ", 0, -4, 0")
        );
        for profile in PROFILES {
            let out = text(&s.run(profile, &script));
            assert!(
                out.contains("No such file"),
                "{} {profile}: {out}",
                s.label()
            );
            assert!(out.contains("errno 1"), "{} {profile}: {out}", s.label());
        }
        // Outside, the store is there after a run and the keyring answers.
        let outside = text(&s.outside(&script));
        assert!(
            !outside.contains("No such file"),
            "{}: {outside}",
            s.label()
        );
        assert!(outside.contains("errno 0"), "{}: {outside}", s.label());
    }
}

#[test]
fn a_record_that_is_a_fifo_and_a_store_that_became_a_link_are_not_followed() {
    for user in users() {
        let s = Scratch::new(user);
        let store = store_of(&s);
        let name = settle(&s, &store, "workspace", "true");
        // A FIFO at the record's name: opening it would wait for a writer.
        std::fs::remove_file(store.join(&name)).unwrap();
        nix::unistd::mkfifo(
            &store.join(&name),
            nix::sys::stat::Mode::from_bits_truncate(0o600),
        )
        .unwrap();
        if let Some(uid) = user {
            std::os::unix::fs::lchown(store.join(&name), Some(uid), Some(uid)).unwrap();
        }
        let mut c = s.command("workspace", "echo ran");
        let ran = ends(c.env("SBX_PLAN_STORE", &store));
        assert_eq!(stdout(&ran).trim(), "ran", "{}", s.label());
        assert!(
            store.join(&name).is_file(),
            "{}: the FIFO stayed",
            s.label()
        );
        // The store's name made a link to another directory of the user's.
        let victim = s.root.path().join("victim");
        std::fs::create_dir(&victim).unwrap();
        for i in 0..40 {
            std::fs::write(victim.join(format!("file{i:02}")), "kept").unwrap();
        }
        if let Some(uid) = user {
            for e in std::fs::read_dir(&victim).unwrap().flatten() {
                std::os::unix::fs::chown(e.path(), Some(uid), Some(uid)).unwrap();
            }
            std::os::unix::fs::chown(&victim, Some(uid), Some(uid)).unwrap();
        }
        std::fs::rename(&store, s.root.path().join("plans.away")).unwrap();
        std::os::unix::fs::symlink(&victim, &store).unwrap();
        for _ in 0..3 {
            let ran = run_with(&s, &store, "workspace", "echo ran");
            assert_eq!(stdout(&ran).trim(), "ran", "{}", s.label());
        }
        let left = std::fs::read_dir(&victim).unwrap().count();
        assert_eq!(left, 40, "{}: the victim directory changed", s.label());
        // Without the link, the same runs write their record in the store.
        std::fs::remove_file(&store).unwrap();
        std::fs::rename(s.root.path().join("plans.away"), &store).unwrap();
        std::fs::remove_file(store.join(&name)).unwrap();
        run_with(&s, &store, "workspace", "echo ran");
        assert!(store.join(&name).is_file(), "{}", s.label());
    }
}

#[test]
fn a_profile_file_is_known_by_its_text_whatever_its_name() {
    for user in users() {
        let s = Scratch::new(user);
        let store = store_of(&s);
        std::fs::write(s.home.join("a.txt"), "SENTINEL-STORE-A-51f0").unwrap();
        std::fs::write(s.home.join("b.txt"), "SENTINEL-STORE-B-9d3c").unwrap();
        // A file whose name starts as a built-in's source does.
        let file = s.ws.join("builtin:p.toml");
        let deny = |f: &str| {
            format!("extends = \"workspace\"\n[filesystem]\ndeny_read = [\"{{home}}/{f}\"]\n")
        };
        std::fs::write(&file, deny("a.txt")).unwrap();
        s.chown_all();
        let read = "cat \"$HOME/a.txt\" \"$HOME/b.txt\" 2>/dev/null; true";
        settle(&s, &store, "builtin:p.toml", read);
        let before = stdout(&run_with(&s, &store, "builtin:p.toml", read));
        assert!(
            !before.contains("SENTINEL-STORE-A"),
            "{}: {before}",
            s.label()
        );
        assert!(
            before.contains("SENTINEL-STORE-B"),
            "{}: {before}",
            s.label()
        );
        std::fs::write(&file, deny("b.txt")).unwrap();
        let after = stdout(&run_with(&s, &store, "builtin:p.toml", read));
        assert!(after.contains("SENTINEL-STORE-A"), "{}: {after}", s.label());
        assert!(
            !after.contains("SENTINEL-STORE-B"),
            "{}: {after}",
            s.label()
        );
    }
}

#[test]
fn a_record_holds_no_text_of_the_files_planning_read() {
    for user in users() {
        let s = Scratch::new(user);
        let store = store_of(&s);
        let secret = "ghp_SENTINELSTORECRED4e2a";
        std::fs::write(
            s.home.join(".git-credentials"),
            format!("https://me:{secret}@example.com\n"),
        )
        .unwrap();
        std::fs::write(
            s.home.join(".gitconfig"),
            "# SENTINEL-STORE-GITCONFIG-0c1d\n[include]\n\tpath = ~/.git-credentials\n",
        )
        .unwrap();
        s.chown_all();
        settle(&s, &store, "workspace", "true");
        let all: Vec<u8> = records(&store).into_iter().flat_map(|(_, b)| b).collect();
        let has = |needle: &str| all.windows(needle.len()).any(|w| w == needle.as_bytes());
        // Planning read the git config (its path is among the questions), and kept no text.
        assert!(
            has(&format!("{}/.gitconfig", s.home.display())),
            "{}",
            s.label()
        );
        assert!(
            !has("SENTINEL-STORE-GITCONFIG"),
            "{}: a config's text",
            s.label()
        );
        assert!(!has(secret), "{}: an included file's text", s.label());
    }
}
