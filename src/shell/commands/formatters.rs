//! Formatters and fixers rewrite the files they are given (`ruff format PATH`, `rustfmt FILE`,
//! `cargo fmt -- FILE`, `gofmt -w`, `prettier --write`, `yq -i`), and some write outputs
//! (`tsc --outFile`). Each operand is recorded as the write it is (the current directory's
//! tree when none is given), so that the gate does not take a rewrite for inspection and the
//! plan refuses it where the profile cannot write; their check modes only read.

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
    let manifests = outputs::getopt_values(args, &["--manifest-path"]);
    for m in &manifests {
        j.write(m, c.cmd.cwd, c.w.ctx, "cargo fmt");
    }
    match args.iter().position(|a| a.value == "--") {
        Some(dd) => rewrite_operands(
            j,
            c,
            &args[dd + 1..],
            &["--config-path", "--edition"],
            "cargo fmt",
        ),
        None if manifests.is_empty() => {
            j.write(&Word::literal("."), c.cmd.cwd, c.w.ctx, "cargo fmt")
        }
        None => {}
    }
}

/// `go fmt PACKAGES`: a package named by a path; an import path or none rewrites the module
/// the current directory is in, taken as that directory.
pub(crate) fn go_fmt(j: &mut Judge, c: &Ctx<'_, '_, '_>, args: &[Word]) {
    let mut named = false;
    for a in args.iter().skip_while(|a| a.value != "fmt").skip(1) {
        let v = a.value.as_str();
        if v.starts_with('/') || v.starts_with('.') || v.starts_with('~') {
            named = true;
            j.write(a, c.cmd.cwd, c.w.ctx, "go fmt");
        }
    }
    if !named {
        j.write(&Word::literal("."), c.cmd.cwd, c.w.ctx, "go fmt");
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
    let mut files = files_among(args, values);
    // `-` is standard input, printed back formatted.
    files.retain(|w| w.value != "-");
    // With no operand, a formatter rewrites the tree it starts in (`ruff format`, `black`,
    // `prettier --write` without paths read their configuration's sources from there).
    if files.is_empty() {
        j.write(&Word::literal("."), c.cmd.cwd, c.w.ctx, what);
    }
    for w in files {
        j.write(w, c.cmd.cwd, c.w.ctx, what);
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
