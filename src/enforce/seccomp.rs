//! Compile a [`SeccompPlan`] into one classic BPF program, in the parent.
//!
//! The program is written here rather than by seccompiler's compiler, which emits one
//! comparison after another: a call that is allowed runs past every denied number. The
//! kernel pays for that length at every attach (it checks the program, translates and JITs
//! it, and runs it once per system call number to find the calls it can allow without
//! running it), and the command pays it on every call the filter sees. Measured on one
//! machine, attaching seccompiler's chained program of 405 instructions took 243 us; a
//! tree over the numbers, as built here, 50 to 80 us. seccompiler still supplies the
//! instruction type and installs the program.
//!
//! Layout: the architecture check (any other architecture is killed), the x32 guard (any
//! number with `__X32_SYSCALL_BIT` answers EPERM), then a binary search over the sorted
//! numbers that have a rule. Each leaf compares a few numbers for equality and jumps to
//! their action block; a number without a rule is allowed.
use crate::plan::SeccompPlan;
use seccompiler::{BpfProgram, sock_filter};
use std::collections::BTreeMap;

/// Why the seccomp program could not be compiled (re-exported as
/// [`exec::SeccompError`](crate::exec::SeccompError)).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SeccompError {
    /// A system call the plan denies has no number on this architecture.
    #[error("unknown syscall `{name}` in syscalls.deny")]
    UnknownSyscall {
        /// Its name as written.
        name: String,
    },
    /// A socket family the plan refuses has no number.
    #[error("unknown socket family `{name}`")]
    UnknownFamily {
        /// Its name.
        name: String,
    },
    /// An ioctl the plan refuses has no number.
    #[error("unknown ioctl `{name}`")]
    UnknownIoctl {
        /// Its name.
        name: String,
    },
    /// The program is longer than the kernel takes.
    #[error("the seccomp program has {len} instructions; the kernel takes at most {max}")]
    TooLong {
        /// Its length in instructions.
        len: usize,
        /// The kernel's limit.
        max: usize,
    },
}

/// The namespace flags of `clone`: each one bit of the low word of the first argument.
const CLONE_NS_FLAGS: u32 = libc::CLONE_NEWNS as u32
    | libc::CLONE_NEWUSER as u32
    | libc::CLONE_NEWPID as u32
    | libc::CLONE_NEWNET as u32
    | libc::CLONE_NEWUTS as u32
    | libc::CLONE_NEWIPC as u32
    | libc::CLONE_NEWCGROUP as u32
    | 0x80; // CLONE_NEWTIME

const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JA: u16 = 0x05; // BPF_JMP | BPF_JA
const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JGE_K: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const JSET_K: u16 = 0x45; // BPF_JMP | BPF_JSET | BPF_K
const RET_K: u16 = 0x06; // BPF_RET | BPF_K
/// The kernel's limit on a classic BPF program's length.
const BPF_MAXINSNS: usize = 4096;
/// Offsets into `struct seccomp_data`: nr, arch, then 64-bit arguments from 16 (the low
/// word first on a little-endian machine).
const NR: u32 = 0;
const ARCH: u32 = 4;
fn arg_low(index: u32) -> u32 {
    let low = if cfg!(target_endian = "little") { 0 } else { 4 };
    16 + 8 * index + low
}
const X32_BIT: u32 = 0x4000_0000;
/// Numbers compared in one leaf of the search.
const LEAF: usize = 4;

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;
#[cfg(target_arch = "riscv64")]
const AUDIT_ARCH: u32 = 0xC000_00F3;

fn family(name: &str) -> Option<u32> {
    Some(match name {
        "AF_UNIX" => libc::AF_UNIX,
        "AF_INET" => libc::AF_INET,
        "AF_INET6" => libc::AF_INET6,
        "AF_NETLINK" => libc::AF_NETLINK,
        _ => return None,
    } as u32)
}

fn ioctl(name: &str) -> Option<u32> {
    match name {
        "TIOCSTI" => Some(libc::TIOCSTI as u32),
        "TIOCLINUX" => Some(0x541C),
        _ => None,
    }
}

/// The syscall number of `name` on the architecture sbx is built for.
pub fn syscall_number(name: &str) -> Option<i64> {
    name.parse::<syscalls::Sysno>()
        .ok()
        .map(|s| i64::from(s.id()))
}

fn nr(name: &str) -> Result<u32, SeccompError> {
    syscall_number(name)
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| SeccompError::UnknownSyscall { name: name.into() })
}

