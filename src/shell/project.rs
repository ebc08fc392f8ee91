//! Project files that name programs, read where the command runs: a `.cargo/config.toml` with
//! a `rustc-wrapper`, a `rust-toolchain.toml` with a toolchain `path`, a `.yarnrc.yml` with a
//! `yarnPath`. A Write or an earlier command can put one in the workspace; a command that reads
//! it (`cargo metadata`, `rustc --version`, `yarn why`) then runs what it names, though its own
//! words show nothing. Only the directories where the agent can write are looked at (the
//! workspace and the writable set): files elsewhere, such as the home's `~/.cargo/config.toml`,
//! are the user's. The files are read when the analysis runs; another command on the same line
//! that may write them makes that look stale (see `cross_rules`).

use super::classify::Judge;
use super::paths;
use super::tables::project as t;
use super::walk::Cwd;
use super::{Class, Decision, ShellContext, tables};
use std::path::{Path, PathBuf};

/// What a file says about the programs it names for a subcommand: `Some(why)` when it names one.
type FileTest = fn(&str, &str) -> Option<String>;

/// The files `program` reads and how each is judged.
fn files_of(program: &str) -> Vec<(&'static str, FileTest)> {
    let mut out: Vec<(&'static str, FileTest)> = Vec::new();
    if program == "cargo" {
        out.extend(
            t::CARGO_CONFIG
                .iter()
                .map(|f| (*f, cargo_config as FileTest)),
        );
    }
    if t::RUSTUP_PROXIES.contains(&program) {
        out.extend(
            t::RUST_TOOLCHAIN
                .iter()
                .map(|f| (*f, toolchain as FileTest)),
        );
    }
    if program == "yarn" {
        out.extend(t::YARN_CONFIG.iter().map(|f| (*f, yarn_config as FileTest)));
    }
    if t::MAVEN.contains(&program) {
        out.extend(
            t::MAVEN_CONFIG
                .iter()
                .map(|f| (*f, maven_config as FileTest)),
        );
    }
    out
}

/// Where and what a program runs: its name, its subcommand, its working directories.
pub(crate) struct Run<'a> {
    pub program: &'a str,
    pub sub: &'a str,
    pub dirs: &'a Cwd,
}

/// Raise when a project file that the program reads from its working directories or above
/// names a program it runs. Only for a command otherwise allowed: one that asks already runs
/// project code (a build runs build scripts), and its rule decides.
pub(crate) fn judge(j: &mut Judge, ctx: &ShellContext, run: &Run<'_>) {
    let program = run.program;
    let files = files_of(program);
    if files.is_empty() || j.class.default_verdict() != Decision::Allow {
        return;
    }
    let Some(dirs) = run.dirs else {
        return unknown_dir(j, program);
    };
    for dir in reach(dirs, ctx) {
        j.t.project_files = true;
        for (name, check) in &files {
            let file = dir.join(name);
            if let Some(why) = read(&file).and_then(|text| match text {
                Ok(text) => check(&text, run.sub),
                Err(e) => Some(format!("cannot be read ({e})")),
            }) {
                j.raise(
                    Class::Opaque,
                    format!(
                        "[shell.project-config] `{program}` reads `{}`, which {why}",
                        file.display()
                    ),
                );
                return;
            }
        }
    }
}

/// A command that runs where a computed `cd` or option leads reads project files that are only
/// known then.
pub(crate) fn unknown_dir(j: &mut Judge, program: &str) {
    j.raise(
        Class::Opaque,
        format!(
            "[shell.project-config] `{program}` runs in a directory only known when it runs, \
             whose project files can name programs"
        ),
    );
}

/// The directories from `dirs` up to the root that lie where the agent can write, resolved,
/// each once.
pub(crate) fn reach(dirs: &[PathBuf], ctx: &ShellContext) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for d in dirs {
        let real = paths::canon_root(d);
        for a in real.ancestors().take_while(|a| paths::inside(a, ctx)) {
            if !out.iter().any(|o| o == a) {
                out.push(a.to_path_buf());
            }
        }
    }
    out
}

/// Larger project files are not read: they ask.
const MAX_BYTES: u64 = 1 << 20;

/// A file's text, read only when it is a regular file of at most [`MAX_BYTES`]; `None` when
/// there is none.
pub(crate) fn read(file: &Path) -> Option<Result<String, std::io::Error>> {
    use std::io::Read;
    let f = match crate::regular_file::open(file) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => return None,
        Err(e) => return Some(Err(e)),
        Ok(f) => f,
    };
    let mut text = String::new();
    Some(match f.take(MAX_BYTES + 1).read_to_string(&mut text) {
        Ok(n) if n as u64 > MAX_BYTES => Err(std::io::Error::other("larger than 1 MiB")),
        Ok(_) => Ok(text),
        Err(e) => Err(e),
    })
}

