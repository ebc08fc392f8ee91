//! File names and path fragments: shell start-up files, system directories,
//! and the places credentials live.

/// Shell start-up files in the home directory.
pub(crate) const RC_FILES: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".kshrc",
    ".cshrc",
    ".tcshrc",
    ".inputrc",
];

/// Top-level directories whose recursive removal is malicious.
pub(crate) const SYSTEM_DIRS: &[&str] = &[
    "bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "opt", "proc", "root", "run",
    "sbin", "srv", "sys", "usr", "var", "Users", "System", "Library",
];

/// File names that hold credentials.
pub(crate) const SECRET_NAMES: &[&str] = &[
    "credentials",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    "shadow",
    "gshadow",
    "hosts.yml",
    "config.json",
    ".pgpass",
    "secrets.yml",
    "secrets.yaml",
    "master.key",
    // Shell and REPL histories keep the tokens and passwords typed on command lines.
    ".bash_history",
    ".zsh_history",
    ".python_history",
    ".psql_history",
    ".mysql_history",
    ".node_repl_history",
];

/// Path fragments that mark credentials.
pub(crate) const SECRET_PARTS: &[&str] = &[
    "/.ssh/",
    ".aws/",
    ".gnupg/",
    ".kube/config",
    ".docker/config",
    "/.config/gh/",
    "id_rsa",
    "id_ed25519",
    "id_ecdsa",
    "id_dsa",
    "/etc/shadow",
    "private_key",
    "secret",
    ".env",
];
