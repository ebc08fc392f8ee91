//! `git`: global options that run code (`-c core.pager=...`), `-C DIR`,
//! and the subcommands sorted into inspection, workspace writes,
//! destructive and network.

use super::classify::Judge;
use super::exec_args::Ctx;
use super::git_config::{self, Scope};
use super::tables::git::{NETWORK, READ, REPOSITORY_ONLY, WRITE};
use super::walk::Cwd;
use super::words::Word;
use super::{Class, paths, tables};

pub(crate) fn classify(j: &mut Judge, c: &Ctx<'_, '_, '_>, args: &[Word]) {
    let (i, dirs, cli) = global_options(j, args);
    // Each `-C` is taken from the directory the one before it leads to.
    let cwd = dirs.iter().fold(c.cmd.cwd.clone(), |cwd, d| {
        super::commands::dir_from(d, &cwd, c.w.ctx)
    });
    super::git_repos::judge(j, c.w.ctx, &cwd);
    config_files(j, c, &cli, &cwd);
    let sub = Sub {
        name: args.get(i).map(|a| a.value.as_str()).unwrap_or(""),
        rest: args.get(i + 1..).unwrap_or(&[]),
        outside_dir: !dirs.is_empty() && outside(&cwd, c),
        dirs: &cwd,
        cli: &cli,
        c,
    };
    subcommand(j, &sub);
}

/// Global options before the subcommand: `-c` pairs are judged and returned, the `-C`
/// directories are returned in order, options that point git elsewhere raise. Returns the
/// subcommand's index first.
fn global_options<'w>(j: &mut Judge, args: &'w [Word]) -> (usize, Vec<&'w Word>, Vec<&'w Word>) {
    let mut i = 0;
    let mut dirs: Vec<&Word> = Vec::new();
    let mut cli: Vec<&Word> = Vec::new();
    while let Some(a) = args.get(i) {
        let v = a.value.as_str();
        match v {
            "-c" => {
                if let Some(kv) = args.get(i + 1) {
                    config_pair(j, kv, "git -c");
                    cli.push(kv);
                }
                i += 2;
            }
            "-C" => {
                dirs.extend(args.get(i + 1));
                i += 2;
            }
            "--namespace" => i += 2,
            "--git-dir" | "--work-tree" | "--exec-path" => {
                j.raise(
                    Class::Opaque,
                    format!(
                        "[shell.git.{}] `git {v}` points git elsewhere",
                        v.trim_start_matches('-')
                    ),
                );
                i += 2;
            }
            _ if v.starts_with("--git-dir=")
                || v.starts_with("--work-tree=")
                || v.starts_with("--exec-path=") =>
            {
                j.raise(
                    Class::Opaque,
                    "[shell.git.dir] git pointed at another repository or program directory",
                );
                i += 1;
            }
            _ if v.starts_with("--config-env") => {
                j.raise(
                    Class::Opaque,
                    "[shell.git.config-env] configuration from the environment",
                );
                i += 1;
            }
            _ if v.starts_with('-') => i += 1,
            _ => break,
        }
    }
    (i, dirs, cli)
}

/// `git -C DIR` leads outside the workspace, or to a directory not known before running.
fn outside(cwd: &crate::shell::walk::Cwd, c: &Ctx<'_, '_, '_>) -> bool {
    cwd.as_ref()
        .is_none_or(|ds| ds.iter().any(|d| !paths::inside(d, c.w.ctx)))
}

/// A subcommand with its arguments.
struct Sub<'a, 'x, 'y, 'z> {
    name: &'a str,
    rest: &'a [Word],
    /// `git -C` points outside the workspace.
    outside_dir: bool,
    /// Where git starts, after each `-C`.
    dirs: &'a crate::shell::walk::Cwd,
    /// The values of `git -c`, in order.
    cli: &'a [&'a Word],
    c: &'a Ctx<'x, 'y, 'z>,
}

impl Sub<'_, '_, '_, '_> {
    /// One of `flags` is among the arguments.
    fn has(&self, flags: &[&str]) -> bool {
        self.rest.iter().any(|a| flags.contains(&a.value.as_str()))
    }

    /// A bundle of short options holds `ch`.
    fn short(&self, ch: char) -> bool {
        self.rest
            .iter()
            .any(|a| a.value.starts_with('-') && !a.value.starts_with("--") && a.value.contains(ch))
    }

    /// The first argument that is not an option, or `default`.
    fn verb<'s>(&'s self, default: &'s str) -> &'s str {
        self.rest
            .iter()
            .find(|a| !a.value.starts_with('-'))
            .map_or(default, |a| a.value.as_str())
    }

    /// The `n`th argument that is not an option.
    fn operand(&self, n: usize) -> Option<&Word> {
        self.rest
            .iter()
            .filter(|a| !a.value.starts_with('-'))
            .nth(n)
    }

    /// A write to the repository: inside the workspace, or outside with `-C`. Recorded as a
    /// write of the repository's work tree (see [`repository`]).
    fn write(&self, j: &mut Judge, why: &str) {
        repository(j, self);
        if self.outside_dir {
            j.raise(
                Class::OutsideWrite,
                format!("[shell.git.outside] `git -C` {why} outside the workspace"),
            );
        } else {
            j.raise(
                Class::WorkspaceWrite,
                format!("[shell.git.write] `git {}` {why}", self.name),
            );
        }
    }
}

/// Options of the path-writing subcommands that take a value in the next word.
const VALUED: &[&str] = &["-s", "--source", "-b", "-B", "--orphan", "--conflict", "-m"];

