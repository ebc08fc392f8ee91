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
            newlines: memchr::memchr_iter(b'\n', text.as_bytes()).collect(),
        }
    }

    /// The line holding byte `offset` (an offset past the end is on the last line).
    pub(crate) fn line(&self, offset: usize) -> usize {
        self.newlines.partition_point(|&n| n < offset) + 1
    }
}

#[cfg(test)]
mod tests {
    use super::LineIndex;

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
