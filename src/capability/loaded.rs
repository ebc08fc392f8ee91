//! Names that programs load from whatever directory they start in: direnv a `.envrc` when a
//! shell enters it, dotenv a `.env`, an agent its `.claude/` settings or `.mcp.json` when
//! started there, an editor the `.vscode/` of a folder opened alone. Where the profile protects
//! one at the workspace root, the executor holds it one level below the root too
//! ([`crate::exec`]'s check of the first level) and the gate refuses writes to it there.
#![forbid(unsafe_code)]

use crate::folded_names::same_without_case;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

/// Names that programs load from the directory they start in. CI systems' files and hook
/// managers' are read at the repository's root only, and git's are the git scan's.
pub const LOADED_WHERE_STARTED: &[&str] = &[
    // sbx's own project policy: `sbx hook` takes the workspace from the event's directory.
    ".sbx",
    ".envrc",
    ".claude",
    ".mcp.json",
    ".gemini",
    ".codex",
    ".cursor",
    ".vscode",
    ".idea",
    ".zed",
    ".helix",
    ".nvim.lua",
    ".exrc",
    ".nvimrc",
    ".devcontainer",
    ".devcontainer.json",
    ".aider.conf.yml",
    ".continue",
    ".windsurf",
    ".kiro",
    ".roo",
    "opencode.json",
    "opencode.jsonc",
    ".opencode",
    ".qwen",
    "crush.json",
    ".crush.json",
    ".amazonq",
    ".junie",
    // Code interpreters, REPLs, debuggers and editors run when they start in the directory.
    ".Rprofile",
    ".pdbrc",
    ".irbrc",
    ".pryrc",
    ".iex.exs",
    ".erlang",
    ".Renviron",
    ".ghci",
    ".octaverc",
    ".vimrc",
    ".gvimrc",
    ".dir-locals.el",
    ".dir-locals-2.el",
    ".fleet",
    ".theia",
    // Package, version and toolchain managers read these from the directory they start in
    // and every directory above it (npm's project `.npmrc` where a `package.json` is, Yarn's
    // rc, mise's configuration, rustup's toolchain file, RVM's environment).
    ".npmrc",
    ".yarnrc.yml",
    ".yarnrc",
    ".pnpmfile.cjs",
    "mise.toml",
    "mise.local.toml",
    ".mise.toml",
    ".mise.local.toml",
    ".mise",
    "rust-toolchain.toml",
    "rust-toolchain",
    ".rvmrc",
    ".ruby-env",
    ".versions.conf",
];

/// VS Code's workspace files (`NAME.code-workspace`): their tasks can run when the folder opens.
const LOADED_SUFFIX: &str = ".code-workspace";

/// Whether programs load `name` from the directory they start in (dotenv's `.env` and its
/// variants too, VS Code's `*.code-workspace`); under `fold`, whatever its case.
pub fn loaded_where_started(name: &OsStr, fold: bool) -> bool {
    if !fold {
        return name.to_str().is_some_and(|n| {
            LOADED_WHERE_STARTED.contains(&n) || n.starts_with(".env") || n.ends_with(LOADED_SUFFIX)
        });
    }
    let b = name.as_bytes();
    let suffix = LOADED_SUFFIX.as_bytes();
    (b.len() >= 4 && b[..4].eq_ignore_ascii_case(b".env"))
        || (b.len() >= suffix.len() && b[b.len() - suffix.len()..].eq_ignore_ascii_case(suffix))
        || LOADED_WHERE_STARTED
            .iter()
            .any(|n| same_without_case(name, n.as_ref()))
}
