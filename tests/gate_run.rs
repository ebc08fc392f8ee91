//! `sbx run` puts the gate in front of the sandbox, and the kernel agrees with it: ordinary CI
//! steps run in sandbox-auto with no terminal while deny rules and the plan still refuse, a glob
//! target that could become a protected path is refused while one that can name nothing
//! protected runs, and what the gate refuses the kernel refuses too with the gate skipped. Each
//! refusal is paired with the same action let through.
#![expect(clippy::unwrap_used, reason = "test")]
mod common;
mod gate_common;
use common::*;
use gate_common::*;

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

/// A setup step that writes a file named as a secret or a key in the workspace runs under
/// `sbx run` (sandbox-auto), whose kernel confines it; the same call proposed by an agent
/// (`sbx check`, default mode) is asked about by the shipped policy's name rules.
#[test]
fn sbx_run_writes_files_named_as_secrets_that_an_agent_is_asked_about() {
    let steps = [
        "cp config/secrets.example.yaml config/secrets.yaml",
        "echo '{}' > tests/credentials.json",
        "cat config/secrets.example.yaml > certs/server.pem",
    ];
    for user in users() {
        let s = Scratch::new(user);
        for dir in ["config", "tests", "certs"] {
            std::fs::create_dir_all(s.ws.join(dir)).unwrap();
        }
        std::fs::write(s.ws.join("config/secrets.example.yaml"), "a: 1\n").unwrap();
        s.chown_all();
        for profile in ["workspace", "workspace-net"] {
            for step in steps {
                let asked = s
                    .sbx(&["check", "--profile", profile, "--", step])
                    .output()
                    .unwrap();
                assert!(
                    stdout(&asked).starts_with("ask by rules"),
                    "{profile} {step}: {}",
                    text(&asked)
                );
                let ran = s
                    .sbx(&["run", "--profile", profile, "--", "sh", "-c", step])
                    .output()
                    .unwrap();
                assert_eq!(
                    ran.status.code(),
                    Some(0),
                    "{} {profile} {step}: {}",
                    s.label(),
                    text(&ran)
                );
            }
        }
        for f in [
            "config/secrets.yaml",
            "tests/credentials.json",
            "certs/server.pem",
        ] {
            assert!(s.ws.join(f).exists(), "{} {f}", s.label());
        }
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
