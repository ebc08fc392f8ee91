//! Whether two glob patterns over one file name can name the same file, and such a name. A
//! target the shell expands when it runs (`> .git/hoo*/pre-commit`) is judged by every path it
//! could become, made or not: the plan's and the floor's protected names are patterns too
//! (`.env*`, `.git/modules/*/hooks`), so the question is whether two patterns meet.
//!
//! The shell's side follows bash without `dotglob`: a name that starts with a dot is matched
//! only when the pattern starts with a literal dot, and `.` and `..` never match a wildcard.
#![forbid(unsafe_code)]

use std::collections::VecDeque;

/// One element of a component pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Lit(char),
    /// `?`
    One,
    /// `*`
    Star,
    /// `[...]`: ranges (a single char is `(c, c)`), negated by `!` or `^`.
    Class(Vec<(char, char)>, bool),
}

impl Token {
    fn accepts(&self, c: char) -> bool {
        match self {
            Token::Lit(l) => *l == c,
            Token::One | Token::Star => true,
            Token::Class(ranges, negated) => {
                ranges.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c)) != *negated
            }
        }
    }
}

/// Parse one file-name pattern. An unclosed `[` is a literal, as in bash.
fn tokens(pattern: &str) -> Vec<Token> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some((t, next)) = token_at(&chars, i) {
        i = next;
        if t == Token::Star && out.last() == Some(&Token::Star) {
            continue;
        }
        out.push(t);
    }
    out
}

/// The token at `chars[i]` and the index after it.
fn token_at(chars: &[char], i: usize) -> Option<(Token, usize)> {
    let c = *chars.get(i)?;
    Some(match c {
        '*' => (Token::Star, i + 1),
        '?' => (Token::One, i + 1),
        '\\' => (Token::Lit(chars.get(i + 1).copied().unwrap_or('\\')), i + 2),
        '[' => class(chars, i + 1).unwrap_or((Token::Lit('['), i + 1)),
        _ => (Token::Lit(c), i + 1),
    })
}

/// With `dotglob` on, a pattern that does not start with a literal dot still matches a
/// dot-name, by a `*`, a `?` or a class that takes the dot. The patterns the rest of such a
/// name must match, so that `.` followed by each is a pattern without `dotglob` that matches
/// the same dot-names.
pub(crate) fn after_dot(pattern: &str) -> Vec<String> {
    let chars: Vec<char> = pattern.chars().collect();
    let text = |from: usize| chars.get(from..).unwrap_or(&[]).iter().collect::<String>();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some((t, next)) = token_at(&chars, i) {
        if t == Token::Star {
            // The star takes the dot and stays, or matches nothing.
            out.push(text(i));
            i = next;
            continue;
        }
        if t.accepts('.') {
            out.push(text(next));
        }
        break;
    }
    out
}

/// `pattern` matching without regard to case, as with `nocaseglob`: each ASCII letter
/// becomes a class of both cases, and a class gains the other case of its letters.
pub(crate) fn fold_case(pattern: &str) -> String {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while let Some((t, next)) = token_at(&chars, i) {
        let written = || chars.get(i..next).unwrap_or(&[]).iter().collect::<String>();
        match t {
            Token::Lit(c) if c.is_ascii_alphabetic() => {
                out.push_str(&format!(
                    "[{}{}]",
                    c.to_ascii_lowercase(),
                    c.to_ascii_uppercase()
                ));
            }
            Token::Class(ranges, negated) => match spell_class(&ranges, negated) {
                Some(c) => out.push_str(&c),
                None => out.push_str(&written()),
            },
            Token::Lit(_) | Token::One | Token::Star => out.push_str(&written()),
        }
        i = next;
    }
    out
}

/// A class with the other case of its ASCII letters added; `None` for one whose members
/// cannot be spelled back simply (`]` or `-` as a range end).
fn spell_class(ranges: &[(char, char)], negated: bool) -> Option<String> {
    let mut all: Vec<(char, char)> = ranges.to_vec();
    for &(lo, hi) in ranges {
        let same = |f: fn(&char) -> bool| f(&lo) && f(&hi);
        if same(char::is_ascii_lowercase) {
            all.push((lo.to_ascii_uppercase(), hi.to_ascii_uppercase()));
        } else if same(char::is_ascii_uppercase) {
            all.push((lo.to_ascii_lowercase(), hi.to_ascii_lowercase()));
        }
    }
    let (mut first, mut body, mut last) = (String::new(), String::new(), String::new());
    for (lo, hi) in all {
        match (lo, hi) {
            (']', ']') => first = "]".into(),
            ('-', '-') => last = "-".into(),
            _ if lo == hi && matches!(lo, '!' | '^') => body.push(lo),
            _ if [lo, hi].iter().any(|c| matches!(c, ']' | '-' | '\\')) => return None,
            _ if lo == hi => body.push(lo),
            _ => body.push_str(&format!("{lo}-{hi}")),
        }
    }
    // A leading `!` or `^` would negate.
    if first.is_empty() && body.starts_with(['!', '^']) {
        let c = body.remove(0);
        body.push(c);
    }
    let bang = if negated { "!" } else { "" };
    Some(format!("[{bang}{first}{body}{last}]"))
}

