//! Refused by the sandbox: an access the profile's capability set will refuse (a read it
//! hides, a write the kernel refuses or undoes after the run) is denied before it is tried,
//! with the profile line that causes it. Approval could never make such a call succeed, so it
//! is never asked about.
//!
//! The capability set is the one the executor turns into the kernel's rules; nothing here
//! keeps a list of its own.
#![forbid(unsafe_code)]

use super::access::Access;
use super::fold::{case_variant_within, fold, within_folded};
use crate::capability::{CapabilitySet, Origin, PathEntry, loaded_where_started, path_within};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Why the sandbox refuses one access.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SandboxRefusal {
    /// A stable name: `plan:deny-read`, `plan:read`, `plan:deny-write`, `plan:protected-new`,
    /// `plan:protected-below`, `plan:write`.
    pub rule: &'static str,
    /// Why the sandbox refuses it.
    pub reason: String,
    /// The path refused.
    pub path: PathBuf,
    /// The profile line that causes it, when one entry does.
    pub origin: Option<Origin>,
}

/// Writes that ordinary work makes to devices: the null sink, the standard streams, the
/// terminal, descriptors, and the sandbox's private shared memory.
pub fn ordinary_device(path: &Path) -> bool {
    [
        "/dev/null",
        "/dev/stdout",
        "/dev/stderr",
        "/dev/tty",
        "/dev/zero",
    ]
    .iter()
    .any(|d| path == Path::new(d))
        || ["/dev/shm", "/dev/fd", "/dev/pts", "/proc/self/fd"]
            .iter()
            .any(|d| path.starts_with(d))
}

fn hit(
    rule: &'static str,
    path: &Path,
    origin: Option<&Origin>,
    reason: String,
) -> Option<SandboxRefusal> {
    Some(SandboxRefusal {
        rule,
        reason,
        path: path.to_path_buf(),
        origin: origin.cloned(),
    })
}

fn within<'a>(path: &Path, entries: &'a [PathEntry]) -> Option<&'a PathEntry> {
    entries.iter().find(|e| path_within(path, &e.path))
}

/// [`within`] for a list that takes away (hidden or read-only paths): a case variant of an
/// entry counts where the file system folds case.
fn within_denied<'a>(path: &Path, entries: &'a [PathEntry]) -> Option<&'a PathEntry> {
    within(path, entries).or_else(|| {
        let ascii = path.as_os_str().is_ascii();
        entries
            .iter()
            .find(|e| case_variant_within(path, ascii, &e.path))
    })
}

/// The entries of a list as `path (origin)`, at most four.
fn listed(entries: &[PathEntry]) -> String {
    let mut parts: Vec<String> = entries
        .iter()
        .take(4)
        .map(|e| format!("{} ({})", e.path.display(), e.origin))
        .collect();
    if entries.len() > 4 {
        parts.push(format!("{} more", entries.len() - 4));
    }
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
    }
}

/// A read of `path` that the sandbox hides or does not grant.
pub fn sandbox_refused_read(path: &Path, caps: &CapabilitySet) -> Option<SandboxRefusal> {
    if let Some(e) = within_denied(path, &caps.fs.deny_read) {
        return hit(
            "plan:deny-read",
            path,
            Some(&e.origin),
            format!(
                "the profile hides {} ({}): the kernel refuses the read",
                path.display(),
                e.origin
            ),
        );
    }
    if within(path, &caps.fs.read).is_none() && !ordinary_device(path) {
        return hit(
            "plan:read",
            path,
            None,
            format!(
                "{} is outside what the profile lets a command read (filesystem.read: {}): the kernel refuses the read",
                path.display(),
                listed(&caps.fs.read)
            ),
        );
    }
    None
}

