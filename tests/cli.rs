//! The CLI contract: signals, stdin, `explain` provenance, `doctor`.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;
use common::*;
use std::io::{Read, Write};
use std::process::Stdio;

#[test]
fn stdin_passes_through() {
    let s = Scratch::new(None);
    let mut c = s
        .sbx(&["run", "--no-policy", "--", "sh", "-c", "tr a-z A-Z"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    c.stdin
        .take()
        .unwrap()
        .write_all(b"through the sandbox\n")
        .unwrap();
    let o = c.wait_with_output().unwrap();
    assert_eq!(stdout(&o), "THROUGH THE SANDBOX\n");
}

fn wait_for_line(child: &mut std::process::Child) -> String {
    let mut out = child.stdout.take().unwrap();
    let mut buf = Vec::new();
    let mut b = [0u8; 1];
    while out.read(&mut b).unwrap() == 1 && b[0] != b'\n' {
        buf.push(b[0]);
    }
    child.stdout = Some(out);
    String::from_utf8(buf).unwrap()
}

/// Start `script` under sbx, wait until it prints `ready`, send sbx SIGTERM, collect the end.
fn signal_after_ready(
    s: &Scratch,
    script: &str,
    sig: nix::sys::signal::Signal,
) -> std::process::Output {
    let mut c = s
        .sbx(&["run", "--no-policy", "--", "sh", "-c", script])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    assert_eq!(wait_for_line(&mut c), "ready");
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(c.id() as i32), sig).unwrap();
    c.wait_with_output().unwrap()
}

fn sigterm_after_ready(s: &Scratch, script: &str) -> std::process::Output {
    signal_after_ready(s, script, nix::sys::signal::Signal::SIGTERM)
}

#[test]
fn sigint_is_forwarded_to_the_command() {
    if !kernel_ready() {
        return;
    }
    let s = Scratch::new(None);
    let o = signal_after_ready(
        &s,
        "trap 'echo got-int; exit 4' INT; echo ready; while :; do sleep 0.1; done",
        nix::sys::signal::Signal::SIGINT,
    );
    assert!(stdout(&o).contains("got-int"), "{}", text(&o));
    assert_eq!(o.status.code(), Some(4));
}

#[test]
fn json_out_gets_the_report_and_a_signal_death_is_named() {
    if !kernel_ready() {
        return;
    }
    let s = Scratch::new(None);
    let out = s.root.path().join("report.json");
    let o = s
        .sbx(&[
            "run",
            "--no-policy",
            "--json-out",
            out.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            "echo visible; kill -USR1 $$",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(128 + libc::SIGUSR1), "{}", text(&o));
    // The command's output streams as usual; the report goes to the file, not stdout.
    assert_eq!(stdout(&o), "visible\n");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(v["signal"], libc::SIGUSR1, "{v}");
    assert!(v["exit_code"].is_null(), "{v}");
    assert_eq!(v["code"], 128 + libc::SIGUSR1, "{v}");
}

/// `--json-out` inside the workspace: what the command leaves at the report's name (a symbolic
/// link, which would send sbx's write, made outside the sandbox, anywhere; a forged report made
/// read-only) is replaced by the real report, never followed; a name sbx cannot replace (a
/// directory) fails the run with 125, while the same run with the name free gets its report.
#[test]
fn json_out_replaces_what_the_command_left_at_its_name() {
    for user in users() {
        json_out_replaces_for(user);
    }
}

fn json_out_replaces_for(user: Option<u32>) {
    let s = Scratch::new(user);
    let victim = s.root.path().join("victim");
    std::fs::write(&victim, "ORIGINAL").unwrap();
    let report = s.ws.join("r.json");
    let run = |cmd: &str| {
        s.sbx(&[
            "run",
            "--no-policy",
            "--json-out",
            report.to_str().unwrap(),
            "--",
        ])
        .args(["sh", "-c", cmd])
        .output()
        .unwrap()
    };
    let read = || -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap()
    };
    let o = run(&format!("ln -s {} r.json; exit 3", victim.display()));
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "ORIGINAL");
    assert!(!report.is_symlink(), "the link stayed");
    assert_eq!(read()["code"], 3);
    let forged = r#"echo '{"code":0,"protected":[]}' > r.json; chmod 444 r.json; exit 5"#;
    let o = run(forged);
    assert_eq!(o.status.code(), Some(5), "{}", text(&o));
    assert_eq!(read()["code"], 5, "the forged report stayed");
    // The report's directory moved away and another put at its name: refused, not written
    // into the old one while the forged file stays at the name.
    let sub = s.ws.join("out");
    std::fs::create_dir(&sub).unwrap();
    s.chown_all();
    let inner = sub.join("r.json");
    let moved = s
        .sbx(&[
            "run",
            "--no-policy",
            "--json-out",
            inner.to_str().unwrap(),
            "--",
        ])
        .args([
            "sh",
            "-c",
            "mv out out2 && mkdir out && echo forged > out/r.json; exit 3",
        ])
        .output()
        .unwrap();
    assert_eq!(moved.status.code(), Some(125), "{}", text(&moved));
    assert!(
        !s.ws.join("out2/r.json").exists(),
        "written into the moved directory"
    );
    std::fs::remove_file(&report).unwrap();
    let o = run("mkdir r.json && touch r.json/x");
    assert_eq!(o.status.code(), Some(125), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("cannot write"),
        "{}",
        text(&o)
    );
    std::fs::remove_dir_all(&report).unwrap();
    let o = run("true");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(read()["code"], 0);
    let left: Vec<_> = std::fs::read_dir(&s.ws)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().contains(".sbx-"))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

