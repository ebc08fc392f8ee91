//! What the command reads on its stdin when no pseudo-terminal feeds it. An fd handed over as
//! it is keeps the host's mount behind it: through `/proc/self/fd/0` a command could change a
//! redirected file's mode, times or extended attributes (`fchmod` is not a write, and the
//! read-only remount is of the sandbox's view, not of that fd's), or open what a directory on
//! stdin holds below paths the plan hides. So only an anonymous pipe or a socket is passed as
//! it is; anything else is read by sbx and relayed through a pipe.
#![forbid(unsafe_code)]

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};

/// `statfs` type of the kernel's anonymous pipes.
const PIPEFS_MAGIC: i64 = 0x5049_5045;

/// The command's stdin: the fd to give it (`None`: it inherits this process's), and the relay
/// to start once it is spawned.
pub(super) struct ChildStdin {
    pub(super) fd: Option<OwnedFd>,
    feed: Option<(std::fs::File, OwnedFd)>,
}

impl ChildStdin {
    /// The raw number of the relay's write end, for the sandbox's init to close (-1: none).
    /// Valid until [`Self::start`], which runs after the spawn.
    pub(super) fn feed_fd(&self) -> i32 {
        self.feed.as_ref().map_or(-1, |(_, w)| w.as_raw_fd())
    }

    /// Start relaying: until the input ends, or the command's side of the pipe is closed.
    pub(super) fn start(self) -> io::Result<()> {
        let Some((mut source, w)) = self.feed else {
            return Ok(());
        };
        let mut sink = std::fs::File::from(w);
        std::thread::Builder::new()
            .name("sbx-stdin".into())
            .spawn(move || {
                let _ = io::copy(&mut source, &mut sink);
            })
            .map(drop)
    }
}

/// With `relay` unset (serve, mcp and the library: this process's stdin is not the
/// command's) the command reads an empty pipe.
pub(super) fn child_stdin(relay: bool) -> io::Result<ChildStdin> {
    let (r, w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(io::Error::from)?;
    let empty = ChildStdin {
        fd: Some(r),
        feed: None,
    };
    if !relay {
        return Ok(empty);
    }
    let stdin = io::stdin();
    let Ok(st) = nix::sys::stat::fstat(stdin.as_fd()) else {
        return Ok(empty);
    };
    let kind = st.st_mode & libc::S_IFMT;
    // `< /dev/null`, the usual stdin of a script or CI step: the same end of input, without a
    // thread to relay nothing.
    if kind == libc::S_IFCHR && st.st_rdev == libc::makedev(1, 3) {
        return Ok(empty);
    }
    let anonymous_pipe = kind == libc::S_IFIFO
        && nix::sys::statfs::fstatfs(stdin.as_fd())
            .is_ok_and(|fs| fs.filesystem_type().0 == PIPEFS_MAGIC);
    if anonymous_pipe || kind == libc::S_IFSOCK {
        return Ok(ChildStdin {
            fd: None,
            feed: None,
        });
    }
    let source = std::fs::File::from(stdin.as_fd().try_clone_to_owned()?);
    Ok(ChildStdin {
        feed: Some((source, w)),
        ..empty
    })
}