/// The work-tree files a subcommand writes, named on its command line: `git mv`'s sources and
/// destination, the paths `git checkout` and `git restore` rewrite from a commit, those
/// `git rm` removes. Each is judged as a write, so a floor or protected path among them
/// (`git mv x .git/hooks/pre-commit`, `git checkout REF -- .github/workflows/ci.yml`) meets
/// the floor and the plan.
fn worktree_paths(j: &mut Judge, s: &Sub<'_, '_, '_, '_>) {
    // Operands before and after `--`, option values left out.
    let (mut before, mut after): (Vec<&Word>, Vec<&Word>) = (Vec::new(), Vec::new());
    let (mut dashdash, mut skip) = (false, false);
    for a in s.rest {
        let v = a.value.as_str();
        if dashdash {
            after.push(a);
        } else if skip {
            skip = false;
        } else if v == "--" {
            dashdash = true;
        } else if v.starts_with('-') {
            skip = VALUED.contains(&v);
        } else {
            before.push(a);
        }
    }
    // The index alone: no work-tree file changes.
    let index_only = match s.name {
        "rm" => s.has(&["--cached"]),
        "restore" => s.has(&["--staged", "-S"]) && !s.has(&["--worktree", "-W"]),
        _ => false,
    };
    if index_only {
        return;
    }
    let paths: Vec<&Word> = match s.name {
        "mv" | "rm" | "restore" => before.into_iter().chain(after).collect(),
        // `git checkout [REF] -- PATHS`, `git checkout REF PATHS`, and `git checkout PATH` of
        // an existing file; a lone branch name switches and rewrites no named path.
        "checkout" if dashdash => after,
        "checkout" if before.len() > 1 => before.into_iter().skip(1).collect(),
        "checkout" => before
            .into_iter()
            .filter(|o| exists_in(s.dirs, &o.value))
            .collect(),
        _ => return,
    };
    let reach = if s.name == "mv" {
        crate::shell::paths::Reach::Entry
    } else {
        crate::shell::paths::Reach::Target
    };
    let what = format!("git {}", s.name);
    if s.name == "mv"
        && let Some((dest, sources)) = paths.split_last()
        && !sources.is_empty()
        && (sources.len() > 1 || crate::shell::writers::may_be_dir(dest, s.dirs))
    {
        for w in sources
            .iter()
            .filter_map(|src| crate::shell::writers::inside(dest, src))
        {
            j.write_reaching(&w, s.dirs, s.c.w.ctx, &what, reach);
        }
    }
    for p in paths {
        j.write_reaching(p, s.dirs, s.c.w.ctx, &what, reach);
    }
}

/// Whether the subcommand writes the work tree from a tree the line does not show (another
/// branch, a commit, a stash, a remote's), and how: what it writes may hold `.claude/`,
/// `.envrc` or `.github/` that no wildcard rule may let a command place unsandboxed. A new
/// branch at `HEAD` (`checkout -b NEW`, `switch -c NEW`) and paths named on the line (judged
/// as writes) are not.
fn writes_another_tree(s: &Sub<'_, '_, '_, '_>) -> Option<&'static str> {
    // `-` is the previous branch.
    let refs = s
        .rest
        .iter()
        .take_while(|a| a.value != "--")
        .filter(|a| !a.value.starts_with('-') || a.value == "-")
        .count();
    let dashdash = s.rest.iter().any(|a| a.value == "--");
    let creates = s.has(&[
        "-b",
        "-B",
        "-c",
        "-C",
        "--orphan",
        "--create",
        "--force-create",
    ]);
    let source = s.rest.iter().any(|a| {
        let v = a.value.as_str();
        v.strip_prefix("--").is_some_and(|o| {
            let o = o.split('=').next().unwrap_or(o);
            o.len() >= 2 && "source".starts_with(o)
        })
    }) || s.short('s');
    match s.name {
        "checkout" if dashdash && tree_paths_before_dashdash(s) => {
            Some("checks out another tree's directories")
        }
        "checkout" if dashdash => None,
        "checkout" | "switch" if creates && refs < 2 => None,
        // `git checkout FILE` of an existing file restores it from the index (a named write).
        "checkout" if s.operand(0).is_some_and(|o| exists_in(s.dirs, &o.value)) => None,
        "checkout" | "switch" if refs >= 1 => Some("checks out another tree"),
        "reset"
            if s.operand(0).is_some_and(|o| o.value != "HEAD")
                && s.has(&["--hard", "--keep", "--merge"]) =>
        {
            Some("resets the work tree to another tree")
        }
        "restore" if source => Some("restores from another tree"),
        "stash" if matches!(s.verb(""), "pop" | "apply" | "branch") => Some("applies a stash"),
        // A pull or clone from a remote writes what the remote holds; from a repository on
        // this machine (`git pull . BRANCH`, `git clone -b B . x`), what a command may have
        // committed there.
        "pull" | "clone" if !names_local_repository(s) => None,
        "clone" => Some("checks out a local repository's tree"),
        "merge" | "cherry-pick" | "rebase" | "pull" | "revert" | "am" => {
            Some("writes the changes of other commits")
        }
        "worktree" if s.verb("") == "add" => Some("checks out a tree in a new worktree"),
        "checkout-index" | "read-tree" => Some("writes the index's or a tree's files"),
        _ => None,
    }
}