/// A read of a file that is another name (a hard link) of one the profile hides: the mounts
/// and Landlock hide a path, not the file behind it, so the kernel would let the command read
/// it; refused here in every mode. Only a regular file with more than one name is compared
/// (its device and inode) with the hidden files and the files directly in hidden directories.
fn hidden_file_link(path: &Path, caps: &CapabilitySet) -> Option<SandboxRefusal> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path)
        .ok()
        .filter(|m| m.is_file() && m.nlink() > 1)?;
    let same = |p: &Path| {
        std::fs::symlink_metadata(p).is_ok_and(|o| o.dev() == m.dev() && o.ino() == m.ino())
    };
    let holds = |e: &&PathEntry| match std::fs::symlink_metadata(&e.path) {
        Ok(d) if d.is_dir() => std::fs::read_dir(&e.path)
            .into_iter()
            .flatten()
            .flatten()
            .take(HIDDEN_DIR_ENTRIES)
            .any(|c| same(&c.path())),
        Ok(_) => same(&e.path),
        Err(_) => false,
    };
    let e = caps.fs.deny_read.iter().find(holds)?;
    hit(
        "floor:hidden-file-link",
        path,
        Some(&e.origin),
        format!(
            "{} is another name (a hard link) of a file the profile hides under {} ({}): the sandbox hides the name, not the file",
            path.display(),
            e.path.display(),
            e.origin
        ),
    )
}

/// Entries of a hidden directory compared with a hard-linked file.
const HIDDEN_DIR_ENTRIES: usize = 256;

/// A Read, Grep or Glob of a process's environment or memory under `/proc`, or a walk through
/// `/proc`: those tools run in the harness's own process, outside any sandbox, where
/// `/proc/self/environ` holds the harness's API keys and tokens.
fn harness_process_read(access: &Access) -> Option<SandboxRefusal> {
    let Access::Read { paths, trees } = access else {
        return None;
    };
    let process_file = |p: &&PathBuf| {
        let names: Vec<&std::ffi::OsStr> = p.iter().collect();
        names.get(1).is_some_and(|n| *n == "proc")
            && names
                .last()
                .is_some_and(|n| matches!(n.to_str(), Some("environ" | "mem")))
    };
    let walks_proc = |t: &&PathBuf| Path::new("/proc").starts_with(t) || t.starts_with("/proc");
    let p = paths
        .iter()
        .find(process_file)
        .or_else(|| trees.iter().find(walks_proc))?;
    hit(
        "floor:process-environment",
        p,
        None,
        format!(
            "{} reaches a process's environment or memory under /proc: this tool reads it in the harness's own process, outside the sandbox",
            p.display()
        ),
    )
}

/// `entry` as a glob matches `path` or one of its ancestors, exactly or, where the directory
/// folds case, with both folded. Only the entries whose literal prefix `path` starts with
/// (ignoring case) are compiled.
fn watched(path: &Path, entry: &PathEntry) -> bool {
    let pattern = entry.path.to_string_lossy();
    let cut = pattern.find(['*', '?', '[']).unwrap_or(pattern.len());
    let text = path.to_string_lossy();
    let literal = pattern.get(..cut).unwrap_or("");
    let prefixed = if text.is_ascii() && literal.is_ascii() {
        text.get(..literal.len())
            .is_some_and(|t| t.eq_ignore_ascii_case(literal))
    } else {
        fold(&text).starts_with(&fold(literal))
    };
    if !prefixed {
        return false;
    }
    if cut == pattern.len() {
        return within_folded(path, &entry.path);
    }
    let opts = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        require_literal_leading_dot: false,
    };
    let Ok(glob) = glob::Pattern::new(&pattern) else {
        // A pattern that does not compile protects everything under its literal prefix.
        return true;
    };
    if path.ancestors().any(|a| glob.matches_path_with(a, opts)) {
        return true;
    }
    let Ok(folded) = glob::Pattern::new(&fold(&pattern)) else {
        return true;
    };
    path.ancestors().any(|a| {
        folded.matches_with(&fold(&a.to_string_lossy()), opts)
            && a.parent().is_some_and(super::fold::dir_folds_case)
    })
}

