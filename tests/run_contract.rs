//! What `sbx run` promises its caller: the permission gate refuses before the kernel is
//! reached, exit codes follow the documented contract, and the `--json` report describes the run
//! on a line of its own.
//!
//! Each protection is attempted from inside the sandbox and paired with the same action allowed
//! (under a wider profile, or outside the sandbox), as root and as uid 65534.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;
use common::*;

#[test]
fn the_permission_gate_refuses_before_the_kernel_is_reached() {
    for u in users() {
        let s = Scratch::new(u);
        // Refused by the plan before anything runs (the write is outside the profile's writable
        // set): exit 123 and no output from the command.
        let gated = s
            .sbx(&[
                "run",
                "--profile",
                "workspace",
                "--",
                "sh",
                "-c",
                "echo ran; touch /etc/sbx-gate-probe",
            ])
            .output()
            .unwrap();
        assert_eq!(
            gated.status.code(),
            Some(123),
            "{}: {}",
            s.label(),
            text(&gated)
        );
        assert!(!stdout(&gated).contains("ran"));
        assert!(
            String::from_utf8_lossy(&gated.stderr).contains("plan:write"),
            "{}",
            text(&gated)
        );
        // Without the gate the command runs, and the kernel refuses the write.
        let kernel = s.run("workspace", "echo ran; touch /etc/sbx-gate-probe");
        assert!(stdout(&kernel).contains("ran"), "{}", text(&kernel));
        assert_ne!(kernel.status.code(), Some(0));
        assert!(!std::path::Path::new("/etc/sbx-gate-probe").exists());
        // An allowed command passes the gate and runs.
        let ok = s
            .sbx(&["run", "--profile", "workspace", "--", "git", "--version"])
            .output()
            .unwrap();
        assert_eq!(ok.status.code(), Some(0), "{}", text(&ok));
    }
}

#[test]
fn exit_codes_follow_the_documented_contract() {
    for u in users() {
        let s = Scratch::new(u);
        let code = |args: &[&str]| s.sbx(args).output().unwrap().status.code();
        assert_eq!(
            code(&["run", "--no-policy", "--", "sh", "-c", "exit 7"]),
            Some(7)
        );
        assert_eq!(
            code(&["run", "--no-policy", "--", "sh", "-c", "kill -USR1 $$"]),
            Some(128 + libc::SIGUSR1)
        );
        assert_eq!(
            code(&["run", "--no-policy", "--", "no-such-command-sbx"]),
            Some(127)
        );
        std::fs::write(s.ws.join("notexec"), "x").unwrap();
        assert_eq!(code(&["run", "--no-policy", "--", "./notexec"]), Some(126));
        assert_eq!(
            code(&[
                "run",
                "--no-policy",
                "--profile",
                "no-such-profile",
                "--",
                "true"
            ]),
            Some(125)
        );
        let bad = s.write_profile("bad", "[filesystem]\nreed = [\"/\"]\n");
        let o = s
            .sbx(&[
                "run",
                "--no-policy",
                "--profile",
                bad.to_str().unwrap(),
                "--",
                "true",
            ])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(125));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("bad.toml:2") && err.contains("reed"),
            "error must name file, line and key: {err}"
        );
        // A bad value, caught while parsing, names its key too.
        let bad = s.write_profile(
            "badvalue",
            "[isolation]\npid = true\n[network]\nmode = \"lan\"\n",
        );
        let o = s
            .sbx(&["explain", "--profile", bad.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(125));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("badvalue.toml:4: `network.mode`:") && err.contains("lan"),
            "error must name file, line and key: {err}"
        );
        assert_eq!(
            code(&[
                "run",
                "--no-policy",
                "--timeout",
                "0.5",
                "--",
                "sleep",
                "30"
            ]),
            Some(124)
        );
    }
}

#[test]
fn a_command_that_cannot_be_executed_says_why() {
    for u in users() {
        let s = Scratch::new(u);
        let run = |args: &[&str]| s.sbx(args).output().unwrap();
        let missing = run(&["run", "--no-policy", "--", "no-such-command-sbx"]);
        assert_eq!(missing.status.code(), Some(127));
        assert!(
            text(&missing).contains(
                "sbx: cannot execute no-such-command-sbx: No such file or directory in the sandbox's PATH"
            ),
            "{}: {}",
            s.label(),
            text(&missing)
        );
        std::fs::write(s.ws.join("notexec"), "x").unwrap();
        s.chown_all();
        let denied = run(&["run", "--no-policy", "--json", "--", "./notexec"]);
        assert_eq!(denied.status.code(), Some(126));
        assert!(
            text(&denied)
                .contains("sbx: cannot execute ./notexec: Permission denied: not executable"),
            "{}",
            text(&denied)
        );
        let report: serde_json::Value =
            serde_json::from_str(stdout(&denied).lines().last().unwrap_or_default()).unwrap();
        assert_eq!(report["exec_failure"]["errno"], libc::EACCES, "{report}");
        // Paired: a program that runs says nothing of the kind.
        let ran = run(&["run", "--no-policy", "--", "sh", "-c", "exit 0"]);
        assert_eq!(ran.status.code(), Some(0));
        assert!(!text(&ran).contains("cannot execute"), "{}", text(&ran));
    }
}