/// Whether the subcommand points `HEAD`, a branch or the index at another tree without
/// writing the work tree: `reset [--soft|--mixed] REF`, `update-ref`, `symbolic-ref`,
/// `branch -f`, `read-tree` without `-u`.
fn moves_head(s: &Sub<'_, '_, '_, '_>) -> bool {
    match s.name {
        "reset" => s.operand(0).is_some_and(|o| o.value != "HEAD"),
        "update-ref" | "read-tree" => true,
        "symbolic-ref" => s.operand(1).is_some(),
        "branch" => s.has(&["-f", "--force", "-M", "-C"]),
        _ => false,
    }
}

/// Whether the subcommand writes the work tree from `HEAD` or the index: `reset --hard`,
/// `checkout -f` or of paths, `restore` without a source, `stash`.
fn restores_head(s: &Sub<'_, '_, '_, '_>) -> bool {
    match s.name {
        "reset" => s.has(&["--hard", "--keep", "--merge"]),
        "checkout" | "restore" | "stash" | "checkout-index" => true,
        _ => false,
    }
}

/// Whether an argument names a repository on this machine: a path (`.`, `../r`, `/r`,
/// `~/r`, `file://`) or a directory that exists.
fn names_local_repository(s: &Sub<'_, '_, '_, '_>) -> bool {
    s.rest
        .iter()
        .filter(|a| !a.value.starts_with('-'))
        .any(|a| {
            let v = a.value.as_str();
            v == "."
                || v.starts_with(['.', '/', '~'])
                || v.starts_with("file:")
                || s.dirs
                    .iter()
                    .flatten()
                    .any(|d| d.join(v).join(".git").exists() || d.join(v).join("HEAD").is_file())
        })
}

/// `git checkout REF -- PATHS` where a path is a directory (`.`, `src`, a glob, a pathspec
/// magic): the names it writes there are the tree's.
fn tree_paths_before_dashdash(s: &Sub<'_, '_, '_, '_>) -> bool {
    let at = s
        .rest
        .iter()
        .position(|a| a.value == "--")
        .unwrap_or(s.rest.len());
    let (before, after) = s.rest.split_at(at);
    let has_ref = before.iter().any(|a| !a.value.starts_with('-'));
    let dir_like = |w: &Word| {
        w.glob
            || w.value.starts_with(':')
            || s.dirs
                .as_ref()
                .is_none_or(|ds| ds.iter().any(|d| d.join(&w.value).is_dir()))
    };
    // `git checkout REF --` with no path switches to REF.
    has_ref && (after.len() <= 1 || after.iter().skip(1).any(dir_like))
}

/// `git init [DIR]` makes a repository of DIR (else of where it runs): later git commands on
/// the line find that one from inside it (see `git_config::write_as`). `--bare` and
/// `--separate-git-dir` make none git would find there by its `.git`.
fn made_repo(s: &Sub<'_, '_, '_, '_>) {
    if s.has(&["--bare", "--separate-git-dir"]) {
        return;
    }
    let target = s.operand(0).map(|w| w.value.as_str()).unwrap_or(".");
    let mut made = s.c.w.made_repos.borrow_mut();
    for d in s.dirs.iter().flatten() {
        let p = crate::shell::paths::normalize(&d.join(target));
        // Run again over a repository that exists, `git init` makes nothing new.
        let exists = p.join(".git").symlink_metadata().is_ok();
        if !exists && !made.contains(&p) {
            made.push(p);
        }
    }
}

/// Whether `name` exists from one of `dirs`.
fn exists_in(dirs: &crate::shell::walk::Cwd, name: &str) -> bool {
    dirs.iter()
        .flatten()
        .any(|d| d.join(name).symlink_metadata().is_ok())
}

/// Sort the subcommand into inspection, workspace writes, destructive, network or unknown.
fn subcommand(j: &mut Judge, s: &Sub<'_, '_, '_, '_>) {
    j.t.rewrites_only = REPOSITORY_ONLY.contains(&s.name);
    super::git_exec::program_args(j, s.name, s.rest);
    super::git_outputs::judge(j, s.c, s.name, s.rest);
    worktree_paths(j, s);
    let restores = restores_head(s) && s.c.w.moved_head.get();
    if moves_head(s) {
        s.c.w.moved_head.set(true);
    }
    let from_moved =
        restores.then_some("restores the tree an earlier command moved HEAD or the index to");
    if let Some(what) = writes_another_tree(s).or(from_moved) {
        j.finding(&format!(
            "[shell.write.content] `git {}` {what}: the names that tree holds, protected ones included",
            s.name
        ));
    }
    match s.name {
        "bundle" => bundle(j, s),
        "" => {}
        "credential" | "credential-store" | "credential-cache" => {
            // The store's files, which the plan hides: the helpers read them.
            let home = &s.c.w.ctx.workspace.home;
            for f in [".git-credentials", ".config/git/credentials"] {
                let w = Word::literal(&home.join(f).to_string_lossy());
                j.read(&w, s.dirs, s.c.w.ctx);
            }
            j.t.reads_secret = true;
            j.raise(
                Class::SecretRead,
                format!(
                    "[shell.secret.read] `git {}` prints the passwords git stores",
                    s.name
                ),
            );
        }
        n if READ.contains(&n) => inspect(j, s),
        "hash-object" if !s.has(&["-w"]) => inspect(j, s),
        "symbolic-ref" if s.operand(1).is_none() && !s.has(&["-d", "--delete"]) => inspect(j, s),
        "symbolic-ref" => j.raise(
            Class::Destructive,
            "[shell.git.destructive] `git symbolic-ref` repoints a ref",
        ),
        "update-index" if refresh_only(s) => {}
        "branch" | "tag" => refs(j, s),
        "remote" | "stash" | "worktree" => verbs(j, s),
        "reset" | "clean" | "checkout" | "restore" | "rm" => discards(j, s),
        "gc" | "prune" | "reflog" | "update-ref" | "filter-branch" | "filter-repo" | "replace" => {
            rewrites(j, s)
        }
        "config" => config(j, s),
        // With no submodule recorded, status enters no other repository and asks no remote.
        "submodule" if s.verb("status") == "status" && !has_submodules(s.dirs) => inspect(j, s),
        "push" => push(j, s),
        n if NETWORK.contains(&n) => network(j, s),
        n if WRITE.contains(&n) => records(j, s),
        n => j.raise(
            Class::Unknown,
            format!("[shell.unknown] `git {n}` (may be an alias or an extension)"),
        ),
    }
    if let Some(why) = upstream_write(s) {
        git_config::write_as(j, s.c, s.dirs, Scope::Local, why);
    }
    if let Some((scope, why)) = config_write(s) {
        git_config::write_as(j, s.c, s.dirs, scope, why);
    }
    plumbing(j, s);
}

