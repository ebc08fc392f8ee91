//! `awk`: a program that runs commands, writes or reads files, or loads code. The program is
//! read token by token (strings, regular expressions and comments apart), so a `|` in
//! `/a|b/` or `"a|b"` is not taken for a pipe, and one anywhere else is.

use super::Ctx;
use crate::shell::Class;
use crate::shell::classify::Judge;
use crate::shell::commands::outputs::attached_value;
use crate::shell::words::Word;

/// Long options that take the program, or code it loads, from a file; a shortened name that
/// could be one of them counts as one (`--fi=FILE`, which gawk finds ambiguous, mawk not).
const FROM_FILE: &[&str] = &["exec", "file", "include", "load"];

/// Short options whose value is required: attached, or the next word.
const SHORT_VALUES: &str = "FvfEileW";

/// Short options of gawk whose value is optional and only ever attached (`-o[FILE]`).
const SHORT_OPTIONAL: &str = "dDoLp";

/// gawk's long options whose value is required: after `=`, or the next word.
const LONG_VALUES: &[&str] = &[
    "assign",
    "exec",
    "field-separator",
    "file",
    "include",
    "load",
    "source",
];

/// gawk's long options whose value is optional (`--profile[=FILE]`).
const LONG_OPTIONAL: &[&str] = &["debug", "dump-variables", "lint", "pretty-print", "profile"];

pub(super) fn awk(j: &mut Judge, c: &Ctx<'_, '_, '_>, args: &[Word]) {
    let opts = parse(args);
    if opts.from_file {
        j.raise(
            Class::ScriptRun,
            "[shell.exec-arg.awk] awk program from a file",
        );
        return;
    }
    if opts.debugger {
        j.raise(
            Class::Opaque,
            "[shell.exec-arg.awk] `gawk --debug` runs the debugger's commands, which evaluate code",
        );
    }
    for f in &opts.outputs {
        j.write(f, c.cmd.cwd, c.w.ctx, "gawk report");
    }
    for p in &opts.programs {
        if p.subst || p.var_unknown {
            j.raise(
                Class::Opaque,
                format!(
                    "[shell.exec-arg.awk] awk program `{}` is only known when it runs",
                    p.display
                ),
            );
        }
        // Any variable by any name, or all of them.
        if p.value.contains("ENVIRON") || p.value.contains("PROCINFO") {
            j.t.dumps_env = true;
        }
        judge_program(j, c, &scan(&p.value));
    }
}

/// What the options say: the program texts, and what gawk does besides running them.
#[derive(Default)]
struct Options {
    programs: Vec<Word>,
    from_file: bool,
    debugger: bool,
    /// Files gawk writes reports to (`--profile`, `--dump-variables`, `--pretty-print`).
    outputs: Vec<Word>,
}

fn parse(args: &[Word]) -> Options {
    let mut o = Options::default();
    let mut operands: Vec<&Word> = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        let v = a.value.as_str();
        if v == "--" {
            operands.extend(args.get(i..).unwrap_or(&[]));
            break;
        }
        if let Some(long) = v.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, val)) => (n, Some(val)),
                None => (long, None),
            };
            let takes = resolve(name, LONG_VALUES).is_some();
            let next = (takes && value.is_none()).then(|| args.get(i)).flatten();
            i += usize::from(next.is_some());
            let value = value.map(|val| attached_value(a, val));
            long_option(&mut o, name, value.or_else(|| next.cloned()));
        } else if v.len() > 1 && v.starts_with('-') {
            i += bundle(&mut o, a, args.get(i));
        } else {
            operands.push(a);
        }
    }
    if o.programs.is_empty()
        && let Some(p) = operands.first()
    {
        o.programs.push((*p).clone());
    }
    o
}

/// A bundle of short options (`-F: -v x=1`, `-e CODE`, `-oFILE`); returns how many of the
/// following words it took.
fn bundle(o: &mut Options, a: &Word, next: Option<&Word>) -> usize {
    let v = a.value.as_str();
    for (at, ch) in v.char_indices().skip(1) {
        let rest = &v[at + ch.len_utf8()..];
        let attached = (!rest.is_empty()).then(|| attached_value(a, rest));
        if SHORT_VALUES.contains(ch) {
            let taken = attached.is_none() && next.is_some();
            let value = attached.or_else(|| next.cloned());
            short_option(o, ch, value);
            return usize::from(taken);
        }
        if SHORT_OPTIONAL.contains(ch) {
            short_option(o, ch, attached);
            return 0;
        }
    }
    0
}

