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
/// The lead byte of the UTF-8 form of U+0080-U+00BF, the C1 controls among them.
const C2: u8 = 0xc2;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum State {
    #[default]
    Ground,
    /// After ESC, which is held back until the byte after it is known: written alone it could
    /// start a sequence with whatever is written next.
    Esc,
    /// After 0xC2, held back the same way: with 0x80-0x9F it is a C1 control (U+009D is OSC
    /// to the terminals that take C1 controls so written).
    C2,
    /// In an OSC's number: its value so far and how many digits.
    OscNumber(u32, u8),
    /// In an OSC's text, passed on or dropped.
    OscText(bool),
    /// After ESC inside an OSC: a `\` ends it (ST); anything else ends it and starts anew.
    OscEsc(bool),
    /// After 0xC2 inside an OSC.
    OscC2(bool),
    /// In a DCS, APC, PM or SOS string, dropped.
    Str,
    /// After ESC inside such a string.
    StrEsc,
    /// After 0xC2 inside such a string.
    StrC2,
}

/// The filter's state between reads.
#[derive(Debug, Default)]
pub(crate) struct TermFilter {
    state: State,
    /// UTF-8 continuation bytes still expected: 0x80-0xBF is then part of a character, not a
    /// C1 control written as a raw byte.
    pending: u8,
}

/// Where a byte of 0x80-0x9F that is no continuation (a raw C1 control) or one after 0xC2
/// leads: an OSC, a string to drop, or nothing special (`None`).
fn c1_start(b: u8) -> Option<State> {
    match b {
        0x9d => Some(State::OscNumber(0, 0)),
        0x90 | 0x98 | 0x9e | 0x9f => Some(State::Str),
        _ => None,
    }
}

impl TermFilter {
    /// Append to `out` what of `input` may reach the caller's terminal.
    pub(crate) fn filter(&mut self, input: &[u8], out: &mut Vec<u8>) {
        for &b in input {
            self.state = self.step(b, out);
        }
    }

    /// Whether `b` continues a UTF-8 character (and count it).
    fn continues(&mut self, b: u8) -> bool {
        if self.pending > 0 && (0x80..=0xbf).contains(&b) {
            self.pending -= 1;
            return true;
        }
        self.pending = match b {
            0xc3..=0xdf => 1,
            0xe0..=0xef => 2,
            0xf0..=0xf4 => 3,
            _ => 0,
        };
        false
    }

    fn step(&mut self, b: u8, out: &mut Vec<u8>) -> State {
        match self.state {
            State::Ground => self.ground(b, out),
            State::Esc => self.escape(b, out),
            State::C2 => self.after_c2(b, out),
            State::OscNumber(n, digits) => self.osc_number(n, digits, b, out),
            State::OscText(pass) => self.osc_text(pass, b, out),
            State::OscEsc(pass) => {
                if b == b'\\' {
                    if pass {
                        out.extend_from_slice(b"\x1b\\");
                    }
                    return State::Ground;
                }
                // The ESC ended the string (closed here with BEL) and starts a sequence.
                if pass {
                    out.push(BEL);
                }
                self.escape(b, out)
            }
            State::OscC2(pass) => match b {
                0x80..=0x9f => {
                    // A C1 control ends the string (ST, or another that starts anew).
                    if pass {
                        out.push(BEL);
                    }
                    c1_start(b).unwrap_or(State::Ground)
                }
                0xa0..=0xbf => {
                    if pass {
                        out.extend_from_slice(&[C2, b]);
                    }
                    State::OscText(pass)
                }
                _ => self.osc_text(pass, b, out),
            },
            State::Str => match b {
                ESC => State::StrEsc,
                C2 => State::StrC2,
                CAN | SUB | 0x9c => State::Ground,
                _ => State::Str,
            },
            // A real terminal ends the string at the ESC; what follows is a sequence of its
            // own, judged as one (tmux's doubled ESCs included).
            State::StrEsc if b == b'\\' => State::Ground,
            State::StrEsc => self.escape(b, out),
            State::StrC2 => match b {
                0x80..=0x9f => c1_start(b).unwrap_or(State::Ground),
                _ => State::Str,
            },
        }
    }

    fn ground(&mut self, b: u8, out: &mut Vec<u8>) -> State {
        if self.continues(b) {
            out.push(b);
            return State::Ground;
        }
        match b {
            ESC => State::Esc,
            C2 => State::C2,
            0x80..=0x9f => c1_start(b).unwrap_or(State::Ground),
            _ => {
                out.push(b);
                State::Ground
            }
        }
    }