/// Whether a subcommand that names no configuration writes one, where, and why: submodules'
/// URLs in the repository's `config`, sparse checkout's settings, `git maintenance`
/// registering the repository in the global configuration. (`git init` over an existing
/// repository fails to rewrite its `config` in the sandbox, harmlessly: it is left allowed.)
fn config_write(s: &Sub<'_, '_, '_, '_>) -> Option<(Scope, &'static str)> {
    let verb = s.verb("");
    match s.name {
        "submodule" => match verb {
            "init" | "add" | "sync" | "deinit" | "set-url" | "set-branch" | "absorbgitdirs" => {
                Some((Scope::Local, "the submodules' settings"))
            }
            "update" if s.has(&["--init"]) => Some((Scope::Local, "the submodules' settings")),
            _ => None,
        },
        "sparse-checkout" if matches!(verb, "init" | "set" | "disable" | "add") => Some((
            Scope::Local,
            "the sparse checkout's settings (`extensions.worktreeConfig`)",
        )),
        "maintenance" if matches!(verb, "register" | "unregister" | "start" | "stop") => {
            Some((Scope::Global, "the repositories `git maintenance` runs on"))
        }
        _ => None,
    }
}

/// Whether a subcommand that names no configuration records a branch's upstream
/// (`branch.NAME.remote` and `.merge`) in the repository's `config`, and why: `git push -u`,
/// and the branch commands [`super::git_tracking`] judges (`git branch --set-upstream-to` is
/// judged with the rest of `git branch`).
fn upstream_write(s: &Sub<'_, '_, '_, '_>) -> Option<&'static str> {
    match s.name {
        "push" if s.has(&["-u", "--set-upstream"]) || s.short('u') => {
            Some("the branch's upstream (`-u`)")
        }
        "checkout" | "switch" | "branch" | "worktree" => super::git_tracking::upstream_write(
            s.name,
            s.rest,
            s.dirs,
            s.cli,
            &s.c.w.ctx.workspace.home,
        ),
        _ => None,
    }
}

/// Whether a repository git finds from `dirs` may have submodules (`.gitmodules` in its
/// work tree or `modules` in its git directory), whose own repositories `git submodule
/// status` runs git in, and whose configuration the analysis does not read. Unknown
/// directories may.
fn has_submodules(dirs: &Cwd) -> bool {
    let Some(dirs) = dirs else { return true };
    dirs.iter().any(|d| {
        d.ancestors()
            .find(|a| a.join(".git").symlink_metadata().is_ok())
            .is_none_or(|top| {
                top.join(".gitmodules").symlink_metadata().is_ok()
                    || top.join(".git/modules").symlink_metadata().is_ok()
                    || top.join(".git").is_file()
            })
    })
}

/// Inspection, unless it runs an external diff or writes an output file.
fn inspect(j: &mut Judge, s: &Sub<'_, '_, '_, '_>) {
    if s.outside_dir {
        // Names are taken from where `-C` leads (`git -C ~/.codex grep --no-index x auth.json`),
        // a directory among them read whole (`diff --no-index . other`), and `grep` searches
        // the directory itself when no path is given.
        let here = Word::literal(".");
        let operands = s.rest.iter().filter(|a| !a.value.starts_with('-'));
        let searched = (s.name == "grep").then_some(&here);
        for a in operands.chain(searched) {
            j.read(a, s.dirs, s.c.w.ctx);
            j.tree(a, s.dirs, paths::Reach::Target);
        }
    }
    if s.name == "diff" && s.has(&["--ext-diff"]) {
        j.raise(Class::Opaque, "[shell.git.ext-diff] external diff program");
    }
    if s.has(&["--output"]) || s.rest.iter().any(|a| a.value.starts_with("--output=")) {
        s.write(j, "writes an output file");
        output_files(j, s.c, s.rest);
    }
}

