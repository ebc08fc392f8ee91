//! Formatters and fixers rewrite the files they are given (`ruff format PATH`, `rustfmt FILE`,
//! `cargo fmt -- FILE`, `gofmt -w`, `prettier --write`, `yq -i`), and some write outputs
//! (`tsc --outFile`). Rewriting the project's sources is their job and stays allowed; an
//! operand outside the workspace, or on the safety floor, is judged as the write it is.

use super::outputs;
use crate::shell::classify::Judge;
use crate::shell::exec_args::Ctx;
use crate::shell::words::Word;

/// Per formatter: the words that make it rewrite (any of them, or `None` when it always
/// does), the words that make it only report, and its options that take a value (skipped,
/// so that `--config ../ruff.toml` is not taken for a file to rewrite).
struct Rewriter {
    name: &'static str,
    when: Option<&'static [&'static str]>,
    unless: &'static [&'static str],
    values: &'static [&'static str],
}

const REWRITERS: &[Rewriter] = &[
    Rewriter {
        name: "black",
        when: None,
        unless: &["--check", "--diff"],
        values: &[
            "--config",
            "-l",
            "--line-length",
            "-t",
            "--target-version",
            "--include",
            "--exclude",
            "--extend-exclude",
            "--force-exclude",
            "--stdin-filename",
            "-W",
            "--workers",
            "--required-version",
        ],
    },
    Rewriter {
        name: "isort",
        when: None,
        unless: &["--check-only", "--check", "-c", "--diff", "--df"],
        values: &[
            "--settings-path",
            "--sp",
            "--settings-file",
            "--settings",
            "-l",
            "--line-length",
            "--profile",
            "-p",
            "--project",
            "-o",
            "--thirdparty",
            "-a",
            "--add-import",
            "-m",
            "--multi-line",
            "--src",
            "-s",
            "--skip",
            "--filename",
        ],
    },
    Rewriter {
        name: "rustfmt",
        when: None,
        unless: &["--check"],
        values: &[
            "--config-path",
            "--edition",
            "--emit",
            "--config",
            "--color",
            "--print-config",
            "--style-edition",
        ],
    },
    Rewriter {
        name: "gofmt",
        when: Some(&["-w"]),
        unless: &[],
        values: &["-r"],
    },
    Rewriter {
        name: "prettier",
        when: Some(&["--write", "-w"]),
        unless: &["--check", "-c"],
        values: &[
            "--config",
            "--ignore-path",
            "--plugin",
            "--parser",
            "--stdin-filepath",
            "--log-level",
            "--cache-location",
            "--print-width",
            "--tab-width",
        ],
    },
    Rewriter {
        name: "eslint",
        when: Some(&["--fix"]),
        unless: &["--fix-dry-run"],
        values: &[
            "-c",
            "--config",
            "--ext",
            "--parser",
            "--plugin",
            "--rule",
            "--rulesdir",
            "--ignore-path",
            "--ignore-pattern",
            "-f",
            "--format",
            "--cache-location",
            "--resolve-plugins-relative-to",
            "--max-warnings",
        ],
    },
    Rewriter {
        name: "clang-format",
        when: Some(&["-i"]),
        unless: &[],
        values: &[
            "--style",
            "--assume-filename",
            "--lines",
            "--offset",
            "--length",
        ],
    },
];

/// ruff's subcommands that rewrite, and its options that take a value.
const RUFF_VALUES: &[&str] = &[
    "--config",
    "--output-format",
    "--target-version",
    "--line-length",
    "--select",
    "--ignore",
    "--extend-select",
    "--extend-ignore",
    "--exclude",
    "--extend-exclude",
    "--per-file-ignores",
    "--stdin-filename",
    "--fixable",
    "--unfixable",
    "--cache-dir",
    "-o",
    "--output-file",
];

