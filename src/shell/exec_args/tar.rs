//! `tar`: options that run a command, extraction, archive writes and the files it reads, with
//! options read as GNU tar reads them: a first word without a dash (`tar czf A DIR`, whose
//! letters take their values from the words after it), bundles (`-xzvf A`, `-cfA`, `-C/etc`),
//! `--name=VALUE`, `--name VALUE` and unique abbreviations of long names (`--dir=/etc`).

use super::Ctx;
use crate::shell::Class;
use crate::shell::classify::Judge;
use crate::shell::commands::outputs::attached_value;
use crate::shell::words::Word;

/// Short options that take a value.
const SHORT_VALUES: &str = "bCfFgHIKLNTVX";

/// Long options that take a value, and the short option each stands for (`' '`: none).
const LONG_VALUES: &[(&str, char)] = &[
    ("after-date", 'N'),
    ("blocking-factor", 'b'),
    ("checkpoint-action", ' '),
    ("directory", 'C'),
    ("exclude", ' '),
    ("exclude-from", 'X'),
    ("file", 'f'),
    ("files-from", 'T'),
    ("format", 'H'),
    ("group", ' '),
    ("index-file", ' '),
    ("info-script", 'F'),
    ("label", 'V'),
    ("listed-incremental", 'g'),
    ("mode", ' '),
    ("new-volume-script", 'F'),
    ("newer", 'N'),
    ("owner", ' '),
    ("rmt-command", ' '),
    ("rsh-command", ' '),
    ("starting-file", 'K'),
    ("strip-components", ' '),
    ("suffix", ' '),
    ("tape-length", 'L'),
    ("to-command", ' '),
    ("transform", ' '),
    ("use-compress-program", 'I'),
    ("volno-file", ' '),
    ("xform", ' '),
];

/// Long options without a value that change what tar does here.
const LONG_FLAGS: &[(&str, char)] = &[
    ("absolute-names", 'P'),
    ("append", 'r'),
    ("catenate", 'A'),
    ("concatenate", 'A'),
    ("create", 'c'),
    ("extract", 'x'),
    ("force-local", ' '),
    ("get", 'x'),
    ("to-stdout", 'O'),
    ("update", 'u'),
];

/// One option as tar reads it: its short letter when it has one, its long name otherwise.
struct Opt {
    short: char,
    long: &'static str,
    value: Option<Word>,
}

/// What the options and operands of one `tar` say.
#[derive(Default)]
struct Parsed {
    opts: Vec<Opt>,
    operands: Vec<Word>,
}

impl Parsed {
    fn has(&self, short: char) -> bool {
        self.opts.iter().any(|o| o.short == short)
    }
    fn values(&self, short: char, long: &str) -> impl Iterator<Item = &Word> {
        self.opts
            .iter()
            .filter(move |o| (short != ' ' && o.short == short) || o.long == long)
            .filter_map(|o| o.value.as_ref())
    }
}

pub(super) fn tar(j: &mut Judge, c: &Ctx<'_, '_, '_>, args: &[Word]) {
    let p = parse(args);
    for o in &p.opts {
        let runs = matches!(o.short, 'I' | 'F')
            || matches!(
                o.long,
                "to-command" | "checkpoint-action" | "rsh-command" | "rmt-command"
            );
        if runs {
            let name = if o.short == ' ' {
                format!("--{}", o.long)
            } else {
                format!("-{}", o.short)
            };
            j.raise(
                Class::Opaque,
                format!("[shell.exec-arg.tar] `tar {name}` runs a command"),
            );
        }
    }
    remote_archive(j, &p);
    let (cwd, ctx) = (c.cmd.cwd, c.w.ctx);
    let dirs: Vec<&Word> = p.values('C', "directory").collect();
    if p.has('x') && !p.has('O') {
        if p.has('P') {
            j.raise(
                Class::Opaque,
                "[shell.write.unknown] `tar -P` extracts members at the absolute paths the \
                 archive names",
            );
        }
        extraction(j, c, &p, &dirs);
    }
    let creates = p.has('c') || p.has('r') || p.has('u') || p.has('A');
    if creates && let Some(f) = p.values('f', "file").find(|f| f.value != "-") {
        j.write(f, cwd, ctx, "tar archive");
    }
    for f in p
        .values('g', "listed-incremental")
        .chain(p.values(' ', "index-file"))
    {
        j.write(f, cwd, ctx, "tar's record");
    }
    for f in p.values(' ', "volno-file") {
        j.write(f, cwd, ctx, "tar's record");
    }
    for f in p
        .values('T', "files-from")
        .chain(p.values('X', "exclude-from"))
    {
        j.read(f, cwd, ctx);
    }
    // Members are read relative to the last `-C` before them; read under every one.
    if creates && let Some(last) = dirs.last() {
        for m in &p.operands {
            j.read(&under(last, m), cwd, ctx);
        }
    }
}

