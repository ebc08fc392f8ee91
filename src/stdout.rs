//! Standard output of the CLI that ends quietly when its reader goes away
//! (`sbx check ... | head -1`): a broken pipe is a normal end, not a panic.

use std::io::Write;

/// Write one line to standard output. When the reader has gone away the process exits 0 at
/// once (nothing more can be shown); any other write error exits 1 with the cause on stderr.
pub fn line(args: std::fmt::Arguments<'_>) {
    let result = {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{args}").and_then(|()| out.flush())
    };
    match result {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => {
            eprintln!("sbx: cannot write to standard output: {e}");
            std::process::exit(1)
        }
    }
}

/// `println!` that treats a broken pipe as the end of the output (see [`line`]).
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::stdout::line(format_args!($($arg)*))
    };
}
pub(crate) use outln;