    /// The byte after ESC: an OSC starts, a string starts (dropped), or the pair passes. A
    /// second ESC restarts the sequence, as in a terminal; CAN and SUB cancel it.
    fn escape(&mut self, b: u8, out: &mut Vec<u8>) -> State {
        self.pending = 0;
        match b {
            b']' => State::OscNumber(0, 0),
            b'P' | b'_' | b'^' | b'X' => State::Str,
            ESC => State::Esc,
            // CAN and SUB cancel it; a string terminator ends nothing here.
            CAN | SUB | b'\\' => State::Ground,
            C2 => State::C2,
            0x80..=0x9f => c1_start(b).unwrap_or(State::Ground),
            _ => {
                out.extend_from_slice(&[ESC, b]);
                State::Ground
            }
        }
    }

    /// The byte after 0xC2: a C1 control that starts an OSC or a string is taken as its ESC
    /// form, another C1 control is dropped; U+00A0-U+00BF pass; a lone 0xC2 (not UTF-8) is
    /// dropped and the byte judged afresh.
    fn after_c2(&mut self, b: u8, out: &mut Vec<u8>) -> State {
        match b {
            0x80..=0x9f => c1_start(b).unwrap_or(State::Ground),
            0xa0..=0xbf => {
                out.extend_from_slice(&[C2, b]);
                State::Ground
            }
            _ => self.ground(b, out),
        }
    }

    /// A byte of an OSC's number: a digit adds to it; `;` or a terminator decides the OSC.
    fn osc_number(&mut self, n: u32, digits: u8, b: u8, out: &mut Vec<u8>) -> State {
        let pass = digits > 0 && PASSED_OSC.contains(&n);
        if b.is_ascii_digit() && digits < 6 {
            return State::OscNumber(n * 10 + u32::from(b - b'0'), digits + 1);
        }
        if !pass {
            return match b {
                BEL | CAN | SUB | 0x9c => State::Ground,
                ESC => State::OscEsc(false),
                C2 => State::OscC2(false),
                _ => State::OscText(false),
            };
        }
        out.extend_from_slice(format!("\x1b]{n}").as_bytes());
        match b {
            b';' => {
                out.push(b';');
                State::OscText(true)
            }
            _ => self.osc_text(true, b, out),
        }
    }

    /// A byte of an OSC's text: passed on or dropped; C1 controls never pass inside it.
    fn osc_text(&mut self, pass: bool, b: u8, out: &mut Vec<u8>) -> State {
        if self.continues(b) {
            if pass {
                out.push(b);
            }
            return State::OscText(pass);
        }
        let end = |out: &mut Vec<u8>, with: u8| {
            if pass {
                out.push(with);
            }
            State::Ground
        };
        match b {
            BEL => end(out, BEL),
            CAN | SUB => end(out, b),
            ESC => State::OscEsc(pass),
            C2 => State::OscC2(pass),
            // A raw C1 control ends the string in the terminals that take them.
            0x80..=0x9f => {
                if pass {
                    out.push(BEL);
                }
                c1_start(b).unwrap_or(State::Ground)
            }
            _ => {
                if pass {
                    out.push(b);
                }
                State::OscText(pass)
            }
        }
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
    fn a_held_back_esc_or_lead_byte_never_joins_what_follows() {
        assert_eq!(
            run(&[b"A\x1b\x1b]\x07]52;c;QQ==\x07B"]),
            b"A]52;c;QQ==\x07B"
        );
        assert_eq!(
            run(&[b"A\x1b]0;t\x1b\x1b]\x07]11;x\x07B"]),
            b"A\x1b]0;t\x07]11;x\x07B"
        );
        // A lone 0xC2 is dropped; the raw 0x9D after the cancelled OSC starts one of its own.
        assert_eq!(run(&[b"A\xc2\x1b]\x07\x9d52;c;QQ==\x07B"]), b"AB");
    }

    #[test]
    fn c1_controls_end_a_passed_string_and_raw_ones_are_judged() {
        // Inside a title, U+009C ends it and U+009D starts an OSC 52: dropped.
        let t = b"A\x1b]0;x\xc2\x9c\xc2\x9d52;c;QQ==\x07B";
        assert_eq!(run(&[t]), b"A\x1b]0;x\x07B");
        assert_eq!(run(&[b"A\x9d52;c;QQ==\x07B"]), b"AB");
        // A UTF-8 character whose continuation byte is in 0x80-0x9F passes: an em dash.
        assert_eq!(run(&["a\u{2014}b".as_bytes()]), "a\u{2014}b".as_bytes());
        assert_eq!(
            run(&["\x1b]0;caf\u{e9} \u{2014}\x07".as_bytes()]),
            "\x1b]0;caf\u{e9} \u{2014}\x07".as_bytes()
        );
    }

    #[test]
    fn what_a_terminal_shows_after_a_string_is_not_swallowed() {
        assert_eq!(run(&[b"\x1b]52;c;QQ==\xc2\x9cvisible\n"]), b"visible\n");
        assert_eq!(run(&[b"\x1bPx\x1b\x1b\\visible\n"]), b"visible\n");
        assert_eq!(run(&[b"\x1b]0;x\x18D"]), b"\x1b]0;x\x18D");
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
