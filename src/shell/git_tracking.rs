//! Branch commands that record an upstream (`branch.NAME.remote` and `.merge`) in the
//! repository's `config`, which the shipped profiles keep read-only: git then creates the
//! branch, fails to write the upstream and still exits 0 (`error: could not write config
//! file`). Recorded as a write of that file, so the plan refuses them rather than asking.
//!
//! As git decides (git-branch(1), git-checkout(1), git-switch(1), git-worktree(1)): `--track`
//! always records one and `--no-track` never does, the later of the two winning; otherwise
//! `branch.autoSetupMerge` (default `true`) records one when the new branch starts from a
//! remote-tracking branch (`always`: a local branch too; `inherit`: a start point that has an
//! upstream; `simple`: a remote branch of the new branch's own name). `git checkout NAME`,
//! `git switch NAME` and `git worktree add PATH NAME`, where `NAME` is no ref but some
//! remote's branch, create a tracking branch (`checkout.guess`; `worktree.guessRemote` for
//! `git worktree add PATH` alone). The refs are read from the repository
//! ([`super::git_refs`]); a start point or a repository whose refs cannot be known before
//! running is taken to record one, so that nothing the kernel refuses is let through.

use super::git_refs::{AutoSetup, Repo, Settings};
use super::walk::Cwd;
use super::words::Word;
use std::path::Path;

/// Why `git NAME REST` writes a branch's upstream into the repository's `config`, or `None`.
/// `cli` holds the values of `git -c`.
pub(crate) fn upstream_write(
    name: &str,
    rest: &[Word],
    dirs: &Cwd,
    cli: &[&Word],
    home: &Path,
) -> Option<&'static str> {
    let created = match name {
        "checkout" | "switch" => switched(name, rest),
        "branch" => branched(rest),
        "worktree" => worktree_added(rest),
        _ => None,
    }?;
    match created.track {
        Some(true) => return Some(EXPLICIT),
        Some(false) => return None,
        None => {}
    }
    // A repository not known before running: its upstream write is judged as unknown.
    let Some(dirs) = dirs else {
        return Some(UNKNOWN);
    };
    dirs.iter().find_map(|d| match Repo::find(d) {
        None => None,
        Some(Err(())) => Some(UNKNOWN),
        Some(Ok(repo)) => {
            let settings = Settings::read(Some(&repo), home, cli);
            records(&created, &repo, &settings)
        }
    })
}

const EXPLICIT: &str = "the new branch's upstream (`--track`)";
const REMOTE: &str = "the new branch's upstream: it starts from a remote-tracking branch and \
                      `branch.autoSetupMerge` is on; `--no-track` leaves it out";
const GUESSED: &str = "the upstream of the branch it makes from the remote branch of that name; \
                       `-b NAME --no-track REMOTE/NAME` leaves it out";
const LOCAL: &str = "the new branch's upstream (`branch.autoSetupMerge` is `always` or \
                     `inherit`); `--no-track` leaves it out";
const UNKNOWN: &str = "the new branch's upstream, unless its start point is known before \
                       running not to be a remote-tracking branch; `--no-track` leaves it out";

/// A branch a command creates, as far as its words tell.
struct Created<'a> {
    /// `--track` (`Some(true)`) or `--no-track`, the later one given.
    track: Option<bool>,
    /// The new branch's name, when the command names it.
    new: Option<&'a str>,
    start: Start<'a>,
}

