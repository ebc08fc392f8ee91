//! Options that name where a tool writes its output: `cargo --target-dir`, `cargo install
//! --root`, `pip install --target/--prefix/--root`, `npm --prefix`, `go build -o`,
//! `mktemp -p`. Each is judged as a write of that directory, and one outside the workspace is a
//! finding (see `Judge::output`).

use crate::shell::classify::Judge;
use crate::shell::exec_args::Ctx;
use crate::shell::words::Word;

/// The values of `opts` among `args`: `--opt VALUE`, `--opt=VALUE`, and `-oVALUE` for the
/// single-letter options listed in `attached`.
pub(crate) fn values(args: &[Word], opts: &[&str], attached: &[&str]) -> Vec<Word> {
    collect(args, opts, |v, o| exact_value(v, o, attached.contains(&o)))
}

/// As [`values`], for programs that parse options the way getopt does: a single-letter option
/// also takes its value at the end of a bundle of flags (`-nro FILE`, `-nroFILE`), and a long
/// one may be shortened to any prefix of three letters or more (`--outp=FILE`).
pub(crate) fn getopt_values(args: &[Word], opts: &[&str]) -> Vec<Word> {
    collect(args, opts, |v, o| {
        let short = o.len() == 2 && !o.starts_with("--");
        exact_value(v, o, short).or_else(|| {
            if short {
                bundled_value(v, o)
            } else {
                abbreviated_value(v, o)
            }
        })
    })
}

/// Where an option's value is: the next word, or this word's rest.
enum Value<'a> {
    Next,
    Own(&'a str),
}

fn collect(
    args: &[Word],
    opts: &[&str],
    find: impl for<'a> Fn(&'a str, &str) -> Option<Value<'a>>,
) -> Vec<Word> {
    let mut out = Vec::new();
    for (i, a) in args.iter().enumerate() {
        for o in opts {
            match find(a.value.as_str(), o) {
                Some(Value::Next) => out.extend(args.get(i + 1).cloned()),
                Some(Value::Own(val)) => out.push(attached_value(a, val)),
                None => {}
            }
        }
    }
    out
}

/// `OPT VALUE`, `OPT=VALUE`, and `-oVALUE` when `attached`.
fn exact_value<'a>(v: &'a str, o: &str, attached: bool) -> Option<Value<'a>> {
    let rest = v.strip_prefix(o)?;
    if rest.is_empty() {
        Some(Value::Next)
    } else if let Some(val) = rest.strip_prefix('=') {
        Some(Value::Own(val))
    } else {
        attached.then_some(Value::Own(rest))
    }
}

/// `-nro FILE` and `-nroFILE`: the letter after other flags' letters.
fn bundled_value<'a>(v: &'a str, o: &str) -> Option<Value<'a>> {
    let body = v.strip_prefix('-').filter(|b| !b.starts_with('-'))?;
    let letter = o.strip_prefix('-')?;
    let k = body.find(letter)?;
    if k == 0 || !body[..k].bytes().all(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    let rest = &body[k + letter.len()..];
    Some(if rest.is_empty() {
        Value::Next
    } else {
        Value::Own(rest)
    })
}

/// `--outp FILE` and `--outp=FILE` for `--output`.
fn abbreviated_value<'a>(v: &'a str, o: &str) -> Option<Value<'a>> {
    let (name, val) = match v.split_once('=') {
        Some((n, val)) => (n, Some(val)),
        None => (v, None),
    };
    let ok = name.len() >= 5 && name.starts_with("--") && o.starts_with(name);
    ok.then(|| val.map_or(Value::Next, Value::Own))
}

/// `a` with its value replaced by `value` (an option's attached value).
pub(crate) fn attached_value(a: &Word, value: &str) -> Word {
    Word {
        value: value.to_string(),
        display: value.to_string(),
        ..a.clone()
    }
}

/// Judge each value of `opts` as an output of `what`.
pub(crate) fn judge(j: &mut Judge, c: &Ctx<'_, '_, '_>, args: &[Word], opts: &[&str], what: &str) {
    for w in values(args, opts, &[]) {
        j.output(&w, c.cmd.cwd, c.w.ctx, what);
    }
}

/// `mktemp`: writes a new file or directory in `-p DIR`/`--tmpdir=DIR`, in the template's
/// directory, or in the temporary directory; `-u` only prints a name.
pub(crate) fn mktemp(j: &mut Judge, c: &Ctx<'_, '_, '_>, args: &[Word]) {
    if args
        .iter()
        .any(|a| a.value == "-u" || a.value == "--dry-run")
    {
        return;
    }
    // Written out, the name is the one `$(mktemp)` stands for elsewhere on the line.
    let tmp = c.w.ctx.workspace.tmp.as_deref().and_then(|t| t.to_str());
    let plain: Option<Vec<&str>> = args
        .iter()
        .map(|a| (a.exact || !(a.unknown || a.subst)).then_some(a.value.as_str()))
        .collect();
    if let Some(made) = plain.and_then(|p| crate::shell::words::mktemp_made(&p, ".", tmp)) {
        j.write(&Word::literal(&made), c.cmd.cwd, c.w.ctx, "mktemp");
        return;
    }
    let dirs = values(args, &["-p", "--tmpdir"], &["-p"]);
    let template = super::operands(args)
        .into_iter()
        .find(|a| !dirs.iter().any(|d| d.raw == a.raw));
    match (dirs.first(), template) {
        (Some(d), _) => j.output(d, c.cmd.cwd, c.w.ctx, "mktemp"),
        (None, Some(t)) if t.value.contains('/') => j.output(t, c.cmd.cwd, c.w.ctx, "mktemp"),
        // The temporary directory, which the sandbox gives the command (`TMPDIR` names it).
        (None, _) => {
            let tmp = c.w.ctx.workspace.tmp.as_deref();
            let dir = tmp.unwrap_or(std::path::Path::new("/tmp"));
            let name = dir.join("tmp.XXXXXXXXXX");
            j.write(
                &Word::literal(&name.to_string_lossy()),
                c.cmd.cwd,
                c.w.ctx,
                "mktemp",
            );
        }
    }
}
