//! Text from a byte stream, for events that carry output as it arrives.
#![forbid(unsafe_code)]

/// Turns byte chunks into text without splitting a UTF-8 sequence across events.
#[derive(Default)]
pub(crate) struct Utf8Chunks {
    pending: Vec<u8>,
}

impl Utf8Chunks {
    /// The bytes held back at the end of a stream, as text (invalid bytes replaced).
    pub(crate) fn finish(&mut self) -> String {
        let text = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        text
    }

    pub(crate) fn push(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let keep = match std::str::from_utf8(&self.pending) {
            Ok(_) => 0,
            Err(e) if e.error_len().is_none() => self.pending.len() - e.valid_up_to(),
            Err(_) => 0,
        };
        let cut = self.pending.len() - keep;
        let rest = self.pending.split_off(cut);
        let text = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending = rest;
        text
    }
}

#[cfg(test)]
mod tests {
    use super::Utf8Chunks;

    #[test]
    fn a_split_character_is_held_until_complete() {
        let mut c = Utf8Chunks::default();
        let e = "é".as_bytes();
        assert_eq!(c.push(&[b'a', e[0]]), "a");
        assert_eq!(c.push(&[e[1], b'b']), "éb");
        assert_eq!(c.push(&[0xff]), "\u{fffd}");
        assert_eq!(c.push(&[e[0]]), "");
        assert_eq!(c.finish(), "\u{fffd}");
    }
}
