//! `git`: subcommands sorted into inspection, writes and network, and the
//! configuration keys whose value git runs as a command.

/// Subcommands that only inspect.
pub(crate) const READ: &[&str] = &[
    "status",
    "diff",
    "log",
    "show",
    "blame",
    "rev-parse",
    "ls-files",
    "ls-tree",
    "cat-file",
    "describe",
    "shortlog",
    "grep",
    "rev-list",
    "whatchanged",
    "name-rev",
    "merge-base",
    "for-each-ref",
    "show-ref",
    "show-branch",
    "count-objects",
    "fsck",
    "check-ignore",
    "check-attr",
    "verify-commit",
    "verify-tag",
    "version",
    "help",
    "range-diff",
    "annotate",
    "cherry",
    "diff-tree",
    "diff-files",
    "diff-index",
    "var",
    "ls-remote-local",
];

/// Subcommands that change the repository or the work tree.
pub(crate) const WRITE: &[&str] = &[
    "add",
    "commit",
    "switch",
    "merge",
    "rebase",
    "cherry-pick",
    "revert",
    "mv",
    "init",
    "apply",
    "am",
    "notes",
    "restore-staged",
    "format-patch",
    "bisect",
    "sparse-checkout",
    "mergetool-none",
    "stage",
    "update-index",
    "commit-tree",
    "write-tree",
    "read-tree",
    "hash-object",
    "mktree",
    "mktag",
    "pack-refs",
    "repack",
    "maintenance",
    "rerere",
    "archive",
];

/// Subcommands that write only the repository's own git directory (its index, objects and
/// refs), never the work tree: they cannot plant a file there for a later command to read.
pub(crate) const REPOSITORY_ONLY: &[&str] = &[
    "add",
    "stage",
    "commit",
    "tag",
    "branch",
    "notes",
    "update-index",
    "commit-tree",
    "write-tree",
    "hash-object",
    "mktree",
    "mktag",
    "pack-refs",
    "repack",
    "gc",
    "fetch",
];

/// Subcommands that talk to a remote.
pub(crate) const NETWORK: &[&str] = &[
    "fetch",
    "pull",
    "push",
    "clone",
    "ls-remote",
    "submodule",
    "request-pull",
    "send-email",
    "svn",
    "p4",
];

/// `git -c` / `git config` keys whose value is run as a command.
pub(crate) fn git_exec_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    const EXACT: &[&str] = &[
        "core.pager",
        "core.editor",
        "core.sshcommand",
        "core.hookspath",
        "core.fsmonitor",
        "core.askpass",
        "core.gitproxy",
        "sequence.editor",
        "gpg.program",
        "gpg.openpgp.program",
        "gpg.ssh.program",
        "gpg.ssh.defaultkeycommand",
        "gpg.x509.program",
        "core.alternaterefscommand",
        "interactive.difffilter",
        "imap.tunnel",
        "sendemail.smtpserver",
        "sendemail.tocmd",
        "sendemail.cccmd",
        "sendemail.headercmd",
        "man.viewer",
        "help.browser",
        "diff.external",
        "credential.helper",
        "uploadpack.packobjectshook",
        "merge.tool",
        "diff.tool",
        "web.browser",
        "sendemail.sendmailcmd",
        "pager",
        "core.worktree",
        "include.path",
        "init.templatedir",
    ];
    EXACT.contains(&k.as_str())
        || k.starts_with("alias.")
        || k.starts_with("filter.")
        || k.starts_with("pager.")
        || k.starts_with("includeif.")
        || k.starts_with("protocol.")
        || k.starts_with("url.")
        || (k.starts_with("diff.") && (k.ends_with(".textconv") || k.ends_with(".command")))
        || (k.starts_with("merge.") && k.ends_with(".driver"))
        || (k.starts_with("mergetool.") && k.ends_with(".cmd"))
        || (k.starts_with("difftool.") && k.ends_with(".cmd"))
        || (k.starts_with("man.") && (k.ends_with(".cmd") || k.ends_with(".path")))
        || (k.starts_with("browser.") && (k.ends_with(".cmd") || k.ends_with(".path")))
        || (k.starts_with("submodule.") && k.ends_with(".update"))
        || (k.starts_with("credential.") && k.ends_with(".helper"))
        || k.starts_with("remote.") && (k.ends_with(".uploadpack") || k.ends_with(".receivepack"))
}
