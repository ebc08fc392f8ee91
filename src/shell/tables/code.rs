//! What runs code: shells, interpreters and their inline-code flags, and decoders
//! (environment variables that change which code runs are in `env`).

/// Shells that take `-c STRING`.
pub(crate) const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"];

/// Shells whose syntax this analysis does not parse.
pub(crate) const FOREIGN_SHELLS: &[&str] = &[
    "fish",
    "pwsh",
    "powershell",
    "cmd",
    "cmd.exe",
    "nu",
    "xonsh",
    "elvish",
    "tcsh",
    "csh",
    "rc",
    "es",
    "yash",
    "osh",
    "ysh",
    "oil",
];

/// Interpreters and the flags that pass them code inline.
pub(crate) const INTERPRETERS: &[(&str, &[&str])] = &[
    ("python", &["-c"]),
    ("python3", &["-c"]),
    ("python2", &["-c"]),
    ("pypy", &["-c"]),
    ("pypy3", &["-c"]),
    ("node", &["-e", "--eval", "-p", "--print"]),
    ("nodejs", &["-e", "--eval", "-p", "--print"]),
    ("deno", &["eval"]),
    ("bun", &["-e", "--eval"]),
    ("perl", &["-e", "-E"]),
    ("ruby", &["-e"]),
    ("php", &["-r"]),
    ("lua", &["-e"]),
    ("luajit", &["-e"]),
    ("Rscript", &["-e"]),
    ("R", &["-e"]),
    ("julia", &["-e", "--eval"]),
    ("tclsh", &[]),
    ("osascript", &["-e"]),
    ("awk", &[]),
];

/// Stages that decode data; piping their output into a shell runs a hidden payload.
pub(crate) const DECODERS: &[&str] = &[
    "base64", "base32", "xxd", "openssl", "gunzip", "zcat", "bzcat", "xzcat", "uudecode", "rev",
    "gpg", "basenc", "tr", "unzip", "zstdcat",
];
