//! `sed`: in-place edits, and scripts that run commands or write files
//! (`e`, `w`, the `e`/`w` flags of `s`).

use super::Ctx;
use crate::shell::Class;
use crate::shell::classify::Judge;
use crate::shell::words::Word;

/// GNU sed's long options, and the short option each stands for (`' '`: none).
const LONG: &[(&str, char)] = &[
    ("binary", 'b'),
    ("debug", ' '),
    ("expression", 'e'),
    ("file", 'f'),
    ("follow-symlinks", ' '),
    ("help", ' '),
    ("in-place", 'i'),
    ("line-length", 'l'),
    ("null-data", 'z'),
    ("posix", ' '),
    ("quiet", 'n'),
    ("regexp-extended", 'r'),
    ("sandbox", ' '),
    ("separate", 's'),
    ("silent", 'n'),
    ("unbuffered", 'u'),
    ("version", ' '),
    ("zero-terminated", 'z'),
];

/// Short options whose value is required: attached (`-es/a/b/`) or the next word.
const SHORT_VALUES: &str = "efl";

/// What the options and operands of one `sed` say.
#[derive(Default)]
struct Parsed<'a> {
    /// `-i[SUFFIX]`, `--in-place[=SUFFIX]`, in any bundle (`-ni`, `-Ei`, `-si`) or shortened
    /// name (`--in`, `--in-pl`).
    in_place: Option<String>,
    scripts: Vec<String>,
    /// `-f FILE` (`--file=FILE`): the files whose text is the script.
    script_files: Vec<String>,
    operands: Vec<&'a Word>,
}

pub(super) fn sed(j: &mut Judge, c: &Ctx<'_, '_, '_>, args: &[Word]) {
    let mut p = parse(args);
    if !p.script_files.is_empty() {
        script_files(j, c, &mut p);
    } else if p.scripts.is_empty() && !p.operands.is_empty() {
        // Without `-e` or `-f`, the first operand is the script.
        let first = p.operands.remove(0);
        p.scripts.push(first.value.clone());
    }
    for s in &p.scripts {
        if sed_runs_or_writes(s) {
            j.raise(
                Class::InlineCode,
                "[shell.exec-arg.sed] sed script runs commands or writes files (`e`, `w`)",
            );
        }
        for f in sed_write_files(s) {
            j.output(&Word::literal(&f), c.cmd.cwd, c.w.ctx, "sed w");
        }
        for f in sed_read_files(s) {
            j.read(&Word::literal(&f), c.cmd.cwd, c.w.ctx);
        }
    }
    if let Some(suffix) = &p.in_place {
        in_place(j, c, &p.operands, suffix);
    }
}

/// `sed -f FILE`: the file is read, and its text judged as the script, as it is when the
/// analysis runs; one that cannot be read here (`-f -`, a computed name, a missing file) asks.
fn script_files(j: &mut Judge, c: &Ctx<'_, '_, '_>, p: &mut Parsed<'_>) {
    j.t.project_files = true;
    for f in std::mem::take(&mut p.script_files) {
        let w = Word::literal(&f);
        j.read(&w, c.cmd.cwd, c.w.ctx);
        let text = c.cmd.cwd.iter().flatten().map(|d| {
            let path = crate::shell::paths::resolve(&f, d);
            crate::shell::project::read(&path).and_then(Result::ok)
        });
        let texts: Option<Vec<String>> = text.collect();
        match texts.filter(|t| !t.is_empty() && f != "-") {
            Some(t) => p.scripts.extend(t),
            None => j.raise(
                Class::Opaque,
                format!("[shell.exec-arg.sed] sed script `{f}` cannot be read before it runs"),
            ),
        }
    }
}

