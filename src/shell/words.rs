//! Words after quote removal.
//!
//! `rable` keeps quotes and backslashes in its literal parts, so the quoting
//! state is tracked here across a word's parts. A word is `exact` when its
//! value is known without running anything (quotes, `$'..'`, escapes only);
//! `$HOME`, `${HOME}`, `$PWD` and a leading `~` are expanded for path checks
//! but make the word inexact for command-name purposes.

use super::extglob;
use rable::{Node, NodeKind};

#[derive(Clone, Debug, Default)]
pub(crate) struct Word {
    /// Source text of the word.
    pub raw: String,
    /// Quote-removed text; expansions keep their source form.
    pub display: String,
    /// Best-effort value for path checks: `~`, `$HOME`, `$PWD` expanded.
    pub value: String,
    /// The value is fully known (no expansion, no glob).
    pub exact: bool,
    /// Contains an unquoted glob character. The value is then a pattern: a quoted `*`, `?`
    /// or `[` in it is written `[*]`, `[?]`, `[[]` (see [`quote_wild`]).
    pub glob: bool,
    /// Byte offsets in `value` of quoted `*`, `?` and `[`: literal characters, escaped when
    /// the word turns out to be a pattern.
    pub quoted_wild: Vec<usize>,
    /// Contains a command or process substitution.
    pub subst: bool,
    /// Contains an expansion whose value is not known.
    pub unknown: bool,
    /// Contains a variable expansion whose value is not known (`$X`, `${X:-...}`, `${a[0]}`):
    /// a path built from it cannot be compared with anything before running.
    pub var_unknown: bool,
    /// Contains a variable the analysis substituted (see `walk::vars`).
    pub var: bool,
    /// Contains a command substitution whose output is not known before running (anything
    /// but `$(pwd)`): a path built from it cannot be compared with the plan.
    pub subst_output: bool,
}

impl Word {
    /// The value as a glob pattern: a word with no unquoted wildcard has its `*`, `?` and `[`
    /// bracketed, so that joined with a pattern it still names only itself.
    pub fn pattern(&self) -> String {
        if self.glob {
            return self.value.clone();
        }
        let mut out = String::with_capacity(self.value.len());
        for c in self.value.chars() {
            push_literal(&mut out, c, matches!(c, '*' | '?' | '['));
        }
        out
    }

    pub fn literal(s: &str) -> Word {
        Word {
            raw: s.to_string(),
            display: s.to_string(),
            value: s.to_string(),
            exact: true,
            ..Word::default()
        }
    }
}

/// What a word's expansion knows, from the shell context: the values of `$HOME`, `$PWD`, and those assigned
/// a literal earlier on the line.
pub(crate) struct Known<'a> {
    pub home: &'a str,
    pub pwd: &'a str,
    /// The private temporary directory the profile grants (`/tmp`, which `TMPDIR` names in
    /// the sandbox), if it grants one.
    pub tmp: Option<&'a str>,
    pub vars: Option<&'a crate::shell::walk::Vars>,
}

pub(crate) fn convert(node: &Node, env: &Known<'_>) -> Word {
    let mut w = convert_parts(node, env);
    if w.raw.contains('{') && w.raw.contains(['~', '$', '`', '\'', '"', '\\']) {
        braces_first(&mut w, env);
    }
    w
}

/// An assignment (`x={a,b}`): bash expands no braces in it.
pub(crate) fn convert_assignment(node: &Node, env: &Known<'_>) -> Word {
    convert_parts(node, env)
}

