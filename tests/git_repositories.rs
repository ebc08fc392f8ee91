//! git repositories in the workspace keep nothing a command planted for git to run later: a
//! repository made in the run loses its hooks and program-running config but a plain one stays
//! whole, a git directory prepared in one run and moved into place in the next (or named by a
//! `.git` file) is judged whole, and one registered as a submodule anywhere is judged too; a
//! `.git/hooks` link, a linked worktree's `.git` file and the directories `core.hooksPath` names
//! (in the repository's config, the global config or an included file) stay read-only, and hooks
//! written into a nested repository's hooks path are moved out, while a nested repository that
//! was there before keeps its hooks when git works in it. Each paired with the same action
//! allowed (under a profile without protected paths), as root and as uid 65534.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;
mod containment_common;
use common::*;
use containment_common::*;
use std::path::PathBuf;

#[test]
fn repositories_made_in_the_run_lose_hooks_and_program_config_but_keep_plain_ones() {
    let script = "export GIT_CONFIG_NOSYSTEM=1; \
                  git init -q evil && echo 'echo pwned' > evil/.git/hooks/pre-commit \
                  && git -C evil config core.fsmonitor ./x && echo EVIL; \
                  git init -q plain && git -C plain config user.email t@e && echo PLAIN; \
                  mkdir -p deep/er && git init -q deep/er/x && echo DEEP";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        let out = s.run("workspace", script);
        assert!(
            stdout(&out).contains("EVIL") && stdout(&out).contains("PLAIN"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(!s.ws.join("evil/.git/hooks/pre-commit").exists());
        assert!(!s.ws.join("evil/.git/config").exists());
        // A plain repository stays whole, and git works in it afterwards.
        assert!(s.ws.join("plain/.git/config").exists());
        let status = s.outside("git -C plain status --porcelain && echo OK");
        assert!(stdout(&status).contains("OK"), "{}", text(&status));
        assert!(s.ws.join("deep/er/x/.git/HEAD").exists());
        // Paired: without protection the hook and config stay.
        std::fs::remove_dir_all(s.ws.join("evil")).unwrap();
        std::fs::remove_dir_all(s.ws.join("plain")).unwrap();
        s.run(wide.to_str().unwrap(), script);
        assert!(s.ws.join("evil/.git/hooks/pre-commit").exists());
        assert!(s.ws.join("evil/.git/config").exists());
    }
}

#[test]
fn a_hooks_link_is_never_followed_to_a_writable_place_and_is_put_back() {
    // `.git/hooks` is a link to a directory in the workspace (as hook managers set up).
    let swap = "echo x > hookdir/pre-commit; echo direct=$?; \
                rm .git/hooks && mkdir .git/hooks && echo planted > .git/hooks/pre-commit && echo SWAPPED";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        std::fs::remove_dir_all(s.ws.join(".git/hooks")).unwrap();
        std::fs::create_dir(s.ws.join("hookdir")).unwrap();
        std::os::unix::fs::symlink("../hookdir", s.ws.join(".git/hooks")).unwrap();
        s.chown_all();
        let out = s.run("workspace", swap);
        // The link's target is read-only in the sandbox.
        assert!(
            !stdout(&out).contains("direct=0") && text(&out).contains("Read-only file system"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(!s.ws.join("hookdir/pre-commit").exists());
        // The link itself could be replaced during the run; after it, it is back.
        assert_eq!(
            std::fs::read_link(s.ws.join(".git/hooks")).unwrap(),
            PathBuf::from("../hookdir"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        // Paired: without protection the replacement stays.
        s.run(wide.to_str().unwrap(), swap);
        assert!(s.ws.join(".git/hooks/pre-commit").is_file());
        assert!(s.ws.join("hookdir/pre-commit").is_file());
    }
}

#[test]
fn a_linked_worktrees_git_file_stays_read_only() {
    let point =
        "echo 'gitdir: /var/tmp/elsewhere' > .git && echo POINTED; mv .git .g && echo MOVED";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        std::fs::remove_dir_all(s.ws.join(".git")).unwrap();
        std::fs::write(
            s.ws.join(".git"),
            "gitdir: /var/tmp/main/.git/worktrees/ws\n",
        )
        .unwrap();
        s.chown_all();
        let out = s.run("workspace", point);
        assert!(
            !stdout(&out).contains("POINTED") && !stdout(&out).contains("MOVED"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(
            std::fs::read_to_string(s.ws.join(".git"))
                .unwrap()
                .contains("/var/tmp/main/")
        );
        // Paired: without protection the file can be pointed elsewhere.
        let allowed = s.run(wide.to_str().unwrap(), point);
        assert!(stdout(&allowed).contains("POINTED"), "{}", text(&allowed));
    }
}

#[test]
fn the_directory_core_hooks_path_names_stays_read_only() {
    // git runs the scripts in core.hooksPath instead of .git/hooks (hook managers set it).
    let plant = "echo planted > scripts/hooks/pre-commit && echo PLANTED";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        std::fs::create_dir_all(s.ws.join("scripts/hooks")).unwrap();
        std::fs::write(
            s.ws.join(".git/config"),
            "[core]\n\thooksPath = scripts/hooks\n",
        )
        .unwrap();
        s.chown_all();
        let out = s.run("workspace", plant);
        assert!(
            !stdout(&out).contains("PLANTED"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(!s.ws.join("scripts/hooks/pre-commit").exists());
        // Paired: without protection the hook is planted.
        let allowed = s.run(wide.to_str().unwrap(), plant);
        assert!(stdout(&allowed).contains("PLANTED"), "{}", text(&allowed));
    }
}

#[test]
fn a_git_file_pointing_at_a_git_directory_made_in_the_run_is_judged_by_its_content() {
    // A checkout whose `.git` file names a git directory elsewhere in the workspace: its
    // hooks are what git runs in that checkout.
    let script = "mkdir -p gd/hooks co && echo 'echo pwned' > gd/hooks/pre-commit \
                  && echo ref: refs/heads/main > gd/HEAD && echo 'gitdir: ../gd' > co/.git && echo MADE";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        let out = s.run("workspace", script);
        assert!(
            stdout(&out).contains("MADE"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(!s.ws.join("gd/hooks/pre-commit").exists(), "{}", s.label());
        assert!(s.ws.join("co/.git").exists(), "{}", s.label());
        // Paired: without protection the hook stays.
        std::fs::remove_dir_all(s.ws.join("gd")).unwrap();
        std::fs::remove_dir_all(s.ws.join("co")).unwrap();
        s.run(wide.to_str().unwrap(), script);
        assert!(s.ws.join("gd/hooks/pre-commit").exists());
    }
}

#[test]
fn a_git_directory_prepared_in_one_run_and_moved_into_place_in_the_next_is_judged_whole() {
    // The files of a git directory keep the change times of the run that wrote them; moved
    // into place later (as a nested `.git`, or named by a new `.git` file), all of it counts.
    // Without its `HEAD` until it is placed: with one, git's discovery takes it for a git
    // directory where it lies, and the first run judges it then.
    let prepare = "export GIT_CONFIG_NOSYSTEM=1; git init -q stash && mv stash/.git stashgit && rm -r stash \
                   && echo 'echo pwned' > stashgit/hooks/pre-commit && mv stashgit/HEAD stashgit/HEAD.off \
                   && mkdir -p deep/x/y && cp -a stashgit deep/x/y/stash.git && echo READY";
    let place = "mv stashgit/HEAD.off stashgit/HEAD && mv deep/x/y/stash.git/HEAD.off deep/x/y/stash.git/HEAD \
                 && mkdir sub2 && mv stashgit sub2/.git && mkdir co && echo 'gitdir: ../deep/x/y/stash.git' > co/.git && echo PLACED";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        let out = s.run("workspace", prepare);
        assert!(
            stdout(&out).contains("READY"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        // Not a git directory by its name yet: nothing to take away.
        assert!(
            s.ws.join("stashgit/hooks/pre-commit").exists(),
            "{}",
            s.label()
        );
        // Change times are coarse: the next run starts a tick of them later than this one ended.
        std::thread::sleep(std::time::Duration::from_millis(20));
        let out = s.run("workspace", place);
        assert!(
            stdout(&out).contains("PLACED"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(
            !s.ws.join("sub2/.git/hooks/pre-commit").exists(),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(
            !s.ws.join("deep/x/y/stash.git/hooks/pre-commit").exists(),
            "{}",
            s.label()
        );
        // Paired: without protection the moved hooks stay.
        for d in ["sub2", "co", "deep"] {
            std::fs::remove_dir_all(s.ws.join(d)).unwrap();
        }
        s.run(wide.to_str().unwrap(), prepare);
        s.run(wide.to_str().unwrap(), place);
        assert!(
            s.ws.join("sub2/.git/hooks/pre-commit").exists(),
            "{}",
            s.label()
        );
    }
}

#[test]
fn a_nested_repository_that_was_there_before_keeps_its_hooks_when_git_works_in_it() {
    // The user's own nested repository with a hook: git committing in it during the run
    // changes its `.git`, but nothing was moved into place, so its hook stays.
    for u in users() {
        let s = Scratch::new(u);
        let made = s.outside(
            "export GIT_CONFIG_NOSYSTEM=1; git init -q lib && echo 'exit 0' > lib/.git/hooks/pre-commit \
             && chmod +x lib/.git/hooks/pre-commit && echo MADE",
        );
        assert!(stdout(&made).contains("MADE"), "{}", text(&made));
        s.chown_all();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let out = s.run(
            "workspace",
            "export GIT_CONFIG_NOSYSTEM=1; cd lib && echo x > f && git add f \
             && git -c user.email=t@e -c user.name=t commit -qm x && echo COMMITTED",
        );
        assert!(
            stdout(&out).contains("COMMITTED"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(
            s.ws.join("lib/.git/hooks/pre-commit").exists(),
            "{}: {}",
            s.label(),
            text(&out)
        );
    }
}

#[test]
fn hooks_in_a_nested_repository_s_hooks_path_are_moved_out() {
    // A nested repository that runs its hooks from `core.hooksPath` (husky's `.husky/_`): a
    // hook written there runs at the next commit in it, as one in `.git/hooks` would.
    let script = "printf '#!/bin/sh\\necho pwned\\n' > lib/.husky/_/pre-commit \
                  && echo 'echo pwned' >> lib/.husky/_/post-checkout \
                  && echo more >> lib/.husky/notes.txt && echo PLANTED";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        let made = s.outside(
            "export GIT_CONFIG_NOSYSTEM=1; git init -q lib && git -C lib config core.hooksPath .husky/_ \
             && mkdir -p lib/.husky/_ && echo 'exit 0' > lib/.husky/_/post-checkout \
             && echo notes > lib/.husky/notes.txt && echo MADE",
        );
        assert!(stdout(&made).contains("MADE"), "{}", text(&made));
        s.chown_all();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let out = s.run("workspace", script);
        assert!(
            stdout(&out).contains("PLANTED"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        let hooks = s.ws.join("lib/.husky/_");
        assert!(
            !hooks.join("pre-commit").exists(),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(
            !hooks.join("post-checkout").exists(),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(
            text(&out).contains("quarantine"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        // Beside the hooks directory nothing is taken away.
        let notes = std::fs::read_to_string(s.ws.join("lib/.husky/notes.txt")).unwrap();
        assert_eq!(notes, "notes\nmore\n", "{}", s.label());
        // Swapped for a link to a directory of prepared hooks, it goes too.
        let swap = "mkdir -p lib/.husky/x && printf '#!/bin/sh\\necho pwned\\n' > lib/.husky/x/pre-commit \
                    && rm -rf lib/.husky/_ && ln -s x lib/.husky/_ && echo SWAPPED";
        let out = s.run("workspace", swap);
        assert!(
            stdout(&out).contains("SWAPPED"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(
            std::fs::symlink_metadata(&hooks).is_err(),
            "{}: {}",
            s.label(),
            text(&out)
        );
        std::fs::create_dir_all(&hooks).unwrap();
        // Paired: without protection the hooks stay.
        std::fs::write(hooks.join("post-checkout"), "exit 0\n").unwrap();
        s.chown_all();
        s.run(wide.to_str().unwrap(), script);
        assert!(hooks.join("pre-commit").exists(), "{}", s.label());
    }
}

#[test]
fn a_repository_registered_as_a_submodule_anywhere_is_judged() {
    // git status at the top recurses into submodules in the index, wherever they lie.
    let script = "export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@e GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@e; \
                  mkdir -p node_modules/a/b/c/evil && cd node_modules/a/b/c/evil && git init -q \
                  && git commit -q --allow-empty -m x && git config core.fsmonitor 'touch pwned; false' \
                  && cd \"$OLDPWD\" && git update-index --add --cacheinfo \
                  160000,$(git -C node_modules/a/b/c/evil rev-parse HEAD),node_modules/a/b/c/evil && echo REGISTERED";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        git_repo(&s);
        let out = s.run("workspace", script);
        assert!(
            stdout(&out).contains("REGISTERED"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        let cfg = s.ws.join("node_modules/a/b/c/evil/.git/config");
        assert!(!cfg.exists(), "{}: {}", s.label(), text(&out));
        // Paired: without protection the config stays.
        std::fs::remove_dir_all(s.ws.join("node_modules")).unwrap();
        s.outside("git rm -q --cached node_modules/a/b/c/evil");
        s.run(wide.to_str().unwrap(), script);
        assert!(cfg.exists(), "{}", s.label());
    }
}

#[test]
fn hooks_path_from_the_global_config_and_included_config_files_stay_read_only() {
    let plant = "echo planted > .githooks/pre-commit && echo HOOK; echo '[core] fsmonitor = x' > .gitconfig-project && echo INCLUDE";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        std::fs::create_dir_all(s.ws.join(".githooks")).unwrap();
        std::fs::write(s.ws.join(".gitconfig-project"), "").unwrap();
        std::fs::write(
            s.home.join(".gitconfig"),
            "[core]\n\thooksPath = .githooks\n",
        )
        .unwrap();
        std::fs::write(
            s.ws.join(".git/config"),
            "[include]\n\tpath = ../.gitconfig-project\n",
        )
        .unwrap();
        s.chown_all();
        let out = s.run("workspace", plant);
        for word in ["HOOK", "INCLUDE"] {
            assert!(
                !stdout(&out).contains(word),
                "{} {word}: {}",
                s.label(),
                text(&out)
            );
        }
        // Paired: without protection both are written.
        let allowed = s.run(wide.to_str().unwrap(), plant);
        for word in ["HOOK", "INCLUDE"] {
            assert!(
                stdout(&allowed).contains(word),
                "{} {word}: {}",
                s.label(),
                text(&allowed)
            );
        }
    }
}
