//! Input limits and where parsing runs.
//!
//! `rable` recurses once per nesting level and overflows a 2 MiB stack
//! before its own depth limit (about 500 levels) applies; a stack overflow
//! aborts the process. So: inputs over [`MAX_INPUT_BYTES`] or nested deeper
//! than [`MAX_NESTING`] (a syntax-blind over-estimate) are Ask without being
//! parsed; small shallow inputs run on the caller's thread (measured: well
//! under 1 MiB of stack even in debug builds); everything else runs on a
//! fresh thread with [`PARSE_STACK_BYTES`] of stack. Handing every command to
//! another thread cost about 70 µs on a busy 2-core host, which is why the
//! common case stays inline.

use super::{Analysis, Class, Decision, Segment, ShellContext, walk};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Longest command string that is analysed at all.
pub const MAX_INPUT_BYTES: usize = 32 * 1024;
/// Deepest nesting (brackets, substitutions, compound keywords, nested
/// `sh -c`) that is analysed at all.
pub const MAX_NESTING: usize = 64;
/// Stack of the thread that parses inputs too large for the inline path.
pub const PARSE_STACK_BYTES: usize = 16 * 1024 * 1024;

/// Inputs at most this long and this shallow are parsed on the caller's thread.
const INLINE_BYTES: usize = 2048;
const INLINE_NESTING: usize = 8;
const INLINE_OPERATORS: usize = 64;
/// Nesting budget of the walk on the inline path (re-parsed `sh -c` strings
/// can decode to deeper input than the outer string shows).
const INLINE_BUDGET: usize = 16;

/// A syntax-blind upper bound on nesting, and a count of list operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shape {
    pub nesting: usize,
    pub operators: usize,
}

pub(crate) fn shape(s: &str) -> Shape {
    let mut depth: usize = 0;
    let mut max: usize = 0;
    let mut operators: usize = 0;
    let bytes = s.as_bytes();
    let mut word_start: Option<usize> = None;
    for (i, &b) in bytes.iter().enumerate() {
        if b.is_ascii_alphabetic() {
            if word_start.is_none() {
                word_start = Some(i);
            }
            continue;
        }
        if let Some(st) = word_start.take() {
            apply_keyword(bytes.get(st..i).unwrap_or(&[]), &mut depth);
        }
        match b {
            b'(' | b'{' | b'[' | b'`' => depth += 1,
            b')' | b'}' | b']' => depth = depth.saturating_sub(1),
            b';' | b'&' | b'|' | b'\n' => operators += 1,
            _ => {}
        }
        max = max.max(depth);
    }
    if let Some(st) = word_start {
        apply_keyword(bytes.get(st..).unwrap_or(&[]), &mut depth);
    }
    Shape {
        nesting: max.max(depth),
        operators,
    }
}

fn apply_keyword(word: &[u8], depth: &mut usize) {
    match word {
        b"if" | b"while" | b"until" | b"for" | b"case" | b"select" | b"function" | b"coproc" => {
            *depth += 1
        }
        b"fi" | b"done" | b"esac" => *depth = depth.saturating_sub(1),
        _ => {}
    }
}

/// Characters that render like separators or hide text: bash treats them as
/// ordinary word characters, a human reading the command does not.
pub(crate) fn deceptive_char(s: &str) -> Option<char> {
    s.chars().find(|&c| {
        matches!(c,
            '\r' | '\u{0b}' | '\u{0c}' | '\u{85}' | '\u{a0}' | '\u{1680}' | '\u{180e}'
            | '\u{2000}'..='\u{200f}' | '\u{2028}'..='\u{202f}' | '\u{205f}'..='\u{206f}'
            | '\u{3000}' | '\u{feff}' | '\u{fff9}'..='\u{fffb}')
            || (c.is_control() && c != '\n' && c != '\t')
    })
}

pub(crate) fn opaque(text: &str, reason: &str) -> Segment {
    Segment {
        text: text.to_string(),
        argv: vec![text.to_string()],
        class: Class::Opaque,
        verdict: Decision::Ask,
        reason: reason.to_string(),
        writes: Vec::new(),
        reads: Vec::new(),
        trees: Vec::new(),
        links: Vec::new(),
        write_patterns: Vec::new(),
        read_patterns: Vec::new(),
        findings: vec![reason.to_string()],
        via: String::new(),
    }
}

fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(80).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

pub(crate) fn analyse_guarded(command: &str, ctx: &ShellContext) -> Analysis {
    if command.len() > MAX_INPUT_BYTES {
        return Analysis::from_segments(vec![opaque(
            &clip(command),
            "[shell.limit.length] command longer than the analysis limit",
        )]);
    }
    let sh = shape(command);
    if sh.nesting > MAX_NESTING {
        return Analysis::from_segments(vec![opaque(
            &clip(command),
            "[shell.limit.depth] command nested deeper than the analysis limit",
        )]);
    }
    let inline = command.len() <= INLINE_BYTES
        && sh.nesting <= INLINE_NESTING
        && sh.operators <= INLINE_OPERATORS;
    let failed = |why: &str| Analysis::from_segments(vec![opaque(&clip(command), why)]);
    if inline {
        match catch_unwind(AssertUnwindSafe(|| {
            walk::analyze_top(command, ctx, INLINE_BUDGET)
        })) {
            Ok(a) => a,
            Err(_) => failed("[shell.internal] analysis failed"),
        }
    } else {
        // A scoped thread: it borrows the command and the context, and is joined here.
        std::thread::scope(|scope| {
            let spawned = std::thread::Builder::new()
                .name("sbx-shell-parse".into())
                .stack_size(PARSE_STACK_BYTES)
                .spawn_scoped(scope, || walk::analyze_top(command, ctx, MAX_NESTING));
            match spawned {
                Ok(handle) => match handle.join() {
                    Ok(a) => a,
                    Err(_) => failed("[shell.internal] analysis failed"),
                },
                Err(_) => failed("[shell.internal] no thread to parse on"),
            }
        })
    }
}
