//! Reads and writes stay inside the profile's sets: secrets under `deny_read`, files outside
//! `strict`'s readable set, writes outside the workspace, and a symlink out of it.
//!
//! Each protection is attempted from inside the sandbox and paired with the same action allowed
//! (under a wider profile, or outside the sandbox), as root and as uid 65534.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;
mod sandbox_common;
use common::*;
use sandbox_common::*;

#[test]
fn secret_under_deny_read_is_unreadable() {
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        // A file secret too: it reads as empty (/dev/null is mounted over it).
        std::fs::write(s.home.join(".netrc"), "SENTINEL-NETRC-5d1e\n").unwrap();
        s.chown_all();
        let read = "cat \"$HOME/.netrc\"; cat \"$HOME/.ssh/id_rsa\"";
        let blocked = s.run("workspace", read);
        assert!(
            !text(&blocked).contains("SENTINEL-SSH") && !text(&blocked).contains("SENTINEL-NETRC"),
            "{}: secret leaked: {}",
            s.label(),
            text(&blocked)
        );
        assert_ne!(blocked.status.code(), Some(0), "{}", s.label());
        let allowed = s.run(wide.to_str().unwrap(), read);
        assert!(
            stdout(&allowed).contains("SENTINEL-SSH")
                && stdout(&allowed).contains("SENTINEL-NETRC"),
            "{}: wide profile should read them: {}",
            s.label(),
            text(&allowed)
        );
    }
}

#[test]
fn outside_readable_set_is_unreadable_under_strict() {
    for u in users() {
        let s = Scratch::new(u);
        let blocked = s.run("strict", "cat \"$HOME/notes.txt\"");
        assert!(
            !text(&blocked).contains("SENTINEL-NOTES"),
            "{}: {}",
            s.label(),
            text(&blocked)
        );
        let allowed = s.run("workspace", "cat \"$HOME/notes.txt\"");
        assert!(
            stdout(&allowed).contains("SENTINEL-NOTES"),
            "{}: {}",
            s.label(),
            text(&allowed)
        );
    }
}

#[test]
fn write_outside_workspace_is_denied() {
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        let blocked = s.run("workspace", "echo x > \"$HOME/out\"");
        assert_ne!(blocked.status.code(), Some(0));
        assert!(!s.home.join("out").exists(), "{}", s.label());
        let inside = s.run("workspace", "echo x > inside.txt");
        assert_eq!(
            inside.status.code(),
            Some(0),
            "{}: {}",
            s.label(),
            text(&inside)
        );
        assert!(s.ws.join("inside.txt").exists());
        let allowed = s.run(wide.to_str().unwrap(), "echo x > \"$HOME/out\"");
        assert_eq!(
            allowed.status.code(),
            Some(0),
            "{}: {}",
            s.label(),
            text(&allowed)
        );
        assert!(s.home.join("out").exists());
    }
}

#[test]
fn symlink_out_of_workspace_does_not_grant_write() {
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        std::os::unix::fs::symlink(&s.home, s.ws.join("link")).unwrap();
        let blocked = s.run("workspace", "echo x > link/through");
        assert_ne!(blocked.status.code(), Some(0));
        assert!(!s.home.join("through").exists(), "{}", s.label());
        let allowed = s.run(wide.to_str().unwrap(), "echo x > link/through");
        assert_eq!(
            allowed.status.code(),
            Some(0),
            "{}: {}",
            s.label(),
            text(&allowed)
        );
    }
}
