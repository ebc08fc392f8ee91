//! Plans kept between processes. `sbx run` is a new process for every command, and making its
//! plan (resolving the profile's hundreds of paths, laying out their mounts) is most of what
//! sbx itself costs a run. So a run writes its plan down with every question its making asked
//! of the file system ([`super::kept`]), and the next run with the same profile, variables
//! and host uses it while the machine still answers those questions as it did, exactly as a
//! session keeps its plans in memory.
//!
//! A stored plan is what a later run enforces, so no sandboxed command may forge one. Each
//! record carries an HMAC-SHA256 of its content made with a key that lives only in the user's
//! kernel keyring: every sandbox's seccomp filter refuses `keyctl`, `add_key` and
//! `request_key`, and Landlock keeps a sandboxed command from reading sbx's memory, so no
//! command sbx runs can read the key or replace it. Without seccomp and Landlock on the host
//! nothing is stored. A record that does not verify, names other inputs or comes from another
//! sbx binary is not used. The records lie in `/dev/shm/sbx-plans-UID` (memory, gone at
//! reboot; made 0700 and used only while this user alone owns it), which no sandbox with a
//! mount namespace sees: each has a `/dev` of its own. A command without one (a host without
//! user namespaces), which may write `/dev/shm`, can read and remove records, not forge one:
//! they hold paths and stamps, and of the files and variables planning read only digests.
//! `SBX_PLAN_STORE` names another (absolute) directory, or, empty, turns the store off.
#![forbid(unsafe_code)]

use super::kept::{Asked, Entry, Inputs, Summary, digest};
use crate::capability::{CapabilitySet, PathEntry, SettingOrigins};
use crate::plan::SandboxPlan;
use hmac::{KeyInit, Mac};
use linux_keyutils::{KeyRing, KeyRingIdentifier};
use nix::fcntl::{AtFlags, OFlag, openat, renameat};
use nix::sys::stat::{Mode, fstat, fstatat};
use nix::unistd::{UnlinkatFlags, unlinkat};
use sha2::Digest;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The keyring entry holding the records' key.
const KEY_NAME: &str = "sbx:plan-store";
/// Bytes of the key and of a record's code.
const KEY_BYTES: usize = 32;
/// The variable naming another directory for the records; empty, nothing is stored.
pub const DIR_VAR: &str = "SBX_PLAN_STORE";
/// Bytes of a record at most (a built-in profile's are some hundreds of kilobytes).
const MAX_BYTES: u64 = 16 << 20;
/// Records kept at most; the oldest go first.
const MAX_RECORDS: usize = 32;

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// The records of one user, and the key that vouches for them.
pub(super) struct Store {
    /// The directory, held open: every read, write and removal is made relative to it, so that
    /// a link put at its name later leads nowhere.
    dir: OwnedFd,
    key: HmacSha256,
}

/// The head of a record as written: all a run needs while nothing that vouched for the plan's
/// answers changed (the capability set's origins apart, which its JSON form leaves out), and
/// the digest of the rest, every question the plan's making asked, read only when needed.
#[derive(serde::Serialize)]
struct HeadOut<'a> {
    inputs: &'a Inputs,
    caps: &'a CapabilitySet,
    origins: &'a SettingOrigins,
    plan: &'a SandboxPlan,
    below: &'a [PathEntry],
    summary: &'a Summary,
    asked: [u8; 32],
}

/// The head of a record as read.
#[derive(serde::Deserialize)]
struct HeadIn {
    inputs: Inputs,
    caps: CapabilitySet,
    origins: SettingOrigins,
    plan: SandboxPlan,
    below: Vec<PathEntry>,
    summary: Summary,
    asked: [u8; 32],
}

/// A stored plan as read: verified, its questions still to read (a settled plan's check
/// needs only the head).
pub(super) struct Record {
    pub(super) caps: Arc<CapabilitySet>,
    pub(super) plan: Arc<SandboxPlan>,
    pub(super) below: Vec<PathEntry>,
    pub(super) summary: Summary,
    asked_digest: [u8; 32],
    /// The record's file, held open, and where its questions start.
    file: std::fs::File,
    asked_at: u64,
}

