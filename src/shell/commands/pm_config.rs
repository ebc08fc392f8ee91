//! `npm config set`, `npm set`, `pip config set`, `yarn config set`, `pnpm config set`: they
//! change a configuration file that later commands read, in the home directory unless told
//! otherwise. Judged as a write of that file, so a home the profile keeps read-only is refused
//! by the plan like `echo x > ~/.npmrc`, and anything else is an outside write.

use crate::shell::Class;
use crate::shell::classify::Judge;
use crate::shell::exec_args::Ctx;
use crate::shell::words::Word;

/// Verbs of `config` that print what the files say.
const SHOWS: &[&str] = &["get", "list", "ls", "view", "show"];

/// `TOOL config get KEY` (or `npm get KEY`) of a secret-shaped key or of every key, and
/// pnpm's and yarn's `config list` (or a bare `yarn config`), print what the tool's
/// configuration files say, tokens included: judged as a read of each file the tool reads, so
/// a file the profile hides is refused as `cat ~/.npmrc` is. `npm config list` and a plain key
/// (`npm config get registry`) stay ordinary reads of configuration: npm shows its auth keys
/// as `(protected)`, though a key it does not know as secret (a `GITHUB_TOKEN=` line) it
/// prints in a list as written.
pub(crate) fn config_read(j: &mut Judge, c: &Ctx<'_, '_, '_>, tool: &str, args: &[Word]) {
    let ops: Vec<&str> = args
        .iter()
        .map(|a| a.value.as_str())
        .filter(|v| !v.starts_with('-'))
        .collect();
    let secret_key = |keys: &[&str]| {
        keys.is_empty()
            || keys
                .iter()
                .any(|k| crate::environment::secret_rule(k.as_bytes()).is_some())
    };
    let lists = tool != "npm" || args.iter().any(|a| a.value == "--no-redacted");
    let shows = match ops.as_slice() {
        ["get", keys @ ..] => tool == "npm" && secret_key(keys),
        ["config"] => tool == "yarn",
        ["config", "get", keys @ ..] => secret_key(keys),
        ["config", verb, ..] => lists && SHOWS.contains(verb),
        _ => false,
    };
    if !shows {
        return;
    }
    let at_home = |rel: &str| home_file(&c.w.ctx.workspace.home, rel);
    let files = match tool {
        "npm" => vec![at_home(".npmrc"), Word::literal(".npmrc")],
        "pnpm" => vec![
            at_home(".config/pnpm/rc"),
            at_home(".npmrc"),
            Word::literal(".npmrc"),
        ],
        "yarn" => vec![
            at_home(".yarnrc.yml"),
            at_home(".yarnrc"),
            Word::literal(".yarnrc.yml"),
            Word::literal(".yarnrc"),
        ],
        _ => Vec::new(),
    };
    for file in files {
        j.read(&file, c.cmd.cwd, c.w.ctx);
    }
}

/// Verbs of `config` that change the file.
const CHANGES: &[&str] = &["set", "delete", "rm", "unset", "edit", "fix"];

/// Judge `TOOL config VERB ...` (or `npm set`); `false` when it only reads configuration.
pub(crate) fn config_change(j: &mut Judge, c: &Ctx<'_, '_, '_>, tool: &str, args: &[Word]) -> bool {
    let ops: Vec<&str> = args
        .iter()
        .map(|a| a.value.as_str())
        .filter(|v| !v.starts_with('-'))
        .collect();
    let changes = match ops.as_slice() {
        ["set", ..] => tool == "npm",
        ["config", verb, ..] => CHANGES.contains(verb),
        _ => false,
    };
    if !changes {
        return false;
    }
    j.raise(
        Class::ConfigChange,
        format!(
            "[shell.config.{tool}] `{tool} config` changes configuration that later commands read"
        ),
    );
    for file in files(tool, args, &c.w.ctx.workspace.home) {
        j.write(&file, c.cmd.cwd, c.w.ctx, "configuration file");
    }
    true
}

/// The files the change lands in, by tool and scope; an unknown word when the scope's file
/// depends on an installation prefix.
fn files(tool: &str, args: &[Word], home_dir: &std::path::Path) -> Vec<Word> {
    let has = |flags: &[&str]| args.iter().any(|a| flags.contains(&a.value.as_str()));
    let project = has(&["--location=project", "--project"])
        || args.windows(2).any(|w| {
            matches!(w, [a, b] if matches!(a.value.as_str(), "--location" | "-L") && b.value == "project")
        });
    let global = has(&["-g", "--global", "--location=global", "--site"]);
    let home = |rel: &str| home_file(home_dir, rel);
    if global {
        let mut w = Word::literal("$PREFIX");
        w.unknown = true;
        w.exact = false;
        return vec![w];
    }
    match (tool, project) {
        ("npm" | "pnpm", true) => vec![Word::literal(".npmrc")],
        ("npm", false) => vec![home(".npmrc")],
        ("pnpm", false) => vec![home(".config/pnpm/rc")],
        ("yarn", _) => vec![home(".yarnrc"), Word::literal(".yarnrc.yml")],
        (_, _) => vec![home(".config/pip/pip.conf")],
    }
}

/// `rel` in the home, shown as `~/rel`.
fn home_file(home_dir: &std::path::Path, rel: &str) -> Word {
    Word {
        display: format!("~/{rel}"),
        ..Word::literal(&home_dir.join(rel).to_string_lossy())
    }
}