fn short_option(o: &mut Options, ch: char, value: Option<Word>) {
    let long = match ch {
        'e' => "source",
        'f' | 'E' | 'i' | 'l' => "file",
        'd' => "dump-variables",
        'D' => "debug",
        'o' => "pretty-print",
        'p' => "profile",
        'W' => {
            // `-W name[=value]`: gawk's spelling of `--name[=value]`.
            if let Some(w) = value {
                let (name, val) = w.value.split_once('=').unwrap_or((w.value.as_str(), ""));
                let val = (!val.is_empty()).then(|| attached_value(&w, val));
                long_option(o, name, val);
            }
            return;
        }
        _ => return,
    };
    long_option(o, long, value);
}

/// One long option (exact or a unique prefix of gawk's name) and its value.
fn long_option(o: &mut Options, name: &str, value: Option<Word>) {
    let Some(full) = resolve(name, LONG_VALUES).or_else(|| resolve(name, LONG_OPTIONAL)) else {
        o.from_file |= name.len() >= 2 && FROM_FILE.iter().any(|f| f.starts_with(name));
        return;
    };
    match full {
        "source" => o.programs.extend(value),
        "exec" | "file" | "include" | "load" => o.from_file = true,
        "debug" => o.debugger = true,
        "dump-variables" => o
            .outputs
            .push(value.unwrap_or_else(|| Word::literal("awkvars.out"))),
        "pretty-print" | "profile" => o
            .outputs
            .push(value.unwrap_or_else(|| Word::literal("awkprof.out"))),
        _ => {}
    }
}