/// `sed -i`: each file operand is rewritten, and with a suffix its backup is written too
/// (`FILE.bak`, or the suffix with `*` replaced by the file's name: `-i'bak/*'`).
fn in_place(j: &mut Judge, c: &Ctx<'_, '_, '_>, files: &[&Word], suffix: &str) {
    if files.is_empty() {
        j.raise(
            Class::Opaque,
            "[shell.exec-arg.sed] `sed -i` without visible files",
        );
    }
    if c.xargs {
        j.raise(
            Class::Opaque,
            "[shell.xargs] `sed -i` on files not visible here",
        );
    }
    for f in files {
        j.write(f, c.cmd.cwd, c.w.ctx, "sed -i on");
        if suffix.is_empty() || f.unknown || f.subst || f.glob {
            continue;
        }
        for backup in backups(&f.value, suffix) {
            j.write(&Word::literal(&backup), c.cmd.cwd, c.w.ctx, "sed -i backup");
        }
    }
}

/// Where GNU sed may put the backup of `file`: the suffix appended, or with each `*` replaced
/// by the file's name, in the file's directory (and, to be safe, from the working directory).
fn backups(file: &str, suffix: &str) -> Vec<String> {
    if !suffix.contains('*') {
        return vec![format!("{file}{suffix}")];
    }
    let (dir, base) = match file.rfind('/') {
        Some(k) => file.split_at(k + 1),
        None => ("", file),
    };
    let named = suffix.replace('*', base);
    let mut out = vec![format!("{dir}{named}")];
    if !dir.is_empty() && !named.starts_with('/') {
        out.push(named);
    }
    out
}

/// Options as GNU sed's getopt reads them: bundles, attached values, `--name=VALUE`, and
/// unique prefixes of long names; options may follow operands, until `--`.
fn parse(args: &[Word]) -> Parsed<'_> {
    let mut p = Parsed::default();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        let v = a.value.as_str();
        if v == "--" {
            p.operands.extend(args.get(i..).unwrap_or(&[]));
            break;
        }
        let next = args.get(i).map(|w| w.value.as_str());
        let taken = if let Some(long) = v.strip_prefix("--") {
            long_option(&mut p, long, next)
        } else if v.len() > 1 && v.starts_with('-') {
            bundle(&mut p, &v[1..], next)
        } else {
            p.operands.push(a);
            false
        };
        i += usize::from(taken);
    }
    p
}

/// A bundle of short options (`-ni`, `-i.bak`, `-es/a/b/`); whether it took the next word.
fn bundle(p: &mut Parsed<'_>, body: &str, next: Option<&str>) -> bool {
    for (at, ch) in body.char_indices() {
        let rest = &body[at + ch.len_utf8()..];
        if ch == 'i' {
            // Its suffix is the rest of the word: `-in` keeps a backup named `FILEn`.
            p.in_place = Some(rest.to_string());
            return false;
        }
        if SHORT_VALUES.contains(ch) {
            let (value, taken) = if rest.is_empty() {
                (next, true)
            } else {
                (Some(rest), false)
            };
            short_value(p, ch, value);
            return taken && next.is_some();
        }
    }
    false
}

fn short_value(p: &mut Parsed<'_>, ch: char, value: Option<&str>) {
    match ch {
        'e' => p.scripts.extend(value.map(str::to_string)),
        'f' => p.script_files.extend(value.map(str::to_string)),
        _ => {}
    }
}

/// `--name[=VALUE]` or `--name VALUE`; whether it took the next word.
fn long_option(p: &mut Parsed<'_>, long: &str, next: Option<&str>) -> bool {
    let (name, value) = match long.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (long, None),
    };
    let matching: Vec<char> = match LONG.iter().find(|(n, _)| *n == name) {
        Some((_, short)) => vec![*short],
        None if name.is_empty() => Vec::new(),
        None => LONG
            .iter()
            .filter(|(n, _)| n.starts_with(name))
            .map(|(_, s)| *s)
            .collect(),
    };
    // An ambiguous prefix stops sed before it edits anything; one that could be `--in-place`
    // is taken for it all the same.
    if matching.contains(&'i') {
        p.in_place = Some(value.unwrap_or("").to_string());
        return false;
    }
    match matching.as_slice() {
        [ch] if SHORT_VALUES.contains(*ch) => {
            short_value(p, *ch, value.or(next));
            value.is_none() && next.is_some()
        }
        _ => false,
    }
}

