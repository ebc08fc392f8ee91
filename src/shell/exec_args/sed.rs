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
    let b: Vec<char> = script.chars().collect();
    let mut i = 0;
    let at = |k: usize| b.get(k).copied();
    loop {
        // Skip blanks, separators and addresses.
        while let Some(ch) = at(i) {
            match ch {
                ' ' | '\t' | '\n' | ';' | '!' | '{' | '}' | ',' | '$' | '~' | '+' => i += 1,
                '0'..='9' => i += 1,
                '/' | '\\' => {
                    let delim = if ch == '\\' {
                        i += 1;
                        match at(i) {
                            Some(d) => d,
                            None => return true,
                        }
                    } else {
                        '/'
                    };
                    i += 1;
                    while let Some(x) = at(i) {
                        if x == '\\' {
                            i += 2;
                            continue;
                        }
                        i += 1;
                        if x == delim {
                            break;
                        }
                    }
                    if matches!(at(i), Some('I' | 'M')) {
                        i += 1;
                    }
                }
                _ => break,
            }
        }
        let Some(cmd) = at(i) else {
            return false;
        };
        i += 1;
        match cmd {
            'e' | 'w' | 'W' => return true,
            's' | 'y' => {
                let Some(delim) = at(i) else {
                    return true;
                };
                if delim == '\n' || delim == '\\' {
                    return true;
                }
                i += 1;
                let mut parts = 0;
                while parts < 2 {
                    match at(i) {
                        None => return true,
                        Some('\\') => i += 2,
                        Some(x) => {
                            i += 1;
                            if x == delim {
                                parts += 1;
                            }
                        }
                    }
                }
                if cmd == 's' {
                    while let Some(f) = at(i) {
                        match f {
                            'e' | 'w' | 'W' => return true,
                            'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9' => i += 1,
                            _ => break,
                        }
                    }
                }
            }
            'a' | 'i' | 'c' | 'r' | 'R' | 'b' | 't' | 'T' | ':' => {
                while at(i).is_some_and(|x| x != '\n') {
                    if matches!(cmd, 'b' | 't' | 'T' | ':') && at(i) == Some(';') {
                        break;
                    }
                    i += 1;
                }
            }
            'p' | 'P' | 'd' | 'D' | 'n' | 'N' | 'g' | 'G' | 'h' | 'H' | 'x' | 'l' | '=' | 'q'
            | 'Q' | 'z' | 'F' => {
                while at(i).is_some_and(|x| x.is_ascii_digit() || x == ' ') {
                    i += 1;
                }
            }
            '#' => {
                while at(i).is_some_and(|x| x != '\n') {
                    i += 1;
                }
            }
            _ => return true,
        }
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
    }
}