/// Cargo's configuration: a key that names a program `cargo SUB` runs, or, when SUB resolves
/// the workspace, `[env]` setting a variable that changes what runs (cargo passes it to the
/// `rustc` it runs for target information).
fn cargo_config(text: &str, sub: &str) -> Option<String> {
    let Ok(table) = toml::from_str::<toml::Table>(text) else {
        return Some("is not TOML this analysis understands".into());
    };
    if let Some(key) = program_key(&table, sub, &mut Vec::new()) {
        return Some(format!("sets `{key}`, a program cargo runs"));
    }
    if !t::CARGO_RESOLVING.contains(&sub) {
        return None;
    }
    let env = table.get("env").and_then(toml::Value::as_table)?;
    env.iter().find_map(|(name, v)| {
        let value = v
            .as_str()
            .or_else(|| v.get("value").and_then(toml::Value::as_str))
            .unwrap_or("");
        tables::exec_env(name, value).map(|why| format!("sets `{name}` in `[env]`, which {why}"))
    })
}

/// The first key of `table` (below `path`) that names a program `cargo SUB` runs, dotted.
fn program_key<'a>(table: &'a toml::Table, sub: &str, path: &mut Vec<&'a str>) -> Option<String> {
    for (k, v) in table {
        path.push(k);
        let hit = match v.as_table() {
            Some(inner) if !t::cargo_program_key(path, sub) => program_key(inner, sub, path),
            Some(_) | None => t::cargo_program_key(path, sub).then(|| path.join(".")),
        };
        path.pop();
        if hit.is_some() {
            return hit;
        }
    }
    None
}

/// Rustup's override file: `[toolchain] path`, or a path in the older one-line form.
fn toolchain(text: &str, _sub: &str) -> Option<String> {
    let names_path = match toml::from_str::<toml::Table>(text) {
        Ok(table) => table.get("toolchain").and_then(|t| t.get("path")).is_some(),
        Err(_) => text.contains('/'),
    };
    names_path.then(|| "names a toolchain directory whose programs run in place of rustup's".into())
}

/// Yarn's configuration: any mention of a key that names a file yarn runs.
fn yarn_config(text: &str, _sub: &str) -> Option<String> {
    t::YARN_PROGRAM_KEYS
        .iter()
        .find(|k| text.contains(**k))
        .map(|k| format!("sets `{k}`, a file every yarn command runs"))
}

/// Maven's options and extensions: anything but blank lines, as any option can load code.
fn maven_config(text: &str, _sub: &str) -> Option<String> {
    text.lines()
        .any(|l| !l.trim().is_empty())
        .then(|| "gives Maven options or extensions, which can load code".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cargo_keys_that_run_programs() {
        for text in [
            "[build]\nrustc-wrapper = \"./w\"\n",
            "build.rustc = \"./r\"\n",
            "build = { rustc-workspace-wrapper = \"./w\" }\n",
            "[env]\nLD_PRELOAD = \"./x.so\"\n",
            "[env]\nPATH = { value = \"bin\", relative = true }\n",
            "not toml [",
        ] {
            assert!(cargo_config(text, "tree").is_some(), "{text}");
        }
        for text in [
            "",
            "[build]\ntarget = \"x86_64-unknown-linux-gnu\"\njobs = 4\n",
            "[target.'cfg(unix)']\nrustflags = [\"-C\", \"target-cpu=native\"]\n",
            "[target.thumbv7em-none-eabihf]\nrunner = \"probe-rs run\"\n",
            "[alias]\nxtask = \"run --package xtask --\"\n",
            "[env]\nRUST_LOG = \"debug\"\n",
        ] {
            assert!(cargo_config(text, "tree").is_none(), "{text}");
        }
        assert!(cargo_config("[alias]\nfmt = \"run --bin x\"\n", "fmt").is_some());
        assert!(cargo_config("[build]\nrustc-wrapper = \"sccache\"\n", "fmt").is_none());
    }

    #[test]
    fn toolchain_paths() {
        for text in [
            "[toolchain]\npath = \"/opt/tc\"\n",
            "toolchain.path = \"/t\"\n",
            "/opt/tc\n",
        ] {
            assert!(toolchain(text, "").is_some(), "{text}");
        }
        for text in ["[toolchain]\nchannel = \"1.85\"\n", "nightly-2025-01-01\n"] {
            assert!(toolchain(text, "").is_none(), "{text}");
        }
    }
}
