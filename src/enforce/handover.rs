//! A command handed to an init that is already set up. A session makes its next sandbox ahead
//! of the call (`exec::spare`): the init builds the namespaces and mounts, then waits on a pipe
//! for what to run. The parent encodes the [`ExecSpec`] here; the init reads it into a
//! [`CommandSlot`] allocated before `clone` and points into it, without allocating.
//!
//! The message: its length (`u32`, native order), the directory (NUL-terminated), then the
//! candidates, the arguments and the environment, each a count (`u32`) followed by that many
//! NUL-terminated strings.
#![allow(clippy::missing_safety_doc)]

use super::ExecSpec;
use libc::{c_char, c_int};
use std::ffi::CString;

/// The largest message a slot takes. A longer command is started the ordinary way.
const BUF: usize = 256 * 1024;
/// The most strings (candidates, arguments and variables together) a slot takes.
const PTRS: usize = 8 * 1024;

/// The command's pointers as the init uses them: into an [`ExecSpec`], or into a
/// [`CommandSlot`] the command was received in. Each array ends with a null pointer.
#[derive(Clone, Copy)]
pub struct ExecPtrs {
    pub cwd: *const c_char,
    pub candidates: *const *const c_char,
    pub argv: *const *const c_char,
    pub envp: *const *const c_char,
}

/// Where a waiting init receives its command: allocated by the parent, filled by the init.
pub struct CommandSlot {
    buf: Vec<u8>,
    ptrs: Vec<*const c_char>,
}

// SAFETY: the pointers are written by the init alone, into its own copy of the slot.
unsafe impl Send for CommandSlot {}
// SAFETY: as above: shared references never read the pointers.
unsafe impl Sync for CommandSlot {}

impl CommandSlot {
    /// The slot's memory is only reserved: the init touches as much as the command needs.
    pub fn new() -> Self {
        Self {
            buf: Vec::with_capacity(BUF),
            ptrs: Vec::with_capacity(PTRS),
        }
    }
}

impl Default for CommandSlot {
    fn default() -> Self {
        Self::new()
    }
}

/// `spec` as a message for a waiting init, or `None` when it does not fit a slot.
pub fn encode(spec: &ExecSpec) -> Option<Vec<u8>> {
    let lists = [
        spec.candidates.items(),
        spec.argv.items(),
        spec.envp.items(),
    ];
    let strings: usize = lists.iter().map(|l| l.len() + 1).sum();
    let mut out = vec![0u8; 4];
    out.extend_from_slice(spec.cwd.as_bytes_with_nul());
    for list in lists {
        out.extend_from_slice(&u32::try_from(list.len()).ok()?.to_ne_bytes());
        for s in list.iter() {
            out.extend_from_slice(s.as_bytes_with_nul());
        }
    }
    let len = u32::try_from(out.len() - 4).ok()?;
    out[..4].copy_from_slice(&len.to_ne_bytes());
    (out.len() - 4 <= BUF && strings <= PTRS).then_some(out)
}

/// Read exactly `len` bytes into `dst`; false at the end of input or on an error.
unsafe fn read_exact(fd: c_int, dst: *mut u8, len: usize) -> bool {
    let mut got = 0;
    while got < len {
        // SAFETY: `dst` has room for `len` bytes.
        let n = unsafe { libc::read(fd, dst.add(got).cast(), len - got) };
        if n > 0 {
            got += n as usize;
        } else if n == 0 || super::messages::errno() != libc::EINTR {
            return false;
        }
    }
    true
}

/// Why no command came: the parent closed the pipe (the spare is not wanted), or the message
/// is not one [`encode`] makes.
pub enum Missing {
    Closed,
    Malformed,
}

/// Wait for the command on `fd` and point into `slot` for it.
///
/// # Safety
/// In the init only; `slot` is this process's own copy.
pub(crate) unsafe fn receive(slot: &mut CommandSlot, fd: c_int) -> Result<ExecPtrs, Missing> {
    let mut len = [0u8; 4];
    // SAFETY: reads into a local and into the slot's reserved capacity, bounds checked.
    unsafe {
        if !read_exact(fd, len.as_mut_ptr(), 4) {
            return Err(Missing::Closed);
        }
        let len = u32::from_ne_bytes(len) as usize;
        if len > slot.buf.capacity() {
            return Err(Missing::Malformed);
        }
        let base = slot.buf.as_mut_ptr();
        if !read_exact(fd, base, len) {
            return Err(Missing::Malformed);
        }
        let mut r = Reader {
            bytes: std::slice::from_raw_parts(base, len),
            pos: 0,
            ptrs: slot.ptrs.as_mut_ptr(),
            used: 0,
            cap: slot.ptrs.capacity(),
        };
        let cwd = r.string().ok_or(Missing::Malformed)?;
        let candidates = r.list().ok_or(Missing::Malformed)?;
        let argv = r.list().ok_or(Missing::Malformed)?;
        let envp = r.list().ok_or(Missing::Malformed)?;
        Ok(ExecPtrs {
            cwd,
            candidates,
            argv,
            envp,
        })
    }
}

/// A walk through a received message, storing string pointers in the slot's array.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    ptrs: *mut *const c_char,
    used: usize,
    cap: usize,
}