#[test]
fn the_command_starts_in_the_current_directory_inside_the_workspace_else_in_the_workspace() {
    if !kernel_ready() {
        return;
    }
    let s = Scratch::new(None);
    let sub = s.ws.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    let ws = s.ws.canonicalize().unwrap();
    let pwd = |cwd: &std::path::Path| {
        let o = s
            .sbx(&[
                "run",
                "--no-policy",
                "--workspace",
                ws.to_str().unwrap(),
                "--",
                "pwd",
            ])
            .current_dir(cwd)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        stdout(&o).trim().to_string()
    };
    assert_eq!(pwd(&sub), sub.canonicalize().unwrap().to_str().unwrap());
    assert_eq!(pwd(&s.home), ws.to_str().unwrap());
}

#[test]
fn environment_set_fixes_values_and_a_missing_protection_names_its_fix() {
    if !kernel_ready() {
        return;
    }
    let s = Scratch::new(None);
    let p = s.write_profile(
        "env",
        "extends = \"workspace\"\n[environment]\nset = { SBX_FIXED = \"fixed-value\" }\n",
    );
    let o = s
        .sbx(&[
            "run",
            "--no-policy",
            "--profile",
            p.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            "echo \"$SBX_FIXED\"",
        ])
        .env("SBX_FIXED", "from-the-caller")
        .output()
        .unwrap();
    assert_eq!(stdout(&o), "fixed-value\n", "{}", text(&o));
    // Paired: without the profile's value, the caller's own reaches the command.
    let o = s
        .sbx(&[
            "run",
            "--no-policy",
            "--",
            "sh",
            "-c",
            "echo \"[$SBX_FIXED]\"",
        ])
        .env("SBX_FIXED", "from-the-caller")
        .output()
        .unwrap();
    assert_eq!(stdout(&o), "[from-the-caller]\n", "{}", text(&o));
    // A required protection the host cannot give: 125, the cause and the fix.
    let p = s.write_profile(
        "needs",
        "extends = \"workspace\"\nrequires = [\"mount-namespace\"]\n",
    );
    let o = s
        .sbx(&[
            "run",
            "--no-policy",
            "--profile",
            p.to_str().unwrap(),
            "--",
            "true",
        ])
        .env("SBX_DISABLE_USERNS", "1")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(125), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("requires mount-namespace") && err.contains("Fix:"),
        "{err}"
    );
}

