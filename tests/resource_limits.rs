//! Limits stop runaway commands: a fork bomb, a memory hog, output past its cap.
//!
//! Each protection is attempted from inside the sandbox and paired with the same action allowed
//! (under a wider profile, or outside the sandbox), as root and as uid 65534.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;
use common::*;

#[test]
fn fork_bomb_is_stopped_by_the_process_limit() {
    for u in users() {
        let s = Scratch::new(u);
        let tight = s.write_profile(
            "tight",
            "extends = \"workspace\"\n[limits]\nprocesses = 40\n",
        );
        let loose = s.write_profile(
            "loose",
            "extends = \"workspace\"\n[limits]\nprocesses = 1000\n",
        );
        let script = "python3 -c 'import os,time\npids=[]\nfor i in range(100):\n  try: p=os.fork()\n  except OSError: break\n  if p==0:\n    time.sleep(30); os._exit(0)\n  pids.append(p)\nprint(\"forked\", len(pids))\nfor p in pids: os.kill(p,9)'";
        let count = |o: &std::process::Output| -> usize {
            stdout(o)
                .trim()
                .trim_start_matches("forked ")
                .parse()
                .unwrap_or(usize::MAX)
        };
        let blocked = s.run(tight.to_str().unwrap(), script);
        let n = count(&blocked);
        assert!(
            n < 40,
            "{}: {n} forks under a limit of 40: {}",
            s.label(),
            text(&blocked)
        );
        let allowed = s.run(loose.to_str().unwrap(), script);
        assert_eq!(count(&allowed), 100, "{}: {}", s.label(), text(&allowed));
    }
}

#[test]
fn memory_hog_is_stopped_by_the_memory_limit() {
    for u in users() {
        let s = Scratch::new(u);
        let tight = s.write_profile(
            "tight",
            "extends = \"workspace\"\n[limits]\nmemory = \"256MiB\"\n",
        );
        let loose = s.write_profile(
            "loose",
            "extends = \"workspace\"\n[limits]\nmemory = \"4GiB\"\n",
        );
        let hog = "python3 -c 'b=bytearray(512*1024*1024); print(\"ALLOCATED\", len(b))'";
        let blocked = s.run(tight.to_str().unwrap(), hog);
        assert!(
            !stdout(&blocked).contains("ALLOCATED"),
            "{}: {}",
            s.label(),
            text(&blocked)
        );
        assert_ne!(blocked.status.code(), Some(0));
        let allowed = s.run(loose.to_str().unwrap(), hog);
        assert!(
            stdout(&allowed).contains("ALLOCATED"),
            "{}: {}",
            s.label(),
            text(&allowed)
        );
    }
}

#[test]
fn output_is_capped_per_stream() {
    for u in users() {
        let s = Scratch::new(u);
        let p = s.write_profile("cap", "extends = \"workspace\"\n[limits]\noutput = 1000\n");
        // The run's output and its report, which follows it on stdout.
        let run = |cmd: &[&str]| {
            let mut args = vec![
                "run",
                "--no-policy",
                "--json",
                "--profile",
                p.to_str().unwrap(),
                "--",
            ];
            args.extend_from_slice(cmd);
            let o = s.sbx(&args).output().unwrap();
            let out = stdout(&o);
            let at = out.find('{').unwrap();
            let v: serde_json::Value = serde_json::from_str(out[at..].trim()).unwrap();
            (o, out[..at].len(), v)
        };
        let (o, body, v) = run(&["sh", "-c", "yes aaaa | head -c 5000"]);
        assert_eq!(body, 1000, "stdout kept to the cap");
        // The command exited 0, but what it printed was not all delivered: no success.
        assert_eq!(v["exit_code"], 0, "{v}");
        assert_eq!(o.status.code(), Some(121), "{}", text(&o));
        assert_eq!(v["code"], 121, "the report's code is the exit status: {v}");
        assert_eq!(v["stdout_truncated"], true);
        assert_eq!(v["stdout_bytes"], 5000);
        // The cut is a limit reached, in the report and on stderr...
        assert_eq!(v["limits_reached"][0]["limit"], "output", "{v}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("limit reached: output: standard output"),
            "{}",
            text(&o)
        );
        // ...and output under the cap is not.
        let (under, _, v) = run(&["echo", "hi"]);
        assert_eq!(under.status.code(), Some(0), "{}", text(&under));
        assert_eq!(v["limits_reached"], serde_json::json!([]), "{v}");
        // A command that failed keeps its own code, cut or not.
        let (failed, _, _) = run(&["sh", "-c", "yes aaaa | head -c 5000; exit 3"]);
        assert_eq!(failed.status.code(), Some(3), "{}", text(&failed));
        assert!(!text(&under).contains("limit reached"), "{}", text(&under));
    }
}

/// A tree held at its process limit until its timeout, where no cgroup counts the forks it
/// refuses (the PID namespace's `pid_max` as root, `RLIMIT_NPROC` in the run's user namespace
/// otherwise): the report names the process limit as well as the timeout. Paired with a tree
/// under the limit, which reaches the timeout only.
#[test]
fn a_tree_held_at_its_process_limit_until_its_timeout_names_the_limit() {
    let root = nix::unistd::geteuid().is_root();
    let own_pid_max = sbx::host::Host::detect().pid_max_per_namespace;
    if root
        && !require(
            "a pid_max of its own in each PID namespace (Linux 6.14+)",
            own_pid_max,
        )
    {
        return;
    }
    for u in users() {
        let s = Scratch::new(u);
        let p = s.write_profile(
            "pids",
            "extends = \"workspace\"\n[limits]\nprocesses = 400\n",
        );
        let held = |forks: u32| {
            let script = format!(
                "import os,time\nfor i in range({forks}):\n  try: p=os.fork()\n  except OSError: continue\n  if p==0:\n    time.sleep(100); os._exit(0)\nprint('FORKED', flush=True)\ntime.sleep(100)"
            );
            let args = [
                "run",
                "--no-policy",
                "--json",
                "--timeout",
                "4",
                "--profile",
                p.to_str().unwrap(),
                "--",
                "python3",
                "-c",
                &script,
            ];
            let o = s.sbx(&args).output().unwrap();
            let out = stdout(&o);
            let line = out.lines().last().unwrap_or_default().to_string();
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            (o, v)
        };
        let limits = |v: &serde_json::Value| -> Vec<String> {
            let all = v["limits_reached"].as_array().cloned().unwrap_or_default();
            all.iter()
                .map(|l| l["limit"].as_str().unwrap_or_default().to_string())
                .collect()
        };
        let label = s.label();
        let (o, v) = held(600);
        assert!(stdout(&o).contains("FORKED"), "{label}: {}", text(&o));
        assert_eq!(limits(&v), ["timeout", "processes"], "{label}: {v}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("limit reached: processes"), "{label}: {err}");
        // Under the limit, near it or far from it: the timeout only.
        for forks in [50, 370] {
            let (o, v) = held(forks);
            assert!(stdout(&o).contains("FORKED"), "{label}: {}", text(&o));
            assert_eq!(limits(&v), ["timeout"], "{label} {forks}: {v}");
        }
    }
}