enum Start<'a> {
    /// Where `HEAD` is.
    Head,
    /// A start point given by name.
    Named(&'a Word),
    /// A name that may be no ref yet: git then makes the branch from a remote's branch of
    /// that name, always (`git worktree add PATH NAME`) or as `checkout.guess` says.
    Guess { name: &'a Word, always: bool },
    /// `git worktree add PATH`: a branch named as the path's last component, from `HEAD`, or,
    /// with `--guess-remote` or `worktree.guessRemote`, from a remote's branch of that name.
    Basename { path: &'a Word, guess: Option<bool> },
}

/// Whether the branch `c` describes records an upstream.
fn records(c: &Created<'_>, repo: &Repo, s: &Settings) -> Option<&'static str> {
    if s.auto == AutoSetup::Off {
        return None;
    }
    match c.start {
        Start::Head => local(repo.head_branch().as_deref(), s),
        Start::Guess { name, always } if name.exact => {
            guessed(&name.value, always || s.guess, repo)
        }
        Start::Basename { path, guess } if path.exact => {
            let name = path
                .value
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or("");
            match guessed(name, guess.unwrap_or(s.guess_remote), repo) {
                Some(why) => Some(why),
                None if repo.has(&format!("refs/heads/{name}")) == Some(true) => None,
                None => local(repo.head_branch().as_deref(), s),
            }
        }
        Start::Guess { .. } | Start::Basename { .. } => Some(UNKNOWN),
        Start::Named(w) => named(w, c.new, repo, s),
    }
}

/// A name git turns into a new tracking branch when it is no ref but a remote's branch.
fn guessed(name: &str, enabled: bool, repo: &Repo) -> Option<&'static str> {
    match (repo.resolve(name), repo.remote_has(name)) {
        (Err(()), _) | (_, None) => Some(UNKNOWN),
        (Ok(Some(_)), _) | (Ok(None), Some(false)) => None,
        (Ok(None), Some(true)) => enabled.then_some(GUESSED),
    }
}

/// A new branch started from the local branch `branch` (`None`: a detached `HEAD`).
fn local(branch: Option<&str>, s: &Settings) -> Option<&'static str> {
    match (s.auto, branch) {
        (AutoSetup::Always, Some(_)) => Some(LOCAL),
        (AutoSetup::Inherit, Some(b)) if s.tracks(b) => Some(LOCAL),
        _ => None,
    }
}

/// A new branch started from the local branch checked out before (`-`, `@{-N}`), which the
/// files do not name.
fn previous(s: &Settings) -> Option<&'static str> {
    match s.auto {
        AutoSetup::Always => Some(LOCAL),
        AutoSetup::Inherit => Some(UNKNOWN),
        AutoSetup::Remote | AutoSetup::Simple | AutoSetup::Off => None,
    }
}

/// A new branch started from the point `w` names.
fn named(w: &Word, new: Option<&str>, repo: &Repo, s: &Settings) -> Option<&'static str> {
    if !w.exact {
        return Some(UNKNOWN);
    }
    let v = w.value.as_str();
    if let Some((base, suffix)) = v.split_once("@{") {
        return match suffix.trim_end_matches('}').to_ascii_lowercase().as_str() {
            // The upstream or push target of a branch: a remote-tracking branch, which has no
            // upstream of its own for `inherit` to copy.
            "u" | "upstream" | "push" => (s.auto != AutoSetup::Inherit).then_some(REMOTE),
            n if n.starts_with('-') && base.is_empty() => previous(s),
            // A reflog entry: a commit.
            _ => None,
        };
    }
    match v {
        "-" => return previous(s),
        "HEAD" => return local(repo.head_branch().as_deref(), s),
        // A revision expression (`x~1`, `x^0`, `a..b`, `x:path`) names a commit.
        _ if v.contains(['~', '^', ':']) || v.contains("..") => return None,
        _ => {}
    }
    let Ok(full) = repo.resolve(v) else {
        return Some(UNKNOWN);
    };
    let full = full?;
    if let Some(branch) = full.strip_prefix("refs/heads/") {
        return local(Some(branch), s);
    }
    let remote_branch = full.strip_prefix("refs/remotes/")?;
    match s.auto {
        AutoSetup::Remote | AutoSetup::Always => Some(REMOTE),
        AutoSetup::Simple => {
            let tail = remote_branch.split_once('/').map_or("", |(_, b)| b);
            (new == Some(tail)).then_some(REMOTE)
        }
        AutoSetup::Inherit | AutoSetup::Off => None,
    }
}

/// A subcommand's words as git's option parser splits them.
struct Parsed<'a> {
    /// Options as `-x` or `--long`, each with its value when it takes one.
    opts: Vec<(String, Option<&'a str>)>,
    /// Operands, in order; `dashdash` is how many came before `--`.
    operands: Vec<&'a Word>,
    dashdash: Option<usize>,
}

/// The options of one subcommand: short ones that take a value (the rest of the bundle or the
/// next word), short ones whose value can only be attached (`-t`), long ones with a value.
struct Spec {
    valued: &'static [char],
    attached: &'static [char],
    long_valued: &'static [&'static str],
}

