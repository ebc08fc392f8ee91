//! Environment variables that change what programs do: which code they run, which
//! configuration they read (configuration can name programs to run), and where git writes.
//! A command is judged by its words, so a variable that makes `git status` or `less` run a
//! program the words do not show is a finding wherever it is set: a leading assignment,
//! `env NAME=VALUE`, `export`/`declare`.

/// The variable runs code itself or names a program, library or module that is run.
const RUNS: &str = "changes which code runs";
/// The variable names configuration, and configuration can name programs to run.
const CONFIG: &str = "points programs at other configuration files, which can name programs to run";
/// The variable adds options to a program's command line.
const OPTIONS: &str = "adds options to the program's command line, and some options run programs";

/// Variables by exact name, with why each matters.
const EXACT: &[(&str, &str)] = &[
    ("PATH", RUNS),
    ("IFS", "changes how the shell splits words into commands"),
    (
        "HOME",
        "moves the home directory, whose start-up and configuration files (`~/.gitconfig`, `~/.profile`) can name programs to run",
    ),
    ("XDG_CONFIG_HOME", CONFIG),
    ("XDG_CONFIG_DIRS", CONFIG),
    ("ZDOTDIR", CONFIG),
    ("SHELL", RUNS),
    ("SHELLOPTS", RUNS),
    ("BASHOPTS", RUNS),
    ("BASH_ENV", RUNS),
    ("BASH_LOADABLES_PATH", RUNS),
    ("ENV", RUNS),
    ("PROMPT_COMMAND", RUNS),
    ("PS4", RUNS),
    ("CDPATH", "changes where `cd` goes"),
    ("GLOBIGNORE", "changes what globs match"),
    (
        "HISTFILE",
        "changes which file the shell writes its history to",
    ),
    ("TERMINFO", CONFIG),
    ("GCONV_PATH", RUNS),
    ("PAGER", RUNS),
    ("MANPAGER", RUNS),
    ("MANOPT", OPTIONS),
    ("EDITOR", RUNS),
    ("VISUAL", RUNS),
    ("BROWSER", RUNS),
    ("SSH_ASKPASS", RUNS),
    ("SUDO_ASKPASS", RUNS),
    ("LESS", OPTIONS),
    ("LESSOPEN", RUNS),
    ("LESSCLOSE", RUNS),
    ("LESSEDIT", RUNS),
    ("TAR_OPTIONS", OPTIONS),
    ("RIPGREP_CONFIG_PATH", CONFIG),
    ("BAT_PAGER", RUNS),
    ("BAT_CONFIG_PATH", CONFIG),
    ("DELTA_PAGER", RUNS),
    ("SYSTEMD_PAGER", RUNS),
    ("GIT_PAGER", RUNS),
    ("GIT_EDITOR", RUNS),
    ("GIT_SEQUENCE_EDITOR", RUNS),
    ("GIT_SSH", RUNS),
    ("GIT_SSH_COMMAND", RUNS),
    ("GIT_PROXY_COMMAND", RUNS),
    ("GIT_EXTERNAL_DIFF", RUNS),
    ("GIT_ASKPASS", RUNS),
    ("GIT_EXEC_PATH", RUNS),
    ("GIT_TEMPLATE_DIR", RUNS),
    (
        "GIT_ALLOW_PROTOCOL",
        "lets git use transports that run commands (`ext::`)",
    ),
    ("GIT_DIR", GIT_ELSEWHERE),
    ("GIT_WORK_TREE", GIT_ELSEWHERE),
    ("GIT_COMMON_DIR", GIT_ELSEWHERE),
    ("GIT_INDEX_FILE", GIT_ELSEWHERE),
    ("GIT_OBJECT_DIRECTORY", GIT_ELSEWHERE),
    ("GIT_ALTERNATE_OBJECT_DIRECTORIES", GIT_ELSEWHERE),
    ("PERL5OPT", OPTIONS),
    ("PERL5LIB", RUNS),
    ("PERLLIB", RUNS),
    ("PERL5DB", RUNS),
    ("PYTHONSTARTUP", RUNS),
    ("PYTHONPATH", RUNS),
    ("PYTHONHOME", RUNS),
    ("PYENV_HOOK_PATH", RUNS),
    ("NODE_OPTIONS", OPTIONS),
    ("NODE_PATH", RUNS),
    ("RUBYOPT", OPTIONS),
    ("RUBYLIB", RUNS),
    ("JAVA_TOOL_OPTIONS", OPTIONS),
    ("_JAVA_OPTIONS", OPTIONS),
    // The `java` launcher reads JDK_JAVA_OPTIONS; the others are read by the launch scripts
    // of Maven, Gradle, sbt and most Java programs (`-javaagent:` runs code at start-up).
    ("JDK_JAVA_OPTIONS", OPTIONS),
    ("JAVA_OPTS", OPTIONS),
    ("MAVEN_OPTS", OPTIONS),
    ("MAVEN_ARGS", OPTIONS),
    ("GRADLE_OPTS", OPTIONS),
    ("SBT_OPTS", OPTIONS),
    // The JVM, the class path and the installations the launch scripts run from.
    ("JAVA_HOME", RUNS),
    ("CLASSPATH", RUNS),
    ("M2_HOME", RUNS),
    ("MAVEN_HOME", RUNS),
    ("GRADLE_HOME", RUNS),
    // Init scripts in `init.d` run in every build, `gradle -v` included.
    ("GRADLE_USER_HOME", CONFIG),
    // gpg.conf and gpg-agent.conf name programs (`photo-viewer`, `pinentry-program`), and
    // git runs gpg to show or make signatures.
    ("GNUPGHOME", CONFIG),
    ("GOROOT", RUNS),
    ("PYTHONUSERBASE", RUNS),
    ("GEM_HOME", RUNS),
    ("GEM_PATH", RUNS),
    ("BUNDLE_GEMFILE", RUNS),
    // curl reads `.curlrc` from CURL_HOME (`data = "@file"`, `url = ...`), wget its wgetrc.
    ("CURL_HOME", CONFIG),
    ("WGETRC", CONFIG),
    ("MANPATH", CONFIG),
    // A page's `.so` requests include other files, which man prints.
    ("MANSECT", OPTIONS),
    ("MANROFFOPT", OPTIONS),
    ("GROFF_TMAC_PATH", CONFIG),
    // Requests go through the host these name, with what they carry.
    ("http_proxy", PROXY),
    ("https_proxy", PROXY),
    ("HTTP_PROXY", PROXY),
    ("HTTPS_PROXY", PROXY),
    ("ALL_PROXY", PROXY),
    ("all_proxy", PROXY),
    ("ftp_proxy", PROXY),
    ("FTP_PROXY", PROXY),
    // Files read or written where the value says.
    (
        "MAGIC",
        "makes `file` read the file it names as its magic database, printing its lines",
    ),
    ("SSLKEYLOGFILE", WRITES),
    ("LESSHISTFILE", WRITES),
    ("NODE_REPL_HISTORY", WRITES),
    ("SQLITE_HISTORY", WRITES),
    ("MYSQL_HISTFILE", WRITES),
    ("PSQL_HISTORY", WRITES),
    ("PSQLRC", CONFIG),
    ("INPUTRC", CONFIG),
    ("LOCPATH", CONFIG),
    ("TERMINFO_DIRS", CONFIG),
    ("TZDIR", CONFIG),
    // uv and yarn take their interpreter, environment and configuration from these.
    ("VIRTUAL_ENV", RUNS),
    ("CONDA_PREFIX", RUNS),
    ("MAKEFLAGS", OPTIONS),
    ("RUSTC", RUNS),
    ("RUSTC_WRAPPER", RUNS),
    ("RUSTC_WORKSPACE_WRAPPER", RUNS),
    ("RUSTDOC", RUNS),
    ("CARGO_HOME", CONFIG),
    ("RUSTUP_HOME", RUNS),
    ("RUSTUP_TOOLCHAIN", RUNS),
    ("PIP_CONFIG_FILE", CONFIG),
    ("GOFLAGS", OPTIONS),
    ("GOENV", CONFIG),
    ("GOTOOLCHAIN", RUNS),
    ("DOCKER_HOST", "sends docker commands to another daemon"),
    ("CONTAINER_HOST", "sends podman commands to another service"),
    (
        "CONTAINERD_ADDRESS",
        "sends nerdctl commands to another daemon",
    ),
    ("BUILDKIT_HOST", "sends buildctl commands to another daemon"),
    ("DOCKER_CONFIG", CONFIG),
];

