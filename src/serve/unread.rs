//! A job's unread output: bounded, newest bytes kept, UTF-8 characters never split.
#![forbid(unsafe_code)]

use super::utf8::Utf8Chunks;
use std::collections::VecDeque;

/// How much unread output a job keeps per stream; older unread bytes are dropped first.
pub const JOB_OUTPUT_BYTES: usize = 1024 * 1024;

/// Output a job wrote that nobody has read yet.
#[derive(Default)]
pub(super) struct Unread {
    bytes: VecDeque<u8>,
    dropped: u64,
    text: Utf8Chunks,
}

impl Unread {
    pub(super) fn push(&mut self, chunk: &[u8]) {
        self.bytes.extend(chunk);
        let over = self.bytes.len().saturating_sub(JOB_OUTPUT_BYTES);
        if over > 0 {
            self.bytes.drain(..over);
            self.dropped += over as u64;
        }
    }

    /// Everything unread as text, and how many bytes were dropped since the last read. A
    /// character split at the end is held back until the job ends.
    pub(super) fn take(&mut self, ended: bool) -> (String, u64) {
        let bytes: Vec<u8> = self.bytes.drain(..).collect();
        let mut text = self.text.push(&bytes);
        if ended {
            text.push_str(&self.text.finish());
        }
        (text, std::mem::take(&mut self.dropped))
    }

    /// Whether the unread bytes hold `needle`.
    pub(super) fn contains(&mut self, needle: &[u8]) -> bool {
        !needle.is_empty()
            && self
                .bytes
                .make_contiguous()
                .windows(needle.len())
                .any(|w| w == needle)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unread_output_keeps_the_newest_bytes_and_counts_the_rest() {
        let mut u = Unread::default();
        u.push(&vec![b'a'; JOB_OUTPUT_BYTES]);
        u.push(b"tail");
        let (text, dropped) = u.take(false);
        assert_eq!(dropped, 4);
        assert_eq!(text.len(), JOB_OUTPUT_BYTES);
        assert!(text.ends_with("atail"));
        assert_eq!(u.take(false), (String::new(), 0));
    }

    #[test]
    fn a_split_character_waits_for_the_end() {
        let mut u = Unread::default();
        let e = "é".as_bytes();
        u.push(&[b'x', e[0]]);
        assert_eq!(u.take(false), ("x".to_string(), 0));
        u.push(&[e[1]]);
        assert_eq!(u.take(false), ("é".to_string(), 0));
        u.push(&[e[0]]);
        assert_eq!(u.take(true), ("\u{fffd}".to_string(), 0));
    }
}
