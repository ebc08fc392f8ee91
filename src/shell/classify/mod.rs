//! Classify one simple command: redirections, assignments, wrappers, then
//! the leader and its arguments.

mod evaluated;
mod judge;
mod redirects;
mod variables;

use super::exec_args;
use super::leader;
use super::paths;
use super::walk::{Cwd, Scope, Seg, Walker};
use super::words::Word;
use super::{Class, Segment, tables};
use judge::rank;
use rable::Node;
use redirects::redirect_targets;

pub(crate) use judge::Judge;

pub(crate) struct Cmd<'a> {
    pub argv: &'a [Word],
    pub assigns: &'a [Word],
    pub redirects: &'a [Node],
    pub cwd: &'a Cwd,
    /// An argument or redirection target comes from a command substitution.
    pub arg_subst: bool,
    /// Segments produced by this command's substitutions.
    pub nested: std::ops::Range<usize>,
    pub via: &'a str,
    pub label: Option<&'a str>,
}

pub(crate) struct Outcome {
    pub segment: Option<Seg>,
    /// Code strings to parse and walk (`sh -c`, `eval`, here-documents).
    pub reparse: Vec<(String, String)>,
    pub new_cwd: Option<Cwd>,
}

/// What standard input carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Stdin {
    Inherited,
    Text(String),
    File,
}

pub(crate) fn classify(w: &mut Walker<'_>, cmd: &Cmd<'_>, scope: &Scope) -> Outcome {
    let mut j = Judge::new();
    let stdin = redirect_targets(&mut j, w, cmd, scope);
    assignments(&mut j, cmd);
    let mut new_cwd = None;
    let u = leader::unwrap(cmd.argv);
    wrapped(&mut j, w, cmd, &u);
    let rest = cmd.argv.get(u.leader..).unwrap_or(&[]);
    if let Some((lead, args)) = rest.split_first() {
        trees(&mut j, lead, args, cmd.cwd, w.ctx);
        leader_word(
            &mut j,
            w,
            cmd,
            lead,
            args,
            &stdin,
            u.xargs,
            &mut new_cwd,
            scope,
        );
    } else if cmd.argv.is_empty()
        && cmd.assigns.is_empty()
        && cmd.redirects.is_empty()
        && cmd.label.is_none()
    {
        return Outcome {
            segment: None,
            reparse: j.reparse,
            new_cwd,
        };
    }
    if let Some(p) = &u.privilege {
        j.raise(
            Class::Privilege,
            format!("[shell.privilege] runs through `{p}`"),
        );
    }
    substitutions(&mut j, cmd, u.leader);
    variables::variables(&mut j, cmd, u.leader);
    let nested = w.out.get(cmd.nested.clone()).unwrap_or(&[]);
    variables::substituted(&mut j, cmd, u.leader, nested, w.ctx);
    variables::path_lists(&mut j, w, cmd, u.leader);
    evaluated::assignments(&mut j, cmd, &scope.vars);
    named_assignments(&mut j, cmd, u.leader);
    evaluated::builtins(&mut j, cmd, u.leader, &scope.vars);
    arguments(&mut j, w, cmd, u.leader);
    environment_dump(&mut j, w.ctx);
    let reparse = std::mem::take(&mut j.reparse);
    Outcome {
        segment: Some(segment(j, cmd, u.leader)),
        reparse,
        new_cwd,
    }
}

/// Builtins that assign a variable by name (`printf -v HOME`, `read PATH`, `mapfile`,
/// `getopts`, a nameref `declare -n r=HOME`): one that changes which code later commands run
/// keeps its export, as an assignment does.
fn named_assignments(j: &mut Judge, cmd: &Cmd<'_>, leader: usize) {
    let Some(lead) = cmd.argv.get(leader) else {
        return;
    };
    let args = cmd.argv.get(leader + 1..).unwrap_or(&[]);
    for name in assigned_names(&lead.value, args) {
        // `cd -` and `cd` through CDPATH follow these: the analysis would follow old values.
        let moves_cd = matches!(name.as_str(), "OLDPWD" | "CDPATH" | "PWD")
            .then_some("moves where `cd` leads");
        if let Some(why) = tables::exec_env(&name, "x").or(moves_cd) {
            let what = &lead.value;
            j.raise(
                Class::Opaque,
                format!("[shell.env.exec] `{what}` sets `{name}`, which {why}"),
            );
        }
    }
}