/// `git branch` and `git tag`: listing inspects, deleting is destructive, the rest writes.
fn refs(j: &mut Judge, s: &Sub<'_, '_, '_, '_>) {
    let named = s.rest.iter().any(|a| !a.value.starts_with('-'));
    if s.name == "tag" {
        if s.has(&["-d", "--delete"]) {
            repository(j, s);
            j.raise(Class::Destructive, "[shell.git.destructive] `git tag -d`");
        } else if named && !s.has(&["-l", "--list", "--contains", "--points-at"]) {
            s.write(j, "creates a tag");
        }
        return;
    }
    if s.has(&["-D", "--delete", "-d"]) && (s.has(&["-D"]) || s.has(&["--force", "-f"])) {
        repository(j, s);
        j.raise(
            Class::Destructive,
            "[shell.git.destructive] `git branch -D` deletes unmerged work",
        );
    } else if named || s.has(BRANCH_CHANGES) {
        s.write(j, "changes branches");
    }
    let upstream = ["-u", "--set-upstream-to", "--unset-upstream"];
    if s.has(&upstream)
        || s.rest
            .iter()
            .any(|a| a.value.starts_with("--set-upstream-to="))
    {
        git_config::write(j, s.c, s.dirs, Scope::Local);
    }
    // git renames or copies the branch's section of the configuration, and fails (exit 128)
    // when it cannot write the file, the branch renamed or copied all the same.
    if s.has(&["-m", "-M", "--move", "-c", "-C", "--copy"]) {
        git_config::write_as(
            j,
            s.c,
            s.dirs,
            Scope::Local,
            "the branch's section, which `git branch -m`/`-c` renames or copies",
        );
    }
}

/// `git branch` options that change branches.
const BRANCH_CHANGES: &[&str] = &[
    "-d",
    "--delete",
    "-m",
    "-M",
    "-c",
    "-C",
    "--move",
    "--copy",
    "--set-upstream-to",
    "-u",
    "--unset-upstream",
];

/// `git remote`, `git stash` and `git worktree`, by their verb.
fn verbs(j: &mut Judge, s: &Sub<'_, '_, '_, '_>) {
    match (s.name, s.verb(if s.name == "stash" { "push" } else { "" })) {
        ("remote", "show") if s.operand(1).is_some() && !s.has(&["-n"]) => {
            j.t.network = true;
            j.raise(
                Class::Network,
                "[shell.network.git] `git remote show NAME` asks the remote",
            );
        }
        ("remote", "" | "show" | "get-url") | ("stash", "list" | "show") => {}
        ("worktree", "list" | "") => {}
        ("remote", "update" | "prune") => {
            j.t.network = true;
            j.raise(
                Class::Network,
                "[shell.network.git] `git remote update` fetches",
            );
        }
        ("remote", verb) => {
            j.raise(
                Class::ConfigChange,
                "[shell.git.config] `git remote` changes remotes",
            );
            if verb != "set-head" {
                git_config::write(j, s.c, s.dirs, Scope::Local);
            }
        }
        ("stash", "drop" | "clear") => {
            repository(j, s);
            j.raise(
                Class::Destructive,
                "[shell.git.destructive] `git stash drop/clear` discards work",
            )
        }
        ("stash", _) => s.write(j, "stashes changes"),
        (_, "remove" | "prune") => j.raise(
            Class::Destructive,
            "[shell.git.destructive] `git worktree remove`",
        ),
        (_, _) => match s.operand(1) {
            Some(p) => j.write(p, s.c.cmd.cwd, s.c.w.ctx, "git worktree"),
            None => s.write(j, "changes worktrees"),
        },
    }
}

/// Subcommands that discard work in the tree or the index, or move HEAD.
fn discards(j: &mut Judge, s: &Sub<'_, '_, '_, '_>) {
    let discarding = match s.name {
        "reset" => s.has(&["--hard", "--merge", "--keep"]),
        "clean" => {
            if s.has(&["-n", "--dry-run"]) {
                return;
            }
            true
        }
        "checkout" => {
            s.has(&[
                "--", ".", "-f", "--force", "-p", "--patch", "--ours", "--theirs",
            ]) || super::git_tracking::checkout_operands(s.rest) > 1
        }
        "restore" => !s.has(&["--staged", "-S"]) || s.has(&["--worktree", "-W"]),
        _ => true,
    };
    let (why, write) = match s.name {
        "reset" => (
            "`git reset --hard` discards work",
            "moves HEAD or the index",
        ),
        "clean" => ("`git clean` deletes untracked files", ""),
        "checkout" => (
            "`git checkout` of paths discards changes",
            "switches branches",
        ),
        "restore" => ("`git restore` discards changes", "unstages changes"),
        _ => ("`git rm` deletes files", ""),
    };
    if discarding {
        repository(j, s);
        j.raise(Class::Destructive, format!("[shell.git.destructive] {why}"));
    } else {
        s.write(j, write);
    }
}

/// Subcommands that drop unreachable objects or rewrite refs and history.
fn rewrites(j: &mut Judge, s: &Sub<'_, '_, '_, '_>) {
    let n = s.name;
    let listing = n == "reflog" && !s.has(&["expire", "delete"]);
    if !listing {
        repository(j, s);
    }
    match n {
        "gc" | "prune" | "reflog" => {
            if s.has(&["--prune=now", "expire", "delete", "--expire=now"]) || n == "prune" {
                j.raise(
                    Class::Destructive,
                    format!("[shell.git.destructive] `git {n}` drops unreachable objects"),
                );
            }
        }
        _ => j.raise(
            Class::Destructive,
            format!("[shell.git.destructive] `git {n}` rewrites refs or history"),
        ),
    }
}

