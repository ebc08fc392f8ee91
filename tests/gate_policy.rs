//! The gate's decisions end to end through `sbx check` and `sbx hook claude-code`: the plan
//! decides paths and only what approval can make work is asked, a wildcard allow does not lift a
//! finding, every level of an `extends` chain contributes its policy, the hook reads the plan with
//! and without the sandbox rewrite, builds and tests ask outside the sandbox and run in it, the
//! harness's own tools are allowed, `workspace-net` fetches from its named hosts and asks for
//! others, a workspace's files do not break a policy's examples, and every printing command ends
//! quietly when its reader has gone. Each refusal is paired with the same action let through.
#![expect(clippy::unwrap_used, reason = "test")]
mod common;
mod gate_common;
use common::*;
use gate_common::*;
use serde_json::{Value, json};
use std::process::Stdio;

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
        // What `echo` prints of a known word is the path read, as `cat` written out reads it.
        ("cat $(echo ~/.ssh/id_rsa)", "deny"),
        ("cat \"$(echo $HOME/.ssh/id_rsa)\"", "deny"),
        ("cat `echo ~/.ssh/id_rsa`", "deny"),
        ("cat $(echo README.md)", "allow"),
        // An exported literal is known as an assigned one is.
        ("export X=~/.ssh/id_rsa; cat $X", "deny"),
        ("export X=README.md; cat \"$X\"", "allow"),
        (
            "export X=README.md; export X=$(cat list.txt); cat $X",
            "ask",
        ),
        ("export X=README.md; X[0]=~/.ssh/id_rsa; cat $X", "ask"),
        (
            "export X=README.md; X=~/.ssh/id_rsa export X; cat $X",
            "ask",
        ),
        (
            "X=README.md; X=~/.ssh/id_rsa command readonly X; cat $X",
            "ask",
        ),
        ("X=README.md; X=~/.ssh/id_rsa true; cat $X", "allow"),
        // Unless the line gives `echo` or `pwd` a body or an alias of its own.
        ("echo(){ printf x; }; cat $(echo README.md)", "ask"),
        (
            "function pwd { printf /; }; cat \"$(pwd)/README.md\"",
            "ask",
        ),
        (
            "shopt -s expand_aliases\nalias echo='printf x'\ncat $(echo README.md)",
            "ask",
        ),
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

/// An archive or a patch writes the names its content holds, protected ones included: a
/// wildcard rule for the unpacker does not let it place them (a command run outside the
/// sandbox would plant `.git/hooks/post-checkout`); a member named on the line is judged as
/// the path it is. Listing and creating archives stay covered by the rule.
#[test]
fn a_wildcard_allow_does_not_let_an_unpacker_write_names_its_input_chooses() {
    let s = Scratch::new(None);
    let policy = s.root.path().join("unpack.toml");
    std::fs::write(
        &policy,
        "[policy]\nallow = [\"Bash(tar *)\", \"Bash(unzip *)\", \"Bash(git *)\", \"Bash(patch *)\", \"Bash(python3 *)\", \"Bash(jar *)\", \"Bash(cpio *)\", \"Bash(pax *)\", \"Bash(dpkg *)\", \"Bash(ar *)\"]\n",
    )
    .unwrap();
    let p = policy.to_str().unwrap();
    let d = |cmd: &str| check_json(&s, &["--policy", p, "--", cmd])["decision"].clone();
    for (cmd, want) in [
        ("tar xf b.tar", "ask"),
        ("tar xf b.tar --transform 's,^hk,.git/hooks,'", "ask"),
        ("tar -x --xform=s,hk,.github, -f b.tar", "ask"),
        ("tar xf b.tar .git/hooks/post-checkout", "deny"),
        (
            "tar --extract --file=b.tar -C .git hooks/pre-commit",
            "deny",
        ),
        ("unzip -o a.zip", "ask"),
        ("git apply p.diff", "ask"),
        ("patch -p1 < p.diff", "ask"),
        ("tar -xf b.tar --wildcards '*'", "ask"),
        ("tar -xf b.tar '*'", "ask"),
        ("python3 -m zipfile -e a.zip .", "ask"),
        ("python3 -m tarfile -e b.tar", "ask"),
        ("jar xf a.jar", "ask"),
        ("cpio -id < a.cpio", "ask"),
        ("pax -r -f b.tar", "ask"),
        ("dpkg -x a.deb .", "ask"),
        ("ar x lib.a", "ask"),
        // What the rules cover and nothing protected is written by.
        ("tar xf b.tar src/main.rs", "allow"),
        ("tar tf b.tar", "allow"),
        ("tar czf out.tgz src", "allow"),
        ("unzip -l a.zip", "allow"),
        ("git apply --check p.diff", "allow"),
        ("python3 -m zipfile -l a.zip", "allow"),
        ("ar t lib.a", "allow"),
        ("jar tf a.jar", "allow"),
    ] {
        assert_eq!(d(cmd), want, "{cmd}");
    }
}

