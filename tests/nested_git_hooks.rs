//! git runs a nested repository's hooks at the next commit in it, outside the sandbox: from
//! its hooks directory, or from the directory its `core.hooksPath` names, set in its config,
//! in a file that config includes, or in its `config.worktree`; and a repository's git
//! directory need not be its `.git` directory (a linked worktree takes its hooks from its
//! repository's, a submodule from `.git/modules/NAME`, a `--separate-git-dir` repository from
//! elsewhere). A hook planted in any of these during the run is moved to quarantine and
//! reported, and the next `git commit` outside the sandbox runs nothing.
//!
//! Each attack is paired with the same plant under a profile that protects nothing, whose
//! hook does run at that commit (so the attack is real), and with the ordinary change beside
//! it, which stays. As root and as uid 65534.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;
mod sandbox_common;
use common::*;
use sandbox_common::*;
use std::path::Path;
use std::process::Output;

/// git as a test runs it, here and in the sandbox: no system config, a fixed identity.
const GIT: &str = "export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@e \
                   GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@e;";

/// Sets a scene up outside the sandbox, as the scenario's user, in the workspace.
fn set_up(s: &Scratch, script: &str) {
    let o = s.outside(&format!("{GIT} ({script}) && echo SET-UP-OK"));
    assert!(
        stdout(&o).contains("SET-UP-OK"),
        "{}: {}",
        s.label(),
        text(&o)
    );
}

/// Where a planted hook leaves its mark when git runs it.
fn marker(s: &Scratch) -> std::path::PathBuf {
    s.home.join("HOOK-RAN-5e1d")
}

/// A script that writes a hook at `rel` (relative to the workspace) that marks its run.
fn plant(s: &Scratch, rel: &str) -> String {
    format!(
        "mkdir -p \"$(dirname {rel})\" && printf '#!/bin/sh\\necho ran > {}\\n' > {rel} && chmod +x {rel}",
        marker(s).display()
    )
}

/// Runs `script` under `profile` with a JSON report.
fn run(s: &Scratch, profile: &str, script: &str) -> Output {
    let o = s
        .json_command(profile, &format!("{GIT} {script} && echo RAN-OK"))
        .output()
        .unwrap();
    assert!(stdout(&o).contains("RAN-OK"), "{}: {}", s.label(), text(&o));
    o
}

/// Whether a commit in `repo` (relative to the workspace), outside the sandbox, runs a
/// planted hook. The mark is removed for the next question.
fn commit_runs_hook(s: &Scratch, repo: &str) -> bool {
    let o = s.outside(&format!(
        "{GIT} git -C {repo} commit -q --allow-empty -m later && echo COMMITTED"
    ));
    assert!(
        stdout(&o).contains("COMMITTED"),
        "{}: {}",
        s.label(),
        text(&o)
    );
    let ran = marker(s).exists();
    let _ = std::fs::remove_file(marker(s));
    ran
}

/// The protected paths the run's report lists.
fn protected(o: &Output) -> Vec<serde_json::Value> {
    let last = stdout(o).lines().last().unwrap_or_default().to_string();
    let v: serde_json::Value = serde_json::from_str(&last).unwrap_or_default();
    v["protected"].as_array().cloned().unwrap_or_default()
}

/// `rel` was moved to quarantine: gone from the workspace, in the quarantine, named in the
/// report and in a notice on stderr.
fn assert_moved(s: &Scratch, o: &Output, rel: &str) {
    let path = s.ws.join(rel);
    let listed = protected(o);
    let entry = listed
        .iter()
        .find(|p| p["path"].as_str() == path.to_str())
        .unwrap_or_else(|| panic!("{}: {rel} not reported: {}", s.label(), text(o)));
    let to = entry["quarantined"].as_str().unwrap_or_default();
    assert!(
        entry["error"].is_null() && Path::new(to).exists(),
        "{}: {rel}: {entry}",
        s.label()
    );
    assert!(
        std::fs::symlink_metadata(&path).is_err(),
        "{}: {rel} still there",
        s.label()
    );
    let notice = format!("protected path {} (", path.display());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(&notice),
        "{}: {}",
        s.label(),
        text(o)
    );
}

fn assert_nothing_moved(s: &Scratch, o: &Output) {
    assert!(protected(o).is_empty(), "{}: {}", s.label(), text(o));
}

