//! Rules for commands that write, delete or download: where their
//! targets land decides the class.

use super::classify::Judge;
use super::commands::outputs::getopt_values;
use super::commands::{has, operands, short_flag};
use super::exec_args::{Ctx, is_critical_word};
use super::words::Word;
use super::{Class, paths};

pub(crate) fn copy_like(j: &mut Judge, c: &Ctx<'_, '_, '_>, name: &str, args: &[Word]) {
    let ctx = c.w.ctx;
    let cwd = c.cmd.cwd;
    let ops = operands(args);
    if name == "rsync" || name == "scp" {
        remote_or_deleting(j, name, args, &ops);
    }
    // `-t DIR` in every form getopt takes (`-rt.`, `-vt DIR`, `--target=DIR`); rsync's `-t`
    // keeps times.
    let targets = match name {
        "rsync" | "scp" => Vec::new(),
        _ => getopt_values(args, TARGET),
    };
    let target_dir = targets.last();
    // `mv` replaces a link at its destination (`cp` writes through it).
    let reach = if name == "mv" {
        paths::Reach::Rename
    } else {
        paths::Reach::Target
    };
    if let Some(t) = target_dir {
        j.write(t, cwd, ctx, name);
    } else if let Some(last) = ops.last() {
        j.write_reaching(last, cwd, ctx, name, reach);
    } else {
        j.raise(
            Class::Opaque,
            format!("[shell.write.unknown] `{name}` without a visible target"),
        );
    }
    into_directory(j, c, name, args, target_dir, reach);
    if name == "mv" {
        let n = ops
            .len()
            .saturating_sub(if target_dir.is_some() { 0 } else { 1 });
        // A source is renamed: a link is moved as a link.
        for s in ops.iter().take(n) {
            j.write_reaching(s, cwd, ctx, "mv source", paths::Reach::Entry);
        }
    }
    if name == "ln" && (short_flag(args, 's') || has(args, &["--symbolic"])) && ops.len() >= 2 {
        // A link makes later writes through it land at its target.
        if let Some(target) = ops.first() {
            let dir = ops
                .last()
                .map(|l| l.value.rsplit_once('/').map_or(".", |(d, _)| d).to_string())
                .unwrap_or_default();
            let base = if target.value.starts_with('/') {
                target.value.clone()
            } else {
                format!("{dir}/{}", target.value)
            };
            let mut t = (*target).clone();
            t.value = base;
            j.link(&t, cwd, ctx);
        }
    }
    if name == "ln" && short_flag(args, 'f') && !replaces_nothing(args, &ops, cwd) {
        j.raise(
            Class::Destructive,
            "[shell.destructive] `ln -f` replaces files",
        );
    }
}

/// The options that name the directory `cp`, `mv`, `ln` and `install` write into.
const TARGET: &[&str] = &["-t", "--target-directory"];

/// Whether `w` (one of `args`) is the value a target option before it takes from the next
/// word (`-t DIR`, `-rt DIR`), not a source.
fn target_value(args: &[Word], w: &Word) -> bool {
    let Some(i) = args.iter().position(|a| std::ptr::eq(a, w)) else {
        return false;
    };
    i > 0
        && getopt_values(&args[i - 1..i], TARGET).is_empty()
        && !getopt_values(&args[i - 1..=i], TARGET).is_empty()
}

