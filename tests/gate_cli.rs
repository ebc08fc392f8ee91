//! The gate agrees with the sandbox, end to end through `sbx check`, `sbx run` and
//! `sbx hook claude-code`: the plan decides paths, findings beat wildcards, `sbx run` runs
//! ordinary work in sandbox-auto with no terminal, and every level of an `extends` chain
//! contributes its policy. Each refusal is paired with the same action let through.
#![expect(clippy::unwrap_used, reason = "test")]
mod common;
use common::*;
use serde_json::{Value, json};
use std::io::Write;
use std::process::{Output, Stdio};

fn check_json(s: &Scratch, args: &[&str]) -> Value {
    let mut all = vec!["check", "--json"];
    all.extend_from_slice(args);
    let o = s.sbx(&all).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

fn hook(s: &Scratch, args: &[&str], tool: &str, input: Value) -> Value {
    let event = json!({
        "session_id": "s1", "transcript_path": "/nonexistent/t.jsonl", "cwd": s.ws,
        "permission_mode": "default", "hook_event_name": "PreToolUse",
        "tool_name": tool, "tool_input": input, "tool_use_id": "t1",
    });
    let mut all = vec!["hook", "claude-code"];
    all.extend_from_slice(args);
    let mut child = s
        .sbx(&all)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(event.to_string().as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    serde_json::from_str::<Value>(&stdout(&o)).unwrap()["hookSpecificOutput"].clone()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn check_denies_what_the_plan_hides_or_refuses_and_asks_only_what_approval_can_make_work() {
    let s = Scratch::new(None);
    std::fs::write(s.home.join(".netrc"), "machine x password y\n").unwrap();
    let netrc = check_json(&s, &["--", "cat", "$HOME/.netrc"]);
    assert_eq!(netrc["decision"], "deny", "{netrc}");
    assert_eq!(netrc["stage"], "plan", "{netrc}");
    assert_eq!(netrc["rule"], "plan:deny-read", "{netrc}");
    assert!(
        netrc["source"]
            .as_str()
            .unwrap()
            .starts_with("builtin:base:"),
        "{netrc}"
    );
    // The same kind of read of an ordinary file in the home directory is allowed.
    let notes = check_json(&s, &["--", "cat", "$HOME/notes.txt"]);
    assert_eq!(notes["decision"], "allow", "{notes}");

    let tool =
        |name: &str, input: Value| check_json(&s, &["--tool", name, "--input", &input.to_string()]);
    let env = tool("Write", json!({"file_path": ".env", "content": "A=1"}));
    assert_eq!(
        (&env["decision"], &env["stage"]),
        (&json!("deny"), &json!("plan"))
    );
    let head = tool("Write", json!({"file_path": ".git/HEAD", "content": "x"}));
    assert_eq!(
        head["decision"], "ask",
        "not protected by the profile: {head}"
    );
    assert_eq!(head["rule"], "floor:git-internals", "{head}");
    let src = tool(
        "Edit",
        json!({"file_path": "src/../lib.rs", "old_string": "a", "new_string": "b"}),
    );
    assert_eq!(src["decision"], "allow", "{src}");
    // A symlink in the workspace is judged by its target.
    std::os::unix::fs::symlink(s.home.join(".ssh"), s.ws.join("keys")).unwrap();
    let link = tool("Read", json!({"file_path": "keys/id_rsa"}));
    assert_eq!(link["decision"], "deny", "{link}");
    let glob = tool("Glob", json!({"pattern": "~/.ssh/*"}));
    assert_eq!(
        (&glob["decision"], &glob["stage"]),
        (&json!("deny"), &json!("plan"))
    );
    let glob = tool("Glob", json!({"pattern": "src/**/*.rs"}));
    assert_eq!(glob["decision"], "allow", "{glob}");
    let wipe = check_json(
        &s,
        &["--", "rm", "-rf", &s.ws.join("build").to_string_lossy()],
    );
    assert_eq!(
        wipe["decision"], "ask",
        "asked, not taken for wiping: {wipe}"
    );
    let root = check_json(&s, &["--", "rm", "-rf", "/"]);
    assert_eq!(root["decision"], "deny", "{root}");
}

#[test]
fn a_wildcard_allow_does_not_lift_a_finding() {
    let s = Scratch::new(None);
    let policy = s.root.path().join("wild.toml");
    std::fs::write(
        &policy,
        "[policy]\nallow = [\"Bash(cat *)\", \"Bash(find *)\", \"Bash(rg *)\", \"Bash(ls *)\", \"Bash(cargo build *)\", \"Bash(make *)\", \"Bash(git diff *)\", \"Bash(python3 -c print(1))\"]\n",
    )
    .unwrap();
    let p = policy.to_str().unwrap();
    let d = |cmd: &str| check_json(&s, &["--policy", p, "--", cmd])["decision"].clone();
    for (cmd, want) in [
        ("cat README.md", "allow"),
        ("cat ~/.ssh/id_rsa", "deny"),
        ("cat ${HOME}/.ssh/id_rsa", "deny"),
        ("cat ~root/.ssh/id_rsa", "deny"),
        ("echo \"$(cat ~/.ssh/id_rsa)\"", "deny"),
        ("ls -la", "allow"),
        ("ls (", "ask"),
        ("find . -name x", "allow"),
        ("find . -delete", "ask"),
        ("find . -exec rm {} \\;", "ask"),
        ("rg foo", "allow"),
        ("rg --pre ./x foo", "ask"),
        ("rg --pre=./x foo", "ask"),
        ("rg --hostname-bin=./x foo", "ask"),
        ("rg --hostname-bin ./x foo", "ask"),
        ("find . -maxdepth 0 -exec sh -c 'cat x' \\;", "ask"),
        ("find . -exec env A=1 bash -c id \\;", "ask"),
        ("find . -name '*.rs' -exec wc -l {} +", "allow"),
        ("cat list.txt | xargs cat", "ask"),
        ("find . -name '*.rs' | xargs cat", "allow"),
        ("cargo build", "allow"),
        ("cargo build --config build.rustc-wrapper=./w", "ask"),
        ("make build", "allow"),
        ("make install", "ask"),
        ("cargo build && cp target/x /usr/local/bin/x", "deny"),
        ("git diff", "allow"),
        ("git diff --output=/usr/local/x", "deny"),
        ("python3 -c 'print(1)'", "allow"),
        ("python3 -c 'print(2)'", "ask"),
    ] {
        assert_eq!(d(cmd), want, "{cmd}");
    }
}

#[test]
fn every_level_of_an_extends_chain_contributes_its_policy() {
    let s = Scratch::new(None);
    let dir = s.root.path().join("profiles");
    std::fs::create_dir_all(dir.join("team")).unwrap();
    std::fs::write(
        dir.join("b.toml"),
        "extends = \"workspace\"\n[policy]\ndeny = [{ rule = \"Bash(git status *)\", reason = \"b says no\" }]\n",
    )
    .unwrap();
    std::fs::write(dir.join("c.toml"), "extends = \"./b.toml\"\n").unwrap();
    // Relative to the naming file, with and without `./`, from another directory.
    std::fs::write(dir.join("team/d.toml"), "extends = \"../c.toml\"\n").unwrap();
    std::fs::write(dir.join("e.toml"), "extends = \"b.toml\"\n").unwrap();
    std::fs::write(dir.join("plain.toml"), "extends = \"workspace\"\n").unwrap();
    for name in ["b.toml", "c.toml", "team/d.toml", "e.toml"] {
        let p = dir.join(name);
        let r = check_json(
            &s,
            &["--profile", p.to_str().unwrap(), "--", "git", "status"],
        );
        assert_eq!(r["decision"], "deny", "{name}: {r}");
        assert!(
            r["source"].as_str().unwrap().contains("b.toml"),
            "{name}: {r}"
        );
        // The shipped policy of the built-in at the bottom of the chain is kept too.
        let r = check_json(
            &s,
            &["--profile", p.to_str().unwrap(), "--", "git", "push", "-f"],
        );
        assert_eq!(r["decision"], "deny", "{name}: {r}");
    }
    let plain = dir.join("plain.toml");
    let r = check_json(
        &s,
        &["--profile", plain.to_str().unwrap(), "--", "git", "status"],
    );
    assert_eq!(r["decision"], "allow", "without the deny: {r}");
}

#[test]
fn sbx_run_runs_ordinary_ci_steps_with_no_terminal() {
    for user in users() {
        let s = Scratch::new(user);
        let run = |profile: &str, cmd: &[&str]| {
            let mut args = vec!["run", "--profile", profile, "--"];
            args.extend_from_slice(cmd);
            s.sbx(&args).output().unwrap()
        };
        let py = run("ci", &["python3", "-c", "print(6*7)"]);
        assert_eq!(py.status.code(), Some(0), "{}: {}", s.label(), text(&py));
        assert_eq!(stdout(&py), "42\n");
        if std::path::Path::new("/usr/bin/npm").exists() {
            let npm = run("ci", &["npm", "--version"]);
            assert_eq!(npm.status.code(), Some(0), "{}: {}", s.label(), text(&npm));
        } else {
            eprintln!("SKIP: npm is not installed");
        }
        // rm -rf of an absolute path inside the workspace is ordinary work.
        std::fs::create_dir_all(s.ws.join("build/x")).unwrap();
        s.chown_all();
        let build = s.ws.join("build");
        let rm = run("workspace", &["rm", "-rf", build.to_str().unwrap()]);
        assert_eq!(rm.status.code(), Some(0), "{}: {}", s.label(), text(&rm));
        assert!(!build.exists());
        // Deny rules and the plan still refuse, with the rule or the profile line.
        let push = run("ci", &["git", "push", "origin", "HEAD"]);
        assert_eq!(push.status.code(), Some(123), "{}", text(&push));
        assert!(
            stderr(&push).contains("CI jobs do not push"),
            "{}",
            text(&push)
        );
        let key = s.home.join(".ssh/id_rsa");
        let read = run("ci", &["cat", key.to_str().unwrap()]);
        assert_eq!(read.status.code(), Some(123), "{}", text(&read));
        assert!(!stdout(&read).contains("SENTINEL"));
        let envrc = run("workspace", &["sh", "-c", "echo x > .envrc"]);
        assert_eq!(envrc.status.code(), Some(123), "{}", text(&envrc));
        assert!(
            stderr(&envrc).contains("builtin:workspace:"),
            "{}",
            text(&envrc)
        );
        assert!(!s.ws.join(".envrc").exists());
        let notes = run("workspace", &["sh", "-c", "echo x > notes.md"]);
        assert_eq!(notes.status.code(), Some(0), "{}", text(&notes));
        assert!(s.ws.join("notes.md").exists());
    }
}

/// A glob target is judged by every path it could become when the shell expands it: `sbx run`
/// refuses a pattern that can name a git hook or a protected name (by the floor), or that
/// expands to an existing protected file (with the plan's reason), and runs one beside it that
/// can name nothing protected.
#[test]
fn a_glob_target_that_could_become_a_protected_path_is_refused() {
    for user in users() {
        let s = Scratch::new(user);
        std::fs::create_dir_all(s.ws.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(s.ws.join("src")).unwrap();
        // What a glob becomes when it runs is what exists: these are there to be named.
        std::fs::create_dir_all(s.ws.join(".vscode")).unwrap();
        std::fs::write(s.ws.join(".vscode/tasks.json"), "{}").unwrap();
        std::fs::write(s.ws.join(".mcp.json"), "{}").unwrap();
        s.chown_all();
        let run = |cmd: &str| {
            s.sbx(&["run", "--profile", "workspace", "--", "sh", "-c", cmd])
                .output()
                .unwrap()
        };
        // By the floor for a name the pattern could reach, by the plan for a literal
        // protected name, by the plan for a pattern that expands to an existing protected file.
        for (cmd, why) in [
            ("echo x > .git/hoo*/pre-commit", ""),
            ("echo x > .e*rc", ""),
            ("echo x > .env.l*", ""),
            ("echo x > .{a,c}laude/settings.json", "builtin:workspace:"),
            ("echo x > .vsc?de/tasks.json", "read-only in the sandbox"),
            ("echo x > .mcp.js*", "read-only in the sandbox"),
        ] {
            let o = run(cmd);
            let label = s.label();
            assert_eq!(o.status.code(), Some(123), "{label}: {cmd}: {}", text(&o));
            assert!(stderr(&o).contains(why), "{cmd}: {}", text(&o));
        }
        assert_eq!(
            std::fs::read_dir(s.ws.join(".git/hooks")).unwrap().count(),
            0
        );
        for harmless in ["echo x > src/*.rs", "echo x > *env"] {
            let o = run(harmless);
            assert_eq!(
                o.status.code(),
                Some(0),
                "{}: {harmless}: {}",
                s.label(),
                text(&o)
            );
        }
        assert!(s.ws.join("src/*.rs").exists() && s.ws.join("*env").exists());
    }
}

/// What the gate refuses, the kernel refuses too: the same commands with the gate skipped.
#[test]
fn the_kernel_agrees_with_the_gate() {
    for user in users() {
        let s = Scratch::new(user);
        let key = s.home.join(".ssh/id_rsa");
        let raw = s
            .sbx(&[
                "run",
                "--no-policy",
                "--profile",
                "ci",
                "--",
                "cat",
                key.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        assert_ne!(raw.status.code(), Some(0), "{}", text(&raw));
        assert!(!stdout(&raw).contains("SENTINEL"), "{}", text(&raw));
        let out = s.outside(&format!("cat {}", key.display()));
        assert!(
            stdout(&out).contains("SENTINEL-SSH-KEY"),
            "readable outside: {}",
            text(&out)
        );
    }
}

#[test]
fn the_hook_reads_the_plan_with_and_without_the_sandbox_rewrite() {
    let s = Scratch::new(None);
    for extra in [&[][..], &["--sandbox=rewrite"][..]] {
        let h = hook(
            &s,
            extra,
            "Read",
            json!({"file_path": "~/.ssh/known_hosts"}),
        );
        assert_eq!(h["permissionDecision"], "deny", "{h}");
        assert!(
            h["permissionDecisionReason"]
                .as_str()
                .unwrap()
                .contains("plan:deny-read")
        );
        let h = hook(&s, extra, "Bash", json!({"command": "cat ~/.netrc"}));
        assert_eq!(h["permissionDecision"], "deny", "{h}");
        assert!(
            h.get("updatedInput").is_none(),
            "a denial is not rewritten: {h}"
        );
        let h = hook(
            &s,
            extra,
            "Write",
            json!({"file_path": ".claude/settings.json", "content": "{}"}),
        );
        assert_eq!(h["permissionDecision"], "deny", "{h}");
        let h = hook(&s, extra, "Bash", json!({"command": "ls -la"}));
        assert_eq!(h["permissionDecision"], "allow", "{h}");
        assert_eq!(h.get("updatedInput").is_some(), !extra.is_empty(), "{h}");
        // An agent's proposal is decided in default mode: inline code asks.
        let h = hook(
            &s,
            extra,
            "Bash",
            json!({"command": "python3 -c 'print(1)'"}),
        );
        assert_eq!(h["permissionDecision"], "ask", "{h}");
    }
}

/// Home-directory credentials the shipped profile hides, written so that a read of them shows.
fn plant_secrets(s: &Scratch) {
    for d in [".codex", ".claude", ".aws"] {
        std::fs::create_dir_all(s.home.join(d)).unwrap();
    }
    for f in [
        ".codex/auth.json",
        ".claude/.credentials.json",
        ".aws/credentials",
        ".netrc",
        ".git-credentials",
        ".pgpass",
    ] {
        std::fs::write(s.home.join(f), "SENTINEL-SECRET-5d1e\n").unwrap();
    }
}

fn decision(r: &Value) -> (&str, &str) {
    (
        r["decision"].as_str().unwrap_or(""),
        r["rule"].as_str().unwrap_or(""),
    )
}

#[test]
fn globs_are_expanded_and_every_match_is_checked_against_the_plan() {
    let s = Scratch::new(None);
    plant_secrets(&s);
    for cmd in [
        "cat ~/.cod*/auth.json ~/.claude/.cred*",
        "grep -r . ~/.aw[s] ~/.ss[h]",
        "cat ~/.codex/auth.jso?",
        "head -c 10000 ~/.git-credential*",
        "awk 1 ~/.pgpas?",
        "od -c ~/.n*rc",
        "cat ~/.*/auth.json",
        "less ~/.[c]laude/.credentials.json",
        "cat ~/.{codex,none}/auth.json",
    ] {
        let r = check_json(&s, &["--", cmd]);
        assert_eq!(decision(&r), ("deny", "plan:deny-read"), "{cmd}: {r}");
        // The same through the hook, where the command would run unsandboxed.
        let h = hook(&s, &[], "Bash", json!({ "command": cmd }));
        assert_eq!(h["permissionDecision"], "deny", "{cmd}: {h}");
    }
    // The same globs over files the plan lets through.
    for cmd in ["cat ~/note*", "cat ~/notes.tx?", "ls ~/*"] {
        let r = check_json(&s, &["--", cmd]);
        assert_eq!(r["decision"], "allow", "{cmd}: {r}");
    }
}

#[test]
fn a_recursive_read_over_a_hidden_path_is_refused_outside_the_sandbox() {
    let s = Scratch::new(None);
    plant_secrets(&s);
    for cmd in [
        "rg -uu . ~",
        "grep -r TOKEN ~",
        "find ~ -name '*.json' -exec cat {} +",
        "ls -R ~",
        "tar c ~",
        "cp -r ~ x",
        "du -sh ~",
        "zip -r x.zip ~",
        "git grep --no-index TOKEN ~",
        "cd ~ && rg TOKEN",
        "cat ~/**/auth.json",
    ] {
        let r = check_json(&s, &["--", cmd]);
        assert_eq!(decision(&r), ("deny", "plan:deny-read-tree"), "{cmd}: {r}");
        assert!(r["reason"].as_str().unwrap().contains("recursively"), "{r}");
        let h = hook(&s, &[], "Bash", json!({ "command": cmd }));
        assert_eq!(h["permissionDecision"], "deny", "{cmd}: {h}");
        // In sandbox-auto the kernel hides those paths from the walk (see the test below).
        let r = check_json(&s, &["--mode", "sandbox-auto", "--", cmd]);
        assert_ne!(r["rule"], "plan:deny-read-tree", "{cmd}: {r}");
    }
    for cmd in ["rg TOKEN src", "grep -r TOKEN .", "ls -R src", "du -sh ."] {
        let r = check_json(&s, &["--", cmd]);
        assert_eq!(r["decision"], "allow", "{cmd}: {r}");
    }
    let tool =
        |name: &str, input: Value| check_json(&s, &["--tool", name, "--input", &input.to_string()]);
    let home = s.home.to_str().unwrap();
    for (name, input) in [
        ("Grep", json!({"pattern": "TOKEN", "path": home})),
        ("Glob", json!({"pattern": "**/*.json", "path": home})),
        ("Grep", json!({"pattern": "TOKEN", "path": "~"})),
    ] {
        let r = tool(name, input);
        assert_eq!(decision(&r), ("deny", "plan:deny-read-tree"), "{name}: {r}");
    }
    let grep = tool("Grep", json!({"pattern": "TOKEN", "path": "src"}));
    assert_eq!(grep["decision"], "allow", "{grep}");
    let ls = tool("LS", json!({ "path": home }));
    assert_eq!(ls["decision"], "allow", "LS lists one directory: {ls}");
}

/// The choice above, proved: run in the sandbox, a recursive read of the home directory walks
/// it (the notes show) but the kernel hides the credentials; run outside, it reads them.
#[test]
fn the_sandbox_hides_hidden_paths_from_a_recursive_read() {
    for user in users() {
        let s = Scratch::new(user);
        plant_secrets(&s);
        s.chown_all();
        let home = s.home.to_str().unwrap();
        let o = s
            .sbx(&[
                "run",
                "--profile",
                "workspace",
                "--",
                "grep",
                "-r",
                "SENTINEL",
                home,
            ])
            .output()
            .unwrap();
        assert!(
            stdout(&o).contains("SENTINEL-NOTES"),
            "{}: {}",
            s.label(),
            text(&o)
        );
        assert!(
            !stdout(&o).contains("SENTINEL-SECRET"),
            "{}: {}",
            s.label(),
            text(&o)
        );
        assert!(
            !stdout(&o).contains("SENTINEL-SSH"),
            "{}: {}",
            s.label(),
            text(&o)
        );
        let out = s.outside(&format!("grep -r SENTINEL {home}"));
        assert!(stdout(&out).contains("SENTINEL-SECRET"), "{}", text(&out));
    }
}

#[test]
fn proc_aliases_of_the_working_directory_resolve_as_the_command_sees_them() {
    let s = Scratch::new(None);
    plant_secrets(&s);
    std::fs::write(s.ws.join("README.md"), "x\n").unwrap();
    for cmd in [
        "cat ../home/.codex/auth.json",
        "cat /proc/self/cwd/../home/.codex/auth.json",
        "cat /proc/thread-self/cwd/../home/.codex/auth.json",
        "cat /proc/1/cwd/../home/.codex/auth.json",
        "cat /proc/424242/task/1/cwd/../home/.codex/auth.json",
        "cat /proc/self/root/proc/self/cwd/../home/.netrc",
    ] {
        let r = check_json(&s, &["--", cmd]);
        assert_eq!(decision(&r), ("deny", "plan:deny-read"), "{cmd}: {r}");
    }
    let ok = check_json(&s, &["--", "cat /proc/self/cwd/README.md"]);
    assert_eq!(ok["decision"], "allow", "{ok}");
    let fd = check_json(&s, &["--", "cat /dev/fd/3/../x"]);
    assert_eq!(fd["decision"], "ask", "{fd}");
    let h = hook(
        &s,
        &[],
        "Read",
        json!({"file_path": "/proc/self/cwd/../home/.codex/auth.json"}),
    );
    assert_eq!(h["permissionDecision"], "deny", "{h}");
    let h = hook(&s, &[], "Read", json!({"file_path": "/dev/fd/3/x"}));
    assert_eq!(h["permissionDecision"], "deny", "{h}");
    // A descriptor itself is the harness's, which sbx cannot see.
    for path in [
        "/dev/fd/0",
        "/dev/stdin",
        "/proc/self/fd/3",
        "/proc/thread-self/fd/1",
    ] {
        let h = hook(&s, &[], "Read", json!({"file_path": path}));
        assert_eq!(h["permissionDecision"], "deny", "{path}: {h}");
    }
    let h = hook(
        &s,
        &[],
        "Read",
        json!({"file_path": "/proc/self/cwd/README.md"}),
    );
    assert_eq!(h["permissionDecision"], "allow", "{h}");
    // The harness's own environment: Read, Grep and Glob run in its process, not sandboxed.
    for (tool, input) in [
        ("Read", json!({"file_path": "/proc/self/environ"})),
        ("Read", json!({"file_path": "/proc/1/environ"})),
        ("Grep", json!({"pattern": "KEY", "path": "/proc"})),
    ] {
        let h = hook(&s, &[], tool, input);
        assert_eq!(h["permissionDecision"], "deny", "{tool}: {h}");
    }
    // Paired: other /proc files and a Glob that stays in the workspace are read.
    let h = hook(&s, &[], "Read", json!({"file_path": "/proc/cpuinfo"}));
    assert_eq!(h["permissionDecision"], "allow", "{h}");
    // A relative Glob pattern that climbs out is judged where it leads.
    let h = hook(&s, &[], "Glob", json!({"pattern": "../home/.ssh/*"}));
    assert_ne!(h["permissionDecision"], "allow", "{h}");
    let h = hook(&s, &[], "Glob", json!({"pattern": "src/**/*.rs"}));
    assert_eq!(h["permissionDecision"], "allow", "{h}");
}

#[test]
fn builds_and_tests_ask_outside_the_sandbox_and_run_in_it() {
    let s = Scratch::new(None);
    for cmd in [
        "npm test",
        "yarn test",
        "pytest",
        "python3 -m pytest",
        "cargo build",
        "cargo test",
        "cargo run",
        "go test ./...",
        "mvn test",
        "git commit -m wip",
        "prettier --write .",
        "black .",
    ] {
        let r = check_json(&s, &["--", cmd]);
        assert_eq!(r["decision"], "ask", "{cmd}: {r}");
        for extra in [&[][..], &["--sandbox=rewrite"][..]] {
            let h = hook(&s, extra, "Bash", json!({ "command": cmd }));
            assert_eq!(h["permissionDecision"], "ask", "{cmd} {extra:?}: {h}");
        }
        let r = check_json(&s, &["--mode", "sandbox-auto", "--", cmd]);
        assert_eq!(r["decision"], "allow", "{cmd}: {r}");
    }
    for cmd in ["cargo --version", "cargo metadata", "npm ls", "git status"] {
        let r = check_json(&s, &["--", cmd]);
        assert_eq!(r["decision"], "allow", "{cmd}: {r}");
    }
}

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

#[test]
fn a_link_to_a_hidden_path_names_the_link_and_is_harmless_in_the_sandbox() {
    let s = Scratch::new(None);
    plant_secrets(&s);
    let r = check_json(&s, &["--", "ln -s ~/.codex/auth.json x"]);
    assert_eq!(decision(&r), ("deny", "plan:link-hidden"), "{r}");
    assert!(r["reason"].as_str().unwrap().contains("link"), "{r}");
    let r = check_json(
        &s,
        &["--mode", "sandbox-auto", "--", "ln -s ~/.codex/auth.json x"],
    );
    assert_eq!(r["decision"], "allow", "{r}");
    let r = check_json(&s, &["--", "ln -s README.md x"]);
    assert_ne!(r["decision"], "deny", "{r}");
    // A hard link is a second name for the file itself: the plan refuses it as a read.
    let r = check_json(
        &s,
        &["--mode", "sandbox-auto", "--", "ln ~/.codex/auth.json x"],
    );
    assert_eq!(decision(&r), ("deny", "plan:deny-read"), "{r}");
}

/// Every printing command ends quietly when its reader has gone away.
#[test]
fn output_to_a_closed_pipe_ends_quietly() {
    let s = Scratch::new(None);
    for args in [
        &["check", "--", "ls"][..],
        &["check", "--json", "--", "ls"][..],
        &["explain"][..],
        &["doctor"][..],
        &["tools", "--format", "json-schema"][..],
    ] {
        let mut child = s
            .sbx(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        assert!(!stderr(&o).contains("panicked"), "{args:?}: {}", stderr(&o));
        assert_ne!(o.status.code(), Some(101), "{args:?}: {}", stderr(&o));
    }
}

/// A case-insensitive file system for the test, over FUSE (tests/data/casefold_fs.py, with
/// fusepy in the tests' virtual environment and libfuse2, installed when missing). Unmounted when dropped.
struct CaseFold {
    mnt: std::path::PathBuf,
    child: std::process::Child,
}

impl CaseFold {
    fn mount(back: &std::path::Path, mnt: &std::path::Path) -> Option<CaseFold> {
        let python = if nix::unistd::geteuid().is_root() {
            venv::fuse_packages().and_then(|()| {
                venv::python_with(
                    "casefold-venv",
                    "tests/casefold/requirements.txt",
                    "import fuse",
                )
            })
        } else {
            Err("mounting FUSE needs root (/dev/fuse is root's)".into())
        };
        let usable = python.is_ok() && std::path::Path::new("/dev/fuse").exists();
        if !require(
            &format!("FUSE with fusepy and libfuse2 (a case-insensitive file system): {python:?}"),
            usable,
        ) {
            return None;
        }
        let script =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/casefold_fs.py");
        let child = std::process::Command::new(python.unwrap())
            .arg(script)
            .args([back, mnt])
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let fold = CaseFold {
            mnt: mnt.to_path_buf(),
            child,
        };
        let dev = |p: &std::path::Path| std::os::unix::fs::MetadataExt::dev(&p.metadata().unwrap());
        let parent = dev(mnt.parent().unwrap());
        for _ in 0..200 {
            if dev(mnt) != parent {
                return Some(fold);
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        panic!(
            "the case-insensitive file system did not mount at {}",
            mnt.display()
        );
    }
}

impl Drop for CaseFold {
    fn drop(&mut self) {
        let _ = std::process::Command::new("fusermount")
            .arg("-u")
            .arg(&self.mnt)
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Where the home folds case, `~/.SSH/id_rsa` is the hidden `~/.ssh/id_rsa`: the gate denies
/// it with the plan's reason, as it denies the exact name; on a case-sensitive home the same
/// variant is another, missing file, and no plan refusal.
#[test]
fn a_case_variant_of_a_hidden_path_is_refused_where_the_file_system_folds_case() {
    let s = Scratch::new(None);
    let back = s.root.path().join("back");
    let mnt = s.root.path().join("fold");
    std::fs::create_dir_all(back.join("home/.ssh")).unwrap();
    std::fs::create_dir_all(back.join("home/.config/gh")).unwrap();
    std::fs::write(back.join("home/.ssh/id_rsa"), "k\n").unwrap();
    std::fs::write(back.join("home/.config/gh/hosts.yml"), "token\n").unwrap();
    std::fs::create_dir(&mnt).unwrap();
    let Some(_fold) = CaseFold::mount(&back, &mnt) else {
        return;
    };
    let check = |home: &std::path::Path, cmd: &str| -> Value {
        let o = s
            .sbx(&["check", "--json", "--profile", "workspace", "--", cmd])
            .env("HOME", home)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        serde_json::from_str(&stdout(&o)).unwrap()
    };
    let folded = mnt.join("home");
    let variants = [
        "cat $HOME/.CONFIG/GH/hosts.yml",
        "cat ~/.Config/Gh/HOSTS.YML",
        "cat ~/.SSH/id_rsa",
        // Folds to `s` (by Unicode case folding, not by lower-casing).
        "cat ~/.\u{17F}sh/id_rsa",
    ];
    for cmd in ["cat $HOME/.config/gh/hosts.yml"].iter().chain(&variants) {
        let r = check(&folded, cmd);
        assert_eq!(decision(&r), ("deny", "plan:deny-read"), "{cmd}: {r}");
    }
    // In the sandbox the mount hides the exact name, and FUSE resolves a case variant to the
    // file under it; in a home, Landlock's rules around the secret keep the variant out too.
    let o = s
        .sbx(&[
            "run",
            "--no-policy",
            "--profile",
            "workspace",
            "--",
            "sh",
            "-c",
        ])
        .arg("cat $HOME/.config/gh/hosts.yml; echo; cat $HOME/.CONFIG/GH/hosts.yml")
        .env("HOME", &folded)
        .current_dir(&s.ws)
        .output()
        .unwrap();
    let out = stdout(&o);
    assert_eq!(out.matches("token").count(), 0, "{}", text(&o));
    assert_eq!(
        text(&o).matches("Permission denied").count(),
        2,
        "{}",
        text(&o)
    );
    // The same variants where case matters: not the hidden file.
    for cmd in variants {
        let r = check(&back.join("home"), cmd);
        assert_ne!(r["rule"], "plan:deny-read", "{cmd}: {r}");
    }
    // A protected path that does not exist yet, in a workspace that folds case.
    std::fs::create_dir_all(back.join("ws")).unwrap();
    std::fs::write(back.join("ws/Cargo.toml"), "").unwrap();
    let new_envrc = |ws: &std::path::Path| -> Value {
        let o = s
            .sbx(&["check", "--json", "--profile", "workspace", "--workspace"])
            .arg(ws)
            .args(["--", "echo x > .ENVRC"])
            .current_dir(ws)
            .output()
            .unwrap();
        serde_json::from_str(&stdout(&o)).unwrap()
    };
    let r = new_envrc(&mnt.join("ws"));
    assert_eq!(r["decision"], "deny", "{r}");
    assert!(r["rule"].as_str().unwrap_or("").starts_with("plan:"), "{r}");
    // Where case matters, `.ENVRC` is an ordinary new file in the workspace.
    let r = new_envrc(&back.join("ws"));
    assert!(
        !r["rule"].as_str().unwrap_or("").starts_with("plan:"),
        "{r}"
    );
}

/// A `..` after a symbolic link climbs from where the link leads, as the kernel walks the
/// path, not from the link: the gate judges the file the kernel reads. Both ways a lexical
/// `..` would disagree are checked, each against a run of the same command with the gate
/// skipped: a workspace link into the home reaches a hidden file (`into-home/../.pgpass`,
/// which folds lexically to a workspace file), and a home link to a dotfiles directory reaches
/// a harmless one (`~/.cfg/../.codex/auth.json`, which folds lexically to a hidden file).
#[test]
fn a_dotdot_after_a_link_climbs_from_where_the_link_leads() {
    let s = Scratch::new(None);
    plant_secrets(&s);
    std::fs::create_dir_all(s.home.join("proj")).unwrap();
    std::fs::write(s.home.join("proj/notes.md"), "SENTINEL-PROJ-3c9e\n").unwrap();
    std::os::unix::fs::symlink(s.home.join("proj"), s.ws.join("into-home")).unwrap();
    std::fs::create_dir_all(s.home.join("dots/cfg")).unwrap();
    std::fs::create_dir_all(s.home.join("dots/.codex")).unwrap();
    std::fs::write(s.home.join("dots/.codex/auth.json"), "SENTINEL-DOTS-77a1\n").unwrap();
    std::os::unix::fs::symlink(s.home.join("dots/cfg"), s.home.join(".cfg")).unwrap();
    for (cmd, want, sentinel) in [
        ("cat into-home/../.codex/auth.json", "deny", None),
        (
            "cat into-home/../proj/notes.md",
            "allow",
            Some("SENTINEL-PROJ"),
        ),
        (
            "cat ~/.cfg/../.codex/auth.json",
            "allow",
            Some("SENTINEL-DOTS"),
        ),
        ("cat ~/.codex/auth.json", "deny", None),
    ] {
        let r = check_json(&s, &["--", cmd]);
        assert_eq!(r["decision"], want, "{cmd}: {r}");
        if want == "deny" {
            assert_eq!(r["rule"], "plan:deny-read", "{cmd}: {r}");
        }
        // The kernel, without the gate, agrees.
        let out = s.run("workspace", cmd);
        match sentinel {
            Some(mark) => assert!(stdout(&out).contains(mark), "{cmd}: {}", text(&out)),
            None => assert!(!stdout(&out).contains("SENTINEL"), "{cmd}: {}", text(&out)),
        }
    }
    // A write through the link lands in the home, on the floor.
    let r = check_json(&s, &["--", "echo x > into-home/../.bashrc"]);
    assert_eq!(r["decision"], "deny", "{r}");
    // The hook judges the Read tool's path and a Bash command the same way.
    for (tool, input, want) in [
        (
            "Read",
            json!({"file_path": "into-home/../.codex/auth.json"}),
            "deny",
        ),
        (
            "Read",
            json!({"file_path": "into-home/../proj/notes.md"}),
            "allow",
        ),
        (
            "Read",
            json!({"file_path": s.home.join(".cfg/../.codex/auth.json")}),
            "allow",
        ),
        (
            "Bash",
            json!({"command": "cat into-home/../.codex/auth.json"}),
            "deny",
        ),
        (
            "Bash",
            json!({"command": "cat ~/.cfg/../.codex/auth.json"}),
            "allow",
        ),
    ] {
        let h = hook(&s, &[], tool, input.clone());
        assert_eq!(h["permissionDecision"], want, "{tool} {input}: {h}");
    }
}

/// The harness's own tools (a to-do list, a sub-agent, a question to the user, the output of a
/// shell it started) touch nothing on the host: allowed, where an unknown tool is asked about;
/// a deny rule naming one still denies it. NotebookRead is a read, judged by its path like Read.
#[test]
fn the_harness_s_own_tools_are_allowed_and_a_notebook_read_is_judged_by_its_path() {
    let s = Scratch::new(None);
    let tool =
        |name: &str, input: Value| check_json(&s, &["--tool", name, "--input", &input.to_string()]);
    let todo = json!({"todos": [{"content": "x", "status": "pending"}]});
    for (name, input) in [
        ("TodoWrite", todo.clone()),
        ("Task", json!({"description": "d", "prompt": "look around"})),
        ("BashOutput", json!({"bash_id": "1"})),
        ("KillShell", json!({"shell_id": "1"})),
        ("ExitPlanMode", json!({"plan": "p"})),
        ("write_todos", todo.clone()),
    ] {
        let r = tool(name, input);
        assert_eq!(r["decision"], "allow", "{name}: {r}");
    }
    let unknown = tool("Frobnicate", json!({}));
    assert_eq!(unknown["decision"], "ask", "{unknown}");
    // A slash command's file may run shell lines as it expands: asked.
    let slash = tool("SlashCommand", json!({"command": "/deploy"}));
    assert_eq!(slash["decision"], "ask", "{slash}");
    let skill = tool("Skill", json!({"skill": "deploy"}));
    assert_eq!(skill["decision"], "ask", "{skill}");
    let policy = s.root.path().join("deny-task.toml");
    std::fs::write(&policy, "[policy]\ndeny = [\"Task\"]\n").unwrap();
    let input = json!({"description": "d", "prompt": "p"}).to_string();
    let policy = policy.to_str().unwrap();
    let denied = check_json(
        &s,
        &["--policy", policy, "--tool", "Task", "--input", &input],
    );
    assert_eq!(denied["decision"], "deny", "{denied}");

    std::fs::write(s.ws.join("a.ipynb"), "{}").unwrap();
    let mine = tool("NotebookRead", json!({"notebook_path": "a.ipynb"}));
    assert_eq!(mine["decision"], "allow", "{mine}");
    let key = s.home.join(".ssh/id_rsa");
    let secret = tool("NotebookRead", json!({"notebook_path": key}));
    assert_eq!(secret["decision"], "deny", "{secret}");
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

/// `workspace-net` allows fetches from the hosts its policy names and asks for any other: a
/// bare `WebFetch` ask beside the allows would outrank them.
#[test]
fn workspace_net_fetches_from_its_named_hosts_and_asks_for_others() {
    let s = Scratch::new(None);
    let fetch = |url: &str| {
        let input = json!({"url": url, "prompt": "p"}).to_string();
        let args = [
            "--profile",
            "workspace-net",
            "--tool",
            "WebFetch",
            "--input",
            &input,
        ];
        check_json(&s, &args)
    };
    for url in ["https://docs.rs/serde", "https://api.github.com/repos/x/y"] {
        let r = fetch(url);
        assert_eq!(r["decision"], "allow", "{url}: {r}");
    }
    let other = fetch("https://evil.example/x");
    assert_eq!(other["decision"], "ask", "{other}");
}

/// With `CDPATH` in the environment the command inherits, `cd notes` goes to the first
/// `notes` under one of its directories (here the home's) before the working directory's,
/// so what follows is relative to a directory only known when it runs; `cd ./notes` is not
/// looked up there, and without `CDPATH` the same line is allowed.
#[test]
fn cd_through_cdpath_leaves_the_directory_unknown() {
    let s = Scratch::new(None);
    for base in [&s.ws, &s.home] {
        std::fs::create_dir_all(base.join("notes")).unwrap();
        std::fs::write(base.join("notes/todo.txt"), "x\n").unwrap();
    }
    let check = |cdpath: Option<&std::path::Path>, line: &str| -> Value {
        let mut cmd = s.sbx(&["check", "--json", "--", line]);
        match cdpath {
            Some(p) => cmd.env("CDPATH", p),
            None => cmd.env_remove("CDPATH"),
        };
        let o = cmd.output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        serde_json::from_str(&stdout(&o)).unwrap()
    };
    let line = "cd notes && cat todo.txt";
    let plain = check(None, line);
    assert_eq!(plain["decision"], "allow", "{plain}");
    let searched = check(Some(&s.home), line);
    assert_eq!(searched["decision"], "ask", "{searched}");
    assert!(
        searched.to_string().contains("only known when it runs"),
        "{searched}"
    );
    let anchored = check(Some(&s.home), "cd ./notes && cat todo.txt");
    assert_eq!(anchored["decision"], "allow", "{anchored}");
}

/// A policy's examples are judged in a workspace of their own: a repository whose
/// `.cargo/config.toml` names `sccache` as its `rustc-wrapper` (which makes the shipped
/// example `cargo metadata` ask there) still loads, and `cargo metadata` asks in it as the
/// analysis says, while the example's own decision holds elsewhere. A project policy whose
/// example its rules contradict still does not load.
#[test]
fn a_workspace_s_files_do_not_break_the_policy_s_examples() {
    let s = Scratch::new(None);
    std::fs::create_dir_all(s.ws.join(".cargo")).unwrap();
    std::fs::write(
        s.ws.join(".cargo/config.toml"),
        "[build]\nrustc-wrapper = \"sccache\"\n",
    )
    .unwrap();
    let ls = check_json(&s, &["--", "ls"]);
    assert_eq!(ls["decision"], "allow", "{ls}");
    let metadata = check_json(&s, &["--", "cargo metadata"]);
    assert_eq!(metadata["decision"], "ask", "{metadata}");
    let ran = s
        .sbx(&["run", "--profile", "workspace", "--", "echo", "ran"])
        .output()
        .unwrap();
    assert_eq!(ran.status.code(), Some(0), "{}", text(&ran));
    assert_eq!(stdout(&ran).trim(), "ran");

    std::fs::create_dir_all(s.ws.join(".sbx")).unwrap();
    std::fs::write(
        s.ws.join(".sbx/policy.toml"),
        "[policy]\nallow = [\"Bash(git diff *)\"]\n[policy.examples]\nmust_deny = [\"git diff\"]\n",
    )
    .unwrap();
    let o = s.sbx(&["check", "--", "ls"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("example `git diff`"), "{}", text(&o));
}

/// A Glob pattern's directory part is where the tool lists: through a workspace link to the
/// home, `h/.ssh/*` lists the hidden `~/.ssh`, as the same pattern from the home does; a
/// pattern through an ordinary directory is allowed.
#[test]
fn a_glob_pattern_through_a_link_lists_where_the_link_leads() {
    let s = Scratch::new(None);
    std::fs::create_dir_all(s.home.join(".ssh")).unwrap();
    std::fs::write(s.home.join(".ssh/id_rsa"), "k\n").unwrap();
    std::fs::create_dir_all(s.ws.join("links")).unwrap();
    std::fs::create_dir_all(s.ws.join("src")).unwrap();
    std::os::unix::fs::symlink(&s.home, s.ws.join("links/h")).unwrap();
    let glob = |input: Value| {
        check_json(&s, &["--tool", "Glob", "--input", &input.to_string()])["decision"].clone()
    };
    let links = s.ws.join("links").to_string_lossy().into_owned();
    assert_eq!(glob(json!({"pattern": "h/.ssh/*", "path": links})), "deny");
    assert_eq!(glob(json!({"pattern": "links/h/.ssh/*"})), "deny");
    assert_eq!(glob(json!({"pattern": "~/.ssh/*"})), "deny");
    assert_eq!(glob(json!({"pattern": "src/*.rs"})), "allow");
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

/// A hard link in the workspace to a file the profile hides is refused where the gate sees it
/// read (a command's operand, the Read tool), in every mode: the sandbox hides the name, not
/// the file. A hard link to a file the profile does not hide reads as any file does.
#[test]
fn a_hard_link_to_a_hidden_file_is_refused_where_the_gate_sees_it_read() {
    let s = Scratch::new(None);
    std::fs::write(s.home.join(".netrc"), "machine x password y\n").unwrap();
    std::fs::hard_link(s.home.join(".netrc"), s.ws.join("n")).unwrap();
    std::fs::hard_link(s.home.join("notes.txt"), s.ws.join("notes")).unwrap();
    for mode in ["default", "sandbox-auto"] {
        for line in ["cat n", "wc -c ./n"] {
            let r = check_json(&s, &["--mode", mode, "--", line]);
            assert_eq!(r["decision"], "deny", "{mode} {line}: {r}");
            assert_eq!(r["rule"], "floor:hidden-file-link", "{mode} {line}: {r}");
        }
        let r = check_json(&s, &["--mode", mode, "--", "cat notes"]);
        assert_eq!(r["decision"], "allow", "{mode}: {r}");
    }
    let path = s.ws.join("n").to_string_lossy().into_owned();
    let h = hook(&s, &[], "Read", json!({"file_path": path}));
    assert_eq!(h["permissionDecision"], "deny", "{h}");
    let notes = s.ws.join("notes").to_string_lossy().into_owned();
    let h = hook(&s, &[], "Read", json!({"file_path": notes}));
    assert_eq!(h["permissionDecision"], "allow", "{h}");
}