/// One word's parts, braces kept as written.
fn convert_parts(node: &Node, env: &Known<'_>) -> Word {
    let NodeKind::Word { value, parts, .. } = &node.kind else {
        return Word {
            raw: String::new(),
            unknown: true,
            ..Word::default()
        };
    };
    let mut w = Word {
        raw: value.clone(),
        exact: true,
        ..Word::default()
    };
    let mut dq = false;
    let mut first = true;
    for part in parts {
        match &part.kind {
            NodeKind::WordLiteral { value } => {
                literal_part(value, &mut dq, &mut w, first, env);
            }
            NodeKind::AnsiCQuote { decoded: text, .. }
            | NodeKind::LocaleString { inner: text, .. } => {
                text.chars().for_each(|c| push_quoted(&mut w, c));
            }
            NodeKind::ParamExpansion { param, op, .. } => {
                let unquoted = !dq;
                param_part(&mut w, part.source_text(value), param, op.is_some(), env);
                // Unquoted, a known value's wildcards are expanded as the shell does.
                if unquoted && w.var && w.value.contains(['*', '?', '[']) {
                    w.glob = true;
                }
            }
            NodeKind::CommandSubstitution { .. } | NodeKind::ProcessSubstitution { .. } => {
                substitution_part(&mut w, &part.kind, env);
            }
            NodeKind::BraceExpansion { content } => {
                w.glob = true;
                w.exact = false;
                w.display.push_str(content);
                w.value.push_str(content);
            }
            NodeKind::ParamIndirect { .. } => {
                w.var_unknown = true;
                unknown_part(&mut w);
            }
            // Arithmetic, lengths and anything new.
            _ => unknown_part(&mut w),
        }
        first = false;
    }
    if w.glob {
        w.exact = false;
        quote_wild(&mut w);
        w.value = classes_as_any(&w.value);
    }
    w
}

/// A bracket expression holding a POSIX class, collating symbol or equivalence class
/// (`[[:alpha:]]`, `[[.c.]]`, `[[=c=]]`), which the glob crates here do not know, as `?`: any
/// one character, which matches every name it matches and more (`~/.netr[[:alpha:]]` is
/// judged as `~/.netr?`, which meets `~/.netrc`).
fn classes_as_any(v: &str) -> String {
    if !["[:", "[.", "[="].iter().any(|o| v.contains(o)) {
        return v.to_string();
    }
    let chars: Vec<char> = v.chars().collect();
    let mut out = String::with_capacity(v.len());
    let mut i = 0;
    while i < chars.len() {
        match (chars[i] == '[').then(|| bracket_end(&chars, i)).flatten() {
            Some((end, true)) => {
                out.push('?');
                i = end + 1;
            }
            Some((end, false)) => {
                out.extend(&chars[i..=end]);
                i = end + 1;
            }
            None => {
                out.push(chars[i]);
                i += 1;
            }
        }
    }
    out
}

/// The index of the `]` closing the bracket expression opened at `open`, and whether it holds
/// a `[:`, `[.` or `[=` form; `None` when nothing closes it.
fn bracket_end(chars: &[char], open: usize) -> Option<(usize, bool)> {
    let mut i = open + 1;
    if matches!(chars.get(i), Some('!' | '^')) {
        i += 1;
    }
    // A `]` first is a member, not the end.
    if chars.get(i) == Some(&']') {
        i += 1;
    }
    let mut class = false;
    while let Some(&c) = chars.get(i) {
        match (c, chars.get(i + 1)) {
            (']', _) => return Some((i, class)),
            ('[', Some(&k @ (':' | '.' | '='))) => {
                class = true;
                // Past the form's closing `k]`.
                let close = (i + 2..chars.len().saturating_sub(1))
                    .find(|&j| chars[j] == k && chars[j + 1] == ']')?;
                i = close + 2;
            }
            _ => i += 1,
        }
    }
    None
}

/// A pattern's quoted wildcards as the bracket forms that match only themselves: `'n*'*` is
/// the pattern `n[*]*`, which matches `n*x` and not `nx`.
fn quote_wild(w: &mut Word) {
    if w.quoted_wild.is_empty() {
        return;
    }
    let mut out = String::with_capacity(w.value.len() + 2 * w.quoted_wild.len());
    for (i, c) in w.value.char_indices() {
        push_literal(&mut out, c, w.quoted_wild.contains(&i));
    }
    w.value = out;
    w.quoted_wild.clear();
}

/// `c` onto a pattern, in brackets (`[*]`, which matches only itself) when it is `literal`.
fn push_literal(out: &mut String, c: char, literal: bool) {
    if literal {
        out.extend(['[', c, ']']);
    } else {
        out.push(c);
    }
}