/// What a copy, move or link into a directory writes there: `DIR/NAME` for each source
/// (`cp -r a/.git .` writes `./.git`), and, for a source's contents (`cp -r a/. .`,
/// `rsync -a a/ .`), the names the source holds. A destination is a directory when `-t`
/// names it, when there are several sources, when it ends in `/`, or when it is one now
/// (or the directory the command starts in is not known); never under `-T`.
fn into_directory(
    j: &mut Judge,
    c: &Ctx<'_, '_, '_>,
    name: &str,
    args: &[Word],
    target_dir: Option<&Word>,
    reach: paths::Reach,
) {
    let (ctx, cwd) = (c.w.ctx, c.cmd.cwd);
    let ops = operands(args);
    let (dest, sources): (&Word, Vec<&Word>) = match (target_dir, ops.split_last()) {
        (Some(t), _) => (
            t,
            ops.iter()
                .copied()
                .filter(|o| !target_value(args, o))
                .collect(),
        ),
        (None, Some((last, rest))) if !rest.is_empty() => (last, rest.to_vec()),
        _ => return,
    };
    let no_target =
        has(args, &["--no-target-directory"]) || (name != "rsync" && short_flag(args, 'T'));
    if no_target {
        // `cp -rT SRC DIR` copies what SRC holds into DIR.
        if name == "cp" {
            j.content_write(dest, cwd, ctx, name);
        }
        return;
    }
    let is_dir = target_dir.is_some()
        || sources.len() > 1
        || dest.value.ends_with('/')
        || may_be_dir(dest, cwd);
    if !is_dir || dest.unknown || dest.glob {
        return;
    }
    for src in sources {
        let last = src
            .value
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or("");
        let contents = matches!(last, "." | "..")
            || (name == "rsync" && src.value.ends_with('/') && src.value != "/");
        if contents {
            j.content_write(dest, cwd, ctx, name);
        } else if let Some(w) = inside(dest, src) {
            j.write_reaching(&w, cwd, ctx, name, reach);
            holds_protected_names(j, src, cwd, name);
        }
    }
}

/// A directory copied or moved whole that holds a repository or a name programs load from
/// the directory they start in (`cp -r a/b .` with `a/b/.git/hooks`, `a/b/.claude`): a new
/// nested repository or project configuration, whose names the source chose.
fn holds_protected_names(j: &mut Judge, src: &Word, cwd: &super::walk::Cwd, name: &str) {
    let Some(dirs) = cwd else {
        return;
    };
    let protected = |d: &std::path::Path| {
        std::fs::read_dir(d).is_ok_and(|rd| {
            rd.flatten().take(4096).any(|e| {
                let n = e.file_name();
                n == ".git" || crate::capability::loaded_where_started(&n, false)
            })
        })
    };
    let found = dirs.iter().any(|d| {
        let (real, _) = paths::split_real(&d.join(&src.value), d);
        real.is_dir() && protected(&real)
    });
    if found {
        j.finding(&format!(
            "[shell.write.content] `{name}` of `{}` places the repository or project configuration it holds",
            src.display
        ));
    }
}

/// Whether `w` names a directory from some directory the command may start in (or from one
/// not known).
pub(crate) fn may_be_dir(w: &Word, cwd: &super::walk::Cwd) -> bool {
    let Some(dirs) = cwd else {
        return true;
    };
    dirs.iter().any(|d| {
        let (named, _) = paths::split_real(&d.join(&w.value), d);
        named.is_dir()
    })
}

/// `dest/NAME`, NAME the last part of `src` as written (a glob stays one), as a word.
pub(crate) fn inside(dest: &Word, src: &Word) -> Option<Word> {
    if src.unknown {
        return None;
    }
    let trimmed = src.value.trim_end_matches('/');
    let base = trimmed.rsplit_once('/').map_or(trimmed, |(_, b)| b);
    if base.is_empty() || base == "." || base == ".." {
        return None;
    }
    let start = trimmed.len() - base.len();
    let prefix = format!("{}/", dest.value.trim_end_matches('/'));
    let mut w = src.clone();
    w.quoted_wild = src
        .quoted_wild
        .iter()
        .filter(|o| (start..trimmed.len()).contains(*o))
        .map(|o| o - start + prefix.len())
        .collect();
    w.value = format!("{prefix}{base}");
    w.display = format!("{}/{base}", dest.display.trim_end_matches('/'));
    w.raw = w.display.clone();
    w.exact = dest.exact && src.exact;
    Some(w)
}