/// A write to `path` that the kernel refuses, or that is undone after the run.
pub fn sandbox_refused_write(path: &Path, caps: &CapabilitySet) -> Option<SandboxRefusal> {
    if ordinary_device(path) {
        return None;
    }
    if let Some(e) = within_denied(path, &caps.fs.deny_write) {
        let reason = if e.path.symlink_metadata().is_ok() {
            format!(
                "{} is read-only in the sandbox ({}): the kernel refuses the write",
                path.display(),
                e.origin
            )
        } else {
            protected_new(path, &e.origin)
        };
        return hit("plan:deny-write", path, Some(&e.origin), reason);
    }
    if let Some(e) = caps.fs.watch.iter().find(|e| watched(path, e)) {
        return hit(
            "plan:protected-new",
            path,
            Some(&e.origin),
            protected_new(path, &e.origin),
        );
    }
    if let Some(r) = held_below_root(path, caps) {
        return Some(r);
    }
    if within(path, &caps.fs.write).is_none() {
        return hit(
            "plan:write",
            path,
            None,
            format!(
                "{} is outside the profile's writable set (filesystem.write: {}): the kernel refuses the write",
                path.display(),
                listed(&caps.fs.write)
            ),
        );
    }
    None
}

/// A write at or beneath `<root>/<dir>/<name>`, where `root` is a writable tree, `<root>/<name>`
/// a protected path and programs load `name` from the directory they start in
/// ([`loaded_where_started`]): the executor holds such a name read-only one level below the
/// root when it exists, and moves one made during the run to quarantine.
fn held_below_root(path: &Path, caps: &CapabilitySet) -> Option<SandboxRefusal> {
    let fold = caps.fs.case_folding == crate::capability::CaseFolding::Accept;
    let mut at = Some(path);
    while let Some(p) = at {
        let (Some(name), Some(dir)) = (p.file_name(), p.parent()) else {
            return None;
        };
        if let Some(root) = dir.parent()
            && loaded_where_started(name, fold)
            && caps.fs.write.iter().any(|w| w.path == root)
        {
            let at_root = root.join(name);
            let protects = |e: &&PathEntry| e.path == at_root || watched(&at_root, e);
            let e = caps
                .fs
                .deny_write
                .iter()
                .chain(&caps.fs.watch)
                .find(protects);
            if let Some(e) = e {
                let reason = format!(
                    "{} is held like {} ({}) one level below the workspace root: read-only where it exists, moved to quarantine after the run where it is made, and no approval changes that",
                    path.display(),
                    at_root.display(),
                    e.origin
                );
                return hit("plan:protected-below", path, Some(&e.origin), reason);
            }
        }
        at = p.parent();
    }
    None
}

fn protected_new(path: &Path, origin: &Origin) -> String {
    format!(
        "{} is a protected path ({}): made during the run, it is moved to quarantine afterwards, and no approval can make it stay",
        path.display(),
        origin
    )
}

/// A recursive read of `dir` that reaches a path the profile hides. The kernel hides that
/// path from a sandboxed command, so the walk is harmless there; run unsandboxed (a hook
/// without `--sandbox`, the Grep and Glob tools) it reads it.
pub fn sandbox_refused_tree(dir: &Path, caps: &CapabilitySet) -> Option<SandboxRefusal> {
    if let Some(r) = sandbox_refused_read(dir, caps) {
        return Some(r);
    }
    let e = caps
        .fs
        .deny_read
        .iter()
        .find(|e| path_within(&e.path, dir))?;
    hit(
        "plan:deny-read-tree",
        dir,
        Some(&e.origin),
        format!(
            "reads {} recursively, which holds {} that the profile hides ({}): outside the sandbox nothing would hide it; name a narrower directory, or run the command in the sandbox, where the kernel hides it",
            dir.display(),
            e.path.display(),
            e.origin
        ),
    )
}

/// A symbolic link to a path the profile hides: a read through the link later in the same
/// command is not seen by the gate, and outside the sandbox nothing hides the target.
pub fn sandbox_refused_link(target: &Path, caps: &CapabilitySet) -> Option<SandboxRefusal> {
    let e = within_denied(target, &caps.fs.deny_read)?;
    hit(
        "plan:link-hidden",
        target,
        Some(&e.origin),
        format!(
            "makes a link to {}, which the profile hides ({}): a read through the link is not seen before it runs, and outside the sandbox nothing would hide it",
            target.display(),
            e.origin
        ),
    )
}