impl<'a> Parsed<'a> {
    fn of(rest: &'a [Word], spec: &Spec) -> Parsed<'a> {
        let mut p = Parsed {
            opts: Vec::new(),
            operands: Vec::new(),
            dashdash: None,
        };
        let mut words = rest.iter();
        while let Some(w) = words.next() {
            let v = w.value.as_str();
            if p.dashdash.is_some() || v == "-" || !v.starts_with('-') {
                p.operands.push(w);
            } else if v == "--" {
                p.dashdash = Some(p.operands.len());
            } else if let Some(long) = v.strip_prefix("--") {
                let (name, value) = long
                    .split_once('=')
                    .map_or((long, None), |(n, v)| (n, Some(v)));
                let name = format!("--{name}");
                let value = match value {
                    None if spec.long_valued.contains(&name.as_str()) => {
                        words.next().map(|n| n.value.as_str())
                    }
                    v => v,
                };
                p.opts.push((name, value));
            } else {
                p.shorts(&v[1..], spec, &mut words);
            }
        }
        p
    }

    /// A bundle of short options (`-fb`, `-bNAME`).
    fn shorts(&mut self, bundle: &'a str, spec: &Spec, words: &mut std::slice::Iter<'a, Word>) {
        for (i, ch) in bundle.char_indices() {
            let tail = &bundle[i + ch.len_utf8()..];
            if spec.valued.contains(&ch) {
                let value = if tail.is_empty() {
                    words.next().map(|n| n.value.as_str())
                } else {
                    Some(tail)
                };
                self.opts.push((format!("-{ch}"), value));
                return;
            }
            if spec.attached.contains(&ch) {
                self.opts
                    .push((format!("-{ch}"), (!tail.is_empty()).then_some(tail)));
                return;
            }
            self.opts.push((format!("-{ch}"), None));
        }
    }

    /// One of `names` was given (a long name also by a prefix of at least two letters, as
    /// git accepts it).
    fn has(&self, names: &[&str]) -> bool {
        self.opts
            .iter()
            .any(|(o, _)| names.iter().any(|n| same(o, n)))
    }

    /// The value of the last of `names` given.
    fn value(&self, names: &[&str]) -> Option<&'a str> {
        self.opts
            .iter()
            .rev()
            .find(|(o, _)| names.iter().any(|n| same(o, n)))
            .and_then(|(_, v)| *v)
    }

    /// `--track` or `--no-track`, the later one.
    fn track(&self) -> Option<bool> {
        self.opts.iter().rev().find_map(|(o, _)| {
            if same(o, "--no-track") {
                Some(false)
            } else if o == "-t" || same(o, "--track") {
                Some(true)
            } else {
                None
            }
        })
    }
}

/// An option as given is `full`, or a prefix of a long one git would take for it.
fn same(given: &str, full: &str) -> bool {
    given == full || (given.starts_with("--") && given.len() >= 4 && full.starts_with(given))
}

/// The options of `git checkout` (`checkout`) or `git switch`.
fn switch_spec(checkout: bool) -> Spec {
    Spec {
        valued: if checkout { &['b', 'B'] } else { &['c', 'C'] },
        attached: &['t'],
        long_valued: &["--orphan", "--create", "--force-create", "--conflict"],
    }
}

/// How many operands `git checkout REST` has, not counting the values of its options (the
/// new branch of `-b NAME`): two or more name paths.
pub(crate) fn checkout_operands(rest: &[Word]) -> usize {
    Parsed::of(rest, &switch_spec(true)).operands.len()
}

/// `git checkout` and `git switch`.
fn switched<'a>(name: &str, rest: &'a [Word]) -> Option<Created<'a>> {
    let checkout = name == "checkout";
    let p = Parsed::of(rest, &switch_spec(checkout));
    let new_opts: &[&str] = if checkout {
        &["-b", "-B"]
    } else {
        &["-c", "-C", "--create", "--force-create"]
    };
    if p.has(&["--orphan", "-d", "--detach", "-p", "--patch"]) {
        return None;
    }
    let track = p.track();
    let first = p.operands.first().copied();
    if p.has(new_opts) {
        return Some(Created {
            track,
            new: p.value(new_opts),
            start: first.map_or(Start::Head, Start::Named),
        });
    }
    let first = first?;
    if track == Some(true) {
        return Some(Created {
            track,
            new: None,
            start: Start::Named(first),
        });
    }
    // Only `git checkout NAME` (or `NAME --`) and `git switch NAME` guess.
    let lone = p.operands.len() == 1 && p.dashdash.is_none_or(|n| n == 1);
    (lone && !p.has(&["--no-guess"])).then_some(Created {
        track,
        new: None,
        start: Start::Guess {
            name: first,
            always: p.has(&["--guess"]),
        },
    })
}