/// bash expands braces before tildes and variables (`{~,x}/.netrc` is `~/.netrc` and
/// `x/.netrc`): each alternative of the source text is converted on its own, and the value
/// becomes their brace list, which the glob expansion splits again. The display stays as
/// written.
fn braces_first(w: &mut Word, env: &Known<'_>) {
    let Some(alternatives) = super::brace_first::expand(&w.raw) else {
        return not_known(w);
    };
    if alternatives.len() < 2 {
        return;
    }
    let mut values = Vec::with_capacity(alternatives.len());
    for alt in &alternatives {
        let Some(a) = alternative(alt, env) else {
            return not_known(w);
        };
        // A value that would split differently as a list is not judged here.
        if a.value.contains(['{', ',', '}']) {
            return not_known(w);
        }
        w.unknown |= a.unknown;
        w.var_unknown |= a.var_unknown;
        w.var |= a.var;
        w.subst |= a.subst;
        w.subst_output |= a.subst_output;
        // The list is a pattern: a quoted wildcard of an alternative stays a character.
        values.push(a.pattern());
    }
    w.value = format!("{{{}}}", values.join(","));
    w.glob = true;
    w.exact = false;
}

/// One alternative of a brace list, converted as the word it becomes.
fn alternative(raw: &str, env: &Known<'_>) -> Option<Word> {
    if raw.is_empty() {
        return Some(Word::literal(""));
    }
    let nodes = rable::parse(&format!(": {raw}"), false).ok()?;
    match &nodes.first()?.kind {
        NodeKind::Command { words, .. } if nodes.len() == 1 && words.len() == 2 => {
            words.get(1).map(|n| convert_parts(n, env))
        }
        _ => None,
    }
}

/// A word whose value this analysis cannot work out: a path built from it asks.
fn not_known(w: &mut Word) {
    w.unknown = true;
    w.var_unknown = true;
    w.exact = false;
}

/// A part whose value is not known before running: `?`.
fn unknown_part(w: &mut Word) {
    w.unknown = true;
    w.exact = false;
    w.display.push('?');
    w.value.push('?');
}

/// What `$$` stands for in a path: a pid above the kernel's largest.
pub(crate) const SHELL_PID: &str = "4194304";

/// `$NAME` or `${NAME...}`: `HOME`, `PWD` and `$$` are known, a variable assigned a literal earlier
/// on the line is its value, anything else (or any operator) is unknown.
fn param_part(w: &mut Word, src: &str, param: &str, has_op: bool, env: &Known<'_>) {
    let shown = if src.is_empty() {
        format!("${param}")
    } else {
        src.to_string()
    };
    w.display.push_str(&shown);
    w.exact = false;
    let known = env.vars.and_then(|v| v.get(param));
    match (param, has_op, known) {
        ("HOME", false, _) => w.value.push_str(env.home),
        ("PWD", false, _) => w.value.push_str(env.pwd),
        // The shell's own pid: a number, the same kind of path whichever it is
        // (`/proc/$$/fd` is the command's own process), never a name the plan or the floor
        // lists. The analysis takes one no process can have (`pid_max` is at most 2^22).
        ("$", false, _) => {
            w.var = true;
            w.value.push_str(SHELL_PID);
        }
        ("TMPDIR", false, None) if env.tmp.is_some() => {
            w.var = true;
            w.value.push_str(env.tmp.unwrap_or_default());
        }
        (_, false, Some(k)) => {
            w.var = true;
            w.glob |= k.glob;
            w.value.push_str(&k.value);
        }
        _ => {
            w.unknown = true;
            w.var_unknown = true;
            w.value.push_str(&shown);
        }
    }
}

/// The commands whose output the analysis predicts: `$(pwd)`, `$(mktemp)`, `$(echo WORD)`,
/// `echo ... | xargs`.
pub(crate) const PREDICTED: [&str; 4] = ["echo", "printf", "pwd", "mktemp"];

thread_local! {
    static OUTPUTS_PREDICTED: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
}

/// Whether this analysis takes the outputs of [`PREDICTED`] commands as known: not on a line
/// that defines a function of one of their names.
pub(crate) fn set_outputs_predicted(on: bool) {
    OUTPUTS_PREDICTED.with(|p| p.set(on));
}

pub(crate) fn outputs_predicted() -> bool {
    OUTPUTS_PREDICTED.with(std::cell::Cell::get)
}