/// `git push`: network, and destructive when it forces or deletes.
fn push(j: &mut Judge, s: &Sub<'_, '_, '_, '_>) {
    j.t.network = true;
    let force = s.has(&[
        "--force",
        "-f",
        "--force-with-lease",
        "--mirror",
        "--delete",
        "-d",
        "--prune",
    ]) || s.short('f')
        || s.rest.iter().any(|a| {
            a.value.starts_with('+')
                || a.value.starts_with("--force-with-lease=")
                || a.value.starts_with(':')
        });
    if force {
        j.raise(
            Class::Destructive,
            "[shell.git.destructive] `git push --force` overwrites remote history",
        );
    }
    j.raise(
        Class::Network,
        "[shell.network.git] `git push` sends to a remote",
    );
}

/// Subcommands that talk to a remote; `git clone` also writes its target directory.
fn network(j: &mut Judge, s: &Sub<'_, '_, '_, '_>) {
    j.t.network = true;
    j.raise(
        Class::Network,
        format!("[shell.network.git] `git {}` talks to a remote", s.name),
    );
    if s.name == "clone"
        && let Some(p) = s.operand(1)
    {
        j.write(p, s.c.cmd.cwd, s.c.w.ctx, "git clone into");
    }
}

/// `git bundle`: `create` and `unbundle` write (the bundle file, the repository's objects);
/// `verify` and `list-heads` read the bundle.
fn bundle(j: &mut Judge, s: &Sub<'_, '_, '_, '_>) {
    match s.verb("") {
        "verify" | "list-heads" => {}
        "create" | "unbundle" => s.write(j, "writes a bundle or its objects"),
        v => j.raise(
            Class::Unknown,
            format!("[shell.unknown] `git bundle {v}` is not a known verb"),
        ),
    }
}

/// Subcommands that record changes; some run an editor, commands or the repository's hooks.
fn records(j: &mut Judge, s: &Sub<'_, '_, '_, '_>) {
    let n = s.name;
    if n == "init" {
        made_repo(s);
    }
    if (n == "rebase" && s.has(&["-i", "--interactive", "--exec", "-x"]))
        || (n == "commit" && s.has(&["-e", "--edit"]))
    {
        j.raise(
            Class::Opaque,
            format!("[shell.git.exec] `git {n}` runs an editor or commands"),
        );
    }
    if HOOKED.contains(&n) {
        j.raise(
            Class::ScriptRun,
            format!("[shell.git.hooks] `git {n}` runs the repository's hooks"),
        );
    }
    if n == "bisect" && s.has(&["run"]) {
        j.raise(
            Class::ScriptRun,
            "[shell.git.exec] `git bisect run` runs a command",
        );
    }
    // Reports and printed output write nothing of the repository; an `-o` is judged with the
    // other output files.
    let prints = n == "archive"
        || (n == "format-patch" && s.has(&["--stdout"]))
        || (n == "apply" && s.has(&APPLY_REPORTS) && !s.has(&["--apply"]));
    if prints {
        j.raise(
            Class::WorkspaceWrite,
            format!("[shell.git.write] `git {n}` prints or reports"),
        );
    } else {
        s.write(j, "records changes");
    }
    unseen_effects(j, s);
}

/// What subcommands do beyond the paths their command line names. `git apply` writes the
/// files its patch names and `git read-tree -u` a tree's: the work tree is a write the plan and
/// the later stages see, so that a protected file among them is not let through the read-only
/// fast path. `git maintenance` registers the repository in the user's global configuration
/// and the system scheduler; `git archive --remote` fetches.
fn unseen_effects(j: &mut Judge, s: &Sub<'_, '_, '_, '_>) {
    let (cwd, ctx) = (s.c.cmd.cwd, s.c.w.ctx);
    match s.name {
        "apply" if !s.has(&APPLY_REPORTS) => {
            if s.has(&["--unsafe-paths"]) {
                j.raise(
                    Class::OutsideWrite,
                    "[shell.git.apply] `git apply --unsafe-paths` writes where the patch says",
                );
            }
            let dirs = crate::shell::commands::outputs::getopt_values(s.rest, &["--directory"]);
            let here = Word::literal(".");
            let roots = if dirs.is_empty() { vec![here] } else { dirs };
            for d in &roots {
                j.content_write(
                    d,
                    cwd,
                    ctx,
                    "`git apply` writes the files its patch names, under",
                );
            }
        }
        "read-tree" if s.has(&["-u"]) => {
            j.write(
                &Word::literal("."),
                cwd,
                ctx,
                "`git read-tree -u` writes a tree into",
            );
        }
        "archive" if s.rest.iter().any(|a| a.value.starts_with("--remote")) => {
            j.t.network = true;
            j.raise(
                Class::Network,
                "[shell.network.git] `git archive --remote` talks to a remote",
            );
        }
        "maintenance" if !s.has(&["run"]) => j.raise(
            Class::ConfigChange,
            "[shell.git.maintenance] `git maintenance` changes the global configuration and \
             schedules jobs",
        ),
        _ => {}
    }
}

/// `git apply` options that only report on the patch (without `--apply`).
const APPLY_REPORTS: [&str; 4] = ["--check", "--stat", "--numstat", "--summary"];

/// Subcommands that run hooks (`pre-commit`, `commit-msg`, `post-merge`, `pre-rebase`,
/// `applypatch-msg`, ...): files in the work tree when `core.hooksPath` or a hook manager
/// points there, so an earlier edit may have written them.
const HOOKED: &[&str] = &["commit", "merge", "rebase", "am", "cherry-pick", "revert"];