/// What the program answers for one syscall number.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Action {
    /// Refused with this errno whatever the arguments.
    Errno(i32),
    /// `clone`: EPERM when the flags ask for a namespace.
    CloneNamespaces,
    /// `ioctl`: EPERM for these requests (compared as the 32-bit `unsigned int` they are).
    Ioctls(Vec<u32>),
    /// `socket`: EAFNOSUPPORT unless the family is one of `allowed`; EACCES for a family in
    /// `stream_only` unless the type is `SOCK_STREAM` and the protocol 0 or TCP.
    Families {
        allowed: Vec<u32>,
        stream_only: Vec<u32>,
    },
    /// chmod and mknod alike: EPERM when the mode argument has the setuid or setgid bit.
    SetIdMode { mode: u32 },
    /// open alike: EPERM when the flags create a file and the mode has the setuid or setgid bit.
    SetIdCreate { flags: u32, mode: u32 },
    /// `personality`: only [`PERSONALITIES`], else EPERM.
    Personality,
}

/// The personalities a command may ask for, as container runtimes allow them: the query
/// (`0xffffffff`, which changes nothing), `PER_LINUX`, `PER_LINUX32` (`linux32`, `setarch
/// i686`), and `UNAME26` with either. Not `ADDR_NO_RANDOMIZE`, `READ_IMPLIES_EXEC` or
/// `MMAP_PAGE_ZERO`, which turn off protections of the process's memory.
const PERSONALITIES: [u32; 5] = [0xffff_ffff, 0, 0x0008, 0x2_0000, 0x2_0008];

/// The setuid and setgid bits, and the open flags whose mode argument is used.
const SET_ID: u32 = libc::S_ISUID | libc::S_ISGID;
const CREATES: u32 = (libc::O_CREAT | libc::O_TMPFILE) as u32;

/// Calls that give a file a mode, with the index of the mode argument (and of the flags for
/// the open family). A setuid file made in a writable tree would run with its owner's
/// privilege outside the sandbox, where the `nosuid` mount does not follow it.
const MODE_CALLS: &[(&str, u32)] = &[
    ("chmod", 1),
    ("fchmod", 1),
    ("fchmodat", 2),
    ("fchmodat2", 2),
    ("creat", 1),
    ("mknod", 1),
    ("mknodat", 2),
];
const OPEN_CALLS: &[(&str, u32, u32)] = &[("open", 1, 2), ("openat", 2, 3)];

fn ins(code: u16, jt: u8, jf: u8, k: u32) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

fn ret(value: u32) -> sock_filter {
    ins(RET_K, 0, 0, value)
}

fn errno(e: i32) -> u32 {
    libc::SECCOMP_RET_ERRNO | e as u32
}

/// The block that answers one number; it ends in returns, so blocks can sit side by side.
fn block(action: &Action) -> Vec<sock_filter> {
    let allow = ret(libc::SECCOMP_RET_ALLOW);
    match action {
        Action::Errno(e) => vec![ret(errno(*e))],
        Action::CloneNamespaces => vec![
            ins(LD_W_ABS, 0, 0, arg_low(0)),
            ins(JSET_K, 0, 1, CLONE_NS_FLAGS),
            ret(errno(libc::EPERM)),
            allow,
        ],
        // Both lists are deduplicated names of a fixed table (two requests, four families),
        // so every jump here and in a leaf fits in eight bits.
        Action::Ioctls(cmds) => one_of(
            arg_low(1),
            cmds,
            errno(libc::EPERM),
            libc::SECCOMP_RET_ALLOW,
        ),
        Action::Families {
            allowed,
            stream_only,
        } => families(allowed, stream_only),
        Action::SetIdMode { mode } => vec![
            ins(LD_W_ABS, 0, 0, arg_low(*mode)),
            ins(JSET_K, 0, 1, SET_ID),
            ret(errno(libc::EPERM)),
            allow,
        ],
        Action::Personality => one_of(
            arg_low(0),
            &PERSONALITIES,
            libc::SECCOMP_RET_ALLOW,
            errno(libc::EPERM),
        ),
        Action::SetIdCreate { flags, mode } => vec![
            ins(LD_W_ABS, 0, 0, arg_low(*flags)),
            ins(JSET_K, 0, 3, CREATES),
            ins(LD_W_ABS, 0, 0, arg_low(*mode)),
            ins(JSET_K, 0, 1, SET_ID),
            ret(errno(libc::EPERM)),
            allow,
        ],
    }
}

/// Load the word at `offset`; answer `matched` when it is one of `values`, else `otherwise`.
fn one_of(offset: u32, values: &[u32], matched: u32, otherwise: u32) -> Vec<sock_filter> {
    let mut b = vec![ins(LD_W_ABS, 0, 0, offset)];
    let n = values.len();
    for (i, v) in values.iter().enumerate() {
        debug_assert!(n - i <= usize::from(u8::MAX));
        b.push(ins(JEQ_K, (n - i) as u8, 0, *v));
    }
    b.extend([ret(otherwise), ret(matched)]);
    b
}

