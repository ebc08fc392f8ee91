//! bash's extended patterns (`@(a|b)`, `?(x)`, `+(x)`, `*(x)`, `!(x)`) as the plain glob and
//! brace forms that match at least what they match. They are always taken as patterns: bash
//! without `extglob` rejects them as a syntax error, so where they run `extglob` is on (a
//! user's shell, `shopt -s extglob`, `bash -O extglob`).
#![forbid(unsafe_code)]

/// Alternatives kept per group; more is judged as `*`.
const MAX_ALTERNATIVES: usize = 16;

/// Whether `c` followed by `(` opens an extended pattern.
pub(crate) fn opens(c: char) -> bool {
    matches!(c, '@' | '?' | '+' | '*' | '!')
}

/// The group that `kind` opens, whose text after the `(` is `rest`: its over-approximating
/// glob form and the number of characters of `rest` it takes (its `)` included). `None` when
/// it is not closed in `rest` or holds quotes or expansions, which are not judged here.
pub(crate) fn translate(kind: char, rest: &str) -> Option<(String, usize)> {
    let mut depth = 1usize;
    let mut end = None;
    for (i, c) in rest.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    end = Some(i);
                    break;
                }
            }
            '\'' | '"' | '\\' | '$' | '`' => return None,
            _ => {}
        }
    }
    let end = end?;
    let inner = rest.get(..end)?;
    let taken = rest.get(..=end)?.chars().count();
    let mut alts = Vec::new();
    for a in split_bars(inner) {
        if a.contains([',', '{', '}']) {
            return None;
        }
        alts.push(plain(a)?);
    }
    if alts.len() > MAX_ALTERNATIVES {
        return Some(("*".into(), taken));
    }
    let list = |alts: &[String]| match alts {
        [one] => one.clone(),
        _ => format!("{{{}}}", alts.join(",")),
    };
    let form = match kind {
        '@' => list(&alts),
        '?' => format!("{{,{}}}", alts.join(",")),
        '+' => format!("{}*", list(&alts)),
        _ => "*".into(),
    };
    Some((form, taken))
}

/// Text with any extended patterns in it translated; `None` if one cannot be.
fn plain(text: &str) -> Option<String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let after = rest.get(c.len_utf8()..).unwrap_or("");
        if opens(c) && after.starts_with('(') {
            let inner = after.get(1..).unwrap_or("");
            let (form, taken) = translate(c, inner)?;
            out.push_str(&form);
            rest = inner.get(char_bytes(inner, taken)..).unwrap_or("");
        } else {
            out.push(c);
            rest = after;
        }
    }
    Some(out)
}

/// The byte length of the first `n` characters of `s`.
pub(crate) fn char_bytes(s: &str, n: usize) -> usize {
    s.char_indices().nth(n).map_or(s.len(), |(i, _)| i)
}

/// `inner` split at the `|` outside nested groups.
fn split_bars(inner: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in inner.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            '|' if depth == 0 => {
                out.extend(inner.get(start..i));
                start = i + 1;
            }
            _ => {}
        }
    }
    out.extend(inner.get(start..));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(kind: char, rest: &str) -> Option<String> {
        translate(kind, rest).map(|(f, _)| f)
    }

    #[test]
    fn groups_become_globs_that_match_at_least_as_much() {
        assert_eq!(t('@', "netrc)").as_deref(), Some("netrc"));
        assert_eq!(t('@', "a|b)x").as_deref(), Some("{a,b}"));
        assert_eq!(t('?', "netrc)").as_deref(), Some("{,netrc}"));
        assert_eq!(t('+', "netrc)").as_deref(), Some("netrc*"));
        assert_eq!(t('+', "a|b)").as_deref(), Some("{a,b}*"));
        assert_eq!(t('*', "x)").as_deref(), Some("*"));
        assert_eq!(t('!', "x)").as_deref(), Some("*"));
        assert_eq!(t('@', "a|@(b|c))").as_deref(), Some("{a,{b,c}}"));
        assert_eq!(translate('@', "ab)cd").map(|(_, n)| n), Some(3));
    }

    #[test]
    fn groups_not_judged_here() {
        assert_eq!(t('@', "netrc"), None, "not closed");
        assert_eq!(t('@', "'a'|b)"), None);
        assert_eq!(t('@', "$x|b)"), None);
        assert_eq!(t('@', "a,b)"), None);
    }
}
