//! Just enough of git's config syntax to find what makes git run programs: the keys of a
//! config file, the paths it includes, and its `core.hooksPath`. Anything not understood is
//! reported as such, so that callers can treat it as unsafe.
#![forbid(unsafe_code)]

/// One `key = value` line, with its section (lower case) and subsection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub section: String,
    pub subsection: Option<String>,
    /// Lower case.
    pub key: String,
    pub value: String,
}

/// The entries of a config file, or `None` when a line is not understood (continuations,
/// stray text).
pub fn entries(text: &str) -> Option<Vec<Entry>> {
    let mut out = Vec::new();
    let mut section = String::new();
    let mut subsection = None;
    for line in text.lines() {
        let mut t = line.trim();
        if t.ends_with('\\') {
            return None;
        }
        if let Some(head) = t.strip_prefix('[') {
            let (name, rest) = head.split_once(']')?;
            (section, subsection) = header(name)?;
            t = rest.trim();
        }
        if t.is_empty() || t.starts_with(['#', ';']) {
            continue;
        }
        let (key, value) = t.split_once('=').unwrap_or((t, "true"));
        let key = key.trim();
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            return None;
        }
        out.push(Entry {
            section: section.clone(),
            subsection: subsection.clone(),
            key: key.to_ascii_lowercase(),
            value: value.trim().trim_matches('"').to_string(),
        });
    }
    Some(out)
}

/// `section "sub"` or `section.sub` or `section`.
fn header(name: &str) -> Option<(String, Option<String>)> {
    let name = name.trim();
    if let Some((sec, sub)) = name.split_once(char::is_whitespace) {
        let sub = sub.trim().strip_prefix('"')?.strip_suffix('"')?;
        return Some((sec.to_ascii_lowercase(), Some(sub.to_string())));
    }
    match name.split_once('.') {
        Some((sec, sub)) => Some((sec.to_ascii_lowercase(), Some(sub.to_string()))),
        None => Some((name.to_ascii_lowercase(), None)),
    }
}

/// Keys (`section.key`, any subsection) that git, `git init`, `git clone`, `git remote`,
/// `git submodule` and `git worktree` write and that run nothing.
const PLAIN_KEYS: &[&str] = &[
    "core.repositoryformatversion",
    "core.filemode",
    "core.bare",
    "core.logallrefupdates",
    "core.ignorecase",
    "core.precomposeunicode",
    "core.symlinks",
    "core.worktree",
    "core.autocrlf",
    "core.safecrlf",
    "core.eol",
    "core.sparsecheckout",
    "core.sparsecheckoutcone",
    "core.quotepath",
    "core.checkstat",
    "core.trustctime",
    "core.untrackedcache",
    "core.compression",
    "core.abbrev",
    "extensions.objectformat",
    "extensions.refstorage",
    "extensions.worktreeconfig",
    "extensions.partialclone",
    "extensions.preciousobjects",
    "remote.url",
    "remote.pushurl",
    "remote.fetch",
    "remote.push",
    "remote.tagopt",
    "remote.prune",
    "remote.mirror",
    "remote.promisor",
    "remote.partialclonefilter",
    "branch.remote",
    "branch.merge",
    "branch.rebase",
    "branch.pushremote",
    "branch.description",
    "user.name",
    "user.email",
    "submodule.url",
    "submodule.active",
    "submodule.branch",
    "init.defaultbranch",
    "gc.auto",
    "pull.rebase",
    "pull.ff",
    "fetch.prune",
    "lfs.repositoryformatversion",
    "index.version",
];

/// `submodule.NAME.update` runs a command when it starts with `!`; these values do not.
const PLAIN_UPDATE: &[&str] = &["checkout", "rebase", "merge", "none"];

/// Whether an entry is one git writes itself and that runs nothing.
pub fn is_plain(e: &Entry) -> bool {
    let key = format!("{}.{}", e.section, e.key);
    if key == "submodule.update" {
        PLAIN_UPDATE.contains(&e.value.as_str())
    } else {
        PLAIN_KEYS.contains(&key.as_str())
    }
}

/// Whether a config text holds only plain entries. Anything not understood is not plain.
pub fn text_is_plain(text: &str) -> bool {
    entries(text).is_some_and(|es| es.iter().all(is_plain))
}

/// The paths a config names that git reads or runs from: `core.hooksPath` and the `path` of
/// `include` and `includeIf` sections, as written.
pub fn hooks_and_includes(text: &str) -> (Option<String>, Vec<String>) {
    let mut hooks = None;
    let mut includes = Vec::new();
    for e in entries(text).unwrap_or_default() {
        match (e.section.as_str(), e.key.as_str()) {
            ("core", "hookspath") => hooks = Some(e.value),
            ("include" | "includeif", "path") => includes.push(e.value),
            _ => {}
        }
    }
    (hooks, includes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_git_writes_is_plain_and_what_runs_programs_is_not() {
        let init = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n";
        let clone = "[remote \"origin\"]\n\turl = https://example.org/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n[submodule \"lib\"]\n\tactive = true\n\turl = ../lib\n";
        assert!(text_is_plain(init));
        assert!(text_is_plain(&format!("{init}{clone}")));
        assert!(text_is_plain("[submodule \"lib\"]\n\tupdate = rebase\n"));
        for bad in [
            "[core]\n\tfsmonitor = ./x\n",
            "[core]\n\thooksPath = /tmp/h\n",
            "[core]\n\tsshCommand = sh -c x\n",
            "[alias]\n\tst = !sh x\n",
            "[include]\n\tpath = ../other\n",
            "[includeIf \"gitdir:/\"]\n\tpath = x\n",
            "[filter \"lfs\"]\n\tclean = x\n",
            "[submodule \"lib\"]\n\tupdate = !sh x\n",
            "[core] fsmonitor = x\n",
            "[core]\n\tpager = a\\\n",
            "[diff \"x\"]\n\ttextconv = x\n",
            "[core]\n\tfsmonitor\n",
            "garbage [",
        ] {
            assert!(!text_is_plain(bad), "{bad}");
        }
    }

    #[test]
    fn hooks_path_and_includes_are_found_in_every_spelling() {
        let (h, i) = hooks_and_includes(
            "[core] hooksPath = .githooks\n[include]\n\tpath = ../.gitconfig\n[includeIf \"onbranch:x\"]\npath=b\n",
        );
        assert_eq!(h.as_deref(), Some(".githooks"));
        assert_eq!(i, ["../.gitconfig", "b"]);
        let (h, _) = hooks_and_includes("[CORE]\n\tHOOKSPATH = \"x y\"\n");
        assert_eq!(h.as_deref(), Some("x y"));
    }
}