/// Does a sed script use `e`, `w`/`W`, or the `e`/`w` flags of `s`?
/// Anything this scanner cannot follow counts as yes.
pub(crate) fn sed_runs_or_writes(script: &str) -> bool {
    let mut s = Scan {
        b: script.chars().collect(),
        i: 0,
    };
    loop {
        if !s.addresses() {
            return true;
        }
        let Some(cmd) = s.at(s.i) else {
            return false;
        };
        s.i += 1;
        if s.command(cmd) {
            return true;
        }
    }
}

/// The files a sed script writes with `w`/`W` and the `w` flag of `s`, as far as the script
/// can be followed (`/dev/stdout` and `/dev/stderr` aside): each is judged as an output, so one
/// outside the writable set meets the plan.
pub(crate) fn sed_write_files(script: &str) -> Vec<String> {
    sed_files(script).0
}

/// The files a sed script reads with `r` and `R`, as far as the script can be followed: each
/// is judged as a read, so a hidden file named there meets the plan.
pub(crate) fn sed_read_files(script: &str) -> Vec<String> {
    sed_files(script).1
}

/// The files a sed script writes and reads, in one scan of its commands.
fn sed_files(script: &str) -> (Vec<String>, Vec<String>) {
    let mut s = Scan {
        b: script.chars().collect(),
        i: 0,
    };
    let (mut writes, mut reads) = (Vec::new(), Vec::new());
    while s.addresses() {
        let Some(cmd) = s.at(s.i) else {
            break;
        };
        s.i += 1;
        let (names, skip): (&mut Vec<String>, &[&str]) = match cmd {
            'w' | 'W' => (&mut writes, &["/dev/stdout", "/dev/stderr"]),
            'r' | 'R' => (&mut reads, &["/dev/stdin"]),
            's' if s.replacement(cmd) => {
                if !matches!(s.at(s.i), Some('w' | 'W')) {
                    break;
                }
                s.i += 1;
                (&mut writes, &["/dev/stdout", "/dev/stderr"])
            }
            's' => continue,
            _ if s.command(cmd) => break,
            _ => continue,
        };
        let file = s.rest_of_line();
        if !file.is_empty() && !skip.contains(&file.as_str()) {
            names.push(file);
        }
    }
    (writes, reads)
}

/// A sed script, read one character at a time.
struct Scan {
    b: Vec<char>,
    i: usize,
}

impl Scan {
    fn at(&self, k: usize) -> Option<char> {
        self.b.get(k).copied()
    }

    /// A file name: from the next non-blank to the end of the line.
    fn rest_of_line(&mut self) -> String {
        while matches!(self.at(self.i), Some(' ' | '\t')) {
            self.i += 1;
        }
        let start = self.i;
        while self.at(self.i).is_some_and(|x| x != '\n') {
            self.i += 1;
        }
        self.b[start..self.i]
            .iter()
            .collect::<String>()
            .trim_end()
            .to_string()
    }

    /// Skip blanks, separators and addresses; `false` when an address cannot be followed.
    fn addresses(&mut self) -> bool {
        while let Some(ch) = self.at(self.i) {
            match ch {
                ' ' | '\t' | '\n' | ';' | '!' | '{' | '}' | ',' | '$' | '~' | '+' => self.i += 1,
                '0'..='9' => self.i += 1,
                '/' | '\\' => {
                    if !self.regex_address(ch) {
                        return false;
                    }
                }
                _ => break,
            }
        }
        true
    }