#[test]
fn a_hooks_path_set_in_an_included_file_is_checked() {
    // `lib/.git/config` includes `lib/lib.gitconfig` (hooksPath `.husky/_`) and, under a
    // condition, `lib/branch.gitconfig`, which git reads last.
    let scene = "git init -q -b main lib && git -C lib commit -q --allow-empty -m init \
                 && printf '[include]\\n\\tpath = ../lib.gitconfig\\n[includeIf \"onbranch:main\"]\\n\\tpath = ../branch.gitconfig\\n' >> lib/.git/config \
                 && printf '[core]\\n\\thooksPath = .husky/_\\n' > lib/lib.gitconfig \
                 && printf '[user]\\n\\tname = t\\n' > lib/branch.gitconfig \
                 && mkdir -p lib/.husky/_ && echo notes > lib/.husky/notes.txt";
    let rename = "printf '[core]\\n\\thooksPath = .hooks2\\n' >> lib/branch.gitconfig";
    for u in users() {
        let s = Scratch::new(u);
        set_up(&s, scene);
        let plant_named = plant(&s, "lib/.husky/_/pre-commit");
        let o = run(
            &s,
            "workspace",
            &format!("{plant_named} && echo more >> lib/.husky/notes.txt"),
        );
        assert_moved(&s, &o, "lib/.husky/_/pre-commit");
        assert!(!commit_runs_hook(&s, "lib"), "{}", s.label());
        // Paired: the file beside the hooks stays, and so does a plain key added to an
        // include that had only plain ones.
        let notes = std::fs::read_to_string(s.ws.join("lib/.husky/notes.txt")).unwrap();
        assert_eq!(notes, "notes\nmore\n", "{}", s.label());
        let o = run(
            &s,
            "workspace",
            "printf '[user]\\n\\temail = t@e\\n' >> lib/branch.gitconfig",
        );
        assert_nothing_moved(&s, &o);
        // The include edited to name another directory, with a hook there: both go.
        let o = run(
            &s,
            "workspace",
            &format!("{rename} && {}", plant(&s, "lib/.hooks2/pre-commit")),
        );
        assert_moved(&s, &o, "lib/branch.gitconfig");
        assert_moved(&s, &o, "lib/.hooks2/pre-commit");
        assert!(!commit_runs_hook(&s, "lib"), "{}", s.label());
        // Paired: where nothing is protected, both hooks run at the next commit.
        let wide = s.write_profile("wide", WIDE);
        let wide = wide.to_str().unwrap();
        run(&s, wide, &plant_named);
        assert!(commit_runs_hook(&s, "lib"), "{}", s.label());
        set_up(
            &s,
            "printf '[user]\\n\\tname = t\\n' > lib/branch.gitconfig",
        );
        run(
            &s,
            wide,
            &format!("{rename} && {}", plant(&s, "lib/.hooks2/pre-commit")),
        );
        assert!(commit_runs_hook(&s, "lib"), "{}", s.label());
    }
}

#[test]
fn a_hooks_path_set_in_config_worktree_is_checked() {
    let scene = "git init -q lib && git -C lib config extensions.worktreeConfig true \
                 && git -C lib config --worktree core.hooksPath .hooks && mkdir lib/.hooks";
    for u in users() {
        let s = Scratch::new(u);
        set_up(&s, scene);
        let o = run(
            &s,
            "workspace",
            &format!("{} && echo x > lib/f", plant(&s, "lib/.hooks/pre-commit")),
        );
        assert_moved(&s, &o, "lib/.hooks/pre-commit");
        assert!(!commit_runs_hook(&s, "lib"), "{}", s.label());
        // Paired: a commit in the repository during the run keeps its files.
        let o = run(
            &s,
            "workspace",
            "git -C lib add f && git -C lib commit -qm f",
        );
        assert_nothing_moved(&s, &o);
        assert!(s.ws.join("lib/f").exists() && s.ws.join("lib/.hooks").is_dir());
        let wide = s.write_profile("wide", WIDE);
        run(
            &s,
            wide.to_str().unwrap(),
            &plant(&s, "lib/.hooks/pre-commit"),
        );
        assert!(commit_runs_hook(&s, "lib"), "{}", s.label());
    }
}

