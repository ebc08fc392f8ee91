//! The gate judges a path as the command would resolve it, so that a read of what the profile
//! hides is refused however it is named: globs are expanded and every match is checked against
//! the plan, a recursive read over a hidden path is refused outside the sandbox (inside it the
//! kernel hides those paths from the walk, proved by running one), and `/proc` aliases of the
//! working directory, a `..` after a link, a Glob pattern through a link, a hard link to a hidden
//! file and a case variant where the file system folds case are judged by what they reach; a link
//! to a hidden path names the link, and `cd` through `CDPATH` leaves the directory unknown. Each
//! refusal is paired with the same action let through.
#![expect(clippy::unwrap_used, reason = "test")]
mod common;
mod gate_common;
use common::*;
use gate_common::*;
use serde_json::{Value, json};
use std::process::Stdio;

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

/// A file an option or a configuration value makes the program read is a read the plan
/// judges: `git -c blame.ignoreRevsFile=F blame` prints F's first line, `file -m F` every line
/// of F it cannot parse. Names a program takes from its input (`zip -@`) are known only when
/// it runs: asked, even under a wildcard rule. Paired with the same options over a file the
/// plan lets through.
#[test]
fn files_named_by_options_and_configuration_values_are_checked_against_the_plan() {
    let s = Scratch::new(None);
    plant_secrets(&s);
    std::fs::write(s.ws.join("notes.txt"), "x\n").unwrap();
    for cmd in [
        "git -c blame.ignoreRevsFile=~/.codex/auth.json blame notes.txt",
        "git -c BLAME.IGNOREREVSFILE=~/.codex/auth.json blame notes.txt",
        "git -c core.excludesFile=~/.claude/.credentials.json check-ignore -v --no-index x",
        "git -c mailmap.file=~/.aws/credentials log",
        "git -c includeIf.onbranch:main.path=~/.netrc status",
        "file -m ~/.codex/auth.json notes.txt",
        "file --magic-file ~/.codex/auth.json notes.txt",
        "git -c format.signatureFile=~/.codex/auth.json format-patch -1 --stdout",
        "git -c fsck.skipList=~/.codex/auth.json fsck",
    ] {
        let r = check_json(&s, &["--", cmd]);
        assert_eq!(decision(&r), ("deny", "plan:deny-read"), "{cmd}: {r}");
    }
    // `%(prefix)/` is git's install prefix; `..` climbs from it.
    let prefixed = format!(
        "git -c 'blame.ignoreRevsFile=%(prefix)/..{}/.codex/auth.json' blame notes.txt",
        s.home.display()
    );
    let r = check_json(&s, &["--", &prefixed]);
    assert_eq!(decision(&r), ("deny", "plan:deny-read"), "{prefixed}: {r}");
    for cmd in [
        "git -c blame.ignoreRevsFile=notes.txt blame notes.txt",
        "git -c mailmap.file=notes.txt log",
        "file -m notes.txt notes.txt",
    ] {
        let r = check_json(&s, &["--", cmd]);
        assert_eq!(r["decision"], "allow", "{cmd}: {r}");
    }
    let policy = s.root.path().join("zip.toml");
    std::fs::write(
        &policy,
        "[policy]\nallow = [\"Bash(zip *)\", \"Bash(echo *)\", \"Bash(file *)\"]\n",
    )
    .unwrap();
    let p = policy.to_str().unwrap();
    for (cmd, want) in [
        ("echo ~/.codex/auth.json | zip -@ out.zip", "ask"),
        ("zip -q@ out.zip < list", "ask"),
        ("file -f list", "ask"),
        ("zip -r out.zip notes.txt", "allow"),
        ("file notes.txt", "allow"),
    ] {
        let r = check_json(&s, &["--policy", p, "--", cmd]);
        assert_eq!(r["decision"], want, "{cmd}: {r}");
    }
}