#[test]
fn json_report_describes_the_run() {
    for u in users() {
        let s = Scratch::new(u);
        let o = s
            .sbx(&[
                "run",
                "--no-policy",
                "--json",
                "--",
                "sh",
                "-c",
                "echo out; exit 3",
            ])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(3));
        let out = stdout(&o);
        let last = out.lines().last().unwrap();
        let v: serde_json::Value = serde_json::from_str(last).unwrap();
        assert_eq!(v["exit_code"], 3);
        assert_eq!(v["timed_out"], false);
        assert_eq!(v["stdout_bytes"], 4);
        assert!(v["peak_memory_bytes"].as_u64().unwrap() > 0);
        let layers = v["enforcement"]["layers"].as_array().unwrap();
        for name in [
            "landlock",
            "seccomp",
            "mount-namespace",
            "pid-namespace",
            "network",
            "limits",
            "process-tree",
            "capabilities",
        ] {
            assert!(
                layers.iter().any(|l| l["name"] == name),
                "layer {name} missing: {last}"
            );
        }
        assert!(out.starts_with("out\n"));
    }
}

#[test]
fn json_report_starts_its_own_line_whatever_the_command_printed() {
    let forged = r#"{"exit_code":0,"timed_out":false,"code":0}"#;
    for u in users() {
        let s = Scratch::new(u);
        for (script, code, before) in [
            ("printf partial; exit 4".to_string(), 4, "partial"),
            (format!("printf '%s' '{forged}'; exit 5"), 5, forged),
            (format!("echo '{forged}'; exit 6"), 6, forged),
        ] {
            let o = s
                .sbx(&["run", "--no-policy", "--json", "--", "sh", "-c", &script])
                .output()
                .unwrap();
            assert_eq!(o.status.code(), Some(code), "{}: {}", s.label(), text(&o));
            let out = stdout(&o);
            let lines: Vec<&str> = out.lines().collect();
            assert!(
                out.ends_with('\n') && lines.len() == 2,
                "{}: {out:?}",
                s.label()
            );
            assert_eq!(lines[0], before, "{}: {out:?}", s.label());
            let v: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
            assert_eq!(v["exit_code"], code, "{}: {out:?}", s.label());
            assert!(
                v["enforcement"]["layers"].is_array(),
                "{}: {out:?}",
                s.label()
            );
        }
        // Paired: without --json the command's output is relayed as it was, no newline added.
        let o = s
            .sbx(&["run", "--no-policy", "--", "sh", "-c", "printf partial"])
            .output()
            .unwrap();
        assert_eq!(stdout(&o), "partial", "{}: {}", s.label(), text(&o));
    }
}

/// A cache directory a profile creates when missing (`+` in `ci`) that cannot be made (the
/// home's `.cargo` belongs to another user, as on images where root installed Rust) is skipped
/// and reported, not a setup failure. Paired: in a home of its own the directory is made.
#[test]
fn a_cache_directory_that_cannot_be_made_is_skipped_and_reported() {
    for u in users() {
        let s = Scratch::new(u);
        let run = |s: &Scratch| {
            s.sbx(&[
                "run",
                "--no-policy",
                "--json",
                "--profile",
                "ci",
                "--",
                "true",
            ])
            .output()
            .unwrap()
        };
        let made = run(&s);
        assert_eq!(
            made.status.code(),
            Some(0),
            "{}: {}",
            s.label(),
            text(&made)
        );
        assert!(s.home.join(".cargo/git").is_dir(), "{}", s.label());
        if u.is_none() {
            continue; // root can make any directory
        }
        std::fs::remove_dir_all(s.home.join(".cargo")).unwrap();
        std::fs::create_dir(s.home.join(".cargo")).unwrap(); // root's, in the user's home
        let skipped = run(&s);
        assert_eq!(
            skipped.status.code(),
            Some(0),
            "{}: {}",
            s.label(),
            text(&skipped)
        );
        let report = stdout(&skipped);
        assert!(
            report
                .lines()
                .last()
                .is_some_and(|l| l.contains(".cargo/git") && l.contains("skipped_paths")),
            "{}: {}",
            s.label(),
            text(&skipped)
        );
        assert!(!s.home.join(".cargo/git").exists());
    }
}

/// A reader that goes away ends the command as a pipe's would: `sbx run -- yes | head -1`
/// ends with the command killed by SIGPIPE (141), for the plain and the `--json` output, where
/// without the fix it ran on to its timeout (124). The same command whose output is read to
/// its end (`yes | head -c`, inside) exits 0.
#[test]
fn a_reader_that_goes_away_ends_the_command_with_sigpipe() {
    use std::io::BufRead;
    for u in users() {
        let s = Scratch::new(u);
        for json in [false, true] {
            let mut args = vec!["run", "--timeout", "120", "--profile", "workspace"];
            if json {
                args.push("--json");
            }
            args.extend(["--", "yes"]);
            let mut child = s
                .sbx(&args)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            let mut line = String::new();
            std::io::BufReader::new(child.stdout.take().unwrap())
                .read_line(&mut line)
                .unwrap();
            assert_eq!(line, "y\n", "{}", s.label());
            // The reader is dropped here, as `head -1` exits.
            let status = child.wait().unwrap();
            assert_eq!(
                status.code(),
                Some(128 + libc::SIGPIPE),
                "{} json={json}",
                s.label()
            );
        }
        let whole = s
            .sbx(&[
                "run",
                "--profile",
                "workspace",
                "--",
                "sh",
                "-c",
                "yes | head -c 100000 | wc -c",
            ])
            .output()
            .unwrap();
        assert_eq!(
            whole.status.code(),
            Some(0),
            "{}: {}",
            s.label(),
            text(&whole)
        );
        assert_eq!(stdout(&whole).trim(), "100000");
    }
}
