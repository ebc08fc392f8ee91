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
    let mut out = Vec::new();
    for (i, a) in args.iter().enumerate() {
        let v = a.value.as_str();
        for o in opts {
            let Some(rest) = v.strip_prefix(o) else {
                continue;
            };
            if rest.is_empty() {
                out.extend(args.get(i + 1).cloned());
            } else if let Some(val) = rest.strip_prefix('=') {
                out.push(attached_value(a, val));
            } else if attached.contains(o) {
                out.push(attached_value(a, rest));
            }
        }
    }
    out
}

fn attached_value(a: &Word, value: &str) -> Word {
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
    let dirs = values(args, &["-p", "--tmpdir"], &["-p"]);
    let template = super::operands(args)
        .into_iter()
        .find(|a| !dirs.iter().any(|d| d.raw == a.raw));
    match (dirs.first(), template) {
        (Some(d), _) => j.output(d, c.cmd.cwd, c.w.ctx, "mktemp"),
        (None, Some(t)) if t.value.contains('/') => j.output(t, c.cmd.cwd, c.w.ctx, "mktemp"),
        // The temporary directory, which the sandbox gives the command.
        (None, _) => j.write(
            &Word::literal("/tmp/tmp.XXXXXXXXXX"),
            c.cmd.cwd,
            c.w.ctx,
            "mktemp",
        ),
    }
}
