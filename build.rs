//! Writes the built-in profiles and policies without their comments to `OUT_DIR`, which is
//! what the binary embeds: the files in `profiles/` explain every entry, and parsing those
//! explanations on every run cost more than parsing the entries (lines keep their numbers, so
//! origins still name the line in `profiles/`).
//!
//! Links the `sbx` binary with the functions a run executes first, packed together
//! (`link/hot-functions.txt`, made by `benches/hot-functions.sh`): the kernel maps 64 KiB of a
//! file around each page fault, so packed code means fewer faults at start, less to unmap at
//! exit and a lower peak RSS. Only where the linker is known to be lld, which reads an ordering
//! file (GNU ld does not); `SBX_NO_ORDERING=1` turns it off.
use std::path::Path;
use std::process::Command;

/// rustup's toolchains link x86_64-unknown-linux-gnu with their own lld since Rust 1.90, unless
/// a linker is configured (cargo then passes it as `RUSTC_LINKER`) or rustflags choose one.
fn links_with_lld(target: &str) -> bool {
    if target != "x86_64-unknown-linux-gnu" || std::env::var_os("RUSTC_LINKER").is_some() {
        return false;
    }
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    if flags
        .split('\x1f')
        .any(|f| f.contains("linker") || f.contains("fuse-ld") || f.contains("link-self-contained"))
    {
        return false;
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let Ok(out) = Command::new(rustc).args(["--print", "sysroot"]).output() else {
        return false;
    };
    let sysroot = String::from_utf8_lossy(&out.stdout).trim().to_string();
    Path::new(&sysroot)
        .join("lib/rustlib")
        .join(target)
        .join("bin/gcc-ld/ld.lld")
        .exists()
}

/// `text` with every TOML comment removed, its line breaks kept. Strings (basic, literal and
/// their multi-line forms) are copied as they are, a basic one with no escape as a literal
/// one; a `#` inside one is no comment. The test
/// `builtins_parse_the_same_without_comments` checks that each built-in parses to the same
/// profile or policy, origins included, either way.
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let (copied, tail) = match c {
            '#' => {
                let end = rest.find('\n').unwrap_or(rest.len());
                let kept = out.trim_end_matches([' ', '\t']).len();
                out.truncate(kept);
                ("", &rest[end..])
            }
            '"' | '\'' => string_token(rest, c),
            _ => rest.split_at(c.len_utf8()),
        };
        // A basic string with nothing to unescape reads the same as a literal one, which
        // the parser copies instead of decoding character by character.
        let plain = copied.len() >= 2
            && copied.starts_with('"')
            && !copied.starts_with("\"\"\"")
            && copied.ends_with('"')
            && !copied[1..copied.len() - 1].contains(['\\', '\'', '"', '\n']);
        if plain {
            out.push('\'');
            out.push_str(&copied[1..copied.len() - 1]);
            out.push('\'');
        } else {
            out.push_str(copied);
        }
        rest = tail;
    }
    out
}

/// The string starting `rest` (quote `q`), split from what follows it.
fn string_token(rest: &str, q: char) -> (&str, &str) {
    let triple: String = std::iter::repeat_n(q, 3).collect();
    if let Some(body) = rest.strip_prefix(triple.as_str()) {
        // Up to the closing triple; up to two more quotes right after it belong to the body.
        let mut end = body.find(triple.as_str()).map_or(body.len(), |i| i + 3);
        while body[end..].starts_with(q) && end < body.len() {
            end += 1;
        }
        return rest.split_at(3 + end.min(body.len()));
    }
    let mut escaped = false;
    for (i, ch) in rest.char_indices().skip(1) {
        match ch {
            '\\' if q == '"' && !escaped => escaped = true,
            '\n' => return rest.split_at(i),
            ch if ch == q && !escaped => return rest.split_at(i + 1),
            _ => escaped = false,
        }
    }
    (rest, "")
}

/// The `[filesystem]` arrays that [`digest_filesystem`] takes out of a built-in's text, in the
/// order of their record keys (src/profile/load.rs reads the same list).
const FS_ARRAYS: [&str; 5] = ["read", "write", "execute", "deny_read", "deny_write"];

