//! Opening a file that a command may have left in place of a regular one: without blocking, as
//! a FIFO would stop the reader for ever, and refused unless it is a regular file, as a device
//! never ends.
#![forbid(unsafe_code)]

use std::fs::File;
use std::path::Path;

/// `path` opened for reading when it is a regular file (links followed).
pub(crate) fn open(path: impl AsRef<Path>) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    Ok(f)
}
