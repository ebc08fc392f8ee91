//! Bash command patterns: `*` wildcards over a segment's canonical text.
//!
//! A trailing ` *` (or its alias `:*`) also matches the bare command, so
//! `git diff *` matches `git diff` and `git diff x` but not `git difftool`.
#![forbid(unsafe_code)]

/// A compiled command pattern.
#[derive(Clone, Debug)]
pub struct CommandPattern {
    /// Literal pieces between `*`s of the pattern without its trailing ` *`.
    base: Vec<String>,
    /// Whether the pattern ended in ` *` or `:*`.
    any_args: bool,
    /// The first word, when the pattern starts with a complete literal word.
    first_word: Option<String>,
}

impl CommandPattern {
    /// Compile `spec`. `*` alone (or empty) matches every command.
    pub fn new(spec: &str) -> Self {
        let spec = spec.trim();
        let (base, any_args) = if let Some(b) = spec.strip_suffix(":*") {
            (b.trim_end(), true)
        } else if let Some(b) = spec.strip_suffix(" *") {
            (b.trim_end(), true)
        } else {
            (spec, false)
        };
        let pieces: Vec<String> = base.split('*').map(str::to_string).collect();
        let first_word = first_literal_word(base);
        Self {
            base: pieces,
            any_args,
            first_word,
        }
    }

    /// The literal first word every matching command starts with, if the pattern fixes one.
    pub fn first_word(&self) -> Option<&str> {
        self.first_word.as_deref()
    }

    /// The pattern names one command exactly: no wildcard anywhere.
    pub fn is_exact(&self) -> bool {
        !self.any_args && self.base.len() == 1
    }

    /// Does the canonical segment text match?
    pub fn matches(&self, text: &str) -> bool {
        if !self.any_args {
            return glob(&self.base, text);
        }
        if let [literal] = self.base.as_slice() {
            return text == literal
                || (text.starts_with(literal.as_str())
                    && text.as_bytes().get(literal.len()) == Some(&b' '));
        }
        if glob(&self.base, text) {
            return true;
        }
        text.char_indices()
            .any(|(i, c)| c == ' ' && glob(&self.base, &text[..i]))
    }
}

fn first_literal_word(base: &str) -> Option<String> {
    let word = base.split(' ').next()?;
    if word.is_empty() || word.contains('*') {
        return None;
    }
    Some(word.to_string())
}

/// Match `text` against literal `pieces` separated by `*`.
fn glob(pieces: &[String], text: &str) -> bool {
    match pieces {
        [] => text.is_empty(),
        [only] => text == only,
        [first, middle @ .., last] => {
            if text.len() < first.len() + last.len()
                || !text.starts_with(first.as_str())
                || !text.ends_with(last.as_str())
            {
                return false;
            }
            let mut rest = &text[first.len()..text.len() - last.len()];
            for piece in middle {
                match rest.find(piece.as_str()) {
                    Some(i) => rest = &rest[i + piece.len()..],
                    None => return false,
                }
            }
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::CommandPattern;

    fn m(p: &str, t: &str) -> bool {
        CommandPattern::new(p).matches(t)
    }

    #[test]
    fn exact_without_wildcard() {
        assert!(m("npm run build", "npm run build"));
        assert!(!m("npm run build", "npm run build x"));
    }

    #[test]
    fn trailing_space_star_is_a_word_boundary() {
        assert!(m("ls *", "ls"));
        assert!(m("ls *", "ls -la"));
        assert!(!m("ls *", "lsof"));
        assert!(m("ls*", "lsof"));
        assert!(m("git diff *", "git diff HEAD~1"));
        assert!(!m("git diff *", "git difftool"));
    }

    #[test]
    fn colon_star_alias() {
        assert!(m("npm run test:*", "npm run test"));
        assert!(m("npm run test:*", "npm run test --watch"));
        assert!(!m("npm run test:*", "npm run testing"));
    }

    #[test]
    fn inner_and_leading_wildcards() {
        assert!(m("git * main", "git checkout main"));
        assert!(!m("git * main", "git checkout dev"));
        assert!(m("* install", "npm install"));
        assert!(m("*", "anything at all"));
        assert!(m("git * main *", "git merge main --no-ff"));
        assert!(m("git * main *", "git merge main"));
    }

    #[test]
    fn first_word_index_key() {
        assert_eq!(CommandPattern::new("git diff *").first_word(), Some("git"));
        assert_eq!(CommandPattern::new("ls*").first_word(), None);
        assert_eq!(CommandPattern::new("ls *").first_word(), Some("ls"));
        assert_eq!(CommandPattern::new("git").first_word(), Some("git"));
        assert_eq!(CommandPattern::new("*").first_word(), None);
    }
}