/// An allow rule covers its own segments: another segment of the line rides along only when
/// it is read-only. `Bash(ls *)` does not allow `ls && tar xf b.tar` (which plants the hooks
/// the archive holds when it runs unsandboxed), nor a workspace write beside it; a read beside
/// it still rides along.
#[test]
fn an_allow_rule_does_not_carry_another_segments_write() {
    let s = Scratch::new(None);
    let policy = s.root.path().join("ls.toml");
    std::fs::write(
        &policy,
        "[policy]\nallow = [\"Bash(ls *)\", \"Bash(cp *)\"]\n",
    )
    .unwrap();
    let p = policy.to_str().unwrap();
    let d = |cmd: &str| check_json(&s, &["--policy", p, "--", cmd])["decision"].clone();
    for (cmd, want) in [
        ("ls && tar xf b.tar", "ask"),
        ("ls; unzip a.zip", "ask"),
        ("ls | tar x < b.tar", "ask"),
        ("ls && git apply p.diff", "ask"),
        ("ls && echo x > notes.txt", "ask"),
        ("ls && mkdir build", "ask"),
        // `file -C` writes `MAGIC.mgc` where it runs.
        ("ls; cd .git/hooks && file -C -m x", "deny"),
        ("ls; file -Cm x", "ask"),
        ("ls; file -m x README.md", "allow"),
        // Paired: the same lines with a read, and the rules' own commands.
        ("ls && tar tf b.tar", "allow"),
        ("ls; cat README.md", "allow"),
        ("ls -la | head -5", "allow"),
        ("ls && cp README.md notes.txt", "allow"),
    ] {
        assert_eq!(d(cmd), want, "{cmd}");
    }
}

/// A copy, move or link into a directory writes `DIR/NAME`: `cp -r a/.git .` writes
/// `./.git`, which the floor refuses as the kernel does, whatever `Bash(cp *)` allows; a
/// source's contents (`cp -r a/. .`, `rsync -a a/ .`) are names the source chooses. A git
/// subcommand that writes the work tree from another tree (a branch, a stash, other commits)
/// writes names that tree chooses: no wildcard rule lifts either. Paired with ordinary copies
/// and git commands the same rules allow.
#[test]
fn a_wildcard_allow_does_not_let_a_copy_or_checkout_place_protected_names() {
    let s = Scratch::new(None);
    for d in ["a/b/.git/hooks", "a/b/.claude", "a/d", "a/plain", "sub"] {
        std::fs::create_dir_all(s.ws.join(d)).unwrap();
    }
    for f in [
        "a/d/.mcp.json",
        "a/d/Jenkinsfile",
        "a/d/README",
        "a/plain/README",
    ] {
        std::fs::write(s.ws.join(f), "x\n").unwrap();
    }
    let policy = s.root.path().join("copy.toml");
    let rules = ["cp", "mv", "ln", "install", "rsync", "git"].map(|c| format!("\"Bash({c} *)\""));
    std::fs::write(
        &policy,
        format!("[policy]\nallow = [{}]\n", rules.join(", ")),
    )
    .unwrap();
    let p = policy.to_str().unwrap();
    let d = |cmd: &str| check_json(&s, &["--policy", p, "--", cmd])["decision"].clone();
    for (cmd, want) in [
        ("cp -r a/b/.git .", "deny"),
        ("cp -r -t . a/b/.git", "deny"),
        ("cp -r a/b/.claude ./", "deny"),
        ("mv a/b/.claude .", "deny"),
        ("git mv a/b/.claude .", "deny"),
        ("cp a/d/.mcp.json sub", "deny"),
        ("ln -s a/d/.mcp.json .", "deny"),
        ("install a/d/Jenkinsfile .", "deny"),
        ("cp --target-dir=. a/d/Jenkinsfile", "deny"),
        ("cp -r a/b/. .", "ask"),
        ("cp -r a/b/./ .", "ask"),
        ("cp -r a/b/.claude/.. .", "ask"),
        ("cp -rT a/b .", "ask"),
        ("cp -r a/d .", "ask"),
        ("cp -rt. a/b/.claude", "deny"),
        ("cp -r --target . a/b/.claude", "deny"),
        ("mv -vt . a/b/.claude", "deny"),
        ("ln -st . a/b/.claude", "deny"),
        ("git checkout evil --", "ask"),
        ("git switch -", "ask"),
        ("git restore -sevil -W .", "ask"),
        ("git pull -X theirs --no-edit . evil", "ask"),
        ("git clone -q -b evil . x", "ask"),
        ("git reset --soft evil && git reset --hard", "ask"),
        ("git reset -q evil && git restore .", "ask"),
        ("rsync -a a/b/ .", "ask"),
        ("git checkout evil", "ask"),
        ("git switch evil", "ask"),
        ("git checkout -b x evil", "ask"),
        ("git reset --hard evil", "ask"),
        ("git restore --source=evil .", "ask"),
        ("git stash pop", "ask"),
        ("git merge evil", "ask"),
        ("git pull . evil", "ask"),
        ("git worktree add wt evil", "ask"),
        ("git checkout evil -- .", "ask"),
        ("git checkout evil -- sub", "ask"),
        // Paired: copies of ordinary names, into a directory or not, and git without another tree.
        ("cp a/d/README .", "allow"),
        ("cp a/d/README sub", "allow"),
        ("mv a/d/README sub/", "allow"),
        ("cp -r a/plain sub", "allow"),
        ("rsync -a a/plain .", "allow"),
        ("cp -rt sub a/plain", "allow"),
        ("git mv a/d/README sub", "allow"),
        ("git checkout -b x", "allow"),
        ("git switch -c y", "allow"),
        ("git stash", "allow"),
        ("git reset HEAD~1 && git status", "allow"),
        ("git checkout -- .", "allow"),
        ("git checkout evil -- a/d/README", "allow"),
        ("git commit -m x", "allow"),
        ("git status", "allow"),
    ] {
        assert_eq!(d(cmd), want, "{cmd}");
    }
}