/// The variables `name args` assigns by name.
fn assigned_names(name: &str, args: &[Word]) -> Vec<String> {
    let operands = |valued: &[char]| -> Vec<String> {
        let mut out = Vec::new();
        let mut skip = false;
        for a in args {
            let v = a.value.as_str();
            if skip {
                skip = false;
            } else if v.len() > 1 && v.starts_with('-') {
                // A short option taking a value takes the next word unless it is attached.
                let last = v.chars().last().unwrap_or(' ');
                skip = valued.contains(&last) && !v.starts_with("--");
            } else {
                out.push(v.to_string());
            }
        }
        out
    };
    let named_by = |opt: &str| -> Vec<String> {
        crate::shell::commands::outputs::getopt_values(args, &[opt])
            .into_iter()
            .map(|w| w.value)
            .collect()
    };
    match name {
        "printf" => named_by("-v"),
        "read" => {
            let mut v = operands(&['a', 'd', 'i', 'n', 'N', 'p', 't', 'u']);
            v.extend(named_by("-a"));
            v
        }
        "mapfile" | "readarray" => operands(&['d', 'n', 'O', 's', 'u', 'C', 'c']),
        "getopts" => args
            .get(1)
            .map(|w| vec![w.value.clone()])
            .unwrap_or_default(),
        "declare" | "typeset" | "local" if crate::shell::commands::short_flag(args, 'n') => args
            .iter()
            .filter_map(|a| {
                a.value
                    .split_once('=')
                    .map(|(_, target)| target.to_string())
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Leading assignments that change which code runs (`LD_PRELOAD=...`, `HOME=...`).
fn assignments(j: &mut Judge, cmd: &Cmd<'_>) {
    for a in cmd.assigns {
        let key = a.display.split('=').next().unwrap_or("");
        let value = a.value.split_once('=').map_or("", |(_, v)| v);
        if let Some(why) = tables::exec_env(key, value) {
            j.raise(Class::Opaque, format!("[shell.env.exec] `{key}` {why}"));
        }
    }
}

/// What the wrappers around the command say and do: notes, output files, shell code.
fn wrapped(j: &mut Judge, w: &mut Walker<'_>, cmd: &Cmd<'_>, u: &leader::Unwrapped) {
    for (class, reason) in &u.notes {
        j.raise(*class, reason.clone());
    }
    // `xargs -I{} cat {}/n`: a path through each input line names whatever lies below it.
    if let Some(r) = u.replace.as_deref().filter(|r| !r.is_empty()) {
        let through = format!("{r}/");
        let args = cmd.argv.get(u.leader..).unwrap_or(&[]);
        if let Some(a) = args.iter().find(|a| a.value.contains(&through)) {
            j.raise(
                Class::Opaque,
                format!(
                    "[shell.xargs.paths] `{}` names paths below each input line, known only when it runs",
                    a.display
                ),
            );
        }
    }
    for f in &u.writes {
        j.write(f, cmd.cwd, w.ctx, "wrapper output");
    }
    for f in &u.reads {
        if looks_secret(f, w) {
            j.t.reads_secret = true;
            j.raise(
                Class::SecretRead,
                format!("[shell.secret.read] reads `{}`", f.display),
            );
        }
        j.read(f, cmd.cwd, w.ctx);
    }
    for (code, via) in &u.shell_code {
        shell_string(j, w, cmd, code, via);
    }
    if u.dumps_env {
        j.t.dumps_env = true;
    }
}

/// A command substitution among the arguments of a command that is not read-only (a commit
/// message aside) is opaque, or a finding when the command already asks.
fn substitutions(j: &mut Judge, cmd: &Cmd<'_>, leader: usize) {
    let lead_name = cmd.argv.get(leader).map(|w| w.value.as_str()).unwrap_or("");
    let message = |i: usize| {
        lead_name == "git"
            && i > 0
            && cmd
                .argv
                .get(i - 1)
                .is_some_and(|p| matches!(p.value.as_str(), "-m" | "--message"))
    };
    let word_subst = cmd
        .argv
        .iter()
        .enumerate()
        .skip(leader + 1)
        .any(|(i, a)| a.subst && !message(i))
        // What `echo` and `printf` print is never a path: a redirection decides the write.
        && !PRINTS_ONLY.contains(&lead_name);
    if (cmd.arg_subst || word_subst) && rank(j.class) > 0 {
        let why = "[shell.subst.arg] command substitution feeds a command that is not read-only";
        if rank(j.class) < 3 {
            j.raise(Class::Opaque, why);
        } else {
            j.finding(why);
        }
    }
}

/// The arguments as paths: secrets they name, and what they read (a commit message aside).
fn arguments(j: &mut Judge, w: &Walker<'_>, cmd: &Cmd<'_>, leader: usize) {
    let lead_name = cmd.argv.get(leader).map(|w| w.value.as_str()).unwrap_or("");
    for a in cmd.argv.iter().skip(leader + 1) {
        if looks_secret(a, w) {
            j.t.reads_secret = true;
            j.raise(
                Class::SecretRead,
                format!("[shell.secret.read] touches `{}`", a.display),
            );
        }
    }
    secret_variables(j, lead_name, cmd.argv.get(leader + 1..).unwrap_or(&[]));
    indirect_expansions(j, w.ctx, cmd.argv.get(leader + 1..).unwrap_or(&[]));
    let rest = cmd.argv.get(leader + 1..).unwrap_or(&[]);
    super::commands::option_table::judge(j, lead_name, rest, cmd.cwd, w.ctx);
    if !PRINTS_ONLY.contains(&lead_name) {
        let mut message = false;
        let reach = operands_reach(lead_name, rest);
        for a in cmd.argv.iter().skip(leader + 1) {
            if !message {
                j.read_operand(a, cmd.cwd, w.ctx, reach);
            }
            message = matches!(a.value.as_str(), "-m" | "--message");
        }
    }
    // A link's target is neither read nor written by making the link.
    let links = std::mem::take(&mut j.links);
    j.reads.retain(|r| !links.contains(r));
    j.links = links;
}

/// Arguments that expand a secret-shaped variable (`echo $AWS_SECRET_ACCESS_KEY`,
/// `"${GITHUB_TOKEN}"`) or name one to `printenv`: the sandbox's environment does not carry it
/// (see `environment`), but a command run outside it (a hook without `--sandbox`) prints the
/// caller's secret. Asked, not denied: in the sandbox it is harmless. Its length
/// (`${#GITHUB_TOKEN}`) and a test of it are not reads.
fn secret_variables(j: &mut Judge, lead_name: &str, args: &[Word]) {
    // A test of whether it is set (`[ -n "$NPM_TOKEN" ]`) prints nothing of it.
    if matches!(lead_name, "[" | "test") {
        return;
    }
    for a in args {
        let named = lead_name == "printenv" && a.exact && !a.value.starts_with('-');
        let found = if named {
            Some(a.value.clone()).filter(|n| secret_name(n))
        } else {
            secret_expanded(&a.raw, true)
        };
        if let Some(name) = found {
            secret_variable(j, &name);
        }
    }
}

/// A command that prints the whole environment (`env`, `printenv`, `export -p`, `jq -n env`)
/// reads each secret-shaped variable in it. Those of the environment sbx itself was started
/// in are what a command run outside the sandbox inherits; the sandbox passes none of them.
fn environment_dump(j: &mut Judge, ctx: &super::ShellContext<'_>) {
    let names = &ctx.workspace.secret_vars;
    if !j.t.dumps_env || names.is_empty() {
        return;
    }
    let shown: Vec<&str> = names.iter().take(3).map(String::as_str).collect();
    let more = if names.len() > 3 { ", ..." } else { "" };
    j.raise(
        Class::SecretRead,
        format!(
            "[shell.secret.env] prints the whole environment, which holds secret-shaped variables ({}{more}): the sandbox does not pass them, a command run outside it prints the caller's",
            shown.join(", ")
        ),
    );
}

/// `${!name}` and `${!prefix*}` expand a variable the analysis cannot name: any one of the
/// secret-shaped variables sbx's own environment holds, which a command run outside the
/// sandbox inherits.
fn indirect_expansions(j: &mut Judge, ctx: &super::ShellContext<'_>, args: &[Word]) {
    let Some(a) = args.iter().find(|a| a.raw.contains("${!")) else {
        return;
    };
    if let Some(name) = ctx.workspace.secret_vars.first() {
        let shown = a.display.clone();
        j.raise(
            Class::SecretRead,
            format!(
                "[shell.secret.env] `{shown}` expands a variable named only when it runs, which may be one of the secret-shaped variables the caller's environment holds (`{name}`, ...)"
            ),
        );
    }
}

/// The finding of a read of the secret-shaped variable `name`.
pub(super) fn secret_variable(j: &mut Judge, name: &str) {
    j.raise(
        Class::SecretRead,
        format!(
            "[shell.secret.env] reads the secret-shaped variable `{name}`: the sandbox does not pass it, a command run outside it reads the caller's"
        ),
    );
}

/// Whether a variable's name says it holds a secret: the environment filter's generic
/// entries (`*KEY*`, `*TOKEN*`, `*SECRET*`, ...), not its prefixes of whole providers
/// (`AWS_REGION` is no secret to print) nor sockets and sessions.
fn secret_name(name: &str) -> bool {
    crate::environment::named_secret(name.as_bytes())
}

/// The first secret-shaped variable a text expands (`$NAME`, `${NAME}`, `${NAME:-x}`), outside
/// escapes, and outside single quotes when `quotes` (a word; a here-document has none).
pub(super) fn secret_expanded(raw: &str, quotes: bool) -> Option<String> {
    let b = raw.as_bytes();
    let (mut i, mut single, mut double) = (0, false, false);
    while i < b.len() {
        match b[i] {
            b'\\' if !single => i += 1,
            b'\'' if quotes && !double => single = !single,
            b'"' if quotes && !single => double = !double,
            b'$' if !single => {
                let start = i + 1 + usize::from(b.get(i + 1) == Some(&b'{'));
                let len = b[start.min(b.len())..]
                    .iter()
                    .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
                    .count();
                let name = &raw[start.min(raw.len())..(start + len).min(raw.len())];
                if len > 0 && !b[start].is_ascii_digit() && secret_name(name) {
                    return Some(name.to_string());
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Whether the program reads a symbolic link it is named as a link, never its target: git's
/// pathspec commands (diff, log, add, ...) treat a link as the text of its target. Options
/// that read a named file (`-F`, `--contents`, `--no-index`) leave it to the general rule.
/// How a program reaches the paths it is given: most open what a link leads to; some act on
/// the name itself (git's pathspecs, removers and renamers, listings and `stat`).
pub(super) fn operands_reach(lead_name: &str, args: &[Word]) -> paths::Reach {
    let name = lead_name.rsplit('/').next().unwrap_or("");
    if keeps_links(lead_name, args) || super::commands::acts_on_entries(name, args) {
        paths::Reach::Entry
    } else {
        paths::Reach::Target
    }
}

fn keeps_links(lead_name: &str, args: &[Word]) -> bool {
    const PATHSPEC_ONLY: [&str; 15] = [
        "diff", "log", "show", "status", "add", "rm", "blame", "ls-files", "grep", "checkout",
        "restore", "reset", "mv", "switch", "branch",
    ];
    const READS_A_FILE: [&str; 5] = [
        "--no-index",
        "--contents",
        "-F",
        "--file",
        "--pathspec-from-file",
    ];
    if lead_name.rsplit('/').next() != Some("git") {
        return false;
    }
    let reads_file = args.iter().any(|a| {
        let name = a.value.split_once('=').map_or(a.value.as_str(), |(n, _)| n);
        READS_A_FILE.contains(&name)
    });
    !reads_file && git_subcommand(args).is_some_and(|s| PATHSPEC_ONLY.contains(&s))
}

/// The first word after git's global options.
fn git_subcommand(args: &[Word]) -> Option<&str> {
    let mut words = args.iter().map(|a| a.value.as_str());
    while let Some(w) = words.next() {
        match w {
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" => {
                words.next();
            }
            _ if w.starts_with('-') => {}
            _ => return Some(w),
        }
    }
    None
}

/// The segment the judgement makes, with its canonical text.
fn segment(j: Judge, cmd: &Cmd<'_>, leader: usize) -> Seg {
    let text_words = cmd.argv.get(leader..).unwrap_or(&[]);
    let text = if text_words.is_empty() {
        match cmd.label {
            Some(l) => l.to_string(),
            None if cmd.argv.is_empty() && cmd.assigns.is_empty() => redirections_text(cmd),
            None if cmd.argv.is_empty() => join(cmd.assigns),
            None => join(cmd.argv),
        }
    } else {
        join(text_words)
    };
    let class = j.class;
    let mut argv: Vec<String> = cmd.assigns.iter().map(|a| a.display.clone()).collect();
    argv.extend(cmd.argv.iter().map(|a| a.display.clone()));
    Seg {
        seg: Segment {
            text,
            argv,
            class,
            verdict: class.default_verdict(),
            reason: j.reason,
            writes: j.writes,
            reads: j.reads,
            trees: j.trees,
            links: j.links,
            write_patterns: j.write_patterns,
            read_patterns: j.read_patterns,
            findings: j.findings,
            via: cmd.via.to_string(),
        },
        t: j.t,
    }
}

/// The text of a command made only of redirections (`$(<FILE)`, `> out`): its operators and
/// targets, so a rule or a person sees which file it opens.
fn redirections_text(cmd: &Cmd<'_>) -> String {
    let mut parts = Vec::new();
    for r in cmd.redirects {
        if let rable::NodeKind::Redirect { op, target, .. } = &r.kind {
            let t = match &target.kind {
                rable::NodeKind::Word { value, .. } => value.as_str(),
                _ => "",
            };
            parts.push(format!("{op} {t}"));
        }
    }
    parts.join(" ")
}

/// Record the directories a recursive reader walks (see `commands::tree_roots`).
fn trees(j: &mut Judge, lead: &Word, args: &[Word], cwd: &Cwd, ctx: &super::ShellContext) {
    let name = lead.value.rsplit('/').next().unwrap_or("");
    j.t.lists_paths = super::commands::lists_paths(name, args);
    if j.t.lists_paths {
        j.t.lists_links = super::commands::listed_links(name, args);
    }
    let Some(r) = super::commands::tree_roots(name, args) else {
        return;
    };
    let reach = if super::commands::follows_root_links(name, args) {
        paths::Reach::Target
    } else {
        paths::Reach::Entry
    };
    for root in r.roots {
        j.tree(root, cwd, reach);
    }
    if r.cwd_too {
        j.tree(&Word::literal("."), cwd, paths::Reach::Target);
    }
    if super::commands::follows_links(name, args) {
        followed_trees(j, name, ctx);
    }
}

/// Trees a walker that follows links reaches through them, one after another.
const MAX_FOLLOWED_TREES: usize = 32;

/// A walker that follows links (`grep -R`, `find -L`, `diff -r`) reads the trees its links
/// lead to as well: each link under a tree that leads out of it adds its target as a tree,
/// whose own links are followed in turn. A tree that holds the home is not walked, and a walk
/// too large to make asks.
fn followed_trees(j: &mut Judge, name: &str, ctx: &super::ShellContext) {
    let mut next = 0;
    while let Some(root) = j.trees.get(next).cloned() {
        next += 1;
        let unknown = if next > MAX_FOLLOWED_TREES {
            Some(format!(
                "its links lead to more than {MAX_FOLLOWED_TREES} trees"
            ))
        } else if paths::holds_home(&root, ctx) {
            Some("it walks the home".to_string())
        } else {
            match super::tree_links::leaving(&root) {
                Ok(links) => {
                    for l in links {
                        let target = paths::resolve(&l.to_string_lossy(), &root);
                        if !j.trees.contains(&target) {
                            j.trees.push(target);
                        }
                    }
                    None
                }
                Err(e) => Some(super::tree_links::size(&e)),
            }
        };
        if let Some(why) = unknown {
            j.raise(
                Class::Opaque,
                format!(
                    "[shell.tree.follow] `{name}` follows symbolic links while it walks, and {why}: where they lead is not checked"
                ),
            );
            return;
        }
    }
}

/// Leaders whose arguments are text, not files.
const PRINTS_ONLY: &[&str] = &["echo", "printf"];

fn join(ws: &[Word]) -> String {
    let mut s = String::new();
    for (i, w) in ws.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(&w.display);
    }
    s
}

fn looks_secret(a: &Word, w: &Walker<'_>) -> bool {
    let v = a.value.trim_start_matches('@');
    let name = v.rsplit('/').next().unwrap_or(v);
    let pathy = v.contains('/') || v.starts_with('.');
    (pathy || tables::SECRET_NAMES.contains(&name) || name.starts_with("id_"))
        && !v.starts_with('-')
        && paths::is_secret(v, w.ctx)
}

/// A string that a shell will run (`sh -c`, `su -c`, `eval`).
pub(crate) fn shell_string(j: &mut Judge, w: &Walker<'_>, cmd: &Cmd<'_>, code: &Word, via: &str) {
    if code.exact {
        j.code(&code.value, via);
        j.reason =
            format!("[shell.reparse] runs code through `{via}`, analysed as its own segments");
        return;
    }
    code_from_substitution(j, w, cmd, via);
}

/// Code that is the output of a command substitution: malicious when the
/// substitution fetches from the network or decodes, otherwise unknown.
pub(crate) fn code_from_substitution(j: &mut Judge, w: &Walker<'_>, cmd: &Cmd<'_>, via: &str) {
    let inner = w.out.get(cmd.nested.clone()).unwrap_or(&[]);
    if inner.iter().any(|s| s.t.network) {
        j.raise(
            Class::Malicious,
            format!("[shell.malicious.download-exec] `{via}` runs code fetched from the network"),
        );
    } else if inner.iter().any(|s| s.t.decoder) {
        j.raise(
            Class::Malicious,
            format!("[shell.malicious.decode-exec] `{via}` runs decoded data"),
        );
    } else {
        j.raise(
            Class::Opaque,
            format!("[shell.dynamic-code] `{via}` runs code that is only known when it runs"),
        );
    }
}

#[expect(
    clippy::too_many_arguments,
    reason = "one call site; a struct would only rename these"
)]
fn leader_word(
    j: &mut Judge,
    w: &mut Walker<'_>,
    cmd: &Cmd<'_>,
    lead: &Word,
    args: &[Word],
    stdin: &Stdin,
    xargs: bool,
    new_cwd: &mut Option<Cwd>,
    scope: &Scope,
) {
    if !lead.exact && (lead.unknown || lead.subst || lead.glob || lead.var) {
        if lead.subst {
            code_from_substitution(j, w, cmd, "command name from $(...)");
        }
        j.raise(
            Class::Opaque,
            format!(
                "[shell.dynamic-command] command name `{}` is computed",
                lead.display
            ),
        );
        return;
    }
    let v = lead.value.as_str();
    let name = if v.contains('/') {
        let trusted = [
            "/bin/",
            "/usr/bin/",
            "/usr/local/bin/",
            "/sbin/",
            "/usr/sbin/",
        ]
        .iter()
        .any(|p| v.starts_with(p) && !v.get(p.len()..).unwrap_or("").contains('/'));
        if !trusted {
            j.raise(
                Class::ScriptRun,
                format!(
                    "[shell.script] runs `{}`, whose content is not analysed",
                    lead.display
                ),
            );
            return;
        }
        v.rsplit('/').next().unwrap_or(v)
    } else {
        v
    };
    let ctx = exec_args::Ctx {
        w,
        cmd,
        stdin,
        xargs,
        scope,
    };
    exec_args::dispatch(j, ctx, name, args, new_cwd);
}

/// Rebuild a simple command for a nested argv (`find -exec`, `xargs`):
/// classified as its own segment.
pub(crate) fn child(w: &mut Walker<'_>, argv: &[Word], cwd: &Cwd, via: &str, scope: &Scope) {
    let empty: [Node; 0] = [];
    let c = Cmd {
        argv,
        assigns: &[],
        redirects: &empty,
        cwd,
        arg_subst: false,
        nested: 0..0,
        via,
        label: None,
    };
    let o = classify(w, &c, scope);
    if let Some(seg) = o.segment {
        w.out.push(seg);
    }
    for (code, via) in o.reparse {
        let mut inner = Scope {
            cwd: cwd.clone(),
            depth: scope.depth + 1,
            via,
            vars: super::walk::Vars::new(),
        };
        w.source(&code, &mut inner);
    }
}
