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
    parse(text, Reading::Strict)
}

/// How a line that is not understood counts: it makes a file not plain, but it must not hide
/// the `core.hooksPath` or `include` beside it (a multi-line alias, a value with a comment).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// The whole file is `None`.
    Strict,
    /// The line is skipped; a continuation is joined to the next line, as git joins it.
    Lenient,
}

fn parse(text: &str, how: Reading) -> Option<Vec<Entry>> {
    let mut out = Vec::new();
    let mut section = String::new();
    let mut subsection = None;
    for line in logical_lines(text, how)? {
        let mut t = line.trim();
        if let Some(head) = t.strip_prefix('[') {
            match head
                .split_once(']')
                .and_then(|(n, rest)| Some((header(n)?, rest)))
            {
                Some(((sec, sub), rest)) => {
                    (section, subsection) = (sec, sub);
                    t = rest.trim();
                }
                None if how == Reading::Lenient => {
                    // What follows belongs to no section this can name.
                    (section, subsection) = (String::new(), None);
                    continue;
                }
                None => return None,
            }
        }
        if t.is_empty() || t.starts_with(['#', ';']) {
            continue;
        }
        let (key, raw) = t.split_once('=').map_or((t, None), |(k, v)| (k, Some(v)));
        let key = key.trim();
        let value = match raw {
            Some(raw) => value(raw),
            None => Some("true".to_string()),
        };
        let good = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
        match value {
            Some(value) if good => out.push(Entry {
                section: section.clone(),
                subsection: subsection.clone(),
                key: key.to_ascii_lowercase(),
                value,
            }),
            _ if how == Reading::Lenient => {}
            _ => return None,
        }
    }
    Some(out)
}

/// The file's lines, a line ending in a backslash joined to the next under
/// [`Reading::Lenient`] (git continues a value there); `None` for one under strict reading.
fn logical_lines(text: &str, how: Reading) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut pending = String::new();
    for line in text.lines() {
        let line = line.trim_end();
        // An even run of backslashes is escaped backslashes, not a continuation.
        let odd = line.bytes().rev().take_while(|b| *b == b'\\').count() % 2 == 1;
        match line.strip_suffix('\\').filter(|_| odd) {
            Some(_) if how == Reading::Strict => return None,
            Some(head) => pending.push_str(head),
            None => {
                pending.push_str(line);
                out.push(std::mem::take(&mut pending));
            }
        }
    }
    if !pending.is_empty() {
        out.push(pending);
    }
    Some(out)
}

/// A value as git reads it: quotes removed, `\\`, `\"`, `\n`, `\t`, `\b` unescaped, a `#` or
/// `;` outside quotes starting a comment, whitespace around it trimmed; `None` for an escape
/// git refuses or an open quote.
fn value(raw: &str) -> Option<String> {
    let mut out = String::new();
    let mut quoted = false;
    // Unquoted whitespace is kept only when more of the value follows it.
    let mut space = String::new();
    let mut chars = raw.trim_start().chars();
    while let Some(c) = chars.next() {
        match c {
            '#' | ';' if !quoted => break,
            c if c.is_whitespace() && !quoted => space.push(c),
            '"' => {
                out.push_str(&std::mem::take(&mut space));
                quoted = !quoted;
            }
            '\\' => {
                out.push_str(&std::mem::take(&mut space));
                out.push(match chars.next()? {
                    'n' => '\n',
                    't' => '\t',
                    'b' => '\u{8}',
                    c @ ('\\' | '"') => c,
                    _ => return None,
                });
            }
            c => {
                out.push_str(&std::mem::take(&mut space));
                out.push(c);
            }
        }
    }
    (!quoted).then_some(out)
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
/// `git submodule` and `git worktree` write and that run nothing. `core.worktree` runs
/// nothing but says where git writes: callers judge its value.
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

/// The last value of `section.key` (both lower case) in a config text, lines not understood
/// skipped: what git takes for a single-valued key such as `core.worktree`.
pub fn last_value(text: &str, section: &str, key: &str) -> Option<String> {
    parse(text, Reading::Lenient)?
        .into_iter()
        .rev()
        .find(|e| e.section == section && e.key == key)
        .map(|e| e.value)
}

/// git's limit on includes within includes.
const INCLUDE_DEPTH: usize = 10;

/// At most this many files are read for one chain: a fan of includes ends here.
const CHAIN_FILES: usize = 64;

/// What the config files git reads for one repository name: the files they include and the
/// `core.hooksPath` values they set. Every `include` and `includeIf` counts, whatever its
/// condition: which branch or remote a later git command will see is not known here.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Chain {
    /// Each path an include names, resolved, whether or not a file is there (a command may
    /// make one), in the order git reads them.
    pub included: Vec<std::path::PathBuf>,
    /// Each `core.hooksPath` value, as written. git uses the last; every one is given, since
    /// a value git does not use now becomes the one it uses when a later one goes.
    pub hooks_paths: Vec<String>,
}

