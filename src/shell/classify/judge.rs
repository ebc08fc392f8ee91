//! The running judgement of one segment: every finding raises it, the
//! strictest class wins, and writes are judged by where they land.

use crate::shell::paths::{self, Zone};
use crate::shell::walk::{self, Cwd, Traits};
use crate::shell::words::Word;
use crate::shell::{Class, ShellContext, Verdict};
use std::path::PathBuf;

/// Running judgement of one segment: the strictest finding wins.
pub(crate) struct Judge {
    pub class: Class,
    pub reason: String,
    pub writes: Vec<PathBuf>,
    /// Paths the arguments and input redirections name, as the kernel will see them.
    pub reads: Vec<PathBuf>,
    /// Why no wildcard rule may lift this segment (see [`Segment::findings`]).
    pub findings: Vec<String>,
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
            reads: Vec::new(),
            findings: Vec::new(),
            t: Traits::default(),
            reparse: Vec::new(),
        }
    }

    /// Raise to `class` if it is stricter than what was found so far.
    pub fn raise(&mut self, class: Class, reason: impl Into<String>) {
        let reason = reason.into();
        if class.is_finding() {
            self.finding(&reason);
        }
        if rank(class) > rank(self.class) {
            self.class = class;
            self.reason = reason;
        }
    }

    /// Record a finding without changing the class: something no wildcard rule may lift.
    pub fn finding(&mut self, reason: &str) {
        if self.findings.len() < MAX_FINDINGS && !self.findings.iter().any(|f| f == reason) {
            self.findings.push(reason.to_string());
        }
    }

    /// Record the paths a word names for reading, from each candidate directory.
    pub fn read(&mut self, w: &Word, cwd: &Cwd) {
        for p in read_paths(w, cwd) {
            if !self.reads.contains(&p) {
                self.reads.push(p);
            }
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

/// Findings kept per segment; the first explains, the rest are for the audit trail.
const MAX_FINDINGS: usize = 8;

/// A word that names a path: absolute, home-relative or with a directory part, after an
/// `--option=` or `@` prefix. `None` for options and words whose value is not known.
fn path_value(w: &Word) -> Option<String> {
    let v = w.value.as_str();
    let v = match v.strip_prefix("--").and_then(|o| o.split_once('=')) {
        Some((_, value)) => value,
        None if v.starts_with('-') => return None,
        None => v,
    };
    let v = v.strip_prefix('@').unwrap_or(v);
    if let Some(rest) = v
        .strip_prefix('~')
        .filter(|r| !r.is_empty() && !r.starts_with('/'))
    {
        // `~user/...`: that user's home, as the shell expands it.
        let (user, tail) = rest.split_once('/').unwrap_or((rest, ""));
        let home = paths::user_home(user)?;
        return Some(home.join(tail).to_string_lossy().into_owned());
    }
    if w.subst || (w.unknown && !v.starts_with('/')) || v.contains("://") {
        return None;
    }
    let pathy = v.starts_with('/') || v.starts_with('.') || v.contains('/');
    pathy.then(|| {
        let cut = v.find(['*', '?', '[', '{', '$']).unwrap_or(v.len());
        let prefix = v.get(..cut).unwrap_or(v);
        if cut == v.len() {
            prefix.to_string()
        } else {
            match prefix.rfind('/') {
                Some(0) => "/".to_string(),
                Some(i) => prefix.get(..i).unwrap_or("").to_string(),
                None => ".".to_string(),
            }
        }
    })
}

fn read_paths(w: &Word, cwd: &Cwd) -> Vec<PathBuf> {
    let Some(v) = path_value(w) else {
        return Vec::new();
    };
    if std::path::Path::new(&v).is_absolute() {
        return vec![paths::resolve(&v, std::path::Path::new("/"))];
    }
    match cwd {
        Some(cs) => cs.iter().map(|c| paths::resolve(&v, c)).collect(),
        None => Vec::new(),
    }
}

fn is_device(v: &str) -> bool {
    matches!(
        v,
        "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "/dev/zero"
    ) || v.starts_with("/dev/fd/")
}