/// `rsync` and `scp` to or from another host, and `rsync` options that delete files.
fn remote_or_deleting(j: &mut Judge, name: &str, args: &[Word], ops: &[&Word]) {
    if ops
        .iter()
        .any(|o| o.value.contains(':') && !o.value.starts_with('/'))
    {
        j.t.network = true;
        j.raise(
            Class::Network,
            format!("[shell.network] `{name}` to or from a remote host"),
        );
    }
    if has(
        args,
        &[
            "--delete",
            "--delete-before",
            "--delete-after",
            "--remove-source-files",
        ],
    ) {
        j.raise(
            Class::Destructive,
            format!("[shell.destructive] `{name} --delete` removes files"),
        );
    }
}

/// `ln -sf TARGET NAME` whose `NAME` replaces no data: nothing is there, or a symbolic link
/// to something that is no directory (through a link to a directory, `ln` would put the new
/// link inside it). Known from every directory the command may start in.
fn replaces_nothing(args: &[Word], ops: &[&Word], cwd: &super::walk::Cwd) -> bool {
    let symbolic = short_flag(args, 's') || has(args, &["--symbolic"]);
    let (Some(dirs), [_, name]) = (cwd, ops) else {
        return false;
    };
    if !symbolic || !name.exact || name.unknown || name.glob || has(args, &["-t"]) {
        return false;
    }
    dirs.iter().all(|d| {
        let (named, _) = paths::split_real(&d.join(&name.value), d);
        match named.symlink_metadata() {
            Err(e) => e.kind() == std::io::ErrorKind::NotFound,
            Ok(m) => m.file_type().is_symlink() && !named.is_dir(),
        }
    })
}

pub(crate) fn destructive(j: &mut Judge, c: &Ctx<'_, '_, '_>, name: &str, args: &[Word]) {
    match name {
        "kill" | "killall" | "pkill" => signals(j, name, args),
        "shutdown" | "reboot" | "halt" | "poweroff" => j.raise(
            Class::Privilege,
            format!("[shell.privilege] `{name}` stops the machine"),
        ),
        "crontab" => {
            if !has(args, &["-l"]) {
                j.raise(
                    Class::ConfigChange,
                    "[shell.persistence] `crontab` schedules commands",
                );
            }
        }
        "dd" => dd(j, c, args),
        _ => removes(j, c, name, args),
    }
}

/// `kill`, `killall`, `pkill`: destructive unless they only list signals; `kill` of pid -1
/// signals every process.
fn signals(j: &mut Judge, name: &str, args: &[Word]) {
    if name == "kill" && kills_all(args) {
        j.raise(
            Class::Malicious,
            "[shell.malicious.kill-all] `kill` of pid -1 signals every process",
        );
    }
    if args
        .iter()
        .all(|a| matches!(a.value.as_str(), "-l" | "-L" | "--list"))
        && !args.is_empty()
    {
        return;
    }
    j.raise(
        Class::Destructive,
        format!("[shell.destructive] `{name}` signals processes"),
    );
}

/// Whether `kill ARGS` names pid -1. The first option is the signal (`-1` there is SIGHUP,
/// `-0` and `-15` are signals too); a `-1` after `--` or after the signal is the pid that
/// means every process. A pid of `1` is init, which is destructive, not kill-all.
fn kills_all(args: &[Word]) -> bool {
    let mut signal_seen = false;
    let mut options_done = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let v = a.value.as_str();
        if options_done || (signal_seen && v.starts_with('-')) {
            if v == "-1" {
                return true;
            }
            continue;
        }
        match v {
            "--" => options_done = true,
            "-s" | "-n" => {
                it.next();
                signal_seen = true;
            }
            _ if v.starts_with('-') && v.len() > 1 => signal_seen = true,
            _ => {}
        }
    }
    false
}

