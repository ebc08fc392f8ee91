//! Brace expansion of a word's source text, as bash does it: before tilde, parameter and
//! command expansion and before quote removal. `{~,x}/.netrc` is the two words `~/.netrc`
//! and `x/.netrc`, and the tilde of the first is then expanded; `{$HOME,x}` likewise. Braces
//! inside quotes, after a backslash or inside `${...}`, `$(...)` and backquotes are text.
#![forbid(unsafe_code)]

/// Alternatives kept per word; more gives up.
const MAX_ALTERNATIVES: usize = 64;

/// The words the brace lists of `raw` expand to, in order, still quoted as written; one word
/// when it has no list (`{x}`, `${HOME}`). A sequence (`{1..3}`) is left as written. `None`
/// for more than [`MAX_ALTERNATIVES`].
pub(crate) fn expand(raw: &str) -> Option<Vec<String>> {
    let Some((open, commas, close)) = first_list(raw) else {
        return Some(vec![raw.to_string()]);
    };
    let head = raw.get(..open)?;
    let tail = raw.get(close + 1..)?;
    let mut bounds = vec![open];
    bounds.extend(&commas);
    bounds.push(close);
    let mut out = Vec::new();
    for pair in bounds.windows(2) {
        let [a, b] = pair else { continue };
        let part = raw.get(a + 1..*b)?;
        for e in expand(&format!("{head}{part}{tail}"))? {
            out.push(e);
            if out.len() > MAX_ALTERNATIVES {
                return None;
            }
        }
    }
    Some(out)
}

/// The first brace list bash expands in `s`: the offsets of its `{`, its top-level commas
/// and its `}`.
fn first_list(s: &str) -> Option<(usize, Vec<usize>, usize)> {
    let marks = unquoted_marks(s.as_bytes());
    for (k, &(open, c)) in marks.iter().enumerate() {
        if c != b'{' {
            continue;
        }
        let mut depth = 0usize;
        let mut commas = Vec::new();
        for &(i, c) in marks.iter().skip(k) {
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        if !commas.is_empty() {
                            return Some((open, commas, i));
                        }
                        break;
                    }
                }
                _ if depth == 1 => commas.push(i),
                _ => {}
            }
        }
    }
    None
}

/// The `{`, `,` and `}` of `s` outside quotes, escapes and expansions, with their offsets.
fn unquoted_marks(s: &[u8]) -> Vec<(usize, u8)> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&c) = s.get(i) {
        match c {
            b'\\' => i += 2,
            b'\'' => i = skip_single(s, i + 1),
            b'"' => i = skip_double(s, i + 1),
            b'`' => i = skip_to(s, i + 1, b'`'),
            b'$' => match s.get(i + 1) {
                Some(b'\'') => i = skip_ansi(s, i + 2),
                Some(b'(') => i = skip_nested(s, i + 1, b'(', b')'),
                Some(b'{') => i = skip_nested(s, i + 1, b'{', b'}'),
                _ => i += 1,
            },
            b'{' | b',' | b'}' => {
                out.push((i, c));
                i += 1;
            }
            _ => i += 1,
        }
    }
    out
}

/// The offset after the `'` that closes a quote whose text starts at `i`.
fn skip_single(s: &[u8], i: usize) -> usize {
    skip_to(s, i, b'\'')
}

fn skip_to(s: &[u8], i: usize, end: u8) -> usize {
    s.iter()
        .skip(i)
        .position(|&c| c == end)
        .map_or(s.len(), |p| i + p + 1)
}

/// After a `$'...'` whose text starts at `i`: backslashes escape.
fn skip_ansi(s: &[u8], mut i: usize) -> usize {
    while let Some(&c) = s.get(i) {
        match c {
            b'\\' => i += 2,
            b'\'' => return i + 1,
            _ => i += 1,
        }
    }
    s.len()
}

/// After a `"..."` whose text starts at `i`: backslashes escape, expansions nest.
fn skip_double(s: &[u8], mut i: usize) -> usize {
    while let Some(&c) = s.get(i) {
        match c {
            b'\\' => i += 2,
            b'"' => return i + 1,
            b'`' => i = skip_to(s, i + 1, b'`'),
            b'$' if s.get(i + 1) == Some(&b'(') => i = skip_nested(s, i + 1, b'(', b')'),
            b'$' if s.get(i + 1) == Some(&b'{') => i = skip_nested(s, i + 1, b'{', b'}'),
            _ => i += 1,
        }
    }
    s.len()
}

/// After the bracket that closes the one at `i`, quotes inside skipped.
fn skip_nested(s: &[u8], mut i: usize, open: u8, close: u8) -> usize {
    let mut depth = 0usize;
    while let Some(&c) = s.get(i) {
        match c {
            b'\\' => {
                i += 2;
                continue;
            }
            b'\'' => {
                i = skip_single(s, i + 1);
                continue;
            }
            b'"' => {
                i = skip_double(s, i + 1);
                continue;
            }
            _ if c == open => depth += 1,
            _ if c == close => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    s.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn got(raw: &str) -> Vec<String> {
        expand(raw).unwrap_or_else(|| panic!("{raw}: too many"))
    }

    #[test]
    fn lists_expand_before_tildes_and_variables() {
        assert_eq!(got("{~,x}/.netrc"), ["~/.netrc", "x/.netrc"]);
        assert_eq!(got("{~/.claude.json,x}"), ["~/.claude.json", "x"]);
        assert_eq!(got("{$HOME,x}/a"), ["$HOME/a", "x/a"]);
        assert_eq!(got("{\"$HOME\",x}/a"), ["\"$HOME\"/a", "x/a"]);
        assert_eq!(got("a{~/.gitconfig,}"), ["a~/.gitconfig", "a"]);
        assert_eq!(got("{a,b}{c,d}"), ["ac", "ad", "bc", "bd"]);
        assert_eq!(got("{a,{b,c}}x"), ["ax", "bx", "cx"]);
        assert_eq!(got("{'a,b',c}"), ["'a,b'", "c"]);
    }

    #[test]
    fn quoted_escaped_and_expansion_braces_are_text() {
        for raw in [
            "${HOME}/x",
            "'{a,b}'",
            "\"{a,b}\"",
            "\\{a,b}",
            "$(echo {a,b})",
            "`echo {a,b}`",
            "${x:-{a,b}}",
            "{x}",
            "{1..3}",
            "$'{a,b}'",
        ] {
            assert_eq!(got(raw), [raw], "{raw}");
        }
        assert_eq!(got("{x}{a,b}"), ["{x}a", "{x}b"]);
    }

    #[test]
    fn too_many_alternatives_give_up() {
        assert_eq!(
            expand("{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}").map(|v| v.len()),
            Some(64)
        );
        assert_eq!(expand("{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}"), None);
    }
}
