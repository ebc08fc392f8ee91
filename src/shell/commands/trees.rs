//! Commands that read whole directory trees, per family, and which of their operands are the
//! roots. Run unsandboxed, such a command reads everything beneath its roots, including what
//! the profile hides; the gate compares the roots with the plan (see `sandbox_refusal`).

use super::operands;
use crate::shell::tree_links::{Listed, NameTest};
use crate::shell::words::Word;

/// The roots a recursive reader walks, or `None` when the command does not recurse.
/// `Some(roots)` with `cwd_too` set means the working directory is walked as well (no
/// directory operand beyond a search pattern). Operands are over-approximated: a search
/// pattern or an option's value counted as a root only ever adds a path.
pub(crate) struct Roots<'a> {
    pub roots: Vec<&'a Word>,
    pub cwd_too: bool,
}

fn flag(args: &[Word], short: &[char], long: &[&str]) -> bool {
    args.iter().any(|a| {
        let v = a.value.as_str();
        long.contains(&v)
            || (v.starts_with('-')
                && !v.starts_with("--")
                && v.chars().skip(1).any(|c| short.contains(&c)))
    })
}

/// Searchers: the first operand may be the pattern, so one operand or none walks the cwd.
fn searcher(ops: Vec<&Word>) -> Roots<'_> {
    let cwd_too = ops.len() <= 1;
    Roots {
        roots: ops,
        cwd_too,
    }
}

/// Walkers: their operands are the roots, none walks the cwd.
fn walker(ops: Vec<&Word>) -> Roots<'_> {
    let cwd_too = ops.is_empty();
    Roots {
        roots: ops,
        cwd_too,
    }
}

/// Copiers: every operand but the destination is a source tree.
fn sources(args: &[Word]) -> Roots<'_> {
    let mut ops = operands(args);
    if !flag(args, &['t'], &["--target-directory"]) {
        ops.pop();
    }
    Roots {
        roots: ops,
        cwd_too: false,
    }
}

pub(crate) fn tree_roots<'a>(name: &str, args: &'a [Word]) -> Option<Roots<'a>> {
    let ops = || operands(args);
    Some(match name {
        "grep" | "egrep" | "fgrep"
            if flag(
                args,
                &['r', 'R'],
                &["--recursive", "--dereference-recursive"],
            ) =>
        {
            searcher(ops())
        }
        "rg" | "ag" | "ack" | "ack-grep" | "fd" | "fdfind" => searcher(ops()),
        "find" | "bfs" => walker(
            args.iter()
                .skip(crate::shell::exec_args::find_global_options(args))
                .take_while(|a| !a.value.starts_with('-') && a.value != "(" && a.value != "!")
                .collect(),
        ),
        "tree" | "du" => walker(ops()),
        "ls" | "dir" if flag(args, &['R'], &["--recursive"]) => walker(ops()),
        "diff" if flag(args, &['r'], &["--recursive"]) => walker(ops()),
        "cp" if flag(args, &['r', 'R', 'a'], &["--recursive", "--archive"]) => sources(args),
        "scp" if flag(args, &['r'], &[]) => sources(args),
        "rsync" => sources(args),
        "zip" if flag(args, &['r', 'R'], &["--recurse-paths"]) => {
            walker(ops().into_iter().skip(1).collect())
        }
        "7z" | "7za" | "7zr" if ops().first().is_some_and(|o| o.value == "a") => {
            walker(ops().into_iter().skip(2).collect())
        }
        "tar" | "gtar" | "bsdtar" if tar_creates(args) => {
            // A leading bundle without a dash (`tar czf`) is not a root.
            let bundle = args.first().is_some_and(|a| !a.value.starts_with('-'));
            Roots {
                roots: ops().into_iter().skip(usize::from(bundle)).collect(),
                cwd_too: false,
            }
        }
        "git" => {
            let grep = args.iter().position(|a| a.value == "grep")?;
            let rest = args.get(grep + 1..)?;
            if !rest.iter().any(|a| a.value == "--no-index") {
                return None;
            }
            searcher(operands(rest))
        }
        _ => return None,
    })
}

/// Whether a walker follows a symbolic link given as one of its roots (and walks what it
/// leads to) rather than taking the link itself, as `find` and `du` do unless told otherwise.
pub(crate) fn follows_root_links(name: &str, args: &[Word]) -> bool {
    match name {
        "du" | "ls" | "dir" | "vdir" => !acts_on_entries(name, args),
        _ => true,
    }
}

/// Programs that act on the names they are given, not on what a link there leads to: they
/// remove, rename or describe the link (`rm`, `mv`, `readlink`, `stat`, `du`, `ls -l`). Only
/// in forms whose options are all known not to follow it: GNU tools take abbreviated long
/// options and let a later format option undo `-l`, so any other option keeps the target.
pub(crate) fn acts_on_entries(name: &str, args: &[Word]) -> bool {
    let options = || {
        args.iter()
            .filter(|a| a.value.starts_with('-') && a.value != "-")
    };
    let only_short = |allowed: &str| {
        options().all(|a| {
            let v = a.value.as_str();
            !v.starts_with("--") && v.len() > 1 && v[1..].chars().all(|c| allowed.contains(c))
        })
    };
    match name {
        "rm" | "unlink" | "rmdir" => true,
        "mv" => only_short("fivnu"),
        "readlink" => options().count() == 0,
        "stat" => options().all(|a| matches!(a.value.as_str(), "-t" | "--terse")),
        "du" => only_short("ashckmb"),
        "ls" | "dir" | "vdir" => long_listing(name, args) && only_short("lagondAhstrSiF"),
        _ => false,
    }
}