/// The class that starts at `chars[start]` (after its `[`) and the index after its `]`.
fn class(chars: &[char], start: usize) -> Option<(Token, usize)> {
    let mut i = start;
    let negated = matches!(chars.get(i), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut ranges = Vec::new();
    let first = i;
    loop {
        let c = *chars.get(i)?;
        if c == ']' && i > first {
            return Some((Token::Class(ranges, negated), i + 1));
        }
        match (chars.get(i + 1), chars.get(i + 2)) {
            (Some('-'), Some(&hi)) if hi != ']' => {
                ranges.push((c, hi));
                i += 3;
            }
            _ => {
                ranges.push((c, c));
                i += 1;
            }
        }
    }
}

/// The characters worth trying at one step: every character either pattern names, and one
/// that neither names (standing for "any other").
fn alphabet(a: &[Token], b: &[Token]) -> Vec<char> {
    let mut out = vec!['.'];
    for t in a.iter().chain(b) {
        match t {
            Token::Lit(c) => out.push(*c),
            Token::Class(ranges, _) => {
                for (lo, hi) in ranges {
                    out.push(*lo);
                    out.push(*hi);
                }
            }
            Token::One | Token::Star => {}
        }
    }
    if let Some(other) = ['x', 'q', 'z', '_', '0', '~', 'Z']
        .into_iter()
        .find(|c| !out.contains(c))
    {
        out.push(other);
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// How much of a name has been read: nothing, `.`, `..`, or anything else. A name must end
/// in the last state, and a leading dot needs a literal dot in the shell's pattern.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Start {
    Empty,
    Dot,
    DotDot,
    Name,
}

impl Start {
    fn after(self, c: char) -> Start {
        match (self, c) {
            (Start::Empty, '.') => Start::Dot,
            (Start::Dot, '.') => Start::DotDot,
            _ => Start::Name,
        }
    }
}

type State = (usize, usize, Start);

/// The states reachable from `s` without reading: a `*` may match nothing.
fn close(s: State, a: &[Token], b: &[Token]) -> Vec<State> {
    let mut out = vec![s];
    let mut i = 0;
    while let Some(&(x, y, st)) = out.get(i) {
        i += 1;
        if a.get(x) == Some(&Token::Star) && !out.contains(&(x + 1, y, st)) {
            out.push((x + 1, y, st));
        }
        if b.get(y) == Some(&Token::Star) && !out.contains(&(x, y + 1, st)) {
            out.push((x, y + 1, st));
        }
    }
    out
}

/// One step of both patterns over `c`, if both accept it.
fn step(s: State, c: char, a: &[Token], b: &[Token]) -> Option<State> {
    let (x, y, st) = s;
    let (ta, tb) = (a.get(x)?, b.get(y)?);
    if !ta.accepts(c) || !tb.accepts(c) {
        return None;
    }
    // bash: a leading dot is matched only by a literal one.
    if st == Start::Empty && c == '.' && a.first() != Some(&Token::Lit('.')) {
        return None;
    }
    let nx = if *ta == Token::Star { x } else { x + 1 };
    let ny = if *tb == Token::Star { y } else { y + 1 };
    Some((nx, ny, st.after(c)))
}

/// A file name that the shell's pattern `shell` expands to and that `other` matches (as the
/// kernel's rules or the floor match it, no dot rule), shortest first; `None` when there is
/// none.
pub(crate) fn meet(shell: &str, other: &str) -> Option<String> {
    let (a, b) = (tokens(shell), tokens(other));
    let sigma = alphabet(&a, &b);
    let start = (0, 0, Start::Empty);
    let mut seen: Vec<(State, Option<(usize, char)>)> = Vec::new();
    let mut queue = VecDeque::new();
    for s in close(start, &a, &b) {
        seen.push((s, None));
        queue.push_back(seen.len() - 1);
    }
    while let Some(at) = queue.pop_front() {
        let Some(&(s, _)) = seen.get(at) else {
            break;
        };
        if s.0 == a.len() && s.1 == b.len() && s.2 == Start::Name {
            return Some(spell(&seen, at));
        }
        for &c in &sigma {
            let Some(n) = step(s, c, &a, &b) else {
                continue;
            };
            for m in close(n, &a, &b) {
                if !seen.iter().any(|(x, _)| *x == m) {
                    seen.push((m, Some((at, c))));
                    queue.push_back(seen.len() - 1);
                }
            }
        }
    }
    None
}

/// The name read on the way to `seen[at]`.
fn spell(seen: &[(State, Option<(usize, char)>)], mut at: usize) -> String {
    let mut out = Vec::new();
    while let Some(&(_, Some((from, c)))) = seen.get(at) {
        out.push(c);
        at = from;
    }
    out.iter().rev().collect()
}

/// A name the shell's pattern could expand to (never `.` or `..`), if any.
pub(crate) fn witness(shell: &str) -> Option<String> {
    meet(shell, "*")
}

/// Whether a component has an unquoted glob character.
pub(crate) fn is_wild(component: &str) -> bool {
    component.contains(['*', '?', '['])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_meet_where_a_name_matches_both() {
        let m = |a: &str, b: &str| meet(a, b);
        assert_eq!(m("hoo*", "hooks").as_deref(), Some("hooks"));
        assert_eq!(m(".en?", ".env").as_deref(), Some(".env"));
        assert_eq!(m(".env.l*", ".env*").as_deref(), Some(".env.l"));
        assert_eq!(m(".e*rc", ".envrc").as_deref(), Some(".envrc"));
        assert_eq!(m(".[e]nvrc", ".envrc").as_deref(), Some(".envrc"));
        assert_eq!(m("[ch]ooks", "hooks").as_deref(), Some("hooks"));
        assert_eq!(m("[!h]ooks", "hooks"), None);
        assert_eq!(m("[^h]ooks", "hooks"), None);
        assert_eq!(m("id_*", "id_rsa*").as_deref(), Some("id_rsa"));
        assert_eq!(
            m("settings*.json", "settings.local.json").as_deref(),
            Some("settings.local.json")
        );
        assert_eq!(m("*", "*").as_deref(), Some("x"));
        // bash without dotglob: no leading dot from a wildcard.
        assert_eq!(m("*env", ".env"), None);
        assert_eq!(m("*.rs", ".rs"), None);
        assert_eq!(m("**.env", ".env"), None);
        assert_eq!(m("?env", ".env"), None);
        assert_eq!(m("[.]env", ".env"), None);
        assert_eq!(m("*", ".git"), None);
        // Names that cannot meet.
        assert_eq!(m("src*", ".git"), None);
        assert_eq!(m("*.rs", ".env*"), None);
        assert_eq!(m("a?", "abc"), None);
        assert_eq!(m("x\\*", "x*").as_deref(), Some("x*"));
        assert_eq!(m("[a-c]x", "bx").as_deref(), Some("bx"));
        assert_eq!(m("[a", "[a").as_deref(), Some("[a"));
    }

    #[test]
    fn dotglob_forms_take_the_dot_where_a_wildcard_can() {
        let forms = |p: &str| after_dot(p);
        assert_eq!(forms("*etrc"), ["*etrc"]);
        assert_eq!(forms("?etrc"), ["etrc"]);
        assert_eq!(forms("*?x"), ["*?x", "x"]);
        assert_eq!(forms("[.a]env"), ["env"]);
        assert_eq!(forms("[!a]env"), ["env"]);
        assert!(forms("[a]env").is_empty());
        assert!(forms("src*").is_empty());
        // Each form after a literal dot meets the dot-name the option lets it match.
        for (p, name) in [("*etrc", ".netrc"), ("?git", ".git"), ("*", ".env")] {
            assert!(
                forms(p)
                    .iter()
                    .any(|f| meet(&format!(".{f}"), name).is_some()),
                "{p} {name}"
            );
        }
    }

    #[test]
    fn folded_patterns_match_either_case() {
        assert_eq!(fold_case("a*"), "[aA]*");
        assert_eq!(fold_case(".JSO[N]"), ".[jJ][sS][oO][Nn]");
        assert_eq!(fold_case("[a-c]x"), "[a-cA-C][xX]");
        assert_eq!(fold_case("[!a]"), "[!aA]");
        assert_eq!(fold_case("1?"), "1?");
        assert_eq!(
            meet(&fold_case(".CLAUDE.JSO[N]"), ".claude.json").as_deref(),
            Some(".claude.json")
        );
        assert_eq!(meet(&fold_case("[]a-]x"), "]x").as_deref(), Some("]x"));
        assert_eq!(meet(&fold_case("[]a-]x"), "-x").as_deref(), Some("-x"));
        assert_eq!(meet(&fold_case("[]a-]x"), "Ax").as_deref(), Some("Ax"));
    }

    #[test]
    fn a_witness_is_a_name_the_shell_would_give() {
        assert!(witness("*.rs").is_some_and(|w| w.len() == 4 && !w.starts_with('.')));
        assert_eq!(witness(".*").as_deref(), Some(".x"));
        assert!(witness("ne?.rs").is_some_and(|w| w.len() == 6 && w.starts_with("ne")));
        assert_eq!(witness("[!.]*").map(|w| w.starts_with('.')), Some(false));
    }
}
