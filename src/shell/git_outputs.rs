//! Files and directories `git` subcommands create outside the repository's own database:
//! `git init DIR` (and `--bare`, `--separate-git-dir=DIR`), `git format-patch` (`-o DIR`, else
//! the working directory),
//! `git archive -o FILE`, `git bundle create FILE`. Each is judged as a write of that path, so
//! one outside the writable set meets the plan and one inside the workspace is a write, not
//! read-only. `git init --template=DIR` and `git clone --template=DIR` copy DIR's hooks and
//! configuration into the new repository, which later commands run: a finding.

use super::Class;
use super::classify::Judge;
use super::commands::outputs::values;
use super::exec_args::Ctx;
use super::words::Word;

/// Options of `git init` that take a separate value (`--template DIR`).
const INIT_VALUED: &[&str] = &[
    "--template",
    "--separate-git-dir",
    "--object-format",
    "--ref-format",
    "-b",
    "--initial-branch",
];

/// Judge the paths `git SUB REST` writes outside the repository it runs in.
pub(crate) fn judge(j: &mut Judge, c: &Ctx<'_, '_, '_>, sub: &str, rest: &[Word]) {
    if matches!(sub, "init" | "clone") {
        template(j, sub, rest);
    }
    let targets = match sub {
        "init" => {
            let mut t = values(rest, &["--separate-git-dir"], &[]);
            t.extend(init_directory(rest));
            t
        }
        "clone" => values(rest, &["--separate-git-dir"], &[]),
        "format-patch" => format_patch_outputs(rest),
        "archive" => values(rest, &["-o", "--output"], &["-o"]),
        "bundle" => bundle_file(rest).into_iter().collect(),
        _ => Vec::new(),
    };
    for t in targets {
        j.output(&t, c.cmd.cwd, c.w.ctx, &format!("git {sub} output"));
    }
}

/// Where `git format-patch` writes its patch files: the `-o` directory or `--output` file,
/// else the working directory (`0001-*.patch`); nothing with `--stdout`.
fn format_patch_outputs(rest: &[Word]) -> Vec<Word> {
    let named = values(rest, &["-o", "--output-directory", "--output"], &["-o"]);
    if !named.is_empty() || rest.iter().any(|a| a.value == "--stdout") {
        return named;
    }
    vec![Word::literal(".")]
}

/// `--template=DIR`: DIR's hooks become the new repository's hooks.
fn template(j: &mut Judge, sub: &str, rest: &[Word]) {
    let hit = rest
        .iter()
        .find(|a| a.value == "--template" || a.value.starts_with("--template="));
    if let Some(a) = hit {
        j.raise(
            Class::Opaque,
            format!(
                "[shell.exec-arg.git] `git {sub} {}` copies hooks the repository then runs",
                a.display
            ),
        );
    }
}

/// The directory operand of `git init`, skipping the values of options that take one.
fn init_directory(rest: &[Word]) -> Option<Word> {
    let mut skip = false;
    for a in rest {
        if skip {
            skip = false;
            continue;
        }
        if INIT_VALUED.contains(&a.value.as_str()) {
            skip = true;
        } else if a.value == "--" {
            continue;
        } else if !a.value.starts_with('-') {
            return Some(a.clone());
        }
    }
    None
}

/// `git bundle create FILE ...` writes FILE.
fn bundle_file(rest: &[Word]) -> Option<Word> {
    let mut ops = rest.iter().filter(|a| !a.value.starts_with('-'));
    match ops.next() {
        Some(v) if v.value == "create" => ops.next().cloned(),
        _ => None,
    }
}
