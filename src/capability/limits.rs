//! Resource limits with where each was set: the smaller of two wins, with its origin.
#![forbid(unsafe_code)]

use super::Origin;
use serde::{Deserialize, Serialize};

/// Resource limits. `None` means unlimited, which a profile must say explicitly.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// Wall-clock timeout in milliseconds.
    pub timeout_ms: Option<u64>,
    /// Bytes per output stream before it is truncated.
    pub output_bytes: Option<u64>,
    /// Memory of the whole tree in bytes (a cgroup), or of each process's address space
    /// (RLIMIT_DATA) where no cgroup can be made.
    pub memory_bytes: Option<u64>,
    /// Processes and threads of the whole tree.
    pub processes: Option<u64>,
    /// RLIMIT_FSIZE in bytes.
    pub file_size_bytes: Option<u64>,
    /// RLIMIT_CPU in seconds.
    pub cpu_seconds: Option<u64>,
    /// RLIMIT_NOFILE.
    pub open_files: Option<u64>,
    /// Size of each private tmpfs (`/tmp`, `/dev/shm`) in bytes.
    #[serde(default)]
    pub tmp_bytes: Option<u64>,
    /// Where each limit was set.
    #[serde(default)]
    pub origins: LimitOrigins,
}

/// Where each limit of [`Limits`] was set, field for field; `None` where no profile line set
/// it (a default, or a value derived from another limit).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LimitOrigins {
    /// Of [`Limits::timeout_ms`].
    pub timeout_ms: Option<Origin>,
    /// Of [`Limits::output_bytes`].
    pub output_bytes: Option<Origin>,
    /// Of [`Limits::memory_bytes`].
    pub memory_bytes: Option<Origin>,
    /// Of [`Limits::processes`].
    pub processes: Option<Origin>,
    /// Of [`Limits::file_size_bytes`].
    pub file_size_bytes: Option<Origin>,
    /// Of [`Limits::cpu_seconds`].
    pub cpu_seconds: Option<Origin>,
    /// Of [`Limits::open_files`].
    pub open_files: Option<Origin>,
    /// Of [`Limits::tmp_bytes`].
    pub tmp_bytes: Option<Origin>,
}

/// One limit's value and origin, to be written.
type SlotMut<'a> = (&'a mut Option<u64>, &'a mut Option<Origin>);

impl Limits {
    /// Every limit with its origin, in field order.
    fn slots(&self) -> [(Option<u64>, &Option<Origin>); 8] {
        let o = &self.origins;
        [
            (self.timeout_ms, &o.timeout_ms),
            (self.output_bytes, &o.output_bytes),
            (self.memory_bytes, &o.memory_bytes),
            (self.processes, &o.processes),
            (self.file_size_bytes, &o.file_size_bytes),
            (self.cpu_seconds, &o.cpu_seconds),
            (self.open_files, &o.open_files),
            (self.tmp_bytes, &o.tmp_bytes),
        ]
    }

    /// [`Limits::slots`], to be written.
    fn slots_mut(&mut self) -> [SlotMut<'_>; 8] {
        let o = &mut self.origins;
        [
            (&mut self.timeout_ms, &mut o.timeout_ms),
            (&mut self.output_bytes, &mut o.output_bytes),
            (&mut self.memory_bytes, &mut o.memory_bytes),
            (&mut self.processes, &mut o.processes),
            (&mut self.file_size_bytes, &mut o.file_size_bytes),
            (&mut self.cpu_seconds, &mut o.cpu_seconds),
            (&mut self.open_files, &mut o.open_files),
            (&mut self.tmp_bytes, &mut o.tmp_bytes),
        ]
    }

    /// The smaller of each limit (a set one is smaller than unlimited), with the origin of the
    /// side it came from; `self`'s on a tie.
    pub(super) fn meet(&self, other: &Self) -> Self {
        let mut out = self.clone();
        for ((v, o), (theirs, their_origin)) in out.slots_mut().into_iter().zip(other.slots()) {
            if let Some(t) = theirs
                && v.is_none_or(|mine| t < mine)
            {
                *v = Some(t);
                o.clone_from(their_origin);
            }
        }
        out
    }

    /// Whether every limit is at most `other`'s.
    pub(super) fn within(&self, other: &Self) -> bool {
        self.slots()
            .iter()
            .zip(other.slots())
            .all(|((mine, _), (theirs, _))| match (mine, theirs) {
                (_, None) => true,
                (None, Some(_)) => false,
                (Some(x), Some(y)) => *x <= y,
            })
    }
}