impl Record {
    /// Every question the plan's making asked, when they are what the verified head names.
    /// They are read into memory of their own and checked there against the head's digest,
    /// so whatever changes the file meanwhile is refused.
    pub(super) fn asked(&self) -> Option<Asked> {
        let mut file = &self.file;
        std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(self.asked_at)).ok()?;
        let mut bytes = Vec::new();
        std::io::Read::take(file, MAX_BYTES)
            .read_to_end(&mut bytes)
            .ok()?;
        if digest(&bytes) != self.asked_digest {
            return None;
        }
        let asked: Asked = rmp_serde::from_slice(&bytes).ok()?;
        Some(asked.restored())
    }
}

impl Store {
    /// This user's store, when the host keeps sandboxed commands from its key (seccomp and
    /// Landlock) and the keyring and the directory can be used.
    pub(super) fn open(host: &crate::host::Host) -> Option<Store> {
        if !Self::usable(host) {
            return None;
        }
        let dir = match std::env::var_os(DIR_VAR) {
            Some(d) => PathBuf::from(d),
            None => PathBuf::from(format!("/dev/shm/sbx-plans-{}", host.euid)),
        };
        if !dir.is_absolute() {
            return None;
        }
        let dir = owned_dir(&dir, host.euid)?;
        let key = <HmacSha256 as KeyInit>::new_from_slice(&key()?).ok()?;
        Some(Store { dir, key })
    }

    /// Whether a store may be kept here: the host keeps sandboxed commands from its key
    /// (seccomp and Landlock), and [`DIR_VAR`] does not turn it off.
    pub(super) fn usable(host: &crate::host::Host) -> bool {
        let off = std::env::var_os(DIR_VAR).is_some_and(|d| d.is_empty());
        host.seccomp.ok() && host.landlock.ok() && !off
    }

    /// The name of the record for `profile` (its digest) and `inputs`: it changes with the
    /// sbx binary, the profile's texts and every input.
    pub(super) fn id(profile: &[u8; 32], inputs: &Inputs) -> Option<String> {
        let exe = std::fs::metadata("/proc/self/exe").ok()?;
        let mut h = sha2::Sha256::new();
        for n in [exe.dev(), exe.ino(), exe.size(), exe.mtime() as u64] {
            h.update(n.to_le_bytes());
        }
        h.update(exe.mtime_nsec().to_le_bytes());
        h.update(profile);
        h.update(serde_json::to_vec(inputs).ok()?);
        Some(hex(&h.finalize()))
    }

    /// The record stored under `id`, when its code verifies and it was made for `inputs`.
    pub(super) fn load(&self, id: &str, inputs: &Inputs) -> Option<Record> {
        let (mut file, size) = self.open_record(id)?;
        let mut lead = [0; KEY_BYTES + 4];
        file.read_exact(&mut lead).ok()?;
        let (code, len) = lead.split_at(KEY_BYTES);
        let len = u32::from_le_bytes(len.try_into().ok()?);
        let asked_at = u64::from(len) + (KEY_BYTES + 4) as u64;
        if asked_at > size {
            return None;
        }
        let mut head = vec![0; usize::try_from(len).ok()?];
        file.read_exact(&mut head).ok()?;
        self.mac(id, &head).verify_slice(code).ok()?;
        let head = head.as_slice();
        let h: HeadIn = rmp_serde::from_slice(head).ok()?;
        if h.inputs != *inputs {
            return None;
        }
        let mut caps = h.caps;
        caps.origins = h.origins;
        Some(Record {
            caps: Arc::new(caps),
            plan: Arc::new(h.plan),
            below: h.below,
            summary: h.summary,
            asked_digest: h.asked,
            file,
            asked_at,
        })
    }

    /// Write `entry` under `id`, in place of what was there, by a rename: a run reading it
    /// meanwhile reads the old record or the new one. Failing, nothing is stored.
    /// `settled`: the last check of the plan confirmed nothing anew (see [`Summary`]).
    pub(super) fn save(&self, id: &str, entry: &Entry, settled: bool) {
        let Some(bytes) = self.record(id, entry, settled) else {
            return;
        };
        static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = format!(".{id}.{}.{n}", std::process::id());
        let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW;
        let mode = Mode::from_bits_truncate(0o600);
        let written = openat(&self.dir, tmp.as_str(), flags | OFlag::O_CLOEXEC, mode)
            .map_err(std::io::Error::from)
            .and_then(|fd| std::fs::File::from(fd).write_all(&bytes))
            .and_then(|()| {
                renameat(&self.dir, tmp.as_str(), &self.dir, id).map_err(std::io::Error::from)
            });
        if written.is_err() {
            let _ = unlinkat(&self.dir, tmp.as_str(), UnlinkatFlags::NoRemoveDir);
            return;
        }
        self.trim();
    }