/// `$(...)`, `<(...)` or `>(...)`: unknown, except `$(pwd)`, judged as `$PWD` (so
/// `"$(pwd)/../x"` is the path it names), and `$(mktemp)`, a new name in the directory it
/// makes it in.
fn substitution_part(w: &mut Word, kind: &NodeKind, env: &Known<'_>) {
    if let NodeKind::CommandSubstitution { command, .. } = kind
        && let Some((shown, value)) = predicted_output(command, env)
    {
        w.exact = false;
        w.var = true;
        w.display.push_str(shown);
        w.value.push_str(&value);
        return;
    }
    w.subst_output |= matches!(kind, NodeKind::CommandSubstitution { .. });
    w.subst = true;
    w.unknown = true;
    w.exact = false;
    w.display.push_str("$(...)");
    w.value.push_str("$(...)");
}

/// What `$(pwd)`, `$(mktemp ...)` or `$(echo WORD)` prints, as shown and as a value, while
/// the line defines no function of those names.
fn predicted_output(command: &Node, env: &Known<'_>) -> Option<(&'static str, String)> {
    if !outputs_predicted() {
        return None;
    }
    if is_pwd(command) {
        return Some(("$(pwd)", env.pwd.to_string()));
    }
    if let Some(made) = mktemp_name(command, env) {
        return Some(("$(mktemp)", made));
    }
    echo_output(command, env).map(|text| ("$(echo ...)", text))
}

/// What `$(echo WORD)` prints, when the word's value is known (`~` and known variables
/// expanded, as for a path) and the output is one field the shell neither splits nor globs
/// (no blank, no wildcard, no option): `cat $(echo ~/.npmrc)` reads what `cat ~/.npmrc`
/// reads, as `echo ~/.npmrc | xargs cat` does.
fn echo_output(n: &Node, env: &Known<'_>) -> Option<String> {
    let NodeKind::Command {
        assignments,
        words,
        redirects,
    } = &n.kind
    else {
        return None;
    };
    if !assignments.is_empty() || !redirects.is_empty() {
        return None;
    }
    let [lead, arg] = words.as_slice() else {
        return None;
    };
    if !matches!(&lead.kind, NodeKind::Word { value, .. } if value == "echo") {
        return None;
    }
    let w = convert(arg, env);
    let wild = |c: char| c.is_whitespace() || "*?[".contains(c);
    let plain = !w.unknown && !w.subst && !w.glob && !w.value.starts_with('-');
    (plain && !w.value.is_empty() && !w.value.contains(wild)).then_some(w.value)
}

/// The name `$(mktemp ...)` prints (see [`mktemp_made`]), from the working directory.
fn mktemp_name(n: &Node, env: &Known<'_>) -> Option<String> {
    let plain = plain_words(n)?;
    let (lead, args) = plain.split_first()?;
    if *lead != "mktemp" {
        return None;
    }
    mktemp_made(args, env.pwd, env.tmp)
}

/// The path `mktemp ARGS` makes, as GNU mktemp chooses its directory: `-p DIR` or
/// `--tmpdir=DIR`, else `tmp` (the profile's private tmp, which `TMPDIR` names) with `-t`,
/// `--tmpdir` or no template, else `pwd` for a template of its own; `None` for anything else
/// (an option not known here, a template with a `/`, a relative directory).
pub(crate) fn mktemp_made(args: &[&str], pwd: &str, tmp: Option<&str>) -> Option<String> {
    let (mut dir, mut in_tmp, mut template) = (None, false, None);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match *a {
            "-d" | "-q" | "-u" | "-dq" | "-qd" | "--directory" | "--quiet" | "--dry-run" => {}
            "-t" | "--tmpdir" => in_tmp = true,
            "-p" => dir = Some(it.next()?.to_string()),
            a if a.starts_with("--suffix=") => {}
            a if a.starts_with("--tmpdir=") => {
                dir = a.strip_prefix("--tmpdir=").map(str::to_string)
            }
            a if a.starts_with("-p") => dir = a.strip_prefix("-p").map(str::to_string),
            a if a.starts_with('-') || a.contains('/') || template.is_some() => return None,
            a => template = Some(a),
        }
    }
    let dir = match (dir, template) {
        (Some(d), _) if d.starts_with('/') => d,
        (Some(_), _) => return None,
        (None, Some(_)) if !in_tmp => pwd.to_string(),
        (None, _) => tmp?.to_string(),
    };
    Some(format!("{dir}/{}", template.unwrap_or("tmp.XXXXXXXXXX")))
}

/// `pwd` alone, whose output is the working directory the analysis already tracks.
fn is_pwd(n: &Node) -> bool {
    plain_words(n).is_some_and(|w| w == ["pwd"])
}