/// Which symbolic links a listing by `name` may name. `find` with a `-type` test that
/// leaves links out (`-type f`, `-type d,f`) names none, and one with `-name` or `-iname`
/// tests only links whose names pass them, unless the expression has an alternative or a
/// negation that could let others through; tests inside an `-exec` command are that
/// command's arguments, not find's. `git ls-files` names the links the index tracks, and with
/// `--others` any.
pub(crate) fn listed_links(name: &str, args: &[Word]) -> Listed {
    match name {
        "find" | "bfs" => find_listing(args),
        "git" if !flag(args, &['o'], &["--others"]) => Listed::Tracked,
        _ => Listed::Named(Vec::new()),
    }
}

fn find_listing(args: &[Word]) -> Listed {
    let mut expr: Vec<&str> = Vec::new();
    let mut inner = false;
    for a in args {
        let v = a.value.as_str();
        if inner {
            inner = v != ";" && v != "+";
        } else if matches!(v, "-exec" | "-execdir" | "-ok" | "-okdir") {
            inner = true;
        } else {
            expr.push(v);
        }
    }
    if expr
        .iter()
        .any(|v| matches!(*v, "-o" | "-or" | "," | "!" | "-not"))
    {
        return Listed::Named(Vec::new());
    }
    let follows = expr.iter().any(|v| matches!(*v, "-L" | "-follow"));
    let mut tests = Vec::new();
    for p in expr.windows(2) {
        match p {
            // With `-L` a link counts as what it leads to.
            ["-type", t] if !t.contains('l') && !follows => return Listed::Nothing,
            ["-name", n] => tests.push(NameTest::new(n, false)),
            ["-iname", n] => tests.push(NameTest::new(n, true)),
            _ => {}
        }
    }
    Listed::Named(tests)
}

/// `ls` in a form that shows a link given to it as a link: a long listing or `-d`.
fn long_listing(name: &str, args: &[Word]) -> bool {
    name == "vdir" || flag(args, &['l', 'g', 'o', 'n', 'd'], &[])
}

/// The recursive reader follows symbolic links while it walks: a link inside the tree can
/// lead anywhere, hidden paths included, and finding out would mean walking the tree on every
/// decision. Called only for a command `tree_roots` says recurses.
pub(crate) fn follows_links(name: &str, args: &[Word]) -> bool {
    let f = |short: &[char], long: &[&str]| flag(args, short, long);
    match name {
        "grep" | "egrep" | "fgrep" => f(&['R'], &["--dereference-recursive"]),
        "rg" | "fd" | "fdfind" => f(&['L'], &["--follow"]),
        "ag" => f(&['f'], &["--follow"]),
        "ack" | "ack-grep" => f(&[], &["--follow"]),
        "find" | "bfs" => args.iter().any(|a| a.value == "-L" || a.value == "-follow"),
        "tree" => f(&['l'], &[]),
        "du" | "ls" | "dir" => f(&['L'], &["--dereference"]),
        "cp" => f(&['L'], &["--dereference"]),
        "rsync" => f(
            &['L', 'k'],
            &["--copy-links", "--copy-dirlinks", "--copy-unsafe-links"],
        ),
        // These follow links unless told not to.
        "diff" => !f(&[], &["--no-dereference"]),
        "scp" => true,
        "zip" => !f(&['y'], &["--symlinks"]),
        "7z" | "7za" | "7zr" => !args.iter().any(|a| a.value == "-snl"),
        "tar" | "gtar" | "bsdtar" => {
            let bundle = args
                .first()
                .is_some_and(|a| !a.value.starts_with('-') && a.value.contains('h'));
            // `--dereference` by any abbreviation GNU tar takes (`--dere` is the shortest),
            // and bsdtar's `-L`.
            let long = args
                .iter()
                .any(|a| a.value.len() >= 6 && "--dereference".starts_with(a.value.as_str()));
            let bsd = name == "bsdtar" && f(&['L'], &[]);
            bundle || long || bsd || f(&['h'], &["--dereference"])
        }
        _ => false,
    }
}

/// The command prints paths under roots this analysis checks, one per line: `find`, `fd`,
/// `rg --files`, `rg -l`, `grep -rl`, `git ls-files`, `git diff --name-only`.
pub(crate) fn lists_paths(name: &str, args: &[Word]) -> bool {
    let files = || {
        flag(
            args,
            &['l'],
            &["--files", "--files-with-matches", "--name-only"],
        )
    };
    match name {
        // What `-printf` prints is any text the format makes (`%P` drops the root, `%f` the
        // directories): no checked listing.
        "find" | "bfs" => !args
            .iter()
            .any(|a| matches!(a.value.as_str(), "-printf" | "-fprintf")),
        "fd" | "fdfind" => true,
        "rg" | "ag" | "ack" => files(),
        "grep" | "egrep" | "fgrep" => files() && tree_roots(name, args).is_some(),
        "git" => args
            .iter()
            .any(|a| matches!(a.value.as_str(), "ls-files" | "--name-only")),
        _ => false,
    }
}

/// `tar` in create or append mode (`tar c`, `tar -czf`, `tar --create`).
fn tar_creates(args: &[Word]) -> bool {
    let Some(first) = args.first() else {
        return false;
    };
    let mode = |v: &str| v.contains(['c', 'r', 'u']);
    // The first word may be a bundle without its dash (`tar czf`); any other short bundle
    // has one (`tar --dereference -czf`).
    let short = (!first.value.starts_with('-') && mode(&first.value))
        || args.iter().any(|a| {
            let v = a.value.as_str();
            v.starts_with('-') && !v.starts_with("--") && mode(v)
        });
    short
        || args.iter().any(|a| {
            matches!(
                a.value.as_str(),
                "--create" | "--append" | "--update" | "-c" | "-r" | "-u"
            )
        })
}
