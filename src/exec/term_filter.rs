//! What of a command's terminal output reaches the caller's terminal. The command writes to a
//! pseudo-terminal sbx owns, so it cannot change the caller's modes, but the bytes it prints
//! are the caller's terminal's to interpret: an OSC 52 writes the clipboard (a command pasted
//! later, outside the sandbox), OSC 4/10/11 recolour the screen for good (black on black hides
//! sbx's notices), iTerm2's OSC 1337 and kitty's OSC 5113 write files on the caller's machine,
//! and a DCS, APC, PM or SOS string carries anything (tmux's passthrough hands an OSC 52 to
//! the terminal outside tmux). Operating system commands pass only when they are in
//! [`PASSED_OSC`]; device control and the other strings are dropped whole. The state carries
//! across reads, so a sequence split between two reads is judged whole.
#![forbid(unsafe_code)]

/// The OSC numbers passed on: window title (0, 1, 2), working directory (7), hyperlinks (8),
/// shell integration marks (133), and the resets of colours (104, 110-119).
const PASSED_OSC: &[u32] = &[
    0, 1, 2, 7, 8, 104, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 133,
];

const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;
/// CAN and SUB abort a sequence.
const CAN: u8 = 0x18;
const SUB: u8 = 0x1a;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum State {
    #[default]
    Ground,
    /// After 0xC2, which with 0x80-0x9F encodes a C1 control in UTF-8 (U+009D is OSC to the
    /// terminals that take C1 controls so written).
    C2,
    /// After ESC.
    Esc,
    /// In an OSC's number: its value so far and how many digits.
    OscNumber(u32, u8),
    /// In an OSC's text, passed on or dropped.
    OscText(bool),
    /// After ESC inside an OSC: a `\` ends it (ST).
    OscEsc(bool),
    /// In a DCS, APC, PM or SOS string, dropped.
    Str,
    /// After ESC inside such a string.
    StrEsc,
}

/// The filter's state between reads.
#[derive(Debug, Default)]
pub(crate) struct TermFilter {
    state: State,
}

impl TermFilter {
    /// Append to `out` what of `input` may reach the caller's terminal.
    pub(crate) fn filter(&mut self, input: &[u8], out: &mut Vec<u8>) {
        for &b in input {
            self.state = self.step(b, out);
        }
    }

    fn step(&self, b: u8, out: &mut Vec<u8>) -> State {
        match self.state {
            State::Ground if b == ESC => State::Esc,
            State::Ground if b == 0xC2 => State::C2,
            State::C2 => c1(b, out),
            State::Ground => {
                out.push(b);
                State::Ground
            }
            State::Esc => escape(b, out),
            State::OscNumber(n, digits) => osc_number(n, digits, b, out),
            State::OscText(pass) => match b {
                BEL => {
                    if pass {
                        out.push(BEL);
                    }
                    State::Ground
                }
                ESC => State::OscEsc(pass),
                CAN | SUB => State::Ground,
                _ => {
                    if pass {
                        out.push(b);
                    }
                    State::OscText(pass)
                }
            },
            State::OscEsc(pass) if b == b'\\' => {
                if pass {
                    out.extend_from_slice(b"\x1b\\");
                }
                State::Ground
            }
            // tmux doubles the ESCs of what it passes through: still inside the string.
            State::StrEsc if b == ESC => State::Str,
            State::StrEsc if b == b'\\' => State::Ground,
            // An ESC inside the text ends it and starts a sequence of its own.
            State::OscEsc(_) | State::StrEsc => escape(b, out),
            State::Str => match b {
                ESC => State::StrEsc,
                CAN | SUB => State::Ground,
                _ => State::Str,
            },
        }
    }
}

/// The byte after 0xC2: a C1 control that starts an OSC or a string is taken as its ESC
/// form; any other character passes.
fn c1(b: u8, out: &mut Vec<u8>) -> State {
    match b {
        0x9d => State::OscNumber(0, 0),
        0x90 | 0x98 | 0x9e | 0x9f => State::Str,
        ESC => {
            out.push(0xC2);
            State::Esc
        }
        0xC2 => {
            out.push(0xC2);
            State::C2
        }
        _ => {
            out.extend_from_slice(&[0xC2, b]);
            State::Ground
        }
    }
}