/// A stripped built-in split in two: the text with its `[filesystem]` arrays emptied (their
/// line breaks kept, so every other line keeps its number), and the entries of those arrays as
/// records `KEY LINE VALUE`, one per line. The arrays hold almost all of a built-in's entries;
/// reading a record costs a fraction of parsing the TOML string with its span. An array with
/// anything but literal strings in it (a basic string, a comment) stays in the text. The test
/// `builtins_parse_the_same_without_comments` checks that both halves load to the profile the
/// file in `profiles/` parses to, origins included.
fn digest_filesystem(text: &str) -> (String, String) {
    let mut out = String::with_capacity(text.len());
    let mut records = String::new();
    let mut in_filesystem = false;
    let mut line_no = 1;
    let mut rest = text;
    while !rest.is_empty() {
        let end = rest.find('\n').map_or(rest.len(), |i| i + 1);
        let line = &rest[..end];
        if line.starts_with('[') {
            in_filesystem = line.trim_end() == "[filesystem]";
        }
        let array = in_filesystem
            .then(|| fs_array_start(line))
            .flatten()
            .and_then(|(key, open)| {
                let start = line.len() - open.len();
                literal_array(&rest[start..], line_no).map(|a| (key, start, a))
            });
        match array {
            Some((key, start, (entries, len, breaks))) => {
                out.push_str(&rest[..start]);
                out.push('[');
                out.extend(std::iter::repeat_n('\n', breaks));
                out.push(']');
                for (line, value) in entries {
                    records.push_str(&format!("{key} {line} {value}\n"));
                }
                line_no += breaks;
                rest = &rest[start + len..];
            }
            None => {
                out.push_str(line);
                line_no += line.ends_with('\n') as usize;
                rest = &rest[end..];
            }
        }
    }
    (out, records)
}

/// For a line `KEY = [...` naming one of [`FS_ARRAYS`]: the key's index and the line from
/// its `[` on.
fn fs_array_start(line: &str) -> Option<(usize, &str)> {
    let (key, value) = line.split_once('=')?;
    let key = FS_ARRAYS.iter().position(|k| *k == key.trim())?;
    let value = value.trim_start_matches([' ', '\t']);
    value.starts_with('[').then_some((key, value))
}

/// An array of literal strings at the start of `text` (from its `[`): each string with its
/// line, the array's length in bytes and its line breaks; `None` for anything else.
type LiteralArray = (Vec<(usize, String)>, usize, usize);

fn literal_array(text: &str, mut line: usize) -> Option<LiteralArray> {
    let first = line;
    let mut entries = Vec::new();
    let mut i = 1;
    let b = text.as_bytes();
    while i < b.len() {
        match b[i] {
            b' ' | b'\t' | b'\r' | b',' => i += 1,
            b'\n' => {
                line += 1;
                i += 1;
            }
            b']' => return Some((entries, i + 1, line - first)),
            b'\'' if !text[i..].starts_with("'''") => {
                let len = text[i + 1..].find(['\'', '\n'])?;
                if b[i + 1 + len] != b'\'' {
                    return None;
                }
                entries.push((line, text[i + 1..i + 1 + len].to_string()));
                i += len + 2;
            }
            _ => return None,
        }
    }
    None
}

fn write_builtins(dir: &str) {
    let Ok(out) = std::env::var("OUT_DIR") else {
        return;
    };
    println!("cargo:rerun-if-changed={dir}/profiles");
    for sub in ["profiles", "profiles/policy"] {
        let src = Path::new(dir).join(sub);
        let dst = Path::new(&out).join(sub);
        if let Err(err) = std::fs::create_dir_all(&dst) {
            panic!("cannot create {}: {err}", dst.display());
        }
        let Ok(entries) = std::fs::read_dir(&src) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            if path.extension().is_some_and(|x| x == "toml")
                && let Ok(text) = std::fs::read_to_string(&path)
            {
                println!("cargo:rerun-if-changed={}", path.display());
                let stripped = strip_comments(&text);
                if sub == "profiles" {
                    let (digested, records) = digest_filesystem(&stripped);
                    write(
                        &dst.join(e.file_name()).with_extension("digest.toml"),
                        &digested,
                    );
                    write(&dst.join(e.file_name()).with_extension("records"), &records);
                }
                write(&dst.join(e.file_name()), &stripped);
            }
        }
    }
}

fn write(to: &Path, text: &str) {
    if let Err(err) = std::fs::write(to, text) {
        panic!("cannot write {}: {err}", to.display());
    }
}

fn main() {
    println!("cargo:rerun-if-changed=link/hot-functions.txt");
    println!("cargo:rerun-if-env-changed=SBX_NO_ORDERING");
    let target = std::env::var("TARGET").unwrap_or_default();
    let Ok(dir) = std::env::var("CARGO_MANIFEST_DIR") else {
        return;
    };
    write_builtins(&dir);
    if std::env::var_os("SBX_NO_ORDERING").is_none() && links_with_lld(&target) {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={dir}/link/hot-functions.txt"
        );
        // Names the code no longer has are skipped; benches/overhead.sh reports how much of
        // the list still matches.
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}