#[test]
fn a_linked_worktree_s_hooks_are_checked_wherever_its_repository_lies() {
    // The repository lies deeper than the walk looks (`deep/a/b/c/main/.git`); its linked
    // worktree `wt` takes its hooks from it, or from a hooksPath relative to `wt`.
    let scene = "git init -q deep/a/b/c/main && git -C deep/a/b/c/main commit -q --allow-empty -m init \
                 && git -C deep/a/b/c/main worktree add -q \"$PWD/wt\" && echo f > wt/f";
    for u in users() {
        let s = Scratch::new(u);
        set_up(&s, scene);
        let o = run(
            &s,
            "workspace",
            &format!(
                "{} && echo g >> wt/f",
                plant(&s, "deep/a/b/c/main/.git/hooks/pre-commit")
            ),
        );
        assert_moved(&s, &o, "deep/a/b/c/main/.git/hooks/pre-commit");
        assert!(!commit_runs_hook(&s, "wt"), "{}", s.label());
        set_up(&s, "git -C deep/a/b/c/main config core.hooksPath .githooks");
        let o = run(&s, "workspace", &plant(&s, "wt/.githooks/pre-commit"));
        assert_moved(&s, &o, "wt/.githooks/pre-commit");
        assert!(!commit_runs_hook(&s, "wt"), "{}", s.label());
        // Paired: a commit in the worktree during the run keeps everything.
        let o = run(&s, "workspace", "git -C wt add f && git -C wt commit -qm f");
        assert_nothing_moved(&s, &o);
        assert_eq!(
            std::fs::read_to_string(s.ws.join("wt/f")).unwrap(),
            "f\ng\n"
        );
        let wide = s.write_profile("wide", WIDE);
        run(
            &s,
            wide.to_str().unwrap(),
            &plant(&s, "wt/.githooks/pre-commit"),
        );
        assert!(commit_runs_hook(&s, "wt"), "{}", s.label());
    }
}

#[test]
fn submodules_hooks_paths_are_checked_in_their_working_trees() {
    // A submodule deeper than the walk looks, with a submodule of its own: their git
    // directories are `.git/modules/libs/x/y/sub` and `.../modules/inner`, whose configs
    // name hooksPath `.husky`, relative to each working tree.
    let scene = "rm -rf .git && git init -q . && git commit -q --allow-empty -m init \
                 && git init -q \"$HOME/inner\" && git -C \"$HOME/inner\" commit -q --allow-empty -m i \
                 && git init -q \"$HOME/src\" && cd \"$HOME/src\" \
                 && git -c protocol.file.allow=always submodule add -q \"file://$HOME/inner\" inner \
                 && git commit -qm sub && cd \"$OLDPWD\" \
                 && git -c protocol.file.allow=always submodule add -q \"file://$HOME/src\" libs/x/y/sub \
                 && git -c protocol.file.allow=always submodule update -q --init --recursive \
                 && git commit -qm sub \
                 && git -C libs/x/y/sub config core.hooksPath .husky \
                 && git -C libs/x/y/sub/inner config core.hooksPath .husky";
    for u in users() {
        let s = Scratch::new(u);
        set_up(&s, scene);
        for repo in ["libs/x/y/sub", "libs/x/y/sub/inner"] {
            let hook = format!("{repo}/.husky/pre-commit");
            let o = run(&s, "workspace", &plant(&s, &hook));
            assert_moved(&s, &o, &hook);
            assert!(!commit_runs_hook(&s, repo), "{}: {repo}", s.label());
        }
        // The hooks of a module three names deep, which no read-only mount covers.
        let hook = ".git/modules/libs/x/y/sub/modules/inner/hooks/post-commit";
        let o = run(&s, "workspace", &plant(&s, hook));
        assert_moved(&s, &o, hook);
        // Paired: a commit in the submodule during the run keeps everything.
        let o = run(
            &s,
            "workspace",
            "cd libs/x/y/sub && echo x > f && git add f && git commit -qm f",
        );
        assert_nothing_moved(&s, &o);
        assert!(s.ws.join("libs/x/y/sub/f").exists(), "{}", s.label());
        let wide = s.write_profile("wide", WIDE);
        let wide = wide.to_str().unwrap();
        for repo in ["libs/x/y/sub", "libs/x/y/sub/inner"] {
            run(&s, wide, &plant(&s, &format!("{repo}/.husky/pre-commit")));
            assert!(commit_runs_hook(&s, repo), "{}: {repo}", s.label());
        }
    }
}