/// The variable sends requests through another host.
const PROXY: &str = "sends requests, and what they carry, through another host";
/// The variable names a file the program writes.
const WRITES: &str = "makes the program write to the file it names";

/// Where git keeps its repository, index and objects.
const GIT_ELSEWHERE: &str = "points git at another repository, index or object store";

/// Families of variables, by the start of their names.
const PREFIXES: &[(&str, &str)] = &[
    ("LD_", RUNS),
    ("DYLD_", RUNS),
    // GIT_CONFIG, _GLOBAL, _SYSTEM, _PARAMETERS, _COUNT, _KEY_<n>, _VALUE_<n>.
    (
        "GIT_CONFIG",
        "gives git configuration, which can name programs to run",
    ),
    // LESSKEY, LESSKEYIN, LESSKEY_SYSTEM, LESSKEYIN_SYSTEM, LESSKEY_CONTENT.
    (
        "LESSKEY",
        "gives `less` key bindings, which can run commands",
    ),
    (GIT_TRACE, "makes git write a trace to the file it names"),
    // Any option of pip (`PIP_PYTHON` runs another interpreter, `PIP_LOG` writes a file).
    ("PIP_", OPTIONS),
    // Any npm setting (`npm_config_script_shell`, `npm_config_node_options`, `..._userconfig`),
    // which npm reads in either case.
    ("npm_config_", OPTIONS),
    ("NPM_CONFIG_", OPTIONS),
    (
        "BASH_FUNC_",
        "defines a function that a child bash runs in place of a command",
    ),
    ("UV_", OPTIONS),
    ("YARN_", OPTIONS),
    ("CONDA_", CONFIG),
];