/// The words of a simple command with no assignment and no redirection, each written out
/// with no expansion, quote or escape in it; `None` for anything else.
fn plain_words(n: &Node) -> Option<Vec<&str>> {
    let NodeKind::Command {
        assignments,
        words,
        redirects,
    } = &n.kind
    else {
        return None;
    };
    if !assignments.is_empty() || !redirects.is_empty() {
        return None;
    }
    words
        .iter()
        .map(|w| match &w.kind {
            NodeKind::Word { value, .. }
                if !value.contains(['$', '`', '\\', '\'', '"', '~', '*', '?', '[', '{']) =>
            {
                Some(value.as_str())
            }
            _ => None,
        })
        .collect()
}

fn literal_part(text: &str, dq: &mut bool, w: &mut Word, first: bool, env: &Known<'_>) {
    let mut chars = text.chars().peekable();
    let mut at_start = first;
    while let Some(c) = chars.next() {
        let start = at_start;
        at_start = false;
        if *dq {
            in_double_quotes(c, &mut chars, dq, w);
            continue;
        }
        match c {
            '"' => *dq = true,
            '\'' => {
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    push_quoted(w, q);
                }
            }
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(n) => push_quoted(w, n),
            },
            '~' if start => tilde(&mut chars, w, env),
            // bash expands a `~` after the first `=` of a word shaped like an assignment
            // (`if=~/x`, `--` forms excepted), and after each `:` that follows it.
            '=' | ':' => {
                push(w, c);
                at_start =
                    assignment_like(&w.value) && (c == ':' || w.value.matches('=').count() == 1);
            }
            c if extglob::opens(c) && chars.peek() == Some(&'(') => extended(c, &mut chars, w),
            '*' | '?' => {
                w.glob = true;
                push(w, c);
            }
            '[' => {
                // A bracket only globs when a `]` closes it (`[` alone is
                // the test builtin).
                if chars.clone().any(|x| x == ']') {
                    w.glob = true;
                }
                push(w, c);
            }
            _ => push(w, c),
        }
    }
}

/// One character inside double quotes: only `\` before `$`, `` ` ``, `"`, `\` or a newline
/// escapes.
fn in_double_quotes(
    c: char,
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    dq: &mut bool,
    w: &mut Word,
) {
    match c {
        '"' => *dq = false,
        '\\' => match chars.peek().copied() {
            Some(n @ ('$' | '`' | '"' | '\\')) => {
                chars.next();
                push(w, n);
            }
            Some('\n') => {
                chars.next();
            }
            _ => push(w, '\\'),
        },
        _ => push_quoted(w, c),
    }
}

/// A `~` at the start of a word (or after an assignment's `=` or `:`), `chars` after it: the
/// home before `/` or at the end, and `~+` the working directory (`$PWD`); `~user`, another
/// user's home, and `~-` (`$OLDPWD`) are not known.
fn tilde(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, w: &mut Word, env: &Known<'_>) {
    let ends = |c: Option<char>| matches!(c, None | Some('/'));
    let mut after = chars.clone();
    let next = after.next();
    if ends(next) {
        w.display.push('~');
        w.value.push_str(env.home);
        w.exact = false;
    } else if next == Some('+') && ends(after.next()) {
        chars.next();
        w.display.push_str("~+");
        w.value.push_str(env.pwd);
        w.exact = false;
    } else {
        // `~-` (`$OLDPWD`) and `~+N`, `~-N` (the directory stack) name a directory only known
        // when it runs, as an unknown variable does.
        w.var_unknown |= matches!(next, Some('-' | '+'));
        w.unknown = true;
        push(w, '~');
    }
}

/// An extended pattern (`@(a|b)`, opened by `c`) as the glob it is judged as; unknown when it
/// cannot be translated.
fn extended(c: char, chars: &mut std::iter::Peekable<std::str::Chars<'_>>, w: &mut Word) {
    let rest: String = chars.clone().skip(1).collect();
    let Some((form, taken)) = extglob::translate(c, &rest) else {
        not_known(w);
        push(w, c);
        return;
    };
    w.display.push(c);
    w.display.extend(chars.by_ref().take(taken + 1));
    w.value.push_str(&form);
    w.glob = true;
}