#[test]
fn a_separate_git_directory_s_hooks_and_hooks_path_are_checked() {
    // `lib/.git` and `lib2/.git` are files naming git directories under `store/`.
    let scene = "mkdir store && git init -q --separate-git-dir \"$PWD/store/lib.git\" lib \
                 && git init -q --separate-git-dir \"$PWD/store/lib2.git\" lib2 \
                 && git -C lib config core.hooksPath .husky/_ && mkdir -p lib/.husky/_";
    for u in users() {
        let s = Scratch::new(u);
        set_up(&s, scene);
        let o = run(
            &s,
            "workspace",
            &format!(
                "{} && {} && echo x > lib/f",
                plant(&s, "lib/.husky/_/pre-commit"),
                plant(&s, "store/lib2.git/hooks/pre-commit")
            ),
        );
        assert_moved(&s, &o, "lib/.husky/_/pre-commit");
        assert_moved(&s, &o, "store/lib2.git/hooks/pre-commit");
        assert!(!commit_runs_hook(&s, "lib"), "{}", s.label());
        assert!(!commit_runs_hook(&s, "lib2"), "{}", s.label());
        // Paired: the ordinary file stays; where nothing is protected, the hook runs.
        assert!(s.ws.join("lib/f").exists(), "{}", s.label());
        let wide = s.write_profile("wide", WIDE);
        run(
            &s,
            wide.to_str().unwrap(),
            &plant(&s, "lib/.husky/_/pre-commit"),
        );
        assert!(commit_runs_hook(&s, "lib"), "{}", s.label());
    }
}

#[test]
fn repositories_three_levels_down_are_checked() {
    for u in users() {
        let s = Scratch::new(u);
        set_up(
            &s,
            "git init -q a/b/c && git -C a/b/c commit -q --allow-empty -m init",
        );
        let made = format!(
            "{} && git init -q x/y/z && {}",
            plant(&s, "a/b/c/.git/hooks/pre-commit"),
            plant(&s, "x/y/z/.git/hooks/pre-commit")
        );
        let o = run(&s, "workspace", &made);
        assert_moved(&s, &o, "a/b/c/.git/hooks/pre-commit");
        assert_moved(&s, &o, "x/y/z/.git/hooks/pre-commit");
        assert!(!commit_runs_hook(&s, "a/b/c"), "{}", s.label());
        // Paired: the new repository itself stays, and a commit in the old one keeps it.
        assert!(s.ws.join("x/y/z/.git/HEAD").exists(), "{}", s.label());
        let o = run(
            &s,
            "workspace",
            "cd a/b/c && echo x > f && git add f && git commit -qm f",
        );
        assert_nothing_moved(&s, &o);
        let wide = s.write_profile("wide", WIDE);
        run(
            &s,
            wide.to_str().unwrap(),
            &plant(&s, "a/b/c/.git/hooks/pre-commit"),
        );
        assert!(commit_runs_hook(&s, "a/b/c"), "{}", s.label());
    }
}

#[test]
fn a_link_the_user_made_to_a_hooks_directory_is_followed() {
    // `lib/.husky -> ../tools/husky` holds lib's hooksPath `.husky/_`; `lib2/.git/hooks ->
    // ../../hookdir` is lib2's hooks directory. Both links are the user's.
    let scene = "git init -q lib && git -C lib config core.hooksPath .husky/_ \
                 && mkdir -p tools/husky/_ hookdir && echo notes > tools/husky/notes.txt \
                 && ln -s ../tools/husky lib/.husky \
                 && git init -q lib2 && rm -rf lib2/.git/hooks && ln -s ../../hookdir lib2/.git/hooks";
    for u in users() {
        let s = Scratch::new(u);
        set_up(&s, scene);
        let o = run(
            &s,
            "workspace",
            &format!(
                "{} && {} && echo more >> tools/husky/notes.txt",
                plant(&s, "lib/.husky/_/pre-commit"),
                plant(&s, "lib2/.git/hooks/pre-commit")
            ),
        );
        assert_moved(&s, &o, "tools/husky/_/pre-commit");
        assert_moved(&s, &o, "hookdir/pre-commit");
        assert!(!commit_runs_hook(&s, "lib"), "{}", s.label());
        assert!(!commit_runs_hook(&s, "lib2"), "{}", s.label());
        // The way past the link changed: the directory it now reaches is judged whole.
        let swap = format!(
            "mv tools tools.old && mkdir -p tools/husky/_ && {}",
            plant(&s, "tools/husky/_/pre-commit")
        );
        let o = run(&s, "workspace", &swap);
        assert_moved(&s, &o, "tools/husky/_/pre-commit");
        assert!(!commit_runs_hook(&s, "lib"), "{}", s.label());
        // Paired: the links and the file beside the hooks stay.
        assert!(s.ws.join("lib/.husky").is_symlink() && s.ws.join("lib2/.git/hooks").is_symlink());
        let notes = std::fs::read_to_string(s.ws.join("tools.old/husky/notes.txt")).unwrap();
        assert_eq!(notes, "notes\nmore\n", "{}", s.label());
        let wide = s.write_profile("wide", WIDE);
        run(
            &s,
            wide.to_str().unwrap(),
            &plant(&s, "lib/.husky/_/pre-commit"),
        );
        assert!(commit_runs_hook(&s, "lib"), "{}", s.label());
    }
}