/// A builtin that assigns a variable by name (`printf -v`, `read`, `mapfile`, `getopts`, a
/// loop variable, a nameref) and sets one that changes which code later commands run (`HOME`,
/// `PATH`, ...) keeps its export, as `HOME=... git status` does: asked, never read-only.
/// Paired with the same builtins setting an ordinary variable.
#[test]
fn builtins_that_set_a_variable_by_name_are_judged_as_assignments() {
    let s = Scratch::new(None);
    let d = |cmd: &str| check_json(&s, &["--", cmd])["decision"].clone();
    for (cmd, want) in [
        ("printf -v HOME %s \"$PWD/a\"; git status", "ask"),
        ("command printf -v PATH %s a; git status", "ask"),
        ("read HOME <<< \"$PWD/a\"; git status", "ask"),
        ("for HOME in $PWD/a; do git status; done", "ask"),
        ("select HOME in a; do git status; done", "ask"),
        ("declare -n r=HOME; r=$PWD/a; git status", "ask"),
        ("mapfile -t PATH < f; ls", "ask"),
        ("read -r OLDPWD <<< a; cd -", "ask"),
        ("printf -v x %s y; echo $x", "allow"),
        ("read -r line < README.md; echo $line", "allow"),
        ("for f in *.md; do wc -l $f; done", "allow"),
    ] {
        assert_eq!(d(cmd), want, "{cmd}");
    }
}

/// Toolchain managers that change the user's toolchains or settings write where they keep
/// them: `rustup default` writes rustup's home and `go env -w` Go's environment file, which
/// the workspace profile cannot write, so the plan refuses them as the kernel does (not asked,
/// as a package change inside the writable set is). The same commands given a home in the
/// workspace are asked, not refused.
#[test]
fn toolchain_changes_are_refused_where_the_profile_cannot_write_their_home() {
    let s = Scratch::new(None);
    let check = |env: &[(&str, String)], cmd: &str| {
        let mut c = s.sbx(&["check", "--json", "--", cmd]);
        c.env_remove("RUSTUP_HOME").env_remove("GOENV");
        for (k, v) in env {
            c.env(k, v);
        }
        let o = c.output().unwrap();
        let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
        (
            v["decision"].as_str().unwrap_or("").to_string(),
            v["rule"].clone(),
        )
    };
    let in_ws = s.ws.join(".rustup").to_string_lossy().into_owned();
    for cmd in [
        "rustup default stable",
        "rustup toolchain install nightly",
        "rustup component add clippy",
        "go env -w GOFLAGS=-mod=mod",
    ] {
        assert_eq!(
            check(&[], cmd),
            ("deny".into(), json!("plan:write")),
            "{cmd}"
        );
    }
    let given = format!("RUSTUP_HOME={in_ws} rustup default stable");
    assert_eq!(check(&[], &given).0, "ask", "{given}");
    let inherited = check(&[("RUSTUP_HOME", in_ws.clone())], "rustup default stable");
    assert_eq!(inherited.0, "ask", "RUSTUP_HOME={in_ws} inherited");
    assert_eq!(check(&[], "rustup show").0, "allow");
    assert_eq!(
        check(&[], "rustup default").0,
        "allow",
        "prints the default"
    );
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
