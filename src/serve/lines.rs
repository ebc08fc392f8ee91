//! Reading request lines with a hard size limit: an oversized line is skipped as it
//! streams in, never held in memory.
#![forbid(unsafe_code)]

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// One read from the client.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A whole line, without its newline.
    Line(Vec<u8>),
    /// A line longer than the limit; `len` bytes were skipped.
    TooLong {
        /// The line's length.
        len: usize,
    },
    /// The input ended.
    Eof,
}

/// The next line without its `\n` (and `\r`), at most `max` bytes kept.
pub async fn next_line<R: AsyncBufRead + Unpin>(r: &mut R, max: usize) -> std::io::Result<Line> {
    let mut buf = Vec::new();
    let mut seen = 0usize;
    let mut too_long = false;
    loop {
        let avail = r.fill_buf().await?;
        if avail.is_empty() {
            return Ok(if too_long {
                Line::TooLong { len: seen }
            } else if seen == 0 {
                Line::Eof
            } else {
                Line::Line(buf)
            });
        }
        let (take, used, done) = match avail.iter().position(|b| *b == b'\n') {
            Some(i) => (i, i + 1, true),
            None => (avail.len(), avail.len(), false),
        };
        seen += take;
        if !too_long {
            if buf.len() + take > max {
                too_long = true;
                buf = Vec::new();
            } else {
                buf.extend_from_slice(&avail[..take]);
            }
        }
        r.consume(used);
        if done {
            if too_long {
                return Ok(Line::TooLong { len: seen });
            }
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
            return Ok(Line::Line(buf));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn long_lines_are_skipped_and_the_next_is_read() {
        let data = format!("{}\nok\r\nlast", "x".repeat(100));
        let mut r = tokio::io::BufReader::with_capacity(8, data.as_bytes());
        assert_eq!(
            next_line(&mut r, 10).await.ok(),
            Some(Line::TooLong { len: 100 })
        );
        assert_eq!(
            next_line(&mut r, 10).await.ok(),
            Some(Line::Line(b"ok".to_vec()))
        );
        assert_eq!(
            next_line(&mut r, 10).await.ok(),
            Some(Line::Line(b"last".to_vec()))
        );
        assert_eq!(next_line(&mut r, 10).await.ok(), Some(Line::Eof));
    }
}