#[test]
fn ordinary_git_work_in_nested_repositories_moves_nothing() {
    let work = "git init -q src && git -C src commit -q --allow-empty -m s \
                && git init -q lib && cd lib && echo x > f && git add f && git commit -qm x \
                && git -c protocol.file.allow=always submodule add -q \"file://$PWD/../src\" sub \
                && git commit -qm sub && git -C sub commit -q --allow-empty -m in-sub \
                && git worktree add -q ../wt && cd ../wt && echo y > g && git add g && git commit -qm y \
                && cd .. && mkdir -p a/b && git init -q a/b/c && git -C a/b/c commit -q --allow-empty -m c";
    // A repository whose hooksPath is set in an included file, with a hook there: a worktree
    // added to it during the run leaves both alone.
    let husky = "git init -q app && git -C app commit -q --allow-empty -m init \
                 && printf '[include]\\n\\tpath = ../app.gitconfig\\n' >> app/.git/config \
                 && printf '[core]\\n\\thooksPath = .husky/_\\n' > app/app.gitconfig \
                 && mkdir -p app/.husky/_ && printf '#!/bin/sh\\nexit 0\\n' > app/.husky/_/pre-commit \
                 && chmod +x app/.husky/_/pre-commit";
    for u in users() {
        let s = Scratch::new(u);
        set_up(&s, husky);
        let o = run(
            &s,
            "workspace",
            &format!(
                "{work} && git -C app worktree add -q ../app-wt && git -C app-wt commit -q --allow-empty -m wt"
            ),
        );
        assert_nothing_moved(&s, &o);
        assert!(
            s.ws.join("app/app.gitconfig").exists()
                && s.ws.join("app/.husky/_/pre-commit").exists()
        );
        let o = s.outside(&format!(
            "{GIT} git -C lib status --porcelain && git -C wt status --porcelain \
             && git -C lib/sub log --oneline && git -C a/b/c log --oneline && echo WORKS"
        ));
        assert!(stdout(&o).contains("WORKS"), "{}: {}", s.label(), text(&o));
        // A later run with git working in all of them moves nothing either.
        let again = "git -C lib commit -q --allow-empty -m again && git -C wt commit -q --allow-empty -m again \
                     && git -C lib/sub commit -q --allow-empty -m again";
        let o = run(&s, "workspace", again);
        assert_nothing_moved(&s, &o);
    }
}

/// Whether `git status` in `dir` (relative to the workspace), outside the sandbox, runs a
/// planted program. The mark is removed for the next question.
fn status_runs_plant(s: &Scratch, dir: &str) -> bool {
    let _ = s.outside(&format!("{GIT} cd {dir} && git status --porcelain"));
    let ran = marker(s).exists();
    let _ = std::fs::remove_file(marker(s));
    ran
}

/// A config line that makes git run a program marking its run at the next `git status`.
fn fsmonitor(s: &Scratch) -> String {
    format!("\\tfsmonitor = echo ran > {}\\n", marker(s).display())
}

#[test]
fn a_directory_made_a_git_directory_that_git_finds_from_below_is_checked() {
    // git's discovery from `src/app` looks at `src/app/.git`, then at `src` itself: a `HEAD`
    // beside `objects` and `refs` makes it a git directory, `core.worktree` a working tree.
    let scene = "rm -rf .git && git init -q . && git commit -q --allow-empty -m init \
                 && mkdir -p src/app lib/x/y && echo code > src/app/main.c";
    for u in users() {
        let s = Scratch::new(u);
        set_up(&s, scene);
        let make = |dir: &str| {
            format!(
                "mkdir -p {dir}/objects {dir}/refs && echo 'ref: refs/heads/main' > {dir}/HEAD \
                 && printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = ..\\n{}' > {dir}/config",
                fsmonitor(&s)
            )
        };
        for (dir, below) in [("src", "src/app"), ("lib/x/y", "lib/x/y/z")] {
            let o = run(
                &s,
                "workspace",
                &format!(
                    "{} && mkdir -p {below} && echo more >> src/app/main.c",
                    make(dir)
                ),
            );
            assert_moved(&s, &o, &format!("{dir}/config"));
            assert_moved(&s, &o, &format!("{dir}/HEAD"));
            assert!(!status_runs_plant(&s, below), "{}: {dir}", s.label());
        }
        // Paired: the ordinary edit stays, and so does a bare clone made in the run.
        let code = std::fs::read_to_string(s.ws.join("src/app/main.c")).unwrap();
        assert_eq!(code, "code\nmore\nmore\n", "{}", s.label());
        let o = run(&s, "workspace", "git clone -q --bare . store/mirror.git");
        assert_nothing_moved(&s, &o);
        // Where nothing is protected, the program runs at the next `git status`.
        let wide = s.write_profile("wide", WIDE);
        set_up(&s, "rm -rf src/objects src/refs");
        run(&s, wide.to_str().unwrap(), &make("src"));
        assert!(status_runs_plant(&s, "src/app"), "{}", s.label());
    }
}