/// A bare name is a path from wherever the line has gone: after `cd ~/.codex`, `auth.json` is
/// the hidden file, whatever program or redirection reads it.
#[test]
fn a_bare_name_after_cd_is_checked_against_the_plan() {
    let s = Scratch::new(None);
    plant_secrets(&s);
    std::fs::write(s.home.join(".codex/config.toml"), "model = \"x\"\n").unwrap();
    for cmd in [
        "cd ~/.codex && cat auth.json",
        "cd ~/.codex; grep -i key auth.json",
        "cd ~/.codex && cat < auth.json",
        "cd ~/.codex && echo \"$(<auth.json)\"",
        "pushd ~/.codex && head -c 100 auth.json",
        "cd ~/.aws && base64 credentials",
        "cd ~ && cat .netrc",
        "cd ~/.cod* && cat auth.json",
        "cd ~/.c?dex && cat auth.json",
        "git -C ~/.codex grep --no-index SENTINEL auth.json",
        "git -C ~/.codex diff --no-index auth.json /dev/null",
        // A known variable's value globbed where it is unquoted; one an element assignment
        // or a builtin's prefix assignment changed is no longer taken as known.
        "X='*'; cd ~/.codex && cat $X",
        "X='*'; cat ~/.codex/$X",
    ] {
        let r = check_json(&s, &["--", cmd]);
        assert_eq!(decision(&r), ("deny", "plan:deny-read"), "{cmd}: {r}");
        let h = hook(&s, &[], "Bash", json!({ "command": cmd }));
        assert_eq!(h["permissionDecision"], "deny", "{cmd}: {h}");
    }
    // A directory named from where `git -C` leads is read whole.
    for cmd in [
        "git -C ~/.codex grep --no-index SENTINEL",
        "git -C ~/.codex diff --no-index . /dev/null",
    ] {
        let r = check_json(&s, &["--", cmd]);
        assert_eq!(decision(&r), ("deny", "plan:deny-read-tree"), "{cmd}: {r}");
    }
    std::fs::create_dir_all(s.home.join("proj")).unwrap();
    // The same reads of files the plan lets through.
    for cmd in [
        "git -C ~/proj grep --no-index SENTINEL",
        "cd ~/.codex && cat config.toml",
        "cd ~ && cat notes.txt",
        "cd ~/.cod* && cat config.toml",
        "git -C ~/.codex diff --no-index config.toml /dev/null",
        "X='*.toml'; cd ~/.codex && cat $X",
        "X='*'; cat ~/.codex/\"$X\" 2>/dev/null",
    ] {
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
        "cat /proc/self/root/proc/self/cwd/../home/.netrc",
    ] {
        let r = check_json(&s, &["--", cmd]);
        assert_eq!(decision(&r), ("deny", "plan:deny-read"), "{cmd}: {r}");
    }
    // Another process's directory is that process's: one sitting in the home reaches its
    // secrets, and is judged there. Where it lands can change before the command runs (the
    // process changes directory; a pid that names nothing yet is taken by one the command
    // starts), so even a path there that is no secret is not allowed without asking.
    let mut home_proc = std::process::Command::new("sleep")
        .arg("60")
        .current_dir(&s.home)
        .spawn()
        .unwrap();
    let pid = home_proc.id();
    for cmd in [
        format!("cat /proc/{pid}/cwd/.codex/auth.json"),
        format!("cat /proc/{pid}/task/{pid}/cwd/.codex/auth.json"),
    ] {
        let r = check_json(&s, &["--", &cmd]);
        assert_eq!(decision(&r), ("deny", "plan:deny-read"), "{cmd}: {r}");
    }
    let walk = format!("grep -r TOKEN /proc/{pid}/cwd/.codex");
    let r = check_json(&s, &["--", &walk]);
    assert_eq!(decision(&r), ("deny", "plan:deny-read-tree"), "{walk}: {r}");
    for cmd in [
        format!("cat /proc/{pid}/cwd/notes.txt"),
        format!("ls /proc/{pid}/cwd"),
        "cat /proc/1/cwd/../home/.codex/auth.json".to_string(),
        "cat /proc/424242/task/1/cwd/../home/.codex/auth.json".to_string(),
        "cat /proc/424242/root/etc/hostname".to_string(),
    ] {
        let r = check_json(&s, &["--", &cmd]);
        assert_eq!(r["decision"], "ask", "{cmd}: {r}");
    }
    for path in [
        format!("/proc/{pid}/cwd/.codex/auth.json"),
        format!("/proc/{pid}/cwd/notes.txt"),
        format!("/proc/{pid}/root/etc/hostname"),
    ] {
        let h = hook(&s, &[], "Read", json!({ "file_path": path }));
        assert_eq!(h["permissionDecision"], "deny", "{path}: {h}");
        let w = hook(
            &s,
            &[],
            "Write",
            json!({ "file_path": path, "content": "x" }),
        );
        assert_eq!(w["permissionDecision"], "deny", "{path}: {w}");
    }
    // The same through links in the workspace: to /proc, and to that process's directory.
    std::os::unix::fs::symlink("/proc", s.ws.join("lproc")).unwrap();
    std::os::unix::fs::symlink(format!("/proc/{pid}/cwd"), s.ws.join("lcwd")).unwrap();
    for cmd in [
        format!("cat lproc/{pid}/cwd/notes.txt"),
        "cat lcwd/notes.txt".to_string(),
    ] {
        let r = check_json(&s, &["--", &cmd]);
        assert_eq!(r["decision"], "ask", "{cmd}: {r}");
    }
    for rel in [
        format!("lproc/{pid}/cwd/notes.txt"),
        "lcwd/notes.txt".into(),
    ] {
        let path = s.ws.join(rel);
        let h = hook(&s, &[], "Read", json!({ "file_path": path }));
        assert_eq!(h["permissionDecision"], "deny", "{}: {h}", path.display());
    }
    let own = s.ws.join("lproc/self/cwd/README.md");
    let h = hook(&s, &[], "Read", json!({ "file_path": own }));
    assert_ne!(h["permissionDecision"], "deny", "{h}");
    home_proc.kill().unwrap();
    home_proc.wait().unwrap();
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
