//! What the containment tests share: a profile without protected paths for the "allowed" half
//! of each pair, readers for where a run's quarantine put what it moved, and a real repository
//! made in the scratch workspace.
#![allow(dead_code, clippy::unwrap_used)]

use super::common::{Scratch, stdout, text};
use std::path::{Path, PathBuf};

/// A profile that grants much more, for the "allowed" half of a pair: no protected paths.
pub const WIDE: &str = r#"
requires = ["landlock", "seccomp"]
[filesystem]
read = ["/"]
execute = ["/"]
write = ["{workspace}", "{home}", "{tmp}"]
[network]
mode = "host"
[environment]
pass = ["PATH", "HOME"]
[limits]
timeout = 60
processes = 2000
"#;

/// The one quarantine directory of a run under `home`, if any.
pub fn quarantine(home: &Path) -> Option<PathBuf> {
    let root = home.join(".local/state/sbx/quarantine");
    let mut runs: Vec<PathBuf> = std::fs::read_dir(root)
        .ok()?
        .map(|e| e.unwrap().path())
        .collect();
    runs.sort();
    runs.pop()
}

/// Where `rel` (a path relative to the workspace) went in the run directory `q`, by its
/// MANIFEST: numbered entries, each the outermost path moved.
pub fn in_quarantine(q: &Path, rel: &str) -> Option<PathBuf> {
    let manifest = std::fs::read_to_string(q.join("MANIFEST")).ok()?;
    manifest.lines().skip(1).find_map(|line| {
        let (n, moved) = line.split_once('\t')?;
        let rest = Path::new(rel).strip_prefix(moved).ok()?;
        let name = Path::new(moved).file_name()?.to_string_lossy().into_owned();
        let entry = q.join(format!("{n}-{name}"));
        Some(if rest.as_os_str().is_empty() {
            entry
        } else {
            entry.join(rest)
        })
    })
}

/// A real repository in the scratch workspace, made outside the sandbox.
pub fn git_repo(s: &Scratch) {
    std::fs::remove_dir_all(s.ws.join(".git")).unwrap();
    let out = s.outside(
        "git init -q . && git -c user.email=t@e -c user.name=t commit -q --allow-empty -m init && echo OK",
    );
    assert!(stdout(&out).contains("OK"), "{}", text(&out));
}
