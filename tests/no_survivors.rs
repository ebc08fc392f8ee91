//! Nothing outlives the run: a setsid daemon, the tree of a SIGKILLed sbx, a command that
//! ignores SIGTERM past its timeout.
//!
//! Each protection is attempted from inside the sandbox and paired with the same action allowed
//! (under a wider profile, or outside the sandbox), as root and as uid 65534.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;
mod sandbox_common;
use common::*;
use sandbox_common::*;
use std::io::Read;

#[test]
fn setsid_daemon_does_not_survive() {
    for u in users() {
        let s = Scratch::new(u);
        let marker = format!("31{}7", std::process::id());
        // Both daemons are seen alive inside before the command returns.
        let o = s.run(
            "workspace",
            &format!(
                "setsid -f sh -c 'echo $$ > d1.pid; exec sleep {marker}'; \
                 nohup sh -c 'echo $$ > d2.pid; exec sleep {marker}1' >/dev/null 2>&1 & \
                 i=0; while [ ! -s d1.pid ] || [ ! -s d2.pid ]; do i=$((i+1)); [ $i -gt 1000 ] && break; sleep 0.01; done; \
                 kill -0 \"$(cat d1.pid)\" && kill -0 \"$(cat d2.pid)\" && echo started"
            ),
        );
        assert!(stdout(&o).contains("started"), "{}", text(&o));
        assert!(
            !alive_with_arg(&marker),
            "{}: a daemon outlived the sandbox",
            s.label()
        );
        // Paired: outside the sandbox the same daemon survives.
        s.outside(&format!(
            "setsid -f sleep {marker} </dev/null >/dev/null 2>&1"
        ));
        assert!(
            becomes_alive_with_arg(&marker),
            "{}: the daemon did not start outside",
            s.label()
        );
        s.outside(&format!("pkill -f 'sleep {marker}'"));
    }
}

#[test]
fn killing_sbx_with_sigkill_kills_the_tree() {
    for u in users() {
        let s = Scratch::new(u);
        let marker = format!("42{}9", std::process::id());
        let mut child = s
            .sbx(&[
                "run",
                "--no-policy",
                "--profile",
                "workspace",
                "--",
                "sh",
                "-c",
                &format!("setsid -f sleep {marker}; echo up; sleep 300"),
            ])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut buf = [0u8; 3];
        child.stdout.take().unwrap().read_exact(&mut buf).unwrap();
        assert!(
            becomes_alive_with_arg(&marker),
            "{}: daemon did not start",
            s.label()
        );
        child.kill().unwrap();
        child.wait().unwrap();
        let mut gone = false;
        for _ in 0..200 {
            if !alive_with_arg(&marker) {
                gone = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        assert!(gone, "{}: the daemon survived SIGKILL of sbx", s.label());
    }
}

#[test]
fn timeout_kills_a_command_that_ignores_sigterm() {
    for u in users() {
        let s = Scratch::new(u);
        let marker = format!("53{}1", std::process::id());
        let o = s
            .sbx(&[
                "run",
                "--no-policy",
                "--profile",
                "workspace",
                "--timeout",
                "1",
                "--",
                "sh",
                "-c",
                &format!("trap '' TERM; sleep {marker} & trap '' TERM; while :; do sleep 1; done"),
            ])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(124), "{}: {}", s.label(), text(&o));
        assert!(!alive_with_arg(&marker), "{}", s.label());
        let fine = s
            .sbx(&[
                "run",
                "--no-policy",
                "--profile",
                "workspace",
                "--timeout",
                "30",
                "--",
                "true",
            ])
            .output()
            .unwrap();
        assert_eq!(fine.status.code(), Some(0));
    }
}