/// git's and Python's variables are findings as families (`GIT_TEST_FSMONITOR` runs a
/// command on `git status`, `PYTHONPYCACHEPREFIX` loads compiled modules from where it says,
/// `PYTHONWARNINGS` imports a module), except the ones here, which change no program, file
/// or repository.
const FAMILIES: &[(&str, &str, &[&str])] = &[
    (
        "GIT_",
        "changes what git runs, reads or writes",
        &[
            "GIT_AUTHOR_NAME",
            "GIT_AUTHOR_EMAIL",
            "GIT_AUTHOR_DATE",
            "GIT_COMMITTER_NAME",
            "GIT_COMMITTER_EMAIL",
            "GIT_COMMITTER_DATE",
            "GIT_TERMINAL_PROMPT",
            "GIT_FLUSH",
            "GIT_OPTIONAL_LOCKS",
            "GIT_LITERAL_PATHSPECS",
            "GIT_GLOB_PATHSPECS",
            "GIT_NOGLOB_PATHSPECS",
            "GIT_ICASE_PATHSPECS",
            "GIT_PROGRESS_DELAY",
            "GIT_MERGE_VERBOSITY",
            "GIT_REFLOG_ACTION",
            "GIT_ADVICE",
            "GIT_NO_REPLACE_OBJECTS",
            "GIT_DEFAULT_HASH",
        ],
    ),
    (
        "PYTHON",
        "changes what Python loads or runs",
        &[
            "PYTHONUNBUFFERED",
            "PYTHONDONTWRITEBYTECODE",
            "PYTHONIOENCODING",
            "PYTHONHASHSEED",
            "PYTHONUTF8",
            "PYTHONFAULTHANDLER",
            "PYTHONNOUSERSITE",
            "PYTHONSAFEPATH",
            "PYTHONOPTIMIZE",
            "PYTHONVERBOSE",
            "PYTHONTRACEMALLOC",
            "PYTHONMALLOC",
            "PYTHONMALLOCSTATS",
            "PYTHONCOERCECLOCALE",
            "PYTHONDEVMODE",
            "PYTHONINTMAXSTRDIGITS",
            "PYTHONNODEBUGRANGES",
            "PYTHONWARNDEFAULTENCODING",
            "PYTHONDEBUG",
        ],
    ),
];