/// `git branch NEW [START]`, and `-f` to move one; listing, deleting, renaming and upstream
/// changes create nothing here.
fn branched(rest: &[Word]) -> Option<Created<'_>> {
    let spec = Spec {
        valued: &['u'],
        attached: &['t'],
        long_valued: &[
            "--set-upstream-to",
            "--contains",
            "--no-contains",
            "--merged",
            "--no-merged",
            "--points-at",
            "--sort",
            "--format",
        ],
    };
    let p = Parsed::of(rest, &spec);
    if p.has(BRANCH_OTHER_MODES) {
        return None;
    }
    let new = p.operands.first()?;
    Some(Created {
        track: p.track(),
        new: Some(new.value.as_str()),
        start: p.operands.get(1).map_or(Start::Head, |w| Start::Named(w)),
    })
}

/// `git branch` options that list, delete, rename or copy branches or change an upstream.
const BRANCH_OTHER_MODES: &[&str] = &[
    "-l",
    "--list",
    "-a",
    "--all",
    "-r",
    "--remotes",
    "-d",
    "-D",
    "--delete",
    "-m",
    "-M",
    "--move",
    "-c",
    "-C",
    "--copy",
    "-u",
    "--set-upstream-to",
    "--unset-upstream",
    "--edit-description",
    "--show-current",
    "-v",
    "--verbose",
    "--contains",
    "--no-contains",
    "--merged",
    "--no-merged",
    "--points-at",
    "--format",
];

/// `git worktree add [-b NEW] PATH [COMMIT]`.
fn worktree_added(rest: &[Word]) -> Option<Created<'_>> {
    let spec = Spec {
        valued: &['b', 'B'],
        attached: &[],
        long_valued: &["--reason", "--orphan"],
    };
    let p = Parsed::of(rest, &spec);
    let (verb, path, commit) = (p.operands.first()?, p.operands.get(1)?, p.operands.get(2));
    if verb.value != "add" || p.has(&["-d", "--detach", "--orphan"]) {
        return None;
    }
    let new = p.value(&["-b", "-B"]);
    let start = match (new.is_some() || p.has(&["-b", "-B"]), commit) {
        (true, Some(c)) => Start::Named(c),
        (true, None) => Start::Head,
        (false, Some(c)) => Start::Guess {
            name: c,
            always: true,
        },
        (false, None) => Start::Basename {
            path,
            guess: guess_remote(&p),
        },
    };
    Some(Created {
        track: p.track(),
        new,
        start,
    })
}