#[test]
fn a_core_worktree_leading_out_of_a_nested_repository_is_checked() {
    // `lib` tracks an executable `pre-commit`; with `core.worktree` naming the workspace
    // repository's hooks, the next `git checkout -- .` in lib writes it there, and the
    // commit after it runs it.
    let scene = "rm -rf .git && git init -q . && git commit -q --allow-empty -m init \
                 && git init -q lib && git -C lib commit -q --allow-empty -m init";
    for u in users() {
        let s = Scratch::new(u);
        set_up(&s, scene);
        let track = format!(
            "{} && git -C lib add pre-commit && git -C lib commit -q --allow-empty -m hook",
            plant(&s, "lib/pre-commit")
        );
        let point = |to: &str| format!("{track} && git -C lib config core.worktree {to}");
        let later = "git -C lib checkout -- . ; git commit -q --allow-empty -m later";
        let o = run(&s, "workspace", &point("../../.git/hooks"));
        assert_moved(&s, &o, "lib/.git/config");
        let _ = s.outside(&format!("{GIT} {later}"));
        assert!(!marker(&s).exists(), "{}", s.label());
        set_up(&s, "git init -q lib && rm -f lib/pre-commit");
        let o = run(&s, "workspace", &point("'~'"));
        assert_moved(&s, &o, "lib/.git/config");
        // Paired: a `core.worktree` naming the repository's own working tree stays.
        set_up(&s, "git init -q lib && rm -f lib/pre-commit");
        let o = run(&s, "workspace", &point("\"$PWD/lib\""));
        assert_nothing_moved(&s, &o);
        // Where nothing is protected, the checkout writes the hook and the commit runs it.
        let wide = s.write_profile("wide", WIDE);
        set_up(
            &s,
            "rm -rf lib && git init -q lib && git -C lib commit -q --allow-empty -m i",
        );
        run(&s, wide.to_str().unwrap(), &point("../../.git/hooks"));
        let _ = s.outside(&format!("{GIT} {later}"));
        assert!(marker(&s).exists(), "{}", s.label());
    }
}

#[test]
fn a_rebase_todo_with_exec_lines_is_checked() {
    // An interactive rebase's state, made during the run: `git rebase --continue` runs its
    // `exec` lines.
    let scene = "rm -rf .git && git init -q -b main . && git commit -q --allow-empty -m init \
                 && git init -q -b main lib && git -C lib commit -q --allow-empty -m init";
    for u in users() {
        let s = Scratch::new(u);
        set_up(&s, scene);
        let state = |repo: &str| {
            format!(
                "d={repo}/.git/rebase-merge && h=$(git -C {repo} rev-parse HEAD) && mkdir $d \
                 && echo refs/heads/main > $d/head-name && echo $h > $d/onto \
                 && echo $h > $d/orig-head && touch $d/interactive \
                 && echo 'exec echo ran > {}' > $d/git-rebase-todo",
                marker(&s).display()
            )
        };
        let resume = |repo: &str| {
            let _ = s.outside(&format!("{GIT} git -C {repo} rebase --continue"));
            let ran = marker(&s).exists();
            let _ = std::fs::remove_file(marker(&s));
            ran
        };
        let o = run(
            &s,
            "workspace",
            &format!("{} && {}", state("."), state("lib")),
        );
        assert_moved(&s, &o, ".git/rebase-merge");
        assert_moved(&s, &o, "lib/.git/rebase-merge");
        assert!(!resume("."), "{}", s.label());
        assert!(!resume("lib"), "{}", s.label());
        // Paired: a rebase stopped during the run without `exec` keeps its state, and
        // resumes outside.
        let o = run(
            &s,
            "workspace",
            "git -C lib commit -q --allow-empty -m two \
             && GIT_SEQUENCE_EDITOR='sed -i 1ibreak' git -C lib rebase -q -i HEAD~1",
        );
        assert_nothing_moved(&s, &o);
        let o = s.outside(&format!(
            "{GIT} git -C lib rebase --continue && echo RESUMED"
        ));
        assert!(
            stdout(&o).contains("RESUMED"),
            "{}: {}",
            s.label(),
            text(&o)
        );
        // Where nothing is protected, the `exec` line runs.
        let wide = s.write_profile("wide", WIDE);
        run(&s, wide.to_str().unwrap(), &state("."));
        assert!(resume("."), "{}", s.label());
    }
}