/// Configuration keys whose value names a file git reads (pathnames: `~` is the home).
const FILE_KEYS: &[&str] = &[
    "blame.ignorerevsfile",
    "core.attributesfile",
    "core.excludesfile",
    "mailmap.file",
    "diff.orderfile",
    "commit.template",
    "gpg.ssh.allowedsignersfile",
    "gpg.ssh.revocationfile",
    "user.signingkey",
    "http.sslcert",
    "http.sslkey",
    "http.sslcainfo",
    "http.cookiefile",
    "sendemail.aliasesfile",
    "include.path",
    "init.templatedir",
    "format.signaturefile",
    "fsck.skiplist",
    "receive.fsck.skiplist",
    "fetch.fsck.skiplist",
    "http.sslcapath",
    "http.proxysslcert",
    "http.proxysslkey",
    "http.proxysslcainfo",
];

/// Where git's `%(prefix)/` in a pathname value leads: its install prefix, `/usr` for a
/// distribution's git, `/usr/local` for one built from source.
const GIT_PREFIXES: &[&str] = &["/usr", "/usr/local"];

/// The files `git -c KEY=PATH` makes git read, read by the command: `git -c
/// blame.ignoreRevsFile=~/.codex/auth.json blame f` prints the file's first line.
fn config_files(j: &mut Judge, c: &Ctx<'_, '_, '_>, cli: &[&Word], cwd: &Cwd) {
    for kv in cli {
        let Some((key, value)) = kv.value.split_once('=') else {
            continue;
        };
        let key = key.to_ascii_lowercase();
        let include = key.starts_with("includeif.") && key.ends_with(".path");
        if value.is_empty() || !(FILE_KEYS.contains(&key.as_str()) || include) {
            continue;
        }
        let home = &c.w.ctx.workspace.home;
        let paths: Vec<String> = if let Some(rest) = value.strip_prefix("~/") {
            vec![home.join(rest).to_string_lossy().into_owned()]
        } else if let Some(rest) = value.strip_prefix("%(prefix)/") {
            GIT_PREFIXES.iter().map(|p| format!("{p}/{rest}")).collect()
        } else {
            vec![value.to_string()]
        };
        for path in paths {
            j.read(&Word::literal(&path), cwd, c.w.ctx);
        }
    }
}

fn config_pair(j: &mut Judge, kv: &Word, via: &str) {
    let key = kv.value.split('=').next().unwrap_or("");
    if !kv.exact || tables::git_exec_key(key) {
        j.raise(
            Class::Opaque,
            format!("[shell.git.exec-config] `{via} {key}` makes git run a program"),
        );
    }
}

fn config(j: &mut Judge, s: &Sub<'_, '_, '_, '_>) {
    let (cwd, ctx) = (s.c.cmd.cwd, s.c.w.ctx);
    // The file it reads or writes, in every form (`-f FILE`, `-fFILE`, `-lf FILE`): a bare
    // repository's `config` planted this way is judged by where it lands.
    let files = crate::shell::commands::outputs::getopt_values(s.rest, &["-f", "--file"]);
    for f in &files {
        j.read(f, cwd, ctx);
    }
    if config_change(j, s.rest) {
        for f in &files {
            j.write(f, cwd, ctx, "git config file");
        }
        if files.is_empty() && !s.has(&["--blob"]) {
            git_config::write(j, s.c, s.dirs, Scope::of(s.rest));
        }
    }
}

/// Options of `git config` that take the next word as their value.
const CONFIG_VALUED: &[&str] = &["-f", "--file", "--blob", "--type", "--default", "--comment"];

/// Judge what `git config REST` changes; `true` when it writes the file.
fn config_change(j: &mut Judge, rest: &[Word]) -> bool {
    let read_flags = [
        "--get",
        "--get-all",
        "--get-regexp",
        "-l",
        "--list",
        "--show-origin",
        "--show-scope",
        "get",
        "list",
    ];
    let changes = [
        "--unset",
        "--unset-all",
        "--remove-section",
        "--rename-section",
        "--replace-all",
        "--add",
        "-e",
        "--edit",
        "unset",
        "remove-section",
        "rename-section",
        "edit",
    ];
    if rest.iter().any(|a| changes.contains(&a.value.as_str())) {
        j.raise(
            Class::ConfigChange,
            "[shell.git.config] `git config` removes or rewrites settings",
        );
        return true;
    }
    if rest.iter().any(|a| read_flags.contains(&a.value.as_str())) {
        return false;
    }
    let valued = |i: usize| {
        i > 0
            && rest
                .get(i - 1)
                .is_some_and(|p| CONFIG_VALUED.contains(&p.value.as_str()))
    };
    let ops: Vec<&Word> = (0..rest.len())
        .filter(|&i| !valued(i))
        .filter_map(|i| rest.get(i))
        .filter(|a| !a.value.starts_with('-'))
        .collect();
    match ops.as_slice() {
        [] | [_] => false,
        [first, ..] => {
            let key = if first.value == "set" {
                ops.get(1).map(|w| w.value.as_str()).unwrap_or("")
            } else {
                first.value.as_str()
            };
            if tables::git_exec_key(key) {
                j.raise(Class::Malicious, format!("[shell.malicious.git-exec-config] `git config {key}` makes git run a program on later commands"));
            } else {
                j.raise(
                    Class::ConfigChange,
                    format!("[shell.git.config] `git config {key}` changes git settings"),
                );
            }
            true
        }
    }
}

