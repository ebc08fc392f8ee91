//! The running judgement of one segment: every finding raises it, the
//! strictest class wins, and writes are judged by where they land.

use crate::decision::Decision;
use crate::shell::globs;
use crate::shell::paths::{self, Reach, Zone};
use crate::shell::walk::{self, Cwd, Traits};
use crate::shell::words::Word;
use crate::shell::{Class, ShellContext};
use std::path::PathBuf;

/// Running judgement of one segment: the strictest finding wins.
pub(crate) struct Judge {
    pub class: Class,
    pub reason: String,
    pub writes: Vec<PathBuf>,
    /// Paths the arguments and input redirections name, as the kernel will see them.
    pub reads: Vec<PathBuf>,
    /// Directories read recursively (see [`Segment::trees`]).
    pub trees: Vec<PathBuf>,
    /// Symbolic link targets (see [`Segment::links`]).
    pub links: Vec<PathBuf>,
    /// Glob write targets (see [`Segment::write_patterns`]).
    pub write_patterns: Vec<PathBuf>,
    /// Glob paths read (see [`Segment::read_patterns`]).
    pub read_patterns: Vec<PathBuf>,
    /// Why no wildcard rule may lift this segment (see [`Segment::findings`]).
    pub findings: Vec<String>,
    pub t: Traits,
    pub reparse: Vec<(String, String)>,
}

/// How strict a class is: its default verdict first, and among the allowed classes, how far
/// they reach (inspection, then workspace writes).
pub(super) fn rank(c: Class) -> u8 {
    match c.default_verdict() {
        Decision::Allow => match c {
            Class::ReadOnly => 0,
            _ => 2,
        },
        Decision::Ask => 3,
        Decision::Deny => 4,
    }
}

