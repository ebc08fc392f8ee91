//! Where the command's output goes, and the byte cap on what is kept of each stream.
use serde::Serialize;

/// Which stream a chunk of output came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// Receives output chunks as they arrive; `Break` when nothing more of that stream is wanted
/// (the reader it went to is gone), and the command's end of the stream is then closed, as a
/// pipe's is when its reader exits: its next write fails (`SIGPIPE`).
pub type OutputCallback = Box<dyn FnMut(Stream, &[u8]) -> ControlFlow<()> + Send>;

pub use std::ops::ControlFlow;

/// Where the command's output goes.
pub enum Output {
    /// Written to this process's stdout and stderr as it arrives.
    Inherit,
    /// Kept in [`RunResult::stdout`](super::RunResult::stdout) and
    /// [`RunResult::stderr`](super::RunResult::stderr).
    Collect,
    /// Handed to a callback as it arrives.
    Callback(OutputCallback),
}

pub(super) struct Capture {
    limit: u64,
    pub(super) bytes: u64,
    pub(super) truncated: bool,
    pub(super) kept: Vec<u8>,
}

impl Capture {
    pub(super) fn new(limit: Option<u64>) -> Self {
        Self {
            limit: limit.unwrap_or(u64::MAX),
            bytes: 0,
            truncated: false,
            kept: Vec::new(),
        }
    }
    /// The part of `chunk` that fits under the cap.
    pub(super) fn admit<'a>(&mut self, chunk: &'a [u8]) -> &'a [u8] {
        let room = self.limit.saturating_sub(self.bytes);
        self.bytes += chunk.len() as u64;
        if (chunk.len() as u64) > room {
            self.truncated = true;
            &chunk[..room as usize]
        } else {
            chunk
        }
    }
}

/// The byte caps of a run's output: stdout, stderr, and what a pseudo-terminal echoes back to
/// the caller when it carries neither.
pub(super) struct Caps {
    pub(super) out: Capture,
    pub(super) err: Capture,
    pub(super) echo: Capture,
    /// What of the command's terminal output reaches the caller's terminal.
    pub(super) term: super::term_filter::TermFilter,
}

/// Whether more output is wanted after a write to this process's own stream: not once its
/// reader is gone (`EPIPE`); another failure loses the chunk and goes on.
pub fn wanted(written: std::io::Result<()>) -> ControlFlow<()> {
    match written {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ControlFlow::Break(()),
        Ok(()) | Err(_) => ControlFlow::Continue(()),
    }
}

/// Pass a chunk on; `Break` when this process's own stream has no reader left (`EPIPE`: the
/// `head` of `sbx run -- yes | head -1` has exited), so the command's should be closed too.
pub(super) fn deliver(
    output: &mut Output,
    cap: &mut Capture,
    stream: Stream,
    chunk: &[u8],
) -> ControlFlow<()> {
    use std::io::Write;
    let part = cap.admit(chunk);
    if part.is_empty() {
        return ControlFlow::Continue(());
    }
    match output {
        Output::Inherit => {
            let written = match stream {
                Stream::Stdout => std::io::stdout()
                    .write_all(part)
                    .and_then(|()| std::io::stdout().flush()),
                Stream::Stderr => std::io::stderr().write_all(part),
            };
            wanted(written)
        }
        Output::Collect => {
            cap.kept.extend_from_slice(part);
            ControlFlow::Continue(())
        }
        Output::Callback(f) => f(stream, part),
    }
}

/// What the pseudo-terminal echoes when it is only the command's stdin: back to the caller's
/// terminal, which is this process's stdin, under the same cap as a stream.
pub(super) fn echo(cap: &mut Capture, chunk: &[u8]) {
    use std::io::Write;
    use std::os::fd::FromRawFd;
    let part = cap.admit(chunk);
    // SAFETY: fd 0 stays open for the life of the process; ManuallyDrop never closes it.
    let mut tty = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(0) });
    let _ = tty.write_all(part);
}