/// The first refusal among the paths a write `pattern` becomes when it runs.
fn refused_write_pattern(pattern: &Path, caps: &CapabilitySet) -> Option<SandboxRefusal> {
    existing(pattern)
        .find_map(|p| sandbox_refused_write(&p, caps))
        .map(|r| for_pattern(r, pattern))
}

/// The first refusal among the paths a read `pattern` becomes when it runs.
fn refused_read_pattern(pattern: &Path, caps: &CapabilitySet) -> Option<SandboxRefusal> {
    existing(pattern)
        .find_map(|p| sandbox_refused_read(&p, caps))
        .map(|r| for_pattern(r, pattern))
}

/// What a glob becomes when it runs: the paths that exist and match it, a leading dot only
/// by a dot as bash matches without `dotglob` (a pattern that matches nothing stays as it
/// is, no protected name). So `rm *.yml` is not refused for an `azure-pipelines.yml` the
/// workspace does not have; one made between the check and the run is the sandbox's to
/// refuse or undo. The shell analysis still flags the protected names a pattern could
/// reach (see `shell::globs::candidates`).
fn existing(pattern: &Path) -> impl Iterator<Item = PathBuf> {
    // The glob crate's `require_literal_leading_dot` also refuses a literal `.name`
    // directory on the way, so hidden names are filtered here instead.
    let opts = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        require_literal_leading_dot: false,
    };
    let wild: Vec<bool> = pattern
        .components()
        .map(|c| {
            let c = c.as_os_str().as_encoded_bytes();
            c.first() != Some(&b'.') && c.iter().any(|b| matches!(b, b'*' | b'?' | b'['))
        })
        .collect();
    let shown = move |p: &PathBuf| {
        p.components()
            .zip(&wild)
            .all(|(c, wild)| !*wild || c.as_os_str().as_encoded_bytes().first() != Some(&b'.'))
    };
    glob::glob_with(&pattern.to_string_lossy(), opts)
        .into_iter()
        .flatten()
        .flatten()
        .filter(shown)
        .take(4096)
}

fn for_pattern(mut r: SandboxRefusal, pattern: &Path) -> SandboxRefusal {
    r.reason = format!(
        "`{}` can expand to {} when it runs: {}",
        pattern.display(),
        r.path.display(),
        r.reason
    );
    r
}

/// The paths a call names, by how it touches them.
struct Touched<'a> {
    reads: Vec<&'a PathBuf>,
    writes: Vec<&'a PathBuf>,
    trees: Vec<&'a PathBuf>,
    links: Vec<&'a PathBuf>,
    write_patterns: Vec<&'a PathBuf>,
    read_patterns: Vec<&'a PathBuf>,
}

fn touched(access: &Access) -> Touched<'_> {
    let mut t = Touched {
        reads: Vec::new(),
        writes: Vec::new(),
        trees: Vec::new(),
        links: Vec::new(),
        write_patterns: Vec::new(),
        read_patterns: Vec::new(),
    };
    match access {
        Access::Bash(b) => {
            for s in &b.analysis.segments {
                t.reads.extend(&s.reads);
                t.writes.extend(&s.writes);
                t.trees.extend(&s.trees);
                t.links.extend(&s.links);
                t.write_patterns.extend(&s.write_patterns);
                t.read_patterns.extend(&s.read_patterns);
            }
        }
        Access::Read { paths, trees } => {
            t.reads.extend(paths);
            t.trees.extend(trees);
        }
        Access::Write { paths } => t.writes.extend(paths),
        Access::WebFetch { .. }
        | Access::WebSearch { .. }
        | Access::Mcp { .. }
        | Access::Harness
        | Access::Unknown => {}
    }
    t
}