/// The byte after ESC: an OSC starts, a string starts (dropped), or the pair passes.
fn escape(b: u8, out: &mut Vec<u8>) -> State {
    match b {
        b']' => State::OscNumber(0, 0),
        b'P' | b'_' | b'^' | b'X' => State::Str,
        ESC => {
            out.push(ESC);
            State::Esc
        }
        _ => {
            out.extend_from_slice(&[ESC, b]);
            State::Ground
        }
    }
}

/// A byte of an OSC's number: a digit adds to it; `;` or a terminator decides the OSC.
fn osc_number(n: u32, digits: u8, b: u8, out: &mut Vec<u8>) -> State {
    let pass = digits > 0 && PASSED_OSC.contains(&n);
    match b {
        b'0'..=b'9' if digits < 6 => State::OscNumber(n * 10 + u32::from(b - b'0'), digits + 1),
        b';' | BEL | ESC if pass => {
            out.extend_from_slice(format!("\x1b]{n}").as_bytes());
            match b {
                b';' => {
                    out.push(b';');
                    State::OscText(true)
                }
                BEL => {
                    out.push(BEL);
                    State::Ground
                }
                _ => State::OscEsc(true),
            }
        }
        BEL | CAN | SUB => State::Ground,
        ESC => State::OscEsc(false),
        _ => State::OscText(false),
    }
}

/// What sbx writes to the caller's terminal after relaying a command's terminal output: a
/// soft reset (DECSTR: character attributes, scrolling margins, cursor shown, character sets,
/// insert and origin modes, keypad) and the modes it leaves alone turned off (mouse reports,
/// bracketed paste), so that what the command left set does not outlive it.
pub const SCREEN_RESET: &[u8] =
    b"\x1b[!p\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?2004l\x1b[?25h";

#[cfg(test)]
mod tests {
    use super::*;

    fn run(chunks: &[&[u8]]) -> Vec<u8> {
        let mut f = TermFilter::default();
        let mut out = Vec::new();
        for c in chunks {
            f.filter(c, &mut out);
        }
        out
    }

    #[test]
    fn the_clipboard_and_colours_are_dropped_and_titles_pass() {
        let clip = b"a\x1b]52;c;Y3VybCBldmlsfHNo\x07b";
        assert_eq!(run(&[clip]), b"ab");
        let colours = b"\x1b]10;rgb:00/00/00\x07\x1b]11;rgb:00/00/00\x1b\\x";
        assert_eq!(run(&[colours]), b"x");
        let title = b"\x1b]0;build\x07\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\";
        assert_eq!(run(&[title]), title.to_vec());
        assert_eq!(run(&[b"\x1b]104\x07"]), b"\x1b]104\x07".to_vec());
    }

    #[test]
    fn a_sequence_split_between_reads_is_judged_whole() {
        assert_eq!(run(&[b"x\x1b", b"]5", b"2;c;QQ==", b"\x1b", b"\\y"]), b"xy");
        assert_eq!(run(&[b"\x1b]", b"2;t\x07"]), b"\x1b]2;t\x07".to_vec());
    }

    #[test]
    fn c1_controls_written_in_utf8_are_judged_as_their_escape_forms() {
        assert_eq!(run(&[b"a\xc2\x9d52;c;QQ==\x07b"]), b"ab");
        assert_eq!(run(&[b"a\xc2", b"\x90x\x1b\\b"]), b"ab");
        // Other characters that start with 0xC2 pass: `\u{a9}` is the copyright sign.
        assert_eq!(
            run(&["\u{a9} \u{a0}".as_bytes()]),
            "\u{a9} \u{a0}".as_bytes()
        );
    }

    #[test]
    fn device_control_strings_are_dropped_and_other_escapes_pass() {
        let tmux = b"\x1bPtmux;\x1b\x1b]52;c;QQ==\x07\x1b\\ok";
        assert_eq!(run(&[tmux]), b"ok");
        assert_eq!(run(&[b"\x1b_Gf=100;AAAA\x1b\\z"]), b"z");
        let csi = b"\x1b[1;31mred\x1b[0m\x1b[2J\x1b(B";
        assert_eq!(run(&[csi]), csi.to_vec());
    }
}