/// `dd of=FILE` writes its output, and wipes a device.
fn dd(j: &mut Judge, c: &Ctx<'_, '_, '_>, args: &[Word]) {
    for a in args {
        if let Some(of) = a.value.strip_prefix("of=") {
            if of.starts_with("/dev/") && !matches!(of, "/dev/null" | "/dev/stdout" | "/dev/stderr")
            {
                j.raise(
                    Class::Malicious,
                    format!("[shell.malicious.wipe] `dd` writes to device `{of}`"),
                );
            }
            let mut w = a.clone();
            w.value = of.to_string();
            w.display = of.to_string();
            j.write(&w, c.cmd.cwd, c.w.ctx, "dd output");
        }
    }
    j.raise(
        Class::Destructive,
        "[shell.destructive] `dd` overwrites data",
    );
}

/// `rm`, `chmod`, `shred` and the like over their operands: a recursive one over a critical
/// path, or under `$HOME` when the path is not known, wipes.
fn removes(j: &mut Judge, c: &Ctx<'_, '_, '_>, name: &str, args: &[Word]) {
    let recursive = short_flag(args, 'r') || short_flag(args, 'R') || has(args, &["--recursive"]);
    let ops = operands(args);
    let ops: Vec<&Word> = if matches!(name, "chmod" | "chown" | "chgrp" | "setfacl" | "chattr") {
        ops.into_iter().skip(1).collect()
    } else {
        ops
    };
    if has(args, &["--no-preserve-root"]) {
        j.raise(
            Class::Malicious,
            "[shell.malicious.wipe] `--no-preserve-root`",
        );
    }
    // Removing a link removes the link: what it leads to is untouched.
    let reach = if matches!(name, "rm" | "unlink" | "rmdir") {
        paths::Reach::Entry
    } else {
        paths::Reach::Target
    };
    for o in &ops {
        wipes(j, c, name, o, recursive);
        j.write_reaching(o, c.cmd.cwd, c.w.ctx, name, reach);
    }
    if name != "chmod" || !ops.is_empty() {
        j.raise(
            Class::Destructive,
            format!("[shell.destructive] `{name}` deletes or changes files irreversibly"),
        );
    }
    if ops.is_empty() {
        j.raise(Class::Destructive, format!("[shell.destructive] `{name}`"));
    }
}

/// One operand of a remover that wipes: a critical path, or `$HOME` under `rm -r`.
fn wipes(j: &mut Judge, c: &Ctx<'_, '_, '_>, name: &str, o: &Word, recursive: bool) {
    if is_critical_word(o, c) && (recursive || matches!(name, "shred" | "wipefs")) {
        j.raise(
            Class::Malicious,
            format!("[shell.malicious.wipe] `{name}` over `{}`", o.display),
        );
    }
    let home = o.raw.starts_with("$HOME")
        || o.raw.starts_with("\"$HOME\"")
        || o.raw.starts_with("${HOME}");
    if (o.unknown || o.subst) && recursive && name == "rm" && home {
        j.raise(
            Class::Malicious,
            "[shell.malicious.wipe] `rm -r` under $HOME",
        );
    }
}

/// `curl` options that change nothing but what is printed and how long it waits: a request to
/// the loopback with only these sends nothing of the host's and reaches no other machine.
const CURL_PLAIN_FLAGS: &str = "sSfiIvkLg";
const CURL_PLAIN_LONG: &[&str] = &[
    "--silent",
    "--show-error",
    "--fail",
    "--include",
    "--head",
    "--verbose",
    "--location",
    "--globoff",
    "--compressed",
];
const CURL_PLAIN_VALUED: &[&str] = &["-m", "--max-time", "--connect-timeout"];