/// The [`Chain`] of the config files `start`, in git's order. `read` gives a file's text,
/// `None` when there is none; `home` resolves `~/` in include paths (without one, such
/// includes are left out).
pub fn chain(
    start: &[std::path::PathBuf],
    home: Option<&std::path::Path>,
    mut read: impl FnMut(&std::path::Path) -> Option<String>,
) -> Chain {
    let mut out = Chain::default();
    let mut files = 0;
    for file in start {
        follow(file, 0, home, &mut read, &mut files, &mut out);
    }
    out
}

fn follow(
    file: &std::path::Path,
    depth: usize,
    home: Option<&std::path::Path>,
    read: &mut impl FnMut(&std::path::Path) -> Option<String>,
    files: &mut usize,
    out: &mut Chain,
) {
    if depth > INCLUDE_DEPTH || *files >= CHAIN_FILES {
        return;
    }
    let Some(text) = read(file) else {
        return;
    };
    *files += 1;
    for e in parse(&text, Reading::Lenient).unwrap_or_default() {
        match (e.section.as_str(), e.key.as_str()) {
            ("core", "hookspath") => out.hooks_paths.push(e.value),
            ("include" | "includeif", "path") => {
                let Some(path) = include_path(&e.value, file, home) else {
                    continue;
                };
                out.included.push(path.clone());
                follow(&path, depth + 1, home, read, files, out);
            }
            _ => {}
        }
    }
}

/// Where an include's `path` leads: relative to the including file's directory, `~/` to the
/// home; `None` for another user's home or an empty path.
fn include_path(
    value: &str,
    file: &std::path::Path,
    home: Option<&std::path::Path>,
) -> Option<std::path::PathBuf> {
    if let Some(rest) = value.strip_prefix("~/") {
        return home.map(|h| h.join(rest));
    }
    if value.is_empty() || value.starts_with('~') {
        return None;
    }
    Some(file.parent()?.join(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_is_plain(text: &str) -> bool {
        entries(text).is_some_and(|es| es.iter().all(is_plain))
    }

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
    fn hooks_paths_and_includes_are_followed_in_every_spelling() {
        use std::path::{Path, PathBuf};
        let files: std::collections::HashMap<&str, &str> = [
            (
                "/r/.git/config",
                "[core] hooksPath = .githooks # set by hand\n[include]\n\tpath = ../conf/a\n[includeIf \"onbranch:x\"]\npath=~/b\n",
            ),
            ("/r/conf/a", "[alias]\n\tx = \"!f() { \\\n\t echo; }; f\"\n[CORE]\n\tHOOKSPATH = \"x y\"\n[include]\n\tpath = /abs/c\n"),
            ("/home/u/b", "[include]\n\tpath = ~other/d\n"),
            ("/abs/c", "[include]\n\tpath = c\n"),
        ]
        .into_iter()
        .collect();
        // As the kernel reads a path: `..` taken.
        let read = |p: &Path| {
            let p = crate::profile::normalize(p);
            files.get(p.to_str()?).map(|t| t.to_string())
        };
        let got = chain(
            &[
                PathBuf::from("/r/.git/config"),
                PathBuf::from("/r/.git/config.worktree"),
            ],
            Some(Path::new("/home/u")),
            read,
        );
        assert_eq!(got.hooks_paths, [".githooks", "x y"]);
        // `/abs/c` includes itself: followed to git's depth, named each time.
        let mut want: Vec<PathBuf> = ["/r/.git/../conf/a", "/abs/c"]
            .into_iter()
            .map(PathBuf::from)
            .collect();
        want.extend((0..INCLUDE_DEPTH - 1).map(|_| PathBuf::from("/abs/c")));
        want.push(PathBuf::from("/home/u/b"));
        assert_eq!(got.included, want);
        // Without a home, `~/` includes are left out.
        assert!(
            !chain(&[PathBuf::from("/r/.git/config")], None, read)
                .included
                .contains(&PathBuf::from("/home/u/b"))
        );
    }

    #[test]
    fn values_are_read_as_git_reads_them() {
        assert_eq!(value(" a b  # c").as_deref(), Some("a b"));
        assert_eq!(value(" \"a # b\" ; c").as_deref(), Some("a # b"));
        assert_eq!(value(r#"a\"b\\c"#).as_deref(), Some("a\"b\\c"));
        assert_eq!(value("\"open"), None);
        assert_eq!(value(r"bad\q"), None);
        // A continuation hides nothing under lenient reading, and is not plain.
        assert!(!text_is_plain("[user]\n\tname = a\\\n b\n"));
        let lenient = parse(
            "[user]\n\tname = a\\\n b\n[core]\n\thooksPath = h\n",
            Reading::Lenient,
        );
        assert_eq!(lenient.unwrap_or_default().len(), 2);
        // Two backslashes are one, escaped.
        assert!(text_is_plain("[user]\n\tname = a\\\\\n"));
    }
}