const AND_K: u16 = 0x54; // BPF_ALU | BPF_AND | BPF_K
/// `SOCK_TYPE_MASK`: the type without SOCK_NONBLOCK and SOCK_CLOEXEC.
const SOCK_TYPE_MASK: u32 = 0xf;

/// `socket`: allow a family of `allowed`, a family of `stream_only` (a subset) only with type
/// `SOCK_STREAM` and protocol 0 or TCP (else EACCES: MPTCP and SCTP are streams too, and
/// Landlock's TCP port rules do not govern them); any other family gets EAFNOSUPPORT.
fn families(allowed: &[u32], stream_only: &[u32]) -> Vec<sock_filter> {
    let n = allowed.len();
    // Layout after the n comparisons: refuse the family; [check the type]; allow.
    let refuse_family = n + 1;
    let check_type = n + 2;
    let allow = if stream_only.is_empty() {
        n + 2
    } else {
        n + 10
    };
    let mut b = vec![ins(LD_W_ABS, 0, 0, arg_low(0))];
    for (i, f) in allowed.iter().enumerate() {
        let target = if stream_only.contains(f) {
            check_type
        } else {
            allow
        };
        let jt = target - (i + 2);
        debug_assert!(jt <= usize::from(u8::MAX));
        b.push(ins(JEQ_K, jt as u8, 0, *f));
    }
    debug_assert_eq!(b.len(), refuse_family);
    b.push(ret(errno(libc::EAFNOSUPPORT)));
    if !stream_only.is_empty() {
        b.extend([
            ins(LD_W_ABS, 0, 0, arg_low(1)),
            ins(AND_K, 0, 0, SOCK_TYPE_MASK),
            ins(JEQ_K, 1, 0, libc::SOCK_STREAM as u32),
            ret(errno(libc::EACCES)),
            ins(LD_W_ABS, 0, 0, arg_low(2)),
            ins(JEQ_K, 2, 0, 0),
            ins(JEQ_K, 1, 0, libc::IPPROTO_TCP as u32),
            ret(errno(libc::EACCES)),
        ]);
    }
    debug_assert_eq!(b.len(), allow);
    b.push(ret(libc::SECCOMP_RET_ALLOW));
    b
}

/// A leaf: compare each number, jump to its block; no match is allowed. Equal blocks are
/// written once.
fn leaf(entries: &[(u32, Action)]) -> Vec<sock_filter> {
    let mut blocks: Vec<(&Action, Vec<sock_filter>)> = Vec::new();
    let mut target = Vec::with_capacity(entries.len());
    for (_, action) in entries {
        let i = match blocks.iter().position(|(a, _)| *a == action) {
            Some(i) => i,
            None => {
                blocks.push((action, block(action)));
                blocks.len() - 1
            }
        };
        target.push(i);
    }
    let n = entries.len();
    let mut out = Vec::new();
    for (i, (number, _)) in entries.iter().enumerate() {
        // From after this comparison: the rest of the comparisons, the allow, and the
        // blocks before this entry's.
        let skip = (n - 1 - i)
            + 1
            + blocks[..target[i]]
                .iter()
                .map(|(_, b)| b.len())
                .sum::<usize>();
        debug_assert!(skip <= usize::from(u8::MAX));
        out.push(ins(JEQ_K, skip as u8, 0, *number));
    }
    out.push(ret(libc::SECCOMP_RET_ALLOW));
    for (_, b) in blocks {
        out.extend(b);
    }
    out
}

/// A search over sorted entries: numbers at or above the middle one go right.
fn search(entries: &[(u32, Action)]) -> Vec<sock_filter> {
    if entries.len() <= LEAF {
        return leaf(entries);
    }
    let mid = entries.len() / 2;
    let left = search(&entries[..mid]);
    let right = search(&entries[mid..]);
    let mut out = Vec::with_capacity(left.len() + right.len() + 2);
    match u8::try_from(left.len()) {
        Ok(skip) => out.push(ins(JGE_K, skip, 0, entries[mid].0)),
        Err(_) => {
            // Too far for an eight-bit jump: true falls into a long jump over the left.
            out.push(ins(JGE_K, 0, 1, entries[mid].0));
            out.push(ins(JA, 0, 0, left.len() as u32));
        }
    }
    out.extend(left);
    out.extend(right);
    out
}

/// Programs compiled in this process, by plan: each distinct plan is compiled once (a server
/// runs many calls under few plans).
static COMPILED: std::sync::Mutex<Vec<(SeccompPlan, BpfProgram)>> =
    std::sync::Mutex::new(Vec::new());

/// How many compiled plans [`program_for`] keeps.
const KEEP: usize = 8;

/// The program for `plan`, compiled on first use.
pub fn program_for(plan: &SeccompPlan) -> Result<BpfProgram, SeccompError> {
    if let Ok(done) = COMPILED.lock()
        && let Some((_, prog)) = done.iter().find(|(p, _)| p == plan)
    {
        return Ok(prog.clone());
    }
    let prog = compile_plan(plan)?;
    if let Ok(mut done) = COMPILED.lock() {
        if done.len() >= KEEP {
            done.remove(0);
        }
        done.push((plan.clone(), prog.clone()));
    }
    Ok(prog)
}

