//! A protected path stays protected when what leads to it changes: one replaced by a run beside
//! it, or removed and made again by the host during the run, is caught and moved to quarantine;
//! the target of a protected link, and the links and directories on the way to it, cannot be
//! moved away or re-pointed; a protected file written through a hard link made before the run is
//! moved out. The check after the run sees through what a command does to hide a path from it (a
//! directory made unlistable, a link in the workspace root to a deeper directory or into
//! `node_modules` or `.git`), and the permissions it gives back to look are only inside the
//! workspace, never through a link. Each paired with the same action allowed (under a profile
//! without protected paths, or with the path left alone), as root and as uid 65534.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;
mod containment_common;
mod sandbox_common;
use common::*;
use containment_common::*;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

#[test]
fn a_protected_path_replaced_while_a_run_beside_it_ends_is_caught() {
    // Run A makes .envrc and waits; run B starts while it exists (so B sees it as there
    // before), A ends and its .envrc goes to quarantine, then B writes a new one.
    let a = "echo a > .envrc && touch a-ready && i=0; \
             while [ ! -e b-started ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done";
    let b = "touch b-started; i=0; while [ -e .envrc ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; \
             echo evil > .envrc && echo WROTE";
    for u in users() {
        let s = Scratch::new(u);
        let mut run_a = s.command("workspace", a).spawn().unwrap();
        let mut waited = 0;
        while !s.ws.join("a-ready").exists() && waited < 600 {
            std::thread::sleep(std::time::Duration::from_millis(100));
            waited += 1;
        }
        let out_b = s.run("workspace", b);
        assert!(run_a.wait().unwrap().success(), "{}", s.label());
        assert!(
            stdout(&out_b).contains("WROTE"),
            "{}: {}",
            s.label(),
            text(&out_b)
        );
        assert!(
            !s.ws.join(".envrc").exists(),
            "{}: {}",
            s.label(),
            text(&out_b)
        );
        assert!(
            text(&out_b).contains("replaced"),
            "{}: {}",
            s.label(),
            text(&out_b)
        );
    }
}

/// Wait (up to a minute) for `path` to appear.
fn wait_for(path: &Path) {
    let mut waited = 0;
    while !path.exists() && waited < 600 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        waited += 1;
    }
}