impl Judge {
    pub(crate) fn new() -> Judge {
        Judge {
            class: Class::ReadOnly,
            reason: "[shell.read-only] inspection only".into(),
            writes: Vec::new(),
            reads: Vec::new(),
            trees: Vec::new(),
            links: Vec::new(),
            write_patterns: Vec::new(),
            read_patterns: Vec::new(),
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

    /// Record the paths a word names for reading, from each candidate directory. A glob is
    /// expanded as the shell would and every match is recorded; one that cannot be expanded
    /// reads its whole literal directory. A protected name the glob could match when it runs
    /// counts as read too, made or not.
    pub fn read(&mut self, w: &Word, cwd: &Cwd, ctx: &ShellContext) {
        self.read_operand(w, cwd, ctx, Reach::Target);
    }

    /// As [`Judge::read`], for a program that reaches as `reach` says: one that reads a
    /// symbolic link as a link (git records its target text, `ls -l` and `stat` show it, `rm`
    /// removes it) reads nothing of what it leads to, and its bare names need no `lstat`.
    pub fn read_operand(&mut self, w: &Word, cwd: &Cwd, ctx: &ShellContext, reach: Reach) {
        self.watching_other(w, |j| j.read_operand_here(w, cwd, ctx, reach));
    }

    /// `judge` run on `w`, and the word opaque when a path it resolved passed through another
    /// process's `cwd` or `root` (a link to `/proc`, `/proc/1234/cwd`): where it lands is only
    /// known when it runs.
    fn watching_other(&mut self, w: &Word, judge: impl FnOnce(&mut Self)) {
        paths::take_through_other();
        judge(self);
        if paths::take_through_other() {
            self.raise(
                Class::Opaque,
                format!(
                    "[shell.proc-alias] `{}` leads through another process's directory: where it lands is only known when it runs",
                    w.display
                ),
            );
        }
    }

    fn read_operand_here(&mut self, w: &Word, cwd: &Cwd, ctx: &ShellContext, reach: Reach) {
        self.descriptor(w);
        if cwd.is_none()
            && matches!(operand(w), Some(Operand::Text(v)) if !v.is_empty() && !v.starts_with('/'))
        {
            self.raise(
                Class::Opaque,
                format!(
                    "[shell.cwd.unknown] `{}` is relative to a working directory only known when it runs",
                    w.display
                ),
            );
        }
        let links = match reach {
            Reach::Target => bare_links(w, cwd),
            Reach::Entry | Reach::Rename => Vec::new(),
        };
        for p in read_paths(w, cwd, reach).into_iter().chain(links) {
            // Resolved: a link to a secret is a read of the secret.
            self.secret(w, &p, ctx);
            push_new(&mut self.reads, p);
        }
        for p in bare_outside(w, cwd, ctx) {
            push_new(&mut self.reads, p);
        }
        if !w.glob {
            return;
        }
        for m in self.expand(w, cwd, reach) {
            self.secret(w, &m, ctx);
            push_new(&mut self.reads, m);
        }
        for (dir, pattern) in glob_dirs(w, cwd) {
            for c in globs::candidates(&pattern, &dir) {
                self.secret(w, &c, ctx);
            }
            for p in globs::absolute_patterns(&pattern, &dir) {
                push_new(&mut self.read_patterns, p);
            }
        }
    }

    /// A read of `path`, which `w` names, is a secret read if the path is a secret.
    fn secret(&mut self, w: &Word, path: &std::path::Path, ctx: &ShellContext) {
        if paths::is_secret(&path.to_string_lossy(), ctx) {
            self.t.reads_secret = true;
            self.raise(
                Class::SecretRead,
                format!(
                    "[shell.secret.read] `{}` matches `{}`",
                    w.display,
                    path.display()
                ),
            );
        }
    }

    /// A path through an open descriptor cannot be resolved before the command runs.
    fn descriptor(&mut self, w: &Word) {
        let v = w.value.split_once('=').map_or(w.value.as_str(), |(_, v)| v);
        if paths::through_descriptor(v) {
            self.raise(
                Class::Opaque,
                format!(
                    "[shell.proc-alias] `{}` goes through an open file descriptor or another process's directory: where it lands is only known when it runs",
                    w.display
                ),
            );
        }
    }

    /// Record a directory this segment reads recursively; a glob names every match. A walker
    /// that does not follow a link given as a root (`Reach::Entry`: `du`, `find`) walks the
    /// link alone.
    pub fn tree(&mut self, w: &Word, cwd: &Cwd, reach: Reach) {
        let found = if w.glob {
            self.expand(w, cwd, reach)
        } else {
            tree_paths(w, cwd, reach)
        };
        let proc_dir = std::path::Path::new("/proc");
        if let Some(p) = found
            .iter()
            .find(|p| p.starts_with(proc_dir) || proc_dir.starts_with(p))
        {
            self.t.reads_secret = true;
            self.raise(
                Class::SecretRead,
                format!(
                    "[shell.secret.proc] reads `{}` recursively, where each process's `environ` holds its environment",
                    p.display()
                ),
            );
        }
        for p in found {
            push_new(&mut self.trees, p);
        }
    }

    /// The matches of a glob word from each candidate directory, resolved. A pattern that
    /// cannot be expanded here records its literal directory as read recursively.
    fn expand(&mut self, w: &Word, cwd: &Cwd, reach: Reach) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for (d, v) in glob_dirs(w, cwd) {
            let resolved = |m: &PathBuf| paths::resolve_reaching(&m.to_string_lossy(), &d, reach);
            match globs::expand(&v, &d) {
                Ok(ms) => out.extend(ms.iter().map(resolved)),
                Err(dir) => push_new(&mut self.trees, dir),
            }
        }
        out
    }

    /// Record a write to a word and raise by where it lands.
    pub fn write(&mut self, w: &Word, cwd: &Cwd, ctx: &ShellContext, what: &str) {
        self.write_reaching(w, cwd, ctx, what, Reach::Target);
    }

    /// As [`Judge::write`], for a program that reaches as `reach` says: `rm` or `mv` of a
    /// link writes where the link is.
    pub fn write_reaching(
        &mut self,
        w: &Word,
        cwd: &Cwd,
        ctx: &ShellContext,
        what: &str,
        reach: Reach,
    ) {
        self.watching_other(w, |j| j.write_reaching_here(w, cwd, ctx, what, reach));
    }

    fn write_reaching_here(
        &mut self,
        w: &Word,
        cwd: &Cwd,
        ctx: &ShellContext,
        what: &str,
        reach: Reach,
    ) {
        self.descriptor(w);
        if is_device(&w.value) && !paths::through_descriptor(&w.value) {
            return;
        }
        if w.value.starts_with("/dev/tcp/") || w.value.starts_with("/dev/udp/") {
            self.raise(
                Class::Malicious,
                "[shell.malicious.reverse-shell] redirection to a network socket",
            );
            return;
        }
        if w.glob && !w.unknown && !w.subst {
            let dirs = match (w.value.starts_with('/'), cwd) {
                (true, _) => vec![ctx.cwd.clone()],
                (false, Some(cs)) => cs.clone(),
                (false, None) => Vec::new(),
            };
            for d in dirs {
                for p in globs::absolute_patterns(&w.value, &d) {
                    push_new(&mut self.write_patterns, p);
                }
            }
        }
        for (zone, path) in walk::judge(w, cwd, ctx, reach) {
            match zone {
                Zone::Inside => self.raise(Class::WorkspaceWrite, format!("[shell.write.workspace] {what} inside the workspace or the writable set")),
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
                Zone::Guarded(k) => self.raise(
                    Class::GuardedWrite,
                    format!("[shell.floor.ask] {what} `{}` writes {k}, which the safety floor asks about", path.display()),
                ),
            }
            if !self.writes.contains(&path) {
                self.writes.push(path);
            }
        }
    }

    /// A write under `dir` of the names an archive or a patch holds: a write of `dir`, and a
    /// finding, since those names may be protected ones (`.git/hooks`, `.github`, `.envrc`)
    /// that no wildcard rule may let a command place (the sandbox refuses or quarantines them;
    /// a command run outside it would plant them).
    pub fn content_write(&mut self, dir: &Word, cwd: &Cwd, ctx: &ShellContext, what: &str) {
        self.write(dir, cwd, ctx, what);
        self.finding(&format!(
            "[shell.write.content] {what} `{}` writes the names its input holds, protected ones included",
            dir.display
        ));
    }

    /// A write to the configuration of a repository a `git init` earlier on the line makes,
    /// inside the writable set: new, so no protected state of the workspace, and judged by its
    /// content after a sandboxed run (the keys that run programs are findings here). Not a
    /// write of a protected name: the segment's own class decides.
    pub fn fresh_repo_write(&mut self, path: &std::path::Path, what: &str) {
        self.raise(
            Class::WorkspaceWrite,
            format!(
                "[shell.git.new-repo] {what} `{}` of a repository made on this line",
                path.display()
            ),
        );
    }

    /// Record an output a tool's option names (`-o`, `--target-dir`, `--prefix`): a write, and
    /// one outside the workspace is a finding even inside the writable set, so that a wildcard
    /// rule for the tool does not let it place files elsewhere.
    pub fn output(&mut self, w: &Word, cwd: &Cwd, ctx: &ShellContext, what: &str) {
        let before = self.writes.len();
        self.write(w, cwd, ctx, what);
        let elsewhere = self
            .writes
            .get(before..)
            .unwrap_or(&[])
            .iter()
            .find(|p| p.is_absolute() && paths::inside(p, ctx) && !paths::in_workspace(p, ctx))
            .cloned();
        if let Some(p) = elsewhere {
            self.raise(
                Class::OutsideWrite,
                format!(
                    "[shell.write.outside-workspace] {what} `{}` is outside the workspace",
                    p.display()
                ),
            );
        }
    }

    /// Record a symbolic link's target, judged like a write (a later write through the link
    /// lands there) but kept apart: making the link neither reads nor writes it.
    pub fn link(&mut self, w: &Word, cwd: &Cwd, ctx: &ShellContext) {
        let before = self.writes.len();
        self.write(w, cwd, ctx, "symlink pointing to");
        let targets: Vec<PathBuf> = self.writes.drain(before..).collect();
        for t in targets {
            push_new(&mut self.links, t);
        }
    }

    pub fn code(&mut self, code: &str, via: &str) {
        self.reparse.push((code.to_string(), via.to_string()));
    }
}

fn push_new(list: &mut Vec<PathBuf>, p: PathBuf) {
    if !list.contains(&p) {
        list.push(p);
    }
}

/// Findings kept per segment; the first explains, the rest are for the audit trail.
const MAX_FINDINGS: usize = 8;

/// A word that names a path: absolute, home-relative or with a directory part, after an
/// `--option=` or `@` prefix. `None` for options and words whose value is not known.
fn path_value(w: &Word) -> Option<String> {
    let v = match operand(w)? {
        Operand::OtherHome(home) => return Some(home),
        Operand::Text(v) => v,
    };
    if w.subst || (w.unknown && !v.starts_with('/')) || v.contains("://") {
        return None;
    }
    let pathy = v.starts_with('/') || v.starts_with('.') || v.contains('/');
    pathy.then(|| {
        // A quoted wildcard is a literal character of the name (`'n*'` names `n*`).
        let cut = match (w.glob, w.unknown) {
            (false, false) => None,
            (false, true) => v.find('$'),
            (true, _) => v.find(['*', '?', '[', '{', '$']),
        }
        .unwrap_or(v.len());
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

/// `~user/...`: that user's home, as the shell expands it.
fn other_home(v: &str) -> Option<String> {
    let rest = v
        .strip_prefix('~')
        .filter(|r| !r.is_empty() && !r.starts_with('/'))?;
    let (user, tail) = rest.split_once('/').unwrap_or((rest, ""));
    let home = paths::user_home(user)?;
    Some(home.join(tail).to_string_lossy().into_owned())
}

/// The pattern of a glob word, after an `--option=` or `@` prefix and `~user`; `None` when
/// part of it is only known when it runs.
fn glob_value(w: &Word) -> Option<String> {
    if w.subst {
        return None;
    }
    match operand(w)? {
        Operand::OtherHome(home) => Some(home),
        Operand::Text(v) => (!w.unknown).then(|| v.to_string()),
    }
}

/// The pattern of a glob word with each directory it is expanded from.
fn glob_dirs(w: &Word, cwd: &Cwd) -> Vec<(PathBuf, String)> {
    let Some(v) = glob_value(w) else {
        return Vec::new();
    };
    let dirs: Vec<PathBuf> = if v.starts_with('/') {
        vec![PathBuf::from("/")]
    } else {
        cwd.clone().unwrap_or_default()
    };
    dirs.into_iter().map(|d| (d, v.clone())).collect()
}

/// A word's operand text after an `--option=` or `@` prefix, or the home `~user` names.
enum Operand<'a> {
    Text(&'a str),
    OtherHome(String),
}

/// `-X/...`: one option letter and an absolute path after it (bash expands no `~` there).
fn glued_path(v: &str) -> bool {
    let b = v.as_bytes();
    b.len() > 3 && b[0] == b'-' && b[1].is_ascii_alphabetic() && b[2] == b'/'
}

/// `None` for an option without `=value`, and for a `~user` whose home is not known.
fn operand(w: &Word) -> Option<Operand<'_>> {
    let v = w.value.as_str();
    let v = match v.strip_prefix("--").and_then(|o| o.split_once('=')) {
        Some((_, value)) => value,
        // A short option with a path glued to it (`-O/etc/shadow`, `-I/usr/include`).
        None if glued_path(v) => v.get(2..).unwrap_or(""),
        None if v.starts_with('-') => return None,
        None => v,
    };
    let v = v.strip_prefix('@').unwrap_or(v);
    if v.starts_with('~') && v != "~" && !v.starts_with("~/") {
        return other_home(v).map(Operand::OtherHome);
    }
    Some(Operand::Text(v))
}

/// A directory operand of a recursive reader: any word that is not an option, bare names
/// (`src`) included.
fn tree_paths(w: &Word, cwd: &Cwd, reach: Reach) -> Vec<PathBuf> {
    let v = w.value.as_str();
    if w.subst || v.starts_with('-') || v.contains("://") {
        return Vec::new();
    }
    if !v.starts_with('/') && !v.starts_with('~') && !v.contains('/') && !w.unknown {
        return match cwd {
            Some(cs) => cs
                .iter()
                .map(|c| paths::resolve_reaching(v, c, reach))
                .collect(),
            None => Vec::new(),
        };
    }
    read_paths(w, cwd, reach)
}

/// A bare name (`lnk`, no `/`) that is a symbolic link in a candidate directory, resolved: the
/// command opens the link's target, as the Read tool's path would be followed; or a file with
/// other names, which may be a hard link of a hidden file. Other bare names are not recorded
/// (most are not paths at all), so this costs one `lstat` per word.
fn bare_links(w: &Word, cwd: &Cwd) -> Vec<PathBuf> {
    let Some(v) = bare_name(w) else {
        return Vec::new();
    };
    cwd.iter()
        .flatten()
        .filter(|c| {
            use std::os::unix::fs::MetadataExt;
            // Under /proc a bare name is a process's file (`cd /proc/self && cat environ`);
            // a file with other names may be a hard link of a hidden one (the plan checks).
            c.starts_with("/proc")
                || c.join(v)
                    .symlink_metadata()
                    .is_ok_and(|m| m.file_type().is_symlink() || (m.is_file() && m.nlink() > 1))
        })
        .map(|c| paths::resolve(v, c))
        .collect()
}

/// A bare name (`auth.json`) from each working directory outside the workspace: after
/// `cd ~/.codex` it names a file the plan may hide, which the plan check then sees. Inside
/// the workspace a bare name is not a path for reading (it may be a pattern or a
/// subcommand), unless it is a link ([`bare_links`]); its shape is judged by the name alone.
fn bare_outside(w: &Word, cwd: &Cwd, ctx: &ShellContext) -> Vec<PathBuf> {
    let Some(v) = bare_name(w) else {
        return Vec::new();
    };
    cwd.iter()
        .flatten()
        .filter(|c| !paths::in_workspace(c, ctx))
        .map(|c| paths::resolve(v, c))
        .collect()
}

/// The name a word gives when it is a bare one (no directory part, no option), known.
fn bare_name(w: &Word) -> Option<&str> {
    let v = match w.value.strip_prefix("--").and_then(|o| o.split_once('=')) {
        Some((_, value)) => value,
        None => w.value.as_str(),
    };
    let bare = !v.is_empty() && !v.starts_with(['-', '.', '/', '~', '@']) && !v.contains('/');
    (bare && !w.subst && !w.unknown && !w.glob).then_some(v)
}

fn read_paths(w: &Word, cwd: &Cwd, reach: Reach) -> Vec<PathBuf> {
    let Some(v) = path_value(w) else {
        return Vec::new();
    };
    // A glob's literal prefix is a directory the shell lists, whatever the program does.
    let reach = if v == w.value { reach } else { Reach::Target };
    if std::path::Path::new(&v).is_absolute() {
        // The working directory still matters: `/proc/self/cwd` is the command's own.
        let root = [PathBuf::from("/")];
        let dirs = cwd.as_deref().unwrap_or(&root);
        let mut out: Vec<PathBuf> = Vec::new();
        for d in dirs {
            push_new(&mut out, paths::resolve_reaching(&v, d, reach));
        }
        return out;
    }
    match cwd {
        Some(cs) => cs
            .iter()
            .map(|c| paths::resolve_reaching(&v, c, reach))
            .collect(),
        None => Vec::new(),
    }
}

fn is_device(v: &str) -> bool {
    matches!(
        v,
        "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "/dev/zero"
    ) || v.starts_with("/dev/fd/")
}