/// GIT_TRACE, GIT_TRACE2, GIT_TRACE2_EVENT, GIT_TRACE_PACKET, GIT_TRACE_SETUP, ...
const GIT_TRACE: &str = "GIT_TRACE";

/// Why setting `name` to `value` changes what programs do; `None` when it does not.
pub(crate) fn exec_env(name: &str, value: &str) -> Option<&'static str> {
    if let Some((_, why)) = EXACT.iter().find(|(n, _)| *n == name) {
        return Some(why);
    }
    // Cargo's configuration keys that name programs, as variables (`CARGO_BUILD_RUSTC`).
    if super::project::cargo_program_env(name) {
        return Some(RUNS);
    }
    if let Some((prefix, why)) = PREFIXES.iter().find(|(p, _)| name.starts_with(p)) {
        return (*prefix != GIT_TRACE || !to_terminal(value)).then_some(*why);
    }
    let (_, why, harmless) = FAMILIES.iter().find(|(p, _, _)| name.starts_with(p))?;
    (!harmless.contains(&name)).then_some(*why)
}

/// A trace value that writes nowhere but an open descriptor: off, on (standard error), or a
/// descriptor number, whose target a redirection on the line shows.
fn to_terminal(value: &str) -> bool {
    let v = value.to_ascii_lowercase();
    v.bytes().all(|b| b.is_ascii_digit()) || matches!(v.as_str(), "true" | "false" | "yes" | "no")
}

#[cfg(test)]
mod tests {
    use super::exec_env;

    #[test]
    fn names_and_families() {
        for name in [
            "HOME",
            "XDG_CONFIG_HOME",
            "TAR_OPTIONS",
            "GIT_CONFIG_KEY_0",
            "GIT_CONFIG_VALUE_0",
            "LESSKEYIN_SYSTEM",
            "LD_DEBUG_OUTPUT",
            "BASH_FUNC_ls%%",
            "GIT_ALLOW_PROTOCOL",
            "CARGO_BUILD_RUSTC_WRAPPER",
            "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER",
            "PIP_CONFIG_FILE",
            "PIP_PYTHON",
            "JDK_JAVA_OPTIONS",
            "MAVEN_OPTS",
            "JAVA_HOME",
            "CLASSPATH",
            "npm_config_script_shell",
            "NPM_CONFIG_USERCONFIG",
            "GIT_TEST_FSMONITOR",
            "GIT_TEST_ANYTHING",
            "PYTHONPYCACHEPREFIX",
            "PYTHONWARNINGS",
            "PYTHONPLATLIBDIR",
            "CURL_HOME",
            "https_proxy",
            "MAGIC",
            "SSLKEYLOGFILE",
            "UV_PYTHON",
            "YARN_YARN_PATH",
            "VIRTUAL_ENV",
        ] {
            assert!(exec_env(name, "x").is_some(), "{name}");
        }
        for name in [
            "TERM",
            "CI",
            "RUSTFLAGS",
            "LANG",
            "LESSCHARSET",
            "GIT_AUTHOR_NAME",
            "GIT_COMMITTER_DATE",
            "PYTHONUNBUFFERED",
            "PYTHONDONTWRITEBYTECODE",
        ] {
            assert!(exec_env(name, "x").is_none(), "{name}");
        }
    }

    /// A trace to standard error or a descriptor is debugging; to a file it is a write.
    #[test]
    fn git_trace_by_value() {
        for v in ["1", "2", "true", "0", ""] {
            assert!(exec_env("GIT_TRACE", v).is_none(), "{v}");
        }
        for v in ["/tmp/x", "x", "$OUT", "af_unix:/s"] {
            assert!(exec_env("GIT_TRACE2_EVENT", v).is_some(), "{v}");
        }
    }
}
