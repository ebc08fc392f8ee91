//! Line numbers of byte offsets in a source text, for errors and origins that name a line.
#![forbid(unsafe_code)]

/// The byte offset of every newline in a text, to turn an offset into a 1-based line number
/// by binary search instead of counting from the start each time.
#[derive(Debug, Default)]
pub(crate) struct LineIndex {
    newlines: Vec<usize>,
}

impl LineIndex {
    pub(crate) fn new(text: &str) -> Self {
        Self {
            newlines: text
                .bytes()
                .enumerate()
                .filter_map(|(i, b)| (b == b'\n').then_some(i))
                .collect(),
        }
    }

    /// The line holding byte `offset` (an offset past the end is on the last line).
    pub(crate) fn line(&self, offset: usize) -> usize {
        self.newlines.partition_point(|&n| n < offset) + 1
    }
}

/// The first `byte` in `text`. A plain loop: `str::find` sets up a searcher on each call, which
/// costs more than the short paths searched here, and the memchr crate detects CPU features
/// at first use with `cpuid`, which traps under virtualisation and cost more than all the
/// searches of a run.
pub(crate) fn find_byte(byte: u8, text: &[u8]) -> Option<usize> {
    text.iter().position(|b| *b == byte)
}

#[cfg(test)]
mod tests {
    use super::{LineIndex, find_byte};

    #[test]
    fn find_byte_finds_the_first() {
        assert_eq!(find_byte(b'{', b"/a/{home}/{x}"), Some(3));
        assert_eq!(find_byte(b'{', b""), None);
        assert_eq!(find_byte(b'\n', b"abc"), None);
    }

    #[test]
    fn lines_agree_with_counting() {
        let text = "a\nbc\n\nd";
        let ix = LineIndex::new(text);
        for offset in 0..=text.len() + 2 {
            let counted = text[..offset.min(text.len())].matches('\n').count() + 1;
            assert_eq!(ix.line(offset), counted, "offset {offset}");
        }
    }
}