impl Reader<'_> {
    fn string(&mut self) -> Option<*const c_char> {
        let rest = self.bytes.get(self.pos..)?;
        let nul = rest.iter().position(|b| *b == 0)?;
        let s = rest.as_ptr().cast();
        self.pos += nul + 1;
        Some(s)
    }

    fn count(&mut self) -> Option<usize> {
        let b = self.bytes.get(self.pos..self.pos + 4)?;
        self.pos += 4;
        Some(u32::from_ne_bytes([b[0], b[1], b[2], b[3]]) as usize)
    }

    fn push(&mut self, p: *const c_char) -> Option<()> {
        if self.used == self.cap {
            return None;
        }
        // SAFETY: below the array's capacity.
        unsafe { self.ptrs.add(self.used).write(p) };
        self.used += 1;
        Some(())
    }

    /// A counted list of strings, as a null-terminated array in the slot.
    fn list(&mut self) -> Option<*const *const c_char> {
        let n = self.count()?;
        // SAFETY: `used` is within the array (checked by `push`).
        let start = unsafe { self.ptrs.add(self.used) }.cast_const();
        for _ in 0..n {
            let s = self.string()?;
            self.push(s)?;
        }
        self.push(std::ptr::null())?;
        Some(start)
    }
}

/// An [`ExecSpec`] that stands for a command still to come.
pub fn placeholder() -> ExecSpec {
    ExecSpec {
        candidates: super::CStrArray::new(Vec::new()),
        argv: super::CStrArray::new(Vec::new()),
        envp: super::CStrArray::new(Vec::new()),
        cwd: CString::from(c"/"),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::ffi::CStr;

    fn spec(args: &[&str], env: &[&str]) -> ExecSpec {
        let c = |v: &[&str]| v.iter().map(|s| CString::new(*s).unwrap()).collect();
        ExecSpec {
            candidates: super::super::CStrArray::new(c(&["/usr/bin/x", "/bin/x"])),
            argv: super::super::CStrArray::new(c(args)),
            envp: super::super::CStrArray::new(c(env)),
            cwd: CString::new("/work/dir").unwrap(),
        }
    }

    unsafe fn strings(mut p: *const *const c_char) -> Vec<String> {
        let mut out = Vec::new();
        // SAFETY: a null-terminated array of C strings, as `receive` makes.
        unsafe {
            while !(*p).is_null() {
                out.push(CStr::from_ptr(*p).to_str().unwrap().to_string());
                p = p.add(1);
            }
        }
        out
    }

    fn round_trip(msg: &[u8]) -> Result<ExecPtrs, Missing> {
        let (r, w) = nix::unistd::pipe().unwrap();
        nix::unistd::write(&w, msg).unwrap();
        drop(w);
        let mut slot = Box::new(CommandSlot::new());
        // SAFETY: `r` is an open pipe holding the whole message; the slot is ours alone.
        let got = unsafe { receive(&mut slot, std::os::fd::AsRawFd::as_raw_fd(&r)) };
        // The slot must outlive the pointers: keep it for the test's duration.
        Box::leak(slot);
        got
    }

    /// What the init receives is what the parent encoded: directory, candidates, arguments
    /// and environment, empty strings and empty lists included.
    #[test]
    fn a_command_arrives_whole() {
        let s = spec(&["x", "", "a b"], &["A=1", "EMPTY="]);
        let got = round_trip(&encode(&s).unwrap()).ok().unwrap();
        // SAFETY: the pointers point into a leaked slot, at NUL-terminated strings and
        // null-terminated lists that `receive` checked.
        unsafe {
            assert_eq!(CStr::from_ptr(got.cwd).to_str().unwrap(), "/work/dir");
            assert_eq!(strings(got.candidates), ["/usr/bin/x", "/bin/x"]);
            assert_eq!(strings(got.argv), ["x", "", "a b"]);
            assert_eq!(strings(got.envp), ["A=1", "EMPTY="]);
        }
        let none = round_trip(&encode(&spec(&["x"], &[])).unwrap())
            .ok()
            .unwrap();
        // SAFETY: as above, a null-terminated list in a leaked slot.
        assert!(unsafe { strings(none.envp) }.is_empty());
    }

    /// A closed pipe says the spare is not wanted; a cut or lying message is refused, and a
    /// command too big for a slot is not encoded for one.
    #[test]
    fn bad_messages_are_refused() {
        assert!(matches!(round_trip(&[]), Err(Missing::Closed)));
        let full = encode(&spec(&["x"], &["A=1"])).unwrap();
        assert!(matches!(
            round_trip(&full[..full.len() - 3]),
            Err(Missing::Malformed)
        ));
        let mut lying = full.clone();
        let n = lying.len();
        lying[n - 1] = b'x'; // the last string's NUL is gone
        assert!(matches!(round_trip(&lying), Err(Missing::Malformed)));
        let big = "y".repeat(BUF);
        assert!(encode(&spec(&["x", &big], &[])).is_none());
        let many: Vec<String> = (0..PTRS).map(|i| format!("V{i}=1")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert!(encode(&spec(&["x"], &many)).is_none());
    }
}