/// The files `--output FILE` and `--output=FILE` name, judged by where they land.
fn output_files(j: &mut Judge, c: &Ctx<'_, '_, '_>, rest: &[Word]) {
    for (i, a) in rest.iter().enumerate() {
        let file = match a.value.strip_prefix("--output=") {
            Some(v) => {
                let mut w = a.clone();
                w.value = v.to_string();
                w.display = a.display.trim_start_matches("--output=").to_string();
                Some(w)
            }
            None if a.value == "--output" => rest.get(i + 1).cloned(),
            None => None,
        };
        if let Some(f) = file {
            j.output(&f, c.cmd.cwd, c.w.ctx, "git output file");
        }
    }
}

/// Record a write of the repository git works on: its index, objects and refs, and for many
/// subcommands its work tree. It is recorded as a write of the repository's top directory
/// (the work tree, or a bare repository's own directory), so that the gate does not take the
/// command for inspection and the plan refuses it where the profile cannot write there (the
/// `read-only` profile). The files git keeps in its own directory are not named one by one:
/// the floor asks about hand-written `.git` internals, not about git keeping its state.
fn repository(j: &mut Judge, s: &Sub<'_, '_, '_, '_>) {
    let ctx = s.c.w.ctx;
    let Some(dirs) = s.dirs else {
        let mut w = Word::literal("$GIT_DIR");
        w.unknown = true;
        w.exact = false;
        return j.write(&w, s.dirs, ctx, "git repository");
    };
    let tops: Vec<std::path::PathBuf> = dirs
        .iter()
        .map(|d| match git_config::git_dir(d) {
            Some(g) if g.file_name().is_some_and(|n| n == ".git") => g
                .parent()
                .map_or_else(|| d.clone(), std::path::Path::to_path_buf),
            Some(g) => g,
            None => d.clone(),
        })
        .collect();
    for t in tops {
        let w = Word::literal(&t.to_string_lossy());
        j.write(&w, s.c.cmd.cwd, ctx, "git repository");
    }
}

/// `git update-index` that only refreshes the index's stat information (as `git status`
/// does whenever it can): no entry is added, removed or changed.
fn refresh_only(s: &Sub<'_, '_, '_, '_>) -> bool {
    const REFRESH: &[&str] = &[
        "--refresh",
        "--really-refresh",
        "-q",
        "--ignore-missing",
        "--unmerged",
    ];
    !s.rest.is_empty() && s.rest.iter().all(|a| REFRESH.contains(&a.value.as_str()))
}

/// Plumbing that writes git's own files with content the command line chooses: the index
/// (`update-index`, `read-tree`), objects (`hash-object -w`, `write-tree`, `mktree`,
/// `mktag`, `commit-tree`) and refs (`update-ref`, `symbolic-ref NAME REF`). Each is the
/// write of `.git` internals it is, judged as `echo x > .git/HEAD` is (the floor asks); an
/// index entry `update-index` adds for a path is also a write of that path, which a later
/// checkout makes (`--cacheinfo 100644,SHA,.claude/settings.json` meets the plan's
/// protection of that file).
fn plumbing(j: &mut Judge, s: &Sub<'_, '_, '_, '_>) {
    let file = match s.name {
        "update-index" if !refresh_only(s) => "index",
        "read-tree" if !s.has(&["-n", "--dry-run"]) => "index",
        "hash-object" if s.has(&["-w"]) => "objects",
        "write-tree" | "mktree" | "mktag" | "commit-tree" => "objects",
        "update-ref" => "refs",
        "symbolic-ref" if s.operand(1).is_some() || s.has(&["-d", "--delete"]) => "refs",
        _ => return,
    };
    let ctx = s.c.w.ctx;
    let Some(dirs) = s.dirs else {
        let mut w = Word::literal("$GIT_DIR");
        w.unknown = true;
        w.exact = false;
        return j.write(&w, s.dirs, ctx, "git internals");
    };
    for d in dirs {
        let g = git_config::git_dir(d).unwrap_or_else(|| d.join(".git"));
        let w = Word::literal(&g.join(file).to_string_lossy());
        j.write(&w, s.c.cmd.cwd, ctx, &format!("`git {}`", s.name));
    }
    if s.name == "update-index" {
        for p in index_paths(s.rest) {
            j.write(
                &p,
                s.c.cmd.cwd,
                ctx,
                "`git update-index` adds an index entry for",
            );
        }
    }
}

/// The paths `git update-index` records entries for: `--cacheinfo MODE,SHA,PATH` (or its
/// three-word form) and the operands (with `--add`, files of the work tree).
fn index_paths(rest: &[Word]) -> Vec<Word> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(a) = rest.get(i) {
        i += 1;
        let v = a.value.as_str();
        if v == "--cacheinfo" {
            match rest.get(i) {
                Some(info) if info.value.contains(',') => {
                    i += 1;
                    if let Some(path) = info.value.splitn(3, ',').nth(2) {
                        let mut w = info.clone();
                        w.value = path.to_string();
                        w.display = path.to_string();
                        out.push(w);
                    }
                }
                _ => {
                    out.extend(rest.get(i + 2).cloned());
                    i += 3;
                }
            }
        } else if let Some(info) = v.strip_prefix("--cacheinfo=") {
            if let Some(path) = info.splitn(3, ',').nth(2) {
                let mut w = a.clone();
                w.value = path.to_string();
                w.display = path.to_string();
                out.push(w);
            }
        } else if v == "--chmod" {
            i += 1;
        } else if v == "--" {
            out.extend(rest.get(i..).unwrap_or(&[]).iter().cloned());
            break;
        } else if !v.starts_with('-') {
            out.push(a.clone());
        }
    }
    out
}