/// Judge what `name` rewrites and writes; false when it is not a formatter known here.
pub(crate) fn judge(j: &mut Judge, c: &Ctx<'_, '_, '_>, name: &str, args: &[Word]) -> bool {
    match name {
        "ruff" => ruff(j, c, args),
        "tsc" => outputs::judge(
            j,
            c,
            args,
            &[
                "--outFile",
                "--outDir",
                "--declarationDir",
                "--tsBuildInfoFile",
                "-outFile",
                "-outDir",
                "--out",
            ],
            "tsc output",
        ),
        "yq" => in_place(j, c, args),
        _ => {
            let Some(r) = REWRITERS.iter().find(|r| r.name == name) else {
                return false;
            };
            let has = |list: &[&str]| args.iter().any(|a| list.contains(&a.value.as_str()));
            if r.when.is_none_or(has) && !has(r.unless) {
                rewrite_operands(j, c, args, r.values, name);
            }
        }
    }
    true
}

fn ruff(j: &mut Judge, c: &Ctx<'_, '_, '_>, args: &[Word]) {
    outputs::judge(
        j,
        c,
        args,
        &["-o", "--output-file", "--cache-dir"],
        "ruff output",
    );
    let Some(sub) = args.iter().position(|a| !a.value.starts_with('-')) else {
        return;
    };
    let rest = &args[sub + 1..];
    let has = |list: &[&str]| rest.iter().any(|a| list.contains(&a.value.as_str()));
    let rewrites = match args[sub].value.as_str() {
        "format" => !has(&["--check", "--diff"]),
        "check" => has(&["--fix", "--unsafe-fixes", "--fix-only"]) && !has(&["--diff"]),
        _ => false,
    };
    if rewrites {
        rewrite_operands(j, c, rest, RUFF_VALUES, "ruff");
    }
}

/// `cargo fmt`: the files after `--`, and the crate `--manifest-path` names.
pub(crate) fn cargo_fmt(j: &mut Judge, c: &Ctx<'_, '_, '_>, args: &[Word]) {
    if args.iter().any(|a| a.value == "--check") {
        return;
    }
    for m in outputs::getopt_values(args, &["--manifest-path"]) {
        j.rewrite(&m, c.cmd.cwd, c.w.ctx, "cargo fmt");
    }
    if let Some(dd) = args.iter().position(|a| a.value == "--") {
        rewrite_operands(
            j,
            c,
            &args[dd + 1..],
            &["--config-path", "--edition"],
            "cargo fmt",
        );
    }
}

/// `go fmt PACKAGES`: a package named by a path.
pub(crate) fn go_fmt(j: &mut Judge, c: &Ctx<'_, '_, '_>, args: &[Word]) {
    for a in args.iter().skip_while(|a| a.value != "fmt").skip(1) {
        let v = a.value.as_str();
        if v.starts_with('/') || v.starts_with('.') || v.starts_with('~') {
            j.rewrite(a, c.cmd.cwd, c.w.ctx, "go fmt");
        }
    }
}

/// `yq -i EXPR FILE...` (also `--inplace`, and bundled with other short options: `-yi`).
fn in_place(j: &mut Judge, c: &Ctx<'_, '_, '_>, args: &[Word]) {
    let bundled = |v: &str| v.starts_with('-') && !v.starts_with("--") && v.contains('i');
    if !args
        .iter()
        .any(|a| a.value == "--inplace" || a.value == "--in-place" || bundled(&a.value))
    {
        return;
    }
    let values = [
        "-e",
        "--expression",
        "--arg",
        "--argjson",
        "--indent",
        "-I",
        "--from-file",
    ];
    // The first operand is the expression; the files follow it.
    let mut ops = files_among(args, &values);
    if !ops.is_empty() {
        ops.remove(0);
    }
    for w in ops {
        j.write(w, c.cmd.cwd, c.w.ctx, "yq -i");
    }
}

fn rewrite_operands(
    j: &mut Judge,
    c: &Ctx<'_, '_, '_>,
    args: &[Word],
    values: &[&str],
    what: &str,
) {
    for w in files_among(args, values) {
        j.rewrite(w, c.cmd.cwd, c.w.ctx, what);
    }
}

/// The words that are neither options nor the values of `values`; after `--`, every word.
fn files_among<'a>(args: &'a [Word], values: &[&str]) -> Vec<&'a Word> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        let v = a.value.as_str();
        if v == "--" {
            out.extend(&args[i..]);
            break;
        }
        if v.starts_with('-') && v.len() > 1 {
            i += usize::from(values.contains(&v));
            continue;
        }
        out.push(a);
    }
    out
}