/// `name` as getopt takes it: exactly, or as the prefix of one name only.
fn resolve(name: &str, table: &[&'static str]) -> Option<&'static str> {
    if name.is_empty() {
        return None;
    }
    if let Some(n) = table.iter().find(|n| **n == name) {
        return Some(n);
    }
    let mut prefixed = table.iter().filter(|n| n.starts_with(name));
    prefixed
        .next()
        .filter(|_| prefixed.next().is_none())
        .copied()
}

fn judge_program(j: &mut Judge, c: &Ctx<'_, '_, '_>, s: &Scanned) {
    let (cwd, ctx) = (c.cmd.cwd, c.w.ctx);
    if s.runs {
        j.raise(
            Class::InlineCode,
            "[shell.exec-arg.awk] awk program runs commands (`system`, pipes)",
        );
    }
    if s.loads {
        j.raise(
            Class::ScriptRun,
            "[shell.exec-arg.awk] awk program loads code from a file (`@include`, `@load`)",
        );
    }
    if s.indirect {
        j.raise(
            Class::InlineCode,
            "[shell.exec-arg.awk] awk program calls a function by a name computed when it runs",
        );
    }
    if s.network {
        j.t.network = true;
        j.raise(
            Class::Network,
            "[shell.network] awk program opens a network connection (`/inet/...`)",
        );
    }
    for f in &s.writes {
        j.write(&Word::literal(f), cwd, ctx, "awk program writes");
    }
    for f in &s.reads {
        j.read(&Word::literal(f), cwd, ctx);
    }
    if s.unknown_write {
        j.raise(
            Class::OutsideWrite,
            "[shell.write.unknown] awk program writes to a file named when it runs",
        );
    }
    if s.unknown_read {
        j.raise(
            Class::Opaque,
            "[shell.exec-arg.awk] awk program reads a file named when it runs",
        );
    }
    if s.argv {
        j.raise(
            Class::Opaque,
            "[shell.exec-arg.awk] awk program changes ARGV, ARGC or ENVIRON: the files it reads \
             or the environment of what it runs are decided when it runs",
        );
    }
}

/// What an awk program does beyond reading its operands and printing.
#[derive(Default, Debug)]
struct Scanned {
    /// Runs commands: `system(...)`, `print | cmd`, `cmd | getline`, `|&`.
    runs: bool,
    /// `@include` or `@load`.
    loads: bool,
    /// `@f(...)`: gawk's call of the function a variable names, built-ins included.
    indirect: bool,
    /// A gawk network special file (`/inet/tcp/...`).
    network: bool,
    /// Files `print > "FILE"` writes.
    writes: Vec<String>,
    /// Files `getline < "FILE"` reads.
    reads: Vec<String>,
    unknown_write: bool,
    unknown_read: bool,
    /// Assigns `ARGV`, `ARGC` or `ENVIRON`.
    argv: bool,
}

fn scan(code: &str) -> Scanned {
    let toks = lex(code);
    let mut s = Scanned::default();
    for (i, t) in toks.iter().enumerate() {
        match t {
            Tok::Op(op) if op == "|" || op == "|&" => s.runs = true,
            Tok::Name(n) if n == "system" => s.runs = true,
            Tok::Op(op) if op == "@" => match toks.get(i + 1) {
                Some(Tok::Name(n)) if n == "include" || n == "load" => s.loads = true,
                Some(Tok::Name(n)) if n == "namespace" => {}
                _ => s.indirect = true,
            },
            Tok::Name(n) if n == "print" || n == "printf" => redirect(&toks, i, &mut s),
            Tok::Name(n) if n == "getline" => getline(&toks, i, &mut s),
            Tok::Name(n) if matches!(n.as_str(), "ARGV" | "ARGC" | "ENVIRON") => {
                s.argv |= assigned(&toks, i);
            }
            Tok::Name(n) if n == "sub" || n == "gsub" => {
                s.argv |= call_args(&toks, i)
                    .iter()
                    .any(|t| matches!(t, Tok::Name(n) if n == "ARGV" || n == "ENVIRON"));
            }
            _ => {}
        }
    }
    for f in s.writes.iter().chain(&s.reads) {
        s.network |= f.starts_with("/inet");
    }
    s
}

/// `print ... > TARGET` or `>> TARGET` (a `>` outside parentheses): a string literal alone is
/// a file this analysis judges; anything else is named when it runs.
fn redirect(toks: &[Tok], at: usize, s: &mut Scanned) {
    let mut depth = 0i32;
    let mut k = at + 1;
    while let Some(t) = toks.get(k) {
        k += 1;
        match t {
            Tok::End => return,
            Tok::Op(op) if op == "(" || op == "[" => depth += 1,
            Tok::Op(op) if op == ")" || op == "]" => depth -= 1,
            Tok::Op(op) if depth == 0 && (op == ">" || op == ">>") => break,
            _ => {}
        }
    }
    let target: Vec<&Tok> = toks
        .get(k..)
        .unwrap_or(&[])
        .iter()
        .take_while(|t| **t != Tok::End)
        .collect();
    match target.as_slice() {
        [] => {}
        [Tok::Str(f)] => s.writes.push(f.clone()),
        _ => s.unknown_write = true,
    }
}

/// `getline [VAR] < FILE`: the file is the primary after `<`.
fn getline(toks: &[Tok], at: usize, s: &mut Scanned) {
    let mut depth = 0;
    for (k, t) in toks.iter().enumerate().skip(at + 1) {
        match t {
            Tok::Op(op) if op == "<" && depth == 0 => {
                match toks.get(k + 1) {
                    None => {}
                    Some(Tok::Str(f)) => s.reads.push(f.clone()),
                    Some(_) => s.unknown_read = true,
                }
                return;
            }
            Tok::Op(op) if op == "[" => depth += 1,
            Tok::Op(op) if op == "]" => depth -= 1,
            Tok::End => return,
            _ if depth > 0 => {}
            Tok::Name(n) if matches!(n.as_str(), "ARGV" | "ARGC" | "ENVIRON") => s.argv = true,
            Tok::Name(_) | Tok::Num => {}
            Tok::Op(op) if op == "$" => {}
            _ => return,
        }
    }
}

/// Whether the name at `at` (`ARGV`, `ARGC`, `ENVIRON`) is assigned or handed over whole:
/// `ARGV[1] = x`, `ARGC++`, `++ARGC`, `split(s, ARGV)`, `for (ARGC in a)`.
fn assigned(toks: &[Tok], at: usize) -> bool {
    let op = |k: usize| match toks.get(k) {
        Some(Tok::Op(o)) => o.as_str(),
        _ => "",
    };
    let is_op = |k: usize, ops: &[&str]| at.checked_sub(k).is_some_and(|p| ops.contains(&op(p)));
    if is_op(1, &["++", "--"]) {
        return true;
    }
    let mut after = at + 1;
    let indexed = op(after) == "[";
    if indexed {
        let mut depth = 0;
        while let Some(t) = toks.get(after) {
            after += 1;
            match t {
                Tok::Op(o) if o == "[" => depth += 1,
                Tok::Op(o) if o == "]" => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    let assigns = ["=", "+=", "-=", "*=", "/=", "%=", "^=", "**=", "++", "--"];
    if assigns.contains(&op(after)) {
        return true;
    }
    let name = matches!(toks.get(at), Some(Tok::Name(n)) if n == "ARGC");
    let in_next = matches!(toks.get(after), Some(Tok::Name(n)) if n == "in");
    let in_prev = at
        .checked_sub(1)
        .is_some_and(|p| matches!(toks.get(p), Some(Tok::Name(n)) if n == "in"));
    // A whole array handed to a function can be filled by it; `k in ENVIRON` only reads.
    (!indexed && !name && !in_prev) || (in_next && is_op(1, &["("]))
}

/// The tokens between the parentheses of the call at `at`.
fn call_args(toks: &[Tok], at: usize) -> &[Tok] {
    let start = at + 2;
    if !matches!(toks.get(at + 1), Some(Tok::Op(o)) if o == "(") {
        return &[];
    }
    let mut depth = 1;
    let mut k = start;
    while let Some(t) = toks.get(k) {
        match t {
            Tok::Op(o) if o == "(" => depth += 1,
            Tok::Op(o) if o == ")" => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            _ => {}
        }
        k += 1;
    }
    toks.get(start..k).unwrap_or(&[])
}

/// A token of an awk program.
#[derive(Debug, PartialEq)]
enum Tok {
    /// A string literal, escapes decoded.
    Str(String),
    Regex,
    Name(String),
    Num,
    Op(String),
    /// The end of a statement: `;`, a newline, `{` or `}`.
    End,
}

/// Operators of more than one character, longest first.
const OPS: &[&str] = &[
    "**=", "||", "&&", "|&", ">>", ">=", "<=", "==", "!=", "!~", "++", "--", "+=", "-=", "*=",
    "/=", "%=", "^=", "**",
];

fn lex(code: &str) -> Vec<Tok> {
    let b: Vec<char> = code.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    while let Some(&ch) = b.get(i) {
        match ch {
            ' ' | '\t' | '\r' => i += 1,
            '\\' if b.get(i + 1) == Some(&'\n') => i += 2,
            '\n' | ';' | '{' | '}' => {
                toks.push(Tok::End);
                i += 1;
            }
            '#' => {
                while b.get(i).is_some_and(|c| *c != '\n') {
                    i += 1;
                }
            }
            '"' => {
                let (s, end) = string(&b, i + 1);
                toks.push(Tok::Str(s));
                i = end;
            }
            '/' if regex_allowed(toks.last()) => {
                i = regex_end(&b, i + 1);
                toks.push(Tok::Regex);
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let start = i;
                while b
                    .get(i)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
                {
                    i += 1;
                }
                toks.push(Tok::Name(b[start..i].iter().collect()));
            }
            c if c.is_ascii_digit()
                || (c == '.' && b.get(i + 1).is_some_and(char::is_ascii_digit)) =>
            {
                while b
                    .get(i)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '.')
                {
                    i += 1;
                }
                toks.push(Tok::Num);
            }
            _ => {
                let rest: String = b[i..b.len().min(i + 3)].iter().collect();
                let op = OPS
                    .iter()
                    .find(|o| rest.starts_with(**o))
                    .map_or_else(|| ch.to_string(), |o| (*o).to_string());
                i += op.chars().count();
                toks.push(Tok::Op(op));
            }
        }
    }
    toks
}

/// A `/` starts a regular expression where an operand may start, and divides after one.
fn regex_allowed(prev: Option<&Tok>) -> bool {
    match prev {
        None | Some(Tok::End) => true,
        Some(Tok::Str(_) | Tok::Num | Tok::Regex) => false,
        Some(Tok::Name(n)) => matches!(
            n.as_str(),
            "print" | "printf" | "return" | "case" | "do" | "else" | "exit"
        ),
        Some(Tok::Op(o)) => !matches!(o.as_str(), ")" | "]" | "++" | "--"),
    }
}

/// A string literal from `start` (after its `"`): its text, and where the next token starts.
fn string(b: &[char], start: usize) -> (String, usize) {
    let mut s = String::new();
    let mut i = start;
    while let Some(&c) = b.get(i) {
        i += 1;
        match c {
            '"' => return (s, i),
            '\\' => {
                if let Some(&e) = b.get(i) {
                    i += 1;
                    match e {
                        'n' => s.push('\n'),
                        't' => s.push('\t'),
                        '\n' => {}
                        _ => s.push(e),
                    }
                }
            }
            _ => s.push(c),
        }
    }
    (s, i)
}

/// Where a regular expression from `start` (after its `/`) ends: after its closing `/`, which
/// may not stand in a bracket expression (`/[/]/`), or at the end of the line.
fn regex_end(b: &[char], start: usize) -> usize {
    let mut i = start;
    let mut bracket = false;
    while let Some(&c) = b.get(i) {
        match c {
            '\\' => i += 1,
            '\n' => return i,
            '[' if !bracket => {
                bracket = true;
                // `[]...]` and `[^]...]`: a `]` first is a member.
                if b.get(i + 1) == Some(&'^') {
                    i += 1;
                }
                if b.get(i + 1) == Some(&']') {
                    i += 1;
                }
            }
            ']' if bracket => bracket = false,
            '/' if !bracket => return i + 1,
            _ => {}
        }
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::scan;

    #[test]
    fn ordinary_programs_do_nothing_else() {
        for p in [
            "{print $1}",
            "$3 > 1000 {print $1}",
            "/a|b/ {print}",
            "{if ($3 > 100) print $1}",
            "{ split($0, a, \"|\"); print a[1] }",
            "{gsub(/\\|/, \",\"); print}",
            "BEGIN{FS=\"|\"} {print $2}",
            "{ n = n + $1 / 2 } END { print n }",
            "# a | b\n{print}",
            "{print ARGV[1], ARGC}",
            "BEGIN{for (k in ENVIRON) print k}",
            "$1 ~ /[/|]/ {print}",
            "NR==1 || NR==2",
        ] {
            let s = scan(p);
            assert!(
                !s.runs && !s.unknown_write && !s.unknown_read && !s.argv && s.writes.is_empty(),
                "{p}: {s:?}"
            );
        }
    }

    #[test]
    fn commands_and_files() {
        assert!(scan("BEGIN{c=\"sh\"; print \"id\" | c}").runs);
        assert!(scan("{print | $1}").runs);
        assert!(scan("BEGIN{system(\"id\")}").runs);
        assert!(scan("BEGIN{\"id\" | getline x}").runs);
        assert!(scan("BEGIN{print |& \"/inet/tcp/0/h/80\"}").runs);
        // A `"` in a comment does not hide the code after it.
        assert!(scan("# \"\nBEGIN{print \"id\" | \"sh\"}").runs);
        assert!(scan("@include \"x\"").loads);
        assert!(scan("@load \"x\"").loads);
        assert!(scan("BEGIN{f=\"system\"; @f(\"id\")}").indirect);
        assert!(scan("BEGIN{print \"x\" > f}").unknown_write);
        assert!(scan("{print \"x\" > ARGV[1]}").unknown_write);
        assert!(scan("{print > $2 \".txt\"}").unknown_write);
        assert_eq!(scan("{print $1 > \"out.txt\"}").writes, ["out.txt"]);
        assert_eq!(
            scan("{printf(\"%s\", $1) >> \"/etc/y\"}").writes,
            ["/etc/y"]
        );
        assert_eq!(
            scan("BEGIN{getline l < \"/root/.netrc\"; print l}").reads,
            ["/root/.netrc"]
        );
        assert!(scan("BEGIN{while ((getline l < f) > 0) print l}").unknown_read);
        assert!(scan("BEGIN{getline < \"/inet/tcp/0/h/80\"}").network);
        assert!(scan("BEGIN{ARGV[1]=\"/root/.netrc\"; ARGC=2} {print}").argv);
        assert!(scan("BEGIN{ARGC++}").argv);
        assert!(scan("BEGIN{split(\"/root/.netrc\", ARGV)}").argv);
        assert!(scan("BEGIN{sub(/x/, \"y\", ARGV[1])}").argv);
        assert!(scan("BEGIN{getline ARGV[1] < \"list\"}").argv);
        assert!(scan("BEGIN{ENVIRON[\"PATH\"]=\"/tmp\"}").argv);
    }
}