#[test]
fn submodules_a_split_index_registers_are_checked_and_an_unreadable_index_is_not_skipped() {
    // `a/b/c/d` lies deeper than the walk looks; the workspace repository's index registers
    // it as a submodule, and `git status` at the top runs git in it, with its config.
    let scene = "rm -rf .git && git init -q . && git commit -q --allow-empty -m init \
                 && git init -q a/b/c/d && git -C a/b/c/d commit -q --allow-empty -m i";
    let register = "git update-index --split-index --add --cacheinfo 160000,$(git -C a/b/c/d rev-parse HEAD),a/b/c/d";
    for u in users() {
        let s = Scratch::new(u);
        set_up(&s, scene);
        let set = format!(
            "git -C a/b/c/d config core.fsmonitor 'echo ran > {}'",
            marker(&s).display()
        );
        // Registered in a split index, whose entries lie in `.git/sharedindex.HEX`.
        let o = run(&s, "workspace", &format!("{register} && {set}"));
        assert_moved(&s, &o, "a/b/c/d/.git/config");
        assert!(!status_runs_plant(&s, "."), "{}", s.label());
        // Registered before the run, the index left alone during it.
        set_up(&s, "git init -q a/b/c/d");
        let o = run(&s, "workspace", &set);
        assert_moved(&s, &o, "a/b/c/d/.git/config");
        assert!(!status_runs_plant(&s, "."), "{}", s.label());
        // An index the check cannot read within its limit goes, and is not skipped.
        set_up(&s, "git init -q a/b/c/d");
        let o = run(&s, "workspace", "truncate -s 1G .git/index");
        assert_moved(&s, &o, ".git/index");
        // Paired: a commit in the submodule during the run keeps everything.
        set_up(&s, &format!("{register} && git commit -qm sub"));
        let o = run(
            &s,
            "workspace",
            "git -C a/b/c/d commit -q --allow-empty -m two && git add a/b/c/d && git commit -qm up",
        );
        assert_nothing_moved(&s, &o);
        let wide = s.write_profile("wide", WIDE);
        run(&s, wide.to_str().unwrap(), &set);
        assert!(status_runs_plant(&s, "."), "{}", s.label());
    }
}

/// A nested repository's hook installed as a link (`.git/hooks/pre-commit ->
/// ../../scripts/pre-commit`) runs what it leads to: that file written during the run, or
/// made when it was missing, goes to quarantine, and the next commit there runs nothing.
/// Paired: under a profile that protects nothing the same write runs at that commit; a run
/// that leaves the target alone moves nothing.
#[test]
fn a_nested_repository_s_hook_link_target_is_checked() {
    let scene = "git init -q app && git -C app commit -q --allow-empty -m init \
                 && mkdir -p app/scripts app/tools && printf '#!/bin/sh\\nexit 0\\n' > app/scripts/pre-commit \
                 && chmod +x app/scripts/pre-commit \
                 && ln -s ../../scripts/pre-commit app/.git/hooks/pre-commit \
                 && ln -s ../../tools/commit-msg app/.git/hooks/commit-msg";
    for u in users() {
        let s = Scratch::new(u);
        set_up(&s, scene);
        let quiet = run(&s, "workspace", "git -C app status --porcelain >/dev/null");
        assert_nothing_moved(&s, &quiet);
        let append = format!(
            "echo 'echo ran > {}' >> app/scripts/pre-commit",
            marker(&s).display()
        );
        let o = run(&s, "workspace", &append);
        assert_moved(&s, &o, "app/scripts/pre-commit");
        assert!(!commit_runs_hook(&s, "app"), "{}", s.label());
        let o = run(&s, "workspace", &plant(&s, "app/tools/commit-msg"));
        assert_moved(&s, &o, "app/tools/commit-msg");
        assert!(!commit_runs_hook(&s, "app"), "{}", s.label());
        // Paired: the same plant under a profile that protects nothing runs at the commit.
        let wide = s.write_profile("wide", WIDE);
        run(
            &s,
            wide.to_str().unwrap(),
            &plant(&s, "app/tools/commit-msg"),
        );
        assert!(commit_runs_hook(&s, "app"), "{}", s.label());
    }
}

