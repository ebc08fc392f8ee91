//! The gate judges git commands by what they write and run: the steps of a plumbing chain that
//! plants a protected path through the index are not allowed when an agent proposes them and a
//! formatter's rewrite is a write, the branch commands that record an upstream in `.git/config`
//! are refused as the kernel refuses the write (each paired with a twin that records none, which
//! runs), and `git status` and `git diff` ask where a submodule they recurse into has a
//! configuration that runs a program. Each refusal is paired with the same action let through.
#![expect(clippy::unwrap_used, reason = "test")]
mod common;
mod gate_common;
use common::*;
use gate_common::*;

/// The steps of a plumbing chain that plants `.claude/settings.json` through the index are not
/// allowed when an agent proposes them; the entry for the protected path is denied by the
/// plan. Under `read-only` a formatter's rewrite is denied by the plan, and its check mode and
/// an index refresh stay allowed.
#[test]
fn git_plumbing_and_formatters_are_judged_as_the_writes_they_are() {
    let s = Scratch::new(None);
    let out = s.outside(
        "rm -rf .git && git init -q -b main && \
         git -c user.email=t@example.com -c user.name=t commit -q --allow-empty -m init",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let sha = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";
    for (cmd, want) in [
        ("git hash-object -w payload.json".to_string(), "ask"),
        (
            format!("git update-index --add --cacheinfo 100644,{sha},.claude/settings.json"),
            "deny",
        ),
        (
            format!("git update-index --add --cacheinfo 100644,{sha},.vscode/tasks.json"),
            "deny",
        ),
        ("git write-tree".to_string(), "ask"),
        (
            "git commit-tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904 -p HEAD -m x".to_string(),
            "ask",
        ),
        ("git read-tree HEAD".to_string(), "ask"),
        ("git branch evil HEAD".to_string(), "ask"),
        ("git switch evil".to_string(), "ask"),
        ("git update-index --refresh".to_string(), "allow"),
    ] {
        let r = check_json(&s, &["--profile", "workspace", "--", &cmd]);
        assert_eq!(r["decision"], want, "{cmd}: {r}");
    }
    for (cmd, want) in [
        ("ruff format .", "deny"),
        ("ruff check --fix .", "deny"),
        ("rustfmt src/main.rs", "deny"),
        ("gofmt -w .", "deny"),
        ("git add -A", "deny"),
        ("git stash", "deny"),
        ("git tag v1", "deny"),
        ("ruff check .", "allow"),
        ("ruff format --check .", "allow"),
        ("git status", "allow"),
    ] {
        let r = check_json(&s, &["--profile", "read-only", "--", cmd]);
        assert_eq!(r["decision"], want, "{cmd}: {r}");
        if want == "deny" {
            let plan = r["trace"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["by"] == "plan:write" && t["outcome"] == "deny");
            assert!(plan, "{cmd}: the plan refuses the write: {r}");
        }
    }
}

/// A repository in the workspace as `git clone` leaves one: `main` tracking `origin/main`, a
/// local `topic`, remote branches `origin/feat` and `origin/main`; the remote inside the
/// workspace, so that a push reaches it.
fn upstream_repo(s: &Scratch) {
    let out = s.outside(
        "rm -rf .git remote.git wt wt2 && git init -q -b main && \
         git -c user.email=t@example.com -c user.name=t commit -q --allow-empty -m init && \
         git init -q --bare remote.git && git remote add origin ./remote.git && \
         git push -q origin main main:feat && git fetch -q && \
         git branch -q --set-upstream-to=origin/main main && git branch -q topic && \
         echo remote.git >> .git/info/exclude",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

/// The branch commands that record an upstream (or rename a branch's section) in `.git/config`
/// are refused by the gate, and the kernel refuses the write: git makes the branch, says it
/// could not write the file, and leaves it as it was. Each is paired with a twin that records
/// none, which the gate asks about when an agent proposes it (it writes the repository) and
/// lets through under `sbx run`, and the kernel runs.
#[test]
fn branch_commands_that_write_an_upstream_are_refused_as_the_kernel_refuses_them() {
    let refused = [
        "git checkout -b x origin/feat",
        "git switch -c x origin/feat",
        "git checkout --track origin/feat",
        "git checkout feat",
        "git switch feat",
        "git branch x origin/feat",
        "git worktree add wt feat",
        "git push -u origin main",
        "git branch -m topic renamed",
    ];
    let let_through = [
        ("git checkout -b x --no-track origin/feat", "ask"),
        ("git switch -c x --no-track origin/feat", "ask"),
        ("git branch --no-track x origin/feat", "ask"),
        ("git checkout -b x main", "ask"),
        ("git checkout topic", "ask"),
        ("git checkout origin/feat", "ask"),
        ("git worktree add wt2 origin/feat", "ask"),
    ];
    for user in users() {
        let s = Scratch::new(user);
        for cmd in refused {
            upstream_repo(&s);
            refused_by_gate_and_kernel(&s, cmd);
        }
        for (cmd, want) in let_through {
            upstream_repo(&s);
            let r = check_json(&s, &["--", cmd]);
            assert_eq!(r["decision"], want, "{cmd}: {r}");
            let run = check_json(&s, &["--mode", "sandbox-auto", "--", cmd]);
            assert_eq!(run["decision"], "allow", "{cmd}: {run}");
            let out = s.run("workspace", cmd);
            assert_eq!(out.status.code(), Some(0), "{cmd}: {}", text(&out));
            assert!(
                !text(&out).contains("could not write config file"),
                "{} {cmd}: {}",
                s.label(),
                text(&out)
            );
        }
    }
}

/// `cmd` is denied by the gate (the plan's `plan:deny-write` among its stages) and by `sbx
/// run`; run without the gate, git says it could not write `.git/config`, which is unchanged.
fn refused_by_gate_and_kernel(s: &Scratch, cmd: &str) {
    let config = || std::fs::read_to_string(s.ws.join(".git/config")).unwrap();
    let r = check_json(s, &["--", cmd]);
    assert_eq!(r["decision"], "deny", "{cmd}: {r}");
    let plan = r["trace"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["by"] == "plan:deny-write" && t["outcome"] == "deny");
    assert!(plan, "{cmd}: the plan refuses the write too: {r}");
    let gated = s
        .sbx(&["run", "--profile", "workspace", "--", "sh", "-c", cmd])
        .output()
        .unwrap();
    assert_eq!(gated.status.code(), Some(123), "{cmd}: {}", text(&gated));
    // The kernel, without the gate, agrees.
    let before = config();
    let out = s.run("workspace", cmd);
    let said = text(&out);
    assert!(
        said.contains("could not write config file"),
        "{} {cmd}: {said}",
        s.label()
    );
    assert_eq!(config(), before, "{cmd}: the upstream was written");
}

/// `git status` and `git diff` recurse into the populated submodules `.gitmodules` names and
/// run what their configuration says: a submodule repository whose config sets
/// `core.fsmonitor` makes them ask, while one with git's plain keys (and one kept in the
/// workspace's `.git/modules`, as `git submodule` makes it) leaves them allowed.
#[test]
fn a_submodule_s_repository_is_judged_for_the_commands_that_recurse_into_it() {
    let s = Scratch::new(None);
    let git = |args: &[&str]| {
        let o = std::process::Command::new("git")
            .args(args)
            .current_dir(&s.ws)
            .output()
            .unwrap();
        assert!(o.status.success(), "git {args:?}: {}", text(&o));
    };
    git(&["init", "-q"]);
    std::fs::write(
        s.ws.join(".gitmodules"),
        "[submodule \"sub\"]\n\tpath = sub\n\turl = ../sub\n[submodule \"kept\"]\n\tpath = kept\n\turl = ../kept\n",
    )
    .unwrap();
    let repo = |dir: &std::path::Path, config: &str| {
        for d in ["objects", "refs/heads"] {
            std::fs::create_dir_all(dir.join(d)).unwrap();
        }
        std::fs::write(dir.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(dir.join("config"), config).unwrap();
    };
    repo(&s.ws.join("sub/.git"), "[core]\n\tbare = false\n");
    repo(
        &s.ws.join(".git/modules/kept"),
        "[core]\n\tbare = false\n\tfsmonitor = ./x\n",
    );
    std::fs::create_dir_all(s.ws.join("kept")).unwrap();
    std::fs::write(s.ws.join("kept/.git"), "gitdir: ../.git/modules/kept\n").unwrap();
    for cmd in ["git status", "git diff", "cd sub && git log -1"] {
        let r = check_json(&s, &["--", cmd]);
        assert_eq!(r["decision"], "allow", "{cmd}: {r}");
    }
    repo(
        &s.ws.join("sub/.git"),
        "[core]\n\tbare = false\n\tfsmonitor = ./x\n",
    );
    for cmd in ["git status", "git diff", "cd src && git status"] {
        std::fs::create_dir_all(s.ws.join("src")).unwrap();
        let r = check_json(&s, &["--", cmd]);
        assert_eq!(r["decision"], "ask", "{cmd}: {r}");
        assert!(r.to_string().contains("submodule"), "{cmd}: {r}");
    }
}