/// The values of `names`, sorted and without repeats.
fn values(
    names: &[String],
    lookup: fn(&str) -> Option<u32>,
    unknown: fn(String) -> SeccompError,
) -> Result<Vec<u32>, SeccompError> {
    let mut v = names
        .iter()
        .map(|n| lookup(n).ok_or_else(|| unknown(n.clone())))
        .collect::<Result<Vec<_>, _>>()?;
    v.sort_unstable();
    v.dedup();
    Ok(v)
}

/// What `socket(2)` answers: EAFNOSUPPORT for every family when none is allowed, else the
/// allowed families (inet ones as streams only where the plan says so).
fn socket_action(plan: &SeccompPlan) -> Result<Action, SeccompError> {
    let families = values(&plan.socket_families, family, |name| {
        SeccompError::UnknownFamily { name }
    })?;
    if families.is_empty() {
        return Ok(Action::Errno(libc::EAFNOSUPPORT));
    }
    let inet = [libc::AF_INET as u32, libc::AF_INET6 as u32];
    Ok(Action::Families {
        stream_only: if plan.inet_stream_only {
            families
                .iter()
                .copied()
                .filter(|f| inet.contains(f))
                .collect()
        } else {
            Vec::new()
        },
        allowed: families,
    })
}

/// The calls that could set the setuid or setgid bits refuse them. Calls this architecture
/// lacks (aarch64 has no chmod or open) are skipped. `openat2` passes its flags and mode in a
/// structure seccomp cannot read, so it answers ENOSYS, as on a kernel without it: callers
/// fall back to `openat`, whose mode is checked.
fn setid_rules(rules: &mut BTreeMap<u32, Action>) {
    let number = |name: &str| syscall_number(name).and_then(|n| u32::try_from(n).ok());
    if let Some(n) = number("openat2") {
        rules.entry(n).or_insert(Action::Errno(libc::ENOSYS));
    }
    for (name, mode) in MODE_CALLS {
        if let Some(n) = number(name) {
            rules.entry(n).or_insert(Action::SetIdMode { mode: *mode });
        }
    }
    for (name, flags, mode) in OPEN_CALLS {
        if let Some(n) = number(name) {
            rules.entry(n).or_insert(Action::SetIdCreate {
                flags: *flags,
                mode: *mode,
            });
        }
    }
}

/// The one program to install.
pub fn compile_plan(plan: &SeccompPlan) -> Result<BpfProgram, SeccompError> {
    // A number denied outright keeps that answer whatever other rule names it.
    let mut rules: BTreeMap<u32, Action> = BTreeMap::new();
    for name in &plan.denied {
        rules.insert(nr(name)?, Action::Errno(libc::EPERM));
    }
    if plan.deny_namespace_clone {
        rules.entry(nr("clone")?).or_insert(Action::CloneNamespaces);
    }
    if !plan.deny_ioctls.is_empty() {
        let cmds = values(&plan.deny_ioctls, ioctl, |name| {
            SeccompError::UnknownIoctl { name }
        })?;
        rules.entry(nr("ioctl")?).or_insert(Action::Ioctls(cmds));
    }
    // No family allowed: every socket is refused.
    rules.entry(nr("socket")?).or_insert(socket_action(plan)?);
    if plan.deny_setid_modes {
        setid_rules(&mut rules);
    }
    rules
        .entry(nr("personality")?)
        .or_insert(Action::Personality);
    if plan.clone3_enosys {
        rules
            .entry(nr("clone3")?)
            .or_insert(Action::Errno(libc::ENOSYS));
    }
    let entries: Vec<(u32, Action)> = rules.into_iter().collect();

    let mut program = vec![
        ins(LD_W_ABS, 0, 0, ARCH),
        ins(JEQ_K, 1, 0, AUDIT_ARCH),
        ret(libc::SECCOMP_RET_KILL_PROCESS),
        ins(LD_W_ABS, 0, 0, NR),
    ];
    if plan.block_x32_and_i386 && cfg!(target_arch = "x86_64") {
        program.push(ins(JGE_K, 0, 1, X32_BIT));
        program.push(ret(errno(libc::EPERM)));
    }
    program.extend(search(&entries));
    if program.len() > BPF_MAXINSNS {
        return Err(SeccompError::TooLong {
            len: program.len(),
            max: BPF_MAXINSNS,
        });
    }
    Ok(program)
}

// The tests use x86_64 numbers and the x86_64 audit arch.
#[cfg(all(test, target_arch = "x86_64"))]
#[path = "seccomp_tests.rs"]
mod tests;