/// `git status` at the root goes into each submodule the index registers, and into what that
/// one's index registers in turn: a repository deep under `node_modules` that a nested
/// repository registers during the run has its config judged, and the next `git status` at
/// the root runs nothing. Paired: where nothing is protected, that `git status` runs it.
#[test]
fn submodules_a_nested_repository_registers_are_checked() {
    let scene = "rm -rf .git && git init -q . && git commit -q --allow-empty -m init";
    let plant = |s: &Scratch| {
        format!(
            "mkdir sub && cd sub && git init -q && git commit -q --allow-empty -m i \
             && mkdir -p node_modules/x && cd node_modules/x && git init -q \
             && git commit -q --allow-empty -m i \
             && printf '[core]\\n{}' >> .git/config \
             && cd ../.. && git add -f node_modules/x && git commit -q -m nm \
             && cd .. && git add sub && git commit -q -m sub",
            fsmonitor(s)
        )
    };
    for u in users() {
        let s = Scratch::new(u);
        set_up(&s, scene);
        let o = run(&s, "workspace", &plant(&s));
        assert_moved(&s, &o, "sub/node_modules/x/.git/config");
        assert!(!status_runs_plant(&s, "."), "{}", s.label());
        // Paired: the same plant where nothing is protected runs at the root's `git status`.
        let s = Scratch::new(u);
        set_up(&s, scene);
        let wide = s.write_profile("wide", WIDE);
        run(&s, wide.to_str().unwrap(), &plant(&s));
        assert!(status_runs_plant(&s, "."), "{}", s.label());
    }
}

/// Whether `git push` from `repo` (relative to the workspace), outside the sandbox, runs a
/// planted hook of the repository it pushes to. The mark is removed for the next question.
fn push_runs_hook(s: &Scratch, repo: &str) -> bool {
    // A new commit each time: a push with nothing new to send runs no hook.
    let _ = s.outside(&format!(
        "{GIT} git -C {repo} commit -q --allow-empty --no-verify -m p \
         && git -C {repo} push -q origin HEAD:refs/heads/x 2>&1"
    ));
    let ran = marker(s).exists();
    let _ = std::fs::remove_file(marker(s));
    ran
}

/// A nested repository's remote pointed at a bare repository the checks did not reach (under
/// `node_modules`) whose `pre-receive` hook runs at the next `git push`: in one run (the config
/// goes to quarantine) or over two (the remote first, the hook next: the repository a remote
/// names is checked from then on). Paired: where nothing is protected, the push runs it.
#[test]
fn a_repository_a_remote_names_by_path_is_checked() {
    let scene = "git init -q sub && git -C sub commit -q --allow-empty -m i";
    let bare = "git init -q --bare node_modules/r/r.git";
    let remote = "git -C sub remote add origin ../node_modules/r/r.git";
    for u in users() {
        let s = Scratch::new(u);
        set_up(&s, scene);
        let hook = plant(&s, "node_modules/r/r.git/hooks/pre-receive");
        let o = run(&s, "workspace", &format!("{bare} && {hook} && {remote}"));
        assert_moved(&s, &o, "sub/.git/config");
        let s = Scratch::new(u);
        set_up(&s, scene);
        let o = run(&s, "workspace", &format!("{bare} && {remote}"));
        assert_nothing_moved(&s, &o);
        let o = run(
            &s,
            "workspace",
            &plant(&s, "node_modules/r/r.git/hooks/pre-receive"),
        );
        assert_moved(&s, &o, "node_modules/r/r.git/hooks/pre-receive");
        assert!(!push_runs_hook(&s, "sub"), "{}", s.label());
        // Paired: where nothing is protected, the push runs the hook.
        let wide = s.write_profile("wide", WIDE);
        run(
            &s,
            wide.to_str().unwrap(),
            &plant(&s, "node_modules/r/r.git/hooks/pre-receive"),
        );
        assert!(push_runs_hook(&s, "sub"), "{}", s.label());
    }
}
