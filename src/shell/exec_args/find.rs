//! `find`: `-exec` and friends run a nested command, `-delete` removes,
//! `-fprint` writes.

use super::Ctx;
use crate::shell::classify::{self, Judge};
use crate::shell::words::Word;
use crate::shell::{Class, commands, paths, tables, tree_links};

pub(super) fn find(j: &mut Judge, c: Ctx<'_, '_, '_>, args: &[Word]) {
    let mut i = global_options(args);
    let mut roots: Vec<&Word> = Vec::new();
    while let Some(a) = args.get(i) {
        if a.value.starts_with('-') || a.value == "(" || a.value == "!" {
            break;
        }
        roots.push(a);
        i += 1;
    }
    while let Some(a) = args.get(i) {
        let v = a.value.as_str();
        i += 1;
        match v {
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let start = i;
                while args
                    .get(i)
                    .is_some_and(|x| x.value != ";" && x.value != "+")
                {
                    i += 1;
                }
                let inner = args.get(start..i).unwrap_or(&[]);
                i += 1;
                if inner.is_empty() {
                    j.raise(
                        Class::Opaque,
                        "[shell.exec-arg.find] `find -exec` without a command",
                    );
                    continue;
                }
                runs_code(j, v, inner);
                let mut found = found_under(&roots, inner);
                found.extend(found_links(j, c.cmd.cwd, args, inner, v));
                // `-execdir` runs the command in each found file's directory: where its other
                // relative operands land is only known then.
                let unknown: crate::shell::walk::Cwd = None;
                let cwd = if matches!(v, "-execdir" | "-okdir") {
                    &unknown
                } else {
                    c.cmd.cwd
                };
                for f in found {
                    classify::child(c.w, &f, cwd, &format!("find {v}"), c.scope);
                }
            }
            "-delete" => {
                let critical = roots.iter().any(|r| is_critical_word(r, &c));
                if critical {
                    j.raise(
                        Class::Malicious,
                        "[shell.malicious.wipe] `find -delete` over the root or home directory",
                    );
                }
                j.raise(
                    Class::Destructive,
                    "[shell.destructive.find-delete] `find -delete` removes files",
                );
                j.finding("[shell.exec-arg.find-delete] `find -delete` removes what it finds");
                for r in &roots {
                    j.write(r, c.cmd.cwd, c.w.ctx, "find -delete under");
                }
            }
            "-fprint" | "-fprint0" | "-fprintf" | "-fls" => {
                if let Some(f) = args.get(i) {
                    j.output(f, c.cmd.cwd, c.w.ctx, "find output file");
                }
            }
            _ => {}
        }
    }
}

/// How many words find's options before its starting points take: `-P`, `-H`, `-L`, `-O3`,
/// `-D DEBUGOPTS`, and a `--` that ends them.
pub(crate) fn global_options(args: &[Word]) -> usize {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        match a.value.as_str() {
            "-P" | "-H" | "-L" => i += 1,
            "-D" => i += 2,
            "--" => return i + 1,
            v if v.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    i
}

/// The nested command once for each starting point, with `{}` standing for a path found
/// below it (`./{}`, a path under the starting point): what `rm -rf {} +` removes lies under
/// where find looked.
/// Without a starting point find looks in `.`; a starting point that is not a known path
/// leaves `{}` unknown.
fn found_under(roots: &[&Word], inner: &[Word]) -> Vec<Vec<Word>> {
    let dot = Word::literal(".");
    let roots: Vec<&Word> = if roots.is_empty() {
        vec![&dot]
    } else {
        roots.to_vec()
    };
    roots
        .iter()
        .map(|r| {
            inner
                .iter()
                .map(|x| {
                    let mut x = x.clone();
                    // A path through a found name (`{}/n`) names whatever lies below each.
                    if x.value.contains("{}/") {
                        x.unknown = true;
                        x.var_unknown = true;
                        x.exact = false;
                    } else if x.value.contains("{}") {
                        if r.exact {
                            let found = format!("{}/{{}}", r.value.trim_end_matches('/'));
                            x.value = x.value.replace("{}", &found);
                        } else {
                            x.unknown = true;
                            x.exact = false;
                        }
                    }
                    x
                })
                .collect()
        })
        .collect()
}

/// The nested command once for each link under find's roots that leads out of them, with
/// `{}` standing for the link: `cat {}` opens where it leads, which judging the roots did not
/// cover.
fn found_links(
    j: &mut Judge,
    cwd: &crate::shell::walk::Cwd,
    args: &[Word],
    inner: &[Word],
    v: &str,
) -> Vec<Vec<Word>> {
    let listed = commands::listed_links("find", args);
    let links = match tree_links::listed(&listed, &j.trees, cwd) {
        Ok(links) => links,
        Err(e) => {
            j.raise(
                Class::Opaque,
                tree_links::unknown(&e, &format!("`find {v}`")),
            );
            return Vec::new();
        }
    };
    links
        .iter()
        .map(|l| {
            let l = l.to_string_lossy();
            inner
                .iter()
                .map(|x| {
                    let mut x = x.clone();
                    x.value = x.value.replace("{}", &l);
                    x
                })
                .collect()
        })
        .collect()
}

/// `find -exec sh -c '...'`: the executing argument runs a shell or an interpreter, which is a
/// finding of the `find` segment itself, whatever its own code turns out to be.
fn runs_code(j: &mut Judge, v: &str, inner: &[Word]) {
    // Past wrappers, their options, assignments and durations (`env A=1 nice -n 5 sh`).
    const WRAPPERS: &[&str] = &[
        "env", "nice", "nohup", "timeout", "command", "stdbuf", "time",
    ];
    let lead = inner
        .iter()
        .map(|w| w.value.rsplit('/').next().unwrap_or(""))
        .find(|v| {
            !WRAPPERS.contains(v)
                && !v.starts_with('-')
                && !v.contains('=')
                && !v
                    .chars()
                    .all(|c| c.is_ascii_digit() || c == '.' || c == 's')
        })
        .unwrap_or("");
    let code = tables::SHELLS.contains(&lead)
        || tables::FOREIGN_SHELLS.contains(&lead)
        || tables::INTERPRETERS.iter().any(|(n, _)| *n == lead)
        || matches!(lead, "xargs" | "eval" | "exec" | "sudo");
    if code {
        j.raise(
            Class::Opaque,
            format!("[shell.exec-arg.find-shell] `find {v} {lead}` runs a shell or an interpreter"),
        );
    }
}

pub(crate) fn is_critical_word(w: &Word, c: &Ctx<'_, '_, '_>) -> bool {
    if w.unknown || w.subst {
        return false;
    }
    let cwds: Vec<std::path::PathBuf> = match c.cmd.cwd {
        Some(v) => v.clone(),
        None => vec![c.w.ctx.cwd.clone()],
    };
    let value = if w.glob {
        let cut = w.value.find(['*', '?', '[']).unwrap_or(w.value.len());
        let p = w.value.get(..cut).unwrap_or("");
        if p.is_empty() {
            ".".to_string()
        } else {
            p.to_string()
        }
    } else {
        w.value.clone()
    };
    cwds.iter()
        .any(|cwd| paths::is_critical(&paths::resolve(&value, cwd), c.w.ctx))
}
