//! Project files that name programs: the files a tool reads from its working directory and
//! every directory above it, and the keys in them whose value is a program the tool runs.
//! A Write or an earlier command can put them in the workspace, so a command that reads
//! them runs what they say (see `shell::project`).

/// Cargo's configuration, probed in the working directory and each parent (the
/// "hierarchical structure" of the Cargo book's configuration chapter); `config` without an
/// extension is the older name, still read.
pub(crate) const CARGO_CONFIG: &[&str] = &[".cargo/config.toml", ".cargo/config"];

/// Rustup's toolchain override files, probed the same way: `path` (or, in the older
/// `rust-toolchain` file, a bare absolute path) names a directory whose `bin/cargo`,
/// `bin/rustc`, ... run in place of the installed ones.
pub(crate) const RUST_TOOLCHAIN: &[&str] = &["rust-toolchain.toml", "rust-toolchain"];

/// Yarn's configuration: `yarnPath` and `plugins` in `.yarnrc.yml`, `yarn-path` in the older
/// `.yarnrc`, name JavaScript files that every yarn command runs.
pub(crate) const YARN_CONFIG: &[&str] = &[".yarnrc.yml", ".yarnrc"];

/// Maven's project files, found in the directory of the project (the first one above the
/// working directory that has `.mvn`): JVM options for Maven itself (`-javaagent:` runs code
/// at start-up), Maven options (`-Dmaven.ext.class.path=` loads extensions) and core
/// extensions, which are loaded and run on every command, `mvn -v` included.
pub(crate) const MAVEN_CONFIG: &[&str] = &[
    ".mvn/jvm.config",
    ".mvn/maven.config",
    ".mvn/extensions.xml",
];

/// The programs that read [`MAVEN_CONFIG`].
pub(crate) const MAVEN: &[&str] = &["mvn", "mvnd"];

/// The keys of [`YARN_CONFIG`] that name files yarn runs.
pub(crate) const YARN_PROGRAM_KEYS: &[&str] = &["yarnPath", "plugins", "yarn-path"];

/// Programs that rustup installs as proxies: each reads [`RUST_TOOLCHAIN`] before it runs
/// anything, `--version` included.
pub(crate) const RUSTUP_PROXIES: &[&str] = &[
    "cargo",
    "rustc",
    "rustdoc",
    "rustfmt",
    "cargo-fmt",
    "cargo-clippy",
    "clippy-driver",
    "cargo-miri",
    "rust-analyzer",
    "rust-gdb",
    "rust-gdbgui",
    "rust-lldb",
];

/// Subcommands that build nothing but resolve the workspace: they run `rustc -vV` and the
/// target-information probe through the configured compiler and its wrappers, and may ask a
/// registry (`cargo metadata --no-deps` resolves nothing).
pub(crate) const CARGO_RESOLVING: &[&str] =
    &["metadata", "tree", "clean", "generate-lockfile", "vendor"];

/// When cargo runs the program a key names.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum When {
    /// On every command: `include` reads another file, which this analysis does not follow.
    Always,
    /// When it resolves the workspace ([`CARGO_RESOLVING`]) or builds.
    Resolving,
    /// When it builds, runs, documents or links.
    Building,
    /// When the subcommand of the alias's name runs (an alias cannot replace a built-in one).
    Named,
}

/// Cargo configuration keys whose value is a program cargo runs (the Cargo book's
/// "executable paths with arguments", aliases, credential providers, `include`); `*` stands
/// for one key of any name. `[env]` is judged by the variables it sets.
pub(crate) const CARGO_PROGRAM_KEYS: &[(&str, When)] = &[
    ("alias.*", When::Named),
    ("build.rustc", When::Resolving),
    ("build.rustc-wrapper", When::Resolving),
    ("build.rustc-workspace-wrapper", When::Resolving),
    ("credential-alias.*", When::Resolving),
    ("registry.credential-provider", When::Resolving),
    ("registry.global-credential-providers", When::Resolving),
    ("registries.*.credential-provider", When::Resolving),
    ("include", When::Always),
    ("build.rustdoc", When::Building),
    ("target.*.runner", When::Building),
    ("target.*.linker", When::Building),
    ("host.linker", When::Building),
    ("host.*.linker", When::Building),
    ("doc.browser", When::Building),
];

/// Whether a cargo key, as its table path (`["build", "rustc-wrapper"]`), names a program that
/// `cargo SUB` runs when SUB builds nothing.
pub(crate) fn cargo_program_key(key: &[&str], sub: &str) -> bool {
    CARGO_PROGRAM_KEYS.iter().any(|(p, when)| {
        key_matches(p, key)
            && match when {
                When::Always => true,
                When::Resolving => CARGO_RESOLVING.contains(&sub),
                When::Building => false,
                When::Named => key.last() == Some(&sub),
            }
    })
}

/// Whether an environment variable sets one of [`CARGO_PROGRAM_KEYS`], as cargo maps
/// `build.rustc-wrapper` to `CARGO_BUILD_RUSTC_WRAPPER`.
pub(crate) fn cargo_program_env(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("CARGO_") else {
        return false;
    };
    CARGO_PROGRAM_KEYS.iter().any(|(p, _)| {
        let pattern = p.to_ascii_uppercase().replace(['.', '-'], "_");
        wildcard(&pattern, rest)
    })
}

/// A key pattern against a key's table path: `*` matches one part.
fn key_matches(pattern: &str, key: &[&str]) -> bool {
    pattern.split('.').count() == key.len()
        && pattern
            .split('.')
            .zip(key)
            .all(|(p, k)| p == "*" || p == *k)
}

/// `*` in `pattern` matches any non-empty text (`TARGET_*_RUNNER`).
fn wildcard(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((head, tail)) => {
            text.len() > head.len() + tail.len() && text.starts_with(head) && text.ends_with(tail)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_keys_and_their_variables() {
        for (k, sub) in [
            (&["build", "rustc-wrapper"][..], "metadata"),
            (&["alias", "fmt"], "fmt"),
            (&["registries", "corp", "credential-provider"], "tree"),
            (&["include"], "fmt"),
        ] {
            assert!(cargo_program_key(k, sub), "{k:?}");
        }
        for (k, sub) in [
            (&["build", "target"][..], "metadata"),
            (&["build", "rustflags"], "metadata"),
            (&["alias", "xtask"], "metadata"),
            (&["target", "thumbv7em-none-eabihf", "runner"], "metadata"),
            (&["target", "cfg(unix)", "linker"], "fmt"),
            (&["env", "X"], "metadata"),
            (&["build", "rustc-wrapper"], "fmt"),
        ] {
            assert!(!cargo_program_key(k, sub), "{k:?}");
        }
        for v in [
            "CARGO_BUILD_RUSTC",
            "CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER",
            "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER",
            "CARGO_ALIAS_B",
            "CARGO_REGISTRY_CREDENTIAL_PROVIDER",
        ] {
            assert!(cargo_program_env(v), "{v}");
        }
        for v in [
            "CARGO_TARGET_DIR",
            "CARGO_BUILD_JOBS",
            "CARGO_TERM_COLOR",
            "CARGO_ALIAS_",
        ] {
            assert!(!cargo_program_env(v), "{v}");
        }
    }
}
