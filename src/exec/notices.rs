//! What the caller of a run is told beside the command's own output: why the command could not
//! be executed, the limits it ran into, the protected paths moved to quarantine. One wording:
//! `sbx run` prints each on stderr after `sbx: `, and `sbx serve` and `sbx mcp` add them to
//! the call's (or the job's) standard error the same way.
use super::result::{ExecFailure, RunResult};

impl RunResult {
    /// Each notice, one line, without the `sbx: ` lead.
    pub fn notices(&self) -> Vec<String> {
        let mut out: Vec<String> = self.exec_failure.iter().map(exec_notice).collect();
        let layers = self.enforcement.layers.iter();
        out.extend(
            layers
                .filter(|l| l.name == crate::plan::COVERED_LINKS)
                .map(|l| l.detail.clone()),
        );
        out.extend(self.protected.iter().map(protected_notice));
        if self.protected_failed {
            let why = if self.protected.iter().all(|p| p.undone()) {
                "the profile sets protected_change = \"fail\""
            } else {
                "a protected path could not be undone"
            };
            out.push(format!("the run fails (exit 122): {why}"));
        }
        out.extend(
            self.limits_reached
                .iter()
                .map(|l| format!("limit reached: {}: {}", l.limit, l.detail)),
        );
        out
    }
}

/// A path or name as one line of text: control characters, line separators, bidirectional
/// controls and backslashes written as `\xNN` (their UTF-8 bytes),
/// so that a name holding a newline cannot forge another line of a notice or a MANIFEST.
pub(super) fn printable(text: &std::ffi::OsStr) -> String {
    let lossy = text.to_string_lossy();
    let mut out = String::with_capacity(lossy.len());
    for c in lossy.chars() {
        // Line and paragraph separators and bidirectional controls too: they split or
        // reorder a line as a reader shows it.
        let invisible = matches!(c, '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}')
            || ('\u{202a}'..='\u{202e}').contains(&c)
            || ('\u{2066}'..='\u{2069}').contains(&c);
        if c.is_control() || c == '\\' || invisible {
            for b in c.to_string().bytes() {
                out.push_str(&format!("\\x{b:02x}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn exec_notice(f: &ExecFailure) -> String {
    let hint = match f.errno {
        libc::E2BIG => {
            ": the kernel takes at most 128 KiB in one argument, and arguments and environment \
             together within a quarter of the stack limit; pass long text in a file or on stdin"
        }
        libc::ENOENT => " in the sandbox's PATH",
        libc::EACCES => ": not executable, or on a path the profile does not let it execute",
        libc::ENOEXEC => ": not a format the kernel runs, and no `#!` line",
        _ => "",
    };
    let program = printable(std::ffi::OsStr::new(&f.program));
    format!("cannot execute {program}: {}{hint}", f.reason)
}

fn protected_notice(p: &super::ProtectedPath) -> String {
    let what = match (&p.quarantined, &p.error) {
        // Left where it is, with what the run changed undone (a directory's mode).
        (Some(q), None) if *q == p.path => "undone in place".to_string(),
        (Some(q), None) => format!("moved to {}", printable(q.as_os_str())),
        (Some(q), Some(e)) => format!("moved to {} ({e})", printable(q.as_os_str())),
        (None, e) => format!("could not be moved: {}", e.as_deref().unwrap_or("unknown")),
    };
    format!(
        "protected path {} ({}, {}): {what}",
        printable(p.path.as_os_str()),
        p.change,
        p.rule
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_argument_too_long_says_what_the_kernel_takes() {
        let f = ExecFailure::new("bash", libc::E2BIG);
        let text = exec_notice(&f);
        assert!(
            text.starts_with(
                "cannot execute bash: Argument list too long: the kernel takes at most 128 KiB"
            ),
            "{text}"
        );
        assert_eq!(
            printable(std::ffi::OsStr::new("a\n0002\tREADME\\")),
            "a\\x0a0002\\x09README\\x5c"
        );
        let missing = exec_notice(&ExecFailure::new("nope", libc::ENOENT));
        assert_eq!(
            missing,
            "cannot execute nope: No such file or directory in the sandbox's PATH"
        );
    }
}
