//! `sed`: in-place edits, and scripts that run commands or write files
//! (`e`, `w`, the `e`/`w` flags of `s`).

use super::Ctx;
use crate::shell::Class;
use crate::shell::classify::Judge;
use crate::shell::words::Word;

pub(super) fn sed(j: &mut Judge, c: &Ctx<'_, '_, '_>, args: &[Word]) {
    let mut in_place = false;
    let mut scripts: Vec<&str> = Vec::new();
    let mut files: Vec<&Word> = Vec::new();
    let mut i = 0;
    let mut explicit_script = false;
    while let Some(a) = args.get(i) {
        let v = a.value.as_str();
        i += 1;
        if v == "-e" || v == "--expression" {
            if let Some(s) = args.get(i) {
                scripts.push(s.value.as_str());
            }
            explicit_script = true;
            i += 1;
        } else if let Some(s) = v.strip_prefix("--expression=") {
            scripts.push(s);
            explicit_script = true;
        } else if v == "-f" || v == "--file" || v.starts_with("--file=") {
            j.raise(
                Class::ScriptRun,
                "[shell.exec-arg.sed] sed script from a file",
            );
            i += 1;
        } else if v == "-i"
            || v.starts_with("-i")
            || v.starts_with("--in-place")
            || (v.starts_with('-') && !v.starts_with("--") && v.contains('i') && v.len() <= 4)
        {
            in_place = true;
        } else if v == "-l" || v == "--line-length" {
            i += 1;
        } else if v.starts_with('-') && v.len() > 1 {
        } else if !explicit_script && scripts.is_empty() {
            scripts.push(v);
        } else {
            files.push(a);
        }
    }
    for s in &scripts {
        if sed_runs_or_writes(s) {
            j.raise(
                Class::InlineCode,
                "[shell.exec-arg.sed] sed script runs commands or writes files (`e`, `w`)",
            );
        }
        for f in sed_write_files(s) {
            j.output(&Word::literal(&f), c.cmd.cwd, c.w.ctx, "sed w");
        }
    }
    if in_place {
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
        }
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
    let mut s = Scan {
        b: script.chars().collect(),
        i: 0,
    };
    let mut out = Vec::new();
    while s.addresses() {
        let Some(cmd) = s.at(s.i) else {
            break;
        };
        s.i += 1;
        let writes = match cmd {
            'w' | 'W' => true,
            's' if s.replacement(cmd) => {
                if !matches!(s.at(s.i), Some('w' | 'W')) {
                    break;
                }
                s.i += 1;
                true
            }
            's' => false,
            _ if s.command(cmd) => break,
            _ => false,
        };
        if writes {
            let file = s.rest_of_line();
            if !file.is_empty() && file != "/dev/stdout" && file != "/dev/stderr" {
                out.push(file);
            }
        }
    }
    out
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
    use super::sed_runs_or_writes;

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
    }
}
