//! The running judgement of one segment: every finding raises it, the
//! strictest class wins, and writes are judged by where they land.

use crate::shell::paths::Zone;
use crate::shell::walk::{self, Cwd, Traits};
use crate::shell::words::Word;
use crate::shell::{Class, ShellContext, Verdict};
use std::path::PathBuf;

/// Running judgement of one segment: the strictest finding wins.
pub(crate) struct Judge {
    pub class: Class,
    pub reason: String,
    pub writes: Vec<PathBuf>,
    pub t: Traits,
    pub reparse: Vec<(String, String)>,
}

/// How strict a class is: its default verdict first, and among the allowed classes, how far
/// they reach (inspection, then builds and tests, then workspace writes).
pub(super) fn rank(c: Class) -> u8 {
    match c.default_verdict() {
        Verdict::Allow => match c {
            Class::ReadOnly => 0,
            Class::BuildTest => 1,
            _ => 2,
        },
        Verdict::Ask => 3,
        Verdict::Deny => 4,
    }
}

impl Judge {
    pub(super) fn new() -> Judge {
        Judge {
            class: Class::ReadOnly,
            reason: "[shell.read-only] inspection only".into(),
            writes: Vec::new(),
            t: Traits::default(),
            reparse: Vec::new(),
        }
    }

    /// Raise to `class` if it is stricter than what was found so far.
    pub fn raise(&mut self, class: Class, reason: impl Into<String>) {
        if rank(class) > rank(self.class) {
            self.class = class;
            self.reason = reason.into();
        }
    }

    /// Record a write to a word and raise by where it lands.
    pub fn write(&mut self, w: &Word, cwd: &Cwd, ctx: &ShellContext, what: &str) {
        if is_device(&w.value) {
            return;
        }
        if w.value.starts_with("/dev/tcp/") || w.value.starts_with("/dev/udp/") {
            self.raise(
                Class::Malicious,
                "[shell.malicious.reverse-shell] redirection to a network socket",
            );
            return;
        }
        for (zone, path) in walk::judge(w, cwd, ctx) {
            match zone {
                Zone::Inside => self.raise(Class::WorkspaceWrite, format!("[shell.write.workspace] {what} inside the workspace")),
                Zone::Outside if !w.unknown && !w.subst => self.raise(
                    Class::OutsideWrite,
                    format!("[shell.write.outside] {what} `{}` outside the workspace and the writable set", path.display()),
                ),
                Zone::Outside => self.raise(
                    Class::OutsideWrite,
                    format!("[shell.write.unknown] {what} `{}` is not known before running", w.display),
                ),
                Zone::Floor(k) => self.raise(
                    Class::FloorWrite,
                    format!("[shell.floor] {what} `{}` touches the safety floor ({k})", path.display()),
                ),
            }
            if !self.writes.contains(&path) {
                self.writes.push(path);
            }
        }
    }

    pub fn code(&mut self, code: &str, via: &str) {
        self.reparse.push((code.to_string(), via.to_string()));
    }
}

fn is_device(v: &str) -> bool {
    matches!(
        v,
        "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "/dev/zero"
    ) || v.starts_with("/dev/fd/")
}