/// The first refusal among the paths a call reads and writes, writes first. `confined`: the
/// call runs in the sandbox with every protection in force, so the kernel hides what a
/// recursive read or a link would reach; only direct reads and writes are refused then.
pub fn sandbox_refusal(
    access: &Access,
    caps: &CapabilitySet,
    confined: bool,
) -> Option<SandboxRefusal> {
    if let Some(r) = harness_process_read(access) {
        return Some(r);
    }
    let t = touched(access);
    // Targets the analysis could not resolve (`> $OUT`) are not paths yet: the floor and the
    // analysis ask about them.
    let abs = |p: &&PathBuf| p.is_absolute();
    let direct =
        t.writes
            .into_iter()
            .filter(abs)
            .find_map(|p| sandbox_refused_write(p, caps))
            .or_else(|| {
                t.reads.into_iter().filter(abs).find_map(|p| {
                    sandbox_refused_read(p, caps).or_else(|| hidden_file_link(p, caps))
                })
            })
            .or_else(|| {
                let mut write = t.write_patterns.into_iter().filter(abs);
                write.find_map(|p| refused_write_pattern(p, caps))
            })
            .or_else(|| {
                let mut read = t.read_patterns.into_iter().filter(abs);
                read.find_map(|p| refused_read_pattern(p, caps))
            });
    if direct.is_some() || confined {
        return direct;
    }
    t.trees
        .into_iter()
        .filter(abs)
        .find_map(|p| sandbox_refused_tree(p, caps))
        .or_else(|| {
            t.links
                .into_iter()
                .filter(abs)
                .find_map(|p| sandbox_refused_link(p, caps))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capability::FsCaps;

    fn entry(p: &str, line: usize) -> PathEntry {
        PathEntry {
            path: PathBuf::from(p),
            required: false,
            origin: Origin {
                source: "test.toml".into(),
                line,
                key: "filesystem.x".into(),
            },
        }
    }

    fn caps(existing: &Path) -> CapabilitySet {
        let root = Path::new("/nonexistent-sbx-plan");
        caps_in(&root.join("ws"), &root.join("home"), existing)
    }

    fn caps_in(ws: &Path, home: &Path, existing: &Path) -> CapabilitySet {
        let ws = ws.to_string_lossy();
        let mut c = crate::profile::Profile::load("workspace")
            .and_then(|p| {
                p.resolve(&crate::profile::Vars {
                    workspace: crate::workspace::WorkspaceContext::new(ws.as_ref(), home),
                    tmp: "/tmp".into(),
                })
            })
            .unwrap_or_else(|e| panic!("{e}"));
        c.fs = FsCaps {
            deny_write: vec![
                entry(&existing.to_string_lossy(), 3),
                entry(&format!("{ws}/.envrc"), 4),
            ],
            watch: vec![
                entry(&format!("{ws}/.env*"), 5),
                entry(&format!("{ws}/.git/modules/*/hooks"), 6),
            ],
            ..c.fs
        };
        c
    }

    #[test]
    fn reads_the_profile_hides_or_does_not_grant() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let c = caps(dir.path());
        let ssh = Path::new("/nonexistent-sbx-plan/home/.ssh/id_rsa");
        let r = sandbox_refused_read(ssh, &c).unwrap_or_else(|| panic!("hidden"));
        assert_eq!(r.rule, "plan:deny-read");
        assert!(r.origin.is_some_and(|o| &*o.source == "builtin:base"));
        assert!(sandbox_refused_read(Path::new("/nonexistent-sbx-plan/home/notes"), &c).is_none());
        let mut narrow = c.clone();
        narrow.fs.read = vec![entry("/usr", 1)];
        let r = sandbox_refused_read(Path::new("/etc/hostname"), &narrow)
            .unwrap_or_else(|| panic!("ungranted"));
        assert_eq!((r.rule, r.origin), ("plan:read", None));
        assert!(sandbox_refused_read(Path::new("/usr/bin/ls"), &narrow).is_none());
    }

    #[test]
    fn writes_refused_by_the_kernel_or_undone_after_the_run() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let mut c = caps(dir.path());
        c.fs.write.push(entry(&dir.path().to_string_lossy(), 2));
        let ws = Path::new("/nonexistent-sbx-plan/ws");
        let kernel =
            sandbox_refused_write(&dir.path().join("f"), &c).unwrap_or_else(|| panic!("ro"));
        assert!(
            kernel.reason.contains("kernel refuses"),
            "{}",
            kernel.reason
        );
        assert_eq!(kernel.origin.map(|o| o.line), Some(3));
        let missing =
            sandbox_refused_write(&ws.join(".envrc"), &c).unwrap_or_else(|| panic!("new"));
        assert!(missing.reason.contains("quarantine"), "{}", missing.reason);
        for p in [
            ".env",
            ".env.local",
            ".env.d/x",
            ".git/modules/m/hooks/pre-commit",
        ] {
            let r = sandbox_refused_write(&ws.join(p), &c).unwrap_or_else(|| panic!("{p}"));
            assert_eq!(r.rule, "plan:protected-new", "{p}");
        }
        // One level below the root the executor holds the names programs load where they
        // start; two levels down, and other names there, it does not.
        for p in ["src/.env", "src/.envrc", "src/.envrc/x", "app/.env.local"] {
            let r = sandbox_refused_write(&ws.join(p), &c).unwrap_or_else(|| panic!("{p}"));
            assert_eq!(r.rule, "plan:protected-below", "{p}");
            assert!(r.reason.contains("one level below"), "{}", r.reason);
        }
        let mut unwritable = c.clone();
        unwritable.fs.write.retain(|w| w.path != ws);
        let r = sandbox_refused_write(&ws.join("src/.env"), &unwritable);
        assert_eq!(
            r.map(|r| r.rule),
            Some("plan:write"),
            "no writable root, no hold"
        );
        for p in [
            "a/b/.env",
            "src/env",
            "src/notes.md",
            "env",
            "x.env",
            ".git/modules/m/config.d",
            "notes.md",
        ] {
            assert!(sandbox_refused_write(&ws.join(p), &c).is_none(), "{p}");
        }
        let out = sandbox_refused_write(Path::new("/usr/local/bin/x"), &c)
            .unwrap_or_else(|| panic!("out"));
        assert_eq!(out.rule, "plan:write");
        assert!(sandbox_refused_write(Path::new("/dev/null"), &c).is_none());
        assert!(sandbox_refused_write(Path::new("/tmp/x"), &c).is_none());
    }

    /// A glob is refused when a path it becomes when it runs (one that exists and matches
    /// it) is; the same pattern with nothing protected there to match is not.
    #[test]
    fn glob_patterns_are_judged_by_the_paths_they_become() {
        let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let ws = root.path().join("ws");
        let home = root.path().join("home");
        let c = caps_in(&ws, &home, &root.path().join("none"));
        let patterns = [".e*rc", ".[e]nvrc", ".git/modules/*/hoo*/pre-commit"];
        std::fs::create_dir_all(ws.join(".git/modules/m/hooks")).unwrap_or_else(|e| panic!("{e}"));
        for p in patterns {
            assert_eq!(
                refused_write_pattern(&ws.join(p), &c),
                None,
                "{p}: nothing there"
            );
        }
        assert!(refused_read_pattern(&home.join(".ss*/id_*"), &c).is_none());
        for f in [".envrc", ".git/modules/m/hooks/pre-commit", "notes.md"] {
            std::fs::write(ws.join(f), "").unwrap_or_else(|e| panic!("{e}"));
        }
        for p in patterns {
            let r = refused_write_pattern(&ws.join(p), &c).unwrap_or_else(|| panic!("{p}"));
            assert!(r.reason.contains("can expand to"), "{}", r.reason);
        }
        for p in ["*env*", "notes*.md", "?envrc", "*"] {
            assert_eq!(refused_write_pattern(&ws.join(p), &c), None, "{p}");
        }
        std::fs::create_dir_all(home.join(".ssh")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(home.join(".ssh/id_rsa"), "").unwrap_or_else(|e| panic!("{e}"));
        let r = refused_read_pattern(&home.join(".ss*/id_*"), &c).unwrap_or_else(|| panic!("ssh"));
        assert_eq!(
            (r.rule, r.path),
            ("plan:deny-read", home.join(".ssh/id_rsa"))
        );
        assert!(refused_read_pattern(&home.join("*/id_*"), &c).is_none());
    }
}