/// `curl http://localhost:3000/health`: a plain request to the loopback, with no data, upload,
/// method, file, proxy or configuration option, to literal URLs only.
fn loopback_probe(args: &[Word]) -> bool {
    let mut i = 0;
    let mut urls = 0;
    while let Some(a) = args.get(i) {
        let v = a.value.as_str();
        i += 1;
        if !a.exact {
            return false;
        }
        if CURL_PLAIN_VALUED.contains(&v) {
            i += 1;
        } else if let Some(short) = v.strip_prefix('-').filter(|s| !s.starts_with('-')) {
            if short.is_empty() || !short.chars().all(|c| CURL_PLAIN_FLAGS.contains(c)) {
                return false;
            }
        } else if v.starts_with("--") {
            if !CURL_PLAIN_LONG.contains(&v) {
                return false;
            }
        } else if loopback_url(v) {
            urls += 1;
        } else {
            return false;
        }
    }
    urls > 0
}

/// An `http` URL (or a bare `host:port/...`, which curl takes as one) whose host is the
/// loopback, with no user part (`http://localhost@elsewhere/` goes elsewhere).
fn loopback_url(v: &str) -> bool {
    let rest = v
        .strip_prefix("http://")
        .or_else(|| v.strip_prefix("https://"))
        .unwrap_or(v);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.contains(['@', '%', '\\']) {
        return false;
    }
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => authority.split(':').next().unwrap_or(""),
    };
    host == "localhost"
        || host == "::1"
        || (host.starts_with("127.")
            && host.split('.').count() == 4
            && host.split('.').all(|p| p.parse::<u8>().is_ok()))
}

pub(crate) fn fetcher(j: &mut Judge, c: &Ctx<'_, '_, '_>, name: &str, args: &[Word]) {
    if name == "curl" && loopback_probe(args) {
        return;
    }
    j.t.network = true;
    j.raise(
        Class::Network,
        format!("[shell.network] `{name}` downloads or uploads"),
    );
    let ctx = c.w.ctx;
    for (i, a) in args.iter().enumerate() {
        let v = a.value.as_str();
        let next = args.get(i + 1);
        match v {
            "-o" | "--output" | "-O" | "--output-document" if name != "curl" || v != "-O" => {
                if let Some(f) = next
                    && f.value != "-"
                {
                    j.write(f, c.cmd.cwd, ctx, "download to");
                    j.t.download = Some(f.value.rsplit('/').next().unwrap_or("").to_string());
                }
            }
            "-O" | "--remote-name" => {
                let url = args.iter().rev().find(|x| x.value.contains("://"));
                if let Some(u) = url {
                    j.t.download = Some(u.value.rsplit('/').next().unwrap_or("").to_string());
                }
                j.write(&Word::literal("."), c.cmd.cwd, ctx, "download into");
            }
            "-d" | "--data" | "--data-binary" | "--data-raw" | "--data-urlencode" | "-F"
            | "--form" | "-T" | "--upload-file" | "--post-file" | "--body-file" => {
                if let Some(f) = next {
                    let file = f.value.rsplit('@').next().unwrap_or("");
                    if (f.value.contains('@')
                        || v == "-T"
                        || v == "--upload-file"
                        || v == "--post-file")
                        && paths::is_secret(file, ctx)
                    {
                        j.t.reads_secret = true;
                    }
                    if f.value == "@-" || f.value.ends_with("=@-") || f.value == "-" {
                        j.t.reads_secret |= matches!(c.stdin, super::classify::Stdin::File);
                    }
                }
            }
            _ => {}
        }
        if name == "wget"
            && v.starts_with("--post-file=")
            && paths::is_secret(v.trim_start_matches("--post-file="), ctx)
        {
            j.t.reads_secret = true;
        }
    }
    if name == "wget"
        && !args.iter().any(|a| {
            a.value.starts_with("-O")
                || a.value.starts_with("--output-document")
                || a.value == "--spider"
        })
    {
        if let Some(u) = args.iter().rev().find(|x| x.value.contains("://")) {
            j.t.download = Some(u.value.rsplit('/').next().unwrap_or("").to_string());
        }
        j.write(&Word::literal("."), c.cmd.cwd, ctx, "download into");
    }
}
