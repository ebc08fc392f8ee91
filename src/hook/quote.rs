//! The `--sandbox` rewrite: a Bash command becomes `sbx run ... -- bash -c '<command>'`.
//!
//! Every word is single-quoted, with each `'` written as `'\''`. Inside single quotes a
//! POSIX shell gives no character a meaning, so any NUL-free string survives unchanged.
#![forbid(unsafe_code)]

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Why a command cannot be rewritten. The hook then denies.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum QuoteError {
    #[error("the command contains a NUL byte, which no argv can carry")]
    /// The text holds a NUL byte.
    Nul,
    #[error("{what} is not valid UTF-8: {}", path.display())]
    /// A path is not UTF-8.
    NotUtf8 {
        /// What the path is (the profile, the workspace).
        what: &'static str,
        /// The path.
        path: std::path::PathBuf,
    },
}

/// One shell word that a POSIX shell reads back as exactly `s`.
pub fn sh_quote(s: &str) -> Result<String, QuoteError> {
    if s.contains('\0') {
        return Err(QuoteError::Nul);
    }
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    Ok(out)
}

fn path_word(what: &'static str, p: &Path) -> Result<String, QuoteError> {
    let s = std::str::from_utf8(p.as_os_str().as_bytes()).map_err(|_| QuoteError::NotUtf8 {
        what,
        path: p.to_path_buf(),
    })?;
    sh_quote(s)
}

/// The command line that runs `command` with bash inside `sbx run`. The hook has already
/// decided the call (and the harness asked the user where the answer was ask), so the
/// rewritten command skips `sbx run`'s own permission gate; the sandbox is the profile's either way.
pub fn sandbox_command(
    sbx: &Path,
    profile: &str,
    workspace: &Path,
    command: &str,
) -> Result<String, QuoteError> {
    Ok(format!(
        "{} run --no-policy --profile {} --workspace {} -- bash -c {}",
        path_word("the sbx path", sbx)?,
        sh_quote(profile)?,
        path_word("the workspace path", workspace)?,
        sh_quote(command)?
    ))
}

/// The command that `sandbox_command` made for these `sbx`, `profile` and `workspace`, when
/// `line` is exactly such a line (byte for byte); `None` for anything else.
pub fn sandboxed_inner(sbx: &Path, profile: &str, workspace: &Path, line: &str) -> Option<String> {
    let empty = sandbox_command(sbx, profile, workspace, "").ok()?;
    let prefix = empty.strip_suffix("''")?;
    let word = line.strip_prefix(prefix)?;
    let body = word.strip_prefix('\'')?.strip_suffix('\'')?;
    let inner = body.replace("'\\''", "'");
    (sandbox_command(sbx, profile, workspace, &inner).ok()? == line).then_some(inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_sandboxed_form_is_recognised() {
        let (sbx, ws) = (Path::new("/bin/sbx"), Path::new("/w"));
        for inner in ["ls -la", "echo 'it'\''s' \"$HOME\"", "", "a'b"] {
            let line = sandbox_command(sbx, "workspace", ws, inner).unwrap_or_default();
            assert_eq!(
                sandboxed_inner(sbx, "workspace", ws, &line).as_deref(),
                Some(inner)
            );
            // Another profile, workspace or sbx does not match, nor does anything appended.
            assert_eq!(sandboxed_inner(sbx, "open", ws, &line), None);
            assert_eq!(
                sandboxed_inner(sbx, "workspace", Path::new("/x"), &line),
                None
            );
            assert_eq!(
                sandboxed_inner(Path::new("/tmp/sbx"), "workspace", ws, &line),
                None
            );
            assert_eq!(
                sandboxed_inner(sbx, "workspace", ws, &format!("{line}; rm -rf ~")),
                None
            );
            assert_eq!(
                sandboxed_inner(sbx, "workspace", ws, &format!("{line} x")),
                None
            );
        }
        let sneaky =
            "'/bin/sbx' run --no-policy --profile 'workspace' --workspace '/w' -- bash -c 'a' 'b'";
        assert_eq!(sandboxed_inner(sbx, "workspace", ws, sneaky), None);
        assert_eq!(sandboxed_inner(sbx, "workspace", ws, "ls"), None);
    }

    #[test]
    fn quotes_are_closed_escaped_and_reopened() {
        assert_eq!(sh_quote("it's").as_deref(), Ok("'it'\\''s'"));
        assert_eq!(sh_quote("").as_deref(), Ok("''"));
        assert_eq!(sh_quote("a\0b"), Err(QuoteError::Nul));
    }
}