    /// `/re/` or `\cREc`, with its `I` or `M` flag.
    fn regex_address(&mut self, ch: char) -> bool {
        let delim = if ch == '\\' {
            self.i += 1;
            match self.at(self.i) {
                Some(d) => d,
                None => return false,
            }
        } else {
            '/'
        };
        self.i += 1;
        while let Some(x) = self.at(self.i) {
            if x == '\\' {
                self.i += 2;
                continue;
            }
            self.i += 1;
            if x == delim {
                break;
            }
        }
        if matches!(self.at(self.i), Some('I' | 'M')) {
            self.i += 1;
        }
        true
    }

    /// One command and its arguments; `true` when it runs or writes, or cannot be followed.
    fn command(&mut self, cmd: char) -> bool {
        match cmd {
            'e' | 'w' | 'W' => return true,
            's' | 'y' => return self.replacement(cmd),
            'a' | 'i' | 'c' | 'r' | 'R' | 'b' | 't' | 'T' | ':' => {
                while self.at(self.i).is_some_and(|x| x != '\n') {
                    if matches!(cmd, 'b' | 't' | 'T' | ':') && self.at(self.i) == Some(';') {
                        break;
                    }
                    self.i += 1;
                }
            }
            'p' | 'P' | 'd' | 'D' | 'n' | 'N' | 'g' | 'G' | 'h' | 'H' | 'x' | 'l' | '=' | 'q'
            | 'Q' | 'z' | 'F' => {
                while self
                    .at(self.i)
                    .is_some_and(|x| x.is_ascii_digit() || x == ' ')
                {
                    self.i += 1;
                }
            }
            '#' => {
                while self.at(self.i).is_some_and(|x| x != '\n') {
                    self.i += 1;
                }
            }
            _ => return true,
        }
        false
    }

    /// `s/re/text/flags` or `y/src/dst/`; `true` for the `e` and `w` flags, or when it cannot
    /// be followed.
    fn replacement(&mut self, cmd: char) -> bool {
        let Some(delim) = self.at(self.i) else {
            return true;
        };
        if delim == '\n' || delim == '\\' {
            return true;
        }
        self.i += 1;
        let mut parts = 0;
        while parts < 2 {
            match self.at(self.i) {
                None => return true,
                Some('\\') => self.i += 2,
                Some(x) => {
                    self.i += 1;
                    if x == delim {
                        parts += 1;
                    }
                }
            }
        }
        if cmd == 's' {
            while let Some(f) = self.at(self.i) {
                match f {
                    'e' | 'w' | 'W' => return true,
                    'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9' => self.i += 1,
                    _ => break,
                }
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::{sed_read_files, sed_runs_or_writes};

    #[test]
    fn sed_scanner() {
        assert!(!sed_runs_or_writes("s/a/b/g"));
        assert!(!sed_runs_or_writes("1,5p;/x/d"));
        assert!(!sed_runs_or_writes("s|/usr|/opt|; 3q"));
        assert!(sed_runs_or_writes("s/a/b/e"));
        assert!(sed_runs_or_writes("s/a/b/w out"));
        assert!(sed_runs_or_writes("1e id"));
        assert!(sed_runs_or_writes("w /tmp/x"));
        assert!(sed_runs_or_writes("/x/ { e rm -rf ~\n}"));
        use super::sed_write_files;
        assert_eq!(sed_write_files("w /etc/x"), ["/etc/x"]);
        assert_eq!(
            sed_write_files("/a/w out.txt\ns/b/c/w two"),
            ["out.txt", "two"]
        );
        assert_eq!(
            sed_write_files("s/a/b/gw /dev/stdout"),
            Vec::<String>::new()
        );
        assert!(sed_write_files("s/a/b/g;p").is_empty());
        assert_eq!(sed_read_files("1r /root/.netrc"), ["/root/.netrc"]);
        assert_eq!(super::backups("a/f", ".bak"), ["a/f.bak"]);
        assert_eq!(super::backups("a/f", "old/*~"), ["a/old/f~", "old/f~"]);
        assert_eq!(sed_read_files("s/a/b/\n$R x.txt"), ["x.txt"]);
    }
}