/// `--guess-remote` or `--no-guess-remote`, the later one.
fn guess_remote(p: &Parsed<'_>) -> Option<bool> {
    p.opts.iter().rev().find_map(|(o, _)| {
        if same(o, "--no-guess-remote") {
            Some(false)
        } else if same(o, "--guess-remote") {
            Some(true)
        } else {
            None
        }
    })
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "test")]
    use crate::shell::{Decision, ShellContext, analyze};
    use crate::workspace::WorkspaceContext;
    use std::path::Path;

    /// A repository laid out as git leaves it: `main` checked out with `origin/main` as its
    /// upstream, a local `localb`, remote branches `origin/feat` (loose) and `origin/packed`
    /// (in `packed-refs`), `origin/HEAD`, a tag `v1`.
    fn repo(ws: &Path, config_extra: &str) {
        let git = ws.join(".git");
        for d in ["refs/heads", "refs/remotes/origin", "refs/tags", "objects"] {
            std::fs::create_dir_all(git.join(d)).unwrap();
        }
        let oid = "c3c3cdc0000000000000000000000000000000000\n";
        for r in [
            "heads/main",
            "heads/localb",
            "remotes/origin/main",
            "remotes/origin/feat",
        ] {
            std::fs::write(git.join("refs").join(r), oid).unwrap();
        }
        std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        let origin_head = "ref: refs/remotes/origin/main\n";
        std::fs::write(git.join("refs/remotes/origin/HEAD"), origin_head).unwrap();
        std::fs::write(
            git.join("packed-refs"),
            "# pack-refs with: peeled fully-peeled sorted\n\
             c3c3cdc0000000000000000000000000000000000 refs/remotes/origin/packed\n\
             c3c3cdc0000000000000000000000000000000000 refs/tags/v1\n",
        )
        .unwrap();
        let config = "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = ./r.git\n\t\
                      fetch = +refs/heads/*:refs/remotes/origin/*\n\
                      [branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n";
        std::fs::write(git.join("config"), format!("{config}{config_extra}")).unwrap();
    }

    /// Whether `cmd` run at the workspace root records a write of `.git/config`, and its
    /// verdict.
    fn judged(config_extra: &str, cmd: &str) -> (bool, Decision) {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let (ws, home) = (base.join("ws"), base.join("home"));
        std::fs::create_dir_all(&home).unwrap();
        repo(&ws, config_extra);
        let context = WorkspaceContext::new(&ws, &home);
        let a = analyze(
            cmd,
            &ShellContext {
                cwd: ws.clone(),
                workspace: &context,
            },
        );
        let config = ws.join(".git/config");
        let writes = a.segments.iter().any(|s| s.writes.contains(&config));
        (writes, a.verdict)
    }

    fn writes(cmd: &str) -> bool {
        judged("", cmd).0
    }

    #[test]
    fn a_branch_started_from_a_remote_branch_records_its_upstream() {
        for cmd in [
            "git checkout -b x origin/feat",
            "git checkout -bx origin/feat",
            "git checkout -B localb origin/feat",
            "git switch -c x origin/feat",
            "git switch --create x origin/packed",
            "git switch -C main origin/feat",
            "git branch x origin/feat",
            "git branch -f localb origin/feat",
            "git branch x remotes/origin/feat",
            "git checkout -b x refs/remotes/origin/feat",
            "git checkout -b x origin",
            "git checkout -b x @{u}",
            "git checkout -b x main@{upstream}",
            "git worktree add -b x ../wt origin/feat",
            "git checkout -b x --no-track --track origin/feat",
            "git -C . checkout -b x origin/feat",
        ] {
            assert!(writes(cmd), "{cmd}");
            assert_eq!(judged("", cmd).1, Decision::Deny, "{cmd}");
        }
    }

    #[test]
    fn a_name_only_a_remote_has_becomes_a_tracking_branch() {
        for cmd in [
            "git checkout feat",
            "git checkout feat --",
            "git checkout packed",
            "git switch feat",
            "git switch --guess feat",
            "git worktree add ../wt feat",
            "git worktree add --guess-remote feat",
            "git worktree add --guess-remote ../x/feat/",
        ] {
            assert!(writes(cmd), "{cmd}");
        }
        // Its twins: a local branch, a tag, a remote branch checked out detached, guessing off,
        // a name no remote has, a path.
        for cmd in [
            "git checkout localb",
            "git checkout main",
            "git switch localb",
            "git checkout v1",
            "git checkout origin/feat",
            "git checkout --no-guess feat",
            "git switch --no-guess feat",
            "git -c checkout.guess=false checkout feat",
            "git checkout nosuch",
            "git checkout feat -- src",
            "git worktree add ../wt localb",
            "git worktree add ../wt origin/feat",
            "git worktree add feat",
            "git worktree add --detach ../wt feat",
        ] {
            assert!(!writes(cmd), "{cmd}");
        }
        let guess = "[worktree]\n\tguessRemote = true\n";
        assert!(judged(guess, "git worktree add feat").0);
        assert!(!judged(guess, "git worktree add --no-guess-remote feat").0);
        let no_guess = "[checkout]\n\tguess = false\n";
        assert!(!judged(no_guess, "git switch feat").0);
    }

    #[test]
    fn no_upstream_without_a_remote_start_point_or_with_no_track() {
        for cmd in [
            "git checkout -b topic",
            "git checkout -btopic",
            "git checkout -b x main",
            "git checkout -b x HEAD",
            "git checkout -b x origin/feat~0",
            "git checkout -b x v1",
            "git checkout -b x --no-track origin/feat",
            "git checkout --no-track -b x origin/feat",
            "git switch -c x --no-track origin/feat",
            "git switch --orphan x",
            "git checkout --orphan x origin/feat",
            "git checkout --detach origin/feat",
            "git switch --detach origin/feat",
            "git branch x",
            "git branch x main",
            "git branch --no-track x origin/feat",
            "git branch -a",
            "git branch -vv",
            "git branch --list 'origin/*'",
            "git branch --contains origin/feat",
            "git branch -d localb",
            "git worktree add ../wt",
            "git worktree add -b x ../wt",
            "git worktree add --no-track -b x ../wt origin/feat",
            "git worktree list",
            "git -c branch.autoSetupMerge=false checkout -b x origin/feat",
        ] {
            assert!(!writes(cmd), "{cmd}");
        }
    }

    #[test]
    fn branch_auto_setup_merge_is_read_from_the_repository_and_the_command_line() {
        let always = "[branch]\n\tautoSetupMerge = always\n";
        assert!(judged(always, "git checkout -b x").0);
        assert!(judged(always, "git branch x localb").0);
        assert!(!judged(always, "git checkout -b x origin/feat~0").0);
        let off = "[branch]\n\tautosetupmerge = false\n";
        assert!(!judged(off, "git checkout -b x origin/feat").0);
        assert!(!judged(off, "git checkout feat").0);
        assert!(judged(off, "git checkout --track origin/feat").0);
        let inherit = "[branch]\n\tautoSetupMerge = inherit\n";
        assert!(judged(inherit, "git checkout -b x main").0, "main has one");
        assert!(
            !judged(inherit, "git checkout -b x localb").0,
            "localb has none"
        );
        assert!(!judged(inherit, "git checkout -b x origin/feat").0);
        let simple = "[branch]\n\tautoSetupMerge = simple\n";
        assert!(judged(simple, "git checkout -b feat origin/feat").0);
        assert!(!judged(simple, "git checkout -b other origin/feat").0);
        assert!(judged("", "git -c branch.autoSetupMerge=always checkout -b x").0);
        assert!(!judged(always, "git -c branch.autoSetupMerge=true checkout -b x").0);
    }

    #[test]
    fn what_cannot_be_known_before_running_is_taken_to_record_an_upstream() {
        for cmd in [
            "git checkout -b x \"$START\"",
            "git checkout -b x $(git rev-parse --abbrev-ref @{u})",
            "git switch \"$B\"",
        ] {
            assert!(writes(cmd), "{cmd}");
        }
        // Refs in the reftable format are not read.
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let ws = base.join("ws");
        repo(&ws, "");
        std::fs::create_dir_all(ws.join(".git/reftable")).unwrap();
        let context = WorkspaceContext::new(&ws, base.join("home"));
        let ctx = ShellContext {
            cwd: ws.clone(),
            workspace: &context,
        };
        assert_eq!(analyze("git checkout main", &ctx).verdict, Decision::Deny);
        assert_eq!(
            analyze("git checkout --no-guess main", &ctx).verdict,
            Decision::Allow
        );
    }

    #[test]
    fn renaming_or_copying_a_branch_rewrites_its_section() {
        for cmd in [
            "git branch -m localb x",
            "git branch -M x",
            "git branch -c localb x",
        ] {
            assert!(writes(cmd), "{cmd}");
        }
    }

    #[test]
    fn a_linked_work_tree_reads_the_common_refs() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let ws = base.join("ws");
        repo(&ws, "");
        let wt_git = ws.join(".git/worktrees/wt");
        std::fs::create_dir_all(&wt_git).unwrap();
        std::fs::write(wt_git.join("HEAD"), "ref: refs/heads/localb\n").unwrap();
        std::fs::write(wt_git.join("commondir"), "../..\n").unwrap();
        let wt = ws.join("wt");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(wt.join(".git"), format!("gitdir: {}\n", wt_git.display())).unwrap();
        let context = WorkspaceContext::new(&ws, base.join("home"));
        let ctx = ShellContext {
            cwd: wt.clone(),
            workspace: &context,
        };
        let a = analyze("git checkout feat", &ctx);
        assert!(
            a.segments[0].writes.contains(&ws.join(".git/config"))
                || a.segments[0].writes.contains(&wt.join(".git/config")),
            "{:?}",
            a.segments[0]
        );
        // The work tree is written, no configuration.
        assert!(
            analyze("git checkout localb", &ctx).segments[0]
                .writes
                .iter()
                .all(|p| !p.ends_with("config"))
        );
    }
}