/// `tar -x`: the members named are written under the last `-C` (or the working directory);
/// without names, or with `--transform`, the archive's names are, whatever they are.
fn extraction(j: &mut Judge, c: &Ctx<'_, '_, '_>, p: &Parsed, dirs: &[&Word]) {
    let (cwd, ctx) = (c.cmd.cwd, c.w.ctx);
    let here = Word::literal(".");
    let last = dirs.last().copied().unwrap_or(&here);
    // A member named by a wildcard (`--wildcards '*'`) is any member.
    let renames = p
        .opts
        .iter()
        .any(|o| matches!(o.long, "transform" | "xform" | "wildcards"))
        || p.operands.iter().any(|m| m.value.contains(['*', '?', '[']));
    let into = if dirs.is_empty() {
        vec![&here]
    } else {
        dirs.to_vec()
    };
    for d in into {
        if p.operands.is_empty() || renames {
            j.content_write(d, cwd, ctx, "tar extraction into");
        } else {
            j.write(d, cwd, ctx, "tar extraction into");
        }
    }
    for m in &p.operands {
        j.write(&under(last, m), cwd, ctx, "tar member");
    }
}

/// An archive named `host:path` (a `:` before any `/`) is on another host: GNU tar reaches it
/// through `rsh` (or `--rsh-command`), unless `--force-local` says the name is a local file.
fn remote_archive(j: &mut Judge, p: &Parsed) {
    if p.opts.iter().any(|o| o.long == "force-local") {
        return;
    }
    let remote = p.values('f', "file").find(|f| {
        f.value
            .find(':')
            .is_some_and(|k| k > 0 && !f.value[..k].contains('/'))
    });
    if let Some(f) = remote {
        j.t.network = true;
        j.raise(
            Class::Network,
            format!(
                "[shell.network] `tar -f {}` names an archive on another host, reached with rsh",
                f.display
            ),
        );
    }
}

/// `member` as tar finds it after `-C dir`.
fn under(dir: &Word, member: &Word) -> Word {
    if member.value.starts_with('/') {
        return member.clone();
    }
    let join = |a: &str, b: &str| format!("{}/{b}", a.trim_end_matches('/'));
    Word {
        raw: join(&dir.raw, &member.raw),
        display: join(&dir.display, &member.display),
        value: if dir.glob || member.glob {
            join(&dir.pattern(), &member.pattern())
        } else {
            join(&dir.value, &member.value)
        },
        exact: dir.exact && member.exact,
        glob: dir.glob || member.glob,
        quoted_wild: Vec::new(),
        subst: dir.subst || member.subst,
        unknown: dir.unknown || member.unknown,
        var_unknown: dir.var_unknown || member.var_unknown,
        var: dir.var || member.var,
        subst_output: dir.subst_output || member.subst_output,
    }
}

fn parse(args: &[Word]) -> Parsed {
    let mut p = Parsed::default();
    let mut i = 0;
    // The traditional first word: letters whose values are the words after it, in order.
    if let Some(first) = args.first()
        && !first.value.starts_with('-')
    {
        i = 1;
        for ch in first.value.chars() {
            let value = SHORT_VALUES.contains(ch).then(|| args.get(i).cloned());
            i += usize::from(value.is_some());
            push_short(&mut p, ch, value.flatten());
        }
    }
    while let Some(a) = args.get(i) {
        i += 1;
        let v = a.value.as_str();
        if v == "--" {
            p.operands.extend(args[i..].iter().cloned());
            break;
        }
        if let Some(long) = v.strip_prefix("--") {
            i += long_option(&mut p, long, a, args.get(i));
        } else if v.len() > 1 && v.starts_with('-') {
            i += bundle(&mut p, a, args.get(i));
        } else {
            p.operands.push(a.clone());
        }
    }
    p
}

/// A bundle of short options (`-xzvf`); returns how many of the following words it took.
fn bundle(p: &mut Parsed, a: &Word, next: Option<&Word>) -> usize {
    let v = a.value.as_str();
    for (at, ch) in v.char_indices().skip(1) {
        if SHORT_VALUES.contains(ch) {
            let rest = &v[at + ch.len_utf8()..];
            if rest.is_empty() {
                push_short(p, ch, next.cloned());
                return usize::from(next.is_some());
            }
            push_short(p, ch, Some(attached_value(a, rest)));
            return 0;
        }
        push_short(p, ch, None);
    }
    0
}

/// `--name[=VALUE]` or `--name VALUE`; returns how many of the following words it took.
fn long_option(p: &mut Parsed, long: &str, a: &Word, next: Option<&Word>) -> usize {
    let (name, value) = match long.split_once('=') {
        Some((n, v)) => (n, Some(attached_value(a, v))),
        None => (long, None),
    };
    let unique = |table: &'static [(&'static str, char)]| {
        let exact = table.iter().find(|(n, _)| *n == name);
        let mut prefixed = table.iter().filter(|(n, _)| n.starts_with(name));
        exact.or_else(|| prefixed.next().filter(|_| prefixed.next().is_none()))
    };
    if let Some((n, short)) = unique(LONG_VALUES) {
        let taken = value.is_none() && next.is_some();
        let value = value.or_else(|| next.cloned());
        p.opts.push(Opt {
            short: *short,
            long: n,
            value,
        });
        return usize::from(taken);
    }
    if let Some((n, short)) = unique(LONG_FLAGS) {
        p.opts.push(Opt {
            short: *short,
            long: n,
            value: None,
        });
    }
    0
}

fn push_short(p: &mut Parsed, short: char, value: Option<Word>) {
    let long = LONG_VALUES
        .iter()
        .chain(LONG_FLAGS)
        .find(|(_, s)| *s == short)
        .map_or("", |(n, _)| *n);
    p.opts.push(Opt { short, long, value });
}
