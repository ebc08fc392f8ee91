//! Names compared as a file system that folds case compares them, for the check after a run
//! on such a file system: there `.ENVRC` and `.GITHUB/` made during the run are what git,
//! direnv and CI later find as `.envrc` and `.github`, though their bytes differ.
//!
//! Pure: the caller lists the directory. Folding compares more names equal than any one file
//! system does (ASCII case; other letters case folded and normalised, as SMB servers fold
//! case and macOS also normalises): a name taken for a protected one too many is moved to
//! quarantine, one too few would stay.
#![forbid(unsafe_code)]

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

/// Whether `a` and `b` are one name where case is folded.
pub fn same_without_case(a: &OsStr, b: &OsStr) -> bool {
    let (x, y) = (a.as_bytes(), b.as_bytes());
    if x.eq_ignore_ascii_case(y) {
        return true;
    }
    if x.is_ascii() && y.is_ascii() {
        return false;
    }
    match (a.to_str(), b.to_str()) {
        (Some(a), Some(b)) => folded(a) == folded(b),
        _ => false,
    }
}

/// `s` decomposed, case folded (upper then lower: `ß` and `ss`, `K` and `k` meet) and
/// decomposed again.
fn folded(s: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    let f = s.nfd().collect::<String>().to_uppercase().to_lowercase();
    f.nfd().collect()
}

/// The entries of `listing` that are `name` without case, the exact one included.
pub fn equal_without_case<'a, I>(listing: I, name: &OsStr) -> Vec<&'a OsStr>
where
    I: IntoIterator<Item = &'a OsStr>,
{
    listing
        .into_iter()
        .filter(|n| same_without_case(n, name))
        .collect()
}

/// The entries of `listing` that `pattern` (one name, as in `.env*`) matches without case.
/// Names that are not UTF-8 are matched by their lossy text.
pub fn matching_without_case<'a, I>(listing: I, pattern: &glob::Pattern) -> Vec<&'a OsStr>
where
    I: IntoIterator<Item = &'a OsStr>,
{
    let opts = glob::MatchOptions {
        case_sensitive: false,
        require_literal_separator: true,
        require_literal_leading_dot: false,
    };
    listing
        .into_iter()
        .filter(|n| {
            let text = n.to_string_lossy();
            pattern.matches_with(&text, opts) || pattern.matches_with(&folded(&text), opts)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;

    fn names(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    fn text(v: Vec<&OsStr>) -> Vec<String> {
        v.into_iter()
            .map(|n| n.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn protected_names_found_under_any_case() {
        let l = names(&[".ENVRC", ".envrc2", "src", ".GitHub", ".git", ".Git"]);
        let eq = |n: &str| {
            text(equal_without_case(
                l.iter().map(|o| o.as_os_str()),
                n.as_ref(),
            ))
        };
        assert_eq!(eq(".envrc"), [".ENVRC"]);
        assert_eq!(eq(".github"), [".GitHub"]);
        assert_eq!(eq(".git"), [".git", ".Git"], "the exact one too");
        assert!(eq(".vscode").is_empty());
    }

    #[test]
    fn non_ascii_letters_fold_and_normalise() {
        let s = |a: &str, b: &str| same_without_case(a.as_ref(), b.as_ref());
        assert!(s("ÉTÉ", "été"));
        assert!(s("E\u{301}TE\u{301}", "\u{e9}t\u{e9}"), "decomposed");
        assert!(s("stra\u{df}e", "STRASSE"));
        assert!(s("\u{212A}ey", "key"), "Kelvin sign");
        assert!(!s("été", "ete"));
        assert!(!s(".envrc", ".envrc "));
        let bad = OsString::from_vec(vec![0x2e, 0xff]);
        assert!(!same_without_case(&bad, ".x".as_ref()));
        assert!(same_without_case(&bad, &bad));
    }

    #[test]
    fn globs_match_without_case() {
        let l = names(&[".ENV", ".Env.Local", ".environment", "env", ".lefthook.yml"]);
        let m = |p: &str| {
            let p = glob::Pattern::new(p).unwrap();
            text(matching_without_case(l.iter().map(|o| o.as_os_str()), &p))
        };
        assert_eq!(m(".env*"), [".ENV", ".Env.Local", ".environment"]);
        assert_eq!(m(".LEFTHOOK*"), [".lefthook.yml"]);
        assert!(m(".vscode").is_empty());
    }
}