    /// The bytes of the record `id` for `entry`: its code, the head's length, the head, the
    /// questions.
    fn record(&self, id: &str, entry: &Entry, settled: bool) -> Option<Vec<u8>> {
        let asked = rmp_serde::to_vec(&entry.asked).ok()?;
        let summary = entry.asked.summary(settled)?;
        let head = rmp_serde::to_vec(&HeadOut {
            inputs: &entry.inputs,
            caps: &entry.caps,
            origins: &entry.caps.origins,
            plan: &entry.plan,
            below: &entry.below,
            summary: &summary,
            asked: digest(&asked),
        })
        .ok()?;
        let code = self.mac(id, &head).finalize().into_bytes();
        let len = u32::try_from(head.len()).ok()?.to_le_bytes();
        Some([&code[..], &len, &head, &asked].concat())
    }

    /// The code of the record `id` with `body`.
    fn mac(&self, id: &str, body: &[u8]) -> HmacSha256 {
        let mut m = self.key.clone();
        m.update(id.as_bytes());
        m.update(&[0]);
        m.update(body);
        m
    }

    /// The record `id`, opened, and its size: a regular file (no link, no FIFO that would
    /// block) of at most [`MAX_BYTES`].
    fn open_record(&self, id: &str) -> Option<(std::fs::File, u64)> {
        let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
        let fd = openat(&self.dir, id, flags, Mode::empty()).ok()?;
        let st = fstat(&fd).ok()?;
        let size = u64::try_from(st.st_size).ok()?;
        if st.st_mode & libc::S_IFMT != libc::S_IFREG || size > MAX_BYTES {
            return None;
        }
        Some((std::fs::File::from(fd), size))
    }

    /// Drop the oldest entries beyond [`MAX_RECORDS`].
    fn trim(&self) {
        let listed = format!("/proc/self/fd/{}", self.dir.as_raw_fd());
        let Ok(rd) = std::fs::read_dir(listed) else {
            return;
        };
        let mut entries: Vec<(i64, std::ffi::OsString)> = rd
            .flatten()
            .filter_map(|e| {
                let name = e.file_name();
                let st = fstatat(&self.dir, name.as_os_str(), AtFlags::AT_SYMLINK_NOFOLLOW).ok()?;
                Some((st.st_mtime, name))
            })
            .collect();
        if entries.len() <= MAX_RECORDS {
            return;
        }
        entries.sort();
        for (_, name) in &entries[..entries.len() - MAX_RECORDS] {
            let _ = unlinkat(&self.dir, name.as_os_str(), UnlinkatFlags::NoRemoveDir);
        }
    }
}

/// `dir`, made 0700 when missing, opened when it is a directory (no link) that `uid` owns and
/// no one else may enter.
fn owned_dir(dir: &Path, uid: u32) -> Option<OwnedFd> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(_) => return None,
    }
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let fd = nix::fcntl::open(dir, flags, Mode::empty()).ok()?;
    let st = fstat(&fd).ok()?;
    let is_dir = st.st_mode & libc::S_IFMT == libc::S_IFDIR;
    (is_dir && st.st_uid == uid && st.st_mode & 0o077 == 0).then_some(fd)
}

/// The key in this user's keyring, made there when missing.
fn key() -> Option<Vec<u8>> {
    let ring = KeyRing::from_special_id(KeyRingIdentifier::User, true).ok()?;
    if let Ok(k) = ring.search(KEY_NAME) {
        let mut buf = vec![0; KEY_BYTES];
        if k.read(&mut buf).ok() == Some(KEY_BYTES) {
            return Some(buf);
        }
    }
    let mut fresh = vec![0; KEY_BYTES];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut fresh))
        .ok()?;
    ring.add_key(KEY_NAME, &fresh).ok()?;
    Some(fresh)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