/// `NAME=...` with `NAME` a shell identifier.
fn assignment_like(value: &str) -> bool {
    value.split_once('=').is_some_and(|(name, _)| {
        let mut chars = name.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

fn push(w: &mut Word, c: char) {
    w.display.push(c);
    w.value.push(c);
}

/// A quoted or escaped character: a wildcard among them is literal.
fn push_quoted(w: &mut Word, c: char) {
    if matches!(c, '*' | '?' | '[') {
        w.quoted_wild.push(w.value.len());
    }
    push(w, c);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(src: &str) -> Vec<Word> {
        let env = Known {
            home: "/h",
            pwd: "/w",
            tmp: Some("/tmp"),
            vars: None,
        };
        let Ok(nodes) = rable::parse(src, false) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for n in nodes {
            if let NodeKind::Command { words, .. } = n.kind {
                out.extend(words.iter().map(|w| convert(w, &env)));
            }
        }
        out
    }

    #[test]
    fn quote_removal() {
        let w = words(r#"r""m 'a b' "c\"d" \rm $'\x72m' ~/x "$HOME/y" *.rs"#);
        let vals: Vec<&str> = w.iter().map(|w| w.value.as_str()).collect();
        assert_eq!(
            vals,
            ["rm", "a b", "c\"d", "rm", "rm", "/h/x", "/h/y", "*.rs"]
        );
        assert!(w[0].exact && w[3].exact && w[4].exact);
        assert!(!w[5].exact && !w[6].exact && w[7].glob);
        assert!(!w[5].unknown && !w[6].unknown);
    }

    /// As bash: `~` after the `=` of an assignment-shaped word, and after its `:`s.
    #[test]
    fn quoted_wildcards_are_characters_of_the_name() {
        let w = words(r#"cat 'n*' n\? "a[b]" 'n*'* \[x]? $'q*'?"#);
        let got: Vec<(&str, bool)> = w.iter().map(|w| (w.value.as_str(), w.glob)).collect();
        assert_eq!(
            got,
            [
                ("cat", false),
                ("n*", false),
                ("n?", false),
                ("a[b]", false),
                ("n[*]*", true),
                ("[[]x]?", true),
                ("q[*]?", true),
            ]
        );
        assert_eq!(w[1].pattern(), "n[*]");
        assert_eq!(w[4].pattern(), "n[*]*");
        let w = words("cat ~/.netr[[:alpha:]] a[[.c.]]b[![:digit:]x] [ab] '[[:x:]]'*");
        let vals: Vec<&str> = w.iter().map(|w| w.value.as_str()).collect();
        assert_eq!(vals, ["cat", "/h/.netr?", "a?b?", "[ab]", "[[][[]:x:]]*"]);
        // A `]` first is a member; a collating symbol may end a range.
        let w = words("cat []x[:alpha:]] [a-[.z.]] o2/[]x[:alpha:]]");
        let vals: Vec<&str> = w.iter().map(|w| w.value.as_str()).collect();
        assert_eq!(vals, ["cat", "?", "?", "o2/?"]);
    }

    #[test]
    fn tilde_after_an_assignment_shaped_prefix() {
        let w = words(r#"dd if=~/k P=a:~/b --file=~/z x=y=~/q 'if=~/s' n=\~/t"#);
        let vals: Vec<&str> = w.iter().map(|w| w.value.as_str()).collect();
        assert_eq!(
            vals,
            [
                "dd",
                "if=/h/k",
                "P=a:/h/b",
                "--file=~/z",
                "x=y=~/q",
                "if=~/s",
                "n=~/t"
            ]
        );
    }

    /// `~+` is the working directory; `~-` (the previous one) and `~+x` are not known.
    #[test]
    fn tilde_plus_is_the_working_directory() {
        let w = words("ls ~+ ~+/a ~- ~+x");
        let vals: Vec<(&str, bool)> = w.iter().map(|w| (w.value.as_str(), w.unknown)).collect();
        assert_eq!(
            vals,
            [
                ("ls", false),
                ("/w", false),
                ("/w/a", false),
                ("~-", true),
                ("~+x", true)
            ]
        );
    }

    #[test]
    fn substitution_marks_word() {
        let w = words(r#"echo "$(id)" $X"#);
        assert!(w[1].subst && w[1].unknown);
        assert!(w[2].unknown && !w[2].subst);
    }
}