fn piped(mut c: std::process::Command) -> std::process::Child {
    use std::process::Stdio;
    c.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The command waits for `host-done`, then writes into `.github`: what the host did between
/// decides whether the write lands.
const WRITE_AFTER_HOST: &str = "touch ready; i=0; \
     while [ ! -e host-done ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; \
     echo evil > .github/x && echo WROTE";

#[test]
fn a_protected_directory_the_host_removes_and_makes_again_during_a_run_is_caught() {
    for u in users() {
        let s = Scratch::new(u);
        std::fs::create_dir(s.ws.join(".github")).unwrap();
        s.chown_all();
        // The host removes the directory and makes it again: the read-only mount in the
        // sandbox is detached, and the new directory often gets the old inode number.
        let run = piped(s.command("workspace", WRITE_AFTER_HOST));
        wait_for(&s.ws.join("ready"));
        let host = s.outside("rmdir .github && mkdir .github && touch host-done && echo HOST");
        assert!(stdout(&host).contains("HOST"), "{}", text(&host));
        let out = run.wait_with_output().unwrap();
        assert!(
            stdout(&out).contains("WROTE"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(
            !s.ws.join(".github").exists(),
            "{}: the directory written after the host made it stayed: {}",
            s.label(),
            text(&out)
        );
        assert!(text(&out).contains("replaced"), "{}", text(&out));
        let q = quarantine(&s.home).expect("a quarantine directory");
        let kept = in_quarantine(&q, ".github/x").expect("listed in the MANIFEST");
        assert_eq!(std::fs::read_to_string(kept).unwrap(), "evil\n");
        // Paired: with the same directory left alone, the mount holds, the write fails and
        // the directory stays.
        std::fs::create_dir(s.ws.join(".github")).unwrap();
        s.chown_all();
        std::fs::remove_file(s.ws.join("ready")).unwrap();
        let run = piped(s.command("workspace", WRITE_AFTER_HOST));
        wait_for(&s.ws.join("ready"));
        s.outside("touch host-done");
        let held = run.wait_with_output().unwrap();
        assert!(!stdout(&held).contains("WROTE"), "{}", text(&held));
        assert!(s.ws.join(".github").is_dir() && !s.ws.join(".github/x").exists());
    }
}

/// The directory above a protected link's target is pinned: it cannot be moved away and
/// made again with a writable target (the check after the run would catch that too, and move
/// the new target to quarantine).
#[test]
fn a_protected_links_target_cannot_be_moved_away_and_made_again() {
    for u in users() {
        let s = Scratch::new(u);
        std::fs::create_dir_all(s.ws.join("config/vscode")).unwrap();
        std::os::unix::fs::symlink("config/vscode", s.ws.join(".vscode")).unwrap();
        s.chown_all();
        let moved = "mv config config.old && mkdir -p config/vscode \
                     && echo evil > .vscode/tasks.json && echo WROTE";
        let out = s.run("workspace", moved);
        assert!(
            !stdout(&out).contains("WROTE"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(text(&out).contains("busy"), "{}: {}", s.label(), text(&out));
        assert!(s.ws.join("config/vscode").is_dir() && !s.ws.join("config.old").exists());
        assert_eq!(
            std::fs::read_link(s.ws.join(".vscode")).unwrap(),
            Path::new("config/vscode")
        );
        // The target where it was stays read-only through the link.
        let held = s.run("workspace", "echo evil > .vscode/tasks.json && echo WROTE");
        assert!(!stdout(&held).contains("WROTE"), "{}", text(&held));
        assert!(!s.ws.join("config/vscode/tasks.json").exists());
        // Paired: under a profile that protects nothing, the same move and write work.
        let wide = s.write_profile("wide", sandbox_common::WIDE);
        let out = s.run(wide.to_str().unwrap(), moved);
        assert!(
            stdout(&out).contains("WROTE"),
            "{}: {}",
            s.label(),
            text(&out)
        );
    }
}

/// A hard link made before the run to a held protected file (`app/envrc-link` for
/// `app/.envrc`, `envrc-link` for `.envrc`) is another name for it outside its read-only
/// mount: a write through it lands, and the check after the run, seeing the file changed,
/// moves it to quarantine. Paired: a hard-linked `app/notes.txt` written the same way stays,
/// and under a profile without protected paths so do the protected ones.
#[test]
fn a_protected_file_written_through_a_hard_link_made_before_the_run_is_moved_out() {
    let script = "echo evil >> app/envrc-link; echo evil >> envrc-link; \
                  echo more >> app/notes-link; echo DONE";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        let setup = || {
            std::fs::create_dir_all(s.ws.join("app")).unwrap();
            for (file, link) in [
                ("app/.envrc", "app/envrc-link"),
                (".envrc", "envrc-link"),
                ("app/notes.txt", "app/notes-link"),
            ] {
                std::fs::write(s.ws.join(file), "legit\n").unwrap();
                let _ = std::fs::remove_file(s.ws.join(link));
                std::fs::hard_link(s.ws.join(file), s.ws.join(link)).unwrap();
            }
            s.chown_all();
        };
        setup();
        let out = s.run("workspace", script);
        assert!(
            stdout(&out).contains("DONE"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        let q = quarantine(&s.home).expect("a quarantine directory");
        for p in ["app/.envrc", ".envrc"] {
            assert!(
                s.ws.join(p).symlink_metadata().is_err(),
                "{} {p} stayed: {}",
                s.label(),
                text(&out)
            );
            let kept = in_quarantine(&q, p).expect("listed in the MANIFEST");
            assert_eq!(std::fs::read_to_string(kept).unwrap(), "legit\nevil\n");
        }
        let notes = std::fs::read_to_string(s.ws.join("app/notes.txt")).unwrap();
        assert_eq!(notes, "legit\nmore\n", "{}", s.label());
        // Paired: without protected paths the same writes stay.
        setup();
        let allowed = s.run(wide.to_str().unwrap(), script);
        for p in ["app/.envrc", ".envrc"] {
            let kept = std::fs::read_to_string(s.ws.join(p)).unwrap();
            assert_eq!(
                kept,
                "legit\nevil\n",
                "{} {p}: {}",
                s.label(),
                text(&allowed)
            );
        }
    }
}

#[test]
fn a_directory_made_unlistable_hides_nothing_from_the_check() {
    // The owner's read (and search) taken off: programs still find the names, a listing
    // does not. Root reads through modes; the check must not depend on that.
    let script = "mkdir -p sub c/d && echo EVIL > sub/.envrc && chmod 311 sub; \
                  echo EVIL > .env.local; \
                  git -C c/d init -q && printf '#!/bin/sh\\necho PWNED\\n' > c/d/.git/hooks/pre-commit \
                  && chmod +x c/d/.git/hooks/pre-commit && chmod 600 c/d/.git && chmod 111 c; \
                  chmod 311 . && echo DONE";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        let out = s.run("workspace", script);
        assert!(
            stdout(&out).contains("DONE"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        let _ = s.outside("chmod 755 . c sub c/d/.git 2>/dev/null");
        assert_absent(
            &s,
            &out,
            &["sub/.envrc", ".env.local", "c/d/.git/hooks/pre-commit"],
        );
        // Paired: without protected paths the same script keeps them.
        let _ = s.outside("rm -rf sub c");
        let kept = s.run(wide.to_str().unwrap(), script);
        let _ = s.outside("chmod 755 . c sub c/d/.git 2>/dev/null");
        assert_kept(
            &s,
            &kept,
            &["sub/.envrc", ".env.local", "c/d/.git/hooks/pre-commit"],
        );
    }
}

/// The links and directories on a protected link's way through the workspace are pinned:
/// re-pointing one (`.github -> link2 -> real`, `ln -sfn evil link2`) or replacing a
/// directory on it by a link fails in the kernel. (The check after the run also compares
/// that way, for a pin that could not be made.)
#[test]
fn the_way_to_a_protected_links_target_cannot_be_changed() {
    let script = "mkdir -p evil/vscode evil/github && echo EVIL > evil/ci.yml \
                  && echo EVIL > evil/vscode/tasks.json && echo EVIL > evil/github/ci.yml; \
                  ln -sfn evil link2; ln -sfn evil shared; mv config config.old && ln -s evil config; \
                  cat .github/ci.yml .vscode/tasks.json .gitlab/ci.yml";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        let common = s.root.path().join("common/vscode");
        std::fs::create_dir_all(&common).unwrap();
        std::fs::write(common.join("tasks.json"), "legit\n").unwrap();
        std::fs::create_dir(s.ws.join("real")).unwrap();
        std::fs::write(s.ws.join("real/ci.yml"), "legit\n").unwrap();
        std::fs::create_dir_all(s.ws.join("config/github")).unwrap();
        std::fs::write(s.ws.join("config/github/ci.yml"), "legit\n").unwrap();
        std::os::unix::fs::symlink("real", s.ws.join("link2")).unwrap();
        std::os::unix::fs::symlink("link2", s.ws.join(".github")).unwrap();
        std::os::unix::fs::symlink(s.root.path().join("common"), s.ws.join("shared")).unwrap();
        std::os::unix::fs::symlink("shared/vscode", s.ws.join(".vscode")).unwrap();
        std::os::unix::fs::symlink("config/github", s.ws.join(".gitlab")).unwrap();
        s.chown_all();
        let _ = std::os::unix::fs::lchown(s.root.path().join("common"), u, u);
        let _ = std::os::unix::fs::lchown(&common, u, u);
        let out = s.run("workspace", script);
        assert!(
            !stdout(&out).contains("EVIL"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert_eq!(
            std::fs::read_link(s.ws.join("link2")).unwrap(),
            Path::new("real")
        );
        assert_eq!(
            std::fs::read_link(s.ws.join("shared")).unwrap(),
            s.root.path().join("common")
        );
        for p in [".github/ci.yml", ".vscode/tasks.json", ".gitlab/ci.yml"] {
            assert_eq!(
                std::fs::read_to_string(s.ws.join(p)).unwrap(),
                "legit\n",
                "{} {p}: {}",
                s.label(),
                text(&out)
            );
        }
        // Paired: under a profile that protects nothing, each change lands.
        let changed = s.run(wide.to_str().unwrap(), script);
        assert!(
            stdout(&changed).contains("EVIL\nEVIL\nEVIL"),
            "{}: {}",
            s.label(),
            text(&changed)
        );
    }
}

#[test]
fn a_link_in_the_workspace_root_to_a_deeper_directory_is_looked_through() {
    let script = "mkdir -p deep/a/b z/y/app && echo EVIL > deep/a/b/.envrc && ln -s deep/a/b lnk \
                  && echo EVIL > z/y/app/.envrc && mv app app.old && ln -s z/y/app app && echo DONE";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        std::fs::create_dir(s.ws.join("app")).unwrap();
        s.chown_all();
        let out = s.run("workspace", script);
        assert!(
            stdout(&out).contains("DONE"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert_unreachable(&s, &out, &["lnk/.envrc", "app/.envrc"]);
        // Paired: without protected paths both stay.
        let _ = s.outside("rm -rf deep z lnk app && mv app.old app");
        let kept = s.run(wide.to_str().unwrap(), script);
        assert_kept(&s, &kept, &["lnk/.envrc", "app/.envrc"]);
    }
}

#[test]
fn the_checks_give_permissions_back_only_inside_the_workspace_and_never_through_a_link() {
    for u in users() {
        let s = Scratch::new(u);
        git_repo(&s);
        // A directory of the user's outside the workspace, locked.
        let victim = s.root.path().join("victim/x");
        std::fs::create_dir_all(&victim).unwrap();
        std::fs::write(victim.join("key"), "locked\n").unwrap();
        s.chown_all();
        let _ = std::os::unix::fs::lchown(s.root.path().join("victim"), u, u);
        let _ = std::os::unix::fs::lchown(&victim, u, u);
        std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o000)).unwrap();
        let inside = format!("lnk{}/y/z", victim.display());
        let script = format!(
            "git update-index --add --cacheinfo 160000,$(git rev-parse HEAD),{inside} && ln -s / lnk \
             && mkdir -p locked && echo EVIL > locked/.envrc && chmod 555 locked && echo DONE"
        );
        let out = s.run("workspace", &script);
        assert!(
            stdout(&out).contains("DONE"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        let mode = std::fs::symlink_metadata(&victim)
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(
            mode,
            0,
            "{}: a directory outside the workspace was opened: {}",
            s.label(),
            text(&out)
        );
        // Paired: what the command locked inside the workspace is checked and moved.
        assert!(
            s.ws.join("locked/.envrc").symlink_metadata().is_err(),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

#[test]
fn a_link_in_the_workspace_root_into_node_modules_or_git_is_looked_through() {
    let script = "mkdir -p node_modules/x .git/y && echo EVIL > node_modules/x/.envrc \
                  && echo EVIL > .git/y/.env && ln -s node_modules/x app && ln -s .git/y web && echo DONE";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        let out = s.run("workspace", script);
        assert!(
            stdout(&out).contains("DONE"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert_unreachable(&s, &out, &["app/.envrc", "web/.env"]);
        // Paired: without protected paths both stay.
        let _ = s.outside("rm -rf node_modules .git/y app web");
        let kept = s.run(wide.to_str().unwrap(), script);
        assert_kept(&s, &kept, &["app/.envrc", "web/.env"]);
    }
}

/// Each of `paths` (relative to the workspace) can no longer be read there.
fn assert_unreachable(s: &Scratch, out: &std::process::Output, paths: &[&str]) {
    for p in paths {
        assert!(
            std::fs::read_to_string(s.ws.join(p)).is_err(),
            "{} {p} is still reachable: {}",
            s.label(),
            text(out)
        );
    }
}

/// Nothing is at any of `paths` (relative to the workspace, links not followed).
fn assert_absent(s: &Scratch, out: &std::process::Output, paths: &[&str]) {
    for p in paths {
        assert!(
            s.ws.join(p).symlink_metadata().is_err(),
            "{} {p} is still in the workspace: {}",
            s.label(),
            text(out)
        );
    }
}

/// Each of `paths` (relative to the workspace) is still there.
fn assert_kept(s: &Scratch, out: &std::process::Output, paths: &[&str]) {
    for p in paths {
        assert!(s.ws.join(p).exists(), "{} {p}: {}", s.label(), text(out));
    }
}