#[test]
fn sigterm_is_forwarded_to_the_command() {
    if !kernel_ready() {
        return;
    }
    let s = Scratch::new(None);
    let o = sigterm_after_ready(
        &s,
        "trap 'echo got-term; exit 3' TERM; echo ready; while :; do sleep 0.1; done",
    );
    assert!(stdout(&o).contains("got-term"), "{}", text(&o));
    assert_eq!(o.status.code(), Some(3));
}

#[test]
fn sigterm_is_escalated_to_sigkill_after_the_grace_period() {
    if !kernel_ready() {
        return;
    }
    let s = Scratch::new(None);
    let o = sigterm_after_ready(&s, "trap '' TERM; echo ready; while :; do sleep 0.1; done");
    assert_eq!(o.status.code(), Some(128 + 9), "{}", text(&o));
}

#[test]
fn explain_names_the_line_each_entry_came_from() {
    let s = Scratch::new(None);
    let p = s.write_profile(
        "lines",
        "extends = \"workspace\"\n\n[filesystem]\nwrite = [\"{home}\"]\n\n[limits]\nmemory = \"1GiB\"\ntimeout = \"5m\"\n\n[syscalls]\ndeny = [\"sysinfo\"]\n[network]\nmode = \"none\"\n[isolation]\npid = false\n[environment]\npass = [\"FOO\"]\nset = { BAR = \"1\" }\ndeny = [\"BAZ*\"]\ninherit = \"none\"\n",
    );
    let o = s
        .sbx(&["explain", "--json", "--profile", p.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let rules = v["plan"]["landlock"]["rules"].as_array().unwrap();
    let home = rules
        .iter()
        .find(|r| r["path"] == s.home.to_str().unwrap())
        .expect("a rule for the home directory");
    assert_eq!(home["origin"]["line"], 4);
    assert!(
        home["origin"]["source"]
            .as_str()
            .unwrap()
            .ends_with("lines.toml")
    );
    let (value, origin) = memory_limit(&v["plan"]).expect("the memory limit");
    assert_eq!(value, 1u64 << 30);
    assert_eq!(origin["line"], 7);
    let extra = &v["plan"]["seccomp"]["extra"][0];
    assert_eq!(extra[0], "sysinfo");
    assert_eq!(extra[1]["line"], 11);
    // Network, isolation, environment and the timeout name their lines too.
    let o = &v["origins"];
    assert_eq!(o["network"]["line"], 13, "{o}");
    assert_eq!(o["isolation"]["pid"]["line"], 15, "{o}");
    assert_eq!(o["environment"]["pass"]["FOO"]["line"], 17, "{o}");
    assert_eq!(o["environment"]["set"]["BAR"]["line"], 18, "{o}");
    assert_eq!(o["environment"]["deny"]["BAZ*"]["line"], 19, "{o}");
    assert_eq!(o["environment"]["inherit"]["line"], 20, "{o}");
    assert_eq!(v["plan"]["env"]["inherit"], "none");
    assert_eq!(v["plan"]["env"]["deny"][0], "BAZ*");
    assert_eq!(o["limits"]["timeout"]["line"], 8, "{o}");
    assert_eq!(o["environment"]["pass"]["PATH"]["source"], "builtin:base");
    assert_eq!(o["isolation"]["ipc"]["source"], "sbx");
    // Built-in entries name the built-in profile they came from.
    let tmp = rules.iter().find(|r| r["path"] == "/tmp").unwrap();
    assert_eq!(tmp["origin"]["source"], "builtin:read-only");
}

#[test]
fn environment_keys_are_validated_with_file_line_and_key() {
    let s = Scratch::new(None);
    for (body, line, key, says) in [
        (
            "inherit = \"some\"",
            3,
            "environment.inherit",
            "all-but-secrets",
        ),
        ("deny = [\"A*B\"]", 3, "environment.deny", "`*`"),
        ("pass = [\"PATH\", \"\"]", 3, "environment.pass", "empty"),
        (
            "set = { \"A*\" = \"1\" }",
            3,
            "environment.set",
            "whole name",
        ),
    ] {
        let p = s.write_profile(
            "bad-env",
            &format!("extends = \"workspace\"\n[environment]\n{body}\n"),
        );
        let o = s
            .sbx(&["explain", "--profile", p.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(125), "{body}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&format!("bad-env.toml:{line}: `{key}`")) && err.contains(says),
            "{body}: {err}"
        );
    }
}

#[test]
fn an_unknown_syscall_in_a_profile_is_a_setup_error() {
    let s = Scratch::new(None);
    let p = s.write_profile(
        "sys",
        "extends = \"workspace\"\n[syscalls]\ndeny = [\"no_such_call\"]\n",
    );
    let o = s
        .sbx(&[
            "run",
            "--no-policy",
            "--profile",
            p.to_str().unwrap(),
            "--",
            "true",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(125), "{}", text(&o));
}

#[test]
fn doctor_reports_the_host_and_each_builtin() {
    let s = Scratch::new(None);
    let o = s.sbx(&["doctor", "--json"]).output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let host = sbx::host::Host::detect();
    assert_eq!(
        v["host"]["landlock_abi"],
        serde_json::json!(host.landlock_abi)
    );
    let names: Vec<&str> = v["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["profile"].as_str().unwrap())
        .collect();
    assert_eq!(names, sbx::profile::BUILTIN_NAMES);
    let human = s.sbx(&["doctor"]).output().unwrap();
    assert!(stdout(&human).contains("landlock"));
    // Without user namespaces every profile is at best partial, and the reason is named.
    let o = s
        .sbx(&["doctor", "--json"])
        .env("SBX_DISABLE_USERNS", "1")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    for p in v["profiles"].as_array().unwrap() {
        assert_ne!(p["status"], "full", "{p}");
        assert!(
            p["detail"].as_str().unwrap().contains("SBX_DISABLE_USERNS"),
            "{p}"
        );
        assert!(
            p["fix"]
                .as_str()
                .unwrap()
                .contains("unset SBX_DISABLE_USERNS"),
            "{p}"
        );
    }
    // Paired: where a profile runs fully, there is nothing to fix.
    if kernel_ready() {
        let v: serde_json::Value =
            serde_json::from_str(&stdout(&s.sbx(&["doctor", "--json"]).output().unwrap())).unwrap();
        let profiles = v["profiles"].as_array().unwrap();
        for p in profiles.iter().filter(|p| p["status"] == "full") {
            assert_eq!(p["fix"], "", "{p}");
        }
        let ws = profiles
            .iter()
            .find(|p| p["profile"] == "workspace")
            .unwrap()
            .clone();
        // workspace's 8 GiB bound the whole tree where a cgroup v2 offers memory and pids; on
        // other hosts memory is kept per process, and the fix is named.
        let cg = host.cgroups;
        let v2 = |b: &Option<sbx::host::CgroupBase>| {
            b.as_ref()
                .is_some_and(|b| b.version == sbx::host::CgroupVersion::V2)
        };
        if v2(&cg.memory) && v2(&cg.pids) {
            assert_eq!(ws["status"], "full", "{ws}");
        } else {
            assert_eq!(ws["status"], "partial", "{ws}");
            assert!(
                ws["detail"].as_str().unwrap().starts_with("memory: "),
                "{ws}"
            );
            assert_ne!(ws["fix"], "", "{ws}");
        }
    }
}

#[test]
fn run_help_documents_the_exit_codes() {
    let o = std::process::Command::new(sbx_bin())
        .args(["run", "--help"])
        .output()
        .unwrap();
    let h = stdout(&o);
    for code in ["124", "125", "126", "127", "128+N", "123"] {
        assert!(h.contains(code), "`sbx run --help` does not mention {code}");
    }
}

#[test]
fn closed_standard_fds_do_not_confuse_the_pipes() {
    use std::os::unix::process::CommandExt;
    let s = Scratch::new(None);
    let mut c = s.sbx(&[
        "run",
        "--no-policy",
        "--",
        "sh",
        "-c",
        "echo out; cat; echo done",
    ]);
    c.stdout(Stdio::piped());
    // SAFETY: close is async-signal-safe; fd 0 is the child's own.
    unsafe {
        c.pre_exec(|| {
            libc::close(0);
            Ok(())
        });
    }
    let o = c.output().unwrap();
    assert_eq!(stdout(&o), "out\ndone\n", "{}", text(&o));
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn a_profile_file_inherits_the_default_policy_of_the_builtin_it_extends() {
    let s = Scratch::new(None);
    let p = s.write_profile(
        "ext",
        "extends = \"workspace\"\n[policy]\ndeny = [\"Bash(curl *)\"]\n",
    );
    let check = |cmd: &str| {
        let o = s
            .sbx(&[
                "check",
                "--json",
                "--profile",
                p.to_str().unwrap(),
                "--",
                cmd,
            ])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        serde_json::from_str::<serde_json::Value>(&stdout(&o)).unwrap()
    };
    let inherited = check("git push --force origin main");
    assert_eq!(inherited["decision"], "deny");
    assert!(
        inherited["source"]
            .as_str()
            .unwrap()
            .starts_with("profile:workspace"),
        "{inherited}"
    );
    let own = check("curl https://example.com");
    assert_eq!(own["decision"], "deny");
    assert!(
        own["source"].as_str().unwrap().contains("ext.toml"),
        "{own}"
    );
}

/// `sbx run` under a terminal: an ask prompts, and the answer decides. (`script` gives the
/// command a pty and forwards our stdin to it.)
#[test]
fn an_ask_on_a_terminal_prompts_and_the_answer_decides() {
    let have_script = std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !require("script (util-linux) for a pty", have_script) {
        return;
    }
    let s = Scratch::new(None);
    let bin = sbx_bin().display().to_string();
    let run = |answer: &str| {
        let mut c = std::process::Command::new("script");
        c.args([
            "-qec",
            &format!("{bin} run --profile workspace --mode default -- python3 -c 'print(6*7)'"),
            "/dev/null",
        ])
        .current_dir(&s.ws)
        .env("HOME", &s.home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(answer.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    let yes = run("y\n");
    assert!(stdout(&yes).contains("run it? [y/N]"), "{}", text(&yes));
    assert!(stdout(&yes).contains("42"), "{}", text(&yes));
    assert_eq!(yes.status.code(), Some(0));
    let no = run("n\n");
    assert!(!stdout(&no).contains("42"), "{}", text(&no));
    assert_eq!(no.status.code(), Some(123), "{}", text(&no));
    // Without a terminal the same ask is refused, and the message says how to proceed.
    let o = s
        .sbx(&[
            "run",
            "--profile",
            "workspace",
            "--mode",
            "default",
            "--",
            "python3",
            "-c",
            "print(6*7)",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(123), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no terminal to ask on"), "{err}");
    assert!(err.contains("allow it by a rule"), "{err}");
}

#[test]
fn check_reports_decision_stage_rule_and_source_for_any_tool() {
    let s = Scratch::new(None);
    let o = s
        .sbx(&[
            "check",
            "--json",
            "--tool",
            "Write",
            "--input",
            &format!(
                "{{\"file_path\": \"{}/.git/hooks/pre-commit\", \"content\": \"x\"}}",
                s.ws.display()
            ),
        ])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "a deny is still a successful check: {}",
        text(&o)
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["decision"], "deny");
    for key in ["reason", "stage", "rule", "source"] {
        assert!(!v[key].is_null(), "{key} missing: {v}");
    }
    let ok = s
        .sbx(&["check", "--json", "--", "git status"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&stdout(&ok)).unwrap();
    assert_eq!(v["decision"], "allow");
    let bad = s
        .sbx(&["check", "--tool", "Write", "--input", "{not json"])
        .output()
        .unwrap();
    assert_ne!(
        bad.status.code(),
        Some(0),
        "a check that cannot be made fails"
    );
}

#[test]
fn a_profile_file_without_extends_keeps_the_built_in_limits_unless_it_lifts_one() {
    let s = Scratch::new(None);
    let plan = |toml: &str| -> serde_json::Value {
        let p = s.write_profile("own", toml);
        let o = s
            .sbx(&["explain", "--json", "--profile", p.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        v["plan"].clone()
    };
    let nofile = |p: &serde_json::Value| {
        p["rlimits"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["resource"] == "NOFILE")
    };
    let forgotten = plan("[filesystem]\nread = [\"/\"]\n");
    let (_, origin) = memory_limit(&forgotten).expect("a memory limit nobody wrote");
    assert_eq!(origin["source"], "builtin:base");
    assert!(nofile(&forgotten));
    // Paired: written out, "unlimited" lifts it.
    let lifted = plan("[filesystem]\nread = [\"/\"]\n[limits]\nmemory = \"unlimited\"\n");
    assert!(memory_limit(&lifted).is_none(), "{lifted}");
    assert!(nofile(&lifted));
}

/// The plan's memory limit and its origin: a cgroup's, or RLIMIT_DATA where no cgroup is made.
fn memory_limit(plan: &serde_json::Value) -> Option<(u64, serde_json::Value)> {
    let rlimit = plan["rlimits"]
        .as_array()?
        .iter()
        .find(|r| r["resource"] == "DATA")
        .map(|r| (r["value"].as_u64().unwrap(), r["origin"].clone()));
    let cgroup = plan["cgroups"]
        .as_array()?
        .iter()
        .flat_map(|c| c["settings"].as_array().unwrap().iter())
        .find(|s| s["file"] == "memory.max" || s["file"] == "memory.limit_in_bytes")
        .map(|s| {
            (
                s["value"].as_str().unwrap().parse().unwrap(),
                s["origin"].clone(),
            )
        });
    assert!(rlimit.is_none() || cgroup.is_none(), "{plan}");
    rlimit.or(cgroup)
}

/// A uid that no passwd file lists (a container started with `--user 4321`) runs commands and
/// explains profiles: its home is asked of the name service through `getent`, whose modules a
/// static sbx cannot load itself (glibc crashed loading them). Beside it, a listed uid.
#[test]
fn a_uid_no_passwd_file_lists_runs_commands() {
    const UNLISTED: u32 = 4321;
    if !nix::unistd::geteuid().is_root() {
        eprintln!("skipped: running as another uid needs root");
        return;
    }
    let listed = std::fs::read_to_string("/etc/passwd").unwrap();
    assert!(!listed.lines().any(|l| l.split(':').nth(2) == Some("4321")));
    for user in users().into_iter().flatten().chain(Some(UNLISTED)) {
        let s = Scratch::new(Some(user));
        s.chown_all();
        let out = s
            .sbx(&[
                "run",
                "--profile",
                "workspace",
                "--",
                "sh",
                "-c",
                "echo hi > f && cat f",
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "uid {user}: {}", text(&out));
        assert_eq!(stdout(&out).trim(), "hi", "uid {user}: {}", text(&out));
        let out = s
            .sbx(&["explain", "--profile", "workspace"])
            .output()
            .unwrap();
        assert!(out.status.success(), "uid {user}: {}", text(&out));
    }
}
